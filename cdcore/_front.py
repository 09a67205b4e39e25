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
   ``AGE_MIN`` frames and not waiting, are replaced by the parent pair (p, b) as one seed. If the
   parent pair is separated, one test replaces two; if not, the traversal descends from it (one
   extra test) and the pairs below it wait ``2, 4, .. WAIT_MAX`` frames before the next attempt
   (exponential back-off: a pair whose parent overlaps in a steady contact pays for a failed
   attempt O(log frames) times, not every frame). Ehmann & Lin pull up as far as the parent is
   separated; this pulls up one level per frame, lazily.
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

from ._core import POSE_A_BAD, pose_status, sorted_pairs, traverse, _grown
from ._kdop_traverse import QF_TROW, QI_COLS, prepare_query
from ._layout import (DONE, LEFT, N_STATS, OUT_OVERLAP, OUT_SEPARATED, RIGHT, TEST_SLAB, TR_A, TR_B,
                      TR_OUTCOME, TRACE_COLS)
from ._pack import H_HEIGHT, H_LEAF_CAP, unpack
from .transforms import _relative_transform

AGE_MIN = 2  # frames a pair must have been separated before it is pulled up
WAIT_MAX = 64  # longest back-off (frames) after failed pull-ups

# state columns of a front entry
ST_AGE = 0  # consecutive frames separated (0: a leaf pair whose volumes overlapped)
ST_WAIT = 1  # frames to wait before a pull-up may be tried again
ST_FAILS = 2  # failed pull-ups in a row
N_STATE = 3

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
def _find(keys, order, key):
    """Index (into the unsorted arrays) of ``key`` among ``keys[order]`` (sorted), or -1."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        k = keys[order[mid]]
        if k < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < keys.shape[0] and keys[order[lo]] == key:
        return order[lo]
    return -1


@njit(cache=True)
def _eligible(state, i):
    return state[i, ST_AGE] >= AGE_MIN and state[i, ST_WAIT] == 0


@njit(cache=True)
def make_seeds(front, state, niA, niB, parA, parB):
    """The seeds of this frame (k, 2) and, per seed, (source entry, second entry or -1 for a
    kept pair): the front with eligible sibling pairs pulled up to their parent pair."""
    n = front.shape[0]
    keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        keys[i] = (np.int64(front[i, 0]) << 32) | np.int64(front[i, 1])
    order = np.argsort(keys)
    used = np.zeros(n, dtype=np.bool_)
    seeds = np.empty((n, 2), dtype=np.int32)
    src = np.empty((n, 2), dtype=np.int64)
    k = 0
    for i in range(n):
        if used[i]:
            continue
        a = front[i, 0]
        b = front[i, 1]
        used[i] = True
        if _eligible(state, i):
            j = -1
            pa = parA[a]
            if pa >= 0:
                s = niA[pa, LEFT] + niA[pa, RIGHT] - a
                j = _find(keys, order, (np.int64(s) << 32) | np.int64(b))
                if j >= 0 and not used[j] and _eligible(state, j):
                    used[j] = True
                    seeds[k, 0] = pa
                    seeds[k, 1] = b
                    src[k, 0] = i
                    src[k, 1] = j
                    k += 1
                    continue
            pb = parB[b]
            if pb >= 0:
                s = niB[pb, LEFT] + niB[pb, RIGHT] - b
                j = _find(keys, order, (np.int64(a) << 32) | np.int64(s))
                if j >= 0 and not used[j] and _eligible(state, j):
                    used[j] = True
                    seeds[k, 0] = a
                    seeds[k, 1] = pb
                    src[k, 0] = i
                    src[k, 1] = j
                    k += 1
                    continue
        seeds[k, 0] = a
        seeds[k, 1] = b
        src[k, 0] = i
        src[k, 1] = -1
        k += 1
    return seeds[:k], src[:k]


@njit(cache=True)
def _next_state(seed_row, outcome, merged, old, i, j, out, r):
    """State of a new front entry: ``seed_row`` when it is the seed's own row."""
    sep = outcome == OUT_SEPARATED
    if merged:
        fails = max(old[i, ST_FAILS], old[j, ST_FAILS])
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
        out[r, ST_AGE] = old[i, ST_AGE] + 1 if sep else 0
        out[r, ST_WAIT] = max(0, old[i, ST_WAIT] - 1)
        out[r, ST_FAILS] = old[i, ST_FAILS]
    else:  # sprouted below a kept pair
        out[r, ST_AGE] = 1 if sep else 0
        out[r, ST_WAIT] = 0
        out[r, ST_FAILS] = 0


