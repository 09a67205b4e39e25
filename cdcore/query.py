"""A prepared collision query: ``q = Query(bvh_a, bvh_b, test=...)`` validates once, then
``q(pose_b)`` (A at the identity) or ``q(pose_a, pose_b)`` answers whether the meshes collide,
as a bool, in one compiled call (``_core.query_entry_w``) that allocates nothing.

For a loop over many poses of one pair (motion planning, a sampling-based checker) this is
the call floor: no option lookup, no type checks in Python (the entry's one signature refuses
other argument types and the call converts them then), no counters read, no result object.
The kernel checks the poses (shape; finite, rigid: ``ValueError`` naming the pose).
``Query.result`` runs the full ``collide`` (counters and pairs) on the same pair and options.
"""
from __future__ import annotations

import numpy as np

from ._core import RESUME, query_entry_w, query_kdop_entry, workspace_len
from ._kdop_traverse import REALIGN_TABLE, REALIGN_TABLE_ANGLE, kdop_query_arrays
from .bvh import BVH
from .collide import _NO_PAIRS, _NO_TRACE, CollisionResult, _kernel_pose, _plan, collide, raise_pose_status

_EYE = np.eye(4)  # A's pose of ``q(pose_b)`` (never written)
_TABLE_METHODS = (REALIGN_TABLE, REALIGN_TABLE_ANGLE)  # the k-DOP realignments that read B's table


def _refused(n):
    if n == RESUME:  # cannot happen: room for the first leaf pair's triangle pairs
        raise RuntimeError("Query: pair buffer too small")
    raise_pose_status(-n)


class Query:
    """A first-contact collision query between two hierarchies, prepared once.

    Parameters
    ----------
    bvh_a, bvh_b : BVH
        Hierarchies of the same bounding-volume type (checked here, once).
    test : str, optional
        Node-pair overlap test, as for ``cdcore.collide`` (default: the type's first test).
    realign : str, optional
        k-DOP realignment method, as for ``cdcore.collide`` (k-DOP hierarchies only).

    Calling it
    ----------
    ``q(pose_b)`` or ``q(pose_a, pose_b)`` with rigid (4, 4) float64 model-to-world poses
    returns ``True`` when some triangle of A intersects some triangle of B. Poses of another
    dtype or layout are converted; a wrong shape or a pose that is not rigid raises
    ``ValueError``.

    The query reads the hierarchies' arrays at each call, so an in-place ``BVH.refit`` is
    seen; a rebuilt hierarchy is a new object and needs a new ``Query``. Thread safety: any
    number of threads may call one ``Query`` at once: each call takes a workspace (the
    kernel's working memory) from the query's pool, or makes one when all are in use, and
    puts it back (``list.pop``/``append`` are atomic); the kernel releases the GIL. A
    hierarchy must not be refitted while another thread queries it.
    """

    __slots__ = ("bvh_a", "bvh_b", "test", "realign", "_FA", "_IA", "_FB", "_IB", "_plan", "_kd", "_method", "_pool",
                 "_ws_len")

    def __init__(self, bvh_a: BVH, bvh_b: BVH, test: str | None = None, realign: str | None = None):
        plan = _plan(bvh_a, bvh_b, test, realign)
        self.bvh_a, self.bvh_b, self.test, self.realign = bvh_a, bvh_b, test, realign
        self._FA, self._IA, self._FB, self._IB = bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I
        self._plan = plan.plan(True)
        self._method = plan.method
        self._kd = kd = kdop_query_arrays(bvh_a, bvh_b, plan.method) if plan.kdop else None
        k2, rings = (0, 0) if kd is None else (kd.dirs.shape[0], kd.T.shape[0])
        # the pairs buffer at the workspace's end: first contact stops in the first leaf pair
        # that has one, so room for one leaf pair's triangle pairs is enough
        self._ws_len = workspace_len(bvh_a._stack_h, bvh_b._stack_h, k2, rings) + bvh_a._leaf_cap * bvh_b._leaf_cap
        self._pool = [np.zeros(self._ws_len, dtype=np.int64)]

    def __call__(self, pose_a, pose_b=None) -> bool:
        if pose_b is None:
            pose_a, pose_b = _EYE, pose_a
        pool = self._pool
        try:
            W = pool.pop()
        except IndexError:  # every workspace is in use by another thread
            W = np.zeros(self._ws_len, dtype=np.int64)
        try:
            if self._kd is None:
                n = query_entry_w(self._FA, self._IA, self._FB, self._IB, pose_a, pose_b, self._plan, W)
            else:
                n = query_kdop_entry(self._FA, self._IA, self._FB, self._IB, pose_a, pose_b, self._plan, W,
                                     _NO_PAIRS, _NO_TRACE, self._kdop())
        except TypeError:  # a pose of another type than a writable C-ordered float64 array
            pool.append(W)
            return self._converted(pose_a, pose_b)
        pool.append(W)
        if n < 0:
            _refused(n)
        return n > 0

    def _kdop(self):
        """The k-DOP arrays of this call: remade when B was refitted since they were made (a
        refit marks B's realignment table stale and changes its padding scale, which the
        arrays hold as a number; ``ensure_table`` refits the table once, under B's lock; the
        "all" and "major" realignments read no table)."""
        kd = self._kd
        kd_b = self.bvh_b.kdop
        if (not kd_b.table_valid and self._method in _TABLE_METHODS) or kd_b.scale != kd.scale_b:
            kd = self._kd = kdop_query_arrays(self.bvh_a, self.bvh_b, self._method)
        return kd

    def _converted(self, pose_a, pose_b) -> bool:
        """The call with its poses converted (``collide._kernel_pose``: shape checked, float64,
        C-ordered, writable), in a workspace of its own."""
        pose_a = pose_a if pose_a is _EYE else _kernel_pose(pose_a, "pose_a")
        pose_b = _kernel_pose(pose_b, "pose_b")
        W = np.zeros(self._ws_len, dtype=np.int64)
        if self._kd is None:
            n = query_entry_w(self._FA, self._IA, self._FB, self._IB, pose_a, pose_b, self._plan, W)
        else:
            n = query_kdop_entry(self._FA, self._IA, self._FB, self._IB, pose_a, pose_b, self._plan, W, _NO_PAIRS,
                                 _NO_TRACE, self._kdop())
        if n < 0:
            _refused(n)
        return n > 0

    def result(self, pose_a, pose_b, contacts: str = "first", trace: bool = False) -> CollisionResult:
        """The full ``cdcore.collide`` of this pair and options (validated; counters, pairs)."""
        return collide(self.bvh_a, pose_a, self.bvh_b, pose_b, test=self.test, contacts=contacts, trace=trace,
                       realign=self.realign)

    def __repr__(self) -> str:
        return (f"Query(bv={self.bvh_a.bv!r}, test={self.test!r}, realign={self.realign!r}, "
                f"triangles={self.bvh_a.mesh.n_faces} x {self.bvh_b.mesh.n_faces})")


__all__ = ["Query"]
