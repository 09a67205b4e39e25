"""The traversal core: simultaneous descent of two hierarchies (van den Bergen 1998, section 3)
for every bounding-volume type, in one kernel family.

Everything is expressed in A's model frame: B's model-to-A transform (R, t) is computed once
per query. Defined once, here:

* the descend rule (``descend_a``): when both nodes are internal the one with the larger
  volume (SIZE) is descended; a leaf is never descended. ``cdcore._distance`` uses it too,
  and the app's stepper replays the ``TR_SPLIT`` column of the trace instead of the rule;
* the node-pair test (in ``traverse``'s loop), one branch per test: spheres (``TEST_SPHERE``),
  boxes by the separating-axis programs of ``_overlap`` (``TEST_SAT15``/``TEST_SAT6``), the
  dual OBB-sphere test (sphere, then 5 axes: ``TEST_SPHERE5``, Chang et al. 2010) or sphere then
  15 axes, and k-DOP slab intervals after realignment of B's k-DOP (``TEST_SLAB``, Fünzig &
  Fellner section 4; the realignment kernels are ``_kdop_traverse``);
* leaf handling (``leaf_pair``): B's triangles moved into A's frame, exact triangle tests
  (``_tritri``); k-DOP trees first test each moved triangle's own k-DOP against A's leaf;
* the counter slots, status codes and trace columns (``_layout``);
* one resumable kernel (``traverse``), one driver that grows its buffers inside the compiled
  code (``run_query``), and the compiled entry points a query makes exactly one call to
  (``collide_entry``, ``collide_kdop_entry``, ``batch_entry``; per-tree data packed by
  ``_pack`` so that each tree costs two arguments).

Every buffer is allocated per call inside the kernels: no state is shared between calls, and
the entry points release the GIL (``nogil``), so several Python threads can query at once.
"""
import numpy as np
from numba import njit, prange

from ._cycles import read_cycles
from ._kdop_traverse import QF_PAD, prepare_query
from ._layout import (BUFFER_FULL, CNT_BV_TESTS, CNT_FALSE, CNT_LEAF_PAIRS, CNT_MAX_STACK,
                      CNT_PRIM_CYCLES, CNT_PRIM_TESTS, COUNT, DONE, LEFT, N_COUNTERS, N_STATS,
                      OUT_LEAF_HIT, OUT_LEAF_MISS, OUT_OVERLAP, OUT_SEPARATED, RIGHT, SIZE, SPLIT_A,
                      SPLIT_B, SPLIT_NONE, START, TEST_SLAB, TRACE_COLS)
from ._overlap import ABS_EPS
from ._pack import H_HEIGHT, H_LEAF_CAP, unpack
from ._tritri import tri_tri_overlap_xyz
from ._layout import AXIS_SPHERE, C0, E0, KIND_AABB, S0, SR, TEST_SPHERE, TEST_SPHERE5, TEST_SPHERE15
from ._overlap import sat_program, spheres_separated
from .bv.dispatch import _obb_pair, kdop_separation
from .transforms import _ORTHO_TOL, _pose_problem, _relative_transform, moved_vertex

# pose problems reported by the entry points (added to the pose's own code, _pose_problem)
POSE_A_BAD = 10
POSE_B_BAD = 20


@njit(cache=True, inline='always')
def descend_a(leaf_a, leaf_b, size_a, size_b):
    """The descend rule: True to split A's node, False to split B's (one of them is
    internal). The larger volume (SIZE) is split first (van den Bergen section 3); a leaf
    never. (Scalars: inlined array arguments cost reference counting in the hot loop.)"""
    return leaf_b or (not leaf_a and size_a >= size_b)


