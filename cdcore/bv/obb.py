"""Oriented boxes (Gottschalk et al. 1996): covariance fit, fixed-axes refit and merge.

Axes are stored as the columns of the node's 3x3 matrix, sorted by decreasing extent
(long, mid, short), so the separating-axis ids of the overlap tests name roles; the
dual OBB-sphere test (Chang et al. 2010) relies on that order.
"""
import numpy as np
from numba import njit

from .._layout import C0, E0, R0, SIZE
from .._linalg import orthonormal_frame, sym_eig3
from .._pairjit import pair_njit
from .aabb import box_size


@njit(cache=True)
def covariance_axes(node_axes, tri_m1, tri_m2, pts_m1, pts_m2, tri_area, prim_order, start, count, work=None):
    """Principal axes of the node's triangles into ``node_axes`` (3, 3) columns.

    Area-weighted covariance of the triangles' surface (Gottschalk's continuous formula,
    precomputed per triangle as first and second moments ``tri_m1`` (m, 3), ``tri_m2``
    (m, 6)); when the total area vanishes (all triangles degenerate) the covariance of
    the vertices (``pts_m1``, ``pts_m2``) is used instead. ``work``: scratch for
    ``sym_eig3``.
    """
    area = 0.0
    for k in range(start, start + count):
        area += tri_area[prim_order[k]]
    m1 = tri_m1
    m2 = tri_m2
    w = area
    if not area > 0.0:
        m1 = pts_m1
        m2 = pts_m2
        w = 3.0 * count
    s0 = s1 = s2 = 0.0
    xx = xy = xz = yy = yz = zz = 0.0
    for k in range(start, start + count):
        f = prim_order[k]
        s0 += m1[f, 0]
        s1 += m1[f, 1]
        s2 += m1[f, 2]
        xx += m2[f, 0]
        xy += m2[f, 1]
        xz += m2[f, 2]
        yy += m2[f, 3]
        yz += m2[f, 4]
        zz += m2[f, 5]
    mx, my, mz = s0 / w, s1 / w, s2 / w
    # second moments are stored xx, xy, xz, yy, yz, zz
    sym_eig3(xx / w - mx * mx, xy / w - mx * my, xz / w - mx * mz, yy / w - my * my, yz / w - my * mz,
             zz / w - mz * mz, node_axes, work)


@pair_njit
def fit_prims_axes(nodes_f, node, verts, faces, prim_order, start, count, pad):
    """Tightest box of the node's triangles along the axes already in the node row;
    then sort the axes by decreasing extent."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    r00, r01, r02 = nodes_f[node, R0], nodes_f[node, R0 + 1], nodes_f[node, R0 + 2]
    r10, r11, r12 = nodes_f[node, R0 + 3], nodes_f[node, R0 + 4], nodes_f[node, R0 + 5]
    r20, r21, r22 = nodes_f[node, R0 + 6], nodes_f[node, R0 + 7], nodes_f[node, R0 + 8]
    for k in range(start, start + count):
        f = prim_order[k]
        for c in range(3):
            v = faces[f, c]
            x = verts[v, 0]
            y = verts[v, 1]
            z = verts[v, 2]
            p0 = r00 * x + r10 * y + r20 * z
            p1 = r01 * x + r11 * y + r21 * z
            p2 = r02 * x + r12 * y + r22 * z
            lo0 = min(lo0, p0)
            hi0 = max(hi0, p0)
            lo1 = min(lo1, p1)
            hi1 = max(hi1, p1)
            lo2 = min(lo2, p2)
            hi2 = max(hi2, p2)
    _write_local_box(nodes_f, node, lo0, lo1, lo2, hi0, hi1, hi2, pad)


@pair_njit
def _write_local_box(nodes_f, node, lo0, lo1, lo2, hi0, hi1, hi2, pad):
    """Store a box given by its interval along each of the node's axes, then sort."""
    m0, m1, m2 = 0.5 * (lo0 + hi0), 0.5 * (lo1 + hi1), 0.5 * (lo2 + hi2)
    for d in range(3):
        nodes_f[node, C0 + d] = (nodes_f[node, R0 + 3 * d] * m0 + nodes_f[node, R0 + 3 * d + 1] * m1
                                 + nodes_f[node, R0 + 3 * d + 2] * m2)
    # pad covers both the rounding of this projection and of the later transforms
    nodes_f[node, E0] = 0.5 * (hi0 - lo0) + pad
    nodes_f[node, E0 + 1] = 0.5 * (hi1 - lo1) + pad
    nodes_f[node, E0 + 2] = 0.5 * (hi2 - lo2) + pad
    sort_axes(nodes_f, node)
    nodes_f[node, SIZE] = box_size(nodes_f, node)


@pair_njit
def sort_axes(nodes_f, node):
    """Order the box axes long, mid, short (swapping columns with their extents) and
    keep the frame right-handed."""
    for _ in range(2):
        for a in range(2):
            if nodes_f[node, E0 + a] < nodes_f[node, E0 + a + 1]:
                t = nodes_f[node, E0 + a]
                nodes_f[node, E0 + a] = nodes_f[node, E0 + a + 1]
                nodes_f[node, E0 + a + 1] = t
                for r in range(3):
                    t = nodes_f[node, R0 + 3 * r + a]
                    nodes_f[node, R0 + 3 * r + a] = nodes_f[node, R0 + 3 * r + a + 1]
                    nodes_f[node, R0 + 3 * r + a + 1] = t
    # column 2 = column 0 x column 1 (a sign flip of an axis changes no box)
    x0, x1, x2 = nodes_f[node, R0], nodes_f[node, R0 + 3], nodes_f[node, R0 + 6]
    y0, y1, y2 = nodes_f[node, R0 + 1], nodes_f[node, R0 + 4], nodes_f[node, R0 + 7]
    nodes_f[node, R0 + 2] = x1 * y2 - x2 * y1
    nodes_f[node, R0 + 5] = x2 * y0 - x0 * y2
    nodes_f[node, R0 + 8] = x0 * y1 - x1 * y0


