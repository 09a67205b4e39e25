"""Minimum distance between two posed meshes: the typed public API over ``_distance``.

Branch and bound over the two hierarchies on the volumes' lower bounds (boxes: the
separating-axis gaps; spheres: centre distance less radii; k-DOPs: the realigned slab
gaps of Fünzig & Fellner section 5), exact triangle-triangle distances at the leaves
(``_tridist``); see ``cdcore._distance`` for the bounds and the search.

With an error bound the search prunes more and returns the distance of an actual
triangle pair (with its closest points) within the allowed error of the true minimum: a
node pair is dropped once max(bound, 0) >= min(best - abs_err, best / (1 + rel_err)),
which guarantees

    d_true <= distance <= d_true + max(abs_err, rel_err * d_true).

Relation to Fünzig & Fellner, section 5. Their *weak approximate minimum distance* is a
sequence of face pairs, each within the error bound above the running minimum of the
pairs before it, whose overall minimum is the minimum distance; a second pass over it
gives the *approximate minimum distance* (all face pairs within the error above the
minimum). Their pruning test drops a pair only when a slab gap exceeds the current
distance *plus* the absolute error, i.e. it prunes less than an exact search, keeps the
near-minimal pairs, and still ends with the exact minimum. Here the error is used the other
way round, as PQP and FCL use theirs: it lets the search stop early, and the one pair
returned is within the error of the minimum (the weak problem's guarantee for the final
pair, without the enumeration of near-minimal pairs). (FCL stops only when *both* errors
allow it, guaranteeing min(d_true + abs_err, d_true (1 + rel_err)); here either suffices.)
With abs_err = rel_err = 0 both are the exact
minimum distance. The sequence of improving pairs can be read from a trace: its LEAF rows
carry each leaf pair's smallest distance, in evaluation order.
"""
from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from ._distance import (D_STATUS, D_TRIS, EV_DROPPED, EV_EXPANDED, EV_LEAF, EV_PRUNED, EV_QUEUED, N_BOUND_IDS,
                        SUPPORTED_KINDS, distance_batch_entry, distance_batch_serial_entry, distance_entry,
                        distance_kdop_entry, distance_kdop_trace_entry, distance_trace_entry)
from ._layout import N_COUNTERS
from ._kdop_traverse import REALIGN_METHODS, check_realign, kdop_query_arrays, no_kdop_arrays
from ._layout import KDOP_KINDS, KIND_AABB
from .bvh import BVH
from .collide import _PARALLEL, AXIS_NAMES, CollisionStats, _check_pair, n_chunks, pose_arg, raise_pose_status
from .transforms import as_pose, as_poses

# names of the bound sources in traces and ``stats.axis_hist`` (k-DOP trees: ids 0..k/2-1
# are A's slab directions, ``bv.kdop.KDOP_AXIS_NAMES``)
BOUND_NAMES = tuple(AXIS_NAMES) + ("centre line", "triangle plane A", "triangle plane B", "box in A's axes",
                                   "box in B's axes")
assert len(BOUND_NAMES) == N_BOUND_IDS



class Event(IntEnum):
    """What happened at a trace row of a distance query."""
    PRUNED = EV_PRUNED  # bound evaluated, reached the threshold: pair dropped
    QUEUED = EV_QUEUED  # bound evaluated, below the threshold: pair queued
    EXPANDED = EV_EXPANDED  # pair taken from the queue and split
    LEAF = EV_LEAF  # leaf pair taken from the queue, its triangle pairs evaluated
    DROPPED = EV_DROPPED  # pair taken from the queue whose bound now reaches the threshold
    # (best-first: the search ends there; depth-first: that pair is skipped)


@dataclass
class DistanceTrace:
    """Every event of a distance query in order. ``node_a``, ``node_b``, ``event``
    (``Event``), ``axis`` (k,) int32; ``bound``, ``value`` (k,) float64.

    ``bound`` is the node pair's lower bound (negative: the volumes overlap; a box bound's
    evaluation stops once it reaches the pruning threshold, so a PRUNED row may show less
    than the full bound); ``axis`` the bound's source (``BOUND_NAMES``; for k-DOPs A's slab
    index; -1 on EXPANDED/LEAF/DROPPED rows); ``value`` on LEAF rows the smallest exact
    triangle distance evaluated in that leaf pair (inf if every triangle pair was skipped
    by its plane bound), else NaN."""
    node_a: np.ndarray
    node_b: np.ndarray
    event: np.ndarray
    axis: np.ndarray
    bound: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.node_a)


