"""The traversal core: simultaneous descent of two hierarchies (van den Bergen 1998, section 3)
for every bounding-volume type, in one kernel family.

Everything is expressed in A's model frame: B's model-to-A transform (R, t) is computed once
per query. Defined once, here:

* the bundles the kernels pass around (namedtuples of arrays, like pynndescent's FlatTree):
  ``Tree`` (one hierarchy's five arrays), ``Buffers`` (a traversal's working memory and
  resumable state) and ``KdopQuery`` (B's k-DOP data realigned for one query); a query's
  options travel as one int64 ``plan`` array (``_layout.P_*``), never as literal arguments,
  so that every kernel has one compiled signature;
* the descend rule (``descend_a``): when both nodes are internal the one with the larger
  volume (SIZE) is descended; a leaf is never descended. ``cdcore._distance`` uses it too,
  and the app's stepper replays the ``TR_SPLIT`` column of the trace instead of the rule;
* the node-pair test (in ``traverse``'s loop), one branch per test: spheres (``TEST_SPHERE``),
  boxes by the separating-axis programs of ``_overlap`` (``TEST_SAT15``/``TEST_SAT6``,
  ``bv.dispatch.box_separation``), the dual OBB-sphere test (sphere, then 5 axes:
  ``TEST_SPHERE5``, Chang et al. 2010) or sphere then 15 axes, and k-DOP slab intervals after
  realignment of B's k-DOP (``TEST_SLAB``, Fünzig & Fellner section 4; ``_kdop_traverse``);
* leaf handling (``leaf_pair``): B's triangles moved into A's frame, exact triangle tests
  (``_tritri``); k-DOP trees first test each moved triangle's own k-DOP against A's leaf;
* the counter slots, status codes and trace columns (``_layout``);
* one resumable kernel (``traverse``), one driver that grows its buffers (``drive``: the
  articulated and front-cache queries), and the compiled entry points a query makes one call
  to (``query_entry``/``query_kdop_entry``; ``query_entry_w`` without trace, the pairs at the
  workspace's end: ``collide``'s common case and ``Query``; ``resume_entry``/``resume_kdop_entry``
  after a full buffer; ``batch_entry``/``batch_serial_entry``; per-tree data packed by ``_pack``
  so that each tree costs two arguments). The query entries allocate nothing: the working memory is one
  int64 workspace (``_layout.W_*``) and two buffers, all the caller's (``collide`` makes them
  per call, ``Query`` keeps a pool), and they have one explicit signature each.

The per-pair callees (``leaf_pair``, ``bv.dispatch.box_separation``/``kdop_separation``) are
compiled without reference counting (``_pairjit``): a call passing arrays costs no atomic
operations.

No state is shared between calls (every buffer belongs to one call at a time), and the entry
points release the GIL (``nogil``), so several Python threads can query at once.
"""
from collections import namedtuple

import numpy as np
from numba import njit, prange, typeof, types

from ._cycles import read_cycles
from ._kdop_traverse import QF_PAD, QF_TROW, QI_COLS, no_kdop_arrays, prepare_query
from ._layout import (AXIS_SPHERE, BUFFER_FULL, C0, CNT_BV_TESTS, CNT_FALSE, CNT_LEAF_PAIRS, CNT_MAX_STACK,
                      CNT_PRIM_CYCLES, CNT_PRIM_TESTS, COUNT, DONE, KIND_AABB, LEFT, N_COUNTERS, N_STATE, N_STATS,
                      OUT_LEAF_HIT, OUT_LEAF_MISS, OUT_OVERLAP, OUT_SEPARATED, P_AXES, P_EXACT, P_FIRST, P_KIND,
                      P_METHOD, P_NAXES, P_PROGRAM, PLAN_LEN, P_TEST, P_TRACE, R0, RIGHT, S0, SPLIT_A, SPLIT_B,
                      SPLIT_NONE, SR, ST_PAIRS, ST_SP, ST_TRACE, START, TEST_SLAB, TEST_SPHERE, TEST_SPHERE5,
                      TEST_SPHERE15, TR_A, TR_AXIS, TR_B, TR_OUTCOME, TR_SPLIT, TRACE_COLS, E0, W_BOX, W_CYC, W_FIXED,
                      W_R, W_STATE, W_STATUS, W_T)
from ._overlap import ABS_EPS, PROGRAM_CUSTOM, sat_scalars, spheres_separated
from ._pack import H_HEIGHT, H_LEAF_CAP, c_view, unpack
from ._pairjit import pair_njit
from ._tritri import tri_tri_overlap_xyz
from .bv.dispatch import box_separation, kdop_separation
from .transforms import _ORTHO_TOL, _pose_problem, _relative_transform, moved_vertex

# pose problems reported by the entry points (added to the pose's own code, _pose_problem)
POSE_A_BAD = 10
POSE_B_BAD = 20
POSE_SHAPE = 4  # a pose's problem code beyond ``_pose_problem``'s: not of shape (4, 4)

#: one hierarchy inside the kernels: nodes_f (n, N_FCOLS) float64 (AABB trees: (n, AABB_FCOLS), their
#: compact rows), nodes_i (n, N_ICOLS) int32, prim_order (m,) int32, vertices (nv, 3) float64,
#: faces (m, 3) int32 (all C-contiguous, writable)
Tree = namedtuple("Tree", ("nf", "ni", "po", "v", "f"))
#: a traversal's working memory: pairs (cap, 2) int32, trace (cap, TRACE_COLS) int32, stack
#: (height_a + height_b + 2, 2) int32, counters (N_STATS,) int64, state (N_STATE,) int64 (ST_*),
#: box (3, 3, 3) float64: the box tests' scratch (C, |C| + eps, then T, A's and B's half-extents)
Buffers = namedtuple("Buffers", ("pairs", "trace", "stack", "counters", "state", "box"))
#: B's k-DOPs realigned for one query (``_kdop_traverse``): A's directions (k/2, 3), A's slabs
#: (nA, k), B's slabs (nB, k), table rows (nB, 3 + 3k), outer rings (nB, k) int32, the per-query
#: tables qf (k/2, QF_TROW + n) float64 and qi (k/2, QI_COLS) int64. Other volume types pass
#: arrays of the same types that are never read (``_unread_kdop``).
KdopQuery = namedtuple("KdopQuery", ("dirs", "slabA", "slabB", "tabB", "outB", "qf", "qi"))


