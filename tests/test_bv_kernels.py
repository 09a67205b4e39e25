"""Bounding-volume kernels and hierarchy invariants.

* ``_overlap.sat_program`` (unrolled) against ``first_separating_axis`` (generic) and the
  exact plain-numpy reference ``box_separation_reference``;
* ``_linalg.sym_eig3`` against ``numpy.linalg.eigh``;
* structural and geometric invariants of built and refitted hierarchies, the split rule of
  the top-down build, and that ``BVH.check`` really detects broken trees.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import BV_TYPES, BVH, Mesh, build_bvh, collide
from cdcore import _layout as L
from cdcore._linalg import sym_eig3
from cdcore._overlap import (ABS_EPS, PROGRAM_CUSTOM, PROGRAM_SAT6, PROGRAM_SAT15, PROGRAM_SPHERE5, SAT6_AXES,
                             SAT15_AXES, SPHERE5_AXES, axis_separates, box_separation_reference,
                             first_separating_axis, sat_program)
from cdcore._tritri_ref import all_pairs_overlap
from cdcore.transforms import make_pose, random_rotations, rotation_about

from meshgen import cube, grid, soup, torus, uv_sphere

PROGRAMS = {"sat15": (PROGRAM_SAT15, SAT15_AXES), "sat6": (PROGRAM_SAT6, SAT6_AXES),
            "sphere5": (PROGRAM_SPHERE5, SPHERE5_AXES)}


# ======================================================================================
# separating-axis kernels
# ======================================================================================
def _radius_extents(k, ea, eb):
    """The extents that multiply |C| (and so ABS_EPS) in the radius of axis ``k``."""
    if k < 3:
        return float(eb.sum())
    if k < 6:
        return float(ea.sum())
    i, j = divmod(k - 6, 3)
    return float(ea[(i + 1) % 3] + ea[(i + 2) % 3] + eb[(j + 1) % 3] + eb[(j + 2) % 3])


def _axis_norms(Ra, Rb):
    n = np.ones(15)
    for i in range(3):
        for j in range(3):
            n[6 + 3 * i + j] = np.linalg.norm(np.cross(Ra[:, i], Rb[:, j]))
    return n


def _kernel_inputs(ca, Ra, cb, Rb):
    """What ``_traverse`` feeds the kernels: B's box in A's box frame."""
    C = Ra.T @ Rb
    AC = np.abs(C) + ABS_EPS
    T = Ra.T @ (cb - ca)
    return np.ascontiguousarray(T), np.ascontiguousarray(C), np.ascontiguousarray(AC)


def _relative_rotation(relation, Ra, rng):
    if relation == "random":
        return random_rotations(1, rng)[0]
    if relation == "same":
        return Ra.copy()
    if relation == "shared_axis":  # one axis in common: three degenerate cross products
        k = int(rng.integers(3))
        return Ra @ rotation_about(np.eye(3)[k], rng.uniform(0, 2 * np.pi))
    if relation == "nearly_same":
        return Ra @ rotation_about(rng.normal(size=3), 10.0 ** rng.uniform(-8, -2))
    if relation == "permuted":  # a signed permutation with det +1
        P = np.eye(3)[rng.permutation(3)]
        s = rng.choice([-1.0, 1.0], size=3)
        if np.linalg.det(P * s) < 0:
            s[2] = -s[2]
        return Ra @ (P * s)
    raise ValueError(relation)


RELATIONS = ["random", "same", "shared_axis", "nearly_same", "permuted"]


def _boxes(rng, relation, ea, eb, dist_factor, axis_aligned_a=False):
    Ra = np.eye(3) if axis_aligned_a else random_rotations(1, rng)[0]
    Rb = _relative_rotation(relation, Ra, rng)
    ca = rng.uniform(-1.0, 1.0, 3)
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    reach = np.linalg.norm(ea) + np.linalg.norm(eb) + 1e-3
    cb = ca + direction * reach * dist_factor
    return ca, Ra, np.asarray(ea, float), cb, Rb, np.asarray(eb, float)


def check_sat_case(ca, Ra, ea, cb, Rb, eb):
    """All kernel/reference properties for one box pair; returns {program: axis id}."""
    T, C, AC = _kernel_inputs(ca, Ra, cb, Rb)
    gaps = box_separation_reference(ca, Ra, ea, cb, Rb, eb)
    norms = _axis_norms(Ra, Rb)
    disjoint = np.nanmax(gaps) > -1e-9  # some exact axis separates (up to rounding)
    # completeness threshold per axis: the ABS_EPS inflation of the radius, normalised
    thr = np.array([max(1e-5, 2.0 * ABS_EPS * _radius_extents(k, ea, eb) / max(norms[k], 1e-300))
                    for k in range(15)])
    # every single axis: conservative and (beyond the epsilon) complete
    for k in range(15):
        sep = axis_separates(k, T, C, AC, ea, eb)
        if sep:
            if np.isnan(gaps[k]):
                assert disjoint, (k, gaps)
            else:
                assert gaps[k] > -1e-9, (k, gaps[k])
        if gaps[k] > thr[k]:
            assert sep, (k, gaps[k], thr[k])
    out = {}
    for name, (program, axes) in PROGRAMS.items():
        fast = sat_program(program, axes, T, C, AC, ea, eb)
        slow = first_separating_axis(axes, T, C, AC, ea, eb)
        custom = sat_program(PROGRAM_CUSTOM, axes, T, C, AC, ea, eb)
        assert fast == slow == custom, (name, fast, slow, custom)
        # the first axis of the list that separates, or -1
        expect = next((int(k) for k in axes if axis_separates(int(k), T, C, AC, ea, eb)), -1)
        assert fast == expect
        if fast >= 0:
            assert fast in axes
            if np.isnan(gaps[fast]):
                assert disjoint
            else:
                assert gaps[fast] > -1e-9, (name, fast, gaps[fast])
        big = [k for k in axes if gaps[k] > thr[k]]
        if big:
            assert fast >= 0, (name, big, gaps[big])
        out[name] = fast
    # a subset of the 15 axes is conservative: SAT15 separates whenever a subset does
    if out["sat6"] >= 0 or out["sphere5"] >= 0:
        assert out["sat15"] >= 0
    if out["sat15"] >= 0:
        assert disjoint
    return out


extent = st.one_of(st.just(0.0), st.floats(0.0, 2.0), st.sampled_from([1e-9, 1e-3, 2.0]))


@settings(max_examples=300)
@given(seed=st.integers(0, 2**32 - 1), relation=st.sampled_from(RELATIONS),
       ea=st.lists(extent, min_size=3, max_size=3), eb=st.lists(extent, min_size=3, max_size=3),
       dist=st.one_of(st.floats(0.0, 1.6), st.just(0.0), st.just(1.0)),
       axis_aligned=st.booleans())
def test_sat_kernels_match_reference(seed, relation, ea, eb, dist, axis_aligned):
    rng = np.random.default_rng(seed)
    check_sat_case(*_boxes(rng, relation, ea, eb, dist, axis_aligned))


def test_sat_kernels_bulk_and_both_outcomes():
    """Many fixed random cases: properties hold and every program sees both outcomes
    often, the edge axes matter, and every axis of every program fires."""
    rng = np.random.default_rng(2024)
    counts = {name: np.zeros(16, int) for name in PROGRAMS}  # index 15: -1 (overlap)
    edge_only = 0
    n = 2500
    for i in range(n):
        relation = RELATIONS[i % len(RELATIONS)] if i % 2 else "random"
        ea = rng.uniform(0, 2, 3) * (rng.random(3) > 0.1)
        eb = rng.uniform(0, 2, 3) * (rng.random(3) > 0.1)
        res = check_sat_case(*_boxes(rng, relation, ea, eb, rng.uniform(0.2, 1.2)))
        for name, k in res.items():
            counts[name][k] += 1
        edge_only += res["sat15"] >= 6
    for name, c in counts.items():
        assert 0.2 * n < c[15] < 0.8 * n, (name, c)
        for k in PROGRAMS[name][1]:
            assert c[k] > 0, (name, k, c)
    assert edge_only > 0.01 * n


def test_sat_touching_boxes_overlap():
    """Closed boxes: exactly touching faces are not separated (strict inequality)."""
    e = np.array([0.5, 0.25, 1.0])
    for d in range(3):
        cb = np.zeros(3)
        cb[d] = 2 * e[d]
        T, C, AC = _kernel_inputs(np.zeros(3), np.eye(3), cb, np.eye(3))
        for program, axes in PROGRAMS.values():
            assert sat_program(program, axes, T, C, AC, e, e) == -1
        cb[d] *= 1.0 + 1e-3
        T, C, AC = _kernel_inputs(np.zeros(3), np.eye(3), cb, np.eye(3))
        assert sat_program(PROGRAM_SAT15, SAT15_AXES, T, C, AC, e, e) == d


def test_sat_edge_edge_separation_needs_cross_axes():
    """Two cubes turned 45 degrees about z and y, A's vertical edge facing B's horizontal
    edge across a small gap along x: only the edge-edge axis a_z x b_y separates them."""
    Ra = rotation_about((0, 0, 1), np.pi / 4)
    Rb = rotation_about((0, 1, 0), np.pi / 4)
    e = np.full(3, 0.5)
    h = np.sqrt(0.5)  # half the face diagonal: how far an edge sticks out
    ca = np.zeros(3)
    for gap, separated in ((0.05, True), (1e-3, True), (-1e-3, False), (-0.05, False)):
        cb = np.array([2 * h + gap, 0.0, 0.0])
        gaps = box_separation_reference(ca, Ra, e, cb, Rb, e)
        assert np.nanmax(gaps[:6]) < 0
        assert (np.nanmax(gaps[6:]) > 0) == separated
        res = check_sat_case(ca, Ra, e, cb, Rb, e)
        assert res["sat6"] == -1
        assert (res["sat15"] == 6 + 3 * 2 + 1) == separated  # a_2 x b_1
        assert res["sat15"] in ((6 + 3 * 2 + 1) if separated else -1,)


# ======================================================================================
# symmetric 3x3 eigen-decomposition
# ======================================================================================
def check_eig(A):
    A = 0.5 * (A + A.T)
    V = np.empty((3, 3))
    sym_eig3(A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2], V)
    scale = max(np.abs(A).max(), 1e-300)
    assert np.all(np.isfinite(V))
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-12)
    assert abs(np.linalg.det(V) - 1.0) < 1e-12  # right-handed
    np.testing.assert_allclose(V[:, 2], np.cross(V[:, 0], V[:, 1]), atol=1e-12)
    lam = np.einsum("ij,ik,kj->j", V, A, V)  # Rayleigh quotients
    for j in range(3):
        r = A @ V[:, j] - lam[j] * V[:, j]
        assert np.linalg.norm(r) <= 1e-9 * scale, (j, np.linalg.norm(r) / scale)
    ref = np.linalg.eigh(A)[0][::-1]
    np.testing.assert_allclose(lam, ref, rtol=0, atol=1e-9 * scale)
    assert np.all(np.diff(lam) <= 1e-9 * scale)  # decreasing
    return V, lam


@settings(max_examples=300)
@given(seed=st.integers(0, 2**32 - 1),
       pattern=st.sampled_from(["distinct", "two_equal_top", "two_equal_bottom", "all_equal", "one_zero",
                                "near_equal", "negative"]),
       log_scale=st.floats(-30, 30))
def test_sym_eig3_random_spectra(seed, pattern, log_scale):
    rng = np.random.default_rng(seed)
    lam = rng.uniform(-1, 1, 3)
    if pattern == "two_equal_top":
        lam = np.array([2.0, 2.0, lam[0]])
    elif pattern == "two_equal_bottom":
        lam = np.array([lam[0], -2.0, -2.0])
    elif pattern == "all_equal":
        lam = np.full(3, lam[0])
    elif pattern == "one_zero":
        lam[rng.integers(3)] = 0.0
    elif pattern == "near_equal":
        lam = np.array([1.0, 1.0 + 10.0 ** rng.uniform(-14, -4), lam[0]])
    elif pattern == "negative":
        lam = -np.abs(lam)
    Q = random_rotations(1, rng)[0]
    A = (Q * lam) @ Q.T * 10.0 ** log_scale
    check_eig(A)


@settings(max_examples=150)
@given(entries=st.lists(st.floats(-1e6, 1e6, allow_subnormal=False), min_size=6, max_size=6))
def test_sym_eig3_arbitrary_symmetric(entries):
    a00, a01, a02, a11, a12, a22 = entries
    check_eig(np.array([[a00, a01, a02], [a01, a11, a12], [a02, a12, a22]]))


@pytest.mark.parametrize("A", [
    np.zeros((3, 3)),
    np.eye(3),
    np.diag([3.0, 2.0, 1.0]),
    np.diag([1.0, 2.0, 3.0]),  # unsorted diagonal
    np.diag([1.0, 3.0, 2.0]),
    np.diag([0.0, 0.0, 5.0]),
    np.diag([-1.0, 0.0, 1.0]),
    np.diag([2.0, 2.0, 1.0]),
    np.diag([1.0, 2.0, 2.0]),
    np.diag([1e-20, 1.0, 1e20]),
    np.ones((3, 3)),  # rank 1
    np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),  # zero diagonal
    np.array([[1.0, 1e-200, 0.0], [1e-200, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    np.array([[2.0, 1.0, 1.0], [1.0, 2.0, 1.0], [1.0, 1.0, 2.0]]),  # eigenvalues 4, 1, 1
], ids=lambda A: np.array2string(A.ravel(), precision=2))
def test_sym_eig3_special_matrices(A):
    check_eig(A)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_sym_eig3_extreme_scales(scale):
    Q = rotation_about((1.0, 2.0, 3.0), 0.9)
    A = (Q * [3.0, 2.0, 1.0]) @ Q.T
    V = np.empty((3, 3))
    As = A * scale
    sym_eig3(As[0, 0], As[0, 1], As[0, 2], As[1, 1], As[1, 2], As[2, 2], V)
    np.testing.assert_allclose(np.abs(V.T @ Q), np.eye(3), atol=1e-9)


def test_sym_eig3_diagonal_gives_permuted_axes():
    V, lam = check_eig(np.diag([1.0, 3.0, 2.0]))
    np.testing.assert_allclose(lam, [3.0, 2.0, 1.0])
    np.testing.assert_allclose(np.abs(V), np.eye(3)[:, [1, 2, 0]], atol=1e-15)


# ======================================================================================
# hierarchy invariants
# ======================================================================================
def _mesh(kind, rng):
    if kind == "soup":
        v, f = soup(rng, n=60)
    elif kind == "sphere":
        v, f = uv_sphere(0.7, 6, 10)
    elif kind == "torus":
        v, f = torus(1.0, 0.3, 16, 6)
    elif kind == "grid":
        v, f = grid(7, 2.0)
    elif kind == "cube":
        v, f = cube(1.0)
    return Mesh(v, f, name=kind)


MESH_KINDS = ["soup", "sphere", "torus", "grid", "cube"]


def deform(kind, v, rng):
    v = v.copy()
    lo, hi = v.min(axis=0), v.max(axis=0)
    size = float((hi - lo).max())
    if kind == "twist":
        z = (v[:, 2] - lo[2]) / max(hi[2] - lo[2], 1e-12)
        ang = 2.0 * z + 0.5 * v[:, 0]
        c, s = np.cos(ang), np.sin(ang)
        v[:, 0], v[:, 1] = c * v[:, 0] - s * v[:, 1], s * v[:, 0] + c * v[:, 1]
    elif kind == "bend":
        v[:, 2] += 0.8 * v[:, 0] ** 2 / size
        v[:, 1] += 0.3 * np.sin(3 * v[:, 0] / size)
    elif kind == "noise":
        v += rng.normal(scale=0.05 * size, size=v.shape)
    elif kind == "scale_region":
        sel = v[:, 0] > np.median(v[:, 0])
        centre = v[sel].mean(axis=0)
        v[sel] = centre + 3.0 * (v[sel] - centre)
    elif kind == "collapse":  # flatten everything onto a plane, then move far away
        v[:, 2] = 0.0
        v += (1e3, -2e3, 5e2)
    elif kind == "rigid":
        v = v @ random_rotations(1, rng)[0].T + rng.normal(size=3)
    return v


DEFORMATIONS = ["twist", "bend", "noise", "scale_region", "collapse", "rigid"]


def check_structure(b: BVH):
    """Layout invariants beyond ``BVH.check``: returns nothing, asserts."""
    ni, m = b.nodes_i, b.mesh.n_faces
    n = len(ni)
    assert ni.dtype == np.int32 and ni.shape == (n, L.N_ICOLS)
    assert b.nodes_f.dtype == np.float64 and b.nodes_f.shape == (n, L.N_FCOLS)
    assert b.prim_order.dtype == np.int32 and b.depth.shape == (n,)
    assert np.array_equal(np.sort(b.prim_order), np.arange(m))  # a permutation
    left, right, start, count = ni.T
    internal = left >= 0
    assert np.array_equal(internal, right >= 0)  # both children or none
    assert start[0] == 0 and count[0] == m and b.depth[0] == 0
    assert np.all(count >= 1)
    assert n == 2 * b.n_leaves - 1
    ids = np.flatnonzero(internal)
    assert np.all(left[ids] > ids) and np.all(right[ids] > ids)  # children after parents
    kids = np.concatenate([left[ids], right[ids]])
    assert np.array_equal(np.sort(kids), np.arange(1, n))  # every non-root node has one parent
    assert np.all(b.depth[left[ids]] == b.depth[ids] + 1)
    assert np.all(b.depth[right[ids]] == b.depth[ids] + 1)
    assert b.height == b.depth.max()
    # a parent's range is its left child's followed by its right child's
    assert np.all(start[left[ids]] == start[ids])
    assert np.all(start[right[ids]] == start[ids] + count[left[ids]])
    assert np.all(count[left[ids]] + count[right[ids]] == count[ids])
    for p in ids:
        union = np.concatenate([b.node_primitives(left[p]), b.node_primitives(right[p])])
        assert np.array_equal(np.sort(b.node_primitives(p)), np.sort(union))
    # leaves hold at most leaf_size triangles, internal nodes more
    assert np.all(count[~internal] <= b.leaf_size)
    assert np.all(count[internal] > b.leaf_size)
    if b.kind != L.KIND_SPHERE:
        assert np.all(b.box_extents() >= 0)
    if b.kind != L.KIND_AABB:
        assert np.all(b.sphere_radii() >= 0)
    assert np.all(np.isfinite(b.nodes_f))


def tight_aabbs(b: BVH, pad):
    """(n, 2, 3) exact lo/hi of every node's triangles, grown by ``pad``."""
    tri = b.mesh.triangles()
    out = np.empty((b.n_nodes, 2, 3))
    for i in range(b.n_nodes):
        pts = tri[b.node_primitives(i)].reshape(-1, 3)
        out[i, 0] = pts.min(axis=0) - pad
        out[i, 1] = pts.max(axis=0) + pad
    return out


