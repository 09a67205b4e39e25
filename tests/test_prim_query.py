"""The public primitive queries (``cdcore.collide_primitive`` / ``distance_primitive``):
a primitive descending a mesh hierarchy of every BV type against brute force over all the
mesh's triangles (the descent may prune nothing that meets), distances against brute force
and coal's analytic shapes on meshes, primitive pairs against the kernels' own pair tests,
and bad input."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cdcore
from cdcore import _prim, shapes
from cdcore.primitives import KIND_NAMES, Primitive

from test_primitives import _coal_shape, _pose, random_prim

KINDS = KIND_NAMES  # the five solids and convex hulls
BVS = ("aabb", "obb", "sphere", "obb_sphere", "kdop14")


def _mesh(seed):
    m = shapes.jittered_icosphere(0.5, 0.05, 2, seed=seed)
    return m


def _brute(prim, pose_a, mesh, pose_b):
    """(hit, distance) over every triangle of the mesh, world coordinates."""
    P = pose_a @ prim.pose
    V = mesh.vertices @ pose_b[:3, :3].T + pose_b[:3, 3]
    va = np.zeros((1, 3)) if prim.vertices is None else np.array(prim.vertices)
    hit, best = False, np.inf
    wa, wb = np.empty(3), np.empty(3)
    for f in mesh.faces:
        tri = np.ascontiguousarray(V[f])
        hit |= _prim.prim_triangle_intersect(prim.code, np.array(prim.size), P, va, 0, len(va), tri)
        best = min(best, _prim.prim_triangle_distance(prim.code, np.array(prim.size), P, va, 0, len(va), tri, wa, wb))
    return hit, best


@pytest.fixture(scope="module")
def trees():
    m = _mesh(3)
    return m, {bv: cdcore.build_bvh(m, bv) for bv in BVS}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), kind=st.sampled_from(KINDS), bv=st.sampled_from(BVS))
def test_primitive_vs_mesh_equals_brute_force(trees, seed, kind, bv):
    mesh, built = trees
    rng = np.random.default_rng(seed)
    prim = random_prim(rng, kind, spread=0.2)
    pose_a, pose_b = _pose(rng, 0.5), _pose(rng, 0.3)
    hit, best = _brute(prim, pose_a, mesh, pose_b)
    assert cdcore.collide_primitive(prim, pose_a, built[bv], pose_b) == hit
    r = cdcore.distance_primitive(prim, pose_a, built[bv], pose_b)
    assert r.distance == pytest.approx(best, rel=1e-12, abs=1e-12)
    if r.distance > 0:
        assert np.linalg.norm(r.point_a - r.point_b) == pytest.approx(r.distance, rel=1e-9, abs=1e-12)
    # collide and distance agree away from touching
    if abs(best) > 1e-9:
        assert (r.distance == 0.0) == hit


def test_covers_hits_and_misses(trees):
    """The random cases above include both answers (a test that cannot fail otherwise)."""
    mesh, built = trees
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        prim = random_prim(rng, "capsule", spread=0.2)
        seen.add(cdcore.collide_primitive(prim, _pose(rng, 0.5), built["obb"], _pose(rng, 0.3)))
    assert seen == {True, False}


@pytest.mark.parametrize("kind", KIND_NAMES[:5])
def test_distance_to_mesh_vs_coal(trees, kind):
    coal = pytest.importorskip("coal")
    mesh, built = trees
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(mesh.faces), len(mesh.vertices))
    model.addVertices(np.ascontiguousarray(mesh.vertices))
    model.addTriangles(np.ascontiguousarray(mesh.faces, dtype=np.int64))
    model.endModel()
    req = coal.DistanceRequest()
    req.gjk_tolerance = 1e-10
    rng = np.random.default_rng(11 + KIND_NAMES.index(kind))
    n = 0
    for _ in range(30):
        prim = random_prim(rng, kind, spread=0.0)
        pose_a, pose_b = _pose(rng, 1.2), _pose(rng, 0.2)
        P = pose_a @ prim.pose
        res = coal.DistanceResult()
        dc = coal.distance(_coal_shape(prim), coal.Transform3s(P[:3, :3], P[:3, 3]), model,
                           coal.Transform3s(pose_b[:3, :3], pose_b[:3, 3]), req, res)
        d = cdcore.distance_primitive(prim, pose_a, built["obb"], pose_b).distance
        if dc > 1e-6:
            assert d == pytest.approx(dc, rel=1e-6, abs=1e-8), kind
            n += 1
    assert n >= 10


@pytest.mark.parametrize("ka", KINDS)
def test_primitive_pairs_match_the_pair_kernels(ka):
    rng = np.random.default_rng(5 + KINDS.index(ka))
    for kb in KINDS:
        for _ in range(10):
            a, b = random_prim(rng, ka), random_prim(rng, kb)
            kind, size, voff, verts = _prim.pack_primitives([a, b])
            poses = np.ascontiguousarray([a.pose, b.pose])
            pair = np.array([[0, 1]], np.int64)
            w = np.empty((1, 2, 3))
            d = _prim.prim_pairs_distance(kind, size, voff, verts, poses, pair, w)[0]
            hit = _prim.prim_pairs_intersect(kind, size, voff, verts, poses, pair)[0]
            assert cdcore.collide_primitive(a, None, b, None) == hit
            r = cdcore.distance_primitive(a, np.eye(4), b, np.eye(4))
            assert r.distance == d
            if d > 0:  # the closest points (undefined where the solids overlap)
                np.testing.assert_array_equal(r.point_a, w[0, 0])
                np.testing.assert_array_equal(r.point_b, w[0, 1])


def test_owner_pose_moves_the_solid(trees):
    """The solid is at pose @ prim.pose: moving the owner or the shape's frame is the same."""
    mesh, built = trees
    rng = np.random.default_rng(2)
    for _ in range(20):
        prim = random_prim(rng, "box", spread=0.3)
        owner = _pose(rng, 0.4)
        moved = Primitive(prim.kind, prim.size, owner @ prim.pose)
        assert (cdcore.distance_primitive(prim, owner, built["aabb"], None).distance
                == pytest.approx(cdcore.distance_primitive(moved, None, built["aabb"], None).distance, abs=1e-12))


def test_bad_input(trees):
    mesh, built = trees
    cap = Primitive("capsule", (0.1, 0.2))
    with pytest.raises(TypeError, match="Primitive"):
        cdcore.collide_primitive(mesh, None, cap, None)
    with pytest.raises(TypeError, match="Primitive or a BVH"):
        cdcore.distance_primitive(cap, None, mesh, None)
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(ValueError, match="pose_a: not a rigid transform"):
        cdcore.collide_primitive(cap, bad, built["obb"], None)
    nan = np.eye(4)
    nan[0, 3] = np.nan
    with pytest.raises(ValueError, match="pose_b: contains NaN"):
        cdcore.distance_primitive(cap, None, built["obb"], nan)
    with pytest.raises(ValueError, match="pose_b: .*shape"):
        cdcore.distance_primitive(cap, None, cap, np.eye(3))
