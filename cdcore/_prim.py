"""Kernels for exact primitive solids (see ``cdcore.primitives``): support functions, GJK
distance between convex solids, closed forms for spheres and capsules, and the
primitive-triangle / primitive-primitive intersection and distance tests.

Every shape is a *core* plus a *margin* radius (van den Bergen, "Collision Detection in
Interactive 3D Environments", sections 4.3.5 and 4.3.8): a sphere is a point core with
margin r, a capsule a segment core with margin r; boxes, convex vertex sets and triangles
are polytope cores with margin 0 (GJK ends after finitely many steps on them); cylinders
and ellipsoids are smooth cores (GJK converges only asymptotically: ended at a relative
gap of ``GJK_REL``). The distance of two shapes is ``max(0, d(cores) - r1 - r2)``.

Ellipsoid-triangle intersection is exact: the ellipsoid's inverse affine map sends it to
the unit ball and the triangle to a triangle, and they meet iff that triangle's distance
to the origin is <= 1 (an affine map keeps incidence, not distances).

A primitive in a kernel: ``kind`` (int, ``primitives.SPHERE``..``CONVEX``), ``size`` (3,),
``pose`` (4, 4) rigid world pose, and for ``CONVEX`` the rows ``verts[v0:v1]`` in its own
frame. Triangle corners are world points.
"""
import numpy as np
from numba import njit

from ._pairjit import pair_njit
from .primitives import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, SPHERE

TRIANGLE = 6  # a kernel-only kind: the core is the three corners in verts[v0:v0 + 3] (world)
GJK_MAX_ITER = 128
# GJK stops when ||v||^2 - v.w <= GJK_REL ||v||^2: the distance is then known to a relative
# error of GJK_REL / 2 (v.w / ||v|| <= d <= ||v||); 1e-12 is ~1e4 ulps of double precision,
# well above rounding in the support points of unit-scale shapes.
GJK_REL = 1e-12
# Below this squared core distance (relative to the shapes' scale squared) the cores are
# taken to overlap: the simplex's closest point is then dominated by rounding.
GJK_ABS2 = 1e-26


# ---- support functions ------------------------------------------------------------------

@njit(cache=True, inline="always")
def _margin(kind, size):
    if kind == SPHERE or kind == CAPSULE:
        return size[0]
    return 0.0


@njit(cache=True)
def core_support(kind, size, pose, verts, v0, v1, dx, dy, dz, out):
    """The point of the shape's *core* (no margin) furthest along world direction d, into
    ``out`` (3,). ``pose`` is ignored for TRIANGLE (its corners are world points)."""
    if kind == TRIANGLE:
        best = -np.inf
        bi = v0
        for i in range(v0, v0 + 3):
            s = verts[i, 0] * dx + verts[i, 1] * dy + verts[i, 2] * dz
            if s > best:
                best, bi = s, i
        out[0], out[1], out[2] = verts[bi, 0], verts[bi, 1], verts[bi, 2]
        return
    # direction in the shape frame: R^T d
    lx = pose[0, 0] * dx + pose[1, 0] * dy + pose[2, 0] * dz
    ly = pose[0, 1] * dx + pose[1, 1] * dy + pose[2, 1] * dz
    lz = pose[0, 2] * dx + pose[1, 2] * dy + pose[2, 2] * dz
    px = py = pz = 0.0
    if kind == SPHERE:
        pass
    elif kind == CAPSULE:
        pz = size[1] if lz >= 0.0 else -size[1]
    elif kind == BOX:
        px = size[0] if lx >= 0.0 else -size[0]
        py = size[1] if ly >= 0.0 else -size[1]
        pz = size[2] if lz >= 0.0 else -size[2]
    elif kind == CYLINDER:
        n = np.sqrt(lx * lx + ly * ly)
        if n > 0.0:
            px, py = size[0] * lx / n, size[0] * ly / n
        pz = size[1] if lz >= 0.0 else -size[1]
    elif kind == ELLIPSOID:
        # argmax over x^T A^-2 x <= 1 of l.x is A^2 l / |A l|
        ax, ay, az = size[0] * lx, size[1] * ly, size[2] * lz
        n = np.sqrt(ax * ax + ay * ay + az * az)
        if n > 0.0:
            px, py, pz = size[0] * ax / n, size[1] * ay / n, size[2] * az / n
        else:
            pz = size[2]
    else:  # CONVEX
        best = -np.inf
        bi = v0
        for i in range(v0, v1):
            s = verts[i, 0] * lx + verts[i, 1] * ly + verts[i, 2] * lz
            if s > best:
                best, bi = s, i
        px, py, pz = verts[bi, 0], verts[bi, 1], verts[bi, 2]
    out[0] = pose[0, 0] * px + pose[0, 1] * py + pose[0, 2] * pz + pose[0, 3]
    out[1] = pose[1, 0] * px + pose[1, 1] * py + pose[1, 2] * pz + pose[1, 3]
    out[2] = pose[2, 0] * px + pose[2, 1] * py + pose[2, 2] * pz + pose[2, 3]


