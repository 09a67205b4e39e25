"""Split-plane choice of the top-down builders (``_build.build_into``, ``_kdop.build_kdop_tree``).

Every builder fits a node's volume, then partitions its triangles by a plane orthogonal to one
of the node's directions: a triangle's *key* along direction D is the midpoint of its vertices'
projections onto D, and it goes to the positive child when its key exceeds the plane's value
``delta``. The rules differ only in how (axis, delta) is chosen:

``SPLIT_MEDIAN``  the node's longest box axis (k-DOPs: widest slab) through the box's centre: the
                  spatial median of van den Bergen 1998, section 2 (the default; the caller
                  computes it, nothing here).
``SPLIT_MEAN``    the same axis through the mean of the triangles' keys (the "mean" splitter of
                  Gottschalk's RAPID and of FCL/coal): balances the triangle counts better on
                  unevenly tessellated meshes.
``SPLIT_SAH``     binned surface-area heuristic (MacDonald & Booth 1990; binned: Wald 2007): over
                  the node's three box directions and ``N_BINS`` equal key bins per direction,
                  the plane minimising ``n_L A(L) + n_R A(R)``, with A the surface area of the
                  box (in the node's own frame) around each side's triangles. Surface area is the
                  probability that a random *ray* meets a box; for a random convex partner in
                  random orientation the overlap probability is the volume of the Minkowski sum,
                  whose mixed terms are proportional to the surface area and mean width
                  (Hadwiger), so SAH is a reasonable proxy for collision too.
``SPLIT_VOLUME``  the same sweep minimising ``n_L V(L) + n_R V(R)`` (box volume, extents floored at
                  1e-3 of the largest as ``bv.aabb.box_size`` does, so flat patches still rank):
                  the collision-specific heuristic for a partner much larger than the node,
                  where the Minkowski-sum volume is dominated by the node's own volume.

Directions: axis-aligned boxes and k-DOPs use x, y, z (a k-DOP's first three slabs; its cost
box is the AABB), oriented boxes their own fitted axes. The children's volumes are fitted
afterwards by the builder (an oriented child gets its own covariance frame), so the cost is an
estimate, as in every top-down SAH builder.
"""
import numpy as np
from numba import njit

SPLIT_MEDIAN = 0
SPLIT_MEAN = 1
SPLIT_SAH = 2
SPLIT_VOLUME = 3
SPLITS = {"median": SPLIT_MEDIAN, "mean": SPLIT_MEAN, "sah": SPLIT_SAH, "volume": SPLIT_VOLUME}

N_BINS = 16  # Wald 2007 reports 8-32 bins within a few percent of the full sweep's cost


@njit(cache=True)
def tri_key(dirs, d, verts, faces, f):
    """Midpoint of triangle ``f``'s projection onto ``dirs[d]`` (the builders' key)."""
    e0 = dirs[d, 0]
    e1 = dirs[d, 1]
    e2 = dirs[d, 2]
    v = faces[f, 0]
    x0 = e0 * verts[v, 0] + e1 * verts[v, 1] + e2 * verts[v, 2]
    v = faces[f, 1]
    x1 = e0 * verts[v, 0] + e1 * verts[v, 1] + e2 * verts[v, 2]
    v = faces[f, 2]
    x2 = e0 * verts[v, 0] + e1 * verts[v, 1] + e2 * verts[v, 2]
    return 0.5 * (min(x0, min(x1, x2)) + max(x0, max(x1, x2)))


@njit(cache=True)
def mean_key(dirs, axis, verts, faces, prim_order, start, count):
    s = 0.0
    for i in range(start, start + count):
        s += tri_key(dirs, axis, verts, faces, prim_order[i])
    return s / count


@njit(cache=True)
def _measure(split, dx, dy, dz):
    """Surface area (SAH) or floored volume of a box of side lengths dx, dy, dz."""
    if split == SPLIT_SAH:
        return 2.0 * (dx * dy + dy * dz + dz * dx)
    m = 1e-3 * max(dx, max(dy, dz))
    return (dx + m) * (dy + m) * (dz + m)