def aabb_lohi(b: BVH):
    c, e = b.box_centers(), b.box_extents()
    return np.stack([c - e, c + e], axis=1)


def pair_set(res):
    return {tuple(p) for p in res.pairs.tolist()}


@pytest.mark.parametrize("leaf_size", [1, 2, 5])
@pytest.mark.parametrize("bv", list(BV_TYPES))
def test_build_and_refit_invariants(bv, leaf_size):
    rng = np.random.default_rng([sorted(BV_TYPES).index(bv), leaf_size])
    other = Mesh(*uv_sphere(0.35, 4, 6))
    other_tree = build_bvh(other, bv, leaf_size)
    hits = misses = 0
    for kind in MESH_KINDS:
        mesh = _mesh(kind, rng)
        b = build_bvh(mesh, bv, leaf_size)
        assert b.check() == [], (kind,)
        check_structure(b)
        topo = (b.nodes_i.copy(), b.prim_order.copy(), b.depth.copy())
        for dkind in DEFORMATIONS:
            v2 = deform(dkind, mesh.vertices, rng)
            b.refit(v2)
            label = (kind, dkind)
            # topology untouched, volumes enclose triangles and children
            assert np.array_equal(b.nodes_i, topo[0]) and np.array_equal(b.prim_order, topo[1])
            assert np.array_equal(b.depth, topo[2])
            assert b.check(children=True) == [], label
            check_structure(b)
            fresh = build_bvh(mesh.with_vertices(v2), bv, leaf_size)
            assert fresh.check() == [], label
            if bv == "aabb":
                pad = cdcore.bvh._pad(b.mesh.vertices)
                scale = float(np.abs(v2).max() + np.ptp(v2, axis=0).max())
                # exact merge: every node is the tight box of its triangles (+ pad) ...
                np.testing.assert_allclose(aabb_lohi(b), tight_aabbs(b, pad), rtol=0, atol=1e-12 * scale)
                # ... so the root equals the rebuild's root
                np.testing.assert_allclose(aabb_lohi(b)[0], aabb_lohi(fresh)[0], rtol=0, atol=1e-12 * scale)
            # queries through the refitted tree find exactly what a fresh tree finds
            centre = v2[rng.integers(len(v2))]
            pose = make_pose(random_rotations(1, rng)[0], centre + rng.normal(scale=(0.1, 0.6)[hits > misses], size=3))
            expected = all_pairs_overlap(v2[mesh.faces], (other.vertices @ pose[:3, :3].T + pose[:3, 3])[other.faces])
            for test in BV_TYPES[bv].tests:
                got = collide(b, None, other_tree, pose, test=test)
                ref = collide(fresh, None, other_tree, pose, test=test)
                assert pair_set(got) == pair_set(ref), (label, test)
                assert collide(b, None, other_tree, pose, test=test, contacts="first").hit == got.hit
            # loose oracle check (the oracle uses numpy's transform, so allow boundary cases)
            assert len(pair_set(ref) ^ {tuple(p) for p in np.asarray(expected).tolist()}) <= 2, label
            hits += bool(ref.hit)
            misses += not ref.hit
        # back to the original vertices: still valid
        b.refit(mesh.vertices)
        assert b.check(children=True) == []
    assert hits >= 3 and misses >= 3, (hits, misses)


