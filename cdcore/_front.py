"""Kernels of the generalized front cache (``cdcore.front``).

Ehmann & Lin 2001 ("Accurate and fast proximity queries between polyhedra using convex surface
decomposition", section 5: generalized front tracking; named by Fünzig & Fellner 2003, section 2,
as the cache their k-DOP pipeline takes): the *front* is the set of node pairs of the bounding-
volume test tree (BVTT) where the last traversal stopped: pairs whose volumes were separated, and
leaf pairs. The leaf x leaf products under the front pairs partition all of A's leaves x B's
leaves, so a traversal seeded with the front instead of the root pair finds exactly the same
intersecting triangles as one from the root (a pair whose volumes are separated has no
intersecting triangles below it; every other pair is descended to its leaves).

One frame (``front_entry``):

1. **Pruning** (pulling the front up): two front pairs that are siblings in the BVTT, (l, b) and
   (r, b) with l, r the children of p in A (or (a, l), (a, r) in B), both separated for at least
   ``AGE_MIN`` frames and not waiting, are replaced by the parent pair (p, b) as one seed, and so
   on upwards (a shift-reduce pass over the front, which is kept in traversal order so that
   siblings are neighbours: no sorting, no hashing). If the pulled-up pair is separated, one
   test replaces many; if not, the traversal descends from it and the pairs below it wait
   ``2, 4, .. WAIT_MAX`` frames before the next attempt (exponential back-off: a pair whose
   parent overlaps in a steady contact pays for a failed attempt O(log frames) times, not every
   frame). Ehmann & Lin pull up where the parent pair is separated; here the parent is tested as
   the seed itself, so an attempt costs nothing when it holds.
2. **Sprouting**: the seeds are pushed on the traversal stack and ``_core.traverse`` (resumable
   from a seeded stack) tests each and descends where they now overlap, with the trace on.
3. The trace rows whose outcome is not OVERLAP are the new front. The rows of one seed's
   sub-traversal are contiguous and start with the seed itself (depth-first), so each new
   front pair inherits its seed's state: (age: frames separated in a row, wait, fails).

Works with refit and articulated updates as they keep the node ids (only the volumes move); a
rebuild (new topology) resets the front (``cdcore.front.FrontCache``).
"""
import numpy as np
from numba import njit

from ._core import (Buffers, _grown, _kdop_query, _unread_kdop, new_buffers, pose_status, sorted_pairs,
                    traverse, trees)
from ._layout import (DONE, LEFT, N_STATS, OUT_OVERLAP, OUT_SEPARATED, P_METHOD, RIGHT, ST_PAIRS, ST_SP,
                      ST_TRACE, TR_A, TR_B, TR_OUTCOME)
from ._pack import H_HEIGHT, H_LEAF_CAP
from .transforms import _relative_transform

AGE_MIN = 1  # frames a pair must have been separated before it is pulled up (1: at once; failed
# attempts back off, so an incoherent motion, like random placements, collapses the stale front
# the frame after)
WAIT_MAX = 16  # longest back-off (frames) after failed pull-ups

# columns of a front row (int32): the node pair, then its state
FR_A = 0
FR_B = 1
ST_AGE = 2  # consecutive frames separated (0: a leaf pair whose volumes overlapped)
ST_WAIT = 3  # frames to wait before a pull-up may be tried again
ST_FAILS = 4  # failed pull-ups in a row
FRONT_COLS = 5

NO_PARENT = -1


@njit(cache=True, nogil=True)
def parents(ni):
    """(n,) parent of every node (-1 for the root)."""
    n = ni.shape[0]
    p = np.full(n, NO_PARENT, dtype=np.int32)
    for node in range(n):
        left = ni[node, LEFT]
        if left >= 0:
            p[left] = node
            p[ni[node, RIGHT]] = node
    return p


@njit(cache=True)
def _eligible(state, i):
    return state[i, ST_AGE] >= AGE_MIN and state[i, ST_WAIT] == 0


