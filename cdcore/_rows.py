"""An AABB tree's compact rows written with short vectors (issue 15: the refit of 100K triangles).

A compact row is 7 doubles: box centre (``C0``: 3), half-extents (``E0``: 3), SIZE. The refit's
scalar code spent 78 instructions per node on it (7 scalar stores, 6 mins/maxes, 12 loads of
the children...); these intrinsics emit LLVM vector code instead: a row is read as one 4-lane
load (centre, first half-extent) and one 2-lane load (the other half-extents), the box's
corners are computed in 4 lanes (the 4th lane is ignored), and the row is written back as one
4-lane, one 2-lane and one scalar store (the same stores the parent's loads then read, so the
store-to-load forwarding works).

The arithmetic is the scalar refit's, lane by lane and in the same order, so the rows are
bit-identical to it (``_build._refit_aabb_nodes``'s comments, ``bv.aabb``'s formulas):

- a minimum is ``a if a < b else b`` and a maximum ``a if a > b else b`` (an ordered compare
  and a select: the same operand chosen for equal values and signed zeros);
- centre ``0.5 * (lo + hi)``, half-extent ``0.5 * (hi - lo)`` (``+ pad`` for a leaf), SIZE
  ``8 * (e0 + m) * (e1 + m) * (e2 + m)`` with ``m = 1e-3 * max(e0, max(e1, e2))``, left to
  right. numba compiles without fast-math, so LLVM neither fuses nor reorders them.

The vector types are LLVM's generic ones (``<4 x double>``): any target lowers them (two SSE2
halves where there is no AVX). Not bounds-checked: the callers check the ids (``_build``).
Under ``NUMBA_DISABLE_JIT`` (pure-Python runs) they are the scalar formulas below.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.core.extending import intrinsic

from ._layout import AABB_FCOLS, AABB_SIZE, C0, E0

# the loads and stores below assume this row: centre at 0..2, half-extents at 3..5, SIZE at 6
assert (C0, E0, AABB_SIZE, AABB_FCOLS) == (0, 3, 6, 7)

_F64 = ir.DoubleType()
_V4 = ir.VectorType(_F64, 4)
_V2 = ir.VectorType(_F64, 2)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _f64_rows(a):
    return isinstance(a, types.Array) and a.ndim == 2 and a.layout == "C" and a.dtype == types.float64


def _row_ptr(context, builder, aryty, aryval, idxty, idx):
    """``double*`` to ``a[idx, 0]`` of a C-ordered 2-D float64 array."""
    ary = context.make_array(aryty)(context, builder, aryval)
    i = context.cast(builder, idx, idxty, types.intp)
    cols = cgutils.unpack_tuple(builder, ary.shape, 2)[1]
    return builder.gep(ary.data, [builder.mul(i, cols)])


def _at(builder, ptr, offset, ty):
    return builder.bitcast(builder.gep(ptr, [ir.Constant(_I64, offset)]), ty.as_pointer())


def _load(builder, ptr, offset, ty):
    return builder.load(_at(builder, ptr, offset, ty), align=8)


def _store(builder, value, ptr, offset):
    builder.store(value, _at(builder, ptr, offset, value.type), align=8)


def _shuffle(builder, a, b, lanes):
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(_I32, len(lanes)), lanes))


def _min(builder, a, b):  # a if a < b else b
    return builder.select(builder.fcmp_ordered("<", a, b), a, b)


def _max(builder, a, b):  # a if a > b else b
    return builder.select(builder.fcmp_ordered(">", a, b), a, b)


def _splat(builder, x):
    one = builder.insert_element(ir.Constant(_V4, ir.Undefined), x, ir.Constant(_I32, 0))
    return _shuffle(builder, one, ir.Constant(_V4, ir.Undefined), [0, 0, 0, 0])


def _write_box(builder, row, lo, hi, pad):
    """The row at ``row`` := the box [lo, hi] (lanes 0..2), half-extents grown by ``pad``
    (a double, or None), and its SIZE."""
    half = ir.Constant(_V4, [0.5] * 4)
    c = builder.fmul(half, builder.fadd(lo, hi))
    e = builder.fmul(half, builder.fsub(hi, lo))
    if pad is not None:
        e = builder.fadd(e, _splat(builder, pad))
    _store(builder, _shuffle(builder, c, e, [0, 1, 2, 4]), row, 0)  # centre, e0
    _store(builder, _shuffle(builder, e, e, [1, 2]), row, 4)  # e1, e2
    e0, e1, e2 = (builder.extract_element(e, ir.Constant(_I32, k)) for k in range(3))
    m = builder.fmul(ir.Constant(_F64, 1e-3), _max(builder, e0, _max(builder, e1, e2)))
    size = builder.fmul(ir.Constant(_F64, 8.0), builder.fadd(e0, m))
    size = builder.fmul(size, builder.fadd(e1, m))
    size = builder.fmul(size, builder.fadd(e2, m))
    builder.store(size, builder.gep(row, [ir.Constant(_I64, 6)]), align=8)


def _corner(builder, ptr):
    """A vertex row (3 doubles) as 4 lanes (the 4th a copy of z: no read past the row)."""
    xy = _load(builder, ptr, 0, _V2)
    z = builder.insert_element(ir.Constant(_V2, ir.Undefined), _load(builder, ptr, 2, _F64), ir.Constant(_I32, 0))
    return _shuffle(builder, xy, z, [0, 1, 2, 2])


@intrinsic
def leaf_row(typingctx, nf, node, v, p, q, r, pad):
    """``nf[node]`` := the box of the triangle (``v[p]``, ``v[q]``, ``v[r]``) grown by ``pad``:
    ``_refit_aabb_nodes``'s one-triangle leaf."""
    if not (_f64_rows(nf) and _f64_rows(v) and all(isinstance(t, types.Integer) for t in (node, p, q, r))
            and isinstance(pad, types.Float)):
        return None
    sig = types.void(nf, node, v, p, q, r, pad)

    def codegen(context, builder, sig, args):
        row = _row_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        a, b, c = (_corner(builder, _row_ptr(context, builder, sig.args[2], args[2], sig.args[k], args[k]))
                   for k in (3, 4, 5))
        lo = _min(builder, a, _min(builder, b, c))
        hi = _max(builder, a, _max(builder, b, c))
        pad = context.cast(builder, args[6], sig.args[6], types.float64)
        _write_box(builder, row, lo, hi, pad)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def box_row(typingctx, nf, node, lo0, lo1, lo2, hi0, hi1, hi2, pad):
    """``nf[node]`` := the box [lo, hi] grown by ``pad``, and its SIZE (a leaf of several triangles,
    its bounds taken in scalars)."""
    if not (_f64_rows(nf) and isinstance(node, types.Integer)
            and all(t == types.float64 for t in (lo0, lo1, lo2, hi0, hi1, hi2, pad))):
        return None
    sig = types.void(nf, node, lo0, lo1, lo2, hi0, hi1, hi2, pad)

    def codegen(context, builder, sig, args):
        row = _row_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        lo = hi = ir.Constant(_V4, ir.Undefined)
        for k in range(3):
            lo = builder.insert_element(lo, args[2 + k], ir.Constant(_I32, k))
            hi = builder.insert_element(hi, args[5 + k], ir.Constant(_I32, k))
        lo = builder.insert_element(lo, args[2], ir.Constant(_I32, 3))  # a defined 4th lane
        hi = builder.insert_element(hi, args[5], ir.Constant(_I32, 3))
        _write_box(builder, row, lo, hi, args[8])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def merge_row(typingctx, nf, node, left, right):
    """``nf[node]`` := the box of the boxes ``nf[left]`` and ``nf[right]`` (corners from their
    stored centres and half-extents), and its SIZE: ``_refit_aabb_nodes``'s parent."""
    if not (_f64_rows(nf) and all(isinstance(t, types.Integer) for t in (node, left, right))):
        return None
    sig = types.void(nf, node, left, right)

    def codegen(context, builder, sig, args):
        row = _row_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        lo = hi = None
        for k in (2, 3):
            child = _row_ptr(context, builder, sig.args[0], args[0], sig.args[k], args[k])
            ce = _load(builder, child, 0, _V4)  # centre, e0
            e12 = _load(builder, child, 4, _V2)
            e = _shuffle(builder, ce, _shuffle(builder, e12, e12, [0, 1, 0, 1]), [3, 4, 5, 3])
            a, b = builder.fsub(ce, e), builder.fadd(ce, e)
            lo, hi = (a, b) if lo is None else (_min(builder, lo, a), _max(builder, hi, b))
        _write_box(builder, row, lo, hi, None)
        return context.get_dummy_value()

    return sig, codegen