def make_plan(kind, test, program, method=0, first=False, trace=False, exact=True, axes=None):
    """A query's ``plan`` (PLAN_LEN,) int64 (``_layout.P_*``); ``axes``: the axis list of
    ``_overlap.PROGRAM_CUSTOM`` (at most N_AXES ids)."""
    plan = np.zeros(PLAN_LEN, dtype=np.int64)
    plan[P_KIND], plan[P_TEST], plan[P_PROGRAM], plan[P_METHOD] = kind, test, program, method
    plan[P_FIRST], plan[P_TRACE], plan[P_EXACT] = bool(first), bool(trace), bool(exact)
    if axes is not None:
        axes = np.asarray(axes, dtype=np.int64).ravel()
        if len(axes) > PLAN_LEN - P_AXES:
            raise ValueError(f"axes: at most {PLAN_LEN - P_AXES} axis ids, got {len(axes)}")
        plan[P_NAXES] = len(axes)
        plan[P_AXES:P_AXES + len(axes)] = axes
    return plan


@njit(cache=True, inline='always')
def descend_a(leaf_a, leaf_b, size_a, size_b):
    """The descend rule: True to split A's node, False to split B's (one of them is
    internal). The larger volume (SIZE) is split first (van den Bergen section 3); a leaf
    never. (Scalars: inlined array arguments cost reference counting in the hot loop.)"""
    return leaf_b or (not leaf_a and size_a >= size_b)


@pair_njit
def leaf_pair(a, b, R, t, A, B, buf, n_pairs, first, kfilter, K, qpad):
    """Exact triangle tests of a leaf pair, B's vertices moved into A's frame (the arithmetic
    of ``transforms.transform_points``, so oracles see bit-identical coordinates). Writes
    ``buf.pairs`` from row ``n_pairs`` (room for every triangle pair of the leaves: checked by
    the caller) and ``buf.counters``; returns (hit, n_pairs).

    With ``kfilter`` (k-DOP trees) each moved triangle of B is first tested with its own exact
    k-DOP in A's directions ``K.dirs`` against A's leaf slabs ``K.slabA`` (the "mixed" test of
    Fünzig section 6, which skips the realignment's slack at the leaves); projections are
    widened by ``qpad`` (their rounding is a few ulps of the coordinates; A's slabs carry the
    build pad), so a triangle pair the exact test would accept is never skipped."""
    niA = A.ni
    poA = A.po
    vA = A.v
    fA = A.f
    niB = B.ni
    poB = B.po
    vB = B.v
    fB = B.f
    pairs = buf.pairs
    counters = buf.counters
    dirs = K.dirs
    slabA = K.slabA
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


@pair_njit
def _all_prim_pairs(a, b, A, B, pairs, n_pairs):
    """Broad phase at a leaf pair (``P_EXACT`` 0): every primitive pair, untested."""
    niA = A.ni
    niB = B.ni
    for ja in range(niA[a, START], niA[a, START] + niA[a, COUNT]):
        for jb in range(niB[b, START], niB[b, START] + niB[b, COUNT]):
            pairs[n_pairs, 0] = A.po[ja]
            pairs[n_pairs, 1] = B.po[jb]
            n_pairs += 1
    return n_pairs


# the families of node-pair tests ``traverse`` compiles its loop for (``_walk``)
MODE_AABB = 0  # boxes, every pair sharing the relative rotation
MODE_OBB = 1  # oriented boxes
MODE_SPHERES = 2  # spheres, then (TEST_SPHERE5 / TEST_SPHERE15) boxes
MODE_KDOP = 3  # k-DOP slabs after realignment


@pair_njit(nogil=True)
def traverse(plan, R, t, A, B, K, buf):
    """Collide two hierarchies ``A``, ``B`` (``Tree``), B moved into A's frame by (R, t), resumably.

    ``plan`` (PLAN_LEN,) int64 holds the options (``_layout.P_*``): the node-pair test and axis
    program, first contact, trace, exact leaves. ``K`` (``KdopQuery``) is read by ``TEST_SLAB``
    only. ``buf`` (``Buffers``) is the working memory: pops node pairs from ``buf.stack``
    (``buf.state[ST_SP]`` pairs; start: one pair (0, 0)); appends intersecting triangle pairs
    to ``buf.pairs`` and, with ``P_TRACE``, one row per tested node pair (``_layout.TR_*``
    columns) to ``buf.trace``, after the rows the state counts; adds to ``buf.counters``
    (N_STATS,): the counters, then the exit-axis histogram. With ``P_EXACT`` 0, a leaf pair
    whose volumes overlap records all its primitive pairs untested (a broad phase: used over
    articulation hierarchies, whose primitives are links). The stack needs
    ``height_a + height_b + 2`` rows: every descent pushes two siblings and pops one.

    Returns the status and leaves the state in ``buf.state``. With ``BUFFER_FULL`` nothing of
    the pending pair was done: grow the full buffer, then call again. (No array is
    reallocated in here: reassigning arrays inside the loop costs reference counting on every
    iteration.) Compiled without reference counting (``_pairjit``), like its per-pair callees:
    it allocates nothing (the box tests' scratch is ``buf.box``), and the ~25 arrays of its
    bundles would otherwise cost two atomic operations each per call.

    The loop (``_walk``) is compiled once per family of node-pair tests (``MODE_*``) with the
    family a constant: each copy keeps only its own test, so the register allocator is not
    spilling the k-DOP realignment's state around an oriented-box test (the single loop spent
    ~540 instructions per node pair, mostly reloading spilled values).
    """
    kind = plan[P_KIND]
    test = plan[P_TEST]
    if test == TEST_SLAB:
        return _walk_kdop(plan, R, t, A, B, K, buf)
    if test == TEST_SPHERE or test == TEST_SPHERE5 or test == TEST_SPHERE15:
        return _walk_spheres(plan, R, t, A, B, K, buf)
    if kind == KIND_AABB:
        return _walk_aabb(plan, R, t, A, B, K, buf)
    return _walk_obb(plan, R, t, A, B, K, buf)