@njit(cache=True, nogil=True)
def front_entry(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, axes, method, front, state, parA, parB,
                counts, slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN,
                inv_delta):
    """One frame of the front cache (module docstring): all contacts of the query, from the
    front ``front`` (k, 2) int32 with ``state`` (k, N_STATE) int32. Writes ``counts`` (N_STATS +
    1,) like ``_core.collide_entry`` (status last: 0 or a bad pose, then nothing else was done).
    Returns (sorted pairs (p, 2) int32, new front (k', 2) int32, new state (k', N_STATE) int32)."""
    st = pose_status(pose_a, pose_b)
    counts[N_STATS] = st
    if st:
        return np.empty((0, 2), dtype=np.int32), front, state
    R = np.empty((3, 3))
    t = np.empty(3)
    _relative_transform(pose_a, pose_b, R, t)
    k2 = dirs.shape[0]
    qf = np.zeros((k2, QF_TROW + Tt.shape[0]))
    qi = np.zeros((k2, QI_COLS), dtype=np.int64)
    if test == TEST_SLAB:
        prepare_query(method, dirs, R, t, scale_b, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta, qf, qi)
    nfA, niA, poA, vA, fA = unpack(FA, IA)
    nfB, niB, poB, vB, fB = unpack(FB, IB)
    seeds, src = make_seeds(front, state, niA, niB, parA, parB)
    ns = seeds.shape[0]
    stack = np.empty((ns + IA[H_HEIGHT] + IB[H_HEIGHT] + 2, 2), dtype=np.int32)
    for k in range(ns):  # seed 0 on top: popped first
        stack[ns - 1 - k, 0] = seeds[k, 0]
        stack[ns - 1 - k, 1] = seeds[k, 1]
    sp = ns
    leaf_cap = max(1, IA[H_LEAF_CAP] * IB[H_LEAF_CAP])
    pairs = np.empty((max(64, leaf_cap), 2), dtype=np.int32)
    trace = np.empty((max(4096, 2 * ns), TRACE_COLS), dtype=np.int32)
    counters = np.zeros(N_STATS, dtype=np.int64)
    n_pairs = 0
    n_trace = 0
    while True:
        status, sp, n_pairs, n_trace = traverse(
            kind, test, program, axes, False, True, True, R, t,
            nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, method, dirs, slabA, slabB, tabB, outB, qf, qi,
            pairs, n_pairs, trace, n_trace, stack, sp, counters)
        if status == DONE:
            break
        if n_pairs + leaf_cap > pairs.shape[0]:
            pairs = _grown(pairs, n_pairs)
        if n_trace >= trace.shape[0]:
            trace = _grown(trace, n_trace)
    # the new front: stop rows, with the state of the seed whose sub-traversal they belong to
    n_front = 0
    for r in range(n_trace):
        if trace[r, TR_OUTCOME] != OUT_OVERLAP:
            n_front += 1
    new_front = np.empty((n_front, 2), dtype=np.int32)
    new_state = np.empty((n_front, 3), dtype=np.int32)
    nxt = 0
    cur = -1
    w = 0
    for r in range(n_trace):
        a = trace[r, TR_A]
        b = trace[r, TR_B]
        seed_row = nxt < ns and a == seeds[nxt, 0] and b == seeds[nxt, 1]
        if seed_row:
            cur = nxt
            nxt += 1
        outcome = trace[r, TR_OUTCOME]
        if outcome == OUT_OVERLAP:
            continue
        new_front[w, 0] = a
        new_front[w, 1] = b
        _next_state(seed_row, outcome, src[cur, 1] >= 0, state, src[cur, 0], src[cur, 1], new_state, w)
        w += 1
    for k in range(N_STATS):
        counts[k] = counters[k]
    return sorted_pairs(pairs[:n_pairs]), new_front, new_state


__all__ = ["front_entry", "parents", "make_seeds", "AGE_MIN", "WAIT_MAX", "N_STATE", "POSE_A_BAD"]
