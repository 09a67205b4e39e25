"""The query entries' plumbing against numpy: ``_pack.c_view`` (reshape-free views) equals
numpy's view/reshape, ``unpack`` equals ``_pack.views``, the in-place pair sort equals
``np.lexsort``, and a workspace or pack too short raises ``ValueError`` instead of writing
out of bounds. Poses of another type than the entries' one signature are converted."""
import numpy as np
import pytest
from numba import njit

import cdcore
from cdcore import _core
from cdcore._pack import c_view, unpack, views
from cdcore.collide import _NO_PAIRS, _NO_TRACE
from cdcore.bench.common import linked_pose, torus_mesh

from meshgen import torus


@njit(cache=False)
def _as_f64(W, start, rows, cols):
    return c_view(W, start, (np.int64(rows), np.int64(cols)), np.float64).copy()


@njit(cache=False)
def _as_i32(W, start, rows):
    return c_view(W, start, (np.int64(rows), np.int64(2)), np.int32).copy()


@njit(cache=False)
def _unpacked(F, I):
    nf, ni, po, v, f = unpack(F, I)
    return nf.copy(), ni.copy(), po.copy(), v.copy(), f.copy()


@njit(cache=False)
def _sorted_in_place(pairs, n):
    _core._sort_pairs(pairs, n)
    return pairs


def test_c_view_equals_numpy_views():
    rng = np.random.default_rng(3)
    W = rng.integers(-2**40, 2**40, size=64)
    for start, rows, cols in ((0, 3, 3), (5, 4, 7), (17, 1, 1), (30, 0, 4)):
        np.testing.assert_array_equal(_as_f64(W, start, rows, cols),
                                      W[start:start + rows * cols].view(np.float64).reshape(rows, cols))
        np.testing.assert_array_equal(_as_i32(W, start, rows), W[start:start + rows].view(np.int32).reshape(rows, 2))


@pytest.mark.parametrize("bv", ["aabb", "obb", "kdop14"])
def test_unpack_equals_the_packs_numpy_views(bv):
    b = cdcore.build_bvh(cdcore.Mesh(*torus(1.0, 0.3, 9, 5)), bv, 2)
    for got, want in zip(_unpacked(b._F, b._I), views(b._F, b._I)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="shorter than its header"):
        _unpacked(b._F[:-1], b._I)
    with pytest.raises(ValueError, match="shorter than its header"):
        _unpacked(b._F, b._I[:-1])


def test_pair_sort_in_place_equals_lexsort():
    rng = np.random.default_rng(8)
    for n in (0, 1, 2, 3, 17, 500):
        pairs = rng.integers(0, 6, size=(n + 4, 2)).astype(np.int32)  # many ties
        want = pairs[:n][np.lexsort((pairs[:n, 1], pairs[:n, 0]))]
        got = _sorted_in_place(pairs.copy(), n)
        np.testing.assert_array_equal(got[:n], want)
        np.testing.assert_array_equal(got[n:], pairs[n:])  # rows past n untouched


def test_short_workspace_raises():
    b = cdcore.build_bvh(cdcore.Mesh(*torus(1.0, 0.3, 9, 5)), "obb")
    plan = cdcore.Query(b, b)._plan
    eye = np.eye(4)
    n = _core.workspace_len(b._stack_h, b._stack_h)
    for short in (np.zeros(5, dtype=np.int64), np.zeros(n, dtype=np.int64)):  # no room for the stack / pairs
        with pytest.raises(ValueError, match="workspace too small"):
            _core.query_entry(b._F, b._I, b._F, b._I, eye, eye, plan, short, _NO_PAIRS, _NO_TRACE)
    W = np.zeros(n + b._leaf_cap ** 2, dtype=np.int64)
    assert _core.query_entry(b._F, b._I, b._F, b._I, eye, eye, plan, W, _NO_PAIRS, _NO_TRACE) == 1


def test_poses_of_other_types_are_converted():
    m = torus_mesh(24, 8)  # linked like chain links: linked_pose(gap) has that tube gap
    a, b = cdcore.build_bvh(m, "obb"), cdcore.build_bvh(m, "aabb")
    q = cdcore.Query(a, a)
    for gap, hit in ((-0.05, True), (0.05, False)):
        pose = linked_pose(gap)
        ro = pose.copy()
        ro.flags.writeable = False
        for p in (pose, ro, np.asfortranarray(pose), pose.tolist()):
            assert q(p) is hit
            assert q(np.eye(4), p) is hit
            assert cdcore.collide(a, None, a, p, contacts="first").hit is hit
            r = cdcore.collide(b, p, b, None)
            assert r.hit == (len(r.pairs) > 0)
    with pytest.raises(ValueError, match="pose_b"):
        q(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="pose_a"):
        cdcore.collide(a, np.zeros((4, 4)), a, None)
