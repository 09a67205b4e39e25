"""A hierarchy packed in two flat arrays: what one compiled query call takes per tree.

Numba unboxes every array argument separately (~0.1 us each, more for read-only arrays), so
a query that took the five arrays of each tree paid for ten. A packed tree is

``F`` : float64 (n_nodes * N_FCOLS + n_verts * 3,)
    ``nodes_f`` rows, then the vertices.
``I`` : int32 (HDR + n_nodes * N_ICOLS + 4 * n_faces,)
    a header (below), ``nodes_i`` rows, ``prim_order``, then the faces.

The arrays a ``BVH`` exposes are views into its pack, so a refit writes the pack in place
(the vertices are copied in: a ``Mesh`` is immutable). ``unpack`` rebuilds the five 2-D
views inside a kernel for the cost of a few slices.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._layout import N_FCOLS, N_ICOLS

# header slots of I
H_KIND = 0
H_NODES = 1
H_VERTS = 2
H_FACES = 3
H_LEAF_CAP = 4  # the largest leaf's primitive count: a leaf pair adds at most cap_a * cap_b pairs
H_HEIGHT = 5  # the tree's height: a traversal stack needs height_a + height_b + 2 rows
HDR = 8

# offsets are int32: a tree whose arrays exceed this is refused before allocating
MAX_ELEMENTS = 2**31 - 1


def pack_sizes(n_nodes: int, n_verts: int, n_faces: int) -> tuple[int, int]:
    nf = n_nodes * N_FCOLS + n_verts * 3
    ni = HDR + n_nodes * N_ICOLS + 4 * n_faces
    if max(nf, ni) > MAX_ELEMENTS:
        raise ValueError(f"mesh too large for one hierarchy: {n_faces} triangles, {n_verts} vertices "
                         f"({max(nf, ni)} array elements > {MAX_ELEMENTS})")
    return nf, ni


def new_pack(kind: int, n_nodes: int, n_verts: int, n_faces: int):
    """Allocate a pack (nodes zeroed, header filled but for LEAF_CAP and HEIGHT)."""
    nf, ni = pack_sizes(n_nodes, n_verts, n_faces)
    F = np.zeros(nf)
    I = np.zeros(ni, dtype=np.int32)
    I[H_KIND], I[H_NODES], I[H_VERTS], I[H_FACES] = kind, n_nodes, n_verts, n_faces
    return F, I


def views(F, I):
    """(nodes_f, nodes_i, prim_order, vertices, faces): writable numpy views into a pack."""
    n, nv, m = int(I[H_NODES]), int(I[H_VERTS]), int(I[H_FACES])
    o = n * N_FCOLS
    oi = HDR + n * N_ICOLS
    return (F[:o].reshape(n, N_FCOLS), I[HDR:oi].reshape(n, N_ICOLS), I[oi:oi + m],
            F[o:o + 3 * nv].reshape(nv, 3), I[oi + m:oi + 4 * m].reshape(m, 3))


def pack_arrays(kind, nodes_f, nodes_i, prim_order, vertices, faces):
    """A new pack holding copies of the given arrays (header complete)."""
    F, I = new_pack(kind, len(nodes_i), len(vertices), len(faces))
    nf, ni, po, v, f = views(F, I)
    nf[:] = nodes_f
    ni[:] = nodes_i
    po[:] = prim_order
    v[:] = vertices
    f[:] = faces
    finish_header(I)
    return F, I


def finish_header(I) -> None:
    """Fill LEAF_CAP and HEIGHT from the node arrays."""
    n = int(I[H_NODES])
    ni = I[HDR:HDR + n * N_ICOLS].reshape(n, N_ICOLS)
    I[H_LEAF_CAP], I[H_HEIGHT] = _leaf_cap_and_height(ni)


@njit(cache=True, nogil=True)
def _leaf_cap_and_height(ni):
    n = ni.shape[0]
    depth = np.zeros(n, dtype=np.int32)
    cap = 0
    height = 0
    for node in range(n):  # children after parents: one forward pass
        left = ni[node, 0]
        if left < 0:
            cap = max(cap, ni[node, 3])
        else:
            depth[left] = depth[node] + 1
            depth[ni[node, 1]] = depth[node] + 1
        height = max(height, depth[node])
    return cap, height


@njit(cache=True, inline='always')
def unpack(F, I):
    """The five arrays of a pack as 2-D views (inside kernels)."""
    n = np.int64(I[H_NODES])
    nv = np.int64(I[H_VERTS])
    m = np.int64(I[H_FACES])
    o = n * N_FCOLS
    oi = HDR + n * N_ICOLS
    return (F[:o].reshape((n, np.int64(N_FCOLS))), I[HDR:oi].reshape((n, np.int64(N_ICOLS))), I[oi:oi + m],
            F[o:o + 3 * nv].reshape((nv, np.int64(3))), I[oi + m:oi + 4 * m].reshape((m, np.int64(3))))
