"""Simultaneous descent of two hierarchies (van den Bergen 1998, section 3).

Everything is expressed in A's model frame: B's model-to-A transform (R, t) is computed
once per query. For AABB trees the relative rotation of every node pair is R itself, so
R and |R| are computed once per tree pair; oriented boxes need C = Ra^T R Rb per pair.
When both nodes are internal the one with the larger volume is descended.
"""
import numpy as np
from numba import njit

from ._cycles import read_cycles
from ._layout import (AXIS_SPHERE, C0, COUNT, E0, KIND_AABB, LEFT, OUT_LEAF_HIT, OUT_LEAF_MISS,
                      OUT_OVERLAP, OUT_SEPARATED, R0, RIGHT, S0, SIZE, SR, START)
from ._overlap import ABS_EPS, sat_program, spheres_separated
from ._tritri import tri_tri_overlap_xyz
from .transforms import _relative_transform, moved_vertex

# counters (int64 array) slots
CNT_BV_TESTS = 0
CNT_PRIM_TESTS = 1
CNT_LEAF_PAIRS = 2  # leaf pairs whose volumes overlapped: exact queries
CNT_FALSE = 3  # of those, how many found no contact: false alarms
CNT_PRIM_CYCLES = 4  # cycle-counter ticks spent in primitive tests
CNT_MAX_STACK = 5
N_COUNTERS = 6


@njit(cache=True)
def _leaf_pair(a, b, R, t, niA, poA, vA, fA, niB, poB, vB, fB, first, pairs, n_pairs, counters):
    """Exact triangle tests of a leaf pair; B's vertices are moved into A's frame.
    ``pairs`` has room for every triangle pair of the leaves (checked by the caller)."""
    hit = False
    c0 = read_cycles()
    sa = niA[a, START]
    sb = niB[b, START]
    for jb in range(sb, sb + niB[b, COUNT]):
        fb = poB[jb]
        dx, dy, dz = moved_vertex(R, t, vB, fB[fb, 0])
        ex, ey, ez = moved_vertex(R, t, vB, fB[fb, 1])
        gx, gy, gz = moved_vertex(R, t, vB, fB[fb, 2])
        for ja in range(sa, sa + niA[a, COUNT]):
            fa = poA[ja]
            p = fA[fa, 0]
            q = fA[fa, 1]
            r = fA[fa, 2]
            counters[1] += 1
            if tri_tri_overlap_xyz(vA[p, 0], vA[p, 1], vA[p, 2], vA[q, 0], vA[q, 1], vA[q, 2],
                                   vA[r, 0], vA[r, 1], vA[r, 2], dx, dy, dz, ex, ey, ez, gx, gy, gz):
                hit = True
                pairs[n_pairs, 0] = fa
                pairs[n_pairs, 1] = fb
                n_pairs += 1
                if first:
                    counters[4] += read_cycles() - c0
                    return hit, n_pairs
    counters[4] += read_cycles() - c0
    return hit, n_pairs


@njit(cache=True, inline='always')
def _obb_pair(program, axes, nfA, a, nfB, b, R, d0, d1, d2, T, C, AC, ea, eb):
    """SAT of two oriented boxes: C = Ra^T R Rb, built row by row from A's axes, and
    T = Ra^T d. (Building rows lazily to exit after one face test was measured slower:
    the extra data-dependent branch costs more than the arithmetic it saves.)"""
    for r in range(3):
        ux = nfA[a, R0 + r]
        uy = nfA[a, R0 + 3 + r]
        uz = nfA[a, R0 + 6 + r]
        # row r of Ra^T R, then of C
        n0 = ux * R[0, 0] + uy * R[1, 0] + uz * R[2, 0]
        n1 = ux * R[0, 1] + uy * R[1, 1] + uz * R[2, 1]
        n2 = ux * R[0, 2] + uy * R[1, 2] + uz * R[2, 2]
        T[r] = ux * d0 + uy * d1 + uz * d2
        for c in range(3):
            v = n0 * nfB[b, R0 + c] + n1 * nfB[b, R0 + 3 + c] + n2 * nfB[b, R0 + 6 + c]
            C[r, c] = v
            AC[r, c] = abs(v) + ABS_EPS
    return sat_program(program, axes, T, C, AC, ea, eb)


# traverse() return status
DONE = 0
BUFFER_FULL = 1  # pairs or trace is full: grow it and call again with the returned state


