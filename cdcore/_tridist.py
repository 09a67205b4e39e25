"""Exact triangle-triangle distance with closest points (numba kernel + numpy reference).

Two closed triangles A = (a0, a1, a2) and B = (b0, b1, b2). If they intersect the distance
is 0 (decided by the robust overlap predicate ``_tritri.tri_tri_overlap_xyz``). Otherwise
the closest pair of points is attained either

* at a vertex of one triangle and the interior of the other (the vertex's foot point
  on the other's plane lies inside it): 6 vertex-face candidates, or
* on the boundaries of both: a pair of edges. The distance of two segments is attained
  at an endpoint of one of them (an endpoint-to-segment distance: 9 vertices of B
  against the 3 edges of A and 9 vertices of A against the edges of B) or at the interior
  stationary point of the two lines (9 edge pairs, when it lies inside both segments).

The minimum over all of them is the distance (15 vertex-face and edge-edge distances in
the usual counting; the 18 endpoint-to-segment distances are the boundary cases of the 9
segment-segment distances).

Robustness
----------
Every candidate is the distance between two points computed *on* the triangles: an
endpoint and a clamped point of a segment (``a + t d`` with t in [0, 1]), a pair of
line points whose parameters passed the [0, 1] test, or a vertex and the point
``a0 + beta e0 + gamma e1`` with beta, gamma >= 0, beta + gamma <= 1 (the tests are made on
the numerators before dividing, so only feasible candidates pay a division). So, up to the
rounding of the point coordinates, every candidate is an upper bound on the true
distance, and inaccurate parameters (nearly parallel edges, sliver triangles, whose
Gram determinants cancel) can only make a candidate larger, never smaller. The true
minimiser is among the candidates, and at an interior stationary point the distance
is stationary in the parameters, so parameter errors there change the distance only to
second order. No epsilon decides a branch except ``den > 0`` (a Gram determinant):

* degenerate triangles (segments, points: repeated or collinear vertices) have
  ``den <= 0`` or parameters outside the triangle, so only their edges (which cover a
  degenerate triangle) take part; zero-length edges become points (``dd == 0``);
* parallel edges have ``den == 0`` and are handled by the endpoint candidates (parallel
  segments always have a closest pair at an endpoint).

Intersecting pairs return 0 and a witness: the point where an edge of one triangle
crosses the other's plane that is nearest the other triangle (or the best candidate
pair, for coplanar and degenerate contacts); ``p`` is on A, ``q`` its nearest point on
B (equal to rounding). Pairs closer than the overlap predicate's slack (~1e-15 of the
coordinate magnitude) may be reported as intersecting, with distance 0.

All arithmetic is plain IEEE double in a fixed order (fastmath off); the numpy reference
``tri_tri_distance_numpy`` evaluates the same candidates with the same formulas.
"""
import math

import numpy as np
from numba import njit

from ._tritri import SLACK, tri_tri_overlap_xyz


@njit(cache=True, fastmath=False, inline='always')
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, fastmath=False, inline='always')
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, fastmath=False, inline='always')
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0])


@njit(cache=True, fastmath=False, inline='always')
def _axpy(a, s, d):
    """a + s d"""
    return (a[0] + s * d[0], a[1] + s * d[1], a[2] + s * d[2])


@njit(cache=True, fastmath=False, inline='always')
def _seg_point(p, a, d, dd):
    """Nearest point of the segment a + t d (t in [0, 1], dd = d.d) to p: (squared
    distance, the point)."""
    w = _sub(p, a)
    wd = _dot(w, d)
    t = 0.0  # clamp(wd / dd, 0, 1), dividing only inside (the same value: rounding is monotone)
    if dd > 0.0 and wd > 0.0:
        t = 1.0 if wd >= dd else wd / dd
    c = _axpy(a, t, d)
    r = _sub(p, c)
    return _dot(r, r), c


