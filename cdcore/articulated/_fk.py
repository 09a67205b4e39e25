"""Forward kinematics kernel: revolute joints along a parent-before-child link order."""
import numpy as np
from numba import njit


@njit(cache=True)
def fk_frames(parents, origins, axes, q, root_poses, out):
    """Link poses for many frames.

    parents : (L,) int32, parent link of each link (-1: the root), parents before children.
    origins : (L, 4, 4) joint frame in the parent link's frame at q = 0 (root: in the world,
        after ``root_poses``).
    axes : (L, 3) unit joint axis in the joint frame.
    q : (F, L) joint angles in radians. root_poses : (F, 4, 4).
    out : (F, L, 4, 4) world pose of every link: parent @ origin @ Rot(axis, q).
    """
    n_frames = q.shape[0]
    n_links = parents.shape[0]
    J = np.empty((4, 4))
    for f in range(n_frames):
        for i in range(n_links):
            # Rodrigues rotation about the joint axis
            kx, ky, kz = axes[i, 0], axes[i, 1], axes[i, 2]
            s = np.sin(q[f, i])
            c = np.cos(q[f, i])
            v = 1.0 - c
            r00 = c + kx * kx * v
            r01 = kx * ky * v - kz * s
            r02 = kx * kz * v + ky * s
            r10 = ky * kx * v + kz * s
            r11 = c + ky * ky * v
            r12 = ky * kz * v - kx * s
            r20 = kz * kx * v - ky * s
            r21 = kz * ky * v + kx * s
            r22 = c + kz * kz * v
            p = parents[i]
            # J = parent_pose @ origin
            for r in range(4):
                for k in range(4):
                    acc = 0.0
                    for m in range(4):
                        if p >= 0:
                            acc += out[f, p, r, m] * origins[i, m, k]
                        else:
                            acc += root_poses[f, r, m] * origins[i, m, k]
                    J[r, k] = acc
            # out = J @ [[Rot, 0], [0, 1]]
            for r in range(4):
                out[f, i, r, 0] = J[r, 0] * r00 + J[r, 1] * r10 + J[r, 2] * r20
                out[f, i, r, 1] = J[r, 0] * r01 + J[r, 1] * r11 + J[r, 2] * r21
                out[f, i, r, 2] = J[r, 0] * r02 + J[r, 1] * r12 + J[r, 2] * r22
                out[f, i, r, 3] = J[r, 3]