@dataclass
class DistanceResult:
    """``distance``: minimum distance of the two posed meshes (0 when they intersect; with
    an error bound, within it of the minimum). ``pair``: (triangle of A, triangle of B)
    realising it. ``points`` (2, 3): the closest points in world coordinates, on A's
    and on B's triangle (equal up to rounding when intersecting: a witness point).
    Checked by ``cdcore.witness.check_witness`` (tests/test_witness.py): ``distance ==
    witness_gap`` (= |points[1] - points[0]|) to rounding, each point lies on its
    triangle of ``pair`` (so on its mesh's surface), and an exact query's ``distance``
    equals the brute-force minimum over all triangle pairs.

    ``stats`` (``CollisionStats``, the counters of ``collide``): ``bv_tests`` bound
    evaluations (node pairs, and leaf triangle pairs' plane bounds), ``prim_tests`` exact
    triangle-triangle distances, ``leaf_pairs`` leaf pairs taken from the queue,
    ``false_alarms`` those that did not improve the best distance, ``max_stack`` the
    largest queue, ``axis_hist`` (``len(BOUND_NAMES)``,) pairs dropped on evaluation by
    bound source, ``t_total``/``t_prim``/``t_bv`` as for ``collide``."""
    distance: float
    pair: tuple
    points: np.ndarray
    stats: CollisionStats
    trace: DistanceTrace | None = None

    @property
    def witness_gap(self) -> float:
        """|points[1] - points[0]|: equals ``distance`` to rounding (a checked invariant)."""
        return float(np.linalg.norm(self.points[1] - self.points[0]))


def _check_err(value, name):
    if type(value) is float and 0.0 <= value < math.inf:  # fast path
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < 0.0:
        raise ValueError(f"{name}: must be finite and >= 0, got {value!r}")
    return v


def _options(bvh_a, bvh_b, order, realign, abs_err, rel_err):
    """The checked options of a distance query: (depth_first, is_kdop, realign, abs_err, rel_err)."""
    if not (type(bvh_a) is BVH and type(bvh_b) is BVH and bvh_a.bv == bvh_b.bv):
        _check_pair(bvh_a, bvh_b, None)
    if bvh_a.kind not in SUPPORTED_KINDS:
        raise NotImplementedError(f"distance: no lower bound for bv={bvh_a.bv!r} yet")
    if order is None:
        depth_first = bvh_a.kind != KIND_AABB
    elif order in ("depth", "best"):
        depth_first = order == "depth"
    else:
        raise ValueError(f"order: expected 'depth' or 'best', got {order!r}")
    is_kdop = bvh_a.kind in KDOP_KINDS
    if realign is not None or is_kdop:
        realign = check_realign(realign, is_kdop)
    return depth_first, is_kdop, realign, _check_err(abs_err, "abs_err"), _check_err(rel_err, "rel_err")


