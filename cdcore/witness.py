"""Checks of a distance query's witness points against the two meshes alone.

A ``DistanceResult`` states: ``distance == |points[1] - points[0]|`` (to rounding; 0 with
equal points when the meshes intersect), ``points[0]`` lies on A's triangle ``pair[0]``
and ``points[1]`` on B's triangle ``pair[1]`` (so on each mesh's surface), and
``distance`` is the minimum over every triangle pair (exact queries). ``check_witness``
measures all three; ``brute_distance`` is the brute-force minimum it compares with.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mesh import Mesh


def _world(mesh: Mesh, pose) -> np.ndarray:
    M = np.eye(4) if pose is None else np.asarray(pose, dtype=np.float64)
    return mesh.vertices[mesh.faces] @ M[:3, :3].T + M[:3, 3]


def _point_triangle(p, T) -> float:
    from ._tridist import tri_tri_distance
    p = np.ascontiguousarray(p, dtype=np.float64)
    return float(tri_tri_distance(T[0].copy(), T[1].copy(), T[2].copy(), p, p.copy(), p.copy())[0])


def brute_distance(mesh_a: Mesh, pose_a, mesh_b: Mesh, pose_b, chunk: int = 1 << 16):
    """Minimum distance over every triangle pair (world frame): (distance, (i, j), points
    (2, 3)). The distance matrix comes from the numpy reference (``_tridist.all_pairs_distance``),
    the closest points of the minimising pair from the distance kernel. O(m n) memory-chunked."""
    from ._tridist import all_pairs_distance, tri_tri_distance
    TA, TB = _world(mesh_a, pose_a), _world(mesh_b, pose_b)
    D = all_pairs_distance(TA, TB, chunk=chunk)
    i, j = np.unravel_index(int(np.argmin(D)), D.shape)
    d, p, q = tri_tri_distance(*(np.ascontiguousarray(v) for v in (*TA[i], *TB[j])))
    return float(D[i, j]), (int(i), int(j)), np.stack([p, q])


@dataclass(frozen=True)
class WitnessCheck:
    """``distance`` reported; ``gap`` = |p_a - p_b|; ``off_a``/``off_b`` each witness point's
    distance from its triangle (A's ``pair[0]``, B's ``pair[1]``); ``brute`` the brute-force
    minimum over all triangle pairs at ``brute_pair``."""
    distance: float
    gap: float
    off_a: float
    off_b: float
    brute: float
    brute_pair: tuple

    def problems(self, tol: float, abs_err: float = 0.0, rel_err: float = 0.0) -> list[str]:
        """What fails, in words (empty when all three checks pass within ``tol``; an
        approximate query may exceed the brute minimum by its allowed error)."""
        out = []
        if abs(self.distance - self.gap) > tol:
            out.append(f"distance {self.distance:.17g} != |p_a - p_b| = {self.gap:.17g}")
        if self.off_a > tol:
            out.append(f"p_a is {self.off_a:.3g} off A's triangle")
        if self.off_b > tol:
            out.append(f"p_b is {self.off_b:.3g} off B's triangle")
        allowed = max(abs_err, rel_err * self.brute)
        if not (self.brute - tol <= self.distance <= self.brute + allowed + tol):
            out.append(f"distance {self.distance:.17g} but the minimum over all triangle pairs is "
                       f"{self.brute:.17g} at pair {self.brute_pair}")
        return out


def check_witness(result, mesh_a: Mesh, pose_a, mesh_b: Mesh, pose_b) -> WitnessCheck:
    """Measure a ``DistanceResult`` (or anything with ``distance``, ``pair``, ``points``)
    against the meshes: see ``WitnessCheck``."""
    TA, TB = _world(mesh_a, pose_a), _world(mesh_b, pose_b)
    pts = np.asarray(result.points, dtype=np.float64).reshape(2, 3)
    i, j = (int(x) for x in result.pair)
    brute, pair, _ = brute_distance(mesh_a, pose_a, mesh_b, pose_b)
    return WitnessCheck(float(result.distance), float(np.linalg.norm(pts[1] - pts[0])),
                        _point_triangle(pts[0], TA[i]), _point_triangle(pts[1], TB[j]), brute, pair)


__all__ = ["WitnessCheck", "brute_distance", "check_witness"]
