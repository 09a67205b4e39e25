"""The generalized front cache: frame-to-frame reuse of a pair's traversal (Ehmann & Lin 2001,
section 5; Fünzig & Fellner 2003, section 2). See ``cdcore._front`` for the scheme."""
from __future__ import annotations

import threading
import time

import numpy as np

from . import _layout as L
from ._core import STATUS, make_plan
from ._front import FRONT_COLS, front_entry, front_kdop_entry, parents
from ._kdop_traverse import kdop_query_arrays
from .collide import CollisionResult, _plan, collide, pose_arg, raise_pose_status
from .bvh import BVH

def _root_front():
    return np.zeros((1, FRONT_COLS), dtype=np.int32)  # the root pair (0, 0), state zero


class FrontCache:
    """All-contacts collision of one pair of hierarchies over the frames of a motion, each frame
    starting from the node pairs where the previous one stopped (the front).

    Parameters
    ----------
    bvh_a, bvh_b : BVH
        Hierarchies of the same bounding-volume type (refit them freely between frames: the
        front keeps its node pairs; a rebuild resets it).
    test, realign : str, optional
        As for ``cdcore.collide``.
    enabled : bool
        False: every frame is a full traversal from the root (the same answers, for comparing).

    Incoherent motion (random placements) makes any front a loss: the cache keeps the node tests
    of its last frame started from the root (a full traversal, ``ref``), and when a frame from
    the front needs more tests than that, the next frames start from the root again, for 1, 2,
    4 .. 64 frames in a row while the front keeps losing (a probe, then back-off); a winning
    frame halves the back-off. So the cost is never much above a full traversal's.

    ``collide(pose_a, pose_b)`` returns the ``CollisionResult`` that ``collide(..., contacts="all")``
    would (the same pairs); its ``stats.bv_tests`` counts the node tests this frame did, including
    those of pull-up attempts. State is per object (a lock serialises calls on one object; use one
    ``FrontCache`` per pair and thread). Per-axis scaled poses are not supported (``ValueError``).
    """

    def __init__(self, bvh_a: BVH, bvh_b: BVH, test: str | None = None, realign: str | None = None,
                 enabled: bool = True):
        self._plan = _plan(bvh_a, bvh_b, test, realign)  # validates
        p = self._plan
        # all contacts, trace on: the trace rows that stop the descent are the next front
        self._kplan = make_plan(p.kind, p.test, p.program, p.method, first=False, trace=True)
        self.bvh_a, self.bvh_b = bvh_a, bvh_b
        self.test, self.realign = test, realign
        self.enabled = bool(enabled)
        self._lock = threading.Lock()
        self._topology = None
        self.reset()

    def reset(self) -> None:
        """Forget the front: the next frame traverses from the root pair."""
        self._front = _root_front()
        self._ref = None  # node tests of the last frame started from the root
        self._skip = 0  # frames still to start from the root
        self._backoff = 1

    @property
    def front(self) -> np.ndarray:
        """(k, 2) int32: the node pairs (of A, of B) where the last frame's traversal stopped."""
        return self._front[:, :2].copy()

    @property
    def front_size(self) -> int:
        return int(self._front.shape[0])

    def _check_topology(self):
        key = (self.bvh_a._I, self.bvh_b._I)
        if self._topology is None or self._topology[0] is not key[0] or self._topology[1] is not key[1]:
            self._topology = key
            self._parA = parents(self.bvh_a._ni)
            self._parB = parents(self.bvh_b._ni)
            self.reset()

    def collide(self, pose_a, pose_b) -> CollisionResult:
        """All intersecting triangle pairs at this frame's poses (rigid (4, 4) float64, or None)."""
        if not self.enabled:
            return collide(self.bvh_a, pose_a, self.bvh_b, pose_b, test=self.test, contacts="all",
                           realign=self.realign)
        pa = pose_arg(pose_a, "pose_a")
        pb = pose_arg(pose_b, "pose_b")
        plan = self._plan
        with self._lock:
            self._check_topology()
            if self._skip > 0:
                self._skip -= 1
                self._front = _root_front()
            from_root = self._front.shape[0] == 1 and not self._front[0, :2].any()
            a, b = self.bvh_a, self.bvh_b
            counts = np.empty(STATUS + 1, dtype=np.int64)
            if plan.kdop:
                kd = kdop_query_arrays(a, b, plan.method)
                t0 = time.perf_counter()
                pairs, front = front_kdop_entry(a._F, a._I, b._F, b._I, pa, pb, self._kplan, self._front, self._parA,
                                                self._parB, counts, kd)
            else:
                t0 = time.perf_counter()
                pairs, front = front_entry(a._F, a._I, b._F, b._I, pa, pb, self._kplan, self._front, self._parA,
                                           self._parB, counts)
            dt = time.perf_counter() - t0
            if counts[STATUS]:
                raise_pose_status(int(counts[STATUS]))
            self._front = front
            tests = int(counts[L.CNT_BV_TESTS])
            if from_root:
                self._ref = tests
            elif self._ref is not None and tests > self._ref:  # the front lost: back to the root
                self._skip = self._backoff
                self._backoff = min(64, 2 * self._backoff)
            else:
                self._backoff = max(1, self._backoff // 2)
        return CollisionResult(len(pairs) > 0, pairs, counts, dt)

    def front_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """(nodes of A, nodes of B) that appear in the front (unique, sorted): what the 3-D view
        highlights."""
        f = self._front
        return np.unique(f[:, 0]), np.unique(f[:, 1])


__all__ = ["FrontCache"]
