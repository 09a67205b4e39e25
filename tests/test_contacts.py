"""Contact geometry (collide(..., geometry=True)) equals the brute-force reference
(cdcore.contacts.reference_contacts) for every BV type and test, on random poses and on the
degenerate cases: coplanar, touching, slivers, far from the origin."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import BV_TYPES, build_bvh, collide
from cdcore.contacts import _ref_coplanar, geometry_arrays, overlap_along, reference_contacts, summarize
from cdcore.transforms import make_pose, random_rotations

from meshgen import cube, grid, soup, torus, uv_sphere

COMBOS = [(bv, test) for bv, spec in BV_TYPES.items() for test in spec.tests]


def _tol(*poses, mag=1.0):
    """Comparison tolerance: rounding of world coordinates far from the origin plus the
    reference's 1e-9 admission tolerance."""
    off = max(float(np.abs(np.asarray(p)[:3, 3]).max()) for p in poses)
    return 1e-8 * mag + 1e-14 * off


def assert_matches_reference(res, ref, mesh_a, pose_a, mesh_b, pose_b, tol):
    assert np.array_equal(res.pairs, ref.pairs)
    k = len(ref.pairs)
    assert res.points.shape == (k, 2, 3) and res.normals.shape == (k, 3) and res.depths.shape == (k,)
    if not k:
        return
    np.testing.assert_allclose(res.depths, ref.depths, atol=tol, rtol=0)
    # segments: the same two end points, in either order
    same = np.abs(res.points - ref.points).max(axis=(1, 2))
    swap = np.abs(res.points - ref.points[:, ::-1]).max(axis=(1, 2))
    bad = np.minimum(same, swap) > tol
    TA = mesh_a.vertices[mesh_a.faces] @ np.asarray(pose_a)[:3, :3].T + np.asarray(pose_a)[:3, 3]
    TB = mesh_b.vertices[mesh_b.faces] @ np.asarray(pose_b)[:3, :3].T + np.asarray(pose_b)[:3, 3]
    for r in np.flatnonzero(bad):
        # a coplanar overlap polygon may have several diameters (a square's two diagonals):
        # then the same length, and both ends on both triangles (checked below)
        i, j = res.pairs[r]
        assert _ref_coplanar(TA[i], TB[j]), (res.pairs[r], res.points[r], ref.points[r])
        length = lambda P: np.linalg.norm(P[1] - P[0])  # noqa: E731
        assert abs(length(res.points[r]) - length(ref.points[r])) <= tol
    # normals: unit, and moving B by depth along the normal is exactly what separates it
    # (where two axes tie the kernel and the reference may pick either: check the property)
    nrm = np.linalg.norm(res.normals, axis=1)
    assert np.all((np.abs(nrm - 1) < 1e-12) | (nrm == 0))
    for r, (i, j) in enumerate(res.pairs.tolist()):
        if res.depths[r] > tol and nrm[r] > 0:
            assert abs(overlap_along(TA[i], TB[j], res.normals[r]) - res.depths[r]) <= tol, r
        if not np.allclose(res.normals[r], ref.normals[r], atol=1e-6):
            assert abs(overlap_along(TA[i], TB[j], ref.normals[r]) - res.depths[r]) <= tol, r
    # every end point lies on both triangles
    for r, (i, j) in enumerate(res.pairs.tolist()):
        for p in res.points[r]:
            for T in (TA[i], TB[j]):
                d, _, _ = _point_tri(p, T)
                assert d <= tol, (r, d)


def _point_tri(p, T):
    from cdcore._tridist import tri_tri_distance
    d, P, _ = tri_tri_distance(T[0].copy(), T[1].copy(), T[2].copy(), p.copy(), p.copy(), p.copy())
    return d, P, None


def _mesh(kind, rng):
    if kind == "soup":
        v, f = soup(rng, n=int(rng.integers(1, 30)))
    elif kind == "sphere":
        v, f = uv_sphere(0.5, 5, 8)
    elif kind == "torus":
        v, f = torus(0.5, 0.15, 12, 6)
    else:
        v, f = grid(4, 1.0)
    return cdcore.Mesh(v, f)