def _make_walk(mode):
    """``traverse``'s loop for one family of node-pair tests (``MODE_*``), compiled on its
    own with ``mode`` a constant of the closure: only that family's test is live in it, so
    the register allocator does not spill the k-DOP realignment's state around an
    oriented-box test. (They were one function inlined four times into ``traverse`` at
    numba's IR level; numba re-derives and copies an inlined callee's IR at every call site,
    and copying this loop -- its tests inlined -- four times was ~60 % of the engine's cold
    compile. As four closures each family is typed, lowered and optimised once, on a
    function a quarter of the size.)

    Each closure is named for its family before it is compiled, which gives it a cache file
    of its own (numba names the file by qualified name and line). In one shared file the
    four were entries of one index, and numba's index is not safe when two processes save
    different entries at once (the warm-up's two parts, a test's child processes): both
    take the next free data file, the last writer's code wins, and the other entry then
    names a file holding another family's loop. A later process loaded it silently (a dask
    worker's sweep answered "no contact" for every pose: the fresh clone's CI failure)."""

    def walk(plan, R, t, A, B, K, buf):
        kind = plan[P_KIND]
        test = plan[P_TEST]
        program = plan[P_PROGRAM]
        method = plan[P_METHOD]
        first = plan[P_FIRST] != 0
        trace_on = plan[P_TRACE] != 0
        exact_leaves = plan[P_EXACT] != 0
        axes = plan[P_AXES:P_AXES + plan[P_NAXES]]
        kfilter = mode == MODE_KDOP
        spheres = mode == MODE_SPHERES
        # branch conditions numba evaluates while compiling (a comparison of the closure's
        # constant): a call under one is not inlined into the families that cannot reach it
        # (a compound condition is not pruned, and each family's copy of the box and oriented-box
        # tests cost ~5 s of the cold compile's inlining alone)
        obb_family = mode == MODE_OBB
        box_family = mode != MODE_KDOP
        aabb = mode == MODE_AABB or (spheres and kind == KIND_AABB)
        boxes = mode == MODE_AABB or mode == MODE_OBB or (spheres and test != TEST_SPHERE)
        qpad = K.qf[0, QF_PAD] if kfilter else 0.0
        nfA = A.nf
        niA = A.ni
        nfB = B.nf
        niB = B.ni
        szA = nfA.shape[1] - 1  # SIZE: the last column of full and compact (AABB) rows alike
        szB = nfB.shape[1] - 1
        pairs = buf.pairs
        trace = buf.trace
        stack = buf.stack
        counters = buf.counters
        state = buf.state
        sp = state[ST_SP]
        n_pairs = state[ST_PAIRS]
        n_trace = state[ST_TRACE]
        # scratch of the box tests; AABBs: every pair shares the relative rotation (section 3)
        box = buf.box
        C = box[0]
        AC = box[1]
        T = box[2, 0]
        ea = box[2, 1]
        eb = box[2, 2]
        if aabb:
            for r in range(3):
                for c in range(3):
                    C[r, c] = R[r, c]
                    AC[r, c] = abs(R[r, c]) + ABS_EPS
        # oriented boxes, fixed axis programs (``_obb_pair``): B's rotation and translation as
        # scalars, and the two shares of a pair's relative transform that depend on one node only,
        # kept while that node stays: A's N = Ra^T R (node ``na``) and B's centre moved into A's
        # frame, p = R cb + t (node ``nb``). Consecutive pairs share a node 80 % of the time (a
        # split keeps one side, and so does a separated sibling): 45 of the ~150 operations of a
        # pair's transform are skipped when A's node is kept, 18 when B's is. The arithmetic is
        # the uncached one's, in the same order, so every bit (and every counter) is unchanged.
        obb_fixed = mode == MODE_OBB and program != PROGRAM_CUSTOM
        r00, r01, r02 = R[0, 0], R[0, 1], R[0, 2]
        r10, r11, r12 = R[1, 0], R[1, 1], R[1, 2]
        r20, r21, r22 = R[2, 0], R[2, 1], R[2, 2]
        t0, t1, t2 = t[0], t[1], t[2]
        na = -1
        nb = -1
        n00 = n01 = n02 = n10 = n11 = n12 = n20 = n21 = n22 = 0.0
        p0 = p1 = p2 = 0.0
        n_bv = 0  # node pairs tested by this call (added to the counter at the end)
        max_sp = counters[CNT_MAX_STACK]
        status = DONE
        while sp > 0:
            if trace_on and n_trace >= trace.shape[0]:
                status = BUFFER_FULL
                break
            a = stack[sp - 1, 0]
            b = stack[sp - 1, 1]
            leaf_a = niA[a, LEFT] < 0
            leaf_b = niB[b, LEFT] < 0
            if leaf_a and leaf_b:
                if n_pairs + niA[a, COUNT] * niB[b, COUNT] > pairs.shape[0]:
                    status = BUFFER_FULL
                    break
            sp -= 1
            n_bv += 1
            sep = -1
            if obb_family and obb_fixed:
                if b != nb:
                    nb = b
                    cx = nfB[b, C0]
                    cy = nfB[b, C0 + 1]
                    cz = nfB[b, C0 + 2]
                    p0 = r00 * cx + r01 * cy + r02 * cz + t0
                    p1 = r10 * cx + r11 * cy + r12 * cz + t1
                    p2 = r20 * cx + r21 * cy + r22 * cz + t2
                if a != na:
                    na = a
                    n00, n01, n02, n10, n11, n12, n20, n21, n22 = _obb_rows(nfA, a, r00, r01, r02, r10, r11, r12,
                                                                            r20, r21, r22)
                sep = _obb_pair(program, nfA, a, nfB, b, n00, n01, n02, n10, n11, n12, n20, n21, n22, p0, p1, p2)
            elif kfilter:  # k-DOP slabs after realignment (Fünzig section 4)
                sep = kdop_separation(method, a, b, K)
            elif spheres:
                sx = nfB[b, S0]
                sy = nfB[b, S0 + 1]
                sz = nfB[b, S0 + 2]
                if spheres_separated(nfA[a, S0], nfA[a, S0 + 1], nfA[a, S0 + 2], nfA[a, SR],
                                     R[0, 0] * sx + R[0, 1] * sy + R[0, 2] * sz + t[0],
                                     R[1, 0] * sx + R[1, 1] * sy + R[1, 2] * sz + t[1],
                                     R[2, 0] * sx + R[2, 1] * sy + R[2, 2] * sz + t[2], nfB[b, SR]):
                    sep = AXIS_SPHERE
            if box_family:
                if sep < 0 and boxes and not obb_fixed:
                    sep = box_separation(program, axes, aabb, nfA, a, nfB, b, R, t, T, C, AC, ea, eb)
            outcome = OUT_OVERLAP
            split = SPLIT_NONE
            if sep >= 0:
                counters[N_COUNTERS + sep] += 1
                outcome = OUT_SEPARATED
            elif leaf_a and leaf_b:
                counters[CNT_LEAF_PAIRS] += 1
                if exact_leaves:
                    hit, n_pairs = leaf_pair(a, b, R, t, A, B, buf, n_pairs, first, kfilter, K, qpad)
                else:
                    hit = True
                    n_pairs = _all_prim_pairs(a, b, A, B, pairs, n_pairs)
                if hit:
                    outcome = OUT_LEAF_HIT
                else:
                    outcome = OUT_LEAF_MISS
                    counters[CNT_FALSE] += 1
            elif descend_a(leaf_a, leaf_b, nfA[a, szA], nfB[b, szB]):
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
            if sp > max_sp:
                max_sp = sp
            if trace_on:
                trace[n_trace, TR_A] = a
                trace[n_trace, TR_B] = b
                trace[n_trace, TR_OUTCOME] = outcome
                trace[n_trace, TR_AXIS] = sep
                trace[n_trace, TR_SPLIT] = split
                n_trace += 1
            if first and outcome == OUT_LEAF_HIT:
                break
        counters[CNT_BV_TESTS] += n_bv
        counters[CNT_MAX_STACK] = max_sp
        state[ST_SP] = sp
        state[ST_PAIRS] = n_pairs
        state[ST_TRACE] = n_trace
        return status

    walk.__qualname__ = walk.__name__ = f"walk_{_MODE_NAMES[mode]}"
    return pair_njit(nogil=True)(walk)


