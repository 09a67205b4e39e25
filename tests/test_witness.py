"""Distance witness points: distance == |p_a - p_b|, each point on its mesh's surface, and
the value equal to the brute-force minimum over triangle pairs (cdcore.witness)."""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import BV_TYPES, build_bvh, distance
from cdcore.transforms import make_pose, random_rotations
from cdcore.witness import brute_distance, check_witness

from meshgen import soup, torus, uv_sphere



def _supported(bv):
    m = cdcore.Mesh(*uv_sphere(0.5, 4, 6))
    try:
        distance(build_bvh(m, bv), None, build_bvh(m, bv), make_pose(None, (3, 0, 0)))
        return True
    except NotImplementedError:
        return False


def _mesh(kind, rng):
    if kind == "soup":
        return cdcore.Mesh(*soup(rng, n=int(rng.integers(2, 25))))
    if kind == "torus":
        return cdcore.Mesh(*torus(0.5, 0.15, 12, 6))
    return cdcore.Mesh(*uv_sphere(0.4, 5, 8))


TOL = 1e-12


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), kinds=st.tuples(st.sampled_from(["soup", "torus", "sphere"]),
                                                         st.sampled_from(["soup", "torus", "sphere"])),
       spread=st.sampled_from([0.3, 1.0, 3.0]))
def test_witness_points_pass_the_three_checks(seed, kinds, spread):
    rng = np.random.default_rng(seed)
    ma, mb = _mesh(kinds[0], rng), _mesh(kinds[1], rng)
    pa = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.1)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * spread)
    scale = 1.0 + spread
    for bv in [b for b in BV_TYPES if _supported(b)]:
        res = distance(build_bvh(ma, bv), pa, build_bvh(mb, bv), pb)
        chk = check_witness(res, ma, pa, mb, pb)
        assert chk.problems(TOL * scale) == [], (bv, chk)
        assert res.witness_gap == pytest.approx(res.distance, abs=TOL * scale)


def test_intersecting_meshes_give_a_common_witness_point():
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6)), cdcore.Mesh(*uv_sphere(0.4, 5, 8))
    pb = make_pose(None, (0.5, 0, 0))
    res = distance(build_bvh(ma), None, build_bvh(mb), pb)
    assert res.distance == 0.0
    chk = check_witness(res, ma, None, mb, pb)
    assert chk.problems(1e-12) == [] and chk.gap <= 1e-12 and chk.brute == 0.0


def test_approximate_query_within_its_error():
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 24, 8)), cdcore.Mesh(*uv_sphere(0.4, 8, 12))
    pb = make_pose(random_rotations(1, np.random.default_rng(4))[0], (1.3, 0.2, 0.1))
    res = distance(build_bvh(ma, "obb"), None, build_bvh(mb, "obb"), pb, rel_err=0.2)
    chk = check_witness(res, ma, None, mb, pb)
    assert chk.problems(1e-12, rel_err=0.2) == []
    assert chk.brute > 0.1


def test_the_checks_can_fail():
    """Each check reports a doctored result (a check that cannot fail is no check)."""
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6)), cdcore.Mesh(*uv_sphere(0.4, 5, 8))
    pb = make_pose(None, (1.5, 0, 0))
    res = distance(build_bvh(ma), None, build_bvh(mb), pb)
    d, pair, pts = brute_distance(ma, None, mb, pb)
    assert d == pytest.approx(res.distance, abs=1e-12)  # (the pair may differ: symmetric ties)
    assert np.linalg.norm(pts[1] - pts[0]) == pytest.approx(d, abs=1e-12)
    wrong_value = SimpleNamespace(distance=res.distance + 1e-3, pair=res.pair, points=res.points)
    probs = check_witness(wrong_value, ma, None, mb, pb).problems(1e-9)
    assert any("|p_a - p_b|" in p for p in probs) and any("minimum over all" in p for p in probs)
    off = res.points.copy()
    off[0] += 0.01 * np.cross(off[1] - off[0], [0, 0, 1]) / np.linalg.norm(off[1] - off[0])  # sideways
    probs = check_witness(SimpleNamespace(distance=res.distance, pair=res.pair, points=off), ma, None, mb,
                          pb).problems(1e-9)
    assert any("off A's triangle" in p for p in probs)
    wrong_pair = SimpleNamespace(distance=res.distance, pair=(res.pair[0], (res.pair[1] + 7) % mb.n_faces),
                                 points=res.points)
    assert any("off B's triangle" in p for p in check_witness(wrong_pair, ma, None, mb, pb).problems(1e-9))
