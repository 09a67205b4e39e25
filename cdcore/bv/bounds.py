"""Lower bounds on the distance between two bounding volumes: what the distance search
(``cdcore._distance``) evaluates per node pair, one family per volume type (boxes: AABB, OBB;
spheres; k-DOPs). ``bv.dispatch`` picks the family by kind.

Every bound is <= the distance of any point of one volume to any point of the other: for any
unit L, |x - y| >= |L.(x - y)| >= the gap of the two projection intervals on L, so every
separating-axis gap is a lower bound (see ``cdcore._distance`` for the derivations).
Compilation note: these take scalars and tuples, never arrays where avoidable, and are plain
calls (not numba-IR inlined): IR inlining of these bodies multiplied compile times.
"""
import math

import numpy as np
from numba import njit

from .._kdop_traverse import realigned_interval
from .._overlap import ABS_EPS

# an edge axis a_i x b_j shorter than this (squared) is not used for a bound
MIN_EDGE_AXIS2 = 1e-6

# bound ids (trace and histogram): 0..14 box axes as in ``_layout`` (k-DOPs: A's slab
# index, as ``bv.kdop.KDOP_AXIS_NAMES``), 15 the spheres, 16 the line through the box
# centres, 17/18 a leaf triangle pair's plane normal of A/B, 19/20 the distance to the box
# around the other box with A's/B's axes (the norm of the positive face-axis gaps)
AXIS_SPHERE = 15
AXIS_CENTRE = 16
AXIS_TRI_PLANE_A = 17
AXIS_TRI_PLANE_B = 18
AXIS_FACES_A = 19
AXIS_FACES_B = 20
N_BOUND_IDS = 21

@njit(cache=True)
def _face_gaps(g0, g1, g2, lb, axis, k, k_box):
    """Gaps along three orthonormal axes (ids k, k+1, k+2) of the projections of two
    sets: the largest, or when two or more are positive the norm of the positive ones
    (the distance between the boxes spanned by the projection intervals, which contain
    the sets; id ``k_box``)."""
    g = g0
    gk = k
    if g1 > g:
        g = g1
        gk = k + 1
    if g2 > g:
        g = g2
        gk = k + 2
    if g > 0.0:
        n_pos = (g0 > 0.0) + (g1 > 0.0) + (g2 > 0.0)
        if n_pos > 1:
            q = 0.0
            if g0 > 0.0:
                q += g0 * g0
            if g1 > 0.0:
                q += g1 * g1
            if g2 > 0.0:
                q += g2 * g2
            g = math.sqrt(q)
            gk = k_box
    if g > lb:
        return g, gk
    return lb, axis


@njit(cache=True)
def _edge_gap(num, rad, l2, lb, axis, k):
    g = abs(num) - rad
    if g > 0.0 and l2 > MIN_EDGE_AXIS2 and (lb < 0.0 or g * g > lb * lb * l2):
        v = g / math.sqrt(l2)
        if v > lb:
            return v, k
    return lb, axis