def test_refit_keeps_aabb_tree_equal_to_build():
    """Refitting an AABB tree to its own vertices reproduces the built boxes."""
    for kind in MESH_KINDS:
        b = build_bvh(_mesh(kind, np.random.default_rng(1)), "aabb", 2)
        before = b.nodes_f.copy()
        b.refit(b.mesh.vertices)
        scale = float(np.abs(b.mesh.vertices).max() + 1)
        np.testing.assert_allclose(aabb_lohi(b), np.stack([before[:, 0:3] - before[:, 3:6],
                                                          before[:, 0:3] + before[:, 3:6]], axis=1),
                                   rtol=0, atol=1e-13 * scale)


def test_rebuild_after_refit_is_a_fresh_build():
    rng = np.random.default_rng(8)
    mesh = _mesh("torus", rng)
    for bv in BV_TYPES:
        b = build_bvh(mesh, bv, 2)
        v2 = deform("twist", mesh.vertices, rng)
        b.refit(v2)
        b.rebuild()
        fresh = build_bvh(mesh.with_vertices(v2), bv, 2)
        for name in ("nodes_f", "nodes_i", "prim_order", "depth"):
            np.testing.assert_array_equal(getattr(b, name), getattr(fresh, name))
        b2 = build_bvh(mesh, bv, 2)
        b2.rebuild(v2)
        np.testing.assert_array_equal(b2.nodes_f, fresh.nodes_f)