_MODE_NAMES = {MODE_AABB: "aabb", MODE_OBB: "obb", MODE_SPHERES: "spheres", MODE_KDOP: "kdop"}
_walk_aabb = _make_walk(MODE_AABB)
_walk_obb = _make_walk(MODE_OBB)
_walk_spheres = _make_walk(MODE_SPHERES)
_walk_kdop = _make_walk(MODE_KDOP)


@njit(cache=True, inline='always')
def _obb_rows(nfA, a, r00, r01, r02, r10, r11, r12, r20, r21, r22):
    """N = Ra^T R for A's node ``a`` (A's axes are the columns of its R0 block), row by row:
    the share of an oriented-box pair's transform that depends on A's node only (the
    arithmetic of ``bv.dispatch.box_separation``, in its order)."""
    u00, u10, u20 = nfA[a, R0], nfA[a, R0 + 3], nfA[a, R0 + 6]
    u01, u11, u21 = nfA[a, R0 + 1], nfA[a, R0 + 4], nfA[a, R0 + 7]
    u02, u12, u22 = nfA[a, R0 + 2], nfA[a, R0 + 5], nfA[a, R0 + 8]
    return (u00 * r00 + u10 * r10 + u20 * r20, u00 * r01 + u10 * r11 + u20 * r21, u00 * r02 + u10 * r12 + u20 * r22,
            u01 * r00 + u11 * r10 + u21 * r20, u01 * r01 + u11 * r11 + u21 * r21, u01 * r02 + u11 * r12 + u21 * r22,
            u02 * r00 + u12 * r10 + u22 * r20, u02 * r01 + u12 * r11 + u22 * r21, u02 * r02 + u12 * r12 + u22 * r22)


