"""Minimum distance between two hierarchies: branch and bound on lower bounds.

Everything is expressed in A's model frame, as in ``_traverse``: B's model-to-A transform
(R, t) is computed once per query; B's triangles are moved into A's frame at the leaves
(the collision kernel's arithmetic, so tests see bit-identical coordinates).

Lower bounds, never above the distance of any point of one node's triangles to any point
of the other's (for any unit L, x, y: |x - y| >= |L.(x - y)| >= the gap of the two
projection intervals on L, so every separating-axis gap is a lower bound):

* boxes (aabb, obb, obb_sphere; ``box_bound``): the largest gap along a unit axis among
  the 15 axes of the separating-axis test and the line through the box centres. The 6
  face normals are unit vectors; an edge axis a_i x b_j has length
  sqrt(C[i1,j]^2 + C[i2,j]^2) and its gap is divided by it (axes shorter than 1e-3, nearly
  parallel edges, are skipped: the division would amplify rounding); the centre line
  u = T/|T| costs one square root (the projections T.a_k, T.b_k are the face axes' own
  numerators) and is what keeps the bound tight for distant small boxes, where the fixed
  axes lose a factor cos(angle to the centre line). The three gaps along A's face normals
  are the gaps between A's box and the box around B's box with A's axes, so the norm of
  their positive parts (the distance of those two boxes) is a bound as well, for one
  square root: the exact box distance when the boxes are aligned (AABB trees under
  axis-permuting rotations); likewise with B's axes. The projected radii use |C| + 1e-6
  like the collision test (``_overlap.ABS_EPS``): it absorbs the rounding of C and of the
  identities the unrolled formulas rely on, and can only lower the bound. Not the exact
  box distance: on the linked tori the exact box distance would have pruned 9 of 379
  expanded pairs more. For AABB trees C = R (no per-pair rotation products);
* spheres (sphere): |c_a - c_b| - r_a - r_b;
* obb_sphere: the larger of the two (the sphere first: it is cheaper);
* k-DOPs (``kdop_bound``): Fünzig & Fellner section 5: B's k-DOP realigned to A's
  directions (``_kdop_traverse``, "table"/"all"/"major"), then the largest gap between
  the realigned interval and A's slab along a unit direction D_i;
* a leaf triangle pair (``_tridist.tri_plane_bound``), before its exact distance: the
  larger gap along the two triangles' plane normals, with a rigorous rounding allowance.

Bounds may be negative (overlapping volumes); pruning uses max(bound, 0), the queue key
the raw value (deeper overlaps first). A child pair's bound is raised to its parent's
(its triangles are among the parent's). The evaluation of a box bound stops early,
returning the partial maximum, once the bound reaches the pruning threshold. Volumes are
grown by the hierarchy's padding (``bvh.PAD_REL``), far above the rounding of these
formulas (a bound can exceed the exact one only by rounding, ~1e-16 of the coordinates).

Search (``distance_search``): a greedy dive to a first leaf pair, then depth-first (a
stack, children ordered by bound) or best-first (a binary min-heap keyed by bound). A
pair taken from the queue is a leaf pair (exact triangle distances, ``_tridist``) or is
split by descending the node with the larger volume (as ``_traverse``). With ``best``
the smallest triangle distance found so far, a pair is dropped when
max(bound, 0) >= thr(best) with

    thr(best) = min(best - abs_err, best / (1 + rel_err))

(thr = best for an exact query; leaf triangle pairs are skipped by their plane bound the
same way); the search ends when the queue is empty (best-first: when its minimum reaches
thr) or best is 0 (an intersection). best only decreases and thr is non-decreasing in
best, so every dropped pair's triangles are at distance >= thr(best then) >= thr(final
best); the pair realising d_true was either evaluated (d = d_true) or dropped
(thr(d) <= d_true), so the result d satisfies

    d_true <= d <= d_true + max(abs_err, rel_err * d_true).
"""

import numpy as np
from numba import njit, prange

