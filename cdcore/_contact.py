"""Contact geometry of intersecting triangle pairs (numba kernels; a post-pass over a
query's pairs, so a query that does not ask for geometry never runs any of this).

For a pair of closed triangles A = (a0, a1, a2), B = (b0, b1, b2) reported as intersecting:

Intersection segment ``points`` (2, 3)
    The two end points of A ∩ B. Non-coplanar pairs: A ∩ B is a segment (a point when the
    triangles touch at a vertex or cross at a single point); it is computed as
    (A ∩ plane(B)) clipped by B's three side half-spaces (the half-spaces bounded by the
    planes through B's edges perpendicular to B, Liang-Barsky style). Coplanar pairs: A ∩ B
    is a convex polygon (A clipped by B's side half-planes, Sutherland-Hodgman); the end
    points are its diameter (the farthest pair of its vertices). When B is degenerate
    (a segment or point) the roles are swapped. When rounding leaves the clipped set empty
    (pairs within ~1e-15 of their coordinate magnitude of touching, which the overlap
    predicate reports as intersecting) or both triangles are degenerate, both end points
    are the midpoint of the triangles' closest points (``_tridist``): a touching point.
    The clipping half-spaces are widened by ``TIE_REL`` times the coordinate magnitude, so
    that rounding cannot cut off a contact on a boundary (coplanar pairs sharing an edge):
    end points are exact to about that. A polygon may have several diameters (a square's
    two diagonals): any of them may be returned. The end points are ordered
    lexicographically (x, then y, then z, in the pair's frame).

Penetration ``depth`` and ``normal`` (3,)
    The translational penetration depth: the length of the shortest translation of B that
    separates the two triangles. A and B are convex, so it is the smallest distance from
    the origin to a facet of the Minkowski difference A - B, whose facet normals are among
    the pair's 11 candidate axes: the face normals nA, nB and the 9 edge cross products
    eA_i x eB_j (the same axes as the separating-axis test, ``_tritri`` stages 1-2). On a
    unit axis L with projection intervals [amin, amax] of A and [bmin, bmax] of B, moving B
    by (amax - bmin) along +L or by (bmax - amin) along -L separates them; the depth is the
    smallest of these over the axes and ``normal`` is the unit axis oriented the way B must
    move, i.e. from A towards B. Ties within ``TIE_REL`` of the coordinate magnitude keep
    the earlier axis (nA, nB, then eA_i x eB_j in order), so rounding noise cannot flip the
    choice; an axis whose two sides tie is oriented along the centroid offset cB - cA, and
    +L when that is a tie too.
    Coplanar pairs (both triangles non-degenerate, B's vertices within ``TIE_REL`` of A's
    plane): depth 0 and normal = A's unit face normal (by its winding). Touching pairs:
    depth 0 (the min is clamped at 0: rounding can make it ~-1e-16). Degenerate axes
    (|L| <= 1e-12 |u||v| for L = u x v: the direction is then uncertain to more than ~1e-3,
    as ``_tritri.DEGENERATE_EPS`` argues) are skipped; if every axis is degenerate (both
    triangles collinear segments or points) depth is 0 and normal the zero vector.

Arithmetic: each pair is translated so that a0 is the origin (as ``_tritri`` does), which
keeps the results accurate far from the origin; the query passes vertices already moved by
-t_a (pose A's translation) and adds it back to the points.
"""
import math

import numpy as np
from numba import njit

from ._tridist import _tri_dist
from ._tritri import _cross, _dot, _sub

# |L|^2 <= AXIS_EPS |u|^2 |v|^2  (L = u x v): a degenerate axis, skipped (sin angle <= 1e-12).
AXIS_EPS = 1e-24
# Ties and the coplanar test, relative to the pair's largest translated |coordinate|:
# 1e-12 is ~5000 unit roundoffs, above the rounding of the projections (a few u times the
# magnitude, ``_tritri``'s error bound) and far below any geometric feature we report.
TIE_REL = 1e-12