@njit(cache=True)
def box_bound(T, C, ea, eb, lb, axis, thr):
    """Largest unit-axis gap over the 15 SAT axes and the centre line, box B in A's box
    frame: translation ``T`` (3-tuple), rotation ``C`` (9-tuple, row-major, C[i, j] =
    a_i . b_j), half-extents ``ea``, ``eb``; starts from (lb, axis) and stops once
    lb >= thr. |C| + ABS_EPS bounds the projected radii."""
    t0, t1, t2 = T
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = C
    a0, a1, a2 = ea
    b0, b1, b2 = eb
    m00 = abs(c00) + ABS_EPS
    m01 = abs(c01) + ABS_EPS
    m02 = abs(c02) + ABS_EPS
    m10 = abs(c10) + ABS_EPS
    m11 = abs(c11) + ABS_EPS
    m12 = abs(c12) + ABS_EPS
    m20 = abs(c20) + ABS_EPS
    m21 = abs(c21) + ABS_EPS
    m22 = abs(c22) + ABS_EPS
    # A's face normals. The three gaps are those between A's box and the box around B's
    # box with A's axes, so the norm of their positive parts (the distance of those two
    # boxes) is a lower bound too: exact box distance when the boxes are aligned
    g0 = abs(t0) - (a0 + b0 * m00 + b1 * m01 + b2 * m02)
    g1 = abs(t1) - (a1 + b0 * m10 + b1 * m11 + b2 * m12)
    g2 = abs(t2) - (a2 + b0 * m20 + b1 * m21 + b2 * m22)
    lb, axis = _face_gaps(g0, g1, g2, lb, axis, np.int64(0), np.int64(AXIS_FACES_A))
    # B's face normals, likewise
    s0 = t0 * c00 + t1 * c10 + t2 * c20
    s1 = t0 * c01 + t1 * c11 + t2 * c21
    s2 = t0 * c02 + t1 * c12 + t2 * c22
    g0 = abs(s0) - (b0 + a0 * m00 + a1 * m10 + a2 * m20)
    g1 = abs(s1) - (b1 + a0 * m01 + a1 * m11 + a2 * m21)
    g2 = abs(s2) - (b2 + a0 * m02 + a1 * m12 + a2 * m22)
    lb, axis = _face_gaps(g0, g1, g2, lb, axis, np.int64(3), np.int64(AXIS_FACES_B))
    if lb >= thr:
        return lb, axis
    # the centre line u = T / |T|: |T| - (sum a_k |u.a_k| + sum b_k |u.b_k|), where
    # T.a_k = t_k and T.b_k = s_k were just computed (tight for distant small boxes, where
    # the fixed axes lose a factor cos(angle to the centre line))
    tt2 = t0 * t0 + t1 * t1 + t2 * t2
    if tt2 > 0.0:
        tn = math.sqrt(tt2)
        g = tn - (a0 * abs(t0) + a1 * abs(t1) + a2 * abs(t2) + b0 * abs(s0) + b1 * abs(s1)
                  + b2 * abs(s2)) / tn
        if g > lb:
            lb = g
            axis = AXIS_CENTRE
            if lb >= thr:
                return lb, axis
    # a_i x b_j: in A's box frame (0, -c2j, c1j), (c2j, 0, -c0j), (-c1j, c0j, 0)
    lb, axis = _edge_gap(t2 * c10 - t1 * c20, a1 * m20 + a2 * m10 + b1 * m02 + b2 * m01,
                         c10 * c10 + c20 * c20, lb, axis, np.int64(6))
    lb, axis = _edge_gap(t2 * c11 - t1 * c21, a1 * m21 + a2 * m11 + b0 * m02 + b2 * m00,
                         c11 * c11 + c21 * c21, lb, axis, np.int64(7))
    lb, axis = _edge_gap(t2 * c12 - t1 * c22, a1 * m22 + a2 * m12 + b0 * m01 + b1 * m00,
                         c12 * c12 + c22 * c22, lb, axis, np.int64(8))
    if lb >= thr:
        return lb, axis
    lb, axis = _edge_gap(t0 * c20 - t2 * c00, a0 * m20 + a2 * m00 + b1 * m12 + b2 * m11,
                         c00 * c00 + c20 * c20, lb, axis, np.int64(9))
    lb, axis = _edge_gap(t0 * c21 - t2 * c01, a0 * m21 + a2 * m01 + b0 * m12 + b2 * m10,
                         c01 * c01 + c21 * c21, lb, axis, np.int64(10))
    lb, axis = _edge_gap(t0 * c22 - t2 * c02, a0 * m22 + a2 * m02 + b0 * m11 + b1 * m10,
                         c02 * c02 + c22 * c22, lb, axis, np.int64(11))
    if lb >= thr:
        return lb, axis
    lb, axis = _edge_gap(t1 * c00 - t0 * c10, a0 * m10 + a1 * m00 + b1 * m22 + b2 * m21,
                         c00 * c00 + c10 * c10, lb, axis, np.int64(12))
    lb, axis = _edge_gap(t1 * c01 - t0 * c11, a0 * m11 + a1 * m01 + b0 * m22 + b2 * m20,
                         c01 * c01 + c11 * c11, lb, axis, np.int64(13))
    lb, axis = _edge_gap(t1 * c02 - t0 * c12, a0 * m12 + a1 * m02 + b0 * m21 + b1 * m20,
                         c02 * c02 + c12 * c12, lb, axis, np.int64(14))
    return lb, axis