if config.DISABLE_JIT:  # pure-Python runs (kernel line coverage): the scalar formulas
    def _write(nf, node, lo, hi, pad):
        e = [0.5 * (hi[d] - lo[d]) if pad is None else 0.5 * (hi[d] - lo[d]) + pad for d in range(3)]
        for d in range(3):
            nf[node, C0 + d] = 0.5 * (lo[d] + hi[d])
            nf[node, E0 + d] = e[d]
        m = 1e-3 * _pmax(e[0], _pmax(e[1], e[2]))
        nf[node, AABB_SIZE] = 8.0 * (e[0] + m) * (e[1] + m) * (e[2] + m)

    def _pmin(a, b):
        return a if a < b else b

    def _pmax(a, b):
        return a if a > b else b

    def leaf_row(nf, node, v, p, q, r, pad):  # noqa: F811
        _write(nf, node, [_pmin(v[p, d], _pmin(v[q, d], v[r, d])) for d in range(3)],
               [_pmax(v[p, d], _pmax(v[q, d], v[r, d])) for d in range(3)], pad)

    def box_row(nf, node, lo0, lo1, lo2, hi0, hi1, hi2, pad):  # noqa: F811
        _write(nf, node, [lo0, lo1, lo2], [hi0, hi1, hi2], pad)

    def merge_row(nf, node, left, right):  # noqa: F811
        lo = [_pmin(nf[left, C0 + d] - nf[left, E0 + d], nf[right, C0 + d] - nf[right, E0 + d]) for d in range(3)]
        hi = [_pmax(nf[left, C0 + d] + nf[left, E0 + d], nf[right, C0 + d] + nf[right, E0 + d]) for d in range(3)]
        _write(nf, node, lo, hi, None)