def check_every_combo(ma, pa, mb, pb, tol=None, leaf_sizes=(1,)):
    ref = reference_contacts(ma, pa, mb, pb)
    tol = _tol(pa, pb) if tol is None else tol
    for leaf in leaf_sizes:
        for bv, test in COMBOS:
            res = collide(build_bvh(ma, bv, leaf), pa, build_bvh(mb, bv, leaf), pb, test=test, geometry=True)
            assert_matches_reference(res, ref, ma, pa, mb, pb, tol)
    return ref


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1),
       kinds=st.tuples(st.sampled_from(["soup", "sphere", "torus", "grid"]),
                       st.sampled_from(["soup", "sphere", "torus", "grid"])),
       offset=st.sampled_from([0.0, 1e6]))
def test_random_poses_match_reference(seed, kinds, offset):
    rng = np.random.default_rng(seed)
    ma, mb = _mesh(kinds[0], rng), _mesh(kinds[1], rng)
    shift = np.full(3, offset)
    pa = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.1 + shift)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.6 + shift)
    check_every_combo(ma, pa, mb, pb)


def test_random_cases_have_contacts():
    """The hypothesis cases above are not all misses: fixed seeds give contacts."""
    rng = np.random.default_rng(5)
    n = 0
    for _ in range(10):
        ma, mb = _mesh("torus", rng), _mesh("sphere", rng)
        pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.6)
        n += len(reference_contacts(ma, np.eye(4), mb, pb).pairs)
    assert n > 50


def _tri_mesh(*tris):
    v = np.asarray(tris, dtype=np.float64).reshape(-1, 3)
    return cdcore.Mesh(v, np.arange(len(v)).reshape(-1, 3))


def test_piercing_triangle_known_answer():
    """A vertical triangle through a horizontal one: depth 0.1 upward, segment at z = 0."""
    A = _tri_mesh([(-5, -5, 0), (5, -5, 0), (0, 5, 0)])
    B = _tri_mesh([(0, -0.5, -0.1), (0, 0.5, -0.1), (0, 0, 1.0)])
    for bv, test in COMBOS:
        res = collide(build_bvh(A, bv), None, build_bvh(B, bv), None, test=test, geometry=True)
        assert res.depths[0] == pytest.approx(0.1, abs=1e-15)
        np.testing.assert_allclose(res.normals[0], (0, 0, 1), atol=1e-15)
        h = 0.5 * (1 - 0.1 / 1.1)
        np.testing.assert_allclose(res.points[0], [(0, -h, 0), (0, h, 0)], atol=1e-15)
    # B moved along the normal by the depth no longer overlaps (beyond touching)
    moved = collide(build_bvh(A), None, build_bvh(B), make_pose(None, (0, 0, 0.1 + 1e-9)))
    assert not moved.hit
    # swapping the roles flips the normal (still from the first body to the second)
    res = collide(build_bvh(B), None, build_bvh(A), None, geometry=True)
    np.testing.assert_allclose(res.normals[0], (0, 0, -1), atol=1e-15)
    assert res.depths[0] == pytest.approx(0.1, abs=1e-15)


def test_coplanar_pairs_depth_zero_normal_of_a_and_polygon_diameter():
    A = _tri_mesh([(0, 0, 0), (2, 0, 0), (0, 2, 0)])
    B = _tri_mesh([(1, 1, 0), (-1, 1, 0), (1, -1, 0)])  # overlap: the square [0,1]^2 cut by x+y<=2 (all of it)
    res = collide(build_bvh(A), None, build_bvh(B), None, geometry=True)
    assert res.depths[0] == 0.0
    np.testing.assert_array_equal(res.normals[0], (0, 0, 1))
    # overlap polygon: A ∩ B = {x, y >= 0, x + y <= 2} ∩ {x <= 1, y <= 1, x + y >= 0} = unit square
    d = np.linalg.norm(res.points[0, 1] - res.points[0, 0])
    assert d == pytest.approx(np.sqrt(2), abs=1e-11)  # clip half-planes widened by TIE_REL
    # the first body's winding decides: a clockwise first triangle gives -z
    Bcw = _tri_mesh([(1, 1, 0), (1, -1, 0), (-1, 1, 0)])
    res2 = collide(build_bvh(Bcw), None, build_bvh(A), None, geometry=True)
    np.testing.assert_array_equal(res2.normals[0], (0, 0, -1))
    assert res2.depths[0] == 0.0
    # coplanar grids, shifted in plane, many pairs, against the reference
    m = cdcore.Mesh(*grid(5, 1.0))
    ref = check_every_combo(m, np.eye(4), m, make_pose(None, (0.3, 0.1, 0.0)))
    assert len(ref.pairs) > 10 and np.all(ref.depths == 0)