@njit(cache=True)
def _center(kind, pose, verts, v0, v1, out):
    if kind == TRIANGLE:
        for k in range(3):
            out[k] = (verts[v0, k] + verts[v0 + 1, k] + verts[v0 + 2, k]) / 3.0
        return
    cx = cy = cz = 0.0
    if kind == CONVEX:
        for i in range(v0, v1):
            cx += verts[i, 0]
            cy += verts[i, 1]
            cz += verts[i, 2]
        n = max(v1 - v0, 1)
        cx, cy, cz = cx / n, cy / n, cz / n
    for k in range(3):
        out[k] = pose[k, 0] * cx + pose[k, 1] * cy + pose[k, 2] * cz + pose[k, 3]


# ---- closest point of a simplex to the origin (Ericson, Real-Time Collision Detection 5.1) --

@njit(cache=True)
def _closest_triangle(a, b, c, bary):
    """Barycentric weights (into ``bary`` (3,)) of the point of triangle abc closest to the
    origin (Ericson 5.1.5, with p = 0); a zero weight drops that vertex."""
    abx, aby, abz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    acx, acy, acz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    d1 = -(abx * a[0] + aby * a[1] + abz * a[2])
    d2 = -(acx * a[0] + acy * a[1] + acz * a[2])
    if d1 <= 0.0 and d2 <= 0.0:
        bary[0], bary[1], bary[2] = 1.0, 0.0, 0.0
        return
    d3 = -(abx * b[0] + aby * b[1] + abz * b[2])
    d4 = -(acx * b[0] + acy * b[1] + acz * b[2])
    if d3 >= 0.0 and d4 <= d3:
        bary[0], bary[1], bary[2] = 0.0, 1.0, 0.0
        return
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        bary[0], bary[1], bary[2] = 1.0 - v, v, 0.0
        return
    d5 = -(abx * c[0] + aby * c[1] + abz * c[2])
    d6 = -(acx * c[0] + acy * c[1] + acz * c[2])
    if d6 >= 0.0 and d5 <= d6:
        bary[0], bary[1], bary[2] = 0.0, 0.0, 1.0
        return
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        bary[0], bary[1], bary[2] = 1.0 - w, 0.0, w
        return
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        bary[0], bary[1], bary[2] = 0.0, 1.0 - w, w
        return
    den = va + vb + vc  # = |ab x ac|^2 in exact arithmetic
    # Each of va, vb, vc is a difference of products of dot products of magnitude |ab| |ac| M^2
    # (M: the largest |vertex|), so den and the weights vb/den, vc/den carry an absolute error of
    # ~1e-16 |ab| |ac| M^2 / den. |ab x ac|^2, computed directly (relative error ~1e-16), tells
    # when that is large: below 1e-6 |ab| |ac| M^2 (a sliver or a needle, weights good to only
    # ~1e-10 or worse; a nearly collinear triangle gave points 0.34 off on unit-scale input) the
    # best of the three edges is taken too. Both candidates lie on the triangle, so the nearer is
    # never worse than either: the edges are off by at most the sliver's width (< 1e-3 M there).
    nx = aby * acz - abz * acy
    ny = abz * acx - abx * acz
    nz = abx * acy - aby * acx
    m2 = max(a[0] * a[0] + a[1] * a[1] + a[2] * a[2],
             max(b[0] * b[0] + b[1] * b[1] + b[2] * b[2], c[0] * c[0] + c[1] * c[1] + c[2] * c[2]))
    abac = np.sqrt((abx * abx + aby * aby + abz * abz) * (acx * acx + acy * acy + acz * acz))
    if nx * nx + ny * ny + nz * nz > 1e-6 * abac * m2 and den > 0.0:
        v = vb / den
        w = vc / den
        bary[0], bary[1], bary[2] = 1.0 - v - w, v, w
        return
    best = np.inf
    if den > 0.0:  # va, vb, vc >= 0 here (the vertex and edge regions were ruled out): on the triangle
        v = vb / den
        w = vc / den
        x = a[0] + v * abx + w * acx
        y = a[1] + v * aby + w * acy
        z = a[2] + v * abz + w * acz
        best = x * x + y * y + z * z
        bary[0], bary[1], bary[2] = 1.0 - v - w, v, w
    for e in range(3):
        p, q = (a, b) if e == 0 else ((b, c) if e == 1 else (c, a))
        dx, dy, dz = q[0] - p[0], q[1] - p[1], q[2] - p[2]
        ll = dx * dx + dy * dy + dz * dz
        t = 0.0
        if ll > 0.0:
            t = min(1.0, max(0.0, -(p[0] * dx + p[1] * dy + p[2] * dz) / ll))
        x, y, z = p[0] + t * dx, p[1] + t * dy, p[2] + t * dz
        dd = x * x + y * y + z * z
        if dd < best:
            best = dd
            if e == 0:
                bary[0], bary[1], bary[2] = 1.0 - t, t, 0.0
            elif e == 1:
                bary[0], bary[1], bary[2] = 0.0, 1.0 - t, t
            else:
                bary[0], bary[1], bary[2] = t, 0.0, 1.0 - t


