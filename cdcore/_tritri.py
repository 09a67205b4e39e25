"""Triangle-triangle overlap (closed sets: touching counts as intersecting).

Separating-axis test (SAT) on two triangles A = (a0, a1, a2) and B = (b0, b1, b2).

Why the axis set is complete
----------------------------
A and B are compact convex sets, so they are disjoint iff 0 is not in the Minkowski
difference C = A - B = conv{a_i - b_j}, a convex polytope. If 0 is not in C there is a
direction L with max over C of L.c < 0, i.e. max L.A < min L.B, and L can be taken to be
one of:

* the outer normal of a facet of C, if C is 3-dimensional;
* if C is flat (dim C < 3): either the direction from aff(C) to 0 (when 0 is not in the
  affine hull of C) or the in-hull outer normal of a relative facet of C.

A face of C with outer normal L is F_A(L) - F_B(-L) (sum of the supporting faces), so
the facet normals are known from the faces of A and B:

Non-degenerate triangles, planes not parallel (C is 3-d, a polytope whose facets are
    triangle + vertex or edge + edge):
        nA, nB                         (a face of one triangle plus a vertex of the other)
        eA_i x eB_j, 9 of them         (edge plus non-parallel edge: a parallelogram)
Non-degenerate triangles in parallel planes, coplanar or not (C is a flat polygon in a
plane with normal n = nA ~ nB; its edges are translates of the edges of A and B):
        nA (= nB up to scale)          (0 off the plane)
        nA x eA_i, nB x eB_j           (in-plane edge normals; 0 in the plane)
Degenerate triangles (segment or point; a segment is represented by its non-zero
edge(s), all parallel):
    segment-triangle, segment not parallel to B's plane (C is a 3-d prism):
        nB, eA x eB_j                  (already in the list above)
    segment-triangle, segment parallel to B's plane (C is a flat polygon with edges eB_j
    and eA):
        nB, nB x eB_j, nB x eA_i       (the last three are new; symmetric: nA x eB_j.
                                       In exact arithmetic they are also implied by the
                                       e x (e x d) axes below, since every d then lies in
                                       the plane; they are kept as cheaper, earlier axes)
    point-triangle (C is a triangle):  nB, nB x eB_j
    segment-segment, not parallel (C is a parallelogram spanned by eA, eB):
        eA x eB                        (0 off the parallelogram's plane)
        e x (e x d) for e in {eA, eB} and some vertex difference d = a_i - b_j:
                                       if 0 is in the plane then every d lies in it, and
                                       e x (e x d) = -|e|^2 (component of d normal to e)
                                       is the in-plane normal of the parallelogram edges
                                       parallel to e (non-zero for some d, else B would be
                                       on A's line, i.e. parallel)
    segment-segment parallel, segment-point, point-point (C is a segment or a point on a
    line with direction e, or a single point d):
        e x (e x d)                    (0 off the line: -|e|^2 times the offset of the
                                       line from 0, the same for every d in C)
        d = a_i - b_j                  (0 on the line: every d is parallel to e, and
                                       non-zero since 0 is not in C; point-point: d)

Axes are tested in four stages, cheapest and most discriminating first, with early exit:
  stage 1: nA, nB (the plane-side rejection)
  stage 2: the 9 edge-edge axes eA_i x eB_j
  stage 3: the 6 in-plane edge normals nA x eA_i, nB x eB_j (needed for coplanar pairs)
  stage 4: only if stages 1-3 found no separation and A or B is degenerate:
           nA x eB_j, nB x eA_i (6), d_ij = a_i - b_j (9), e x (e x d_ij) for the 6
           edges e of A and B and the 9 d_ij (54).
Stages 1-3 are complete for non-degenerate triangles and stages 1-4 for all triangles.
Any axis that separates proves disjointness, so extra axes are always sound; the
degeneracy gate for stage 4 only saves time.

Arithmetic
----------
Everything is translated so that a0 is the origin (a0' = 0 exactly; the other vertices
v' = fl(v - a0)). This keeps projections of nearby triangles small when they are far
from the origin. Edges: eA_0 = a1' - a0' (= a1'), eA_1 = a2' - a1', eA_2 = a0' - a2' (= -a2'),
eB_0 = b1' - b0', eB_1 = b2' - b1', eB_2 = b0' - b2'; nA = a1' x a2', nB = eB_0 x (b2' - b0').
Projections are L.v (a0' projects to 0). All operations are plain IEEE double operations
in a fixed order (fastmath off, so no FMA contraction or reassociation); the numpy
reference ``cdcore._tritri_ref`` uses the same formulas and agrees bit for bit.

Separation on an axis L: with [amin, amax], [bmin, bmax] the computed projection
intervals, L separates iff  amax < bmin and bmin - amax > 2 E  (or the same with A and B
swapped), where

    E = SLACK * (|Lx| Mx + |Ly| My + |Lz| Mz),   M = max |coordinate| of the translated
                                                     vertices (per component)

bounds the rounding error of every projection with respect to the exact projection of the
exact translated vertex v - a0 on the (computed, hence exactly known) axis L: the
translation error is <= u |v'_k| per component and the 3-term dot product error is
<= gamma_3 sum |L_k| |v'_k|, together <= 4.0000001 u sum |L_k||v'_k| with u = 2^-53. With
SLACK = 8u the test is rigorous (allowing for the rounding in E and in the gap), so a
reported separation is a true separation of the input triangles: the predicate never
misses an intersection (barring overflow/underflow: coordinates up to ~1e60 in magnitude,
and products of degree 4 in the coordinates must stay above ~1e-290). Pairs closer than
about 1e-15 of their coordinate magnitude may be reported as overlapping. E is computed
only on the rare path where the plain comparison already separates. A zero axis never
separates (0 < 0 is false). For inputs on which all arithmetic is exact (e.g. small
integer coordinates) the answer is exact: projections are then integers, a true gap is
>= 1 and 2E is far below 1. Setting SLACK = 0 gives the plain strict comparison.
"""
from numba import njit