def test_touching_cubes_depth_zero():
    m = cdcore.Mesh(*cube(1.0))
    ref = check_every_combo(m, np.eye(4), m, make_pose(None, (1.0, 0.0, 0.0)))
    assert len(ref.pairs) and np.all(ref.depths == 0)
    res = collide(build_bvh(m), None, build_bvh(m), make_pose(None, (1.0, 0.0, 0.0)), geometry=True)
    assert np.all(res.depths == 0)
    # the face-to-face pairs (both triangles on the plane x = 0.5) are coplanar: A's normal, +x
    on_face = np.all(np.isclose(res.points[:, :, 0], 0.5), axis=1)
    assert on_face.all()


def test_touching_at_a_vertex_is_a_point_contact():
    A = _tri_mesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)])
    B = _tri_mesh([(0.25, 0.25, 0), (0.25, 0.25, 1), (1, 1, 1)])  # B's vertex touches A's interior
    res = collide(build_bvh(A), None, build_bvh(B), None, geometry=True)
    assert res.hit and res.depths[0] == 0.0
    np.testing.assert_allclose(res.points[0], [(0.25, 0.25, 0)] * 2, atol=1e-15)
    check_every_combo(A, np.eye(4), B, np.eye(4))


@pytest.mark.parametrize("eps", [1e-3, 1e-8, 1e-13, 0.0])
def test_slivers(eps):
    """Needle triangles (a vertex eps off the opposite edge, or on it) through a plate."""
    A = _tri_mesh([(-1, -1, 0), (1, -1, 0), (0, 1, 0)], [(-1, -1, 0.5), (1, -1, 0.5), (0, 1, 0.5)])
    B = _tri_mesh([(0, 0, -0.3), (0, eps, 0.2), (0, 0, 0.7)], [(0.1, 0, -1), (0.1, 0, 1), (0.1 + eps, 0, 0)])
    ref = check_every_combo(A, np.eye(4), B, np.eye(4))
    assert len(ref.pairs) >= 3


def test_degenerate_triangles_segment_and_point():
    v, f = cube(1.0)
    v = np.vstack([v, [[0, 0, 0.5], [0, 0, 0.5], [0.25, 0, 0.5]]])  # a point and a segment
    f = np.vstack([f, [[8, 9, 10], [8, 8, 8], [9, 10, 10]]])
    m = cdcore.Mesh(v, f)
    other = cdcore.Mesh(*grid(3, 0.8))
    ref = check_every_combo(other, make_pose(None, (0.0, 0.0, 0.5)), m, np.eye(4))
    assert any(j >= 12 for _, j in ref.pairs.tolist())


@pytest.mark.parametrize("offset", [1e3, 1e6])
def test_far_from_origin_equals_the_shifted_query(offset):
    """The same relative placement 1e6 away: depths and normals to ~1e-9, points shifted."""
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6)), cdcore.Mesh(*uv_sphere(0.5, 5, 8))
    rng = np.random.default_rng(2)
    pa = make_pose(random_rotations(1, rng)[0], (0.02, 0.0, 0.01))
    pb = make_pose(random_rotations(1, rng)[0], (0.3, 0.1, -0.1))
    near = collide(build_bvh(ma), pa, build_bvh(mb), pb, geometry=True)
    s = np.array([offset, -offset, offset])
    pa2, pb2 = pa.copy(), pb.copy()
    pa2[:3, 3] += s
    pb2[:3, 3] += s
    far = collide(build_bvh(ma), pa2, build_bvh(mb), pb2, geometry=True)
    assert np.array_equal(near.pairs, far.pairs) and len(near.pairs) > 10
    tol = 1e-15 * offset * 100
    np.testing.assert_allclose(far.depths, near.depths, atol=tol)
    np.testing.assert_allclose(far.points - s, near.points, atol=tol)
    ref = reference_contacts(ma, pa2, mb, pb2)
    assert_matches_reference(far, ref, ma, pa2, mb, pb2, _tol(pa2, pb2))


