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
from .._overlap import ABS_EPS, PROGRAM_CUSTOM, first_separating_axis, sat_scalars
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
    The fixed programs run on scalars (``sat_scalars``: nothing written and read back per node
    pair); ``PROGRAM_CUSTOM`` writes ``T`` (3,), ``C``, ``AC`` (3, 3), ``ea``, ``eb`` (3,),
    scratch (AABB: C, AC hold R, |R| + eps), and tests ``axes`` in order."""
    cx = nfB[b, C0]
    cy = nfB[b, C0 + 1]
    cz = nfB[b, C0 + 2]
    d0 = R[0, 0] * cx + R[0, 1] * cy + R[0, 2] * cz + t[0] - nfA[a, C0]
    d1 = R[1, 0] * cx + R[1, 1] * cy + R[1, 2] * cz + t[1] - nfA[a, C0 + 1]
    d2 = R[2, 0] * cx + R[2, 1] * cy + R[2, 2] * cz + t[2] - nfA[a, C0 + 2]
    a0 = nfA[a, E0]
    a1 = nfA[a, E0 + 1]
    a2 = nfA[a, E0 + 2]
    b0 = nfB[b, E0]
    b1 = nfB[b, E0 + 1]
    b2 = nfB[b, E0 + 2]
    if program == PROGRAM_CUSTOM:
        ea[0] = a0
        ea[1] = a1
        ea[2] = a2
        eb[0] = b0
        eb[1] = b1
        eb[2] = b2
        if not aabb:
            _obb_frame(nfA, a, nfB, b, R, d0, d1, d2, T, C, AC)
        else:
            T[0] = d0
            T[1] = d1
            T[2] = d2
        return first_separating_axis(axes, T, C, AC, ea, eb)
    if aabb:
        return sat_scalars(program, d0, d1, d2, C[0, 0], C[0, 1], C[0, 2], C[1, 0], C[1, 1], C[1, 2],
                           C[2, 0], C[2, 1], C[2, 2], AC[0, 0], AC[0, 1], AC[0, 2], AC[1, 0], AC[1, 1], AC[1, 2],
                           AC[2, 0], AC[2, 1], AC[2, 2], a0, a1, a2, b0, b1, b2)
    # rows r of N = Ra^T R (A's axes are the columns of its R0 block), then C = N Rb and
    # T = Ra^T d, all on scalars
    u00, u10, u20 = nfA[a, R0], nfA[a, R0 + 3], nfA[a, R0 + 6]
    u01, u11, u21 = nfA[a, R0 + 1], nfA[a, R0 + 4], nfA[a, R0 + 7]
    u02, u12, u22 = nfA[a, R0 + 2], nfA[a, R0 + 5], nfA[a, R0 + 8]
    r00, r01, r02 = R[0, 0], R[0, 1], R[0, 2]
    r10, r11, r12 = R[1, 0], R[1, 1], R[1, 2]
    r20, r21, r22 = R[2, 0], R[2, 1], R[2, 2]
    v00, v01, v02 = nfB[b, R0], nfB[b, R0 + 1], nfB[b, R0 + 2]
    v10, v11, v12 = nfB[b, R0 + 3], nfB[b, R0 + 4], nfB[b, R0 + 5]
    v20, v21, v22 = nfB[b, R0 + 6], nfB[b, R0 + 7], nfB[b, R0 + 8]
    # row 0 (A's axis 0: column 0 of its block)
    n0 = u00 * r00 + u10 * r10 + u20 * r20
    n1 = u00 * r01 + u10 * r11 + u20 * r21
    n2 = u00 * r02 + u10 * r12 + u20 * r22
    t0 = u00 * d0 + u10 * d1 + u20 * d2
    c00 = n0 * v00 + n1 * v10 + n2 * v20
    c01 = n0 * v01 + n1 * v11 + n2 * v21
    c02 = n0 * v02 + n1 * v12 + n2 * v22
    n0 = u01 * r00 + u11 * r10 + u21 * r20
    n1 = u01 * r01 + u11 * r11 + u21 * r21
    n2 = u01 * r02 + u11 * r12 + u21 * r22
    t1 = u01 * d0 + u11 * d1 + u21 * d2
    c10 = n0 * v00 + n1 * v10 + n2 * v20
    c11 = n0 * v01 + n1 * v11 + n2 * v21
    c12 = n0 * v02 + n1 * v12 + n2 * v22
    n0 = u02 * r00 + u12 * r10 + u22 * r20
    n1 = u02 * r01 + u12 * r11 + u22 * r21
    n2 = u02 * r02 + u12 * r12 + u22 * r22
    t2 = u02 * d0 + u12 * d1 + u22 * d2
    c20 = n0 * v00 + n1 * v10 + n2 * v20
    c21 = n0 * v01 + n1 * v11 + n2 * v21
    c22 = n0 * v02 + n1 * v12 + n2 * v22
    return sat_scalars(program, t0, t1, t2, c00, c01, c02, c10, c11, c12, c20, c21, c22,
                       abs(c00) + ABS_EPS, abs(c01) + ABS_EPS, abs(c02) + ABS_EPS,
                       abs(c10) + ABS_EPS, abs(c11) + ABS_EPS, abs(c12) + ABS_EPS,
                       abs(c20) + ABS_EPS, abs(c21) + ABS_EPS, abs(c22) + ABS_EPS, a0, a1, a2, b0, b1, b2)


@njit(cache=True, inline='always')
def _obb_frame(nfA, a, nfB, b, R, d0, d1, d2, T, C, AC):
    """T = Ra^T d, C = Ra^T R Rb and AC = |C| + eps into the scratch arrays (the custom axis
    programs' path; the same arithmetic, in the same order, as ``box_separation``'s scalars)."""
    for r in range(3):
        ux = nfA[a, R0 + r]
        uy = nfA[a, R0 + 3 + r]
        uz = nfA[a, R0 + 6 + r]
        n0 = ux * R[0, 0] + uy * R[1, 0] + uz * R[2, 0]
        n1 = ux * R[0, 1] + uy * R[1, 1] + uz * R[2, 1]
        n2 = ux * R[0, 2] + uy * R[1, 2] + uz * R[2, 2]
        T[r] = ux * d0 + uy * d1 + uz * d2
        for c in range(3):
            v = n0 * nfB[b, R0 + c] + n1 * nfB[b, R0 + 3 + c] + n2 * nfB[b, R0 + 6 + c]
            C[r, c] = v
            AC[r, c] = abs(v) + ABS_EPS


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