@njit(cache=True, fastmath=False, inline='always')
def _face_point(q, a0, e0, f1, g00, g01, g11, den):
    """Foot of q on the plane of the triangle (a0, a0 + e0, a0 + f1) if it lies inside
    (Gram matrix g, den = g00 g11 - g01^2 > 0): (ok, squared distance, foot point)."""
    w = _sub(q, a0)
    wu = _dot(w, e0)
    wv = _dot(w, f1)
    bn = g11 * wu - g01 * wv
    gn = g00 * wv - g01 * wu
    if bn >= 0.0 and gn >= 0.0 and bn + gn <= den:  # inside: divide only then
        beta = bn / den
        gam = gn / den
        x = (a0[0] + beta * e0[0] + gam * f1[0],
             a0[1] + beta * e0[1] + gam * f1[1],
             a0[2] + beta * e0[2] + gam * f1[2])
        r = _sub(q, x)
        return True, _dot(r, r), x
    return False, 0.0, a0


@njit(cache=True, fastmath=False)
def _candidates(a0, a1, a2, b0, b1, b2):
    """Minimum over all candidates: (squared distance, p on A, q on B)."""
    eA0 = _sub(a1, a0)
    eA1 = _sub(a2, a1)
    eA2 = _sub(a0, a2)
    eB0 = _sub(b1, b0)
    eB1 = _sub(b2, b1)
    eB2 = _sub(b0, b2)
    ddA0 = _dot(eA0, eA0)
    ddA1 = _dot(eA1, eA1)
    ddA2 = _dot(eA2, eA2)
    ddB0 = _dot(eB0, eB0)
    ddB1 = _dot(eB1, eB1)
    ddB2 = _dot(eB2, eB2)
    va = (a0, a1, a2)
    vb = (b0, b1, b2)
    ea = (eA0, eA1, eA2)
    eb = (eB0, eB1, eB2)
    dda = (ddA0, ddA1, ddA2)
    ddb = (ddB0, ddB1, ddB2)
    best = np.inf
    P = a0
    Q = b0
    # endpoint-to-segment: vertices of B against A's edges, vertices of A against B's
    for i in range(3):
        for j in range(3):
            d2, c = _seg_point(vb[j], va[i], ea[i], dda[i])
            if d2 < best:
                best = d2
                P = c
                Q = vb[j]
            d2, c = _seg_point(va[j], vb[i], eb[i], ddb[i])
            if d2 < best:
                best = d2
                P = va[j]
                Q = c
    # interior stationary points of the 9 edge pairs
    for i in range(3):
        for j in range(3):
            r = _sub(va[i], vb[j])
            a = dda[i]
            e = ddb[j]
            b = _dot(ea[i], eb[j])
            c = _dot(ea[i], r)
            f = _dot(eb[j], r)
            den = a * e - b * b
            if den > 0.0:
                sn = b * f - c * e
                tn = a * f - b * c
                if 0.0 <= sn <= den and 0.0 <= tn <= den:  # inside both: divide only then
                    s = sn / den
                    t = tn / den
                    p = _axpy(va[i], s, ea[i])
                    q = _axpy(vb[j], t, eb[j])
                    w = _sub(p, q)
                    d2 = _dot(w, w)
                    if d2 < best:
                        best = d2
                        P = p
                        Q = q
    # vertex-face: vertices of B over A's interior, vertices of A over B's
    fA = (-eA2[0], -eA2[1], -eA2[2])  # a2 - a0
    g01 = _dot(eA0, fA)
    den = ddA0 * ddA2 - g01 * g01
    if den > 0.0:
        for j in range(3):
            ok, d2, x = _face_point(vb[j], a0, eA0, fA, ddA0, g01, ddA2, den)
            if ok and d2 < best:
                best = d2
                P = x
                Q = vb[j]
    fB = (-eB2[0], -eB2[1], -eB2[2])
    g01 = _dot(eB0, fB)
    den = ddB0 * ddB2 - g01 * g01
    if den > 0.0:
        for j in range(3):
            ok, d2, x = _face_point(va[j], b0, eB0, fB, ddB0, g01, ddB2, den)
            if ok and d2 < best:
                best = d2
                P = va[j]
                Q = x
    return best, P, Q


