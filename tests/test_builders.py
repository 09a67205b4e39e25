"""The split rules (median, mean, SAH, volume) build valid trees of every BV type whose queries
equal the brute-force oracle; SAH trees have a lower SAH cost than median trees."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import BV_TYPES, build_bvh, collide
from cdcore.transforms import make_pose, random_rotations

from meshgen import grid, soup, torus, uv_sphere
from test_collide_oracle import as_set, oracle

SPLITS = ("median", "mean", "sah", "volume")


def _meshes():
    rng = np.random.default_rng(3)
    return [cdcore.Mesh(*torus(0.5, 0.15, 16, 6)), cdcore.Mesh(*uv_sphere(0.5, 6, 9)),
            cdcore.Mesh(*soup(rng, n=35)), cdcore.Mesh(*grid(5, 1.0))]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("bv", list(BV_TYPES))
def test_every_type_and_split_builds_a_valid_tree(bv, split):
    for mesh in _meshes():
        for leaf in (1, 4):
            b = build_bvh(mesh, bv=bv, leaf_size=leaf, split=split)
            assert b.split == split
            assert b.check() == [], (bv, split, leaf)
            counts = b.nodes_i[b.is_leaf, 3]
            assert counts.max() <= leaf and counts.sum() == mesh.n_faces
            assert sorted(b.prim_order.tolist()) == list(range(mesh.n_faces))
            b.rebuild()
            assert b.split == split and b.check() == []


def test_split_rules_give_different_trees():
    mesh = cdcore.Mesh(*torus(0.5, 0.15, 24, 8))
    orders = {s: build_bvh(mesh, "aabb", split=s).prim_order.tobytes() for s in SPLITS}
    assert len(set(orders.values())) == len(SPLITS)


def test_bad_split_is_a_clear_error():
    mesh = cdcore.Mesh(*grid(2, 1.0))
    with pytest.raises(ValueError, match="split"):
        build_bvh(mesh, split="sha")
    with pytest.raises(ValueError, match="split"):
        build_bvh(mesh, split=None)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), split=st.sampled_from(SPLITS[1:]),
       bv=st.sampled_from(list(BV_TYPES)), leaf=st.sampled_from([1, 3]))
def test_queries_on_split_trees_match_oracle(seed, split, bv, leaf):
    rng = np.random.default_rng(seed)
    ma = cdcore.Mesh(*soup(rng, n=int(rng.integers(5, 40))))
    mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6))
    pa = make_pose(random_rotations(1, rng)[0], rng.uniform(-0.3, 0.3, 3))
    pb = make_pose(random_rotations(1, rng)[0], rng.uniform(-0.6, 0.6, 3))
    expected = as_set(oracle(ma, pa, mb, pb))
    ba = build_bvh(ma, bv, leaf, split=split)
    bb = build_bvh(mb, bv, leaf, split=split)
    for test in BV_TYPES[bv].tests:
        assert as_set(collide(ba, pa, bb, pb, test=test).pairs) == expected, (bv, test, split)


def test_degenerate_and_coincident_triangles():
    # every key equal on every axis: SAH finds no plane and halves, like the median
    v = np.zeros((3, 3))
    v[1, 0] = 1.0
    v[2, 1] = 1.0
    f = np.zeros((9, 3), dtype=np.int32)
    f[:] = [0, 1, 2]
    f[4] = [0, 0, 0]  # a point triangle
    mesh = cdcore.Mesh(v, f)
    for bv in BV_TYPES:
        for split in SPLITS:
            b = build_bvh(mesh, bv, 1, split=split)
            assert b.check() == [] and b.n_leaves == 9
            r = collide(b, None, b, make_pose(None, [0.2, 0.2, 0.0]))
            assert r.hit


def test_sah_lowers_the_sah_cost():
    from cdcore.quality import tree_quality
    mesh = cdcore.Mesh(*torus(1.0, 0.25, 48, 12))
    for bv in ("aabb", "obb", "kdop18"):
        med = tree_quality(build_bvh(mesh, bv, split="median"))
        sah = tree_quality(build_bvh(mesh, bv, split="sah"))
        assert sah.sah_cost < med.sah_cost, bv