@njit(cache=True)
def _matvec(M, p):
    """M (9-tuple, row-major) times p (3-tuple)."""
    return (M[0] * p[0] + M[1] * p[1] + M[2] * p[2],
            M[3] * p[0] + M[4] * p[1] + M[5] * p[2],
            M[6] * p[0] + M[7] * p[1] + M[8] * p[2])


@njit(cache=True)
def _matmul(A, B):
    """A B for row-major 9-tuples."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6], A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@njit(cache=True)
def _tmatmul(A, B):
    """A^T B for row-major 9-tuples."""
    return (A[0] * B[0] + A[3] * B[3] + A[6] * B[6], A[0] * B[1] + A[3] * B[4] + A[6] * B[7],
            A[0] * B[2] + A[3] * B[5] + A[6] * B[8],
            A[1] * B[0] + A[4] * B[3] + A[7] * B[6], A[1] * B[1] + A[4] * B[4] + A[7] * B[7],
            A[1] * B[2] + A[4] * B[5] + A[7] * B[8],
            A[2] * B[0] + A[5] * B[3] + A[8] * B[6], A[2] * B[1] + A[5] * B[4] + A[8] * B[7],
            A[2] * B[2] + A[5] * B[5] + A[8] * B[8])


@njit(cache=True)
def _tmatvec(A, p):
    """A^T p for a row-major 9-tuple A."""
    return (A[0] * p[0] + A[3] * p[1] + A[6] * p[2],
            A[1] * p[0] + A[4] * p[1] + A[7] * p[2],
            A[2] * p[0] + A[5] * p[1] + A[8] * p[2])


@njit(cache=True, inline='always')
def _row3(nf, n, col):
    return (nf[n, col], nf[n, col + 1], nf[n, col + 2])


@njit(cache=True, inline='always')
def _row9(nf, n, col):
    return (nf[n, col], nf[n, col + 1], nf[n, col + 2], nf[n, col + 3], nf[n, col + 4], nf[n, col + 5],
            nf[n, col + 6], nf[n, col + 7], nf[n, col + 8])


@njit(cache=True)
def _sphere_gap(ca, ra, pb, rb):
    """Sphere bound: centres ca, pb (3-tuples, A's model frame), radii ra, rb."""
    dx = pb[0] - ca[0]
    dy = pb[1] - ca[1]
    dz = pb[2] - ca[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz) - ra - rb


@njit(cache=True)
def _add3(p, q):
    return (p[0] + q[0], p[1] + q[1], p[2] + q[2])


@njit(cache=True)
def _sub3(p, q):
    return (p[0] - q[0], p[1] - q[1], p[2] - q[2])


@njit(cache=True)
def kdop_bound(method, a, b, slabA, slabB, tabB, outB, qf, qi, thr):
    """Fünzig & Fellner section 5: B's k-DOP ``b`` realigned to A's directions
    (``_kdop_traverse.realigned_interval``: a conservative interval [lo', hi'] of D_i . x
    over B's moved triangles, query pad included), then along every unit direction D_i the
    gap between it and A's slab i: max(lo' - hi_i, lo_i - hi'); the largest gap is a lower
    bound (the paper's diff1/diff2 test, as a value). Returns (bound, slab index); stops
    once the bound reaches ``thr``."""
    k2 = slabA.shape[1] // 2
    lb = -np.inf
    axis = -1
    for i in range(k2):
        lo, hi = realigned_interval(method, i, b, slabB, tabB, outB, qf, qi)
        g = lo - slabA[a, k2 + i]
        g2 = slabA[a, i] - hi
        if g2 > g:
            g = g2
        if g > lb:
            lb = g
            axis = i
            if lb >= thr:
                return lb, axis
    return lb, axis


