"""Where the kernels switch on the bounding-volume kind: fitting a node (build), the
box and k-DOP node tests the traversal core's loop calls (``box_separation``,
``kdop_separation``; the loop itself branches on the test, see ``_core.traverse``) and the
node-pair distance bound (the distance search). Each branch calls the volume type's own
kernels (``bv.aabb``, ``bv.obb``,
``bv.sphere``, ``bv.kdop``, ``bv.bounds``, ``_overlap``); a new type adds its branch here
(see the README: "Adding a bounding-volume type").
"""
import numpy as np
from numba import njit

from .._kdop_traverse import realigned_interval
from .._layout import (AXIS_SPHERE, C0, E0, KIND_AABB, KIND_OBB, KIND_OBB_SPHERE, KIND_SPHERE, R0, S0, SIZE, SR)
from .._overlap import ABS_EPS, sat_program
from .._pairjit import pair_njit
from . import aabb, obb, sphere
from .bounds import (_add3, _matmul, _matvec, _row3, _row9, _sphere_gap, _sub3, _tmatmul, _tmatvec, box_bound,
                     kdop_bound)


# ---- build: fit a node's volumes to its triangles ------------------------------------------
@njit(cache=True)
def fit_node(kind, nodes_f, node, verts, faces, prim_order, start, count, pad,
             tri_m1, tri_m2, pts_m1, pts_m2, tri_area, axes_buf, work):
    """Fit every bounding volume of ``kind`` to the node's triangles."""
    if kind == KIND_AABB:
        aabb.set_identity_axes(nodes_f, node)
        aabb.fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad)
        return
    if count == 1:
        obb.triangle_axes(axes_buf, verts, faces, prim_order[start])
    else:
        obb.covariance_axes(axes_buf, tri_m1, tri_m2, pts_m1, pts_m2, tri_area,
                            prim_order, start, count, work)
    for r in range(3):
        for c in range(3):
            nodes_f[node, R0 + 3 * r + c] = axes_buf[r, c]
    obb.fit_prims_axes(nodes_f, node, verts, faces, prim_order, start, count, pad)
    if kind == KIND_OBB:
        sphere.from_box(nodes_f, node)
        return
    sphere.fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad)
    if kind == KIND_SPHERE:
        nodes_f[node, SIZE] = sphere.sphere_size(nodes_f, node)



# ---- traversal: the node-pair overlap tests ----------------------------------------------------
# Called once per node pair, inlined into ``_core.traverse``, which is compiled without
# reference counting (``_pairjit``): inlined there, their array arguments cost nothing and no
# call marshals a dozen array structs. They allocate nothing (scratch comes from the caller).
@pair_njit(inline='always')
def box_separation(program, axes, aabb, nfA, a, nfB, b, R, t, T, C, AC, ea, eb):
    """First separating axis id of two boxes (``_overlap.sat_program``), or -1. B's box is moved
    into A's model frame by (R, t). AABBs: every pair shares the relative rotation, passed in
    ``C``/``AC`` (van den Bergen section 3); oriented boxes: C = Ra^T R Rb, built row by row from
    A's axes, and T = Ra^T d. (Building rows lazily to exit after one face test was measured
    slower: the extra data-dependent branch costs more than the arithmetic it saves.)
    ``T`` (3,), ``C``, ``AC`` (3, 3), ``ea``, ``eb`` (3,): scratch (AABB: C, AC hold R, |R| + eps)."""
    cx = nfB[b, C0]
    cy = nfB[b, C0 + 1]
    cz = nfB[b, C0 + 2]
    d0 = R[0, 0] * cx + R[0, 1] * cy + R[0, 2] * cz + t[0] - nfA[a, C0]
    d1 = R[1, 0] * cx + R[1, 1] * cy + R[1, 2] * cz + t[1] - nfA[a, C0 + 1]
    d2 = R[2, 0] * cx + R[2, 1] * cy + R[2, 2] * cz + t[2] - nfA[a, C0 + 2]
    for k in range(3):
        ea[k] = nfA[a, E0 + k]
        eb[k] = nfB[b, E0 + k]
    if aabb:
        T[0] = d0
        T[1] = d1
        T[2] = d2
        return sat_program(program, axes, T, C, AC, ea, eb)
    for r in range(3):
        ux = nfA[a, R0 + r]
        uy = nfA[a, R0 + 3 + r]
        uz = nfA[a, R0 + 6 + r]
        # row r of Ra^T R, then of C
        n0 = ux * R[0, 0] + uy * R[1, 0] + uz * R[2, 0]
        n1 = ux * R[0, 1] + uy * R[1, 1] + uz * R[2, 1]
        n2 = ux * R[0, 2] + uy * R[1, 2] + uz * R[2, 2]
        T[r] = ux * d0 + uy * d1 + uz * d2
        for c in range(3):
            v = n0 * nfB[b, R0 + c] + n1 * nfB[b, R0 + 3 + c] + n2 * nfB[b, R0 + 6 + c]
            C[r, c] = v
            AC[r, c] = abs(v) + ABS_EPS
    return sat_program(program, axes, T, C, AC, ea, eb)