@njit(cache=True)
def _reduce(W, A, B, n, lam):
    """Closest point of the simplex W[:n] to the origin: weights ``lam`` (4,); the simplex
    (with its witness rows A, B) is reduced to the vertices of positive weight. Returns the
    new size (0 means the origin is inside a tetrahedron)."""
    if n == 1:
        lam[0] = 1.0
        return 1
    if n == 2:
        dx, dy, dz = W[1, 0] - W[0, 0], W[1, 1] - W[0, 1], W[1, 2] - W[0, 2]
        ll = dx * dx + dy * dy + dz * dz
        t = 0.0
        if ll > 0.0:
            t = -(W[0, 0] * dx + W[0, 1] * dy + W[0, 2] * dz) / ll
        if t <= 0.0:
            lam[0] = 1.0
            return 1
        if t >= 1.0:
            W[0], A[0], B[0] = W[1], A[1], B[1]
            lam[0] = 1.0
            return 1
        lam[0], lam[1] = 1.0 - t, t
        return 2
    bary = np.empty(3)
    if n == 3:
        _closest_triangle(W[0], W[1], W[2], bary)
    else:
        # origin inside the tetrahedron: on the same side of each face as the opposite vertex
        inside = True
        best = np.inf
        bface = 0
        bb = np.zeros(3)
        for f in range(4):
            i0, i1, i2 = (f + 1) % 4, (f + 2) % 4, (f + 3) % 4
            ux, uy, uz = W[i1, 0] - W[i0, 0], W[i1, 1] - W[i0, 1], W[i1, 2] - W[i0, 2]
            vx, vy, vz = W[i2, 0] - W[i0, 0], W[i2, 1] - W[i0, 1], W[i2, 2] - W[i0, 2]
            nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
            so = -(nx * W[i0, 0] + ny * W[i0, 1] + nz * W[i0, 2])
            sv = nx * (W[f, 0] - W[i0, 0]) + ny * (W[f, 1] - W[i0, 1]) + nz * (W[f, 2] - W[i0, 2])
            # a nearly flat tetrahedron (|sv| at rounding level of the edge lengths cubed)
            # cannot hold the origin reliably: use its faces
            ll = (ux * ux + uy * uy + uz * uz) * (vx * vx + vy * vy + vz * vz)
            wx, wy, wz = W[f, 0] - W[i0, 0], W[f, 1] - W[i0, 1], W[f, 2] - W[i0, 2]
            if so * sv < 0.0 or sv * sv <= 1e-20 * ll * (wx * wx + wy * wy + wz * wz):
                inside = False
            _closest_triangle(W[i0], W[i1], W[i2], bary)
            x = bary[0] * W[i0, 0] + bary[1] * W[i1, 0] + bary[2] * W[i2, 0]
            y = bary[0] * W[i0, 1] + bary[1] * W[i1, 1] + bary[2] * W[i2, 1]
            z = bary[0] * W[i0, 2] + bary[1] * W[i1, 2] + bary[2] * W[i2, 2]
            dd = x * x + y * y + z * z
            if dd < best:
                best, bface = dd, f
                bb[0], bb[1], bb[2] = bary[0], bary[1], bary[2]
        if inside:
            return 0
        # move the best face to rows 0..2
        i0, i1, i2 = (bface + 1) % 4, (bface + 2) % 4, (bface + 3) % 4
        Wt = np.empty((3, 3))
        At = np.empty((3, 3))
        Bt = np.empty((3, 3))
        for r, s in ((0, i0), (1, i1), (2, i2)):
            Wt[r], At[r], Bt[r] = W[s], A[s], B[s]
        for r in range(3):
            W[r], A[r], B[r] = Wt[r], At[r], Bt[r]
        bary[0], bary[1], bary[2] = bb[0], bb[1], bb[2]
    m = 0
    for r in range(3):
        if bary[r] > 0.0:
            W[m], A[m], B[m] = W[r], A[r], B[r]
            lam[m] = bary[r]
            m += 1
    return m


