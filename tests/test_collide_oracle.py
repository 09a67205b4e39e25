"""Every BV type x every overlap test returns exactly the brute-force oracle's pairs."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import cdcore
from cdcore import BV_TYPES, Outcome, build_bvh, collide, collide_batch
from cdcore._tritri_ref import all_pairs_overlap
from cdcore.transforms import make_pose, random_rotations, relative_transform, transform_points

from meshgen import cube, grid, soup, torus, uv_sphere

COMBOS = [(bv, test) for bv, spec in BV_TYPES.items() for test in spec.tests]


def oracle(mesh_a, pose_a, mesh_b, pose_b):
    """All intersecting triangle pairs by brute force, in A's frame like the kernels."""
    R, t = relative_transform(np.asarray(pose_a, float), np.asarray(pose_b, float))
    vb = transform_points(R, t, mesh_b.vertices)
    return all_pairs_overlap(mesh_a.vertices[mesh_a.faces], vb[mesh_b.faces])


def as_set(pairs):
    return {tuple(p) for p in np.asarray(pairs).tolist()}


def check_all(mesh_a, pose_a, mesh_b, pose_b, leaf_sizes=(1, 3)):
    expected = as_set(oracle(mesh_a, pose_a, mesh_b, pose_b))
    for leaf in leaf_sizes:
        for bv, test in COMBOS:
            ba, bb = build_bvh(mesh_a, bv, leaf), build_bvh(mesh_b, bv, leaf)
            res = collide(ba, pose_a, bb, pose_b, test=test)
            got = as_set(res.pairs)
            assert got == expected, (bv, test, leaf, sorted(got ^ expected)[:5])
            assert res.hit == bool(expected)
            assert len(res.pairs) == len(got)  # no duplicates
            first = collide(ba, pose_a, bb, pose_b, test=test, contacts="first")
            assert first.hit == bool(expected)
            assert len(first.pairs) == (1 if expected else 0)
            assert as_set(first.pairs) <= expected
    return expected


def _mesh(kind, rng, scale):
    if kind == "soup":
        v, f = soup(rng, n=int(rng.integers(1, 40)))
    elif kind == "sphere":
        v, f = uv_sphere(0.5, 5, 8)
    elif kind == "torus":
        v, f = torus(0.5, 0.15, 12, 6)
    else:
        v, f = grid(4, 1.0)
    return cdcore.Mesh(v * scale, f)


@given(seed=st.integers(0, 2**32 - 1),
       kinds=st.tuples(st.sampled_from(["soup", "sphere", "torus", "grid"]),
                       st.sampled_from(["soup", "sphere", "torus", "grid"])),
       spread=st.sampled_from([0.2, 0.6, 1.2]))
def test_random_meshes_and_poses_match_oracle(seed, kinds, spread):
    rng = np.random.default_rng(seed)
    scale = 1.0
    ma, mb = _mesh(kinds[0], rng, scale), _mesh(kinds[1], rng, scale)
    pa = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.1)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * spread)
    check_all(ma, pa, mb, pb)