@njit(cache=True)
def leaf_pair(a, b, R, t, niA, poA, vA, fA, niB, poB, vB, fB, first, pairs, n_pairs, counters,
              kfilter, dirs, slabA, qpad):
    """Exact triangle tests of a leaf pair, B's vertices moved into A's frame (the arithmetic
    of ``transforms.transform_points``, so oracles see bit-identical coordinates). ``pairs``
    has room for every triangle pair of the leaves (checked by the caller).

    With ``kfilter`` (k-DOP trees) each moved triangle of B is first tested with its own exact
    k-DOP against A's leaf slabs (the "mixed" test of Fünzig section 6, which skips the
    realignment's slack at the leaves); projections are widened by ``qpad`` (their rounding is
    a few ulps of the coordinates; A's slabs carry the build pad), so a triangle pair the exact
    test would accept is never skipped."""
    hit = False
    c0 = read_cycles()
    k2 = dirs.shape[0]
    sa = niA[a, START]
    sb = niB[b, START]
    for jb in range(sb, sb + niB[b, COUNT]):
        fb = poB[jb]
        dx, dy, dz = moved_vertex(R, t, vB, fB[fb, 0])
        ex, ey, ez = moved_vertex(R, t, vB, fB[fb, 1])
        gx, gy, gz = moved_vertex(R, t, vB, fB[fb, 2])
        if kfilter:
            separated = False
            for i in range(k2):
                e0 = dirs[i, 0]
                e1 = dirs[i, 1]
                e2 = dirs[i, 2]
                p0 = e0 * dx + e1 * dy + e2 * dz
                p1 = e0 * ex + e1 * ey + e2 * ez
                p2 = e0 * gx + e1 * gy + e2 * gz
                if (max(p0, max(p1, p2)) + qpad < slabA[a, i]
                        or min(p0, min(p1, p2)) - qpad > slabA[a, k2 + i]):
                    separated = True
                    break
            if separated:
                continue
        for ja in range(sa, sa + niA[a, COUNT]):
            fa = poA[ja]
            p = fA[fa, 0]
            q = fA[fa, 1]
            r = fA[fa, 2]
            counters[CNT_PRIM_TESTS] += 1
            if tri_tri_overlap_xyz(vA[p, 0], vA[p, 1], vA[p, 2], vA[q, 0], vA[q, 1], vA[q, 2],
                                   vA[r, 0], vA[r, 1], vA[r, 2], dx, dy, dz, ex, ey, ez, gx, gy, gz):
                hit = True
                pairs[n_pairs, 0] = fa
                pairs[n_pairs, 1] = fb
                n_pairs += 1
                if first:
                    counters[CNT_PRIM_CYCLES] += read_cycles() - c0
                    return hit, n_pairs
    counters[CNT_PRIM_CYCLES] += read_cycles() - c0
    return hit, n_pairs


