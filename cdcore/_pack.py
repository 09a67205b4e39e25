"""A hierarchy packed in two flat arrays: what one compiled query call takes per tree.

Numba unboxes every array argument separately (~0.1 us each, more for read-only arrays), so
a query that took the five arrays of each tree paid for ten. A packed tree is

``F`` : float64 (n_nodes * cols + n_verts * 3,)
    ``nodes_f`` rows, then the vertices. ``cols`` (header ``H_FCOLS``) is ``N_FCOLS``, or
    ``AABB_FCOLS`` for AABB trees (their compact rows, ``_layout.fcols``).
``I`` : int32 (HDR + n_nodes * N_ICOLS + 4 * n_faces,)
    a header (below), ``nodes_i`` rows, ``prim_order``, then the faces.

The arrays a ``BVH`` exposes are views into its pack (but an AABB tree's ``nodes_f``, its
compact rows spelled out), so a refit writes the pack in place (the vertices are copied in: a
``Mesh`` is immutable). ``unpack`` rebuilds the five 2-D
views inside a kernel for the cost of a few slices.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils, config
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from ._layout import AABB_FCOLS, N_ICOLS, fcols

# header slots of I
H_KIND = 0
H_NODES = 1
H_VERTS = 2
H_FACES = 3
H_LEAF_CAP = 4  # the largest leaf's primitive count: a leaf pair adds at most cap_a * cap_b pairs
H_HEIGHT = 5  # the tree's height: a traversal stack needs height_a + height_b + 2 rows
H_FCOLS = 6  # columns of the float rows (``_layout.fcols``: AABB trees' rows are compact)
HDR = 8

# offsets are int32: a tree whose arrays exceed this is refused before allocating
MAX_ELEMENTS = 2**31 - 1


def pack_sizes(n_nodes: int, n_verts: int, n_faces: int, cols: int) -> tuple[int, int]:
    nf = n_nodes * cols + n_verts * 3
    ni = HDR + n_nodes * N_ICOLS + 4 * n_faces
    if max(nf, ni) > MAX_ELEMENTS:
        raise ValueError(f"mesh too large for one hierarchy: {n_faces} triangles, {n_verts} vertices "
                         f"({max(nf, ni)} array elements > {MAX_ELEMENTS})")
    return nf, ni


def new_pack(kind: int, n_nodes: int, n_verts: int, n_faces: int):
    """Allocate a pack (nodes zeroed, header filled but for LEAF_CAP and HEIGHT)."""
    nf, ni = pack_sizes(n_nodes, n_verts, n_faces, fcols(kind))
    F = np.zeros(nf)
    I = np.zeros(ni, dtype=np.int32)
    I[H_KIND], I[H_NODES], I[H_VERTS], I[H_FACES] = kind, n_nodes, n_verts, n_faces
    I[H_FCOLS] = fcols(kind)
    return F, I


def views(F, I):
    """(nodes_f, nodes_i, prim_order, vertices, faces): writable numpy views into a pack
    (``nodes_f``: the pack's own rows, compact for AABB trees)."""
    n, nv, m, cols = int(I[H_NODES]), int(I[H_VERTS]), int(I[H_FACES]), int(I[H_FCOLS])
    o = n * cols
    oi = HDR + n * N_ICOLS
    return (F[:o].reshape(n, cols), I[HDR:oi].reshape(n, N_ICOLS), I[oi:oi + m],
            F[o:o + 3 * nv].reshape(nv, 3), I[oi + m:oi + 4 * m].reshape(m, 3))


def pack_arrays(kind, nodes_f, nodes_i, prim_order, vertices, faces):
    """A new pack holding copies of the given arrays (header complete). ``nodes_f``: full
    rows, or an AABB tree's compact rows (an AABB tree keeps its box and SIZE columns)."""
    F, I = new_pack(kind, len(nodes_i), len(vertices), len(faces))
    nf, ni, po, v, f = views(F, I)
    if nf.shape[1] == nodes_f.shape[1]:
        nf[:] = nodes_f
    else:  # full rows into compact ones: the box, then SIZE (the last column of both)
        nf[:, :nf.shape[1] - 1] = nodes_f[:, :nf.shape[1] - 1]
        nf[:, -1] = nodes_f[:, -1]
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


@intrinsic
def c_view(typingctx, arr, start, shape, dtype):
    """``c_view(arr, start, shape, dtype)``: a C-ordered array of ``shape`` (a tuple of ints)
    and ``dtype`` (e.g. ``np.float64``) over the memory of the 1-D C-contiguous ``arr`` from its
    element ``start`` on, sharing it (a view, like a slice; not bounds-checked: the caller
    checks ``start`` and the size, as ``unpack`` does).

    What ``arr[start:stop].view(dtype).reshape(shape)`` gives, without numba's general reshape
    (a call into its helper library per reshape, ~200 instructions: ten of them per query
    cost more than the root pair's test)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"):
        return None
    if not (isinstance(start, types.Integer) and isinstance(shape, types.UniTuple)
            and isinstance(shape.dtype, types.Integer)):
        return None
    dt = getattr(dtype, "dtype", None) or getattr(dtype, "instance_type", None)
    if not isinstance(dt, types.Number):
        return None
    ndim = shape.count
    retty = types.Array(dt, ndim, "C", readonly=not arr.mutable)
    sig = retty(arr, start, shape, dtype)

    def codegen(context, builder, sig, args):
        arrty = sig.args[0]
        ary = context.make_array(arrty)(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        first = context.cast(builder, args[1], sig.args[1], types.intp)
        dims = [context.cast(builder, d, sig.args[2].dtype, types.intp)
                for d in cgutils.unpack_tuple(builder, args[2], ndim)]
        out_dt = context.get_data_type(retty.dtype)
        size = context.get_abi_sizeof(out_dt)
        data = builder.bitcast(builder.gep(ary.data, [first]), out_dt.as_pointer())
        strides = [ir.Constant(intp, size)]
        for d in reversed(dims[1:]):
            strides.insert(0, builder.mul(strides[0], d))
        out = context.make_array(retty)(context, builder)
        populate_array(out, data=data, shape=cgutils.pack_array(builder, dims, intp),
                       strides=cgutils.pack_array(builder, strides, intp), itemsize=ir.Constant(intp, size),
                       meminfo=ary.meminfo, parent=ary.parent)
        return impl_ret_borrowed(context, builder, retty, out._getvalue())

    return sig, codegen


if config.DISABLE_JIT:  # pure-Python runs (kernel line coverage): an intrinsic has no Python body
    def c_view(arr, start, shape, dtype):  # noqa: F811
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return arr[start:].view(np.uint8)[:nbytes].view(dtype).reshape(shape)


@njit(cache=True, inline='always')
def unpack(F, I):
    """The five arrays of a pack as 2-D views (inside kernels). A pack shorter than its
    header says raises ``ValueError`` (``c_view`` does not check); so do rows narrower than
    the compact ones (every kernel reads the box columns and SIZE, the last)."""
    n = np.int64(I[H_NODES])
    nv = np.int64(I[H_VERTS])
    m = np.int64(I[H_FACES])
    cols = np.int64(I[H_FCOLS])
    o = n * cols
    oi = HDR + n * N_ICOLS
    if (n < 0 or nv < 0 or m < 0 or cols < AABB_FCOLS or F.shape[0] < o + 3 * nv
            or I.shape[0] < oi + 4 * m):
        raise ValueError("packed hierarchy shorter than its header says")
    return (c_view(F, 0, (n, cols), np.float64), c_view(I, HDR, (n, np.int64(N_ICOLS)), np.int32),
            I[oi:oi + m], c_view(F, o, (nv, np.int64(3)), np.float64), c_view(I, oi + m, (m, np.int64(3)), np.int32))