# Relative rounding-error bound per projection, see module docstring (8 unit roundoffs,
# twice what the analysis needs).
SLACK = 8.0 * 2.0 ** -53

# Stage 4 gate: a triangle is treated as degenerate (segment or point, so stages 1-3 are
# not complete for it) when |n|^2 <= DEGENERATE_EPS * (max squared edge length)^2, i.e.
# |n| <= 1e-12 * L^2 where L is the longest edge. The computed normal n = e1 x e2 has an
# absolute rounding error of a few u * L^2 ~ 1e-15 L^2 (more if the triangle is far from
# a0 and small: the edges carry the translation's rounding), so below 1e-12 L^2 its
# direction is uncertain to more than ~1e-3 and the triangle is, within rounding, a
# segment or a point: the normal-free axes of stage 4 are then needed. Above the threshold
# stages 1-3 suffice. Since extra axes are always sound, the value only trades speed
# (stage 4 is 69 axes) against completeness for slivers; exactly collinear or repeated
# vertices give n = 0 and always qualify. (For coordinates below ~1e-70 the threshold
# underflows to 0; only exactly-zero normals then qualify.)
DEGENERATE_EPS = 1e-24


@njit(cache=True, fastmath=False, inline='always')
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, fastmath=False, inline='always')
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0])


@njit(cache=True, fastmath=False, inline='always')
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, fastmath=False)
def _error_bound(l, a1, a2, b0, b1, b2):
    """SLACK * sum_k |l_k| * max |v'_k| over the translated vertices (a0' = 0)."""
    mx = max(abs(a1[0]), abs(a2[0]), abs(b0[0]), abs(b1[0]), abs(b2[0]))
    my = max(abs(a1[1]), abs(a2[1]), abs(b0[1]), abs(b1[1]), abs(b2[1]))
    mz = max(abs(a1[2]), abs(a2[2]), abs(b0[2]), abs(b1[2]), abs(b2[2]))
    return SLACK * (abs(l[0]) * mx + abs(l[1]) * my + abs(l[2]) * mz)


@njit(cache=True, fastmath=False, inline='always')
def _separates(l, a1, a2, b0, b1, b2):
    """Does axis l separate A = (0, a1, a2) from B = (b0, b1, b2) (translated frame)?"""
    pa1 = _dot(l, a1)
    pa2 = _dot(l, a2)
    pb0 = _dot(l, b0)
    pb1 = _dot(l, b1)
    pb2 = _dot(l, b2)
    amin = min(0.0, pa1, pa2)
    amax = max(0.0, pa1, pa2)
    bmin = min(pb0, pb1, pb2)
    bmax = max(pb0, pb1, pb2)
    if amax < bmin:
        gap = bmin - amax
    elif bmax < amin:
        gap = amin - bmax
    else:
        return False
    # rare path: confirm that the gap exceeds the rounding error of the projections
    return gap > 2.0 * _error_bound(l, a1, a2, b0, b1, b2)