@njit(cache=True, nogil=True)
def traverse(kind, test, program, axes, first, trace_on, exact_leaves, R, t,
             nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB,
             method, dirs, slabA, slabB, tabB, outB, qf, qi,
             pairs, n_pairs, trace, n_trace, stack, sp, counters):
    """Collide two hierarchies, resumably.

    Pops node pairs from ``stack`` (cap, 2) int32 holding ``sp`` pairs (start: one pair
    (0, 0)); appends intersecting triangle pairs to ``pairs`` (cap, 2) after ``n_pairs`` rows
    and, when ``trace_on``, one row per tested node pair (``_layout.TR_*`` columns) to
    ``trace`` (cap, TRACE_COLS) after ``n_trace`` rows; adds to ``counters`` (N_STATS,):
    the counters, then the exit-axis histogram. ``test``/``program``/``axes`` choose the
    node-pair test; the k-DOP arrays (``method`` .. ``qi``) are read by
    ``TEST_SLAB`` only. With ``exact_leaves`` False, a leaf pair whose volumes overlap records
    all its primitive pairs untested (a broad phase: used over articulation hierarchies, whose
    primitives are links). The stack needs ``height_a + height_b + 2`` rows: every descent
    pushes two siblings and pops one.

    Returns (status, sp, n_pairs, n_trace). With ``BUFFER_FULL`` nothing of the pending pair
    was done: grow the full buffer, then call again with the returned state. (No array is
    reallocated in here: reassigning arrays inside the loop costs reference counting on every
    iteration.)
    """
    kfilter = test == TEST_SLAB
    aabb = kind == KIND_AABB
    qpad = qf[0, QF_PAD] if kfilter else 0.0
    Cg = R.copy()
    ACg = np.abs(R) + ABS_EPS
    C = np.empty((3, 3))
    AC = np.empty((3, 3))
    T = np.empty(3)
    ea = np.empty(3)
    eb = np.empty(3)
    while sp > 0:
        if trace_on and n_trace >= trace.shape[0]:
            return BUFFER_FULL, sp, n_pairs, n_trace
        a = stack[sp - 1, 0]
        b = stack[sp - 1, 1]
        leaf_a = niA[a, LEFT] < 0
        leaf_b = niB[b, LEFT] < 0
        if leaf_a and leaf_b:
            if n_pairs + niA[a, COUNT] * niB[b, COUNT] > pairs.shape[0]:
                return BUFFER_FULL, sp, n_pairs, n_trace
        sp -= 1
        counters[CNT_BV_TESTS] += 1
        # the node-pair test, one branch per test, written in the loop: an inlined function
        # with a dozen array arguments here cost reference counting on every pair (2-3x)
        sep = -1
        if kfilter:  # k-DOP slabs after realignment (Fünzig section 4)
            sep = kdop_separation(method, a, b, slabA, slabB, tabB, outB, qf, qi)
        elif test == TEST_SPHERE or test == TEST_SPHERE5 or test == TEST_SPHERE15:
            sx = nfB[b, S0]
            sy = nfB[b, S0 + 1]
            sz = nfB[b, S0 + 2]
            if spheres_separated(nfA[a, S0], nfA[a, S0 + 1], nfA[a, S0 + 2], nfA[a, SR],
                                 R[0, 0] * sx + R[0, 1] * sy + R[0, 2] * sz + t[0],
                                 R[1, 0] * sx + R[1, 1] * sy + R[1, 2] * sz + t[1],
                                 R[2, 0] * sx + R[2, 1] * sy + R[2, 2] * sz + t[2], nfB[b, SR]):
                sep = AXIS_SPHERE
        if sep < 0 and test != TEST_SPHERE and not kfilter:
            # boxes: centre of B's box in A's model frame, relative to A's box centre
            cx = nfB[b, C0]
            cy = nfB[b, C0 + 1]
            cz = nfB[b, C0 + 2]
            d0 = R[0, 0] * cx + R[0, 1] * cy + R[0, 2] * cz + t[0] - nfA[a, C0]
            d1 = R[1, 0] * cx + R[1, 1] * cy + R[1, 2] * cz + t[1] - nfA[a, C0 + 1]
            d2 = R[2, 0] * cx + R[2, 1] * cy + R[2, 2] * cz + t[2] - nfA[a, C0 + 2]
            for k in range(3):
                ea[k] = nfA[a, E0 + k]
                eb[k] = nfB[b, E0 + k]
            if aabb:  # every AABB pair shares the relative rotation R (van den Bergen section 3)
                T[0] = d0
                T[1] = d1
                T[2] = d2
                sep = sat_program(program, axes, T, Cg, ACg, ea, eb)
            else:
                sep = _obb_pair(program, axes, nfA, a, nfB, b, R, d0, d1, d2, T, C, AC, ea, eb)
        outcome = OUT_OVERLAP
        split = SPLIT_NONE
        if sep >= 0:
            counters[N_COUNTERS + sep] += 1
            outcome = OUT_SEPARATED
        elif leaf_a and leaf_b:
            counters[CNT_LEAF_PAIRS] += 1
            if exact_leaves:
                hit, n_pairs = leaf_pair(a, b, R, t, niA, poA, vA, fA, niB, poB, vB, fB, first, pairs, n_pairs,
                                         counters, kfilter, dirs, slabA, qpad)
            else:
                hit = True
                for ja in range(niA[a, START], niA[a, START] + niA[a, COUNT]):
                    for jb in range(niB[b, START], niB[b, START] + niB[b, COUNT]):
                        pairs[n_pairs, 0] = poA[ja]
                        pairs[n_pairs, 1] = poB[jb]
                        n_pairs += 1
            if hit:
                outcome = OUT_LEAF_HIT
            else:
                outcome = OUT_LEAF_MISS
                counters[CNT_FALSE] += 1
        elif descend_a(leaf_a, leaf_b, nfA[a, SIZE], nfB[b, SIZE]):
            split = SPLIT_A
            stack[sp, 0] = niA[a, RIGHT]
            stack[sp, 1] = b
            stack[sp + 1, 0] = niA[a, LEFT]
            stack[sp + 1, 1] = b
            sp += 2
        else:
            split = SPLIT_B
            stack[sp, 0] = a
            stack[sp, 1] = niB[b, RIGHT]
            stack[sp + 1, 0] = a
            stack[sp + 1, 1] = niB[b, LEFT]
            sp += 2
        if sp > counters[CNT_MAX_STACK]:
            counters[CNT_MAX_STACK] = sp
        if trace_on:
            trace[n_trace, 0] = a
            trace[n_trace, 1] = b
            trace[n_trace, 2] = outcome
            trace[n_trace, 3] = sep
            trace[n_trace, 4] = split
            n_trace += 1
        if first and outcome == OUT_LEAF_HIT:
            break
    return DONE, sp, n_pairs, n_trace