@njit(cache=True, inline='always')
def _obb_pair(program, nfA, a, nfB, b, n00, n01, n02, n10, n11, n12, n20, n21, n22, p0, p1, p2):
    """Gottschalk's separating-axis test of oriented boxes ``a`` (A) and ``b`` (B) given A's
    N = Ra^T R (``_obb_rows``) and B's centre in A's frame p = R cb + t: T = Ra^T (p - ca),
    C = N Rb, |C| + ABS_EPS, then the fixed axis program on scalars (``sat_scalars``). The
    same arithmetic, in the same order, as ``bv.dispatch.box_separation``."""
    d0 = p0 - nfA[a, C0]
    d1 = p1 - nfA[a, C0 + 1]
    d2 = p2 - nfA[a, C0 + 2]
    u00, u10, u20 = nfA[a, R0], nfA[a, R0 + 3], nfA[a, R0 + 6]
    u01, u11, u21 = nfA[a, R0 + 1], nfA[a, R0 + 4], nfA[a, R0 + 7]
    u02, u12, u22 = nfA[a, R0 + 2], nfA[a, R0 + 5], nfA[a, R0 + 8]
    v00, v01, v02 = nfB[b, R0], nfB[b, R0 + 1], nfB[b, R0 + 2]
    v10, v11, v12 = nfB[b, R0 + 3], nfB[b, R0 + 4], nfB[b, R0 + 5]
    v20, v21, v22 = nfB[b, R0 + 6], nfB[b, R0 + 7], nfB[b, R0 + 8]
    t0 = u00 * d0 + u10 * d1 + u20 * d2
    c00 = n00 * v00 + n01 * v10 + n02 * v20
    c01 = n00 * v01 + n01 * v11 + n02 * v21
    c02 = n00 * v02 + n01 * v12 + n02 * v22
    t1 = u01 * d0 + u11 * d1 + u21 * d2
    c10 = n10 * v00 + n11 * v10 + n12 * v20
    c11 = n10 * v01 + n11 * v11 + n12 * v21
    c12 = n10 * v02 + n11 * v12 + n12 * v22
    t2 = u02 * d0 + u12 * d1 + u22 * d2
    c20 = n20 * v00 + n21 * v10 + n22 * v20
    c21 = n20 * v01 + n21 * v11 + n22 * v21
    c22 = n20 * v02 + n21 * v12 + n22 * v22
    return sat_scalars(program, t0, t1, t2, c00, c01, c02, c10, c11, c12, c20, c21, c22,
                       abs(c00) + ABS_EPS, abs(c01) + ABS_EPS, abs(c02) + ABS_EPS,
                       abs(c10) + ABS_EPS, abs(c11) + ABS_EPS, abs(c12) + ABS_EPS,
                       abs(c20) + ABS_EPS, abs(c21) + ABS_EPS, abs(c22) + ABS_EPS,
                       nfA[a, E0], nfA[a, E0 + 1], nfA[a, E0 + 2], nfB[b, E0], nfB[b, E0 + 1], nfB[b, E0 + 2])


@njit(cache=True)
def _grown(buf, n):
    """A buffer of twice the rows holding the first ``n`` rows of ``buf``."""
    out = np.empty((2 * buf.shape[0], buf.shape[1]), dtype=buf.dtype)
    for i in range(n):
        for c in range(buf.shape[1]):
            out[i, c] = buf[i, c]
    return out


@njit(cache=True, inline='always')
def new_buffers(pair_rows, trace_rows, stack_rows):
    """``Buffers`` in four allocations (pairs and stack share one, counters and state one),
    the stack holding the root pair (0, 0)."""
    w = np.empty((pair_rows + stack_rows, 2), dtype=np.int32)
    c = np.zeros(N_STATS + N_STATE, dtype=np.int64)
    buf = Buffers(w[:pair_rows], np.empty((trace_rows, TRACE_COLS), dtype=np.int32), w[pair_rows:],
                  c[:N_STATS], c[N_STATS:], np.empty((3, 3, 3)))
    reset(buf)
    return buf


@njit(cache=True, inline='always')
def reset(buf):
    """The state of a new traversal: the root pair on the stack, nothing written."""
    buf.stack[0, 0] = 0
    buf.stack[0, 1] = 0
    buf.state[ST_SP] = 1
    buf.state[ST_PAIRS] = 0
    buf.state[ST_TRACE] = 0


@njit(cache=True, nogil=True, inline='always')
def drive(plan, R, t, A, B, K, stack_rows, leaf_cap):
    """Runs ``traverse`` to the end, growing its buffers as needed; returns the ``Buffers``
    (pairs unsorted, in traversal order: ``buf.state`` says how many rows). Inlined into the
    entry points: an out-of-line call would reference-count every array of its bundles."""
    trace_on = plan[P_TRACE] != 0
    buf = new_buffers(max(64, leaf_cap), 4096 if trace_on else 1, stack_rows)
    while traverse(plan, R, t, A, B, K, buf) != DONE:
        pairs = buf.pairs
        trace = buf.trace
        if buf.state[ST_PAIRS] + leaf_cap > pairs.shape[0]:
            pairs = _grown(pairs, buf.state[ST_PAIRS])
        if trace_on and buf.state[ST_TRACE] >= trace.shape[0]:
            trace = _grown(trace, buf.state[ST_TRACE])
        buf = Buffers(pairs, trace, buf.stack, buf.counters, buf.state, buf.box)
    return buf


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


@njit(cache=True, inline='always')
def trees(FA, IA, FB, IB):
    """The two packed hierarchies as ``Tree`` bundles (views, no copies)."""
    nfA, niA, poA, vA, fA = unpack(FA, IA)
    nfB, niB, poB, vB, fB = unpack(FB, IB)
    return Tree(nfA, niA, poA, vA, fA), Tree(nfB, niB, poB, vB, fB)