@njit(cache=True)
def gjk(ka, sa, pa, va, a0, a1, kb, sb, pb, vb, b0, b1, stop, wa, wb):
    """Distance between the *cores* of two shapes (margins not subtracted).

    ``stop`` >= 0: return as soon as the core distance is known to be <= ``stop`` (then the
    return value is an upper bound <= stop) or > ``stop`` (a lower bound > stop); ``stop``
    < 0: to convergence. Witness points (world) go into ``wa``, ``wb`` (3,) each. Returns 0
    when the cores overlap (witnesses then meaningless)."""
    buf = np.empty(46)  # one allocation, not six: GJK runs per primitive pair
    W = buf[0:12].reshape((4, 3))
    A = buf[12:24].reshape((4, 3))
    B = buf[24:36].reshape((4, 3))
    lam = buf[36:40]
    lam[:] = 0.0
    p = buf[40:43]
    q = buf[43:46]
    _center(ka, pa, va, a0, a1, p)
    _center(kb, pb, vb, b0, b1, q)
    vx, vy, vz = p[0] - q[0], p[1] - q[1], p[2] - q[2]
    if vx == 0.0 and vy == 0.0 and vz == 0.0:
        vx = 1.0
    core_support(ka, sa, pa, va, a0, a1, -vx, -vy, -vz, p)
    core_support(kb, sb, pb, vb, b0, b1, vx, vy, vz, q)
    W[0, 0], W[0, 1], W[0, 2] = p[0] - q[0], p[1] - q[1], p[2] - q[2]
    A[0], B[0] = p, q
    n = 1
    lam[0] = 1.0
    vx, vy, vz = W[0, 0], W[0, 1], W[0, 2]
    scale2 = 1.0 + vx * vx + vy * vy + vz * vz
    lower2 = 0.0  # the best lower bound (v.w)^2 / |v|^2 on the distance found so far, squared
    for _ in range(GJK_MAX_ITER):
        vv = vx * vx + vy * vy + vz * vz
        if vv <= GJK_ABS2 * scale2 and lower2 == 0.0:
            return 0.0
        core_support(ka, sa, pa, va, a0, a1, -vx, -vy, -vz, p)
        core_support(kb, sb, pb, vb, b0, b1, vx, vy, vz, q)
        wx, wy, wz = p[0] - q[0], p[1] - q[1], p[2] - q[2]
        vw = vx * wx + vy * wy + vz * wz
        if stop >= 0.0 and vw > 0.0 and vw * vw > stop * stop * vv:
            break  # lower bound v.w / |v| > stop: separated by more than stop
        if vw > 0.0:
            lower2 = max(lower2, vw * vw / vv)
        if vv - vw <= GJK_REL * vv or vv - lower2 <= 2.0 * GJK_REL * vv:
            break  # converged (w adds nothing; or the bounds meet)
        dup = False
        for r in range(n):
            if W[r, 0] == wx and W[r, 1] == wy and W[r, 2] == wz:
                dup = True
        if dup:
            break  # polytope: the support point repeats, v is exact up to rounding
        W[n, 0], W[n, 1], W[n, 2] = wx, wy, wz
        A[n], B[n] = p, q
        m = _reduce(W, A, B, n + 1, lam)
        if m == 0:
            if lower2 > 0.0:  # a separating direction was seen: rounding, not overlap;
                break         # keep the previous simplex, weights and v
            return 0.0
        n = m
        vx = vy = vz = 0.0
        for r in range(n):
            vx += lam[r] * W[r, 0]
            vy += lam[r] * W[r, 1]
            vz += lam[r] * W[r, 2]
        nv = vx * vx + vy * vy + vz * vz
        if nv >= vv:  # no progress (rounding): keep the previous bound
            break
        if stop >= 0.0 and nv <= stop * stop:
            vv = nv
            break  # upper bound |v| <= stop
    for k in range(3):
        wa[k] = 0.0
        wb[k] = 0.0
    for r in range(n):
        for k in range(3):
            wa[k] += lam[r] * A[r, k]
            wb[k] += lam[r] * B[r, k]
    return np.sqrt(vx * vx + vy * vy + vz * vz)


