"""The prepared ``Query`` answers exactly what the brute-force oracle (and ``collide``) says,
for every BV type, test and k-DOP realignment; bad input at preparation raises typed errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import BV_TYPES, Query, build_bvh, collide
from cdcore._kdop_traverse import REALIGN_METHODS
from cdcore.transforms import make_pose, random_rotations

from meshgen import soup, torus
from test_collide_oracle import oracle

COMBOS = [(bv, test, None) for bv, spec in BV_TYPES.items() for test in spec.tests if test != "slab"]
COMBOS += [(bv, None, realign) for bv in BV_TYPES if bv.startswith("kdop") for realign in REALIGN_METHODS]


@given(seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([0.3, 0.8, 1.5]))
@settings(max_examples=15, deadline=None)
def test_query_matches_oracle(seed, spread):
    rng = np.random.default_rng(seed)
    ma = cdcore.Mesh(*soup(rng, n=25))
    mb = cdcore.Mesh(*torus(0.5, 0.15, 10, 5))
    poses = [(make_pose(random_rotations(1, rng)[0], rng.normal(0, spread, 3)),
              make_pose(random_rotations(1, rng)[0], rng.normal(0, spread, 3))) for _ in range(4)]
    expected = [bool(len(oracle(ma, pa, mb, pb))) for pa, pb in poses]
    for bv, test, realign in COMBOS:
        ba, bb = build_bvh(ma, bv, 2), build_bvh(mb, bv, 2)
        q = Query(ba, bb, test=test, realign=realign)
        for (pa, pb), exp in zip(poses, expected):
            got = q(pa, pb)
            assert type(got) is bool
            assert got == exp, (bv, test, realign)
            assert q.result(pa, pb).hit == exp
        # A at the identity
        pb = poses[0][1]
        assert q(pb) == collide(ba, None, bb, pb, test=test, realign=realign, contacts="first").hit


def test_query_converts_and_refuses_poses():
    m = cdcore.Mesh(*torus(0.5, 0.15, 10, 5))
    b = build_bvh(m, "obb")
    q = Query(b, b)
    assert q(np.eye(4)) is True
    assert q(np.eye(4).tolist()) is True  # converted (and validated) on the slow path
    assert q(np.asfortranarray(make_pose(None, [5.0, 0, 0]))) is False
    with pytest.raises(ValueError):
        q(np.eye(3))
    with pytest.raises(ValueError):
        q(np.eye(4), np.zeros(3))
    with pytest.raises(ValueError):  # C-ordered float64 rows of 4: the kernel checks the shape
        q(np.zeros((5, 4)))
    with pytest.raises(ValueError):
        q(np.zeros((2, 4)), np.eye(4))


def test_query_validates_once_at_preparation():
    m = cdcore.Mesh(*torus(0.5, 0.15, 10, 5))
    with pytest.raises(ValueError, match="same bounding-volume type"):
        Query(build_bvh(m, "obb"), build_bvh(m, "aabb"))
    with pytest.raises(ValueError, match="test"):
        Query(build_bvh(m, "aabb"), build_bvh(m, "aabb"), test="sphere5")
    with pytest.raises(ValueError, match="realign"):
        Query(build_bvh(m, "aabb"), build_bvh(m, "aabb"), realign="table")
    with pytest.raises(TypeError):
        Query(m, m)


def test_query_sees_a_refit():
    m = cdcore.Mesh(*torus(0.5, 0.15, 10, 5))
    a, b = build_bvh(m, "aabb"), build_bvh(m, "aabb")
    q = Query(a, b)
    far = make_pose(None, [1.5, 0.0, 0.0])
    assert q(far) is False
    b.refit(m.vertices * 3.0)  # B grows in place: now it reaches A
    assert q(far) == collide(a, None, b, far).hit
