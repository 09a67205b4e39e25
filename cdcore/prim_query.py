"""Exact primitive solids against primitives and meshes: ``collide_primitive`` and
``distance_primitive``.

A primitive (:class:`cdcore.primitives.Primitive`: sphere, capsule, box, cylinder, ellipsoid,
convex hull) is tested as the solid it is: against another primitive by the closed forms or
GJK of ``cdcore._prim``; against a mesh hierarchy (any BV type: every node row holds a box)
as a one-leaf tree descending the mesh's hierarchy (``cdcore._prim_leaf``): the 15-axis box
test for ``collide``, a bounding-ball lower bound with branch and bound for ``distance``;
at the mesh's leaves the exact primitive-triangle tests decide. Meshes are surfaces, as
everywhere in cdcore: a primitive wholly inside a closed mesh does not meet it.

Poses are rigid (4, 4) world poses of the *owner*; a primitive's own ``pose`` is its frame
in the owner's frame, so the solid sits at ``pose @ prim.pose``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _prim
from ._prim_leaf import prim_mesh_distance, prim_vs_mesh
from .bvh import BVH
from .mesh import MAX_COORD
from .primitives import Primitive, local_box
from .transforms import as_pose

__all__ = ["PrimitiveDistance", "collide_primitive", "distance_primitive"]


@dataclass(frozen=True)
class PrimitiveDistance:
    """``distance`` (0 when the shapes meet) and the closest points ``point_a`` (on the
    primitive) and ``point_b`` (on the other shape), (3,) float64 world coordinates."""
    distance: float
    point_a: np.ndarray
    point_b: np.ndarray

    @property
    def hit(self) -> bool:
        return self.distance == 0.0


def _solid_pose(prim, pose, name) -> np.ndarray:
    if not isinstance(prim, Primitive):
        raise TypeError(f"{name}: expected a cdcore.primitives.Primitive, got {type(prim).__name__}")
    P = as_pose(pose, f"pose_{name[-1]}") @ prim.pose
    if not np.all(np.abs(P[:3, 3]) <= MAX_COORD):
        raise ValueError(f"pose_{name[-1]}: translation beyond {MAX_COORD:g}")
    return np.ascontiguousarray(P)


def _verts(prim) -> np.ndarray:
    """The convex primitive's points (the kernels' vertex rows), else one unused row."""
    if prim.vertices is None:
        return np.zeros((1, 3))
    return np.array(prim.vertices, dtype=np.float64)  # writeable: one kernel signature


def _rel(pose_mesh, P) -> np.ndarray:
    """The primitive's pose in the mesh's frame: pose_mesh^-1 P (rigid)."""
    R, t = pose_mesh[:3, :3], pose_mesh[:3, 3]
    out = np.eye(4)
    out[:3, :3] = R.T @ P[:3, :3]
    out[:3, 3] = R.T @ (P[:3, 3] - t)
    return out


def _other(b, pose_b):
    if isinstance(b, BVH):
        if len(b.mesh.faces) == 0:
            raise ValueError("b: the mesh has no triangles")
        return b, as_pose(pose_b, "pose_b")
    if isinstance(b, Primitive):
        return b, _solid_pose(b, pose_b, "b")
    raise TypeError(f"b: expected a Primitive or a BVH, got {type(b).__name__}")


def _mesh_args(a, Pa, bvh, pose_b):
    va = _verts(a)
    bc, be = local_box(a)
    stack = np.empty(bvh.height + 3, dtype=np.int32)
    return (a.code, np.array(a.size), _rel(pose_b, Pa), va, 0, len(va), np.ascontiguousarray(bc, dtype=np.float64),
            np.ascontiguousarray(be, dtype=np.float64), bvh._nf, bvh._ni, bvh._po, bvh._v, bvh._f, stack)


def collide_primitive(a: Primitive, pose_a, b: Primitive | BVH, pose_b) -> bool:
    """Whether the solid primitive ``a`` (its owner at ``pose_a``) meets ``b``: another
    primitive (owner at ``pose_b``) or a mesh hierarchy (at ``pose_b``); touching counts.

    Parameters
    ----------
    a : Primitive
    pose_a, pose_b : (4, 4) float64 rigid poses (``None``: the identity)
    b : Primitive or BVH

    Raises ``TypeError`` / ``ValueError`` for other shapes, non-rigid or non-finite poses,
    an empty mesh."""
    Pa = _solid_pose(a, pose_a, "a")
    b, Pb = _other(b, pose_b)
    if isinstance(b, Primitive):
        va, vb = _verts(a), _verts(b)
        return bool(_prim.shapes_intersect(a.code, np.array(a.size), Pa, va, 0, len(va),
                                           b.code, np.array(b.size), Pb, vb, 0, len(vb)))
    return bool(prim_vs_mesh(*_mesh_args(a, Pa, b, Pb)))


def distance_primitive(a: Primitive, pose_a, b: Primitive | BVH, pose_b) -> PrimitiveDistance:
    """Distance between the solid primitive ``a`` and ``b`` (a primitive or a mesh
    hierarchy), 0 when they meet, with the closest points (world). Arguments and errors as
    :func:`collide_primitive`."""
    Pa = _solid_pose(a, pose_a, "a")
    b, Pb = _other(b, pose_b)
    wa, wb = np.zeros(3), np.zeros(3)
    if isinstance(b, Primitive):
        va, vb = _verts(a), _verts(b)
        d = _prim.shape_distance(a.code, np.array(a.size), Pa, va, 0, len(va),
                                 b.code, np.array(b.size), Pb, vb, 0, len(vb), wa, wb)
        return PrimitiveDistance(float(d), wa, wb)
    d = prim_mesh_distance(*_mesh_args(a, Pa, b, Pb), wa, wb)
    R, t = Pb[:3, :3], Pb[:3, 3]  # the mesh's frame -> world
    return PrimitiveDistance(float(d), R @ wa + t, R @ wb + t)