@njit(cache=True, fastmath=False)
def _point_triangle(p, a0, a1, a2):
    """Squared distance and nearest point of triangle (a0, a1, a2) to p (robust for
    degenerate triangles: the face case needs a positive Gram determinant)."""
    e0 = _sub(a1, a0)
    e1 = _sub(a2, a1)
    e2 = _sub(a0, a2)
    dd0 = _dot(e0, e0)
    dd2 = _dot(e2, e2)
    best, c = _seg_point(p, a0, e0, dd0)
    d2, x = _seg_point(p, a1, e1, _dot(e1, e1))
    if d2 < best:
        best = d2
        c = x
    d2, x = _seg_point(p, a2, e2, dd2)
    if d2 < best:
        best = d2
        c = x
    f1 = (-e2[0], -e2[1], -e2[2])
    g01 = _dot(e0, f1)
    den = dd0 * dd2 - g01 * g01
    if den > 0.0:
        ok, d2, x = _face_point(p, a0, e0, f1, dd0, g01, dd2, den)
        if ok and d2 < best:
            best = d2
            c = x
    return best, c


@njit(cache=True, fastmath=False)
def _edge_plane_witness(u0, u1, u2, v0, v1, v2, best, P, Q, swap):
    """For each edge of triangle u crossing the plane of triangle v: the crossing point
    and its distance to v; keep the nearest (P on A, Q on B; ``swap``: u is B)."""
    n = _cross(_sub(v1, v0), _sub(v2, v0))
    if _dot(n, n) == 0.0:
        return best, P, Q
    us = (u0, u1, u2)
    for i in range(3):
        p0 = us[i]
        p1 = us[(i + 1) % 3]
        s0 = _dot(_sub(p0, v0), n)
        s1 = _dot(_sub(p1, v0), n)
        if (s0 <= 0.0 <= s1 or s1 <= 0.0 <= s0) and s0 != s1:
            x = _axpy(p0, s0 / (s0 - s1), _sub(p1, p0))
            d2, c = _point_triangle(x, v0, v1, v2)
            if d2 < best:
                best = d2
                if swap:
                    P = c
                    Q = x
                else:
                    P = x
                    Q = c
    return best, P, Q


@njit(cache=True, fastmath=False)
def _tri_dist(a0, a1, a2, b0, b1, b2):
    hit = tri_tri_overlap_xyz(a0[0], a0[1], a0[2], a1[0], a1[1], a1[2], a2[0], a2[1], a2[2],
                              b0[0], b0[1], b0[2], b1[0], b1[1], b1[2], b2[0], b2[1], b2[2])
    best, P, Q = _candidates(a0, a1, a2, b0, b1, b2)
    if not hit:
        return math.sqrt(best), P, Q
    return _witness(a0, a1, a2, b0, b1, b2, best, P, Q)


@njit(cache=True, fastmath=False)
def _witness(a0, a1, a2, b0, b1, b2, best, P, Q):
    """Intersecting pair: distance 0 and the best witness (rare path, kept out of line)."""
    best, P, Q = _edge_plane_witness(a0, a1, a2, b0, b1, b2, best, P, Q, np.bool_(False))
    best, P, Q = _edge_plane_witness(b0, b1, b2, a0, a1, a2, best, P, Q, np.bool_(True))
    return 0.0, P, Q


@njit(cache=True, fastmath=False, inline='always')
def _plane_axis_gap(l, a1, a2, b0, b1, b2):
    """Rigorous lower bound on the distance of A = (0, a1, a2) and B = (b0, b1, b2)
    (translated frame) from the gap of their projections on the computed axis l, or
    -inf. As in ``_tritri``: l is an exactly known vector, every computed projection is
    within E = SLACK * sum |l_k| M_k of the exact projection of the exact translated
    vertex, so the exact gap along l is >= the computed gap - 2E; dividing by the computed
    |l| (relative error < 3u) and shrinking by 1e-15 keeps it a lower bound."""
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
        g = bmin - amax
    elif bmax < amin:
        g = amin - bmax
    else:
        return -np.inf
    mx = max(abs(a1[0]), abs(a2[0]), abs(b0[0]), abs(b1[0]), abs(b2[0]))
    my = max(abs(a1[1]), abs(a2[1]), abs(b0[1]), abs(b1[1]), abs(b2[1]))
    mz = max(abs(a1[2]), abs(a2[2]), abs(b0[2]), abs(b1[2]), abs(b2[2]))
    g -= 2.0 * SLACK * (abs(l[0]) * mx + abs(l[1]) * my + abs(l[2]) * mz)
    if g <= 0.0:
        return -np.inf
    return g / math.sqrt(_dot(l, l)) * (1.0 - 1e-15)


