"""The AABB refit's plan (``bvh.refit_plan``) and its row intrinsics (``_rows``), issue 15.

The plan must list every node once, each parent after both its children, every part's nodes
closed under children, with the right ids in its table; the intrinsics must write the rows the
scalar formulas write, bit for bit, also for signed zeros and ties (where a min or max choosing
the other operand shows). The whole refit against the plain-numpy reference:
``tests/test_refit_aabb.py``, ``tests/test_refit_parallel.py``.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

import cdcore
from cdcore import _layout as L
from cdcore._rows import box_row, leaf_row, merge_row
from cdcore.bvh import refit_plan, refit_split
from cdcore.mesh import Mesh

from tests.test_refit_aabb import meshes_and_deformations


def check_plan(ni, tri_verts, n_verts, tab, blocks, bcuts, n_parts):
    """Every node once; children before parents in the sweep order; each row's ids those of its
    node; blocks contiguous over the table; the parts' nodes closed under children."""
    n = len(ni)
    assert blocks[-1].tolist() == [n, n_verts, len(tri_verts), len(tab)]
    nb = len(blocks) - 1
    assert len(bcuts) == n_parts + 1 and bcuts[0] == 0 and np.all(np.diff(bcuts) >= 0) and bcuts[-1] <= nb
    assert blocks[0, 0] == 0 and (nb == 0 or blocks[nb - 1, 3] == len(tab))
    assert np.all(blocks[1:nb, 0] == blocks[:nb - 1, 3])
    assert np.array_equal(np.sort(tab[:, 0]), np.arange(n))
    when = np.empty(n, dtype=np.int64)
    when[tab[:, 0]] = np.arange(n)
    part = np.full(n, n_parts)
    for p in range(n_parts):
        b0, b1 = bcuts[p], bcuts[p + 1]
        if b1 > b0:
            part[tab[blocks[b0, 0]:blocks[b1 - 1, 3], 0]] = p
    for b in range(nb):
        t0, t1, t2, t3 = blocks[b]
        for j in range(t0, t3):
            node = tab[j, 0]
            left, right, start, count = ni[node]
            if j < t1:
                assert left < 0 and count == 1 and np.array_equal(tab[j, 1:], tri_verts[start])
            elif j < t2:
                assert left < 0 and count > 1 and tab[j, 1] == start and tab[j, 2] == count
            else:
                assert left >= 0 and tab[j, 1] == left and tab[j, 2] == right
                assert when[left] < j and when[right] < j  # children first
                if part[node] < n_parts:
                    assert part[left] == part[node] and part[right] == part[node]


@settings(max_examples=80, deadline=None)
@given(meshes_and_deformations(), st.integers(1, 4), st.sampled_from([1, 2, 7, 1024]))
def test_plan_sweeps_children_first_and_every_node_once(case, n_parts, block):
    v, faces, w, leaf, split = case
    bvh = cdcore.build_bvh(Mesh(v, faces), "aabb", leaf_size=leaf, split=split)
    tv = np.ascontiguousarray(faces[bvh.prim_order]).astype(np.int32)
    ranges, cuts = refit_split(bvh.nodes_i, bvh.depth, n_parts)
    plan = refit_plan(bvh.nodes_i, tv, len(v), ranges, cuts, block)
    check_plan(bvh.nodes_i, tv, len(v), *plan, n_parts)
    whole = refit_plan(bvh.nodes_i, tv, len(v), np.array([[0, bvh.n_nodes]]), np.array([0, 1]), block)
    check_plan(bvh.nodes_i, tv, len(v), *whole, 1)