@njit(cache=True)
def _grown(buf, n):
    """A buffer of twice the rows holding the first ``n`` rows of ``buf``."""
    out = np.empty((2 * buf.shape[0], buf.shape[1]), dtype=buf.dtype)
    for i in range(n):
        for c in range(buf.shape[1]):
            out[i, c] = buf[i, c]
    return out


@njit(cache=True, nogil=True)
def run_query(kind, test, program, axes, first, trace_on, exact_leaves, R, t,
              nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB,
              method, dirs, slabA, slabB, tabB, outB, qf, qi, stack_rows, leaf_cap):
    """The one driver: runs ``traverse`` to the end, growing its buffers as needed.
    Returns (pairs (k, 2) int32 unsorted, trace (m, TRACE_COLS) int32, counters (N_STATS,))."""
    pairs = np.empty((max(64, leaf_cap), 2), dtype=np.int32)
    trace = np.empty((4096 if trace_on else 1, TRACE_COLS), dtype=np.int32)
    stack = np.empty((stack_rows, 2), dtype=np.int32)
    stack[0, 0] = 0
    stack[0, 1] = 0
    counters = np.zeros(N_STATS, dtype=np.int64)
    sp = 1
    n_pairs = 0
    n_trace = 0
    while True:
        status, sp, n_pairs, n_trace = traverse(
            kind, test, program, axes, first, trace_on, exact_leaves, R, t,
            nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, method, dirs, slabA, slabB, tabB, outB, qf, qi,
            pairs, n_pairs, trace, n_trace, stack, sp, counters)
        if status == DONE:
            break
        if n_pairs + leaf_cap > pairs.shape[0]:
            pairs = _grown(pairs, n_pairs)
        if trace_on and n_trace >= trace.shape[0]:
            trace = _grown(trace, n_trace)
    return pairs[:n_pairs], trace[:n_trace], counters


@njit(cache=True)
def sorted_pairs(pairs):
    """Pairs sorted by (triangle of A, triangle of B)."""
    n = pairs.shape[0]
    if n < 2:
        return pairs
    keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        keys[i] = (np.int64(pairs[i, 0]) << 32) | np.int64(pairs[i, 1])
    keys.sort()
    out = np.empty((n, 2), dtype=np.int32)
    for i in range(n):
        out[i, 0] = np.int32(keys[i] >> 32)
        out[i, 1] = np.int32(keys[i] & 0xFFFFFFFF)
    return out


@njit(cache=True)
def pose_status(pose_a, pose_b):
    """0, or POSE_A_BAD / POSE_B_BAD plus the pose's ``_pose_problem`` code."""
    pa = _pose_problem(pose_a, _ORTHO_TOL)
    if pa:
        return POSE_A_BAD + pa
    pb = _pose_problem(pose_b, _ORTHO_TOL)
    if pb:
        return POSE_B_BAD + pb
    return 0


_NO_AXES = np.zeros(1, dtype=np.int64)