@njit(cache=True)
def binned_split(split, dirs, verts, faces, prim_order, start, count, lo, hi, bins):
    """The binned SAH / volume sweep over ``dirs[0..2]``. ``lo``, ``hi`` (m, 3) are scratch
    rows indexed like ``prim_order``; ``bins`` (N_BINS, 7) scratch. Returns (axis, delta), or
    (-1, 0.0) when every direction has all keys equal (no plane separates them)."""
    # per triangle: its projection interval on each direction (the box of its side)
    for i in range(start, start + count):
        f = prim_order[i]
        for d in range(3):
            e0 = dirs[d, 0]
            e1 = dirs[d, 1]
            e2 = dirs[d, 2]
            a = faces[f, 0]
            b = faces[f, 1]
            c = faces[f, 2]
            x0 = e0 * verts[a, 0] + e1 * verts[a, 1] + e2 * verts[a, 2]
            x1 = e0 * verts[b, 0] + e1 * verts[b, 1] + e2 * verts[b, 2]
            x2 = e0 * verts[c, 0] + e1 * verts[c, 1] + e2 * verts[c, 2]
            lo[i, d] = min(x0, min(x1, x2))
            hi[i, d] = max(x0, max(x1, x2))
    best_cost = np.inf
    best_axis = -1
    best_delta = 0.0
    nb = bins.shape[0]
    left = np.empty((nb, 7))
    for axis in range(3):
        kmin = np.inf
        kmax = -np.inf
        for i in range(start, start + count):
            k = 0.5 * (lo[i, axis] + hi[i, axis])
            kmin = min(kmin, k)
            kmax = max(kmax, k)
        if not kmax > kmin:
            continue
        scale = nb / (kmax - kmin)
        for j in range(nb):
            bins[j, 0] = 0.0
            for d in range(3):
                bins[j, 1 + d] = np.inf
                bins[j, 4 + d] = -np.inf
        for i in range(start, start + count):
            k = 0.5 * (lo[i, axis] + hi[i, axis])
            j = min(nb - 1, int((k - kmin) * scale))
            bins[j, 0] += 1.0
            for d in range(3):
                bins[j, 1 + d] = min(bins[j, 1 + d], lo[i, d])
                bins[j, 4 + d] = max(bins[j, 4 + d], hi[i, d])
        # prefix sweep from the left, then suffix from the right
        n = 0.0
        l0 = l1 = l2 = np.inf
        h0 = h1 = h2 = -np.inf
        for j in range(nb):
            n += bins[j, 0]
            l0 = min(l0, bins[j, 1])
            l1 = min(l1, bins[j, 2])
            l2 = min(l2, bins[j, 3])
            h0 = max(h0, bins[j, 4])
            h1 = max(h1, bins[j, 5])
            h2 = max(h2, bins[j, 6])
            left[j, 0] = n
            left[j, 1] = _measure(split, h0 - l0, h1 - l1, h2 - l2) if n > 0 else 0.0
        n = 0.0
        l0 = l1 = l2 = np.inf
        h0 = h1 = h2 = -np.inf
        for j in range(nb - 1, 0, -1):  # plane between bins j-1 and j
            n += bins[j, 0]
            l0 = min(l0, bins[j, 1])
            l1 = min(l1, bins[j, 2])
            l2 = min(l2, bins[j, 3])
            h0 = max(h0, bins[j, 4])
            h1 = max(h1, bins[j, 5])
            h2 = max(h2, bins[j, 6])
            nl = left[j - 1, 0]
            if n == 0 or nl == 0:
                continue
            cost = nl * left[j - 1, 1] + n * _measure(split, h0 - l0, h1 - l1, h2 - l2)
            if cost < best_cost:
                best_cost = cost
                best_axis = axis
                best_delta = kmin + j / scale
    return best_axis, best_delta