@njit(cache=True, inline='always')
def _unread_kdop(R, A, B, qi):
    """A ``KdopQuery`` for the other volume types, of the same types and never read: existing
    arrays, no allocation (``traverse`` reads ``K`` under ``TEST_SLAB`` only)."""
    return KdopQuery(R, A.nf, B.nf, A.nf, A.ni, R, qi)


@njit(cache=True, inline='always')
def _kdop_query(method, KT, R, t):
    """B's realignment tables for this (R, t) (``_kdop_traverse.prepare_query``) and the k-DOP
    bundle; ``KT``: ``_kdop_traverse.KdopTables``."""
    k2 = KT.dirs.shape[0]
    qf = np.zeros((k2, QF_TROW + KT.T.shape[0]))
    qi = np.zeros((k2, QI_COLS), dtype=np.int64)
    prepare_query(method, KT.dirs, R, t, KT.scale_b, KT.fvert, KT.fstart, KT.fslab, KT.fsign, KT.finv, KT.T,
                  KT.TN, KT.inv_delta, qf, qi)
    return KdopQuery(KT.dirs, KT.slabA, KT.slabB, KT.tabB, KT.outB, qf, qi)


# ---- the query entry points: one compiled call per query, nothing allocated inside ----
# A call's memory comes from its caller: the workspace ``W`` (int64, ``_layout.W_*``;
# ``workspace_len``), the pairs buffer (rows, 2) int32 (or, given with no rows, the end of
# ``W``) and the trace buffer (rows, TRACE_COLS) int32. The entries are compiled without
# numba's runtime (``_pairjit``): unboxing an array argument then creates no reference-counted
# handle (~15 ns instead of ~70 ns each), and the ~30 arrays of the bundles cost no atomic
# operations.
#
# Return value: the number of triangle pairs (>= 0: done, the pairs sorted in place),
# ``RESUME`` (the pairs or trace buffer is full: grow it and call ``resume_entry``), or minus
# the status (a bad pose, also written at ``W[W_STATUS]``; nothing else was done).
STATUS = W_STATUS  # slot of ``counts`` (= ``W[:W_STATUS + 1]``) holding the status
RESUME = -1

# The entries' one signature each, compiled (or loaded from the cache) at import: a call with
# other argument types (a read-only, Fortran-ordered or non-float64 pose) raises ``TypeError``
# without compiling, and the caller converts. So the call needs no type checks in Python.
_F1, _I1, _L1 = types.float64[::1], types.int32[::1], types.int64[::1]
_P2, _I2 = types.float64[:, ::1], types.int32[:, ::1]
_KT = typeof(no_kdop_arrays())
SIG_QUERY = types.int64(_F1, _I1, _F1, _I1, _P2, _P2, _L1, _L1, _I2, _I2)
SIG_RESUME = types.int64(_F1, _I1, _F1, _I1, _L1, _L1, _I2, _I2)
SIG_QUERY_W = types.int64(_F1, _I1, _F1, _I1, _P2, _P2, _L1, _L1)
SIG_QUERY_KDOP = types.int64(_F1, _I1, _F1, _I1, _P2, _P2, _L1, _L1, _I2, _I2, _KT)
SIG_RESUME_KDOP = types.int64(_F1, _I1, _F1, _I1, _L1, _L1, _I2, _I2, _KT)


def workspace_len(height_a: int, height_b: int, k2: int = 0, n_rings: int = 0) -> int:
    """Length of a query's workspace for trees of these heights (k-DOP trees: ``k2`` = k/2
    directions, ``n_rings`` rows of the realignment's ring table), not counting the rows of
    a pairs buffer it may hold at its end: this is where they start (one int64 per pair)."""
    return W_FIXED + k2 * (QI_COLS + QF_TROW + n_rings) + height_a + height_b + 2


@njit(cache=True, inline='always')
def _workspace(W, IA, IB, pairs, trace, k2, qf_cols):
    """(R, t, qf, qi, Buffers) as views into the workspace ``W`` and the caller's buffers; a
    ``pairs`` buffer of no rows means the rows at the end of ``W`` (after ``workspace_len``
    slots: what ``collide`` and ``Query`` allocate, one array per call). A workspace too short
    for these trees raises ``ValueError`` (it would be written out of bounds)."""
    stack_rows = np.int64(IA[H_HEIGHT]) + np.int64(IB[H_HEIGHT]) + 2
    o = W_FIXED + k2 * QI_COLS
    n = o + k2 * qf_cols + stack_rows
    if W.shape[0] < n or trace.shape[0] < 1 or (pairs.shape[0] == 0 and W.shape[0] == n):
        raise ValueError("query workspace too small for these trees")
    R = c_view(W, W_R, (np.int64(3), np.int64(3)), np.float64)
    t = c_view(W, W_T, (np.int64(3),), np.float64)
    box = c_view(W, W_BOX, (np.int64(3), np.int64(3), np.int64(3)), np.float64)
    qi = c_view(W, W_FIXED, (np.int64(k2), np.int64(QI_COLS)), np.int64)
    qf = c_view(W, o, (np.int64(k2), np.int64(qf_cols)), np.float64)
    stack = c_view(W, o + k2 * qf_cols, (stack_rows, np.int64(2)), np.int32)
    if pairs.shape[0] == 0:
        pairs = c_view(W, n, (W.shape[0] - n, np.int64(2)), np.int32)
    buf = Buffers(pairs, trace, stack, W[:N_STATS], W[W_STATE:W_STATE + N_STATE], box)
    return R, t, qf, qi, buf


