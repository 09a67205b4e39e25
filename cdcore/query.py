"""A prepared collision query: ``q = Query(bvh_a, bvh_b, test=...)`` validates once, then
``q(pose_b)`` (A at the identity) or ``q(pose_a, pose_b)`` answers whether the meshes collide,
as a bool, in one compiled call (``_core.hit_entry``) with nothing checked per call but what
prevents a crash.

For a loop over many poses of one pair (motion planning, a sampling-based checker) this is
the call floor: no option lookup, no pose validation (poses must be rigid: a non-orthonormal
rotation gives a meaningless answer, not an error), no counters, no result object.
``Query.result`` runs the full ``collide`` (validated, with counters and pairs) on the same
pair and options.
"""
from __future__ import annotations

import numpy as np

from ._core import hit_entry, hit_kdop_entry
from ._kdop_traverse import kdop_query_arrays
from .bvh import BVH
from .collide import CollisionResult, _plan, collide
from .transforms import as_pose

_EYE = np.eye(4)  # A's pose of ``q(pose_b)`` (never written)
_F8 = np.dtype(np.float64)
_ST = (32, 8)  # the strides of a C-ordered (4, 4) float64 array


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
    dtype or layout are converted (and then validated); a wrong shape raises ``ValueError``.

    The query reads the hierarchies' arrays at each call, so an in-place ``BVH.refit`` is
    seen; a rebuilt hierarchy is a new object and needs a new ``Query``. Thread safety: any
    number of threads may call one ``Query`` at once (it holds no mutable state; the kernel
    releases the GIL); a hierarchy must not be refitted while another thread queries it.
    """

    __slots__ = ("bvh_a", "bvh_b", "test", "realign", "_FA", "_IA", "_FB", "_IB", "_plan", "_kd")

    def __init__(self, bvh_a: BVH, bvh_b: BVH, test: str | None = None, realign: str | None = None):
        plan = _plan(bvh_a, bvh_b, test, realign)
        self.bvh_a, self.bvh_b, self.test, self.realign = bvh_a, bvh_b, test, realign
        self._FA, self._IA, self._FB, self._IB = bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I
        self._plan = plan.plan(True)
        self._kd = kdop_query_arrays(bvh_a, bvh_b, plan.method) if plan.kdop else None

    def __call__(self, pose_a, pose_b=None) -> bool:
        if pose_b is None:
            pose_a, pose_b = _EYE, pose_a
        # float64 C-ordered arrays go straight in (the kernel checks their shapes, what a
        # crash needs); anything else is converted and validated here (``as_pose``), so the
        # kernel keeps its one compiled signature
        if not (type(pose_b) is np.ndarray and pose_b.dtype is _F8 and pose_b.strides == _ST):
            pose_b = as_pose(pose_b, "pose_b")
        if pose_a is not _EYE and not (type(pose_a) is np.ndarray and pose_a.dtype is _F8
                                       and pose_a.strides == _ST):
            pose_a = as_pose(pose_a, "pose_a")
        if self._kd is None:
            return hit_entry(self._FA, self._IA, self._FB, self._IB, pose_a, pose_b, self._plan)
        return hit_kdop_entry(self._FA, self._IA, self._FB, self._IB, pose_a, pose_b, self._plan, self._kd)

    def result(self, pose_a, pose_b, contacts: str = "first", trace: bool = False) -> CollisionResult:
        """The full ``cdcore.collide`` of this pair and options (validated; counters, pairs)."""
        return collide(self.bvh_a, pose_a, self.bvh_b, pose_b, test=self.test, contacts=contacts, trace=trace,
                       realign=self.realign)

    def __repr__(self) -> str:
        return (f"Query(bv={self.bvh_a.bv!r}, test={self.test!r}, realign={self.realign!r}, "
                f"triangles={self.bvh_a.mesh.n_faces} x {self.bvh_b.mesh.n_faces})")


__all__ = ["Query"]