@njit(cache=True, fastmath=False)
def tri_plane_bound(a0, a1, a2, b0, b1, b2):
    """Cheap rigorous lower bound on the distance of two triangles (3-tuples): the larger
    gap along the two plane normals (-inf when neither plane separates them). Returns
    (bound, 0 for A's normal / 1 for B's / -1)."""
    t1 = _sub(a1, a0)
    t2 = _sub(a2, a0)
    u0 = _sub(b0, a0)
    u1 = _sub(b1, a0)
    u2 = _sub(b2, a0)
    g = _plane_axis_gap(_cross(t1, t2), t1, t2, u0, u1, u2)
    which = 0 if g > -np.inf else -1
    h = _plane_axis_gap(_cross(_sub(u1, u0), _sub(u2, u0)), t1, t2, u0, u1, u2)
    if h > g:
        return h, 1
    return g, which


@njit(cache=True, fastmath=False)
def tri_tri_distance_xyz(ax, ay, az, bx, by, bz, cx, cy, cz,
                         dx, dy, dz, ex, ey, ez, fx, fy, fz):
    """Distance of the closed triangles (a, b, c) and (d, e, f), 18 scalar coordinates.

    Returns (distance, (px, py, pz), (qx, qy, qz)): p on the first triangle, q on the
    second, |p - q| = distance (to rounding). 0 for intersecting triangles, with a
    witness point (p ~ q)."""
    return _tri_dist((ax, ay, az), (bx, by, bz), (cx, cy, cz), (dx, dy, dz), (ex, ey, ez), (fx, fy, fz))


@njit(cache=True, fastmath=False)
def tri_tri_distance(p0, p1, p2, q0, q1, q2):
    """``tri_tri_distance_xyz`` on length-3 float64 arrays; returns (distance, p (3,), q (3,))."""
    d, P, Q = _tri_dist((p0[0], p0[1], p0[2]), (p1[0], p1[1], p1[2]), (p2[0], p2[1], p2[2]),
                        (q0[0], q0[1], q0[2]), (q1[0], q1[1], q1[2]), (q2[0], q2[1], q2[2]))
    pa = np.empty(3)
    qa = np.empty(3)
    for k in range(3):
        pa[k] = P[k]
        qa[k] = Q[k]
    return d, pa, qa


# ---- numpy reference -----------------------------------------------------------------
def _np_sub(a, b):
    return a - b