from ._core import descend_a, pose_status
from ._pairjit import pair_njit
from ._cycles import read_cycles
from ._kdop_traverse import QF_TROW, QI_COLS, prepare_query
from ._layout import (BUFFER_FULL, CNT_BV_TESTS, CNT_FALSE, CNT_LEAF_PAIRS, CNT_MAX_STACK, CNT_PRIM_CYCLES,
                      CNT_PRIM_TESTS, COUNT, DONE, KDOP_KINDS, KIND_AABB, KIND_KDOP6, KIND_KDOP26, KIND_OBB,
                      KIND_OBB_SPHERE, KIND_SPHERE, LEFT, N_COUNTERS, RIGHT, START)
from ._pack import unpack
from ._tridist import _tri_dist, tri_plane_bound
from .bv.bounds import (AXIS_CENTRE, AXIS_FACES_A, AXIS_FACES_B, AXIS_SPHERE, AXIS_TRI_PLANE_A,  # noqa: F401
                        AXIS_TRI_PLANE_B, N_BOUND_IDS)
from .bv.dispatch import child_bounds, kdop_bound, kdop_child_bounds, pair_bound
from .transforms import _relative_transform

# counters (int64): the traversal core's slots (``_layout``), read here as bound
# evaluations, triangle distances, leaf pairs taken from the queue, leaf pairs that did not
# improve the best distance, cycles in triangle distances, largest queue
CNT_NO_GAIN = CNT_FALSE
CNT_MAX_HEAP = CNT_MAX_STACK

# trace events (one row per event, in order)
EV_PRUNED = 0  # bound evaluated and >= threshold: pair dropped
EV_QUEUED = 1  # bound evaluated and below threshold: pair queued (or continued)
EV_EXPANDED = 2  # pair taken from the queue and split into two child pairs
EV_LEAF = 3  # leaf pair taken from the queue, triangles evaluated (value: their minimum)
EV_DROPPED = 4  # pair taken from the queue whose bound now reaches the threshold (best-first: the end)

# distance_search() status: the core's DONE / BUFFER_FULL (heap or trace full: grow it and
# call again with the returned state)

# best_f layout: distance, p (3, on A), q (3, on B) in A's frame; best_i: triangle of A, of B
N_BEST_F = 7


# Compilation note: the bound helpers take scalars and tuples, never arrays, and are plain
# calls (not numba-IR inlined): an array argument costs reference counting on every call,
# and IR inlining of these bodies into the search multiplied its compile time (minutes).
# LLVM inlines the small ones where it pays.

@njit(cache=True, inline='always')
def threshold(best, abs_err, rel_err):
    """Pruning threshold: a pair whose bound reaches it cannot improve the answer by more
    than the allowed error."""
    return min(best - abs_err, best / (1.0 + rel_err))


