"""Poses (4x4 float64 homogeneous rigid transforms, trimesh's convention) and helpers."""
from __future__ import annotations

import numpy as np
from numba import njit

# a rotation whose R^T R differs from I by more than this is not a rigid transform
_ORTHO_TOL = 1e-6


@njit(cache=True)
def _pose_problem(p, tol):
    """0: a rigid pose; 1: NaN/inf; 2: bad last row; 3: rotation not orthonormal, det +1."""
    for r in range(4):
        for c in range(4):
            if not np.isfinite(p[r, c]):
                return 1
    if p[3, 0] != 0.0 or p[3, 1] != 0.0 or p[3, 2] != 0.0 or p[3, 3] != 1.0:
        return 2
    for i in range(3):
        for j in range(3):
            g = p[0, i] * p[0, j] + p[1, i] * p[1, j] + p[2, i] * p[2, j]
            if abs(g - (1.0 if i == j else 0.0)) > tol:
                return 3
    det = (p[0, 0] * (p[1, 1] * p[2, 2] - p[1, 2] * p[2, 1])
           - p[0, 1] * (p[1, 0] * p[2, 2] - p[1, 2] * p[2, 0])
           + p[0, 2] * (p[1, 0] * p[2, 1] - p[1, 1] * p[2, 0]))
    return 3 if det < 0.0 else 0


_POSE_PROBLEMS = {
    1: "contains NaN or infinite entries",
    2: "last row must be (0, 0, 0, 1)",
    3: "not a rigid transform (rotation not orthonormal with det +1; scaling and shear are not supported)",
}


def as_pose(pose, name="pose") -> np.ndarray:
    """Validate a rigid pose: (4, 4) finite, last row (0, 0, 0, 1), rotation orthonormal
    with determinant +1 (to 1e-6). ``None`` means the identity."""
    if pose is None:
        return np.eye(4)
    arr = np.asarray(pose)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: expected a real 4x4 array, got dtype {arr.dtype}")
    if arr.shape != (4, 4):
        raise ValueError(f"{name}: expected shape (4, 4), got {arr.shape}")
    arr = writable_f64(arr)  # a read-only pose (a memory-mapped file, a received buffer) is copied
    problem = _pose_problem(arr, _ORTHO_TOL)
    if problem:
        raise ValueError(f"{name}: {_POSE_PROBLEMS[problem]}")
    return arr


def writable_f64(a) -> np.ndarray:
    """``a`` as a C-contiguous, writable float64 array (copied only when it is not one). The
    kernels are compiled for writable arrays only (one signature each, issue 15): a read-only
    input (a memory-mapped file, a buffer received from another process, a frozen array)
    would otherwise compile them again, for seconds to minutes."""
    arr = np.asarray(a, dtype=np.float64)
    if not (arr.flags.c_contiguous and arr.flags.writeable):
        arr = np.array(arr, dtype=np.float64, order="C")
    return arr


def as_poses(poses, name="poses") -> np.ndarray:
    """Validate a stack of rigid poses (N, 4, 4)."""
    arr = np.asarray(poses)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: expected a real (N, 4, 4) array, got dtype {arr.dtype}")
    if arr.ndim != 3 or arr.shape[1:] != (4, 4):
        raise ValueError(f"{name}: expected shape (N, 4, 4), got {arr.shape}")
    arr = writable_f64(arr)
    for i in range(len(arr)):
        problem = _pose_problem(arr[i], _ORTHO_TOL)
        if problem:
            raise ValueError(f"{name}[{i}]: {_POSE_PROBLEMS[problem]}")
    return arr


def relative_transform(pose_a, pose_b):
    """B's model frame expressed in A's: (R (3, 3), t (3,)) with x_A = R x_B + t
    (the kernels' own arithmetic, so batch and single queries agree bit for bit)."""
    R = np.empty((3, 3))
    t = np.empty(3)
    _relative_transform(pose_a, pose_b, R, t)
    return R, t


@njit(cache=True, inline='always')
def moved_vertex(R, t, verts, v):
    """``R @ verts[v] + t`` as three scalars, term by term (the order every kernel and
    ``transform_points`` use, so oracles see bit-identical coordinates)."""
    x, y, z = verts[v, 0], verts[v, 1], verts[v, 2]
    return (R[0, 0] * x + R[0, 1] * y + R[0, 2] * z + t[0],
            R[1, 0] * x + R[1, 1] * y + R[1, 2] * z + t[1],
            R[2, 0] * x + R[2, 1] * y + R[2, 2] * z + t[2])


@njit(cache=True)
def _relative_transform(pose_a, pose_b, R, t):
    """R = Ra^T Rb, t = Ra^T (tb - ta), written into R, t."""
    for r in range(3):
        t[r] = 0.0
        for c in range(3):
            s = 0.0
            for k in range(3):
                s += pose_a[k, r] * pose_b[k, c]
            R[r, c] = s
        for k in range(3):
            t[r] += pose_a[k, r] * (pose_b[k, 3] - pose_a[k, 3])


def transform_points(R, t, points):
    """``R @ p + t`` for (n, 3) points, evaluated term by term in the same order as the
    kernels, so that oracles in tests see bit-identical coordinates."""
    x, y, z = points[:, 0], points[:, 1], points[:, 2]
    return np.stack([R[i, 0] * x + R[i, 1] * y + R[i, 2] * z + t[i] for i in range(3)], axis=1)


def random_rotations(n, rng) -> np.ndarray:
    """(n, 3, 3) uniformly distributed rotations (Shoemake, Graphics Gems III: a uniform
    unit quaternion from three uniform numbers)."""
    return rotations_from_uniform(rng.random((3, n)))


def rotations_from_uniform(u) -> np.ndarray:
    """(n, 3, 3) rotations from (3, n) uniform numbers in [0, 1) (Shoemake)."""
    u1, u2, u3 = u
    a, b = np.sqrt(1.0 - u1), np.sqrt(u1)
    w = a * np.sin(2 * np.pi * u2)
    x = a * np.cos(2 * np.pi * u2)
    y = b * np.sin(2 * np.pi * u3)
    z = b * np.cos(2 * np.pi * u3)
    return quaternion_to_matrix(np.stack([w, x, y, z], axis=1))


def quaternion_to_matrix(q) -> np.ndarray:
    """(n, 4) unit quaternions (w, x, y, z) to (n, 3, 3) rotation matrices."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def make_pose(rotation=None, translation=None) -> np.ndarray:
    """A 4x4 pose from a (3, 3) rotation and a (3,) translation."""
    pose = np.eye(4)
    if rotation is not None:
        pose[:3, :3] = rotation
    if translation is not None:
        pose[:3, 3] = translation
    return pose


def random_poses(n, rng, cube_size=1.0) -> np.ndarray:
    """(n, 4, 4) poses with uniform rotations and origins uniform in a cube of side
    ``cube_size`` centred at the origin (van den Bergen 1998, section 5)."""
    poses = np.zeros((n, 4, 4))
    poses[:, :3, :3] = random_rotations(n, rng)
    poses[:, :3, 3] = (rng.random((n, 3)) - 0.5) * cube_size
    poses[:, 3, 3] = 1.0
    return poses


def rotation_about(axis, angle) -> np.ndarray:
    """(3, 3) rotation by ``angle`` radians about ``axis`` (Rodrigues)."""
    k = np.asarray(axis, dtype=np.float64)
    k = k / np.linalg.norm(k)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)