@pair_njit
def merge_keep_axes(nodes_f, node, left, right):
    """Enclose the two children's boxes in a box along the node's current axes: the bottom-up
    refit of an OBB tree. Conservative, looser than a fit to the primitives, and one pass.
    A child box (centre c, half-extents e_k along its axes w_k) spans, along the node's axis
    u, the interval u.c -/+ sum_k e_k |u.w_k|: the extreme of its 8 corners (the support
    function), with 12 products per axis instead of 8 corner projections. Scalars only: it
    runs once per node, and a scratch array would cost an allocation there."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for side in range(2):
        ch = left if side == 0 else right
        cx, cy, cz = nodes_f[ch, C0], nodes_f[ch, C0 + 1], nodes_f[ch, C0 + 2]
        e0, e1, e2 = nodes_f[ch, E0], nodes_f[ch, E0 + 1], nodes_f[ch, E0 + 2]
        for a in range(3):
            ux, uy, uz = nodes_f[node, R0 + a], nodes_f[node, R0 + 3 + a], nodes_f[node, R0 + 6 + a]
            p = ux * cx + uy * cy + uz * cz
            r = (e0 * abs(ux * nodes_f[ch, R0] + uy * nodes_f[ch, R0 + 3] + uz * nodes_f[ch, R0 + 6])
                 + e1 * abs(ux * nodes_f[ch, R0 + 1] + uy * nodes_f[ch, R0 + 4] + uz * nodes_f[ch, R0 + 7])
                 + e2 * abs(ux * nodes_f[ch, R0 + 2] + uy * nodes_f[ch, R0 + 5] + uz * nodes_f[ch, R0 + 8]))
            if a == 0:
                lo0, hi0 = min(lo0, p - r), max(hi0, p + r)
            elif a == 1:
                lo1, hi1 = min(lo1, p - r), max(hi1, p + r)
            else:
                lo2, hi2 = min(lo2, p - r), max(hi2, p + r)
    # children's padding is inherited; 1e-15 relative absorbs this projection's rounding
    ext = max(hi0 - lo0, max(hi1 - lo1, hi2 - lo2))
    _write_local_box(nodes_f, node, lo0, lo1, lo2, hi0, hi1, hi2, 1e-15 * ext)


def triangle_moments(vertices, faces):
    """Per-triangle moments for :func:`covariance_axes` (vectorised numpy).

    Returns ``tri_m1`` (m, 3) area * centroid, ``tri_m2`` (m, 6) area-weighted second
    moments of the triangle surface (xx, xy, xz, yy, yz, zz), ``pts_m1`` (m, 3) and
    ``pts_m2`` (m, 6) the same for its three vertices, and ``tri_area`` (m,).
    """
    p, q, r = (vertices[faces[:, i]] for i in range(3))
    area = 0.5 * np.linalg.norm(np.cross(q - p, r - p), axis=1)
    cen = (p + q + r) / 3.0
    idx = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))
    pts_m2 = np.stack([p[:, i] * p[:, j] + q[:, i] * q[:, j] + r[:, i] * r[:, j] for i, j in idx], axis=1)
    # Gottschalk: integral over the triangle of x x^T = area/12 (9 c c^T + p p^T + q q^T + r r^T)
    tri_m2 = (area / 12.0)[:, None] * (9.0 * np.stack([cen[:, i] * cen[:, j] for i, j in idx], axis=1) + pts_m2)
    tri_m1 = area[:, None] * cen
    pts_m1 = p + q + r
    return (np.ascontiguousarray(tri_m1), np.ascontiguousarray(tri_m2), np.ascontiguousarray(pts_m1),
            np.ascontiguousarray(pts_m2), np.ascontiguousarray(area))


@pair_njit
def triangle_axes(axes, verts, faces, f):
    """Frame of one triangle into ``axes`` (3, 3) columns: its longest edge, the in-plane
    perpendicular, the normal. A triangle's minimum-area bounding rectangle has a side on
    one of its edges; the longest edge is a cheap, good choice. Degenerate triangles get
    an arbitrary completion of the edge direction (``orthonormal_frame``)."""
    best = -1.0
    ex = ey = ez = 0.0
    ox = oy = oz = 0.0
    for e in range(3):
        a = faces[f, e]
        b = faces[f, (e + 1) % 3]
        dx = verts[b, 0] - verts[a, 0]
        dy = verts[b, 1] - verts[a, 1]
        dz = verts[b, 2] - verts[a, 2]
        n2 = dx * dx + dy * dy + dz * dz
        if n2 > best:
            best = n2
            ex, ey, ez = dx, dy, dz
            c = faces[f, (e + 2) % 3]
            ox, oy, oz = verts[c, 0] - verts[a, 0], verts[c, 1] - verts[a, 1], verts[c, 2] - verts[a, 2]
    axes[0, 0], axes[1, 0], axes[2, 0] = ex, ey, ez
    axes[0, 1], axes[1, 1], axes[2, 1] = ox, oy, oz
    orthonormal_frame(axes)
