"""Collision between articulated bodies (CAB section 4): a broad phase over the two
articulation hierarchies, then an exact query per overlapping leaf (link) pair that runs
the two links' rigid mesh hierarchies against each other."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._core import Tree, _unread_kdop, make_plan, new_buffers, reset, run_views, traverse
from .._layout import (CNT_MAX_STACK, N_STATE, P_AXES, P_EXACT, P_FIRST, P_KIND, P_NAXES, P_PROGRAM, P_TEST,
                       PLAN_LEN, ST_PAIRS)
from .._layout import KDOP_KINDS, N_STATS
from ..bv import BV_TYPES
from ..collide import TEST_CODES, CollisionStats, Trace
from ..transforms import _relative_transform
from .hierarchy import BodyHierarchy


@dataclass
class BodyCollision:
    """One frame's query between two bodies (or one body with itself).

    ``link_pairs`` (k, 2) int32: link pairs whose leaf volumes overlapped, i.e. the exact
    queries run (#coll = k); ``hits`` (k,) bool their answers (#false = k - hits.sum()).
    ``broad``: counters of the articulation-level traversal; ``exact``: summed counters of
    the mesh-level traversals. Times in seconds: ``t_test`` broad phase, ``t_query`` exact
    queries.
    """
    link_pairs: np.ndarray
    hits: np.ndarray
    broad: CollisionStats
    exact: CollisionStats
    t_test: float
    t_query: float
    trace: Trace | None = None

    @property
    def n_exact(self) -> int:
        return len(self.link_pairs)

    @property
    def n_false(self) -> int:
        return int(len(self.hits) - self.hits.sum())

    @property
    def hit(self) -> bool:
        return bool(self.hits.any())

    @property
    def contacts(self) -> np.ndarray:
        """(c, 2) int32 link pairs in contact."""
        return self.link_pairs[self.hits]


@njit(cache=True)
def exact_queries(pairs, poses_a, poses_b, kind, test, program, axes,
                  nfA, niA, poA, vA, fA, noA, foA, voA, nfB, niB, poB, vB, fB, noB, foB, voB,
                  max_leaf, stack, counters, hits):
    """First-contact query of every link pair (i of A, j of B) through the links' mesh
    hierarchies (slices of the packed arrays by the node/face/vertex offsets), by the
    traversal core's kernel (``axes``: the custom axis list of ``PROGRAM_CUSTOM``; ``stack``:
    its rows are the stack's size)."""
    plan = np.zeros(PLAN_LEN, dtype=np.int64)
    plan[P_KIND] = kind
    plan[P_TEST] = test
    plan[P_PROGRAM] = program
    plan[P_FIRST] = 1
    plan[P_EXACT] = 1
    plan[P_NAXES] = min(axes.shape[0], PLAN_LEN - P_AXES)
    for k in range(plan[P_NAXES]):
        plan[P_AXES + k] = axes[k]
    R = np.empty((3, 3))
    t = np.empty(3)
    buf = new_buffers(max_leaf, 1, stack.shape[0])
    for k in range(pairs.shape[0]):
        i = pairs[k, 0]
        j = pairs[k, 1]
        _relative_transform(poses_a[i], poses_b[j], R, t)
        A = Tree(nfA[noA[i]:noA[i + 1]], niA[noA[i]:noA[i + 1]], poA[foA[i]:foA[i + 1]], vA[voA[i]:voA[i + 1]],
                 fA[foA[i]:foA[i + 1]])
        B = Tree(nfB[noB[j]:noB[j + 1]], niB[noB[j]:noB[j + 1]], poB[foB[j]:foB[j + 1]], vB[voB[j]:voB[j + 1]],
                 fB[foB[j]:foB[j + 1]])
        reset(buf)
        traverse(plan, R, t, A, B, _unread_kdop(R, A, B, buf.state.reshape((1, N_STATE))), buf)
        hits[k] = buf.state[ST_PAIRS] > 0
    for k in range(min(counters.shape[0], buf.counters.shape[0])):
        if k == CNT_MAX_STACK:
            counters[k] = max(counters[k], buf.counters[k])
        else:
            counters[k] += buf.counters[k]


def run_exact_queries(body_a, poses_a, body_b, poses_b, pairs, test=None, realign=None):
    """Exact queries for link ``pairs`` (k, 2); returns (hits (k,) bool, stats, seconds).

    k-DOP link hierarchies (``realign``: their realignment method) run one ``collide`` per
    pair, the other types all pairs in one compiled call."""
    if body_a.mesh_bv != body_b.mesh_bv:
        raise ValueError("both bodies' links must use the same mesh bounding-volume type")
    if getattr(body_a, "prims", None) is not None or getattr(body_b, "prims", None) is not None:
        from .primlinks import exact_queries_with_prims  # links with exact primitive solids
        return exact_queries_with_prims(body_a, poses_a, body_b, poses_b, pairs, test)
    test = test or BV_TYPES[body_a.mesh_bv].tests[0]
    if body_a.bvhs[0].kind in KDOP_KINDS:
        return _kdop_exact_queries(body_a, poses_a, body_b, poses_b, pairs, realign)
    code, program = TEST_CODES[test]
    axes = np.zeros(1, dtype=np.int64)
    pairs = np.ascontiguousarray(pairs, dtype=np.int32).reshape(-1, 2)
    hits = np.zeros(len(pairs), dtype=np.bool_)
    counters = np.zeros(N_STATS, dtype=np.int64)
    stack = np.empty((body_a.max_height + body_b.max_height + 2, 2), dtype=np.int32)
    a, b = body_a, body_b
    t0 = time.perf_counter()
    if len(pairs):
        exact_queries(pairs, poses_a, poses_b, a.bvhs[0].kind, code, program, axes,
                      a.nodes_f, a.nodes_i, a.prim_order, a.vertices, a.faces, a.node_off, a.prim_off,
                      a.vert_off, b.nodes_f, b.nodes_i, b.prim_order, b.vertices, b.faces, b.node_off,
                      b.prim_off, b.vert_off, max(bv.leaf_size for bv in a.bvhs) * max(
                          bv.leaf_size for bv in b.bvhs), stack, counters, hits)
    dt = time.perf_counter() - t0
    return hits, CollisionStats.from_counts(counters, dt), dt


def _kdop_exact_queries(body_a, poses_a, body_b, poses_b, pairs, realign):
    from ..collide import collide
    pairs = np.ascontiguousarray(pairs, dtype=np.int32).reshape(-1, 2)
    hits = np.zeros(len(pairs), dtype=np.bool_)
    total = CollisionStats()
    t0 = time.perf_counter()
    for k, (i, j) in enumerate(pairs.tolist()):
        r = collide(body_a.bvhs[i], poses_a[i], body_b.bvhs[j], poses_b[j], contacts="first", realign=realign)
        hits[k] = r.hit
        s = r.stats
        total.bv_tests += s.bv_tests
        total.prim_tests += s.prim_tests
        total.leaf_pairs += s.leaf_pairs
        total.false_alarms += s.false_alarms
        total.prim_cycles += s.prim_cycles
        total.axis_hist = total.axis_hist + s.axis_hist[:len(total.axis_hist)]
    dt = time.perf_counter() - t0
    total.t_total = dt
    return hits, total, dt


def _broad_phase(ha: BodyHierarchy, hb: BodyHierarchy, test: str, trace: bool):
    """Link pairs whose leaf volumes overlap (the traversal core without exact leaves):
    (pairs (k, 2) int32 in traversal order, Trace or None, CollisionStats)."""
    code, program = TEST_CODES[test]
    ta, tb = ha.tree, hb.tree
    t0 = time.perf_counter()
    plan = make_plan(ha.kind, code, program, first=False, trace=trace, exact=False)
    pairs, rows, counts = run_views(plan, _I3, _Z3, Tree(ha.nodes_f, ta.nodes_i, ta.link_order, _NO_VERTS, _NO_FACES),
                                    Tree(hb.nodes_f, tb.nodes_i, tb.link_order, _NO_VERTS, _NO_FACES),
                                    ta.height + tb.height + 2, 1)
    stats = CollisionStats.from_counts(counts, time.perf_counter() - t0)
    return pairs, (Trace.from_rows(rows) if trace else None), stats


_NO_VERTS = np.zeros((1, 3))
_NO_FACES = np.zeros((1, 3), dtype=np.int32)
_I3 = np.eye(3)
_Z3 = np.zeros(3)

#: overlap tests for articulation hierarchies (volumes are world-frame boxes + spheres)
BODY_TESTS = ("sat15", "sat6", "sphere5", "sphere15", "sphere")


def collide_bodies(ha: BodyHierarchy, hb: BodyHierarchy, test: str = "sat15", trace: bool = False,
                   exact_test: str | None = None, realign: str | None = None) -> BodyCollision:
    """Broad phase over two updated articulation hierarchies, then exact queries.

    Pass the same hierarchy twice for self-collision: link pairs are then reported once
    (i < j) and parent-child pairs are skipped when the body's links touch at their joints
    (``ArticulatedBody.joints_touch``; chains with a joint gap test every pair).
    """
    if test not in BODY_TESTS:
        raise ValueError(f"test: expected one of {BODY_TESTS}, got {test!r}")
    for name, h in (("ha", ha), ("hb", hb)):
        if h.poses is None:
            raise ValueError(f"{name}: call update(poses) before colliding")
    if ha.kind != hb.kind:
        raise ValueError("both hierarchies must use the same family of update methods (AABB or OBB)")
    pairs, tr, broad = _broad_phase(ha, hb, test, trace)
    if ha is hb:
        adj = ha.body.skipped_self_pairs()
        keep = [k for k, (i, j) in enumerate(pairs.tolist()) if i < j and (i, j) not in adj and (j, i) not in adj]
        pairs = pairs[keep]
    hits, exact, t_query = run_exact_queries(ha.body, ha.poses, hb.body, hb.poses, pairs, exact_test, realign)
    return BodyCollision(pairs, hits, broad, exact, broad.t_total, t_query, tr)


def brute_force_pairs(body_a, body_b, self_collision=False) -> np.ndarray:
    """Every link pair (the paper's "brute" row); for self-collision every pair i < j,
    minus the adjacent ones when the links touch at their joints."""
    ii, jj = np.meshgrid(np.arange(body_a.n_links), np.arange(body_b.n_links), indexing="ij")
    pairs = np.stack([ii.ravel(), jj.ravel()], axis=1).astype(np.int32)
    if self_collision:
        adj = body_a.skipped_self_pairs()
        pairs = np.array([p for p in pairs.tolist() if p[0] < p[1] and tuple(p) not in adj],
                         dtype=np.int32).reshape(-1, 2)
    return pairs