# ---- closed forms --------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _segseg_params(d1x, d1y, d1z, d2x, d2y, d2z, rx, ry, rz):
    """Parameters (s, t) of the closest points p1 + s d1, p2 + t d2 of two segments, r =
    p1 - p2 (Ericson 5.1.9, degenerate segments handled). Scalars: a kernel that called
    this per primitive pair with (3,) arrays spent most of its time allocating them."""
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    if a <= 0.0 and e <= 0.0:
        s = t = 0.0
    elif a <= 0.0:
        s = 0.0
        t = min(1.0, max(0.0, f / e))
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= 0.0:
            t = 0.0
            s = min(1.0, max(0.0, -c / a))
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            den = a * e - b * b
            s = min(1.0, max(0.0, (b * f - c * e) / den)) if den > 0.0 else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = min(1.0, max(0.0, -c / a))
            elif t > 1.0:
                t = 1.0
                s = min(1.0, max(0.0, (b - c) / a))
    return s, t


@njit(cache=True)
def segment_segment(p1, q1, p2, q2, c1, c2):
    """Closest points (into c1, c2) of segments p1q1 and p2q2; returns the distance
    (Ericson 5.1.9, degenerate segments handled)."""
    s, t = _segseg_params(q1[0] - p1[0], q1[1] - p1[1], q1[2] - p1[2], q2[0] - p2[0], q2[1] - p2[1],
                          q2[2] - p2[2], p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2])
    for k in range(3):
        c1[k] = p1[k] + s * (q1[k] - p1[k])
        c2[k] = p2[k] + t * (q2[k] - p2[k])
    dx, dy, dz = c1[0] - c2[0], c1[1] - c2[1], c1[2] - c2[2]
    return np.sqrt(dx * dx + dy * dy + dz * dz)


@pair_njit
def _round_round_hit(ka, sa, pa, kb, sb, pb):
    """Closed form, no arrays: whether two spheres/capsules meet (core segments' distance
    <= r_a + r_b). The same arithmetic as ``_axis_segment`` + ``segment_segment``."""
    ha = sa[1] if ka == CAPSULE else 0.0
    hb = sb[1] if kb == CAPSULE else 0.0
    p1x, p1y, p1z = pa[0, 3] - ha * pa[0, 2], pa[1, 3] - ha * pa[1, 2], pa[2, 3] - ha * pa[2, 2]
    q1x, q1y, q1z = pa[0, 3] + ha * pa[0, 2], pa[1, 3] + ha * pa[1, 2], pa[2, 3] + ha * pa[2, 2]
    p2x, p2y, p2z = pb[0, 3] - hb * pb[0, 2], pb[1, 3] - hb * pb[1, 2], pb[2, 3] - hb * pb[2, 2]
    q2x, q2y, q2z = pb[0, 3] + hb * pb[0, 2], pb[1, 3] + hb * pb[1, 2], pb[2, 3] + hb * pb[2, 2]
    d1x, d1y, d1z = q1x - p1x, q1y - p1y, q1z - p1z
    d2x, d2y, d2z = q2x - p2x, q2y - p2y, q2z - p2z
    s, t = _segseg_params(d1x, d1y, d1z, d2x, d2y, d2z, p1x - p2x, p1y - p2y, p1z - p2z)
    dx = (p1x + s * d1x) - (p2x + t * d2x)
    dy = (p1y + s * d1y) - (p2y + t * d2y)
    dz = (p1z + s * d1z) - (p2z + t * d2z)
    return np.sqrt(dx * dx + dy * dy + dz * dz) <= sa[0] + sb[0]


@njit(cache=True)
def _axis_segment(kind, size, pose, p, q):
    """The core segment of a sphere (a point: p == q) or capsule, world coordinates."""
    h = size[1] if kind == CAPSULE else 0.0
    for k in range(3):
        p[k] = pose[k, 3] - h * pose[k, 2]
        q[k] = pose[k, 3] + h * pose[k, 2]


