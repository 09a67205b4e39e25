"""Collision queries between two hierarchies: the typed public API over ``_traverse``."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from . import _layout as L
from ._cycles import seconds_per_cycle
from ._overlap import (PROGRAM_SAT6, PROGRAM_SAT15, PROGRAM_SPHERE5, SAT6_AXES, SAT15_AXES,
                       SPHERE5_AXES)
from ._kdop_traverse import check_realign, run_kdop_batch, run_kdop_traversal
from ._traverse import DONE, N_COUNTERS, traverse, traverse_batch
from .bv import BV_TYPES
from .bvh import BVH
from .transforms import as_pose, as_poses, relative_transform

TESTS = ("sat15", "sat6", "sphere", "sphere5", "sphere15", "slab")  # "slab": k-DOPs (cdcore.bv.kdop)

AXIS_NAMES = (
    ["a0 (A long)", "a1 (A mid)", "a2 (A short)", "b0 (B long)", "b1 (B mid)", "b2 (B short)"]
    + [f"a{i} x b{j}" for i in range(3) for j in range(3)] + ["sphere"])


class Outcome(IntEnum):
    """What happened to a tested node pair (trace rows)."""
    SEPARATED = L.OUT_SEPARATED
    OVERLAP = L.OUT_OVERLAP  # volumes overlap, one node was descended
    LEAF_HIT = L.OUT_LEAF_HIT  # leaf pair with at least one intersecting triangle pair
    LEAF_MISS = L.OUT_LEAF_MISS  # leaf pair whose volumes overlap but no triangles do


@dataclass
class CollisionStats:
    """Counters and timings of one query (or summed over a batch).

    ``t_bv`` is the traversal time outside primitive tests (BV tests and bookkeeping,
    van den Bergen's T_b); ``t_prim`` the time in exact triangle tests (T_p).
    ``axis_hist`` (16,) counts rejected node pairs by the axis that separated them
    (ids in ``AXIS_NAMES``; 15 is the sphere test).
    """
    bv_tests: int = 0
    prim_tests: int = 0
    leaf_pairs: int = 0
    false_alarms: int = 0
    max_stack: int = 0
    t_total: float = 0.0
    prim_cycles: int = 0  # cycle-counter ticks inside exact triangle tests
    axis_hist: np.ndarray = field(default_factory=lambda: np.zeros(L.N_AXES, dtype=np.int64))

    @property
    def t_prim(self) -> float:
        return min(self.prim_cycles * seconds_per_cycle(), self.t_total)

    @property
    def t_bv(self) -> float:
        return self.t_total - self.t_prim

    @property
    def separated(self) -> int:
        return int(self.axis_hist.sum())


@dataclass
class Trace:
    """Every tested node pair in traversal order. All arrays (k,) int32."""
    node_a: np.ndarray
    node_b: np.ndarray
    outcome: np.ndarray  # Outcome values
    axis: np.ndarray  # separating axis id for SEPARATED rows, else -1

    def __len__(self) -> int:
        return len(self.node_a)


@dataclass
class CollisionResult:
    """``hit``: any intersecting triangle pair; ``pairs`` (k, 2) int32 (triangle of A,
    triangle of B), sorted, all of them for ``contacts="all"``, one for ``"first"``."""
    hit: bool
    pairs: np.ndarray
    stats: CollisionStats
    trace: Trace | None = None


@dataclass
class BatchResult:
    """``hits`` (N,) bool, one per pose; ``stats`` summed over all poses."""
    hits: np.ndarray
    stats: CollisionStats


def _check_pair(bvh_a, bvh_b, test):
    for name, b in (("bvh_a", bvh_a), ("bvh_b", bvh_b)):
        if not isinstance(b, BVH):
            raise TypeError(f"{name}: expected cdcore.BVH, got {type(b).__name__}")
    if bvh_a.bv != bvh_b.bv:
        raise ValueError(f"both hierarchies must have the same bounding-volume type, got {bvh_a.bv!r} "
                         f"and {bvh_b.bv!r}")
    allowed = BV_TYPES[bvh_a.bv].tests
    if test is None:
        test = allowed[0]
    if test not in allowed:
        raise ValueError(f"test: {test!r} is not available for bv={bvh_a.bv!r}; choose one of {allowed}")
    return test


def test_plan(test):
    """(axis program, axis ids, use_sphere, use_box) for a test name."""
    return {
        "sat15": (PROGRAM_SAT15, SAT15_AXES, False, True),
        "sat6": (PROGRAM_SAT6, SAT6_AXES, False, True),
        "sphere": (PROGRAM_SAT6, SAT6_AXES, True, False),
        "sphere5": (PROGRAM_SPHERE5, SPHERE5_AXES, True, True),
        "sphere15": (PROGRAM_SAT15, SAT15_AXES, True, True),
    }[test]


def _stats(counters, hist, t_total) -> CollisionStats:
    c = counters.tolist()
    return CollisionStats(c[0], c[1], c[2], c[3], c[5], t_total, c[4], hist)


@dataclass
class TreeView:
    """The arrays one side of a traversal needs (a mesh BVH, or an articulation
    hierarchy whose primitives are links)."""
    kind: int
    nodes_f: np.ndarray
    nodes_i: np.ndarray
    prim_order: np.ndarray
    vertices: np.ndarray
    faces: np.ndarray
    leaf_size: int
    height: int

    @classmethod
    def of(cls, bvh: BVH) -> "TreeView":
        return bvh.view()


def run_traversal(a: TreeView, b: TreeView, test: str, R, t, first: bool, trace: bool,
                  exact_leaves: bool = True):
    """Drive the resumable ``traverse`` kernel, growing its buffers as needed.
    Returns (pairs (k, 2) int32 unsorted, Trace or None, CollisionStats)."""
    program, axes, use_sphere, use_box = test_plan(test)
    acc = np.zeros(N_COUNTERS + L.N_AXES, dtype=np.int64)
    counters, hist = acc[:N_COUNTERS], acc[N_COUNTERS:]
    # per-call buffers: callers on other threads must never share them
    pairs = np.empty((max(64, a.leaf_size * b.leaf_size), 2), dtype=np.int32)
    tr = np.empty((4096 if trace else 1, 4), dtype=np.int32)
    stack = np.empty((a.height + b.height + 2, 2), dtype=np.int32)
    stack[0] = 0
    sp, n_pairs, n_trace = 1, 0, 0
    t0 = time.perf_counter()
    while True:
        status, sp, n_pairs, n_trace = traverse(
            a.kind, program, axes, use_sphere, use_box, first, trace, exact_leaves, R, t,
            a.nodes_f, a.nodes_i, a.prim_order, a.vertices, a.faces,
            b.nodes_f, b.nodes_i, b.prim_order, b.vertices, b.faces,
            pairs, n_pairs, tr, n_trace, stack, sp, counters, hist)
        if status == DONE:
            break
        # a buffer is full: double it and resume where the traversal stopped
        if n_pairs + a.leaf_size * b.leaf_size > len(pairs):
            pairs = np.concatenate([pairs, np.empty_like(pairs)])
        if trace and n_trace >= len(tr):
            tr = np.concatenate([tr, np.empty_like(tr)])
    t_total = time.perf_counter() - t0
    trace_obj = None
    if trace:
        rows = tr[:n_trace]
        trace_obj = Trace(rows[:, 0].copy(), rows[:, 1].copy(), rows[:, 2].copy(), rows[:, 3].copy())
    return pairs[:n_pairs].copy(), trace_obj, _stats(counters, hist.copy(), t_total)



def collide(bvh_a: BVH, pose_a, bvh_b: BVH, pose_b, test: str | None = None,
            contacts: str = "all", trace: bool = False, realign: str | None = None) -> CollisionResult:
    """Intersect two posed meshes through their hierarchies.

    Parameters
    ----------
    bvh_a, bvh_b : BVH
        Hierarchies of the same bounding-volume type.
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms (``None``: identity).
    test : {"sat15", "sat6", "sphere", "sphere5", "sphere15"}, optional
        Overlap test: all 15 separating axes, SAT lite (6 face normals), spheres only,
        the dual OBB-sphere test (sphere then 5 axes) or sphere then 15 axes. Defaults to
        the first test of the BV type (``BV_TYPES[bv].tests``).
    contacts : {"all", "first"}
        Report every intersecting triangle pair, or stop at the first.
    trace : bool
        Record every tested node pair (``CollisionResult.trace``).
    realign : {"table", "all", "major"}, optional
        k-DOP hierarchies only (default "table"; must be None for other types): how B's
        k-DOPs are realigned to A's directions (``cdcore._kdop_traverse``). For k-DOPs the
        test is "slab" and trace/histogram axis ids are A's slab directions
        (``cdcore.bv.kdop.KDOP_AXIS_NAMES``).
    """
    test = _check_pair(bvh_a, bvh_b, test)
    realign = check_realign(realign, bvh_a.kind in L.KDOP_KINDS)
    if contacts not in ("all", "first"):
        raise ValueError(f"contacts: expected 'all' or 'first', got {contacts!r}")
    pa, pb = as_pose(pose_a, "pose_a"), as_pose(pose_b, "pose_b")
    R, t = relative_transform(pa, pb)
    if realign is not None:
        out, rows, counters, hist, t_total = run_kdop_traversal(bvh_a, bvh_b, realign, R, t,
                                                                contacts == "first", bool(trace))
        trace_obj = None if rows is None else Trace(*(rows[:, c].copy() for c in range(4)))
        stats = _stats(counters, hist, t_total)
    else:
        out, trace_obj, stats = run_traversal(TreeView.of(bvh_a), TreeView.of(bvh_b), test, R, t,
                                              contacts == "first", bool(trace))
    if len(out) > 1:
        out = out[np.lexsort((out[:, 1], out[:, 0]))]
    return CollisionResult(bool(len(out) > 0), np.ascontiguousarray(out), stats, trace_obj)


def collide_batch(bvh_a: BVH, bvh_b: BVH, poses_b, pose_a=None, test: str | None = None,
                  realign: str | None = None) -> BatchResult:
    """First-contact queries for N placements of B in one compiled call (the van den
    Bergen benchmark: many random placements).

    Parameters
    ----------
    poses_b : (N, 4, 4) float64
        Placements of B.
    pose_a : (4, 4) float64, optional
        Placement of A (identity by default).
    realign : {"table", "all", "major"}, optional
        As for ``collide`` (k-DOP hierarchies only).
    """
    test = _check_pair(bvh_a, bvh_b, test)
    realign = check_realign(realign, bvh_a.kind in L.KDOP_KINDS)
    pa = as_pose(pose_a, "pose_a")
    pbs = as_poses(poses_b, "poses_b")
    if realign is not None:
        hits, counters, hist, t_total = run_kdop_batch(bvh_a, bvh_b, realign, pa, pbs)
        return BatchResult(hits, _stats(counters, hist, t_total))
    program, axes, use_sphere, use_box = test_plan(test)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    hist = np.zeros(L.N_AXES, dtype=np.int64)
    a, b = bvh_a, bvh_b
    t0 = time.perf_counter()
    hits = traverse_batch(a.kind, program, axes, use_sphere, use_box, pa, pbs,
                          a.nodes_f, a.nodes_i, a.prim_order, a.mesh.vertices, a.mesh.faces,
                          b.nodes_f, b.nodes_i, b.prim_order, b.mesh.vertices, b.mesh.faces,
                          a.leaf_size, b.leaf_size, a.height + b.height + 2, counters, hist)
    return BatchResult(hits, _stats(counters, hist, time.perf_counter() - t0))
