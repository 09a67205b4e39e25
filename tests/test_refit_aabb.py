"""AABB refit into compact rows (``_build.refit_aabb``, issue 15) against a plain-numpy refit.

The reference below is the paper's refit spelled out with numpy and a Python loop: every leaf
the smallest box of its triangles' corners grown by the pad, every parent the box of its
children's boxes, the descend volume from the half-extents; the pad from the vertices'
bounds. Its arithmetic is the one ``bv.aabb`` documents, so the kernel's boxes must equal it
exactly; a second, formula-free check asserts that every node's box holds its triangles.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cdcore
from cdcore import _layout as L
from cdcore.bvh import PAD_REL
from cdcore.mesh import Mesh


def reference_refit(nodes_i, prim_order, faces, vertices):
    """(n, 7) compact rows (centre, half-extents, SIZE) of an AABB tree refitted to ``vertices``."""
    v = np.asarray(vertices, dtype=np.float64)
    lo, hi = v.min(axis=0), v.max(axis=0)
    pad = PAD_REL * (max(np.abs(lo).max(), np.abs(hi).max()) + (hi - lo).max())
    n = len(nodes_i)
    box_lo = np.empty((n, 3))
    box_hi = np.empty((n, 3))
    rows = np.empty((n, 7))
    for node in range(n - 1, -1, -1):  # children after parents
        left, right, start, count = (int(x) for x in nodes_i[node])
        if left < 0:
            corners = v[faces[prim_order[start:start + count]].ravel()]
            a, b = corners.min(axis=0), corners.max(axis=0)
            c, e = 0.5 * (a + b), 0.5 * (b - a) + pad
        else:  # the children's boxes as stored (centre -/+ half-extent), merged
            a = np.minimum(rows[left, :3] - rows[left, 3:6], rows[right, :3] - rows[right, 3:6])
            b = np.maximum(rows[left, :3] + rows[left, 3:6], rows[right, :3] + rows[right, 3:6])
            c, e = 0.5 * (a + b), 0.5 * (b - a)
        box_lo[node], box_hi[node] = a, b
        m = 1e-3 * e.max()
        rows[node, :3], rows[node, 3:6] = c, e
        rows[node, 6] = 8.0 * (e[0] + m) * (e[1] + m) * (e[2] + m)
    return rows


def compact_of(bvh):
    """The public rows' centre, half-extents and SIZE columns."""
    nf = bvh.nodes_f
    return np.concatenate([nf[:, L.C0:L.E0 + 3], nf[:, L.SIZE:L.SIZE + 1]], axis=1)


def boxes_hold_triangles(bvh, vertices):
    """Every node's box holds every corner of its triangles (no formula shared with the kernel)."""
    c, e = bvh.box_centers(), bvh.box_extents()
    ni, po, f = bvh.nodes_i, bvh.prim_order, bvh.mesh.faces
    for node in range(bvh.n_nodes):
        s, k = ni[node, L.START], ni[node, L.COUNT]
        p = vertices[f[po[s:s + k]].ravel()]
        if not np.all(np.abs(p - c[node]) <= e[node] * (1 + 1e-12) + 1e-300):
            return False
    return True