@pair_njit
def _sort_pairs(pairs, n):
    """Rows ``0 .. n - 1`` of ``pairs`` sorted by (triangle of A, triangle of B), in place
    (heapsort: no allocation)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift(pairs, start, n)
    for end in range(n - 1, 0, -1):
        a = pairs[0, 0]
        b = pairs[0, 1]
        pairs[0, 0] = pairs[end, 0]
        pairs[0, 1] = pairs[end, 1]
        pairs[end, 0] = a
        pairs[end, 1] = b
        _sift(pairs, 0, end)


@njit(cache=True, inline='always')
def _less(pairs, i, j):
    """Row i before row j: (triangle of A, triangle of B) compared in that order."""
    return pairs[i, 0] < pairs[j, 0] or (pairs[i, 0] == pairs[j, 0] and pairs[i, 1] < pairs[j, 1])


@njit(cache=True, inline='always')
def _sift(pairs, root, n):
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and _less(pairs, child, child + 1):
            child += 1
        if not _less(pairs, root, child):
            return
        a = pairs[root, 0]
        b = pairs[root, 1]
        pairs[root, 0] = pairs[child, 0]
        pairs[root, 1] = pairs[child, 1]
        pairs[child, 0] = a
        pairs[child, 1] = b
        root = child


@njit(cache=True, inline='always')
def _run(plan, R, t, A, B, K, buf, W, c0):
    """``traverse``; done: the pairs sorted in place and their count, else ``RESUME``. Adds
    the cycles since ``c0`` to ``W[W_CYC]``."""
    status = traverse(plan, R, t, A, B, K, buf)
    n = buf.state[ST_PAIRS]
    if status == DONE and n > 1:
        _sort_pairs(buf.pairs, n)
    W[W_CYC] += read_cycles() - c0
    return n if status == DONE else RESUME


@njit(cache=True, inline='always')
def _start(pose_a, pose_b, W):
    """The counters zeroed and the poses checked (shape, then ``pose_status``); returns the
    status (also at ``W[W_STATUS]``)."""
    if W.shape[0] < W_FIXED:
        raise ValueError("query workspace too small for these trees")
    for k in range(N_STATS):
        W[k] = 0
    W[W_CYC] = 0
    if pose_a.shape[0] != 4 or pose_a.shape[1] != 4:
        st = POSE_A_BAD + POSE_SHAPE
    elif pose_b.shape[0] != 4 or pose_b.shape[1] != 4:
        st = POSE_B_BAD + POSE_SHAPE
    else:
        st = pose_status(pose_a, pose_b)
    W[W_STATUS] = st
    return st


@pair_njit(signature=SIG_QUERY, nogil=True)
def query_entry(FA, IA, FB, IB, pose_a, pose_b, plan, W, pairs, trace):
    """One query on packed non-k-DOP trees from the start: the poses checked, B's transform
    into A's frame, ``traverse`` (see the return value above)."""
    c0 = read_cycles()
    st = _start(pose_a, pose_b, W)
    if st:
        return -st
    R, t, qf, qi, buf = _workspace(W, IA, IB, pairs, trace, 0, 0)
    _relative_transform(pose_a, pose_b, R, t)
    A, B = trees(FA, IA, FB, IB)
    reset(buf)
    return _run(plan, R, t, A, B, _unread_kdop(R, A, B, qi), buf, W, c0)


@pair_njit(signature=SIG_QUERY_W, nogil=True)
def query_entry_w(FA, IA, FB, IB, pose_a, pose_b, plan, W):
    """``query_entry`` with the pairs buffer at the end of ``W`` and no trace (a ``plan``
    without ``P_TRACE``): the call of ``collide``'s common case and of ``Query``. Two array
    arguments fewer than ``query_entry``: each costs a Python call ~450 instructions to check
    and unbox. After ``RESUME``, continue with ``resume_entry`` (the pairs at the end of
    ``W`` are its ``pairs`` argument, ``collide._tail``)."""
    c0 = read_cycles()
    st = _start(pose_a, pose_b, W)
    if st:
        return -st
    if plan[P_TRACE] != 0:
        raise ValueError("query_entry_w: a traced query needs a trace buffer (query_entry)")
    # no rows: the pairs at the end of W; the trace, never written with P_TRACE 0, over the
    # box scratch (what ``_workspace`` wants: an int32 array of one row at least)
    no_pairs = c_view(W, 0, (np.int64(0), np.int64(2)), np.int32)
    no_trace = c_view(W, W_BOX, (np.int64(1), np.int64(TRACE_COLS)), np.int32)
    R, t, qf, qi, buf = _workspace(W, IA, IB, no_pairs, no_trace, 0, 0)
    _relative_transform(pose_a, pose_b, R, t)
    A, B = trees(FA, IA, FB, IB)
    reset(buf)
    return _run(plan, R, t, A, B, _unread_kdop(R, A, B, qi), buf, W, c0)


@pair_njit(signature=SIG_RESUME, nogil=True)
def resume_entry(FA, IA, FB, IB, plan, W, pairs, trace):
    """Continue ``query_entry``'s traversal after ``RESUME`` with grown buffers (the rows
    written so far copied in by the caller)."""
    c0 = read_cycles()
    R, t, qf, qi, buf = _workspace(W, IA, IB, pairs, trace, 0, 0)
    A, B = trees(FA, IA, FB, IB)
    return _run(plan, R, t, A, B, _unread_kdop(R, A, B, qi), buf, W, c0)


@njit(cache=True, inline='always')
def _kdop_bundle(KT, qf, qi):
    return KdopQuery(KT.dirs, KT.slabA, KT.slabB, KT.tabB, KT.outB, qf, qi)


