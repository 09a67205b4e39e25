"""Contact geometry: the post-pass behind ``collide(..., geometry=True)``, a per-body-pair
summary, and a brute-force reference computed from the two meshes alone.

Definitions (``cdcore._contact`` has the details and the conventions for coplanar,
touching and degenerate pairs), per intersecting triangle pair (i of A, j of B), in world
coordinates:

* ``points`` (2, 3): the end points of the intersection segment A_i ∩ B_j (equal for a
  point contact; for coplanar pairs the two farthest-apart corners of the overlap polygon);
* ``depth``: the translational penetration depth, the length of the shortest translation of
  B_j that separates the two triangles = the minimum overlap over the pair's 11 candidate
  axes (2 face normals, 9 edge cross products); 0 for coplanar and touching pairs;
* ``normal`` (3,): that axis, unit length, oriented from A to B (moving B by ``depth`` along
  it separates the pair); coplanar pairs: A_i's face normal.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._contact import AXIS_EPS, TIE_REL, contact_geometry
from .mesh import Mesh
from .transforms import as_pose, relative_transform, transform_points


def geometry_arrays(mesh_a: Mesh, pose_a, mesh_b: Mesh, pose_b, pairs):
    """``(points (k, 2, 3), normals (k, 3), depths (k,))`` of the given triangle pairs.

    Parameters
    ----------
    mesh_a, mesh_b : Mesh
    pose_a, pose_b : (4, 4) float64
        Model-to-world transforms (rigid, or with per-axis scale).
    pairs : (k, 2) int
        Triangle of A, triangle of B; need not intersect (the outputs are then those of the
        closest points: see ``cdcore._contact``), each index in range (``IndexError``).
    """
    pairs = np.ascontiguousarray(pairs, dtype=np.int32).reshape(-1, 2)
    pa = np.ascontiguousarray(pose_a, dtype=np.float64)
    pb = np.ascontiguousarray(pose_b, dtype=np.float64)
    if pa.shape != (4, 4) or pb.shape != (4, 4):
        raise ValueError("pose_a, pose_b: expected (4, 4) matrices")
    k = len(pairs)
    points = np.empty((k, 2, 3))
    normals = np.empty((k, 3))
    depths = np.empty(k)
    if k:
        contact_geometry(mesh_a.vertices, mesh_a.faces, pa, mesh_b.vertices, mesh_b.faces, pb, pairs,
                         points, normals, depths)
    return points, normals, depths


def add_geometry(result, bvh_a, pose_a, bvh_b, pose_b) -> None:
    """Fill ``result.points``, ``normals``, ``depths`` (a ``CollisionResult`` of these
    hierarchies and checked poses)."""
    result.points, result.normals, result.depths = geometry_arrays(bvh_a.mesh, pose_a, bvh_b.mesh, pose_b,
                                                                   result.pairs)


@dataclass(frozen=True)
class ContactSummary:
    """Per body pair: ``count`` contacts (intersecting triangle pairs); the deepest one is
    row ``deepest`` (-1 when there is none) with ``pair``, ``depth``, ``normal`` (3,) and
    ``point`` (3,), the midpoint of its intersection segment. Ties: the first row (pairs are
    sorted)."""
    count: int
    deepest: int
    pair: tuple | None
    depth: float
    normal: np.ndarray | None
    point: np.ndarray | None


def summarize(result) -> ContactSummary:
    """Deepest contact and contact count of a ``collide(..., geometry=True)`` result."""
    if result.depths is None:
        raise ValueError("summarize: the result has no contact geometry; query with geometry=True")
    k = len(result.depths)
    if k == 0:
        return ContactSummary(0, -1, None, 0.0, None, None)
    r = int(np.argmax(result.depths))
    return ContactSummary(k, r, tuple(int(x) for x in result.pairs[r]), float(result.depths[r]),
                          result.normals[r].copy(), result.points[r].mean(axis=0))


# ---- brute-force reference ----------------------------------------------------------------
@dataclass
class ReferenceContacts:
    """What ``reference_contacts`` computes: the same fields as a geometry query."""
    pairs: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    depths: np.ndarray

    @property
    def hit(self) -> bool:
        return len(self.pairs) > 0


#: above this many triangle pairs ``reference_pairs`` first drops pairs whose triangles'
#: bounding boxes (padded) are apart, so that large meshes stay affordable
PREFILTER_PAIRS = 4_000_000
# box padding relative to the largest |coordinate|: far above the overlap predicate's slack
# (~1e-15 relative), so no pair the predicate could report is dropped
PREFILTER_PAD = 1e-9


def reference_pairs(mesh_a: Mesh, pose_a, mesh_b: Mesh, pose_b) -> np.ndarray:
    """Every intersecting triangle pair by brute force (``_tritri_ref``, in A's frame as the
    kernels test them), (k, 2) int32 sorted. Rigid poses. Above ``PREFILTER_PAIRS`` pairs,
    only pairs whose padded triangle boxes overlap reach the exact test (box overlap is
    necessary for contact)."""
    from ._tritri_ref import all_pairs_overlap, tri_tri_overlap_numpy
    R, t = relative_transform(as_pose(pose_a, "pose_a"), as_pose(pose_b, "pose_b"))
    vb = transform_points(R, t, mesh_b.vertices)
    TA, TB = mesh_a.vertices[mesh_a.faces], vb[mesh_b.faces]
    if len(TA) * len(TB) <= PREFILTER_PAIRS:
        return all_pairs_overlap(TA, TB)
    pad = PREFILTER_PAD * max(float(np.abs(TA).max()), float(np.abs(TB).max()), 1e-300)
    lo_a, hi_a = TA.min(axis=1) - pad, TA.max(axis=1) + pad
    lo_b, hi_b = TB.min(axis=1), TB.max(axis=1)
    rows = max(1, (1 << 22) // len(TB))
    out = []
    for s in range(0, len(TA), rows):
        a = slice(s, s + rows)
        near = np.ones((len(TA[a]), len(TB)), dtype=bool)
        for c in range(3):
            near &= (lo_a[a, c, None] <= hi_b[None, :, c]) & (lo_b[None, :, c] <= hi_a[a, c, None])
        i, j = np.nonzero(near)
        if len(i):
            hit = tri_tri_overlap_numpy(TA[s + i], TB[j])
            out.append(np.stack([s + i[hit], j[hit]], axis=1).astype(np.int32))
    if not out:
        return np.zeros((0, 2), dtype=np.int32)
    pairs = np.concatenate(out)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def _world(mesh, pose):
    M = np.asarray(pose, dtype=np.float64)
    return mesh.vertices[mesh.faces] @ M[:3, :3].T + M[:3, 3]


def _ref_depth_normal(A, B):
    """Depth and normal of one pair, straight from the definition (numpy)."""
    eA = [A[1] - A[0], A[2] - A[1], A[0] - A[2]]
    eB = [B[1] - B[0], B[2] - B[1], B[0] - B[2]]
    uv = [(eA[0], A[2] - A[0]), (eB[0], B[2] - B[0])] + [(u, v) for u in eA for v in eB]
    mag = np.abs(np.concatenate([A, B]) - A[0]).max()
    tie = TIE_REL * mag
    cd = B.mean(axis=0) - A.mean(axis=0)
    best, normal = math.inf, np.zeros(3)
    for u, v in uv:
        L = np.cross(u, v)
        if not L @ L > AXIS_EPS * (u @ u) * (v @ v):
            continue
        L = L / np.linalg.norm(L)
        pa, pb = A @ L, B @ L
        up, down = pa.max() - pb.min(), pb.max() - pa.min()
        if abs(up - down) <= tie:
            cand, sign = min(up, down), (-1.0 if L @ cd < -tie else 1.0)
        else:
            cand, sign = (up, 1.0) if up < down else (down, -1.0)
        if cand < best - tie:
            best, normal = cand, sign * L
    return (0.0, np.zeros(3)) if best == math.inf else (max(best, 0.0), normal)


def _flat(T):
    n = np.cross(T[1] - T[0], T[2] - T[0])
    lmax = max(np.sum((T[(i + 1) % 3] - T[i]) ** 2) for i in range(3))
    return n @ n <= AXIS_EPS * lmax * lmax, n


def _edge_points(P, T, nT, tol):
    """Points where P's edges meet the (non-flat) triangle T: edge crossings of T's plane
    that lie in T (barycentric test with tolerance), and in-plane edges clipped to T."""
    out = []
    un = nT / np.linalg.norm(nT)
    for i in range(3):
        p, q = P[i], P[(i + 1) % 3]
        sp, sq = (p - T[0]) @ un, (q - T[0]) @ un
        if abs(sp) <= tol and abs(sq) <= tol:  # the edge lies in T's plane: clip it to T
            t0, t1 = 0.0, 1.0
            for k in range(3):
                m = np.cross(un, T[(k + 1) % 3] - T[k])
                f, g = m @ (p - T[k]) + tol * np.linalg.norm(m), m @ (q - p)  # T widened by tol
                if g == 0.0:
                    if f < 0.0:
                        t0, t1 = 1.0, 0.0
                elif g > 0:
                    t0 = max(t0, -f / g)
                else:
                    t1 = min(t1, -f / g)
            if t0 <= t1:
                out += [p + (q - p) * t0, p + (q - p) * t1]
            continue
        if (sp > tol and sq > tol) or (sp < -tol and sq < -tol):
            continue
        x = p if abs(sp) <= tol and abs(sq) > tol else (q if abs(sq) <= tol else p + (q - p) * (sp / (sp - sq)))
        # inside T? signed distances to T's in-plane edge lines
        if all(np.cross(un, T[(k + 1) % 3] - T[k]) @ (x - T[k])
               >= -tol * np.linalg.norm(T[(k + 1) % 3] - T[k]) for k in range(3)):
            out.append(x)
    return out


def _ref_segment(A, B):
    """End points of A ∩ B: the farthest pair of the edge/triangle meeting points."""
    from ._tridist import tri_tri_distance
    mag = np.abs(np.concatenate([A, B]) - A[0]).max()
    tol = 1e-9 * mag  # admits points that rounding puts just outside (tests compare with a looser tolerance)
    flatA, nA = _flat(A)
    flatB, nB = _flat(B)
    cands = []
    if not flatB:
        cands += _edge_points(A, B, nB, tol)
    if not flatA:
        cands += _edge_points(B, A, nA, tol)
    if not cands:
        # touching within rounding: the closest points' midpoint (the verified distance kernel)
        _, P, Q = tri_tri_distance(*(np.ascontiguousarray(v) for v in (A[0], A[1], A[2], B[0], B[1], B[2])))
        m = 0.5 * (P + Q)
        return m, m
    C = np.array(cands)
    d = ((C[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    i, j = np.unravel_index(np.argmax(d), d.shape)
    p, q = C[i], C[j]
    return (p, q) if tuple(p) <= tuple(q) else (q, p)


def _ref_coplanar(A, B):
    flatA, nA = _flat(A)
    flatB, _ = _flat(B)
    if flatA or flatB:
        return False
    mag = np.abs(np.concatenate([A, B]) - A[0]).max()
    return bool(np.all(np.abs((B - A[0]) @ (nA / np.linalg.norm(nA))) <= TIE_REL * mag))


def reference_contacts(mesh_a: Mesh, pose_a, mesh_b: Mesh, pose_b) -> ReferenceContacts:
    """The contact geometry of every intersecting triangle pair, brute force: all m x n
    pairs through the numpy overlap reference, then per pair the depth and normal straight
    from the definition (11 axes) and the segment from where each triangle's edges meet the
    other triangle (a different construction from the kernel's plane-and-clip). Slow (a
    Python loop per contact): a test oracle. Rigid poses."""
    pairs = reference_pairs(mesh_a, pose_a, mesh_b, pose_b)
    TA, TB = _world(mesh_a, pose_a), _world(mesh_b, pose_b)
    k = len(pairs)
    points, normals, depths = np.zeros((k, 2, 3)), np.zeros((k, 3)), np.zeros(k)
    for r, (i, j) in enumerate(pairs.tolist()):
        A, B = TA[i], TB[j]
        if _ref_coplanar(A, B):
            n = np.cross(A[1] - A[0], A[2] - A[0])
            normals[r], depths[r] = n / np.linalg.norm(n), 0.0
        else:
            depths[r], normals[r] = _ref_depth_normal(A, B)
        points[r] = _ref_segment(A, B)
    return ReferenceContacts(pairs, points, normals, depths)


def overlap_along(A, B, normal) -> float:
    """How far B must move along ``normal`` (unit) to separate from A: max(A.n) - min(B.n)
    (a test helper: the reported normal's own overlap must equal the depth)."""
    return float((A @ normal).max() - (B @ normal).min())


__all__ = ["ContactSummary", "ReferenceContacts", "add_geometry", "geometry_arrays", "overlap_along",
           "reference_contacts", "reference_pairs", "summarize"]