def test_geometry_off_leaves_none_and_first_gives_one_row():
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6)), cdcore.Mesh(*uv_sphere(0.5, 5, 8))
    ba, bb = build_bvh(ma), build_bvh(mb)
    pb = make_pose(None, (0.5, 0, 0))
    plain = collide(ba, None, bb, pb)
    assert plain.hit and plain.points is None and plain.normals is None and plain.depths is None
    first = collide(ba, None, bb, pb, contacts="first", geometry=True)
    assert first.points.shape == (1, 2, 3) and first.depths.shape == (1,)
    miss = collide(ba, None, bb, make_pose(None, (5, 0, 0)), geometry=True)
    assert not miss.hit and miss.points.shape == (0, 2, 3) and miss.depths.shape == (0,)


def test_scaled_aabb_pose_geometry_in_world():
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6)), cdcore.Mesh(*uv_sphere(0.5, 5, 8))
    S = np.diag([1.5, 0.7, 1.2, 1.0])
    pb = make_pose(None, (0.5, 0.1, 0)) @ S
    res = collide(build_bvh(ma, "aabb"), None, build_bvh(mb, "aabb"), pb, geometry=True)
    mb_scaled = cdcore.Mesh(mb.vertices * np.diag(S)[:3], mb.faces)
    rigid = make_pose(None, (0.5, 0.1, 0))
    ref = reference_contacts(ma, np.eye(4), mb_scaled, rigid)
    assert len(ref.pairs)
    assert_matches_reference(res, ref, ma, np.eye(4), mb_scaled, rigid, 1e-8)


def test_summary_deepest_and_count():
    ma, mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6)), cdcore.Mesh(*uv_sphere(0.5, 5, 8))
    res = collide(build_bvh(ma), None, build_bvh(mb), make_pose(None, (0.5, 0, 0)), geometry=True)
    s = summarize(res)
    assert s.count == len(res.pairs) > 0
    assert s.depth == res.depths.max() and s.pair == tuple(res.pairs[s.deepest])
    np.testing.assert_allclose(s.point, res.points[s.deepest].mean(axis=0))
    empty = summarize(collide(build_bvh(ma), None, build_bvh(mb), make_pose(None, (5, 0, 0)), geometry=True))
    assert empty.count == 0 and empty.deepest == -1 and empty.pair is None
    with pytest.raises(ValueError, match="geometry=True"):
        summarize(collide(build_bvh(ma), None, build_bvh(mb), None))


def test_geometry_arrays_rejects_out_of_range_pairs():
    m = cdcore.Mesh(*cube(1.0))
    with pytest.raises(IndexError):
        geometry_arrays(m, np.eye(4), m, np.eye(4), [(0, 12)])
    with pytest.raises(IndexError):
        geometry_arrays(m, np.eye(4), m, np.eye(4), [(-1, 0)])


@pytest.mark.parametrize("seed", range(6))
def test_prefiltered_reference_pairs_equal_all_pairs(seed, monkeypatch):
    """Large meshes: the box prefilter of reference_pairs drops no intersecting pair."""
    import sys
    from cdcore._tritri_ref import all_pairs_overlap
    from cdcore.transforms import relative_transform, transform_points
    rng = np.random.default_rng(seed)
    ma, mb = _mesh("torus", rng), _mesh(["soup", "sphere", "grid"][seed % 3], rng)
    pb = make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 0.5)
    R, t = relative_transform(np.eye(4), pb)
    full = all_pairs_overlap(ma.vertices[ma.faces], transform_points(R, t, mb.vertices)[mb.faces])
    monkeypatch.setattr(sys.modules["cdcore.contacts"], "PREFILTER_PAIRS", 0)
    from cdcore.contacts import reference_pairs
    assert np.array_equal(reference_pairs(ma, np.eye(4), mb, pb), full)
    assert len(full) > 0  # these seeds all touch (checked: 10 to 56 pairs)
