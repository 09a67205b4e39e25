"""Forward kinematics kernel for URDF kinematic trees: fixed, revolute (and continuous) and
prismatic joints, mimic joints as an affine map of a leader's value."""
import numpy as np
from numba import njit

JOINT_FIXED, JOINT_REVOLUTE, JOINT_PRISMATIC = 0, 1, 2


@njit(cache=True)
def robot_fk(parents, origins, jtype, axes, src, mult, offset, q, root_poses, select, work, out):
    """World poses of the selected links for many configurations.

    parents : (K,) int32, parent kinematic link (-1: root), parents before children.
    origins : (K, 4, 4) joint frame in the parent link frame (root: identity).
    jtype : (K,) int32 JOINT_*; axes : (K, 3) unit axes in the joint frame.
    src : (K,) int32 index into a q row of the value driving the joint (-1: fixed);
    mult, offset : (K,) float64, joint value = mult * q[src] + offset (mimic joints).
    q : (F, n_dofs); root_poses : (F, 4, 4); select : (L,) int32 kinematic links to output.
    work : (K, 4, 4) scratch. out : (F, L, 4, 4).
    """
    K = parents.shape[0]
    J = np.empty((4, 4))
    for f in range(q.shape[0]):
        for i in range(K):
            p = parents[i]
            for r in range(4):
                for k in range(4):
                    acc = 0.0
                    for m in range(4):
                        if p >= 0:
                            acc += work[p, r, m] * origins[i, m, k]
                        else:
                            acc += root_poses[f, r, m] * origins[i, m, k]
                    J[r, k] = acc
            t = jtype[i]
            if t == 0 or src[i] < 0:
                for r in range(4):
                    for k in range(4):
                        work[i, r, k] = J[r, k]
                continue
            v = mult[i] * q[f, src[i]] + offset[i]
            kx, ky, kz = axes[i, 0], axes[i, 1], axes[i, 2]
            if t == 2:  # prismatic: translate along the axis
                for r in range(4):
                    for k in range(3):
                        work[i, r, k] = J[r, k]
                    work[i, r, 3] = J[r, 3] + v * (J[r, 0] * kx + J[r, 1] * ky + J[r, 2] * kz)
                continue
            s = np.sin(v)
            c = np.cos(v)
            w = 1.0 - c
            r00 = c + kx * kx * w
            r01 = kx * ky * w - kz * s
            r02 = kx * kz * w + ky * s
            r10 = ky * kx * w + kz * s
            r11 = c + ky * ky * w
            r12 = ky * kz * w - kx * s
            r20 = kz * kx * w - ky * s
            r21 = kz * ky * w + kx * s
            r22 = c + kz * kz * w
            for r in range(4):
                work[i, r, 0] = J[r, 0] * r00 + J[r, 1] * r10 + J[r, 2] * r20
                work[i, r, 1] = J[r, 0] * r01 + J[r, 1] * r11 + J[r, 2] * r21
                work[i, r, 2] = J[r, 0] * r02 + J[r, 1] * r12 + J[r, 2] * r22
                work[i, r, 3] = J[r, 3]
        for li in range(select.shape[0]):
            for r in range(4):
                for k in range(4):
                    out[f, li, r, k] = work[select[li], r, k]