@njit(cache=True, fastmath=False, inline='always')
def _scale3(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@njit(cache=True, fastmath=False, inline='always')
def _add3(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True, fastmath=False, inline='always')
def _lerp(p, q, t):
    return (p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t, p[2] + (q[2] - p[2]) * t)


@njit(cache=True, fastmath=False)
def _is_flat(n, e0, e1, e2):
    """A triangle collapsed to a segment or point within rounding (``_tritri._is_degenerate``)."""
    lmax = max(_dot(e0, e0), _dot(e1, e1), _dot(e2, e2))
    return _dot(n, n) <= AXIS_EPS * (lmax * lmax)


@njit(cache=True, fastmath=False)
def _depth_normal(a0, a1, a2, b0, b1, b2, mag):
    """(depth, normal) of the pair in a frame where a0 = 0 (see module docstring)."""
    eA = (_sub(a1, a0), _sub(a2, a1), _sub(a0, a2))
    eB = (_sub(b1, b0), _sub(b2, b1), _sub(b0, b2))
    cd = _sub(_scale3(_add3(_add3(b0, b1), b2), 1.0 / 3.0), _scale3(_add3(_add3(a0, a1), a2), 1.0 / 3.0))
    tie = TIE_REL * mag
    best = np.inf
    bn = (0.0, 0.0, 0.0)
    for k in range(11):
        if k == 0:
            u, v = eA[0], _sub(a2, a0)
        elif k == 1:
            u, v = eB[0], _sub(b2, b0)
        else:
            u, v = eA[(k - 2) // 3], eB[(k - 2) % 3]
        L = _cross(u, v)
        ll = _dot(L, L)
        uu = _dot(u, u)
        vv = _dot(v, v)
        if not ll > AXIS_EPS * (uu * vv):  # degenerate axis (also catches ll == 0)
            continue
        L = _scale3(L, 1.0 / math.sqrt(ll))
        pa0, pa1, pa2 = _dot(L, a0), _dot(L, a1), _dot(L, a2)
        pb0, pb1, pb2 = _dot(L, b0), _dot(L, b1), _dot(L, b2)
        amin, amax = min(pa0, pa1, pa2), max(pa0, pa1, pa2)
        bmin, bmax = min(pb0, pb1, pb2), max(pb0, pb1, pb2)
        up = amax - bmin  # move B along +L
        down = bmax - amin  # move B along -L
        if abs(up - down) <= tie:
            s = _dot(L, cd)
            sign = -1.0 if s < -tie else 1.0
            cand = min(up, down)
        elif up < down:
            sign, cand = 1.0, up
        else:
            sign, cand = -1.0, down
        if cand < best - tie:
            best = cand
            bn = _scale3(L, sign)
    if best == np.inf:
        return 0.0, (0.0, 0.0, 0.0)
    return max(best, 0.0), bn


@njit(cache=True, fastmath=False)
def _far_pair(px, py, pz, n):
    """Indices of the farthest pair among n points (i == j when n == 1)."""
    bi, bj, bd = 0, 0, -1.0
    for i in range(n):
        for j in range(i, n):
            d = (px[i] - px[j]) ** 2 + (py[i] - py[j]) ** 2 + (pz[i] - pz[j]) ** 2
            if d > bd:
                bi, bj, bd = i, j, d
    return bi, bj


@njit(cache=True, fastmath=False)
def _plane_segment(a0, a1, a2, b0, b1, b2, mag):
    """A ∩ plane(B) clipped by B's side half-spaces, each widened by TIE_REL * mag (so that
    rounding cannot cut off a contact on B's boundary): (ok, p, q)."""
    nB = _cross(_sub(b1, b0), _sub(b2, b0))
    verts = (a0, a1, a2)
    sd = (_dot(nB, _sub(a0, b0)), _dot(nB, _sub(a1, b0)), _dot(nB, _sub(a2, b0)))
    # A's points on plane(B): vertices on it, and edge crossings (at most 3 points)
    c0 = c1 = c2 = a0
    n = 0
    for i in range(3):
        j = (i + 1) % 3
        si, sj = sd[i], sd[j]
        if si == 0.0:
            x = verts[i]
        elif (si < 0.0 < sj) or (sj < 0.0 < si):
            x = _lerp(verts[i], verts[j], si / (si - sj))
        else:
            continue
        if n == 0:
            c0 = x
        elif n == 1:
            c1 = x
        else:
            c2 = x
        n += 1
    if n == 0:
        return False, a0, a0
    p, q = c0, c0
    if n >= 2:
        q = c1
        if n == 3:  # the farthest two of three (a vertex on the plane and a crossing, with rounding)
            d01, d02, d12 = _dot(_sub(c0, c1), _sub(c0, c1)), _dot(_sub(c0, c2), _sub(c0, c2)), \
                _dot(_sub(c1, c2), _sub(c1, c2))
            if d02 > d01 and d02 >= d12:
                q = c2
            elif d12 > d01:
                p, q = c1, c2
    # clip p + t (q - p), t in [0, 1], by B's inward side normals nB x eB_j
    d = _sub(q, p)
    t0, t1 = 0.0, 1.0
    bs = (b0, b1, b2)
    for k in range(3):
        m = _cross(nB, _sub(bs[(k + 1) % 3], bs[k]))
        f = _dot(m, _sub(p, bs[k])) + TIE_REL * mag * math.sqrt(_dot(m, m))  # >= 0 inside
        g = _dot(m, d)
        if g == 0.0:
            if f < 0.0:
                return False, p, q
        else:
            t = -f / g
            if g > 0.0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
    if t0 > t1:
        return False, p, q
    return True, _lerp(p, q, t0), _lerp(p, q, t1)


@njit(cache=True, fastmath=False)
def _coplanar_polygon(a0, a1, a2, b0, b1, b2, nB, mag):
    """Diameter of A clipped by B's side half-planes (Sutherland-Hodgman), each widened by
    TIE_REL * mag as in ``_plane_segment``: (ok, p, q)."""
    cx = np.empty(9)
    cy = np.empty(9)
    cz = np.empty(9)
    nx = np.empty(9)
    ny = np.empty(9)
    nz = np.empty(9)
    cx[0], cy[0], cz[0] = a0
    cx[1], cy[1], cz[1] = a1
    cx[2], cy[2], cz[2] = a2
    n = 3
    bs = (b0, b1, b2)
    for k in range(3):
        bk = bs[k]
        m = _cross(nB, _sub(bs[(k + 1) % 3], bk))
        widen = TIE_REL * mag * math.sqrt(_dot(m, m))
        out = 0
        for i in range(n):
            j = (i + 1) % n
            P = (cx[i], cy[i], cz[i])
            Q = (cx[j], cy[j], cz[j])
            fp = _dot(m, _sub(P, bk)) + widen
            fq = _dot(m, _sub(Q, bk)) + widen
            if fp >= 0.0:
                nx[out], ny[out], nz[out] = P
                out += 1
            if (fp >= 0.0) != (fq >= 0.0):
                X = _lerp(P, Q, fp / (fp - fq))
                nx[out], ny[out], nz[out] = X
                out += 1
        n = out
        for i in range(n):
            cx[i], cy[i], cz[i] = nx[i], ny[i], nz[i]
        if n == 0:
            return False, a0, a0
    i, j = _far_pair(cx, cy, cz, np.int64(n))
    return True, (cx[i], cy[i], cz[i]), (cx[j], cy[j], cz[j])


@njit(cache=True, fastmath=False)
def _lex_less(p, q):
    if p[0] != q[0]:
        return p[0] < q[0]
    if p[1] != q[1]:
        return p[1] < q[1]
    return p[2] < q[2]


@njit(cache=True, fastmath=False)
def pair_contact(a0, a1, a2, b0, b1, b2):
    """Contact geometry of one intersecting pair (3-tuples, any frame): (p, q, normal, depth);
    see the module docstring. The caller's frame should be near the triangles (the query
    passes A-translated coordinates); this function also moves a0 to the origin."""
    o = a0
    a0, a1, a2 = (0.0, 0.0, 0.0), _sub(a1, o), _sub(a2, o)
    b0, b1, b2 = _sub(b0, o), _sub(b1, o), _sub(b2, o)
    mag = 0.0
    for v in (a1, a2, b0, b1, b2):
        mag = max(mag, abs(v[0]), abs(v[1]), abs(v[2]))
    nA = _cross(a1, a2)
    nB = _cross(_sub(b1, b0), _sub(b2, b0))
    flatA = _is_flat(nA, a1, _sub(a2, a1), a2)
    flatB = _is_flat(nB, _sub(b1, b0), _sub(b2, b1), _sub(b0, b2))
    coplanar = False
    if not flatA and not flatB:
        inv = 1.0 / math.sqrt(_dot(nA, nA))
        tie = TIE_REL * mag
        coplanar = (abs(_dot(nA, b0)) * inv <= tie and abs(_dot(nA, b1)) * inv <= tie
                    and abs(_dot(nA, b2)) * inv <= tie)
    if coplanar:
        depth, normal = 0.0, _scale3(nA, 1.0 / math.sqrt(_dot(nA, nA)))
        ok, p, q = _coplanar_polygon(a0, a1, a2, b0, b1, b2, nB, mag)
    else:
        depth, normal = _depth_normal(a0, a1, a2, b0, b1, b2, mag)
        if not flatB:
            ok, p, q = _plane_segment(a0, a1, a2, b0, b1, b2, mag)
        elif not flatA:
            ok, p, q = _plane_segment(b0, b1, b2, a0, a1, a2, mag)
        else:
            ok, p, q = False, a0, a0
    if not ok:  # touching within rounding, or two degenerate triangles: the closest points' midpoint
        _, P, Q = _tri_dist(a0, a1, a2, b0, b1, b2)
        p = _scale3(_add3(P, Q), 0.5)
        q = p
    if _lex_less(q, p):
        p, q = q, p
    return _add3(p, o), _add3(q, o), normal, depth


_ZERO = (0.0, 0.0, 0.0)


@njit(cache=True, fastmath=False, inline='always')
def _xf(m, v, t):
    """M[:3, :3] v + t (t: the translation relative to A's)."""
    return (m[0, 0] * v[0] + m[0, 1] * v[1] + m[0, 2] * v[2] + t[0],
            m[1, 0] * v[0] + m[1, 1] * v[1] + m[1, 2] * v[2] + t[1],
            m[2, 0] * v[0] + m[2, 1] * v[1] + m[2, 2] * v[2] + t[2])


@njit(cache=True, fastmath=False)
def contact_geometry(va, fa, ma, vb, fb, mb, pairs, points, normals, depths):
    """Fill ``points`` (k, 2, 3), ``normals`` (k, 3), ``depths`` (k,) for the triangle
    ``pairs`` (k, 2) int32 of meshes (va, fa) and (vb, fb) placed by the (4, 4) matrices ma
    and mb (any affine map; the query passes the user's poses). World coordinates.

    Vertices are mapped as M[:3, :3] v + (t - t_a) (A's translation taken out before the
    sum, so that far-away poses do not cancel digits) and t_a is added to the points last.
    Indices are checked: a pair out of range raises IndexError (never reads out of bounds)."""
    ta = (ma[0, 3], ma[1, 3], ma[2, 3])
    tb = (mb[0, 3] - ta[0], mb[1, 3] - ta[1], mb[2, 3] - ta[2])
    na, nb = fa.shape[0], fb.shape[0]
    for r in range(pairs.shape[0]):
        i, j = pairs[r, 0], pairs[r, 1]
        if i < 0 or i >= na or j < 0 or j >= nb:
            raise IndexError("contact_geometry: triangle pair out of range")
        p, q, n, dep = pair_contact(_xf(ma, va[fa[i, 0]], _ZERO), _xf(ma, va[fa[i, 1]], _ZERO),
                                    _xf(ma, va[fa[i, 2]], _ZERO), _xf(mb, vb[fb[j, 0]], tb),
                                    _xf(mb, vb[fb[j, 1]], tb), _xf(mb, vb[fb[j, 2]], tb))
        for d in range(3):
            points[r, 0, d] = p[d] + ta[d]
            points[r, 1, d] = q[d] + ta[d]
            normals[r, d] = n[d]
        depths[r] = dep
