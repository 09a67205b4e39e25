"""Forward kinematics kernel for URDF kinematic trees: fixed, revolute (and continuous) and
prismatic joints, mimic joints as an affine map of a leader's value."""
import numpy as np

from .._pairjit import pair_njit

JOINT_FIXED, JOINT_REVOLUTE, JOINT_PRISMATIC = 0, 1, 2


@pair_njit
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
    # Rigid 4x4 products on their top 3 rows (the last row of every pose is 0 0 0 1): the
    # same sums in the same order as the full product, whose extra terms (x * 0, and 1 *
    # the translation) change no bit. Scalars and no scratch: the kernel allocates nothing,
    # so it is compiled without reference counting (``pair_njit``), whose 24 atomic
    # operations per call cost a hand's FK as much as a dozen frames.
    for f in range(q.shape[0]):
        for i in range(K):
            p = parents[i]
            if p >= 0:
                w00, w01, w02, w03 = work[p, 0, 0], work[p, 0, 1], work[p, 0, 2], work[p, 0, 3]
                w10, w11, w12, w13 = work[p, 1, 0], work[p, 1, 1], work[p, 1, 2], work[p, 1, 3]
                w20, w21, w22, w23 = work[p, 2, 0], work[p, 2, 1], work[p, 2, 2], work[p, 2, 3]
            else:
                w00, w01, w02, w03 = root_poses[f, 0, 0], root_poses[f, 0, 1], root_poses[f, 0, 2], root_poses[f, 0, 3]
                w10, w11, w12, w13 = root_poses[f, 1, 0], root_poses[f, 1, 1], root_poses[f, 1, 2], root_poses[f, 1, 3]
                w20, w21, w22, w23 = root_poses[f, 2, 0], root_poses[f, 2, 1], root_poses[f, 2, 2], root_poses[f, 2, 3]
            j00 = w00 * origins[i, 0, 0] + w01 * origins[i, 1, 0] + w02 * origins[i, 2, 0]
            j01 = w00 * origins[i, 0, 1] + w01 * origins[i, 1, 1] + w02 * origins[i, 2, 1]
            j02 = w00 * origins[i, 0, 2] + w01 * origins[i, 1, 2] + w02 * origins[i, 2, 2]
            j03 = w00 * origins[i, 0, 3] + w01 * origins[i, 1, 3] + w02 * origins[i, 2, 3] + w03
            j10 = w10 * origins[i, 0, 0] + w11 * origins[i, 1, 0] + w12 * origins[i, 2, 0]
            j11 = w10 * origins[i, 0, 1] + w11 * origins[i, 1, 1] + w12 * origins[i, 2, 1]
            j12 = w10 * origins[i, 0, 2] + w11 * origins[i, 1, 2] + w12 * origins[i, 2, 2]
            j13 = w10 * origins[i, 0, 3] + w11 * origins[i, 1, 3] + w12 * origins[i, 2, 3] + w13
            j20 = w20 * origins[i, 0, 0] + w21 * origins[i, 1, 0] + w22 * origins[i, 2, 0]
            j21 = w20 * origins[i, 0, 1] + w21 * origins[i, 1, 1] + w22 * origins[i, 2, 1]
            j22 = w20 * origins[i, 0, 2] + w21 * origins[i, 1, 2] + w22 * origins[i, 2, 2]
            j23 = w20 * origins[i, 0, 3] + w21 * origins[i, 1, 3] + w22 * origins[i, 2, 3] + w23
            work[i, 3, 0] = 0.0
            work[i, 3, 1] = 0.0
            work[i, 3, 2] = 0.0
            work[i, 3, 3] = 1.0
            work[i, 0, 3] = j03
            work[i, 1, 3] = j13
            work[i, 2, 3] = j23
            # the joint frame J = W O; a fixed joint's link frame, and the rotation part of a
            # prismatic one's (the turning cases below overwrite what they change)
            work[i, 0, 0], work[i, 0, 1], work[i, 0, 2] = j00, j01, j02
            work[i, 1, 0], work[i, 1, 1], work[i, 1, 2] = j10, j11, j12
            work[i, 2, 0], work[i, 2, 1], work[i, 2, 2] = j20, j21, j22
            t = jtype[i]
            if t == 0 or src[i] < 0:
                continue
            v = mult[i] * q[f, src[i]] + offset[i]
            kx, ky, kz = axes[i, 0], axes[i, 1], axes[i, 2]
            if t == 2:  # prismatic: translate along the axis
                work[i, 0, 3] = j03 + v * (j00 * kx + j01 * ky + j02 * kz)
                work[i, 1, 3] = j13 + v * (j10 * kx + j11 * ky + j12 * kz)
                work[i, 2, 3] = j23 + v * (j20 * kx + j21 * ky + j22 * kz)
                continue
            # a coordinate axis k (most URDF and MJCF joints; its sign turns the angle) turns two
            # columns of the joint frame, c1 = k + 1 and c2 = k + 2 (mod 3): 12 products instead
            # of Rodrigues' 27 + 15; the general formula's cross terms are exact zeros there and
            # its diagonal 1 is c + (1 - c), within an ulp
            k = -1
            if ky == 0.0 and kz == 0.0 and abs(kx) == 1.0:
                k = 0
            elif kx == 0.0 and kz == 0.0 and abs(ky) == 1.0:
                k = 1
            elif kx == 0.0 and ky == 0.0 and abs(kz) == 1.0:
                k = 2
            if k >= 0:
                a = v * (kx + ky + kz)  # the sign of the one non-zero component
                s = np.sin(a)
                c = np.cos(a)
                c1 = (k + 1) % 3
                c2 = (k + 2) % 3
                for r in range(3):
                    x1 = work[i, r, c1]
                    x2 = work[i, r, c2]
                    work[i, r, c1] = x1 * c + x2 * s
                    work[i, r, c2] = x2 * c - x1 * s
                continue
            s = np.sin(v)  # any other unit axis: Rodrigues' rotation
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
            work[i, 0, 0] = j00 * r00 + j01 * r10 + j02 * r20
            work[i, 0, 1] = j00 * r01 + j01 * r11 + j02 * r21
            work[i, 0, 2] = j00 * r02 + j01 * r12 + j02 * r22
            work[i, 1, 0] = j10 * r00 + j11 * r10 + j12 * r20
            work[i, 1, 1] = j10 * r01 + j11 * r11 + j12 * r21
            work[i, 1, 2] = j10 * r02 + j11 * r12 + j12 * r22
            work[i, 2, 0] = j20 * r00 + j21 * r10 + j22 * r20
            work[i, 2, 1] = j20 * r01 + j21 * r11 + j22 * r21
            work[i, 2, 2] = j20 * r02 + j21 * r12 + j22 * r22
        for li in range(select.shape[0]):
            for r in range(4):
                for k in range(4):
                    out[f, li, r, k] = work[select[li], r, k]