def distance(bvh_a: BVH, pose_a, bvh_b: BVH, pose_b, abs_err: float = 0.0, rel_err: float = 0.0,
             trace: bool = False, order: str | None = None, realign: str | None = None) -> DistanceResult:
    """Minimum distance between two posed meshes through their hierarchies.

    Parameters
    ----------
    bvh_a, bvh_b : BVH
        Hierarchies of the same bounding-volume type (any of ``BV_TYPES``).
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms (``None``: identity).
    abs_err, rel_err : float, >= 0
        Allowed error: the result d satisfies
        ``d_true <= d <= d_true + max(abs_err, rel_err * d_true)``. Both 0: exact.
    trace : bool
        Record every search event (``DistanceResult.trace``).
    order : {"depth", "best"}, optional
        Search order after the first greedy dive: depth-first with the children ordered by
        bound (a stack, O(1) per pair) or best-first (a binary heap keyed by bound:
        expands only pairs whose bound is below the final threshold). Same distance.
        Default: "best" for aabb trees (their loose boxes make early best distances poor),
        "depth" for the others (faster on the linked-tori benchmark).
    realign : {"table", "table_angle", "all", "major"}, optional
        k-DOP hierarchies only, as for ``collide`` (default "table"): how B's k-DOPs are
        realigned to A's directions for the section 5 bound.

    Returns
    -------
    DistanceResult
        ``distance`` (0 when the meshes intersect), ``pair``, ``points`` (world), ``stats``,
        ``trace``.

    Raises ``TypeError``/``ValueError`` as ``collide`` does (not BVHs, different
    bounding-volume types, bad poses), ``ValueError`` for negative or non-finite errors,
    an unknown ``order`` or a ``realign`` given for non-k-DOP trees.
    """
    depth_first, is_kdop, realign, abs_err, rel_err = _options(bvh_a, bvh_b, order, realign, abs_err, rel_err)
    pa = pose_arg(pose_a, "pose_a")
    pb = pose_arg(pose_b, "pose_b")
    a, b = bvh_a, bvh_b
    counts = np.empty(D_STATUS + 1, dtype=np.int64)
    tr_i = tr_f = None
    t0 = time.perf_counter()
    if is_kdop:
        assert realign is not None  # _options: a method name for k-DOP trees
        method = REALIGN_METHODS[realign]
        kd = kdop_query_arrays(a, b, method)
        if trace:
            res, tr_i, tr_f = distance_kdop_trace_entry(a._F, a._I, b._F, b._I, pa, pb, depth_first, abs_err,
                                                        rel_err, counts, method, *kd)
        else:
            res = distance_kdop_entry(a._F, a._I, b._F, b._I, pa, pb, depth_first, abs_err, rel_err, counts,
                                      method, *kd)
    elif trace:
        res, tr_i, tr_f = distance_trace_entry(a._F, a._I, b._F, b._I, pa, pb, depth_first, abs_err, rel_err,
                                               counts)
    else:
        res = distance_entry(a._F, a._I, b._F, b._I, pa, pb, depth_first, abs_err, rel_err, counts)
    t_total = time.perf_counter() - t0
    if counts[D_STATUS]:
        raise_pose_status(int(counts[D_STATUS]))
    c = counts.tolist()
    # the counters in the collision kernel's slots: bv, prim, leaf pairs, no gain, cycles, queue
    stats = CollisionStats(c[0], c[1], c[2], c[3], c[5], t_total, c[4], counts[N_COUNTERS:D_TRIS].copy())
    trace_obj = None
    if tr_i is not None and tr_f is not None:
        col = np.ascontiguousarray
        trace_obj = DistanceTrace(col(tr_i[:, 0]), col(tr_i[:, 1]), col(tr_i[:, 2]), col(tr_i[:, 3]),
                                  col(tr_f[:, 0]), col(tr_f[:, 1]))
    return DistanceResult(float(res[0]), (c[D_TRIS], c[D_TRIS + 1]), res[1:].reshape(2, 3), stats, trace_obj)


@dataclass
class DistanceBatchResult:
    """``distances`` (N,), ``pairs`` (N, 2) int32 (triangle of A, of B), ``points`` (N, 2, 3)
    world closest points, one row per placement; ``stats`` summed over all queries."""
    distances: np.ndarray
    pairs: np.ndarray
    points: np.ndarray
    stats: CollisionStats


def distance_batch(bvh_a: BVH, bvh_b: BVH, poses_b, pose_a=None, abs_err: float = 0.0, rel_err: float = 0.0,
                   order: str | None = None, realign: str | None = None, parallel: bool = True
                   ) -> DistanceBatchResult:
    """``distance`` for N placements of B (``poses_b`` (N, 4, 4)) in one compiled call, spread
    over numba's threads (results identical to N single queries). Parameters as for
    ``distance``; ``parallel=False`` runs one thread."""
    depth_first, is_kdop, realign, abs_err, rel_err = _options(bvh_a, bvh_b, order, realign, abs_err, rel_err)
    pa = as_pose(pose_a, "pose_a")
    pbs = as_poses(poses_b, "poses_b")
    method = REALIGN_METHODS[realign] if is_kdop and realign is not None else 0
    kd = kdop_query_arrays(bvh_a, bvh_b, method) if is_kdop else no_kdop_arrays()
    chunks = n_chunks(len(pbs), parallel)
    args = (bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I, pa, pbs, depth_first, abs_err, rel_err, is_kdop, method, kd)
    t0 = time.perf_counter()
    if chunks == 1:  # small or serial: never wakes numba's thread pool
        dist, tris, pts, counters, hist = distance_batch_serial_entry(*args)
    else:
        with _PARALLEL:
            dist, tris, pts, counters, hist = distance_batch_entry(*args, chunks)
    c = counters.tolist()
    stats = CollisionStats(c[0], c[1], c[2], c[3], c[5], time.perf_counter() - t0, c[4], hist)
    return DistanceBatchResult(dist, tris, pts, stats)