@njit(cache=True)
def make_seeds(front, parA, parB):
    """This frame's seeds: the front with eligible sibling pairs pulled up to their parent
    pair, as far up as they go (a shift-reduce pass over the front in traversal order, where
    BVTT siblings are neighbours: (l, b) then (r, b), or (a, l) then (a, r)). Returns (seeds
    (k, FRONT_COLS) int32 in traversal order, merged (k,) bool: pulled up this frame)."""
    n = front.shape[0]
    seeds = np.empty((n, FRONT_COLS), dtype=np.int32)
    merged = np.zeros(n, dtype=np.bool_)
    k = 0
    for i in range(n):
        for c in range(FRONT_COLS):
            seeds[k, c] = front[i, c]
        merged[k] = False
        k += 1
        while k >= 2 and _eligible(seeds, k - 1) and _eligible(seeds, k - 2):
            a1 = seeds[k - 2, FR_A]
            b1 = seeds[k - 2, FR_B]
            a2 = seeds[k - 1, FR_A]
            b2 = seeds[k - 1, FR_B]
            if b1 == b2 and a1 != a2 and parA[a1] >= 0 and parA[a1] == parA[a2]:
                pa = parA[a1]
                pb = b1
            elif a1 == a2 and b1 != b2 and parB[b1] >= 0 and parB[b1] == parB[b2]:
                pa = a1
                pb = parB[b1]
            else:
                break
            k -= 1
            seeds[k - 1, FR_A] = pa
            seeds[k - 1, FR_B] = pb
            seeds[k - 1, ST_AGE] = min(seeds[k - 1, ST_AGE], seeds[k, ST_AGE])
            seeds[k - 1, ST_FAILS] = max(seeds[k - 1, ST_FAILS], seeds[k, ST_FAILS])
            merged[k - 1] = True
    return seeds[:k], merged[:k]


@njit(cache=True)
def _next_state(seed_row, outcome, merged, seeds, cur, out, r):
    """State of a new front entry from its seed's state; ``seed_row`` when it is the seed's own
    row (the seed stopped there), else the traversal sprouted below the seed."""
    sep = outcome == OUT_SEPARATED
    if merged:
        fails = seeds[cur, ST_FAILS]
        if seed_row:  # the pull-up held: a fresh entry
            out[r, ST_AGE] = 1
            out[r, ST_WAIT] = 0
            out[r, ST_FAILS] = 0
        else:  # it failed: the pairs below wait before the next try
            out[r, ST_AGE] = 1 if sep else 0
            out[r, ST_WAIT] = min(WAIT_MAX, 2 << min(fails, 10))
            out[r, ST_FAILS] = fails + 1
        return
    if seed_row:
        out[r, ST_AGE] = seeds[cur, ST_AGE] + 1 if sep else 0
        out[r, ST_WAIT] = max(0, seeds[cur, ST_WAIT] - 1)
        out[r, ST_FAILS] = seeds[cur, ST_FAILS]
    else:  # sprouted below a kept pair
        out[r, ST_AGE] = 1 if sep else 0
        out[r, ST_WAIT] = 0
        out[r, ST_FAILS] = 0