@njit(cache=True, inline='always')
def _heap_push(hk, hp, n, key, payload):
    """Binary min-heap on keys ``hk`` with payloads ``hp`` (node pair a << 32 | b)."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] <= key:
            break
        hk[i] = hk[p]
        hp[i] = hp[p]
        i = p
    hk[i] = key
    hp[i] = payload
    return n + 1


@njit(cache=True, inline='always')
def _heap_pop(hk, hp, n):
    """Remove the minimum; returns (key, payload, new size)."""
    key = hk[0]
    pl = hp[0]
    n -= 1
    if n > 0:
        lk = hk[n]
        lp = hp[n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            kc = hk[c]
            if c + 1 < n:
                k2 = hk[c + 1]
                if k2 < kc:
                    c += 1
                    kc = k2
            if kc >= lk:
                break
            hk[i] = kc
            hp[i] = hp[c]
            i = c
        hk[i] = lk
        hp[i] = lp
    return key, pl, n


@njit(cache=True, inline='always')
def _pack(a, b):
    return (np.int64(a) << 32) | np.int64(b)


@pair_njit
def _leaf_pair(a, b, R, t, abs_err, rel_err, use_plane, niA, poA, vA, fA, niB, poB, vB, fB, best_f, best_i,
               counters, hist):
    """Every triangle pair of a leaf pair: first (``use_plane``) the plane bound
    (``tri_plane_bound``, counted as a bound evaluation; the pair is skipped when it
    reaches the threshold), then the exact distance; updates best_f/best_i. Returns the
    smallest exact distance evaluated in this leaf pair (inf if every pair was skipped)."""
    c0 = read_cycles()
    leaf_min = np.inf
    sa = niA[a, START]
    sb = niB[b, START]
    for jb in range(sb, sb + niB[b, COUNT]):
        fb = poB[jb]
        v = fB[fb, 0]
        x, y, z = vB[v, 0], vB[v, 1], vB[v, 2]
        q0 = (R[0, 0] * x + R[0, 1] * y + R[0, 2] * z + t[0],
              R[1, 0] * x + R[1, 1] * y + R[1, 2] * z + t[1],
              R[2, 0] * x + R[2, 1] * y + R[2, 2] * z + t[2])
        v = fB[fb, 1]
        x, y, z = vB[v, 0], vB[v, 1], vB[v, 2]
        q1 = (R[0, 0] * x + R[0, 1] * y + R[0, 2] * z + t[0],
              R[1, 0] * x + R[1, 1] * y + R[1, 2] * z + t[1],
              R[2, 0] * x + R[2, 1] * y + R[2, 2] * z + t[2])
        v = fB[fb, 2]
        x, y, z = vB[v, 0], vB[v, 1], vB[v, 2]
        q2 = (R[0, 0] * x + R[0, 1] * y + R[0, 2] * z + t[0],
              R[1, 0] * x + R[1, 1] * y + R[1, 2] * z + t[1],
              R[2, 0] * x + R[2, 1] * y + R[2, 2] * z + t[2])
        for ja in range(sa, sa + niA[a, COUNT]):
            fa = poA[ja]
            p = fA[fa, 0]
            p0 = (vA[p, 0], vA[p, 1], vA[p, 2])
            p = fA[fa, 1]
            p1 = (vA[p, 0], vA[p, 1], vA[p, 2])
            p = fA[fa, 2]
            p2 = (vA[p, 0], vA[p, 1], vA[p, 2])
            thr = threshold(best_f[0], abs_err, rel_err)
            if use_plane and thr < np.inf:
                counters[CNT_BV_TESTS] += 1
                g, which = tri_plane_bound(p0, p1, p2, q0, q1, q2)
                if g >= thr:
                    hist[AXIS_TRI_PLANE_A + which] += 1
                    continue
            counters[CNT_PRIM_TESTS] += 1
            d, P, Q = _tri_dist(p0, p1, p2, q0, q1, q2)
            if d < leaf_min:
                leaf_min = d
            if d < best_f[0]:
                best_f[0] = d
                for k in range(3):
                    best_f[1 + k] = P[k]
                    best_f[4 + k] = Q[k]
                best_i[0] = fa
                best_i[1] = fb
                if d == 0.0:
                    counters[CNT_PRIM_CYCLES] += read_cycles() - c0
                    return leaf_min
    counters[CNT_PRIM_CYCLES] += read_cycles() - c0
    return leaf_min


@njit(cache=True)
def _trace_row(trace_i, trace_f, n, a, b, event, axis, bound, value):
    trace_i[n, 0] = a
    trace_i[n, 1] = b
    trace_i[n, 2] = event
    trace_i[n, 3] = axis
    trace_f[n, 0] = bound
    trace_f[n, 1] = value
    return n + 1


@njit(cache=True)
def distance_search(kind, depth_first, fresh, R, t, abs_err, rel_err, trace_on,
                    nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB,
                    method, slabA, slabB, tabB, outB, qf, qi,
                    hk, hp, n_heap, best_f, best_i, trace_i, trace_f, n_trace, counters, hist):
    """Branch and bound for the minimum triangle distance, resumably.

    The queue: keys ``hk`` (lower bounds) and payloads ``hp`` (node pair a << 32 | b),
    ``n_heap`` entries: a binary min-heap (best-first) or, with ``depth_first``, a stack.
    ``fresh``: start a query (bound the root pair and queue it); otherwise continue from
    the queue. ``best_f`` (7,) (distance, p, q in A's frame; start with distance inf) and
    ``best_i`` (2,) (triangle ids) hold the best pair so far. With ``trace_on``, one row per
    event is appended to ``trace_i`` (cap, 4) int32 (node_a, node_b, event, axis) and
    ``trace_f`` (cap, 2) (bound, value) after ``n_trace`` rows. Adds to ``counters`` and to
    the pruning histogram ``hist`` (N_BOUND_IDS,) (pairs dropped on evaluation, by bound id).

    Either order starts with a greedy dive (always into the child pair with the smaller
    bound) down to the first leaf pair, so that a triangle distance prunes from early on.
    Best-first then pops the smallest bound, continuing directly with the better child
    while it is no worse than the heap's top; the search ends when the top reaches the
    threshold (every pair left has max(bound, 0) >= thr). Depth-first pushes the worse
    child and continues with the better one; popped pairs are re-checked against the
    current threshold. Best-first expands only pairs whose bound is below the final
    threshold; depth-first may expand more when the early best distances are poor, but
    its queue operations are O(1).

    k-DOP trees (``kind`` in KDOP_KINDS) use ``kdop_bound`` with the realignment ``method``,
    A's slabs ``slabA``, B's ``slabB``/``tabB``/``outB`` and the per-query tables ``qf``/``qi``
    (``_kdop_traverse.prepare_query``); other kinds ignore those arrays.

    Returns (status, n_heap, n_trace). With ``BUFFER_FULL`` the queue or the trace is full:
    grow it and call again with ``fresh`` False and the returned state.
    """
    kdop = KIND_KDOP6 <= kind <= KIND_KDOP26
    cap = hk.shape[0]
    tcap = trace_i.shape[0]
    Rt = (R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2])
    tt = (t[0], t[1], t[2])
    have_cur = False
    a = 0
    b = 0
    lb = 0.0
    if fresh:
        if kdop:
            lb, ax = kdop_bound(method, np.int64(0), np.int64(0), slabA, slabB, tabB, outB, qf, qi, np.inf)
        else:
            lb, ax = pair_bound(kind, 0, 0, Rt, tt, nfA, nfB, np.inf)
        counters[CNT_BV_TESTS] += 1
        if trace_on:
            n_trace = _trace_row(trace_i, trace_f, n_trace, np.int64(0), np.int64(0), np.int64(EV_QUEUED),
                                 np.int64(ax), lb, np.nan)
        have_cur = True
    while True:
        if n_heap + 3 > cap or (trace_on and n_trace + 3 > tcap):
            if have_cur:  # park the current pair in the queue (there is room for it)
                if depth_first:
                    hk[n_heap] = lb
                    hp[n_heap] = _pack(a, b)
                    n_heap += 1
                else:
                    n_heap = _heap_push(hk, hp, n_heap, lb, _pack(a, b))
            return BUFFER_FULL, n_heap, n_trace
        if not have_cur:
            if n_heap == 0:
                break
            if depth_first:
                n_heap -= 1
                lb = hk[n_heap]
                pl = hp[n_heap]
            else:
                lb, pl, n_heap = _heap_pop(hk, hp, n_heap)
            a = np.int32(pl >> 32)
            b = np.int32(pl & 0xFFFFFFFF)
        have_cur = False
        best = best_f[0]
        if best <= 0.0:  # an intersection: nothing can be closer
            n_heap = 0
            break
        thr = threshold(best, abs_err, rel_err)
        if max(lb, 0.0) >= thr:
            if trace_on:
                n_trace = _trace_row(trace_i, trace_f, n_trace, a, b, np.int64(EV_DROPPED), np.int64(-1), lb, np.nan)
            if depth_first:  # this pair only
                continue
            # the smallest bound left reaches the threshold: nothing left can improve
            n_heap = 0
            break
        leaf_a = niA[a, LEFT] < 0
        leaf_b = niB[b, LEFT] < 0
        if leaf_a and leaf_b:
            counters[CNT_LEAF_PAIRS] += 1
            # the box of a one-triangle leaf of an oriented-box tree is the triangle's own
            # frame: its face-axis gap already is the plane bound
            use_plane = (not (kind == KIND_OBB or kind == KIND_OBB_SPHERE) or niA[a, COUNT] > 1
                         or niB[b, COUNT] > 1)
            leaf_min = _leaf_pair(a, b, R, t, abs_err, rel_err, use_plane, niA, poA, vA, fA, niB, poB, vB, fB,
                                  best_f, best_i, counters, hist)
            if not best_f[0] < best:
                counters[CNT_NO_GAIN] += 1
            if trace_on:
                n_trace = _trace_row(trace_i, trace_f, n_trace, a, b, np.int64(EV_LEAF), np.int64(-1), lb, leaf_min)
            continue
        if trace_on:
            n_trace = _trace_row(trace_i, trace_f, n_trace, a, b, np.int64(EV_EXPANDED), np.int64(-1), lb, np.nan)
        # the core's descend rule; SIZE is the last column of full and compact (AABB) rows alike
        split_a = descend_a(leaf_a, leaf_b, nfA[a, nfA.shape[1] - 1], nfB[b, nfB.shape[1] - 1])
        if split_a:
            a1 = niA[a, LEFT]
            a2 = niA[a, RIGHT]
            b1 = b
            b2 = b
        else:
            a1 = a
            a2 = a
            b1 = niB[b, LEFT]
            b2 = niB[b, RIGHT]
        if kdop:
            l1, x1, l2, x2 = kdop_child_bounds(method, a1, a2, b1, b2, slabA, slabB, tabB, outB, qf, qi, thr)
        else:
            l1, x1, l2, x2 = child_bounds(kind, split_a, a1, a2, b1, b2, Rt, tt, nfA, nfB, thr)
        counters[CNT_BV_TESTS] += 2
        # a child's triangles are among its parent's: the parent's bound holds for it too
        if l1 < lb:
            l1 = lb
        if l2 < lb:
            l2 = lb
        keep1 = max(l1, 0.0) < thr
        keep2 = max(l2, 0.0) < thr
        if not keep1 and x1 >= 0:
            hist[x1] += 1
        if not keep2 and x2 >= 0:
            hist[x2] += 1
        if trace_on:
            n_trace = _trace_row(trace_i, trace_f, n_trace, a1, b1, EV_QUEUED if keep1 else EV_PRUNED,
                                 x1, l1, np.nan)
            n_trace = _trace_row(trace_i, trace_f, n_trace, a2, b2, EV_QUEUED if keep2 else EV_PRUNED,
                                 x2, l2, np.nan)
        if keep2 and (not keep1 or l2 < l1):
            # make child 1 the better one
            a1, a2 = a2, a1
            b1, b2 = b2, b1
            l1, l2 = l2, l1
            keep1, keep2 = keep2, keep1
        if keep2:
            if depth_first:
                hk[n_heap] = l2
                hp[n_heap] = _pack(a2, b2)
                n_heap += 1
            else:
                n_heap = _heap_push(hk, hp, n_heap, l2, _pack(a2, b2))
        if keep1:
            # continue with the better child: always depth-first and in the first dive
            # (best = inf), else while it is no worse than the heap's top
            if depth_first or best == np.inf or n_heap == 0 or l1 <= hk[0]:
                have_cur = True
                a = a1
                b = b1
                lb = l1
            else:
                n_heap = _heap_push(hk, hp, n_heap, l1, _pack(a1, b1))
        if n_heap > counters[CNT_MAX_HEAP]:
            counters[CNT_MAX_HEAP] = n_heap
    return DONE, n_heap, n_trace


SUPPORTED_KINDS = (KIND_AABB, KIND_OBB, KIND_SPHERE, KIND_OBB_SPHERE) + tuple(KDOP_KINDS)

# distance_query() output: (out, hist, trace_i, trace_f, n_trace) with the scalars
# out = (distance, p (3), q (3) -- closest points in world coordinates, triangle of A,
#        triangle of B, the N_COUNTERS counters)


@njit(cache=True)
def distance_query(kind, depth_first, pose_a, pose_b, abs_err, rel_err, trace_on,
                   nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB):
    """One complete query on non-k-DOP trees: relative transform, search (growing the
    queue and the trace as needed), closest points to world coordinates. Returns (out,
    hist (N_BOUND_IDS,), trace_i (cap, 4) int32, trace_f (cap, 2), n_trace): see above for
    ``out``. (The k-DOP arrays are placeholders made here: fewer arguments to unbox per
    call.)"""
    f2 = np.zeros((1, 2))
    return distance_query_kdop(kind, depth_first, pose_a, pose_b, abs_err, rel_err, trace_on,
                               nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, np.int64(0), f2, f2, f2,
                               np.zeros((1, 2), dtype=np.int32), f2, np.zeros((1, 2), dtype=np.int64))


@njit(cache=True)
def distance_query_kdop(kind, depth_first, pose_a, pose_b, abs_err, rel_err, trace_on,
                        nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, method, slabA, slabB, tabB, outB, qf, qi):
    """``distance_query`` with the k-DOP arrays (see ``distance_search``). (Plain loops
    rather than slice assignments: they compile several times faster.)"""
    R = np.empty((3, 3))
    t = np.empty(3)
    _relative_transform(pose_a, pose_b, R, t)
    hk = np.empty(256)
    hp = np.empty(256, dtype=np.int64)
    best_f = np.empty(N_BEST_F)
    for k in range(N_BEST_F):
        best_f[k] = np.inf
    best_i = np.zeros(2, dtype=np.int32)
    trace_i = np.empty((1024 if trace_on else 1, 4), dtype=np.int32)
    trace_f = np.empty((trace_i.shape[0], 2))
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    hist = np.zeros(N_BOUND_IDS, dtype=np.int64)
    fresh = True
    n_heap = np.int64(0)  # not literal 0s: numba would compile distance_search for them too
    n_trace = np.int64(0)
    while True:
        status, n_heap, n_trace = distance_search(
            kind, depth_first, fresh, R, t, abs_err, rel_err, trace_on, nfA, niA, poA, vA, fA,
            nfB, niB, poB, vB, fB, method, slabA, slabB, tabB, outB, qf, qi, hk, hp, n_heap,
            best_f, best_i, trace_i, trace_f, n_trace, counters, hist)
        if status == DONE:
            break
        fresh = False
        if n_heap + 3 > hk.shape[0]:
            hk2 = np.empty(2 * hk.shape[0])
            hp2 = np.empty(2 * hk.shape[0], dtype=np.int64)
            for k in range(n_heap):
                hk2[k] = hk[k]
                hp2[k] = hp[k]
            hk = hk2
            hp = hp2
        if trace_on and n_trace + 3 > trace_i.shape[0]:
            ti2 = np.empty((2 * trace_i.shape[0], 4), dtype=np.int32)
            tf2 = np.empty((2 * trace_i.shape[0], 2))
            for k in range(n_trace):
                for c in range(4):
                    ti2[k, c] = trace_i[k, c]
                tf2[k, 0] = trace_f[k, 0]
                tf2[k, 1] = trace_f[k, 1]
            trace_i = ti2
            trace_f = tf2
    # closest points to world coordinates; scalars box faster than small arrays
    w = np.empty(6)
    for k in range(2):
        for r in range(3):
            w[3 * k + r] = (pose_a[r, 0] * best_f[1 + 3 * k] + pose_a[r, 1] * best_f[2 + 3 * k]
                            + pose_a[r, 2] * best_f[3 + 3 * k] + pose_a[r, 3])
    out = (best_f[0], w[0], w[1], w[2], w[3], w[4], w[5], np.int64(best_i[0]), np.int64(best_i[1]),
           counters[0], counters[1], counters[2], counters[3], counters[4], counters[5])
    return out, hist, trace_i, trace_f, n_trace


# Results leave the compiled code in one float array plus a caller's int64 array (each
# returned array costs a Python object): ``res`` (7,) = distance, p (3), q (3) (world);
# ``counts`` (D_STATUS + 1,) = counters (N_COUNTERS), bound histogram (N_BOUND_IDS),
# triangle of A, triangle of B, status (0 or a bad pose, ``_core.pose_status``).
D_TRIS = N_COUNTERS + N_BOUND_IDS
D_STATUS = D_TRIS + 2


@njit(cache=True)
def _store(out, hist, counts):
    res = np.empty(N_BEST_F)
    res[0] = out[0]
    res[1] = out[1]
    res[2] = out[2]
    res[3] = out[3]
    res[4] = out[4]
    res[5] = out[5]
    res[6] = out[6]
    counts[D_TRIS] = out[7]
    counts[D_TRIS + 1] = out[8]
    counts[0] = out[9]
    counts[1] = out[10]
    counts[2] = out[11]
    counts[3] = out[12]
    counts[4] = out[13]
    counts[5] = out[14]
    for k in range(N_BOUND_IDS):
        counts[N_COUNTERS + k] = hist[k]
    return res


@njit(cache=True)
def _distance(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, trace_on, counts):
    st = pose_status(pose_a, pose_b)
    counts[D_STATUS] = st
    nfA, niA, poA, vA, fA = unpack(FA, IA)
    nfB, niB, poB, vB, fB = unpack(FB, IB)
    if st:
        pose_a = np.eye(4)
        pose_b = np.eye(4)
    out, hist, trace_i, trace_f, n_trace = distance_query(IA[0], depth_first, pose_a, pose_b, abs_err, rel_err,
                                                          trace_on, nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB)
    return _store(out, hist, counts), trace_i[:n_trace], trace_f[:n_trace]


@njit(cache=True, nogil=True)
def distance_entry(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, counts):
    """One query on packed non-k-DOP trees (``cdcore._pack``): returns ``res``, writes
    ``counts`` (see above). A bad pose is reported in the status (the result is then void)."""
    return _distance(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, np.bool_(False), counts)[0]


@njit(cache=True, nogil=True)
def distance_trace_entry(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, counts):
    """``distance_entry`` with the trace: (res, trace_i (k, 4) int32, trace_f (k, 2))."""
    return _distance(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, np.bool_(True), counts)


@njit(cache=True)
def _distance_kdop(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, trace_on, counts, method,
                   slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta):
    st = pose_status(pose_a, pose_b)
    counts[D_STATUS] = st
    if st:
        pose_a = np.eye(4)
        pose_b = np.eye(4)
    R = np.empty((3, 3))
    t = np.empty(3)
    _relative_transform(pose_a, pose_b, R, t)
    k2 = dirs.shape[0]
    qf = np.zeros((k2, QF_TROW + Tt.shape[0]))
    qi = np.zeros((k2, QI_COLS), dtype=np.int64)
    prepare_query(method, dirs, R, t, scale_b, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta, qf, qi)
    nfA, niA, poA, vA, fA = unpack(FA, IA)
    nfB, niB, poB, vB, fB = unpack(FB, IB)
    out, hist, trace_i, trace_f, n_trace = distance_query_kdop(
        IA[0], depth_first, pose_a, pose_b, abs_err, rel_err, trace_on, nfA, niA, poA, vA, fA,
        nfB, niB, poB, vB, fB, method, slabA, slabB, tabB, outB, qf, qi)
    return _store(out, hist, counts), trace_i[:n_trace], trace_f[:n_trace]


@njit(cache=True, nogil=True)
def distance_kdop_entry(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, counts, method,
                        slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta):
    """``distance_entry`` for k-DOP trees: B's realignment tables are prepared here."""
    return _distance_kdop(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, np.bool_(False), counts,
                          method, slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN,
                          inv_delta)[0]


@njit(cache=True, nogil=True)
def distance_kdop_trace_entry(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, counts, method,
                              slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN,
                              inv_delta):
    """``distance_kdop_entry`` with the trace."""
    return _distance_kdop(FA, IA, FB, IB, pose_a, pose_b, depth_first, abs_err, rel_err, np.bool_(True), counts,
                          method, slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN,
                          inv_delta)


@njit(cache=True, nogil=True)
def _distance_chunk(FA, IA, FB, IB, pose_a, poses_b, depth_first, abs_err, rel_err, kdop, method, KT, i0, i1,
                    dist, tris, pts, acc, hacc):
    """Queries ``i0 .. i1 - 1`` of a distance batch (one chunk): writes their rows of ``dist``,
    ``tris``, ``pts``; adds to ``acc`` (N_COUNTERS,) and ``hacc`` (N_BOUND_IDS,)."""
    nfA, niA, poA, vA, fA = unpack(FA, IA)
    nfB, niB, poB, vB, fB = unpack(FB, IB)
    k2 = KT.dirs.shape[0]
    kind = IA[0]
    R = np.empty((3, 3))
    t = np.empty(3)
    qf = np.zeros((k2, QF_TROW + KT.T.shape[0]))
    qi = np.zeros((k2, QI_COLS), dtype=np.int64)
    for i in range(i0, i1):
        if kdop:
            _relative_transform(pose_a, poses_b[i], R, t)
            prepare_query(method, KT.dirs, R, t, KT.scale_b, KT.fvert, KT.fstart, KT.fslab, KT.fsign, KT.finv, KT.T,
                          KT.TN, KT.inv_delta, qf, qi)
        out, hist, _, _, _ = distance_query_kdop(kind, depth_first, pose_a, poses_b[i], abs_err, rel_err,
                                                 np.bool_(False), nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, method,
                                                 KT.slabA, KT.slabB, KT.tabB, KT.outB, qf, qi)
        dist[i] = out[0]
        pts[i, 0, 0] = out[1]
        pts[i, 0, 1] = out[2]
        pts[i, 0, 2] = out[3]
        pts[i, 1, 0] = out[4]
        pts[i, 1, 1] = out[5]
        pts[i, 1, 2] = out[6]
        tris[i, 0] = out[7]
        tris[i, 1] = out[8]
        acc[0] += out[9]
        acc[1] += out[10]
        acc[2] += out[11]
        acc[3] += out[12]
        acc[4] += out[13]
        acc[5] = max(acc[5], out[14])
        for k in range(N_BOUND_IDS):
            hacc[k] += hist[k]


@njit(cache=True, nogil=True, parallel=True)
def distance_batch_entry(FA, IA, FB, IB, pose_a, poses_b, depth_first, abs_err, rel_err, kdop, method, KT,
                         n_chunks):
    """``distance_entry`` (``kdop``: ``distance_kdop_entry``) for every pose of ``poses_b``
    (N, 4, 4), in ``n_chunks`` parallel chunks (``KT``: ``_kdop_traverse.KdopTables``; ``method``:
    the realignment); each query is independent, so the
    results equal a serial loop's. Returns (distances (N,), triangle pairs (N, 2) int32, closest
    points (N, 2, 3) world, counters (N_COUNTERS,) summed but the largest queue (max), hist)."""
    n = poses_b.shape[0]
    dist = np.empty(n)
    tris = np.empty((n, 2), dtype=np.int32)
    pts = np.empty((n, 2, 3))
    acc = np.zeros((n_chunks, N_COUNTERS), dtype=np.int64)
    hacc = np.zeros((n_chunks, N_BOUND_IDS), dtype=np.int64)
    for c in prange(n_chunks):
        _distance_chunk(FA, IA, FB, IB, pose_a, poses_b, depth_first, abs_err, rel_err, kdop, method, KT,
                        c * n // n_chunks, (c + 1) * n // n_chunks, dist, tris, pts, acc[c], hacc[c])
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    hist_total = np.zeros(N_BOUND_IDS, dtype=np.int64)
    for c in range(n_chunks):
        for k in range(N_COUNTERS):
            counters[k] = max(counters[k], acc[c, k]) if k == CNT_MAX_HEAP else counters[k] + acc[c, k]
        for k in range(N_BOUND_IDS):
            hist_total[k] += hacc[c, k]
    return dist, tris, pts, counters, hist_total


@njit(cache=True, nogil=True)
def distance_batch_serial_entry(FA, IA, FB, IB, pose_a, poses_b, depth_first, abs_err, rel_err, kdop, method, KT):
    """``distance_batch_entry`` on the calling thread (small batches, ``parallel=False``): never
    wakes numba's thread pool."""
    n = poses_b.shape[0]
    dist = np.empty(n)
    tris = np.empty((n, 2), dtype=np.int32)
    pts = np.empty((n, 2, 3))
    acc = np.zeros(N_COUNTERS, dtype=np.int64)
    hist = np.zeros(N_BOUND_IDS, dtype=np.int64)
    _distance_chunk(FA, IA, FB, IB, pose_a, poses_b, depth_first, abs_err, rel_err, kdop, method, KT, np.int64(0), n,
                    dist, tris, pts, acc, hist)
    return dist, tris, pts, acc, hist