@pair_njit(inline='always')
def kdop_separation(method, a, b, K):
    """k-DOPs: A's slabs against B's node realigned to A's directions (Fünzig section 4): the
    first separating slab id, or -1. ``K``: the query's ``KdopQuery`` bundle."""
    slabA = K.slabA
    k2 = slabA.shape[1] // 2
    for i in range(k2):
        lo, hi = realigned_interval(method, i, b, K.slabB, K.tabB, K.outB, K.qf, K.qi)
        if hi < slabA[a, i] or lo > slabA[a, k2 + i]:
            return i
    return -1


# ---- distance: node-pair lower bounds --------------------------------------------------------
@pair_njit
def pair_bound(kind, a, b, Rt, tt, nfA, nfB, thr):
    """Lower bound on the distance of node a (tree A) and node b (tree B, moved into A's
    frame by the rotation ``Rt`` (9-tuple, row-major) and translation ``tt``). Returns
    (bound, id of the axis or sphere test that gave it); stops early once the bound reaches
    ``thr``. (The search uses ``child_bounds``: the same bounds with the transform shared
    by two sibling pairs.) Not for k-DOP kinds (``kdop_bound``)."""
    lb = -np.inf
    axis = -1
    if kind == KIND_SPHERE or kind == KIND_OBB_SPHERE:
        pb = _add3(_matvec(Rt, _row3(nfB, b, S0)), tt)
        lb = _sphere_gap(_row3(nfA, a, S0), nfA[a, SR], pb, nfB[b, SR])
        axis = AXIS_SPHERE
        if kind == KIND_SPHERE or lb >= thr:
            return lb, axis
    d = _sub3(_add3(_matvec(Rt, _row3(nfB, b, C0)), tt), _row3(nfA, a, C0))
    ea = _row3(nfA, a, E0)
    eb = _row3(nfB, b, E0)
    if kind == KIND_AABB:
        return box_bound(d, Rt, ea, eb, lb, axis, thr)
    UA = _row9(nfA, a, R0)  # A's box axes are its columns
    C = _tmatmul(UA, _matmul(Rt, _row9(nfB, b, R0)))
    return box_bound(_tmatvec(UA, d), C, ea, eb, lb, axis, thr)