@njit(cache=True, inline='always')
def _frame(plan, R, t, A, B, K, IA, IB, front, parA, parB, counts):
    """The frame after the pose checks: seeds, the seeded traversal, the new front."""
    seeds, merged = make_seeds(front, parA, parB)
    ns = seeds.shape[0]
    leaf_cap = max(1, IA[H_LEAF_CAP] * IB[H_LEAF_CAP])
    buf = new_buffers(max(16, leaf_cap), max(64, 4 * ns), ns + IA[H_HEIGHT] + IB[H_HEIGHT] + 2)
    stack = buf.stack
    for k in range(ns):  # seed 0 on top: popped first
        stack[ns - 1 - k, 0] = seeds[k, FR_A]
        stack[ns - 1 - k, 1] = seeds[k, FR_B]
    buf.state[ST_SP] = ns
    while traverse(plan, R, t, A, B, K, buf) != DONE:
        pairs = buf.pairs
        trace = buf.trace
        if buf.state[ST_PAIRS] + leaf_cap > pairs.shape[0]:
            pairs = _grown(pairs, buf.state[ST_PAIRS])
        if buf.state[ST_TRACE] >= trace.shape[0]:
            trace = _grown(trace, buf.state[ST_TRACE])
        buf = Buffers(pairs, trace, buf.stack, buf.counters, buf.state, buf.box)
    trace = buf.trace
    n_trace = buf.state[ST_TRACE]
    # the new front: stop rows, with the state of the seed whose sub-traversal they belong to
    n_front = 0
    for r in range(n_trace):
        if trace[r, TR_OUTCOME] != OUT_OVERLAP:
            n_front += 1
    new_front = np.empty((n_front, FRONT_COLS), dtype=np.int32)
    nxt = 0
    cur = -1
    w = 0
    for r in range(n_trace):
        a = trace[r, TR_A]
        b = trace[r, TR_B]
        seed_row = nxt < ns and a == seeds[nxt, FR_A] and b == seeds[nxt, FR_B]
        if seed_row:
            cur = nxt
            nxt += 1
        outcome = trace[r, TR_OUTCOME]
        if outcome == OUT_OVERLAP:
            continue
        new_front[w, FR_A] = a
        new_front[w, FR_B] = b
        _next_state(seed_row, outcome, merged[cur], seeds, cur, new_front, w)
        w += 1
    for k in range(N_STATS):
        counts[k] = buf.counters[k]
    return sorted_pairs(buf.pairs[:buf.state[ST_PAIRS]]), new_front


@njit(cache=True, nogil=True)
def front_entry(FA, IA, FB, IB, pose_a, pose_b, plan, front, parA, parB, counts):
    """One frame of the front cache (module docstring) on non-k-DOP trees: all contacts of the
    query, from the front ``front`` (k, FRONT_COLS) int32 (node pairs and their state).
    ``plan``: the query's plan with the trace on and all contacts (``_core.make_plan``). Writes
    ``counts`` (N_STATS + 1,) like the core's entries (status last: 0 or a bad pose, then
    nothing else was done). Returns (sorted pairs (p, 2) int32, the new front (k', FRONT_COLS)
    int32)."""
    st = pose_status(pose_a, pose_b)
    counts[N_STATS] = st
    if st:
        return np.empty((0, 2), dtype=np.int32), front
    R = np.empty((3, 3))
    t = np.empty(3)
    _relative_transform(pose_a, pose_b, R, t)
    A, B = trees(FA, IA, FB, IB)
    K = _unread_kdop(R, A, B, counts.reshape((1, counts.shape[0])))
    return _frame(plan, R, t, A, B, K, IA, IB, front, parA, parB, counts)


@njit(cache=True, nogil=True)
def front_kdop_entry(FA, IA, FB, IB, pose_a, pose_b, plan, front, parA, parB, counts, KT):
    """``front_entry`` for k-DOP trees (``KT``: ``KdopTables``; B realigned for this query)."""
    st = pose_status(pose_a, pose_b)
    counts[N_STATS] = st
    if st:
        return np.empty((0, 2), dtype=np.int32), front
    R = np.empty((3, 3))
    t = np.empty(3)
    _relative_transform(pose_a, pose_b, R, t)
    A, B = trees(FA, IA, FB, IB)
    K = _kdop_query(plan[P_METHOD], KT, R, t)
    return _frame(plan, R, t, A, B, K, IA, IB, front, parA, parB, counts)


__all__ = ["front_entry", "front_kdop_entry", "parents", "make_seeds", "AGE_MIN", "WAIT_MAX", "FRONT_COLS"]
