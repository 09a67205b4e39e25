"""Axis-aligned boxes (van den Bergen 1998): fit to primitives, exact merge.

An AABB is stored in the box columns of a node row with identity axes; merging the
boxes of two children gives exactly the box of their union (section 4), which is
why refit is exact for AABB trees. ``fit_prims`` and ``merge`` write the box columns and
SIZE, the row's last column: they serve full rows and an AABB tree's compact rows
(``_layout.AABB_FCOLS``) alike.
"""
import numpy as np
from numba import njit

from .._layout import C0, E0, R0
from .._pairjit import pair_njit


@njit(cache=True, inline='always')
def box_axis(nodes_f, node, k):
    """Entry k (row-major, ``R0 + k``) of a node box's axes block, for readers that serve
    every row layout: an AABB tree's compact rows (``_layout.AABB_FCOLS``) have no axes
    columns, their axes are the identity (reading ``R0`` there would leave the row)."""
    if nodes_f.shape[1] > R0 + 8:
        return nodes_f[node, R0 + k]
    return 1.0 if k == 0 or k == 4 or k == 8 else 0.0


@pair_njit
def set_identity_axes(nodes_f, node):
    for r in range(3):
        for c in range(3):
            nodes_f[node, R0 + 3 * r + c] = 1.0 if r == c else 0.0


@pair_njit
def write_minmax(nodes_f, node, lo0, lo1, lo2, hi0, hi1, hi2, pad):
    nodes_f[node, C0 + 0] = 0.5 * (lo0 + hi0)
    nodes_f[node, C0 + 1] = 0.5 * (lo1 + hi1)
    nodes_f[node, C0 + 2] = 0.5 * (lo2 + hi2)
    nodes_f[node, E0 + 0] = 0.5 * (hi0 - lo0) + pad
    nodes_f[node, E0 + 1] = 0.5 * (hi1 - lo1) + pad
    nodes_f[node, E0 + 2] = 0.5 * (hi2 - lo2) + pad


@pair_njit
def fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad):
    """Smallest AABB of the node's triangles, grown by ``pad`` on every side."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for k in range(start, start + count):
        f = prim_order[k]
        for c in range(3):
            v = faces[f, c]
            x = verts[v, 0]
            y = verts[v, 1]
            z = verts[v, 2]
            lo0 = min(lo0, x)
            hi0 = max(hi0, x)
            lo1 = min(lo1, y)
            hi1 = max(hi1, y)
            lo2 = min(lo2, z)
            hi2 = max(hi2, z)
    # axes are set once at build (set_identity_axes); a refit leaves them alone
    write_minmax(nodes_f, node, lo0, lo1, lo2, hi0, hi1, hi2, pad)
    nodes_f[node, nodes_f.shape[1] - 1] = box_size(nodes_f, node)  # SIZE: the last column


@pair_njit
def merge(nodes_f, node, left, right):
    """Exact AABB of two child AABBs (their padding is inherited, not added again)."""
    for d in range(3):
        lo = min(nodes_f[left, C0 + d] - nodes_f[left, E0 + d],
                 nodes_f[right, C0 + d] - nodes_f[right, E0 + d])
        hi = max(nodes_f[left, C0 + d] + nodes_f[left, E0 + d],
                 nodes_f[right, C0 + d] + nodes_f[right, E0 + d])
        nodes_f[node, C0 + d] = 0.5 * (lo + hi)
        nodes_f[node, E0 + d] = 0.5 * (hi - lo)
    nodes_f[node, nodes_f.shape[1] - 1] = box_size(nodes_f, node)  # SIZE: the last column


@pair_njit
def box_size(nodes_f, node):
    """Box volume for the descend rule (section 3). Extents are floored at 1e-3 of the
    largest one so that flat boxes (planar patches) still rank by area, not all tie at 0."""
    e0 = nodes_f[node, E0]
    e1 = nodes_f[node, E0 + 1]
    e2 = nodes_f[node, E0 + 2]
    m = 1e-3 * max(e0, max(e1, e2))
    return 8.0 * (e0 + m) * (e1 + m) * (e2 + m)