@njit(cache=True)
def _no_kdop():
    """Placeholders for the k-DOP arrays of non-k-DOP queries."""
    return (np.zeros((1, 3)), np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 3)),
            np.zeros((1, 2), dtype=np.int32), np.zeros((1, 11)), np.zeros((1, 8), dtype=np.int64))


# Results leave the compiled code as one array: numba boxes every returned array into a new
# Python object (~0.7 us each, several times more under load), so the counters and the
# status are written into a caller's array (``counts`` (N_STATS + 1,) int64, the status last)
# and only the pairs are returned; traces come from the *_trace variants.
STATUS = N_STATS  # slot of ``counts`` holding the status (0, or a bad pose)


@njit(cache=True)
def _collide(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, first, trace_on, counts):
    dirs, slabA, slabB, tabB, outB, qf, qi = _no_kdop()
    return _collide_with(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, 0, first, trace_on, counts,
                         dirs, slabA, slabB, tabB, outB, qf, qi, False, 0.0, dirs, dirs, dirs[0].astype(np.int64),
                         qi, slabA, np.zeros((1, 3, 3)), qf, qf[0], 1.0)


@njit(cache=True)
def _collide_with(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, method, first, trace_on, counts,
                  dirs, slabA, slabB, tabB, outB, qf, qi, kdop, scale_b, kdirs, fvert, fstart, fslab, fsign, finv,
                  Tt, TN, inv_delta):
    """The body of every collision entry point: pose checks, relative transform, B's
    realignment tables (k-DOPs), the traversal, sorted pairs. Writes ``counts``; returns
    (pairs, trace rows)."""
    st = pose_status(pose_a, pose_b)
    counts[STATUS] = st
    if st:
        return np.empty((0, 2), dtype=np.int32), np.empty((0, TRACE_COLS), dtype=np.int32)
    R = np.empty((3, 3))
    t = np.empty(3)
    _relative_transform(pose_a, pose_b, R, t)
    if kdop:
        k2 = kdirs.shape[0]
        qf = np.zeros((k2, 10 + Tt.shape[0]))
        qi = np.zeros((k2, 8), dtype=np.int64)
        prepare_query(method, kdirs, R, t, scale_b, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta, qf, qi)
        dirs = kdirs
    nfA, niA, poA, vA, fA = unpack(FA, IA)
    nfB, niB, poB, vB, fB = unpack(FB, IB)
    pairs, trace, counters = run_query(
        kind, test, program, _NO_AXES, first, trace_on, True, R, t, nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB,
        method, dirs, slabA, slabB, tabB, outB, qf, qi, IA[H_HEIGHT] + IB[H_HEIGHT] + 2,
        max(1, IA[H_LEAF_CAP] * IB[H_LEAF_CAP]))
    for k in range(N_STATS):
        counts[k] = counters[k]
    return sorted_pairs(pairs), trace


@njit(cache=True, nogil=True)
def collide_entry(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, first, counts):
    """One complete query on packed non-k-DOP trees; returns the sorted pairs, writes
    ``counts`` (N_STATS + 1,): the counters, the histogram, then the status (0, or a bad
    pose: ``pose_status``; then nothing else was done)."""
    return _collide(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, first, False, counts)[0]


@njit(cache=True, nogil=True)
def collide_trace_entry(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, first, counts):
    """``collide_entry`` that also returns the trace: (pairs, trace rows (k, TRACE_COLS))."""
    return _collide(FA, IA, FB, IB, pose_a, pose_b, kind, test, program, first, True, counts)


@njit(cache=True)
def _collide_kdop(FA, IA, FB, IB, pose_a, pose_b, kind, method, first, trace_on, counts,
                  slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta):
    _, _, _, _, _, qf, qi = _no_kdop()
    return _collide_with(FA, IA, FB, IB, pose_a, pose_b, kind, TEST_SLAB, 0, method, first, trace_on, counts,
                         dirs, slabA, slabB, tabB, outB, qf, qi, True, scale_b, dirs, fvert, fstart, fslab, fsign,
                         finv, Tt, TN, inv_delta)