@njit(cache=True)
def traverse(kind, program, axes, use_sphere, use_box, first, trace_on, exact_leaves, R, t,
             nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB,
             pairs, n_pairs, trace, n_trace, stack, sp, counters, hist):
    """Collide two hierarchies, resumably.

    Pops node pairs from ``stack`` (cap, 2) int32 holding ``sp`` pairs (start: one pair
    (0, 0)); appends intersecting triangle pairs to ``pairs`` (cap, 2) after ``n_pairs``
    rows and, when ``trace_on``, one row (node_a, node_b, outcome, axis) per tested node
    pair to ``trace`` (cap, 4) after ``n_trace`` rows; adds to ``counters`` and to the
    exit-axis histogram ``hist`` (16,). With ``exact_leaves`` False, a leaf pair whose
    volumes overlap records all its primitive pairs untested (a broad phase: used over
    articulation hierarchies, whose primitives are links). ``program``/``axes`` choose the box axes
    (``_overlap.sat_program``). The stack needs ``height_a + height_b + 2`` rows: every
    descent pushes two siblings and pops one.

    Returns (status, sp, n_pairs, n_trace). With ``BUFFER_FULL`` nothing of the pending
    pair was done: grow the full buffer, then call again with the returned state. (No
    array is reallocated in here: reassigning arrays inside the loop costs reference
    counting on every iteration.)
    """
    aabb = kind == KIND_AABB
    # per-tree-pair relative rotation for AABB trees (van den Bergen section 3)
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
        if niA[a, LEFT] < 0 and niB[b, LEFT] < 0:
            if n_pairs + niA[a, COUNT] * niB[b, COUNT] > pairs.shape[0]:
                return BUFFER_FULL, sp, n_pairs, n_trace
        sp -= 1
        counters[0] += 1
        sep = -1
        if use_sphere:
            sx = nfB[b, S0]
            sy = nfB[b, S0 + 1]
            sz = nfB[b, S0 + 2]
            if spheres_separated(nfA[a, S0], nfA[a, S0 + 1], nfA[a, S0 + 2], nfA[a, SR],
                                 R[0, 0] * sx + R[0, 1] * sy + R[0, 2] * sz + t[0],
                                 R[1, 0] * sx + R[1, 1] * sy + R[1, 2] * sz + t[1],
                                 R[2, 0] * sx + R[2, 1] * sy + R[2, 2] * sz + t[2], nfB[b, SR]):
                sep = AXIS_SPHERE
        if sep < 0 and use_box:
            # centre of B's box in A's model frame, relative to A's box centre
            cx = nfB[b, C0]
            cy = nfB[b, C0 + 1]
            cz = nfB[b, C0 + 2]
            d0 = R[0, 0] * cx + R[0, 1] * cy + R[0, 2] * cz + t[0] - nfA[a, C0]
            d1 = R[1, 0] * cx + R[1, 1] * cy + R[1, 2] * cz + t[1] - nfA[a, C0 + 1]
            d2 = R[2, 0] * cx + R[2, 1] * cy + R[2, 2] * cz + t[2] - nfA[a, C0 + 2]
            for k in range(3):
                ea[k] = nfA[a, E0 + k]
                eb[k] = nfB[b, E0 + k]
            if aabb:
                T[0] = d0
                T[1] = d1
                T[2] = d2
                sep = sat_program(program, axes, T, Cg, ACg, ea, eb)
            else:
                sep = _obb_pair(program, axes, nfA, a, nfB, b, R, d0, d1, d2, T, C, AC, ea, eb)
        outcome = OUT_OVERLAP
        leaf_a = niA[a, LEFT] < 0
        leaf_b = niB[b, LEFT] < 0
        if sep >= 0:
            hist[sep] += 1
            outcome = OUT_SEPARATED
        elif leaf_a and leaf_b:
            counters[2] += 1
            if exact_leaves:
                hit, n_pairs = _leaf_pair(a, b, R, t, niA, poA, vA, fA, niB, poB, vB, fB,
                                          first, pairs, n_pairs, counters)
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
                counters[3] += 1
        elif leaf_b or (not leaf_a and nfA[a, SIZE] >= nfB[b, SIZE]):
            stack[sp, 0] = niA[a, RIGHT]
            stack[sp, 1] = b
            stack[sp + 1, 0] = niA[a, LEFT]
            stack[sp + 1, 1] = b
            sp += 2
        else:
            stack[sp, 0] = a
            stack[sp, 1] = niB[b, RIGHT]
            stack[sp + 1, 0] = a
            stack[sp + 1, 1] = niB[b, LEFT]
            sp += 2
        if sp > counters[5]:
            counters[5] = sp
        if trace_on:
            trace[n_trace, 0] = a
            trace[n_trace, 1] = b
            trace[n_trace, 2] = outcome
            trace[n_trace, 3] = sep
            n_trace += 1
        if first and outcome == OUT_LEAF_HIT:
            break
    return DONE, sp, n_pairs, n_trace


@njit(cache=True)
def traverse_batch(kind, program, axes, use_sphere, use_box, pose_a, poses_b,
                   nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB, max_leaf_a, max_leaf_b, stack_cap,
                   counters, hist):
    """First-contact queries of B at every pose in ``poses_b`` (N, 4, 4) against A at
    ``pose_a``; returns a (N,) bool array, counters and histogram summed."""
    n = poses_b.shape[0]
    hits = np.zeros(n, dtype=np.bool_)
    R = np.empty((3, 3))
    t = np.empty(3)
    # first contact only: room for one leaf pair's triangle pairs is enough
    pairs = np.empty((max_leaf_a * max_leaf_b, 2), dtype=np.int32)
    trace = np.empty((1, 4), dtype=np.int32)
    stack = np.empty((stack_cap, 2), dtype=np.int32)
    for i in range(n):
        _relative_transform(pose_a, poses_b[i], R, t)
        stack[0, 0] = 0
        stack[0, 1] = 0
        _, _, n_pairs, _ = traverse(kind, program, axes, use_sphere, use_box, True, False, True, R, t,
                                    nfA, niA, poA, vA, fA, nfB, niB, poB, vB, fB,
                                    pairs, 0, trace, 0, stack, 1, counters, hist)
        hits[i] = n_pairs > 0
    return hits
