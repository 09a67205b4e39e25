"""Bounding-volume overlap tests.

Boxes: the separating-axis test of Gottschalk et al. (OBBTree, 1996) in the form used
by van den Bergen (1998, section 3): box B is expressed in A's box frame by a rotation
``C`` (C[i, j] = a_i . b_j), its absolute value ``AC`` and a translation ``T``. Any
subset of the 15 candidate axes can be tested, in any order; a subset is conservative
(it may call separated boxes overlapping, never the reverse).

Axis ids (shared with traces and the exit-axis histogram, see ``_layout``):
    0, 1, 2     a_0, a_1, a_2   -- A's face normals (for OBBs: long, mid, short)
    3, 4, 5     b_0, b_1, b_2   -- B's face normals
    6 + 3i + j  a_i x b_j       -- edge-edge directions
    15          the bounding-sphere test
"""
import numpy as np
from numba import njit

# Added to every |C[i, j]|: when a_i and b_j are (nearly) parallel, a_i x b_j is (nearly)
# zero and the edge-axis comparison is dominated by rounding; the epsilon inflates the
# projected radii so that rounding can only make the test report overlap (as RAPID and
# Coal do). 1e-6 of the extents is far above double rounding (1e-16) and far below any
# useful box size.
ABS_EPS = 1e-6

SAT15_AXES = np.arange(15, dtype=np.int64)
SAT6_AXES = np.arange(6, dtype=np.int64)
# Dual OBB-sphere test (Chang, Wang & Kim 2010): after the sphere test, five axes.
# The paper omits its list; derived from its geometric argument (section 1, Figs. 2-4):
#   6  a_long x b_long: the plane parallel to both longest edges (Fig. 4);
#   2  a_short: normal of A's face spanned by its two longer edges, where the sphere
#               leaves the largest void, so boxes whose spheres overlap are most often
#               separated across it;
#   5  b_short: the same for B;
#   7  a_long x b_mid, 9  a_mid x b_long: the next-largest voids, planes parallel to the
#               longest edge of one box and the middle edge of the other.
# The long-axis face normals (0, 3), across the small voids of Fig. 3, are left out.
# ``python -m cdcore.bench axes`` measures every axis alone over sphere-overlapping node
# pairs: on linked tori and the three rigid scenes a greedy search picks exactly this set,
# which rejects 93-96% of what the 15-axis SAT rejects; the order is by measured share.
SPHERE5_AXES = np.array([6, 2, 5, 7, 9], dtype=np.int64)


@njit(cache=True, inline='always')
def axis_separates(k, T, C, AC, ea, eb):
    """Does candidate axis ``k`` (0..14) separate the boxes? Strict inequality: touching
    boxes overlap."""
    if k < 3:
        return abs(T[k]) > ea[k] + eb[0] * AC[k, 0] + eb[1] * AC[k, 1] + eb[2] * AC[k, 2]
    if k < 6:
        j = k - 3
        return (abs(T[0] * C[0, j] + T[1] * C[1, j] + T[2] * C[2, j])
                > eb[j] + ea[0] * AC[0, j] + ea[1] * AC[1, j] + ea[2] * AC[2, j])
    i = (k - 6) // 3
    j = (k - 6) - 3 * i
    i1 = (i + 1) % 3
    i2 = (i + 2) % 3
    j1 = (j + 1) % 3
    j2 = (j + 2) % 3
    return (abs(T[i2] * C[i1, j] - T[i1] * C[i2, j])
            > ea[i1] * AC[i2, j] + ea[i2] * AC[i1, j] + eb[j1] * AC[i, j2] + eb[j2] * AC[i, j1])


@njit(cache=True, inline='always')
def first_separating_axis(axes, T, C, AC, ea, eb):
    """First axis id of ``axes`` that separates the boxes, or -1 if none does (any subset,
    any order; the general path used for studies of axis choices). Inlined: as an
    out-of-line call from the inlined ``sat_program`` its mere presence cost every box test
    ~50 ns (argument marshalling and reference counting of six arrays)."""
    for n in range(axes.shape[0]):
        k = axes[n]
        if axis_separates(k, T, C, AC, ea, eb):
            return k
    return -1


# fixed axis programs with an unrolled fast path
PROGRAM_CUSTOM = 0
PROGRAM_SAT15 = 1
PROGRAM_SAT6 = 2
PROGRAM_SPHERE5 = 3


@njit(cache=True, inline='always')
def sat_program(program, axes, T, C, AC, ea, eb):
    """Separating-axis test with the axis list of ``program``, unrolled on scalars (a
    call per axis costs as much as the axis itself). Returns the first separating axis
    id or -1. ``PROGRAM_CUSTOM`` tests ``axes`` in order. (``sat_scalars`` on the arrays'
    entries.)"""
    if program == PROGRAM_CUSTOM:
        return first_separating_axis(axes, T, C, AC, ea, eb)
    return sat_scalars(program, T[0], T[1], T[2], C[0, 0], C[0, 1], C[0, 2], C[1, 0], C[1, 1], C[1, 2],
                       C[2, 0], C[2, 1], C[2, 2], AC[0, 0], AC[0, 1], AC[0, 2], AC[1, 0], AC[1, 1], AC[1, 2],
                       AC[2, 0], AC[2, 1], AC[2, 2], ea[0], ea[1], ea[2], eb[0], eb[1], eb[2])