@njit(cache=True, nogil=True)
def collide_kdop_entry(FA, IA, FB, IB, pose_a, pose_b, kind, method, first, counts,
                       slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta):
    """``collide_entry`` for k-DOP trees: the per-query realignment tables of B
    (``_kdop_traverse.prepare_query``), then the same traversal with ``TEST_SLAB``."""
    return _collide_kdop(FA, IA, FB, IB, pose_a, pose_b, kind, method, first, False, counts, slabA, slabB, tabB,
                         outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta)[0]


@njit(cache=True, nogil=True)
def collide_kdop_trace_entry(FA, IA, FB, IB, pose_a, pose_b, kind, method, first, counts,
                             slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN,
                             inv_delta):
    """``collide_kdop_entry`` that also returns the trace."""
    return _collide_kdop(FA, IA, FB, IB, pose_a, pose_b, kind, method, first, True, counts, slabA, slabB, tabB,
                         outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta)


@njit(cache=True, nogil=True, parallel=True)
def batch_entry(FA, IA, FB, IB, pose_a, poses_b, kind, test, program, axes, method,
                slabA, slabB, tabB, outB, scale_b, dirs, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta,
                n_chunks):
    """First-contact queries of B at every pose of ``poses_b`` (N, 4, 4) against A at
    ``pose_a``, in ``n_chunks`` parallel chunks (each with its own buffers: results are
    identical to a serial loop). Returns (hits (N,) bool, counters (N_STATS,) summed)."""
    n = poses_b.shape[0]
    hits = np.zeros(n, dtype=np.bool_)
    acc = np.zeros((n_chunks, N_STATS), dtype=np.int64)
    nfA, niA, poA, vA, fA = unpack(FA, IA)
    nfB, niB, poB, vB, fB = unpack(FB, IB)
    stack_rows = IA[H_HEIGHT] + IB[H_HEIGHT] + 2
    leaf_cap = max(1, IA[H_LEAF_CAP] * IB[H_LEAF_CAP])
    k2 = dirs.shape[0]
    for c in prange(n_chunks):
        R = np.empty((3, 3))
        t = np.empty(3)
        qf = np.zeros((k2, 10 + Tt.shape[0]))
        qi = np.zeros((k2, 8), dtype=np.int64)
        # first contact only: room for one leaf pair's triangle pairs is enough
        pairs = np.empty((leaf_cap, 2), dtype=np.int32)
        trace = np.empty((1, TRACE_COLS), dtype=np.int32)
        stack = np.empty((stack_rows, 2), dtype=np.int32)
        counters = acc[c]
        for i in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            _relative_transform(pose_a, poses_b[i], R, t)
            if test == TEST_SLAB:
                prepare_query(method, dirs, R, t, scale_b, fvert, fstart, fslab, fsign, finv, Tt, TN, inv_delta,
                              qf, qi)
            stack[0, 0] = 0
            stack[0, 1] = 0
            _, _, n_pairs, _ = traverse(kind, test, program, axes, True, False, True, R, t,
                                        nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB,
                                        method, dirs, slabA, slabB, tabB, outB, qf, qi,
                                        pairs, 0, trace, 0, stack, 1, counters)
            hits[i] = n_pairs > 0
    total = np.zeros(N_STATS, dtype=np.int64)
    for c in range(n_chunks):
        for k in range(N_STATS):
            if k == CNT_MAX_STACK:
                total[k] = max(total[k], acc[c, k])
            else:
                total[k] += acc[c, k]
    return hits, total


@njit(cache=True, nogil=True)
def run_views(kind, test, program, first, trace_on, exact_leaves, R, t,
              nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, stack_rows, leaf_cap):
    """``run_query`` on unpacked non-k-DOP arrays (articulation hierarchies: their volumes
    are updated per frame in arrays of their own)."""
    dirs, slabA, slabB, tabB, outB, qf, qi = _no_kdop()
    return run_query(kind, test, program, _NO_AXES, first, trace_on, exact_leaves, R, t,
                     nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, 0, dirs, slabA, slabB, tabB, outB, qf, qi,
                     stack_rows, leaf_cap)