def test_the_plan_check_fails_on_a_wrong_plan():
    """``check_plan`` is not vacuous: a parent swept before its child, a leaf's wrong vertex, a
    part's node in another part fail it; a plan whose ranges miss a node is refused."""
    rng = np.random.default_rng(11)
    v = rng.normal(size=(40, 3))
    faces = rng.integers(0, 40, size=(90, 3))
    bvh = cdcore.build_bvh(Mesh(v, faces), "aabb")
    tv = np.ascontiguousarray(faces[bvh.prim_order]).astype(np.int32)
    ranges, cuts = refit_split(bvh.nodes_i, bvh.depth, 2)
    tab, blocks, bcuts = refit_plan(bvh.nodes_i, tv, len(v), ranges, cuts, 16)
    check_plan(bvh.nodes_i, tv, len(v), tab, blocks, bcuts, 2)
    b = int(np.flatnonzero(blocks[:-1, 3] > blocks[:-1, 2])[0])  # a block with parents
    j = blocks[b, 2]
    bad = tab.copy()  # its first parent moved before its leaves
    bad[[blocks[b, 0], j]] = bad[[j, blocks[b, 0]]]
    with pytest.raises(AssertionError):
        check_plan(bvh.nodes_i, tv, len(v), bad, blocks, bcuts, 2)
    bad = tab.copy()
    bad[0, 1] = (bad[0, 1] + 1) % len(v)
    with pytest.raises(AssertionError):
        check_plan(bvh.nodes_i, tv, len(v), bad, blocks, bcuts, 2)
    with pytest.raises(AssertionError):
        check_plan(bvh.nodes_i, tv, len(v), tab, blocks, bcuts + np.array([0, 1, 0]), 2)
    with pytest.raises(ValueError, match="every node"):
        refit_plan(bvh.nodes_i, tv, len(v), np.array([[1, bvh.n_nodes]]), np.array([0, 1]))
    with pytest.raises(ValueError, match="outside"):
        refit_plan(bvh.nodes_i, tv, int(tv.max()), np.array([[0, bvh.n_nodes]]), np.array([0, 1]))  # a vertex past


# ---- the row intrinsics against the scalar formulas ----------------------------------------
def _mn(a, b):
    return a if a < b else b


def _mx(a, b):
    return a if a > b else b


def scalar_row(lo, hi, pad):
    e = [0.5 * (hi[d] - lo[d]) + pad if pad is not None else 0.5 * (hi[d] - lo[d]) for d in range(3)]
    m = 1e-3 * _mx(e[0], _mx(e[1], e[2]))
    return np.array([0.5 * (lo[d] + hi[d]) for d in range(3)] + e + [8.0 * (e[0] + m) * (e[1] + m) * (e[2] + m)])


@njit
def _write_rows(nf, v, tri, pairs, boxes, pad):
    for k in range(tri.shape[0]):
        leaf_row(nf, k, v, tri[k, 0], tri[k, 1], tri[k, 2], pad)
    n = tri.shape[0]
    for k in range(pairs.shape[0]):
        merge_row(nf, n + k, pairs[k, 0], pairs[k, 1])
    n += pairs.shape[0]
    for k in range(boxes.shape[0]):
        box_row(nf, n + k, boxes[k, 0], boxes[k, 1], boxes[k, 2], boxes[k, 3], boxes[k, 4], boxes[k, 5], pad)


def test_row_intrinsics_equal_the_scalar_formulas():
    rng = np.random.default_rng(12)
    # coordinates with ties and both zeros, so a min/max taking the other operand changes bits
    pool = np.array([0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300, 3.5, 1e100, 0.1, 2.0 / 3.0])
    v = np.where(rng.random((60, 3)) < 0.7, rng.choice(pool, size=(60, 3)), rng.normal(size=(60, 3)))
    tri = rng.integers(0, 60, size=(200, 3))
    n_rows = 200 + 150 + 50
    pairs = rng.integers(0, 200, size=(150, 2))
    boxes = rng.choice(pool, size=(50, 6))
    for pad in (0.0, 1e-12, 0.25):
        nf = np.full((n_rows, L.AABB_FCOLS), np.nan)
        _write_rows(nf, v, tri, pairs, boxes, pad)
        want = np.empty_like(nf)
        for k, (p, q, r) in enumerate(tri):
            want[k] = scalar_row([_mn(v[p, d], _mn(v[q, d], v[r, d])) for d in range(3)],
                                 [_mx(v[p, d], _mx(v[q, d], v[r, d])) for d in range(3)], pad)
        for k, (a, b) in enumerate(pairs):
            lo = [_mn(want[a, d] - want[a, 3 + d], want[b, d] - want[b, 3 + d]) for d in range(3)]
            hi = [_mx(want[a, d] + want[a, 3 + d], want[b, d] + want[b, 3 + d]) for d in range(3)]
            want[200 + k] = scalar_row(lo, hi, None)
        for k, bx in enumerate(boxes):
            want[350 + k] = scalar_row(bx[:3], bx[3:], pad)
        assert np.array_equal(nf.view(np.int64), want.view(np.int64))  # bits, signed zeros included
    # not vacuous: the other operand on ties changes the bits
    assert not np.array_equal(np.array([_mn(0.0, -0.0)]).view(np.int64), np.array([_mn(-0.0, 0.0)]).view(np.int64))
