"""Bounding spheres: fitted around the best of three cheap centres; merged exactly
for two spheres (the smallest sphere enclosing both)."""
import numpy as np

from .._layout import C0, E0, S0, SR
from .._pairjit import pair_njit


@pair_njit
def _max_dist(verts, faces, prim_order, start, count, cx, cy, cz):
    r2 = 0.0
    for k in range(start, start + count):
        f = prim_order[k]
        for c in range(3):
            v = faces[f, c]
            dx = verts[v, 0] - cx
            dy = verts[v, 1] - cy
            dz = verts[v, 2] - cz
            r2 = max(r2, dx * dx + dy * dy + dz * dz)
    return np.sqrt(r2)


@pair_njit
def fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad):
    """Sphere around the node's triangles. Candidate centres: the node's box centre (an
    OBB centre is usually the best cheap guess), the AABB centre and the vertex centroid;
    the one with the smallest enclosing radius wins. Box columns must already be set."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    m0 = m1 = m2 = 0.0
    for k in range(start, start + count):
        f = prim_order[k]
        for c in range(3):
            v = faces[f, c]
            x, y, z = verts[v, 0], verts[v, 1], verts[v, 2]
            lo0, hi0 = min(lo0, x), max(hi0, x)
            lo1, hi1 = min(lo1, y), max(hi1, y)
            lo2, hi2 = min(lo2, z), max(hi2, z)
            m0 += x
            m1 += y
            m2 += z
    n = 3.0 * count
    best_r = np.inf
    bx = by = bz = 0.0
    for cand in range(3):
        if cand == 0:
            cx, cy, cz = nodes_f[node, C0], nodes_f[node, C0 + 1], nodes_f[node, C0 + 2]
        elif cand == 1:
            cx, cy, cz = 0.5 * (lo0 + hi0), 0.5 * (lo1 + hi1), 0.5 * (lo2 + hi2)
        else:
            cx, cy, cz = m0 / n, m1 / n, m2 / n
        r = _max_dist(verts, faces, prim_order, start, count, cx, cy, cz)
        if r < best_r:
            best_r = r
            bx, by, bz = cx, cy, cz
    nodes_f[node, S0] = bx
    nodes_f[node, S0 + 1] = by
    nodes_f[node, S0 + 2] = bz
    nodes_f[node, SR] = best_r + pad


@pair_njit
def from_box(nodes_f, node):
    """The sphere around the node's box (centre, half-diagonal): for OBB-only trees,
    which never test spheres but keep the columns meaningful."""
    e0, e1, e2 = nodes_f[node, E0], nodes_f[node, E0 + 1], nodes_f[node, E0 + 2]
    nodes_f[node, S0] = nodes_f[node, C0]
    nodes_f[node, S0 + 1] = nodes_f[node, C0 + 1]
    nodes_f[node, S0 + 2] = nodes_f[node, C0 + 2]
    nodes_f[node, SR] = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) * (1.0 + 1e-15)


@pair_njit
def merge(nodes_f, node, left, right):
    """Smallest sphere enclosing the two child spheres; if the node's box centre gives a
    smaller enclosing sphere (it often does for a refitted OBB tree) that one is kept."""
    ax, ay, az, ar = nodes_f[left, S0], nodes_f[left, S0 + 1], nodes_f[left, S0 + 2], nodes_f[left, SR]
    bx, by, bz, br = nodes_f[right, S0], nodes_f[right, S0 + 1], nodes_f[right, S0 + 2], nodes_f[right, SR]
    dx, dy, dz = bx - ax, by - ay, bz - az
    d = np.sqrt(dx * dx + dy * dy + dz * dz)
    if d + br <= ar:
        cx, cy, cz, r = ax, ay, az, ar
    elif d + ar <= br:
        cx, cy, cz, r = bx, by, bz, br
    else:
        r = 0.5 * (d + ar + br)
        s = (r - ar) / d
        cx, cy, cz = ax + s * dx, ay + s * dy, az + s * dz
    # alternative centre: the box centre
    ox, oy, oz = nodes_f[node, C0], nodes_f[node, C0 + 1], nodes_f[node, C0 + 2]
    ra = np.sqrt((ax - ox) ** 2 + (ay - oy) ** 2 + (az - oz) ** 2) + ar
    rb = np.sqrt((bx - ox) ** 2 + (by - oy) ** 2 + (bz - oz) ** 2) + br
    ro = max(ra, rb)
    if ro < r:
        cx, cy, cz, r = ox, oy, oz, ro
    # rounding of the formula above may shave an ulp: grow by a relative 1e-15 so the
    # merged sphere really contains both children
    nodes_f[node, S0] = cx
    nodes_f[node, S0 + 1] = cy
    nodes_f[node, S0 + 2] = cz
    nodes_f[node, SR] = r * (1.0 + 4e-16) + 1e-300


@pair_njit
def sphere_size(nodes_f, node):
    r = nodes_f[node, SR]
    return 4.18879020478639 * r * r * r