@pair_njit(signature=SIG_QUERY_KDOP, nogil=True)
def query_kdop_entry(FA, IA, FB, IB, pose_a, pose_b, plan, W, pairs, trace, KT):
    """``query_entry`` for k-DOP trees: B's realignment tables for this pose
    (``_kdop_traverse.prepare_query``; ``KT``: ``KdopTables``), then ``TEST_SLAB``."""
    c0 = read_cycles()
    st = _start(pose_a, pose_b, W)
    if st:
        return -st
    k2 = KT.dirs.shape[0]
    R, t, qf, qi, buf = _workspace(W, IA, IB, pairs, trace, k2, QF_TROW + KT.T.shape[0])
    _relative_transform(pose_a, pose_b, R, t)
    qf[:] = 0.0
    qi[:] = 0
    prepare_query(plan[P_METHOD], KT.dirs, R, t, KT.scale_b, KT.fvert, KT.fstart, KT.fslab, KT.fsign, KT.finv, KT.T,
                  KT.TN, KT.inv_delta, qf, qi)
    A, B = trees(FA, IA, FB, IB)
    reset(buf)
    return _run(plan, R, t, A, B, _kdop_bundle(KT, qf, qi), buf, W, c0)


@pair_njit(signature=SIG_RESUME_KDOP, nogil=True)
def resume_kdop_entry(FA, IA, FB, IB, plan, W, pairs, trace, KT):
    """``resume_entry`` for k-DOP trees."""
    c0 = read_cycles()
    R, t, qf, qi, buf = _workspace(W, IA, IB, pairs, trace, KT.dirs.shape[0], QF_TROW + KT.T.shape[0])
    A, B = trees(FA, IA, FB, IB)
    return _run(plan, R, t, A, B, _kdop_bundle(KT, qf, qi), buf, W, c0)


@njit(cache=True, nogil=True)
def _batch_chunk(FA, IA, FB, IB, pose_a, poses_b, plan, KT, i0, i1, hits, counters):
    """First-contact queries of B at poses ``i0 .. i1 - 1`` (one chunk of a batch): writes
    ``hits`` and adds to ``counters`` (N_STATS,)."""
    A, B = trees(FA, IA, FB, IB)
    leaf_cap = max(1, IA[H_LEAF_CAP] * IB[H_LEAF_CAP])
    # first contact only: room for one leaf pair's triangle pairs is enough
    buf = new_buffers(leaf_cap, 1, IA[H_HEIGHT] + IB[H_HEIGHT] + 2)
    R = np.empty((3, 3))
    t = np.empty(3)
    kdop = plan[P_TEST] == TEST_SLAB
    k2 = KT.dirs.shape[0]
    qf = np.zeros((k2, QF_TROW + KT.T.shape[0]))
    qi = np.zeros((k2, QI_COLS), dtype=np.int64)
    K = KdopQuery(KT.dirs, KT.slabA, KT.slabB, KT.tabB, KT.outB, qf, qi)
    for i in range(i0, i1):
        _relative_transform(pose_a, poses_b[i], R, t)
        if kdop:
            prepare_query(plan[P_METHOD], KT.dirs, R, t, KT.scale_b, KT.fvert, KT.fstart, KT.fslab, KT.fsign,
                          KT.finv, KT.T, KT.TN, KT.inv_delta, qf, qi)
        reset(buf)
        traverse(plan, R, t, A, B, K, buf)
        hits[i] = buf.state[ST_PAIRS] > 0
    for k in range(N_STATS):
        if k == CNT_MAX_STACK:
            counters[k] = max(counters[k], buf.counters[k])
        else:
            counters[k] += buf.counters[k]


@njit(cache=True, nogil=True, parallel=True)
def batch_entry(FA, IA, FB, IB, pose_a, poses_b, plan, KT, n_chunks):
    """First-contact queries of B at every pose of ``poses_b`` (N, 4, 4) against A at
    ``pose_a``, in ``n_chunks`` parallel chunks (each with its own buffers: results are
    identical to a serial loop). Returns (hits (N,) bool, counters (N_STATS,) summed)."""
    n = poses_b.shape[0]
    hits = np.zeros(n, dtype=np.bool_)
    acc = np.zeros((n_chunks, N_STATS), dtype=np.int64)
    for c in prange(n_chunks):
        _batch_chunk(FA, IA, FB, IB, pose_a, poses_b, plan, KT, c * n // n_chunks, (c + 1) * n // n_chunks, hits,
                     acc[c])
    total = np.zeros(N_STATS, dtype=np.int64)
    for c in range(n_chunks):
        for k in range(N_STATS):
            if k == CNT_MAX_STACK:
                total[k] = max(total[k], acc[c, k])
            else:
                total[k] += acc[c, k]
    return hits, total


@njit(cache=True, nogil=True)
def batch_serial_entry(FA, IA, FB, IB, pose_a, poses_b, plan, KT):
    """``batch_entry`` on the calling thread (small batches, ``parallel=False``): never enters
    numba's parallel layer, so no worker thread is woken."""
    n = poses_b.shape[0]
    hits = np.zeros(n, dtype=np.bool_)
    total = np.zeros(N_STATS, dtype=np.int64)
    _batch_chunk(FA, IA, FB, IB, pose_a, poses_b, plan, KT, np.int64(0), n, hits, total)
    return hits, total


@njit(cache=True, nogil=True)
def run_views(plan, R, t, A, B, stack_rows, leaf_cap):
    """``drive`` on non-k-DOP ``Tree`` bundles built by the caller (articulation hierarchies:
    their volumes are updated per frame in arrays of their own). Returns (pairs (k, 2) int32
    unsorted, trace rows, counters (N_STATS,))."""
    qi = np.zeros((1, 1), dtype=np.int64)
    K = _unread_kdop(R, A, B, qi)
    buf = drive(plan, R, t, A, B, K, stack_rows, leaf_cap)
    return buf.pairs[:buf.state[ST_PAIRS]].copy(), buf.trace[:buf.state[ST_TRACE]].copy(), buf.counters.copy()