@njit(cache=True)
def _ellipsoid_triangle_hit(size, pose, t0, t1, t2):
    """Exact: whether the solid ellipsoid meets the triangle (corners t0..t2, world)."""
    a = np.empty(3)
    b = np.empty(3)
    c = np.empty(3)
    for src, dst in ((t0, a), (t1, b), (t2, c)):
        dx, dy, dz = src[0] - pose[0, 3], src[1] - pose[1, 3], src[2] - pose[2, 3]
        for k in range(3):  # A^-1 R^T (x - t)
            dst[k] = (pose[0, k] * dx + pose[1, k] * dy + pose[2, k] * dz) / size[k]
    bary = np.empty(3)
    _closest_triangle(a, b, c, bary)
    x = bary[0] * a[0] + bary[1] * b[0] + bary[2] * c[0]
    y = bary[0] * a[1] + bary[1] * b[1] + bary[2] * c[1]
    z = bary[0] * a[2] + bary[1] * b[2] + bary[2] * c[2]
    return x * x + y * y + z * z <= 1.0


# ---- pair tests ------------------------------------------------------------------------------

@njit(cache=True)
def shape_distance(ka, sa, pa, va, a0, a1, kb, sb, pb, vb, b0, b1, wa, wb):
    """Distance between two solids (0 when they intersect); witness points into wa, wb
    (on the surfaces when apart)."""
    ra, rb = _margin(ka, sa), _margin(kb, sb)
    roundA = ka == SPHERE or ka == CAPSULE
    roundB = kb == SPHERE or kb == CAPSULE
    if roundA and roundB:
        p1 = np.empty(3)
        q1 = np.empty(3)
        p2 = np.empty(3)
        q2 = np.empty(3)
        _axis_segment(ka, sa, pa, p1, q1)
        _axis_segment(kb, sb, pb, p2, q2)
        d = segment_segment(p1, q1, p2, q2, wa, wb)
    else:
        d = gjk(ka, sa, pa, va, a0, a1, kb, sb, pb, vb, b0, b1, -1.0, wa, wb)
    if d <= ra + rb:
        return 0.0
    # move the witnesses out to the surfaces
    for k in range(3):
        u = (wb[k] - wa[k]) / d
        wa[k] += ra * u
        wb[k] -= rb * u
    return d - ra - rb


@pair_njit
def _sphere_box_hit(r, c, size, pose):
    """Closed form: the ball (centre c, radius r) meets the solid box iff the box point
    nearest to c (c clamped to the box in its frame) is within r."""
    dd = 0.0
    for k in range(3):
        x = (pose[0, k] * (c[0] - pose[0, 3]) + pose[1, k] * (c[1] - pose[1, 3])
             + pose[2, k] * (c[2] - pose[2, 3]))
        e = abs(x) - size[k]
        if e > 0.0:
            dd += e * e
    return dd <= r * r