@pair_njit
def child_bounds(kind, split_a, a1, a2, b1, b2, Rt, tt, nfA, nfB, thr):
    """Bounds of two sibling pairs: (a1, b1), (a2, b2) with b1 == b2 when ``split_a`` (A's
    node was split), else a1 == a2. The fixed node's share of the transform is computed
    once: split A: B's box axes and centre in A's frame (M = R Rb, R cb + t); split B:
    N = Ra^T R and Ra^T (t - ca). Returns (l1, x1, l2, x2) as ``pair_bound``."""
    l1 = -np.inf
    x1 = -1
    l2 = -np.inf
    x2 = -1
    sph = kind == KIND_SPHERE or kind == KIND_OBB_SPHERE
    if split_a:
        b = b1
        if sph:
            pb = _add3(_matvec(Rt, _row3(nfB, b, S0)), tt)
            rb = nfB[b, SR]
            l1 = _sphere_gap(_row3(nfA, a1, S0), nfA[a1, SR], pb, rb)
            l2 = _sphere_gap(_row3(nfA, a2, S0), nfA[a2, SR], pb, rb)
            x1 = AXIS_SPHERE
            x2 = AXIS_SPHERE
            if kind == KIND_SPHERE:
                return l1, x1, l2, x2
        p = _add3(_matvec(Rt, _row3(nfB, b, C0)), tt)
        eb = _row3(nfB, b, E0)
        if kind == KIND_AABB:
            l1, x1 = box_bound(_sub3(p, _row3(nfA, a1, C0)), Rt, _row3(nfA, a1, E0), eb, l1, x1, thr)
            l2, x2 = box_bound(_sub3(p, _row3(nfA, a2, C0)), Rt, _row3(nfA, a2, E0), eb, l2, x2, thr)
            return l1, x1, l2, x2
        M = _matmul(Rt, _row9(nfB, b, R0))
        if l1 < thr:
            UA = _row9(nfA, a1, R0)
            l1, x1 = box_bound(_tmatvec(UA, _sub3(p, _row3(nfA, a1, C0))), _tmatmul(UA, M),
                               _row3(nfA, a1, E0), eb, l1, x1, thr)
        if l2 < thr:
            UA = _row9(nfA, a2, R0)
            l2, x2 = box_bound(_tmatvec(UA, _sub3(p, _row3(nfA, a2, C0))), _tmatmul(UA, M),
                               _row3(nfA, a2, E0), eb, l2, x2, thr)
        return l1, x1, l2, x2
    a = a1
    if sph:
        ca = _row3(nfA, a, S0)
        ra = nfA[a, SR]
        l1 = _sphere_gap(ca, ra, _add3(_matvec(Rt, _row3(nfB, b1, S0)), tt), nfB[b1, SR])
        l2 = _sphere_gap(ca, ra, _add3(_matvec(Rt, _row3(nfB, b2, S0)), tt), nfB[b2, SR])
        x1 = AXIS_SPHERE
        x2 = AXIS_SPHERE
        if kind == KIND_SPHERE:
            return l1, x1, l2, x2
    ca = _row3(nfA, a, C0)
    ea = _row3(nfA, a, E0)
    if kind == KIND_AABB:
        l1, x1 = box_bound(_sub3(_add3(_matvec(Rt, _row3(nfB, b1, C0)), tt), ca), Rt, ea,
                           _row3(nfB, b1, E0), l1, x1, thr)
        l2, x2 = box_bound(_sub3(_add3(_matvec(Rt, _row3(nfB, b2, C0)), tt), ca), Rt, ea,
                           _row3(nfB, b2, E0), l2, x2, thr)
        return l1, x1, l2, x2
    # N = Ra^T R, q = Ra^T (t - ca): then C = N Rb, T = N cb + q
    UA = _row9(nfA, a, R0)
    N = _tmatmul(UA, Rt)
    q = _tmatvec(UA, _sub3(tt, ca))
    if l1 < thr:
        l1, x1 = box_bound(_add3(_matvec(N, _row3(nfB, b1, C0)), q), _matmul(N, _row9(nfB, b1, R0)), ea,
                           _row3(nfB, b1, E0), l1, x1, thr)
    if l2 < thr:
        l2, x2 = box_bound(_add3(_matvec(N, _row3(nfB, b2, C0)), q), _matmul(N, _row9(nfB, b2, R0)), ea,
                           _row3(nfB, b2, E0), l2, x2, thr)
    return l1, x1, l2, x2


@pair_njit
def kdop_child_bounds(method, a1, a2, b1, b2, slabA, slabB, tabB, outB, qf, qi, thr):
    """``kdop_bound`` of two sibling pairs in one call."""
    l1, x1 = kdop_bound(method, a1, b1, slabA, slabB, tabB, outB, qf, qi, thr)
    l2, x2 = kdop_bound(method, a2, b2, slabA, slabB, tabB, outB, qf, qi, thr)
    return l1, x1, l2, x2