def test_both_outcomes_are_exercised():
    """The random cases above must include hits and misses: count them on fixed seeds."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(30):
        ma, mb = _mesh("torus", rng, 1.0), _mesh("soup", rng, 1.0)
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.6)
        hits += bool(len(oracle(ma, np.eye(4), mb, pb)))
    assert 5 < hits < 25


def test_touching_cubes_face_to_face():
    v, f = cube(1.0)
    m = cdcore.Mesh(v, f)
    exp = check_all(m, np.eye(4), m, make_pose(None, (1.0, 0.0, 0.0)))
    assert exp  # closed sets: touching counts
    assert not check_all(m, np.eye(4), m, make_pose(None, (1.0 + 1e-9, 0.0, 0.0)))


def test_coplanar_grids():
    v, f = grid(5, 1.0)
    m = cdcore.Mesh(v, f)
    exp = check_all(m, np.eye(4), m, make_pose(None, (0.3, 0.1, 0.0)))
    assert len(exp) > 10
    assert not check_all(m, np.eye(4), m, make_pose(None, (0.0, 0.0, 1e-6)))


def test_mesh_inside_mesh_without_surface_contact_is_no_hit():
    big = cdcore.Mesh(*uv_sphere(2.0, 8, 12))
    small = cdcore.Mesh(*uv_sphere(0.5, 6, 8))
    assert not check_all(big, np.eye(4), small, make_pose(None, (0.2, -0.1, 0.3)))


def test_identical_meshes_same_pose():
    m = cdcore.Mesh(*torus(1.0, 0.3, 16, 6))
    exp = check_all(m, np.eye(4), m, np.eye(4), leaf_sizes=(1,))
    assert {(i, i) for i in range(m.n_faces)} <= exp


def test_degenerate_triangles_work():
    v, f = cube(1.0)
    v = np.vstack([v, [[0, 0, 0.5], [0, 0, 0.5], [0.25, 0, 0.5]]])  # a point and a segment
    f = np.vstack([f, [[8, 9, 10], [8, 8, 8], [9, 10, 10]]])
    m = cdcore.Mesh(v, f)
    other = cdcore.Mesh(*grid(3, 0.8))
    exp = check_all(other, make_pose(None, (0.0, 0.0, 0.5)), m, np.eye(4))
    assert any(j >= 12 for _, j in exp)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_huge_and_tiny_scales(scale):
    rng = np.random.default_rng(3)
    ma = cdcore.Mesh(*(lambda vf: (vf[0] * scale, vf[1]))(torus(1.0, 0.3, 16, 6)))
    mb = cdcore.Mesh(*(lambda vf: (vf[0] * scale, vf[1]))(uv_sphere(0.5, 6, 8)))
    hits = 0
    for _ in range(4):
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 2 * scale)
        hits += bool(check_all(ma, np.eye(4), mb, pb, leaf_sizes=(1,)))
    assert hits


@pytest.mark.parametrize("bv,test", COMBOS)
def test_batch_matches_single_queries(bv, test):
    rng = np.random.default_rng(11)
    ma, mb = cdcore.Mesh(*torus(1.0, 0.3, 16, 6)), cdcore.Mesh(*uv_sphere(0.6, 6, 8))
    ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
    poses = np.zeros((40, 4, 4))
    poses[:, :3, :3] = random_rotations(40, rng)
    poses[:, :3, 3] = (rng.random((40, 3)) - 0.5) * 3.0
    poses[:, 3, 3] = 1
    pa = make_pose(random_rotations(1, rng)[0], (0.1, 0.0, 0.0))
    batch = collide_batch(ba, bb, poses, pose_a=pa, test=test)
    single = [collide(ba, pa, bb, p, test=test, contacts="first") for p in poses]
    assert batch.hits.tolist() == [r.hit for r in single]
    assert 0 < batch.hits.sum() < 40
    assert batch.stats.bv_tests == sum(r.stats.bv_tests for r in single)
    assert batch.stats.prim_tests == sum(r.stats.prim_tests for r in single)
    assert np.array_equal(batch.stats.axis_hist, sum(r.stats.axis_hist for r in single))


@pytest.mark.parametrize("bv,test", COMBOS)
def test_trace_is_consistent_with_stats(bv, test):
    ma = cdcore.Mesh(*torus(1.0, 0.3, 16, 6))
    ba = build_bvh(ma, bv)
    pb = make_pose(random_rotations(1, np.random.default_rng(2))[0], (0.9, 0.2, 0.0))
    res = collide(ba, None, ba, pb, test=test, trace=True)
    tr, st_ = res.trace, res.stats
    assert len(tr) == st_.bv_tests
    assert (tr.outcome == Outcome.LEAF_MISS).sum() == st_.false_alarms
    assert np.isin(tr.outcome, [Outcome.LEAF_HIT, Outcome.LEAF_MISS]).sum() == st_.leaf_pairs
    sep = tr.outcome == Outcome.SEPARATED
    assert sep.sum() == st_.axis_hist.sum()
    assert np.array_equal(np.bincount(tr.axis[sep], minlength=16), st_.axis_hist)
    assert np.all(tr.axis[~sep] == -1)
    assert tr.node_a[0] == 0 and tr.node_b[0] == 0
    # every tested pair other than the root pair is a child pair of an overlapping one
    overl = {(a, b) for a, b, o in zip(tr.node_a, tr.node_b, tr.outcome) if o == Outcome.OVERLAP}
    ni = ba.nodes_i
    for a, b in zip(tr.node_a[1:], tr.node_b[1:]):
        parents = {(p, b) for p in np.flatnonzero((ni[:, 0] == a) | (ni[:, 1] == a))}
        parents |= {(a, p) for p in np.flatnonzero((ni[:, 0] == b) | (ni[:, 1] == b))}
        assert parents & overl
    assert res.hit and st_.prim_tests > 0 and st_.t_total > 0


def test_large_trace_and_many_pairs_grow_buffers():
    m = cdcore.Mesh(*grid(40, 1.0))  # 3200 triangles, coplanar with itself
    b = build_bvh(m, "aabb")
    res = collide(b, None, b, make_pose(None, (0.01, 0.0, 0.0)), trace=True)
    assert len(res.pairs) > 5000 and len(res.trace) > 4096
    assert as_set(res.pairs) == as_set(oracle(m, np.eye(4), m, make_pose(None, (0.01, 0.0, 0.0))))