@njit(cache=True, fastmath=False)
def _is_degenerate(n, e0, e1, e2):
    lmax = max(_dot(e0, e0), _dot(e1, e1), _dot(e2, e2))
    return _dot(n, n) <= DEGENERATE_EPS * (lmax * lmax)


@njit(cache=True, fastmath=False)
def _stage4_separates(nA, nB, eA0, eA1, eA2, eB0, eB1, eB2, a1, a2, b0, b1, b2):
    """Axes completing the set for segments and points (see module docstring)."""
    # nA x eB_j, nB x eA_i
    for eB in (eB0, eB1, eB2):
        if _separates(_cross(nA, eB), a1, a2, b0, b1, b2):
            return True
    for eA in (eA0, eA1, eA2):
        if _separates(_cross(nB, eA), a1, a2, b0, b1, b2):
            return True
    # vertex differences d_ij = a_i' - b_j'
    a0 = (0.0, 0.0, 0.0)
    for a in (a0, a1, a2):
        for b in (b0, b1, b2):
            if _separates(_sub(a, b), a1, a2, b0, b1, b2):
                return True
    # e x (e x d_ij) for every edge e of A and B
    for e in (eA0, eA1, eA2, eB0, eB1, eB2):
        for a in (a0, a1, a2):
            for b in (b0, b1, b2):
                if _separates(_cross(e, _cross(e, _sub(a, b))), a1, a2, b0, b1, b2):
                    return True
    return False


@njit(cache=True, fastmath=False)
def tri_tri_overlap_xyz(ax, ay, az, bx, by, bz, cx, cy, cz,
                        dx, dy, dz, ex, ey, ez, fx, fy, fz):
    """Do the closed triangles (a, b, c) and (d, e, f) intersect? 18 scalar coordinates.

    Conservative: a False answer is a proven separation (see module docstring)."""
    # translate: A's first vertex becomes the origin
    a1 = (bx - ax, by - ay, bz - az)
    a2 = (cx - ax, cy - ay, cz - az)
    b0 = (dx - ax, dy - ay, dz - az)
    b1 = (ex - ax, ey - ay, ez - az)
    b2 = (fx - ax, fy - ay, fz - az)

    # stage 1: the two plane normals
    nA = _cross(a1, a2)
    if _separates(nA, a1, a2, b0, b1, b2):
        return False
    eB0 = _sub(b1, b0)
    eB1 = _sub(b2, b1)
    eB2 = _sub(b0, b2)
    nB = _cross(eB0, _sub(b2, b0))
    if _separates(nB, a1, a2, b0, b1, b2):
        return False

    # stage 2: edge x edge
    eA0 = a1
    eA1 = _sub(a2, a1)
    eA2 = (-a2[0], -a2[1], -a2[2])
    for eA in (eA0, eA1, eA2):
        for eB in (eB0, eB1, eB2):
            if _separates(_cross(eA, eB), a1, a2, b0, b1, b2):
                return False

    # stage 3: in-plane edge normals (coplanar / parallel-plane pairs)
    for eA in (eA0, eA1, eA2):
        if _separates(_cross(nA, eA), a1, a2, b0, b1, b2):
            return False
    for eB in (eB0, eB1, eB2):
        if _separates(_cross(nB, eB), a1, a2, b0, b1, b2):
            return False

    # stage 4: degenerate triangles only
    if _is_degenerate(nA, eA0, eA1, eA2) or _is_degenerate(nB, eB0, eB1, eB2):
        return not _stage4_separates(nA, nB, eA0, eA1, eA2, eB0, eB1, eB2,
                                     a1, a2, b0, b1, b2)
    return True


@njit(cache=True, fastmath=False)
def tri_tri_overlap(p0, p1, p2, q0, q1, q2):
    """Do the closed triangles (p0, p1, p2) and (q0, q1, q2) intersect? Each argument is a
    length-3 float64 array (or view)."""
    return tri_tri_overlap_xyz(p0[0], p0[1], p0[2], p1[0], p1[1], p1[2],
                               p2[0], p2[1], p2[2], q0[0], q0[1], q0[2],
                               q1[0], q1[1], q1[2], q2[0], q2[1], q2[2])
