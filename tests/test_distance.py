"""cdcore.distance: every BV type against brute force over all triangle pairs, closest
points, intersections, the approximate mode's guarantee, traces, python-fcl, bad input."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import cdcore
from cdcore import BV_TYPES, build_bvh, collide, distance
from cdcore._distance import AXIS_CENTRE, kdop_bound, pair_bound
from cdcore._kdop_traverse import prepare
from cdcore._tridist import all_pairs_distance, tri_tri_distance_numpy
from cdcore.distance import BOUND_NAMES, DistanceResult, Event
from cdcore.transforms import make_pose, random_rotations, relative_transform, rotation_about, transform_points

from meshgen import cube, grid, soup, torus, uv_sphere

BVS = list(BV_TYPES)
KDOPS = [bv for bv in BVS if bv.startswith("kdop")]


def brute(mesh_a, pose_a, mesh_b, pose_b):
    """(m_a, m_b) distances of every triangle pair, in A's frame like the kernel (the same
    transform arithmetic, so the coordinates are bit-identical)."""
    R, t = relative_transform(_pose(pose_a), _pose(pose_b))
    vb = transform_points(R, t, mesh_b.vertices)
    return all_pairs_distance(mesh_a.vertices[mesh_a.faces], vb[mesh_b.faces])


def _pose(p):
    return np.eye(4) if p is None else np.asarray(p, float)


def world_triangle(mesh, pose, f):
    pose = _pose(pose)
    return mesh.vertices[mesh.faces[f]] @ pose[:3, :3].T + pose[:3, 3]


def point_triangle(p, T):
    return tri_tri_distance_numpy(np.array([T]), np.array([[p, p, p]]))[0][0]


def close(d, ref):
    return abs(d - ref) <= max(1e-9 * ref, 1e-12)


def check_result(res, D, mesh_a, pose_a, mesh_b, pose_b, label):
    ref = D.min()
    assert isinstance(res, DistanceResult)
    assert close(res.distance, ref), (label, res.distance, ref)
    i, j = res.pair
    assert isinstance(i, int) and isinstance(j, int)
    assert close(D[i, j], res.distance), (label, D[i, j], res.distance)
    p, q = res.points
    assert res.points.shape == (2, 3)
    scale = 1e-11 * max(1.0, np.abs(res.points).max())
    assert point_triangle(p, world_triangle(mesh_a, pose_a, i)) <= scale, label
    assert point_triangle(q, world_triangle(mesh_b, pose_b, j)) <= scale, label
    assert abs(np.linalg.norm(p - q) - res.distance) <= scale, label


def check_all(mesh_a, pose_a, mesh_b, pose_b, bvs=BVS, leaf_sizes=(1, 3), orders=(None,)):
    D = brute(mesh_a, pose_a, mesh_b, pose_b)
    for leaf in leaf_sizes:
        for bv in bvs:
            ba, bb = build_bvh(mesh_a, bv, leaf), build_bvh(mesh_b, bv, leaf)
            for order in orders:
                res = distance(ba, pose_a, bb, pose_b, order=order)
                check_result(res, D, mesh_a, pose_a, mesh_b, pose_b, (bv, leaf, order))
    return D


def _mesh(kind, rng, scale=1.0):
    if kind == "soup":
        v, f = soup(rng, n=int(rng.integers(1, 40)))
    elif kind == "sphere":
        v, f = uv_sphere(0.5, 5, 8)
    elif kind == "torus":
        v, f = torus(0.5, 0.15, 12, 6)
    elif kind == "cube":
        v, f = cube(0.6)
    else:
        v, f = grid(4, 1.0)
    return cdcore.Mesh(v * scale, f)


KINDS = ["soup", "sphere", "torus", "grid", "cube"]


# ---- correctness against brute force --------------------------------------------------------

@given(seed=st.integers(0, 2**32 - 1), kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
       spread=st.sampled_from([0.2, 0.6, 1.2, 3.0]))
def test_random_meshes_and_poses_equal_brute_force(seed, kinds, spread):
    rng = np.random.default_rng(seed)
    ma, mb = _mesh(kinds[0], rng), _mesh(kinds[1], rng)
    pa = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.1)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * spread)
    check_all(ma, pa, mb, pb)


def test_both_search_orders_and_every_realignment():
    rng = np.random.default_rng(2)
    for _ in range(6):
        ma, mb = _mesh("torus", rng), _mesh("soup", rng)
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 1.5)
        D = check_all(ma, None, mb, pb, bvs=["obb", "aabb", "sphere", "kdop14"], leaf_sizes=(1, 2),
                      orders=("depth", "best"))
        for bv in KDOPS:
            ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
            for realign in ("table", "table_angle", "all", "major"):
                res = distance(ba, None, bb, pb, realign=realign)
                check_result(res, D, ma, np.eye(4), mb, pb, (bv, realign))


def test_cubes_at_a_known_distance():
    v, f = cube(1.0)
    m = cdcore.Mesh(v, f)
    for bv in BVS:
        b = build_bvh(m, bv)
        # face to face, 0.5 apart, B spun about the x axis
        pose = make_pose(rotation_about((1, 0, 0), 0.3), (1.5, 0.0, 0.0))
        res = distance(b, None, b, pose)
        assert res.distance == pytest.approx(0.5, abs=1e-12), bv
        assert res.points[0][0] == pytest.approx(0.5) and res.points[1][0] == pytest.approx(1.0)
        # corner to corner along the diagonal
        pose = make_pose(None, (2.0, 2.0, 2.0))
        res = distance(b, None, b, pose)
        assert res.distance == pytest.approx(math.sqrt(3.0), abs=1e-12), bv


def test_far_apart_meshes_are_exact_and_cheap():
    rng = np.random.default_rng(9)
    ma = _mesh("torus", rng)
    pb = make_pose(random_rotations(1, rng)[0], (40.0, -25.0, 10.0))
    D = check_all(ma, None, ma, pb, bvs=["obb", "obb_sphere", "aabb", "sphere", "kdop18"], leaf_sizes=(1,))
    res = distance(build_bvh(ma, "obb"), None, build_bvh(ma, "obb"), pb)
    assert close(res.distance, D.min())
    assert res.stats.bv_tests < 0.05 * D.size  # the centre-line bound keeps it small


def test_identical_meshes_in_place_are_at_zero():
    m = _mesh("sphere", np.random.default_rng(0))
    for bv in BVS:
        b = build_bvh(m, bv)
        res = distance(b, None, b, None)
        assert res.distance == 0.0


def test_refitted_hierarchies():
    rng = np.random.default_rng(4)
    ma, mb = _mesh("torus", rng), _mesh("sphere", rng)
    pb = make_pose(random_rotations(1, rng)[0], (0.7, 0.1, 0.0))
    for bv in ["aabb", "obb", "obb_sphere", "sphere", "kdop14"]:
        ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
        va = ma.vertices + rng.normal(scale=0.05, size=ma.vertices.shape)
        vb = mb.vertices * 1.3
        ba.refit(va)
        bb.refit(vb)
        D = brute(ba.mesh, None, bb.mesh, pb)
        check_result(distance(ba, None, bb, pb), D, ba.mesh, np.eye(4), bb.mesh, pb, bv)


# ---- intersections ---------------------------------------------------------------------------

def test_zero_exactly_when_collide_reports_a_hit():
    rng = np.random.default_rng(7)
    hits = 0
    for k in range(40):
        ma, mb = _mesh("torus", rng), _mesh(["soup", "sphere", "grid"][k % 3], rng)
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 2.2)
        for bv in ["obb", "aabb", "sphere", "obb_sphere", "kdop26"]:
            ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
            hit = collide(ba, None, bb, pb, contacts="first").hit
            res = distance(ba, None, bb, pb)
            assert (res.distance == 0.0) == hit, (k, bv)
            if hit:
                # a witness: a point of both triangles
                i, j = res.pair
                p, q = res.points
                assert point_triangle(p, world_triangle(ma, np.eye(4), i)) < 1e-12
                assert point_triangle(p, world_triangle(mb, pb, j)) < 1e-12
                assert np.linalg.norm(p - q) < 1e-12
        hits += hit
    assert 5 < hits < 35


# ---- approximate mode ---------------------------------------------------------------------

@pytest.mark.parametrize("abs_err,rel_err", [(0.05, 0.0), (0.0, 0.2), (0.02, 0.5), (1.0, 0.0), (0.0, 3.0)])
def test_approximate_distance_within_the_stated_bound(abs_err, rel_err):
    rng = np.random.default_rng(int(abs_err * 100 + rel_err * 10))
    for k in range(8):
        ma, mb = _mesh("torus", rng), _mesh(["sphere", "soup"][k % 2], rng)
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 2.5)
        D = brute(ma, None, mb, pb)
        true = D.min()
        for bv in ["obb", "aabb", "sphere", "kdop14"]:
            ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
            for order in ("depth", "best"):
                res = distance(ba, None, bb, pb, abs_err=abs_err, rel_err=rel_err, order=order)
                assert true - 1e-12 <= res.distance <= true + max(abs_err, rel_err * true) + 1e-12
                assert close(D[res.pair], res.distance)  # an actual triangle pair
                assert abs(np.linalg.norm(res.points[0] - res.points[1]) - res.distance) < 1e-11


def test_approximate_mode_does_less_work():
    from cdcore.bench.common import linked_pose, torus_mesh
    mesh = torus_mesh(48, 12)
    b = build_bvh(mesh, "obb")
    pose = linked_pose(0.05)
    exact = distance(b, None, b, pose)
    approx = distance(b, None, b, pose, rel_err=0.5)
    assert approx.stats.bv_tests < exact.stats.bv_tests
    assert exact.distance <= approx.distance <= 1.5 * exact.distance


# ---- bounds, traces, stats ------------------------------------------------------------------

def _node_tris(bvh, n):
    return bvh.node_primitives(n)


@pytest.mark.parametrize("bv", BVS)
def test_every_traced_bound_is_a_lower_bound(bv):
    rng = np.random.default_rng(21)
    ma, mb = _mesh("torus", rng), _mesh("sphere", rng)
    pb = make_pose(random_rotations(1, rng)[0], (0.55, 0.2, -0.1))
    D = brute(ma, None, mb, pb)
    ba, bb = build_bvh(ma, bv, 2), build_bvh(mb, bv, 2)
    for order in ("depth", "best"):
        res = distance(ba, None, bb, pb, trace=True, order=order)
        tr = res.trace
        assert len(tr) > 0
        ev = tr.event
        bound_rows = np.flatnonzero((ev == Event.PRUNED) | (ev == Event.QUEUED))
        assert len(bound_rows) == 2 * int((ev == Event.EXPANDED).sum()) + 1
        assert int((ev == Event.LEAF).sum()) == res.stats.leaf_pairs
        for r in bound_rows:
            block = D[np.ix_(_node_tris(ba, tr.node_a[r]), _node_tris(bb, tr.node_b[r]))]
            assert tr.bound[r] <= block.min() + 1e-12, (bv, order, r, tr.bound[r], block.min())
            assert -1 <= tr.axis[r] < len(BOUND_NAMES)
        leaf_rows = np.flatnonzero(ev == Event.LEAF)
        vals = tr.value[leaf_rows]
        assert np.nanmin(vals) == res.distance
        for r in leaf_rows:
            if np.isfinite(tr.value[r]):
                block = D[np.ix_(_node_tris(ba, tr.node_a[r]), _node_tris(bb, tr.node_b[r]))]
                assert tr.value[r] >= block.min() - 1e-15
        assert np.all(np.isnan(tr.value[ev != Event.LEAF]))
        st_ = res.stats
        assert st_.bv_tests >= len(bound_rows) and st_.prim_tests >= 1 and st_.max_stack >= 1
        assert st_.t_total > 0.0 and 0.0 <= st_.t_prim <= st_.t_total
        assert st_.axis_hist.shape == (len(BOUND_NAMES),)
        assert distance(ba, None, bb, pb, order=order).trace is None


@pytest.mark.parametrize("bv", ["aabb", "obb", "sphere", "obb_sphere"])
def test_pair_bound_on_random_node_pairs(bv):
    rng = np.random.default_rng(13)
    ma, mb = _mesh("torus", rng), _mesh("soup", rng)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 1.5)
    D = brute(ma, None, mb, pb)
    ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
    R, t = relative_transform(np.eye(4), pb)
    Rt, tt = tuple(R.ravel()), tuple(t)
    informative = 0
    for _ in range(300):
        a, b = int(rng.integers(ba.n_nodes)), int(rng.integers(bb.n_nodes))
        lb, axis = pair_bound(ba.kind, a, b, Rt, tt, ba.nodes_f, bb.nodes_f, np.inf)
        true = D[np.ix_(_node_tris(ba, a), _node_tris(bb, b))].min()
        assert lb <= true + 1e-12
        informative += lb > 0.5 * true > 0
        if bv in ("aabb", "obb"):
            assert axis != 15
    assert informative > 30
    # the centre line is used: distant small boxes
    assert AXIS_CENTRE == BOUND_NAMES.index("centre line")


@pytest.mark.parametrize("bv", KDOPS)
def test_kdop_section5_bound_on_random_node_pairs(bv):
    rng = np.random.default_rng(17)
    ma, mb = _mesh("torus", rng), _mesh("sphere", rng)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 1.5)
    D = brute(ma, None, mb, pb)
    ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
    R, t = relative_transform(np.eye(4), pb)
    for realign in ("table", "table_angle", "all", "major"):
        method, qf, qi = prepare(bb, realign, R, t)
        kd = bb.kdop
        informative = 0
        for _ in range(200):
            a, b = int(rng.integers(ba.n_nodes)), int(rng.integers(bb.n_nodes))
            lb, axis = kdop_bound(method, a, b, ba.kdop.slabs, kd.slabs, kd.tab, kd.outer, qf, qi, np.inf)
            true = D[np.ix_(_node_tris(ba, a), _node_tris(bb, b))].min()
            assert lb <= true + 1e-12, (realign, a, b)
            assert 0 <= axis < len(kd.dirs)
            informative += lb > 0.3 * true > 0
        assert informative > 20


def test_result_fields():
    m = _mesh("sphere", np.random.default_rng(1))
    b = build_bvh(m, "obb")
    res = distance(b, None, b, make_pose(None, (2.0, 0.0, 0.0)))
    assert isinstance(res.distance, float)
    assert res.distance == pytest.approx(1.0, abs=0.05)
    assert res.points.dtype == np.float64 and res.points.shape == (2, 3)
    assert isinstance(res.stats, cdcore.CollisionStats)
    assert res.stats.prim_tests >= 1
    assert cdcore.distance is distance and cdcore.DistanceResult is DistanceResult


# ---- python-fcl -----------------------------------------------------------------------------

def test_agrees_with_python_fcl():
    fcl = pytest.importorskip("fcl")
    rng = np.random.default_rng(31)

    def obj(mesh, pose):
        model = fcl.BVHModel()
        model.beginModel(mesh.n_faces, len(mesh.vertices))
        model.addSubModel(mesh.vertices, mesh.faces)
        model.endModel()
        return fcl.CollisionObject(model, fcl.Transform(pose[:3, :3].copy(), pose[:3, 3].copy()))

    ma, mb = _mesh("torus", rng), _mesh("sphere", rng)
    bvhs = {bv: (build_bvh(ma, bv), build_bvh(mb, bv)) for bv in ["obb", "obb_sphere", "aabb", "kdop18"]}
    req = fcl.DistanceRequest(enable_nearest_points=True)
    for k in range(10):
        pa = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.2)
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 2.5)
        ref = fcl.distance(obj(ma, pa), obj(mb, pb), req, fcl.DistanceResult())
        for bv, (ba, bb) in bvhs.items():
            d = distance(ba, pa, bb, pb).distance
            assert abs(d - max(ref, 0.0)) <= max(1e-6 * abs(ref), 1e-9), (k, bv, d, ref)


# ---- bad input ------------------------------------------------------------------------------

def test_bad_inputs_raise_like_collide():
    rng = np.random.default_rng(0)
    m = _mesh("sphere", rng)
    a, b, k = build_bvh(m, "obb"), build_bvh(m, "aabb"), build_bvh(m, "kdop14")
    with pytest.raises(ValueError, match="same bounding-volume type"):
        distance(a, None, b, None)
    with pytest.raises(TypeError):
        distance(m, None, a, None)
    with pytest.raises(TypeError):
        distance(a, None, "obb", None)
    bad = np.eye(4)
    bad[0, 3] = np.nan
    with pytest.raises(ValueError, match="pose_b"):
        distance(a, None, a, bad)
    with pytest.raises(ValueError, match="pose_a"):
        distance(a, np.eye(3), a, None)
    with pytest.raises(ValueError, match="rigid"):
        distance(a, np.diag([2.0, 1, 1, 1]), a, None)
    for name in ("abs_err", "rel_err"):
        for v in (-0.1, float("nan"), float("inf")):
            with pytest.raises(ValueError, match=name):
                distance(a, None, a, None, **{name: v})
        with pytest.raises(TypeError, match=name):
            distance(a, None, a, None, **{name: "0.1"})
        with pytest.raises(TypeError, match=name):
            distance(a, None, a, None, **{name: True})
    # integers and numpy scalars are fine
    assert distance(a, None, a, None, abs_err=0, rel_err=np.float32(0.1)).distance == 0.0
    with pytest.raises(ValueError, match="order"):
        distance(a, None, a, None, order="breadth")
    with pytest.raises(ValueError, match="realign"):
        distance(a, None, a, None, realign="table")
    with pytest.raises(ValueError, match="realign"):
        distance(k, None, k, None, realign="nope")