@pair_njit
def _box_box_hit(sa, pa, sb, pb):
    """Exact separating-axis test of two solid boxes (Gottschalk et al. 1996: 3 face axes
    of A, 3 of B, 9 edge cross products); touching boxes are not separated. No epsilon:
    parallel edges give a zero cross-product axis, on which the test cannot separate.
    Unrolled on scalars (C = A^T B, T = A^T (tb - ta)): no arrays to allocate per pair."""
    dx, dy, dz = pb[0, 3] - pa[0, 3], pb[1, 3] - pa[1, 3], pb[2, 3] - pa[2, 3]
    t0 = pa[0, 0] * dx + pa[1, 0] * dy + pa[2, 0] * dz
    c00 = pa[0, 0] * pb[0, 0] + pa[1, 0] * pb[1, 0] + pa[2, 0] * pb[2, 0]
    m00 = abs(c00)
    c01 = pa[0, 0] * pb[0, 1] + pa[1, 0] * pb[1, 1] + pa[2, 0] * pb[2, 1]
    m01 = abs(c01)
    c02 = pa[0, 0] * pb[0, 2] + pa[1, 0] * pb[1, 2] + pa[2, 0] * pb[2, 2]
    m02 = abs(c02)
    t1 = pa[0, 1] * dx + pa[1, 1] * dy + pa[2, 1] * dz
    c10 = pa[0, 1] * pb[0, 0] + pa[1, 1] * pb[1, 0] + pa[2, 1] * pb[2, 0]
    m10 = abs(c10)
    c11 = pa[0, 1] * pb[0, 1] + pa[1, 1] * pb[1, 1] + pa[2, 1] * pb[2, 1]
    m11 = abs(c11)
    c12 = pa[0, 1] * pb[0, 2] + pa[1, 1] * pb[1, 2] + pa[2, 1] * pb[2, 2]
    m12 = abs(c12)
    t2 = pa[0, 2] * dx + pa[1, 2] * dy + pa[2, 2] * dz
    c20 = pa[0, 2] * pb[0, 0] + pa[1, 2] * pb[1, 0] + pa[2, 2] * pb[2, 0]
    m20 = abs(c20)
    c21 = pa[0, 2] * pb[0, 1] + pa[1, 2] * pb[1, 1] + pa[2, 2] * pb[2, 1]
    m21 = abs(c21)
    c22 = pa[0, 2] * pb[0, 2] + pa[1, 2] * pb[1, 2] + pa[2, 2] * pb[2, 2]
    m22 = abs(c22)
    a0, a1, a2 = sa[0], sa[1], sa[2]
    b0, b1, b2 = sb[0], sb[1], sb[2]
    # A's face normals
    if abs(t0) > a0 + b0 * m00 + b1 * m01 + b2 * m02:
        return False
    if abs(t1) > a1 + b0 * m10 + b1 * m11 + b2 * m12:
        return False
    if abs(t2) > a2 + b0 * m20 + b1 * m21 + b2 * m22:
        return False
    # B's face normals
    if abs(t0 * c00 + t1 * c10 + t2 * c20) > a0 * m00 + a1 * m10 + a2 * m20 + b0:
        return False
    if abs(t0 * c01 + t1 * c11 + t2 * c21) > a0 * m01 + a1 * m11 + a2 * m21 + b1:
        return False
    if abs(t0 * c02 + t1 * c12 + t2 * c22) > a0 * m02 + a1 * m12 + a2 * m22 + b2:
        return False
    # edge-edge axes A_i x B_j
    if abs(t2 * c10 - t1 * c20) > (a1 * m20 + a2 * m10
                                            + b1 * m02 + b2 * m01):
        return False
    if abs(t2 * c11 - t1 * c21) > (a1 * m21 + a2 * m11
                                            + b2 * m00 + b0 * m02):
        return False
    if abs(t2 * c12 - t1 * c22) > (a1 * m22 + a2 * m12
                                            + b0 * m01 + b1 * m00):
        return False
    if abs(t0 * c20 - t2 * c00) > (a2 * m00 + a0 * m20
                                            + b1 * m12 + b2 * m11):
        return False
    if abs(t0 * c21 - t2 * c01) > (a2 * m01 + a0 * m21
                                            + b2 * m10 + b0 * m12):
        return False
    if abs(t0 * c22 - t2 * c02) > (a2 * m02 + a0 * m22
                                            + b0 * m11 + b1 * m10):
        return False
    if abs(t1 * c00 - t0 * c10) > (a0 * m10 + a1 * m00
                                            + b1 * m22 + b2 * m21):
        return False
    if abs(t1 * c01 - t0 * c11) > (a0 * m11 + a1 * m01
                                            + b2 * m20 + b0 * m22):
        return False
    if abs(t1 * c02 - t0 * c12) > (a0 * m12 + a1 * m02
                                            + b0 * m21 + b1 * m20):
        return False
    return True


@pair_njit
def has_closed_form(ka, kb):
    """Whether ``closed_form_hit`` decides a pair of these kinds (no GJK, no arrays)."""
    if (ka == SPHERE or ka == CAPSULE) and (kb == SPHERE or kb == CAPSULE):
        return True
    return (ka == BOX and kb == BOX) or (ka == SPHERE and kb == BOX) or (kb == SPHERE and ka == BOX)


@pair_njit
def closed_form_hit(ka, sa, pa, kb, sb, pb):
    """Whether two solids meet, for the kinds ``has_closed_form`` accepts: sphere/capsule
    pairs (segment distance), box-box (15-axis SAT), sphere-box (clamped centre). Allocates
    nothing: compiled without reference counting, cheap to call per primitive pair."""
    if (ka == SPHERE or ka == CAPSULE) and (kb == SPHERE or kb == CAPSULE):
        return _round_round_hit(ka, sa, pa, kb, sb, pb)
    if ka == BOX and kb == BOX:
        return _box_box_hit(sa, pa, sb, pb)
    if ka == SPHERE:
        return _sphere_box_hit(sa[0], pa[:3, 3], sb, pb)
    return _sphere_box_hit(sb[0], pb[:3, 3], sa, pa)


