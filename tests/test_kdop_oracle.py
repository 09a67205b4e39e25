"""k-DOP hierarchies: every k x every realignment returns exactly the brute-force oracle's
pairs (random meshes and poses, touching / coplanar / nested / degenerate cases, extreme
scales, rotations that tie the remapping), and batch, trace and stats agree."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import Outcome, build_bvh, collide, collide_batch
from cdcore._tritri_ref import all_pairs_overlap
from cdcore.bv.kdop import KDOP_AXIS_NAMES
from cdcore.transforms import make_pose, random_rotations, relative_transform, rotation_about, transform_points

from meshgen import cube, grid, soup, torus, uv_sphere

KDOPS = ("kdop6", "kdop14", "kdop18", "kdop26")
REALIGNS = ("table", "table_angle", "all", "major")
KR = [(bv, r) for bv in KDOPS for r in REALIGNS]


def oracle(mesh_a, pose_a, mesh_b, pose_b):
    R, t = relative_transform(np.asarray(pose_a, float), np.asarray(pose_b, float))
    vb = transform_points(R, t, mesh_b.vertices)
    return {tuple(p) for p in np.asarray(all_pairs_overlap(mesh_a.vertices[mesh_a.faces], vb[mesh_b.faces])).tolist()}


def as_set(pairs):
    return {tuple(p) for p in np.asarray(pairs).tolist()}


def check_all(mesh_a, pose_a, mesh_b, pose_b, leaf_sizes=(1, 3), kdops=KDOPS):
    expected = oracle(mesh_a, pose_a, mesh_b, pose_b)
    for leaf in leaf_sizes:
        for bv in kdops:
            ba, bb = build_bvh(mesh_a, bv, leaf), build_bvh(mesh_b, bv, leaf)
            for realign in REALIGNS:
                res = collide(ba, pose_a, bb, pose_b, realign=realign)
                got = as_set(res.pairs)
                assert got == expected, (bv, realign, leaf, sorted(got ^ expected)[:5])
                assert res.hit == bool(expected) and len(res.pairs) == len(got)
                first = collide(ba, pose_a, bb, pose_b, realign=realign, contacts="first")
                assert first.hit == bool(expected)
                assert len(first.pairs) == (1 if expected else 0) and as_set(first.pairs) <= expected
    return expected


def _mesh(kind, rng, scale=1.0):
    if kind == "soup":
        v, f = soup(rng, n=int(rng.integers(1, 40)))
    elif kind == "sphere":
        v, f = uv_sphere(0.5, 5, 8)
    elif kind == "torus":
        v, f = torus(0.5, 0.15, 12, 6)
    else:
        v, f = grid(4, 1.0)
    return cdcore.Mesh(v * scale, f)


KINDS = ["soup", "sphere", "torus", "grid"]


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
       spread=st.sampled_from([0.2, 0.6, 1.2]))
def test_random_meshes_and_poses_match_oracle(seed, kinds, spread):
    rng = np.random.default_rng(seed)
    ma, mb = _mesh(kinds[0], rng), _mesh(kinds[1], rng)
    pa = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.1)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * spread)
    check_all(ma, pa, mb, pb)


def _tie_rotations():
    """Rotations that put rotated directions exactly on remapping ties, ring and cone
    boundaries: axis permutations, 45-degree turns, the identity, tiny angles."""
    out = [np.eye(3), rotation_about((0, 0, 1), np.pi / 2), rotation_about((1, 1, 1), 2 * np.pi / 3),
           rotation_about((0, 0, 1), np.pi / 4), rotation_about((1, 0, 0), np.pi / 4),
           rotation_about((1, 1, 0), np.pi), rotation_about((0, 1, 0), 1e-9), rotation_about((1, 2, 3), 1e-4),
           rotation_about((1, 1, 1), np.arccos(0.8864518862828913))]
    return out


@pytest.mark.parametrize("ri", range(len(_tie_rotations())))
def test_tie_rotations_match_oracle(ri):
    R = _tie_rotations()[ri]
    rng = np.random.default_rng(ri)
    ma = cdcore.Mesh(*torus(0.5, 0.15, 12, 6))
    mb = cdcore.Mesh(*uv_sphere(0.4, 5, 8))
    hits = 0
    for k in range(4):
        pb = make_pose(R, (rng.random(3) - 0.5) * 1.2)
        hits += bool(check_all(ma, np.eye(4), mb, pb, leaf_sizes=(1,)))
    grid_m = cdcore.Mesh(*grid(4, 1.0))
    check_all(grid_m, np.eye(4), grid_m, make_pose(R, (0.05, 0.02, 0.0)), leaf_sizes=(1,))


def test_touching_cubes_face_to_face():
    m = cdcore.Mesh(*cube(1.0))
    assert check_all(m, np.eye(4), m, make_pose(None, (1.0, 0.0, 0.0)))
    assert not check_all(m, np.eye(4), m, make_pose(None, (1.0 + 1e-9, 0.0, 0.0)))
    # touching along a rotated face: B's cube turned 90 degrees about z still touches
    assert check_all(m, np.eye(4), m, make_pose(rotation_about((0, 0, 1), np.pi / 2), (1.0, 0.0, 0.0)))


def test_coplanar_grids():
    m = cdcore.Mesh(*grid(5, 1.0))
    assert len(check_all(m, np.eye(4), m, make_pose(None, (0.3, 0.1, 0.0)))) > 10
    assert not check_all(m, np.eye(4), m, make_pose(None, (0.0, 0.0, 1e-6)))
    # coplanar after a rotation about the plane's normal
    assert check_all(m, np.eye(4), m, make_pose(rotation_about((0, 0, 1), 0.3), (0.2, 0.1, 0.0)))


def test_mesh_inside_mesh_without_surface_contact_is_no_hit():
    big = cdcore.Mesh(*uv_sphere(2.0, 8, 12))
    small = cdcore.Mesh(*uv_sphere(0.5, 6, 8))
    assert not check_all(big, np.eye(4), small, make_pose(random_rotations(1, np.random.default_rng(0))[0],
                                                          (0.2, -0.1, 0.3)))


def test_identical_meshes_same_pose():
    m = cdcore.Mesh(*torus(1.0, 0.3, 16, 6))
    exp = check_all(m, np.eye(4), m, np.eye(4), leaf_sizes=(1,))
    assert {(i, i) for i in range(m.n_faces)} <= exp


def test_degenerate_triangles_work():
    v, f = cube(1.0)
    v = np.vstack([v, [[0, 0, 0.5], [0, 0, 0.5], [0.25, 0, 0.5]]])
    f = np.vstack([f, [[8, 9, 10], [8, 8, 8], [9, 10, 10]]])
    m = cdcore.Mesh(v, f)
    other = cdcore.Mesh(*grid(3, 0.8))
    exp = check_all(other, make_pose(None, (0.0, 0.0, 0.5)), m, np.eye(4))
    assert any(j >= 12 for _, j in exp)
    exp = check_all(other, make_pose(rotation_about((1, 1, 0), 0.7), (0.0, 0.0, 0.5)), m, np.eye(4))


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_huge_and_tiny_scales(scale):
    rng = np.random.default_rng(3)
    ma = cdcore.Mesh(torus(1.0, 0.3, 16, 6)[0] * scale, torus(1.0, 0.3, 16, 6)[1])
    mb = cdcore.Mesh(uv_sphere(0.5, 6, 8)[0] * scale, uv_sphere(0.5, 6, 8)[1])
    hits = 0
    for _ in range(3):
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 2 * scale)
        hits += bool(check_all(ma, np.eye(4), mb, pb, leaf_sizes=(1,)))
    assert hits


def test_far_from_origin():
    """Large coordinates and translations with small gaps: the query pad is relative to
    them, the oracle sees the same rounded coordinates."""
    off = np.array([1e5, -2e5, 3e5])
    m = cdcore.Mesh(*cube(1.0, center=off))
    pa = make_pose(None, -off)
    for gap in (0.0, 1e-6):
        pb = make_pose(None, -off + (1.0 + gap, 0.0, 0.0))
        assert bool(check_all(m, pa, m, pb, leaf_sizes=(1,))) == (gap == 0.0)


def test_nearly_orthonormal_rotation():
    """Rotations are accepted to 1e-6 of orthonormality; the realignment must still contain
    the (slightly non-rigidly) moved geometry."""
    rng = np.random.default_rng(5)
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6)), cdcore.Mesh(*uv_sphere(0.4, 5, 8))
    for _ in range(3):
        R = random_rotations(1, rng)[0] * (1.0 + 4e-7)
        check_all(ma, np.eye(4), mb, make_pose(R, (rng.random(3) - 0.5)), leaf_sizes=(1,))


@pytest.mark.parametrize("bv,realign", KR)
def test_batch_matches_single_queries(bv, realign):
    rng = np.random.default_rng(11)
    ma, mb = cdcore.Mesh(*torus(1.0, 0.3, 16, 6)), cdcore.Mesh(*uv_sphere(0.6, 6, 8))
    ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
    poses = np.zeros((30, 4, 4))
    poses[:, :3, :3] = random_rotations(30, rng)
    poses[:, :3, 3] = (rng.random((30, 3)) - 0.5) * 3.0
    poses[:, 3, 3] = 1
    pa = make_pose(random_rotations(1, rng)[0], (0.1, 0.0, 0.0))
    batch = collide_batch(ba, bb, poses, pose_a=pa, realign=realign)
    single = [collide(ba, pa, bb, p, realign=realign, contacts="first") for p in poses]
    assert batch.hits.tolist() == [r.hit for r in single]
    assert 0 < batch.hits.sum() < 30
    assert batch.stats.bv_tests == sum(r.stats.bv_tests for r in single)
    assert batch.stats.prim_tests == sum(r.stats.prim_tests for r in single)
    assert np.array_equal(batch.stats.axis_hist, sum(r.stats.axis_hist for r in single))


@pytest.mark.parametrize("bv,realign", KR)
def test_trace_is_consistent_with_stats(bv, realign):
    ma = cdcore.Mesh(*torus(1.0, 0.3, 16, 6))
    ba = build_bvh(ma, bv)
    pb = make_pose(random_rotations(1, np.random.default_rng(2))[0], (0.9, 0.2, 0.0))
    res = collide(ba, None, ba, pb, trace=True, realign=realign)
    tr, st_ = res.trace, res.stats
    k2 = len(KDOP_AXIS_NAMES[bv])
    assert len(tr) == st_.bv_tests
    assert (tr.outcome == Outcome.LEAF_MISS).sum() == st_.false_alarms
    assert np.isin(tr.outcome, [Outcome.LEAF_HIT, Outcome.LEAF_MISS]).sum() == st_.leaf_pairs
    sep = tr.outcome == Outcome.SEPARATED
    assert len(st_.axis_hist) == max(16, k2) and st_.axis_hist[k2:].sum() == 0
    assert np.array_equal(np.bincount(tr.axis[sep], minlength=len(st_.axis_hist)), st_.axis_hist)
    assert np.all(tr.axis[~sep] == -1) and np.all(tr.axis[sep] < k2)
    assert tr.node_a[0] == 0 and tr.node_b[0] == 0
    overl = {(a, b) for a, b, o in zip(tr.node_a, tr.node_b, tr.outcome) if o == Outcome.OVERLAP}
    parent = np.full(ba.n_nodes, -1)
    inner = np.flatnonzero(~ba.is_leaf)
    parent[ba.nodes_i[inner, 0]] = inner
    parent[ba.nodes_i[inner, 1]] = inner
    for a, b in zip(tr.node_a[1:], tr.node_b[1:]):
        assert (parent[a], b) in overl or (a, parent[b]) in overl
    assert res.hit and st_.prim_tests > 0 and st_.t_total > 0
    # the same query without a trace finds the same pairs with the same counts
    plain = collide(ba, None, ba, pb, realign=realign)
    assert plain.pairs.tolist() == res.pairs.tolist() and plain.stats.bv_tests == st_.bv_tests


def test_large_trace_and_many_pairs_grow_buffers():
    m = cdcore.Mesh(*grid(20, 1.0))  # 800 triangles, coplanar with itself
    b = build_bvh(m, "kdop18")
    pose = make_pose(rotation_about((0, 0, 1), 0.01), (0.01, 0.0, 0.0))
    res = collide(b, None, b, pose, trace=True, realign="all")
    assert len(res.pairs) > 1500 and len(res.trace) > 4096
    assert as_set(res.pairs) == oracle(m, np.eye(4), m, pose)


def test_default_realign_is_table_and_realign_is_checked():
    ma, mb = cdcore.Mesh(*torus(1.0, 0.3, 12, 6)), cdcore.Mesh(*uv_sphere(0.5, 5, 8))
    pose = make_pose(rotation_about((1, 2, 3), 0.4), (1.0, 0.0, 0.0))
    ka, kb = build_bvh(ma, "kdop14"), build_bvh(mb, "kdop14")
    d, tb = collide(ka, None, kb, pose), collide(ka, None, kb, pose, realign="table")
    assert d.pairs.tolist() == tb.pairs.tolist() and d.stats.bv_tests == tb.stats.bv_tests
    assert collide(ka, None, kb, pose, test="slab").hit
    for bad in ("TABLE", "zachmann", "", 3):
        with pytest.raises(ValueError, match=r"realign: expected one of \('table', 'all', 'major', 'table_angle'\)"):
            collide(ka, None, kb, pose, realign=bad)
        with pytest.raises(ValueError, match=r"realign: expected one of"):
            collide_batch(ka, kb, pose[None], realign=bad)
    aa, ab = build_bvh(ma, "aabb"), build_bvh(mb, "aabb")
    assert collide(aa, None, ab, pose, realign=None).hit
    for r in REALIGNS:
        with pytest.raises(ValueError, match=r"realign: only k-DOP hierarchies"):
            collide(aa, None, ab, pose, realign=r)
        with pytest.raises(ValueError, match=r"realign: only k-DOP hierarchies"):
            collide_batch(aa, ab, pose[None], realign=r)
    with pytest.raises(ValueError, match=r"test: 'sat15' is not available for bv='kdop14'"):
        collide(ka, None, kb, pose, test="sat15")
    with pytest.raises(ValueError, match=r"same bounding-volume type"):
        collide(ka, None, build_bvh(mb, "kdop18"), pose)


def test_refit_then_collide_matches_fresh_tree():
    """A refit marks the table data stale; the next table query refreshes it."""
    rng = np.random.default_rng(4)
    m = cdcore.Mesh(*torus(1.0, 0.3, 16, 6))
    other = cdcore.Mesh(*uv_sphere(0.4, 5, 8))
    v2 = m.vertices * (1.0 + 0.2 * np.sin(3 * m.vertices[:, :1])) + 0.05 * rng.normal(size=m.vertices.shape)
    for bv in KDOPS:
        b = build_bvh(m, bv)
        ob = build_bvh(other, bv)
        b.refit(v2)
        ob.refit(other.vertices + 0.01)
        assert not b.kdop.table_valid
        fresh, ofresh = build_bvh(m.with_vertices(v2), bv), build_bvh(other.with_vertices(other.vertices + 0.01), bv)
        for k in range(4):
            pose = make_pose(random_rotations(1, rng)[0], v2[rng.integers(len(v2))])
            exp = oracle(b.mesh, np.eye(4), ob.mesh, pose)
            for r in REALIGNS:
                assert as_set(collide(b, None, ob, pose, realign=r).pairs) == exp, (bv, r)
                assert as_set(collide(ob, pose, b, None, realign=r).pairs) == {(j, i) for i, j in exp}
                assert as_set(collide(fresh, None, ofresh, pose, realign=r).pairs) == exp
        assert b.kdop.table_valid and b.check() == []