@st.composite
def meshes_and_deformations(draw):
    n_v = draw(st.integers(3, 40))
    n_f = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n_v, 3)) * draw(st.sampled_from([1e-3, 1.0, 1e4]))
    faces = rng.integers(0, n_v, size=(n_f, 3))
    # degenerate triangles: repeated corners (segments, points) and collinear corners
    k = draw(st.integers(0, n_f))
    faces[:k // 3, 1] = faces[:k // 3, 0]
    faces[k // 3:2 * k // 3, 2] = faces[k // 3:2 * k // 3, 0] = faces[k // 3:2 * k // 3, 1]
    kind = draw(st.sampled_from(["noise", "collapse", "flatten", "shift", "collinear"]))
    w = v + rng.normal(scale=0.3, size=v.shape) * np.abs(v).max()
    if kind == "collapse":  # some vertices onto one point
        idx = rng.integers(0, n_v, size=n_v // 2 + 1)
        w[idx] = w[idx[0]]
    elif kind == "flatten":  # a plane: zero extents along z
        w[:, 2] = 0.0
    elif kind == "shift":  # far from the origin: the pad grows with the coordinates
        w = w + rng.normal(size=3) * 1e5
    elif kind == "collinear":  # every vertex on one line
        w = np.outer(rng.normal(size=n_v), rng.normal(size=3))
    leaf = draw(st.integers(1, 4))
    split = draw(st.sampled_from(["median", "mean", "sah", "volume"]))
    return v, faces, w, leaf, split


@settings(max_examples=150, deadline=None)
@given(meshes_and_deformations())
def test_compact_refit_equals_numpy_refit(case):
    v, faces, w, leaf, split = case
    bvh = cdcore.build_bvh(Mesh(v, faces), "aabb", leaf_size=leaf, split=split)
    assert bvh._nf.shape == (bvh.n_nodes, L.AABB_FCOLS)  # the pack holds compact rows
    for target in (w, v):  # deform, then back
        bvh.refit(target)
        want = reference_refit(bvh.nodes_i, bvh.prim_order, faces, target)
        assert np.array_equal(bvh._nf, want)
        assert np.array_equal(compact_of(bvh), want)
        # the rest of the public rows: identity axes, no sphere
        nf = bvh.nodes_f
        assert np.array_equal(nf[:, L.R0:L.R0 + 9], np.tile(np.eye(3).ravel(), (bvh.n_nodes, 1)))
        assert not nf[:, L.S0:L.SR + 1].any()
        assert boxes_hold_triangles(bvh, target)
        assert np.array_equal(bvh.mesh.vertices, target) and not bvh.mesh.vertices.flags.writeable
        assert np.array_equal(bvh._v, target)
        assert bvh.check() == []


def test_the_comparison_fails_on_a_wrong_box():
    """The equality above is not vacuous: a box off by one ulp, a leaf refitted without its pad
    or a parent not enclosing its child fails it."""
    rng = np.random.default_rng(3)
    v = rng.normal(size=(30, 3))
    faces = rng.integers(0, 30, size=(40, 3))
    bvh = cdcore.build_bvh(Mesh(v, faces), "aabb", leaf_size=2)
    w = v + 0.1 * rng.normal(size=v.shape)
    bvh.refit(w)
    want = reference_refit(bvh.nodes_i, bvh.prim_order, faces, w)
    assert np.array_equal(bvh._nf, want)
    leaf = int(np.flatnonzero(bvh.is_leaf)[0])
    for col, delta in ((L.C0, np.spacing(want[leaf, 0])), (L.E0 + 1, -PAD_REL), (L.AABB_SIZE, 1e-9)):
        bad = bvh._nf.copy()
        bad[leaf, col] += delta
        assert not np.array_equal(bad, want)
    bad = bvh._nf.copy()
    bad[0, L.E0] *= 0.5  # the root no longer holds its triangles
    bvh._nf[:] = bad
    bvh._full_f = None
    assert not boxes_hold_triangles(bvh, w)


@pytest.mark.parametrize("bad, match", [
    (np.nan, "NaN or infinite"), (np.inf, "NaN or infinite"), (-np.inf, "NaN or infinite"),
    (1e70, "exceed"),
])
def test_bad_vertices_leave_the_tree_untouched(bad, match):
    mesh = cdcore.shapes.torus(1.0, 0.3, 12, 6)
    bvh = cdcore.build_bvh(mesh, "aabb")
    bvh.refit(mesh.vertices * 1.1)
    rows, mesh_before, verts = bvh._nf.copy(), bvh.mesh, bvh._v.copy()
    w = mesh.vertices.copy()
    w[len(w) // 2, 1] = bad
    with pytest.raises(ValueError, match=match):
        bvh.refit(w)
    assert np.array_equal(bvh._nf, rows) and bvh.mesh is mesh_before and np.array_equal(bvh._v, verts)


def test_tiny_coordinates_are_refused():
    mesh = cdcore.shapes.torus(1.0, 0.3, 12, 6)
    bvh = cdcore.build_bvh(mesh, "aabb")
    with pytest.raises(ValueError, match="below"):
        bvh.refit(mesh.vertices * 1e-80)


def test_other_inputs_are_converted_or_refused():
    mesh = cdcore.shapes.torus(1.0, 0.3, 12, 6)
    bvh = cdcore.build_bvh(mesh, "aabb")
    w = mesh.vertices * 0.9
    for given_v in (w.tolist(), w.astype(np.float32), np.asfortranarray(w), mesh.with_vertices(w).vertices):
        bvh.refit(given_v)
        want = reference_refit(bvh.nodes_i, bvh.prim_order, mesh.faces, np.asarray(given_v, dtype=np.float64))
        assert np.array_equal(bvh._nf, want)
    with pytest.raises(ValueError, match="same topology"):
        bvh.refit(w[:-1])
    with pytest.raises(TypeError):
        bvh.refit(w.astype(complex))
    src = w.copy()
    bvh.refit(src)
    src[:] = 0.0  # the mesh holds its own copy
    assert np.array_equal(bvh.mesh.vertices, w)


def test_scaled_copy_follows_a_refit():
    """``BVH.scaled`` caches the last scale's copy: a refit must not leave the old boxes there."""
    mesh = cdcore.shapes.torus(1.0, 0.3, 12, 6)
    bvh = cdcore.build_bvh(mesh, "aabb")
    s = np.array([2.0, 1.0, 0.5])
    before = bvh.scaled(s).box_centers().copy()
    bvh.refit(mesh.vertices + [3.0, 0.0, 0.0])
    after = bvh.scaled(s)
    assert not np.array_equal(after.box_centers(), before)
    assert np.array_equal(after.box_centers(), bvh.box_centers() * s)
    assert after._nf.shape[1] == L.AABB_FCOLS and after.check() == []


def test_queries_after_a_refit_match_a_fresh_tree():
    """Collision and distance read the compact rows: after a refit they answer as a tree built
    on the deformed mesh does (the answers, not the counters: the topologies differ)."""
    rng = np.random.default_rng(7)
    mesh = cdcore.shapes.torus(1.0, 0.3, 16, 8)
    other = cdcore.build_bvh(cdcore.shapes.icosphere(0.5, 2), "aabb")
    bvh = cdcore.build_bvh(mesh, "aabb")
    for _ in range(5):
        w = mesh.vertices + 0.05 * rng.normal(size=mesh.vertices.shape)
        bvh.refit(w)
        fresh = cdcore.build_bvh(Mesh(w, mesh.faces), "aabb")
        for x in (0.6, 1.0, 1.4, 2.0):
            pose = cdcore.transforms.make_pose(None, [x, 0.0, 0.0])
            got = cdcore.collide(bvh, None, other, pose)
            want = cdcore.collide(fresh, None, other, pose)
            assert np.array_equal(got.pairs, want.pairs)
            d1 = cdcore.distance(bvh, None, other, pose).distance
            d2 = cdcore.distance(fresh, None, other, pose).distance
            assert d1 == pytest.approx(d2, abs=1e-12)