@njit(cache=True)
def shapes_intersect(ka, sa, pa, va, a0, a1, kb, sb, pb, vb, b0, b1):
    """Whether two solids intersect (touching counts), with GJK's early exits."""
    if has_closed_form(ka, kb):
        return closed_form_hit(ka, sa, pa, kb, sb, pb)
    if ka == ELLIPSOID and kb == TRIANGLE:
        return _ellipsoid_triangle_hit(sa, pa, vb[b0], vb[b0 + 1], vb[b0 + 2])
    if kb == ELLIPSOID and ka == TRIANGLE:
        return _ellipsoid_triangle_hit(sb, pb, va[a0], va[a0 + 1], va[a0 + 2])
    ra, rb = _margin(ka, sa), _margin(kb, sb)
    wa = np.empty(3)
    wb = np.empty(3)
    return gjk(ka, sa, pa, va, a0, a1, kb, sb, pb, vb, b0, b1, ra + rb, wa, wb) <= ra + rb


@njit(cache=True)
def prim_triangle_intersect(kind, size, pose, verts, v0, v1, tri):
    """Whether the solid primitive meets the triangle ``tri`` (3, 3) (world corners)."""
    return shapes_intersect(np.int64(kind), size, pose, verts, np.int64(v0), np.int64(v1), np.int64(TRIANGLE), size,
                            pose, tri, np.int64(0), np.int64(3))


@njit(cache=True)
def prim_triangle_distance(kind, size, pose, verts, v0, v1, tri, wa, wb):
    return shape_distance(np.int64(kind), size, pose, verts, np.int64(v0), np.int64(v1), np.int64(TRIANGLE), size,
                          pose, tri, np.int64(0), np.int64(3), wa, wb)


@njit(cache=True)
def prim_pairs_intersect(kind, size, vert_off, verts, poses, pairs):
    """For each row (i, j) of ``pairs``: whether primitives i and j (world ``poses``)
    intersect. ``kind`` (G,) int32, ``size`` (G, 3), ``vert_off`` (G + 1,) int64 rows of
    ``verts`` per primitive (CONVEX)."""
    out = np.zeros(pairs.shape[0], dtype=np.bool_)
    for k in range(pairs.shape[0]):
        i, j = pairs[k, 0], pairs[k, 1]
        out[k] = shapes_intersect(np.int64(kind[i]), size[i], poses[i], verts, np.int64(vert_off[i]),
                                  np.int64(vert_off[i + 1]), np.int64(kind[j]), size[j], poses[j], verts,
                                  np.int64(vert_off[j]), np.int64(vert_off[j + 1]))
    return out


@njit(cache=True)
def prim_pairs_distance(kind, size, vert_off, verts, poses, pairs, witness):
    """Distances of the pairs (see ``prim_pairs_intersect``); witnesses into (P, 2, 3)."""
    out = np.empty(pairs.shape[0])
    for k in range(pairs.shape[0]):
        i, j = pairs[k, 0], pairs[k, 1]
        out[k] = shape_distance(np.int64(kind[i]), size[i], poses[i], verts, np.int64(vert_off[i]),
                                np.int64(vert_off[i + 1]), np.int64(kind[j]), size[j], poses[j], verts,
                                np.int64(vert_off[j]), np.int64(vert_off[j + 1]),
                                witness[k, 0], witness[k, 1])
    return out


def pack_primitives(prims):
    """(kind (G,) int32, size (G, 3), vert_off (G + 1,) int64, verts (V, 3)) of a list of
    ``Primitive``s; their ``pose`` is not packed (the caller's poses include it)."""
    G = len(prims)
    kind = np.array([p.code for p in prims], dtype=np.int32).reshape(G)
    size = np.array([p.size for p in prims], dtype=np.float64).reshape(G, 3)
    counts = [0 if p.vertices is None else len(p.vertices) for p in prims]
    vert_off = np.cumsum([0] + counts).astype(np.int64)
    vs = [p.vertices for p in prims if p.vertices is not None]
    verts = np.ascontiguousarray(np.vstack(vs)) if vs else np.zeros((1, 3))
    return kind, size, vert_off, verts


__all__ = ["TRIANGLE", "core_support", "gjk", "segment_segment", "shape_distance", "shapes_intersect",
           "prim_triangle_intersect", "prim_triangle_distance", "prim_pairs_intersect", "prim_pairs_distance",
           "pack_primitives"]