@njit(cache=True, inline='always')
def sat_scalars(program, t0, t1, t2, c00, c01, c02, c10, c11, c12, c20, c21, c22,
                m00, m01, m02, m10, m11, m12, m20, m21, m22, a0, a1, a2, b0, b1, b2):
    """``sat_program`` of a fixed program (not ``PROGRAM_CUSTOM``) on scalars: T = (t0, t1, t2),
    C[i, j] = cij, AC[i, j] = mij (|C| + ABS_EPS), A's half-extents a0..a2, B's b0..b2. The
    traversal passes values it has just computed, so no scratch array is written and read
    back per node pair."""
    if program == PROGRAM_SPHERE5:
        # 6: a_long x b_long (the most effective single axis, ``bench axes``)
        if abs(t2 * c10 - t1 * c20) > a1 * m20 + a2 * m10 + b1 * m02 + b2 * m01:
            return 6
        # 2: a_short
        if abs(t2) > a2 + b0 * m20 + b1 * m21 + b2 * m22:
            return 2
        # 5: b_short
        if abs(t0 * c02 + t1 * c12 + t2 * c22) > b2 + a0 * m02 + a1 * m12 + a2 * m22:
            return 5
        # 7: a_long x b_mid
        if abs(t2 * c11 - t1 * c21) > a1 * m21 + a2 * m11 + b0 * m02 + b2 * m00:
            return 7
        # 9: a_mid x b_long
        if abs(t0 * c20 - t2 * c00) > a0 * m20 + a2 * m00 + b1 * m12 + b2 * m11:
            return 9
        return -1
    # 0..2: A's face normals
    if abs(t0) > a0 + b0 * m00 + b1 * m01 + b2 * m02:
        return 0
    if abs(t1) > a1 + b0 * m10 + b1 * m11 + b2 * m12:
        return 1
    if abs(t2) > a2 + b0 * m20 + b1 * m21 + b2 * m22:
        return 2
    # 3..5: B's face normals
    if abs(t0 * c00 + t1 * c10 + t2 * c20) > b0 + a0 * m00 + a1 * m10 + a2 * m20:
        return 3
    if abs(t0 * c01 + t1 * c11 + t2 * c21) > b1 + a0 * m01 + a1 * m11 + a2 * m21:
        return 4
    if abs(t0 * c02 + t1 * c12 + t2 * c22) > b2 + a0 * m02 + a1 * m12 + a2 * m22:
        return 5
    if program == PROGRAM_SAT6:
        return -1
    # 6 + 3i + j: a_i x b_j; |T . (a_i x b_j)| against both projected radii
    if abs(t2 * c10 - t1 * c20) > a1 * m20 + a2 * m10 + b1 * m02 + b2 * m01:
        return 6
    if abs(t2 * c11 - t1 * c21) > a1 * m21 + a2 * m11 + b0 * m02 + b2 * m00:
        return 7
    if abs(t2 * c12 - t1 * c22) > a1 * m22 + a2 * m12 + b0 * m01 + b1 * m00:
        return 8
    if abs(t0 * c20 - t2 * c00) > a0 * m20 + a2 * m00 + b1 * m12 + b2 * m11:
        return 9
    if abs(t0 * c21 - t2 * c01) > a0 * m21 + a2 * m01 + b0 * m12 + b2 * m10:
        return 10
    if abs(t0 * c22 - t2 * c02) > a0 * m22 + a2 * m02 + b0 * m11 + b1 * m10:
        return 11
    if abs(t1 * c00 - t0 * c10) > a0 * m10 + a1 * m00 + b1 * m22 + b2 * m21:
        return 12
    if abs(t1 * c01 - t0 * c11) > a0 * m11 + a1 * m01 + b0 * m22 + b2 * m20:
        return 13
    if abs(t1 * c02 - t0 * c12) > a0 * m12 + a1 * m02 + b0 * m21 + b1 * m20:
        return 14
    return -1


@njit(cache=True, inline='always')
def spheres_separated(ax, ay, az, ar, bx, by, bz, br):
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    rr = ar + br
    return dx * dx + dy * dy + dz * dz > rr * rr


def box_separation_reference(ca, Ra, ea, cb, Rb, eb):
    """Plain-numpy reference for tests: for two boxes given in one frame (centres (3,),
    axes as matrix columns (3, 3), half-extents (3,)), the signed gap along each of the
    15 candidate axes, normalised to a unit axis (> 0: that axis separates; NaN for a
    degenerate cross product). Evaluates each axis directly as a vector, no epsilon."""
    cand = [Ra[:, i] for i in range(3)] + [Rb[:, j] for j in range(3)]
    cand += [np.cross(Ra[:, i], Rb[:, j]) for i in range(3) for j in range(3)]
    d = cb - ca
    gaps = np.full(15, np.nan)
    for k, L in enumerate(cand):
        n = np.linalg.norm(L)
        if n < 1e-9:
            continue
        L = L / n
        ra = sum(ea[i] * abs(L @ Ra[:, i]) for i in range(3))
        rb = sum(eb[j] * abs(L @ Rb[:, j]) for j in range(3))
        gaps[k] = abs(L @ d) - ra - rb
    return gaps