# --------------------------------------------------------------------------------------
# the checker detects broken trees
# --------------------------------------------------------------------------------------
def _copy(b: BVH) -> BVH:
    return BVH(b.mesh, b.bv, b.leaf_size, b.nodes_f.copy(), b.nodes_i.copy(), b.prim_order.copy(),
               b.depth.copy())


def _w(b: BVH):
    """The tree's own writable arrays (the public ones are read-only): to break it on purpose."""
    return SimpleNamespace(nodes_f=b._nf, nodes_i=b._ni, prim_order=b._po)


def test_public_arrays_are_read_only():
    b = build_bvh(_mesh("torus", np.random.default_rng(0)), "obb")
    for a in (b.nodes_f, b.nodes_i, b.prim_order):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 0


@pytest.mark.parametrize("bv", list(BV_TYPES))
def test_check_detects_broken_trees(bv):
    mesh = _mesh("torus", np.random.default_rng(0))
    good = build_bvh(mesh, bv, 2)
    assert good.check() == []
    has_box = good.kind != L.KIND_SPHERE
    has_sphere = good.kind in (L.KIND_SPHERE, L.KIND_OBB_SPHERE)  # OBB-only trees test no spheres
    internal = np.flatnonzero(~good.is_leaf)
    node = int(internal[len(internal) // 2])
    left_child = int(good.nodes_i[node, L.LEFT])

    if has_box:
        bad = _copy(good)
        _w(bad).nodes_f[node, L.E0:L.E0 + 3] *= 0.9  # shrink a box
        assert any(f"node {node}: box misses" in e for e in bad.check())
        bad = _copy(good)
        _w(bad).nodes_f[0, L.C0] += 0.1  # shift the root box
        assert any("node 0: box misses" in e for e in bad.check())
    if has_sphere:
        bad = _copy(good)
        _w(bad).nodes_f[node, L.SR] *= 0.9  # shrink a sphere
        assert any(f"node {node}: sphere misses" in e for e in bad.check())

    # scramble prim_order: still a permutation, but the volumes no longer fit their triangles
    bad = _copy(good)
    _w(bad).prim_order[:] = np.random.default_rng(1).permutation(bad.prim_order)
    errs = bad.check()
    assert any("misses" in e for e in errs), errs

    # a triangle in two leaves, another in none
    bad = _copy(good)
    _w(bad).prim_order[0] = bad.prim_order[-1]
    assert "leaves do not partition the triangles" in bad.check()

    # children before their parent
    bad = _copy(good)
    _w(bad).nodes_i[node, L.LEFT] = node
    assert "a child id is not greater than its parent's" in bad.check()
    bad = _copy(good)
    _w(bad).nodes_i[node, L.RIGHT] = bad.n_nodes + 5
    assert "a child id is out of range" in bad.check(children=False)

    if good.kind in (L.KIND_OBB, L.KIND_OBB_SPHERE):
        bad = _copy(good)
        _w(bad).nodes_f[node, L.R0:L.R0 + 9] *= 1.01
        assert "box axes are not orthonormal" in bad.check()

    # with children=True a parent must also enclose its children's volumes
    bad = _copy(good)
    if has_box:
        _w(bad).nodes_f[left_child, L.E0:L.E0 + 3] += 1.0  # a child box poking far out of its parent
    if has_sphere:
        _w(bad).nodes_f[left_child, L.SR] += 1.0
    assert bad.check(children=False) == []
    assert any(f"node {node}:" in e for e in bad.check(children=True))


@pytest.mark.parametrize("children", [False, True])
@pytest.mark.parametrize("bv", list(BV_TYPES))
def test_check_reports_out_of_range_child_without_crashing(bv, children):
    good = build_bvh(_mesh("torus", np.random.default_rng(0)), bv, 2)
    bad = _copy(good)
    node = int(np.flatnonzero(~bad.is_leaf)[len(bad.nodes_i) // 4])
    _w(bad).nodes_i[node, L.RIGHT] = bad.n_nodes + 5
    assert "a child id is out of range" in bad.check(children=children)


def test_check_tolerance_is_relative():
    """A tiny shrink below rtol is accepted; above it is reported."""
    b = build_bvh(_mesh("sphere", np.random.default_rng(0)), "aabb")
    pad = cdcore.bvh._pad(b.mesh.vertices)
    bad = _copy(b)
    _w(bad).nodes_f[0, L.E0] -= pad  # exactly the padding: still encloses
    assert bad.check() == []
    _w(bad).nodes_f[0, L.E0] -= 1e-6
    assert bad.check() != []


# --------------------------------------------------------------------------------------
# build split rule (van den Bergen 1998, section 2)
# --------------------------------------------------------------------------------------
def check_aabb_split_rule(b: BVH):
    """Every internal node splits along its box's longest axis at the box centre:
    triangles whose projected midpoint is <= the centre go left, > go right; when one
    side would be empty the node is halved instead. Returns the number of halvings."""
    assert b.bv == "aabb"
    tri = b.mesh.triangles()
    halvings = 0
    for p in np.flatnonzero(~b.is_leaf):
        axis = int(np.argmax(b.box_extents()[p]))  # first of equal maxima, like the builder
        centre = b.box_centers()[p, axis]
        proj = tri[:, :, axis]
        key = 0.5 * (proj.min(axis=1) + proj.max(axis=1))
        left = b.node_primitives(b.nodes_i[p, L.LEFT])
        right = b.node_primitives(b.nodes_i[p, L.RIGHT])
        keys = key[b.node_primitives(p)]
        if np.all(keys <= centre) or np.all(keys > centre):
            halvings += 1
            assert abs(len(left) - len(right)) <= 1, p
            assert len(left) == len(keys) // 2
        else:
            assert np.all(key[left] <= centre), p
            assert np.all(key[right] > centre), p
    return halvings


@pytest.mark.parametrize("leaf_size", [1, 2, 5])
def test_aabb_split_rule(leaf_size):
    rng = np.random.default_rng(leaf_size)
    for kind in MESH_KINDS:
        check_aabb_split_rule(build_bvh(_mesh(kind, rng), "aabb", leaf_size))
    # and on deformed / rotated meshes
    mesh = _mesh("torus", rng)
    for dkind in DEFORMATIONS:
        check_aabb_split_rule(build_bvh(mesh.with_vertices(deform(dkind, mesh.vertices, rng)), "aabb", leaf_size))


def test_aabb_split_rule_halves_when_one_side_is_empty():
    # ten copies of one triangle plus a far one: all copies share a key
    v = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0],
                  [5.0, 0.0, 0.0], [6.0, 0.0, 0.0], [5.0, 1.0, 0.0]])
    f = np.array([[0, 1, 2]] * 10 + [[3, 4, 5]], dtype=np.int32)
    b = build_bvh(Mesh(v, f), "aabb")
    assert check_aabb_split_rule(b) > 0
    assert b.check() == []
    check_structure(b)
    # all-identical triangles: a balanced tree by halving only
    b = build_bvh(Mesh(v[:3], np.zeros((16, 3), dtype=np.int32) + [0, 1, 2]), "aabb")
    assert check_aabb_split_rule(b) == b.n_nodes - b.n_leaves
    assert b.height == 4