def _np_dot(a, b):
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def tri_tri_distance_numpy(A, B):
    """Vectorised reference: distances of k triangle pairs.

    A, B : (k, 3, 3) float64 (pair i is A[i] against B[i]; rows are vertices).
    Returns (d (k,), P (k, 3), Q (k, 3)): the same candidates as the kernel with the same
    formulas, minimum per pair; intersecting pairs (``tri_tri_overlap_numpy``) get d = 0 and
    P = Q = NaN (the kernel's witness search is not replicated)."""
    from ._tritri_ref import tri_tri_overlap_numpy
    A = np.ascontiguousarray(A, dtype=np.float64)
    B = np.ascontiguousarray(B, dtype=np.float64)
    k = len(A)
    va = [A[:, i] for i in range(3)]
    vb = [B[:, i] for i in range(3)]
    ea = [va[1] - va[0], va[2] - va[1], va[0] - va[2]]
    eb = [vb[1] - vb[0], vb[2] - vb[1], vb[0] - vb[2]]
    dda = [_np_dot(e, e) for e in ea]
    ddb = [_np_dot(e, e) for e in eb]
    best = np.full(k, np.inf)
    P = np.zeros((k, 3))
    Q = np.zeros((k, 3))

    def keep(d2, p, q):
        m = d2 < best
        best[m] = d2[m]
        P[m] = p[m]
        Q[m] = q[m]

    def seg_point(p, a, d, dd):
        w = p - a
        wd = _np_dot(w, d)
        inner = (dd > 0.0) & (wd > 0.0)
        t = np.where(inner & (wd >= dd), 1.0, np.where(inner, wd / np.where(dd > 0.0, dd, 1.0), 0.0))
        c = np.stack([a[:, 0] + t * d[:, 0], a[:, 1] + t * d[:, 1], a[:, 2] + t * d[:, 2]], axis=1)
        r = p - c
        return _np_dot(r, r), c

    for i in range(3):
        for j in range(3):
            d2, c = seg_point(vb[j], va[i], ea[i], dda[i])
            keep(d2, c, vb[j])
            d2, c = seg_point(va[j], vb[i], eb[i], ddb[i])
            keep(d2, va[j], c)
    for i in range(3):
        for j in range(3):
            r = va[i] - vb[j]
            a, e = dda[i], ddb[j]
            b = _np_dot(ea[i], eb[j])
            c = _np_dot(ea[i], r)
            f = _np_dot(eb[j], r)
            den = a * e - b * b
            pos = den > 0.0
            safe = np.where(pos, den, 1.0)
            sn = b * f - c * e
            tn = a * f - b * c
            ok = pos & (sn >= 0.0) & (sn <= den) & (tn >= 0.0) & (tn <= den)
            s = sn / safe
            t = tn / safe
            p = np.stack([va[i][:, m] + s * ea[i][:, m] for m in range(3)], axis=1)
            q = np.stack([vb[j][:, m] + t * eb[j][:, m] for m in range(3)], axis=1)
            w = p - q
            d2 = np.where(ok, _np_dot(w, w), np.inf)
            keep(d2, p, q)

    def faces(v0, e0, e2, ddx0, ddx2, others, other_is_b):
        f1 = -e2
        g01 = _np_dot(e0, f1)
        den = ddx0 * ddx2 - g01 * g01
        pos = den > 0.0
        safe = np.where(pos, den, 1.0)
        for q in others:
            w = q - v0
            wu = _np_dot(w, e0)
            wv = _np_dot(w, f1)
            bn = ddx2 * wu - g01 * wv
            gn = ddx0 * wv - g01 * wu
            ok = pos & (bn >= 0.0) & (gn >= 0.0) & (bn + gn <= den)
            beta = bn / safe
            gam = gn / safe
            x = np.stack([v0[:, m] + beta * e0[:, m] + gam * f1[:, m] for m in range(3)], axis=1)
            r = q - x
            d2 = np.where(ok, _np_dot(r, r), np.inf)
            if other_is_b:
                keep(d2, x, q)
            else:
                keep(d2, q, x)

    faces(va[0], ea[0], ea[2], dda[0], dda[2], vb, True)
    faces(vb[0], eb[0], eb[2], ddb[0], ddb[2], va, False)
    d = np.sqrt(best)
    hit = tri_tri_overlap_numpy(A, B)
    d[hit] = 0.0
    P[hit] = np.nan
    Q[hit] = np.nan
    return d, P, Q


def all_pairs_distance(tris_a, tris_b, chunk=1 << 16):
    """Brute force over every pair: (m_a, m_b) distance matrix (numpy reference).
    tris_a (m_a, 3, 3), tris_b (m_b, 3, 3)."""
    tris_a = np.asarray(tris_a, dtype=np.float64)
    tris_b = np.asarray(tris_b, dtype=np.float64)
    ma, mb = len(tris_a), len(tris_b)
    ia, ib = np.divmod(np.arange(ma * mb), mb)
    out = np.empty(ma * mb)
    for s in range(0, ma * mb, chunk):
        sl = slice(s, s + chunk)
        out[sl] = tri_tri_distance_numpy(tris_a[ia[sl]], tris_b[ib[sl]])[0]
    return out.reshape(ma, mb)
