"""``robot_fk`` against a plain-numpy chain product on random trees: coordinate axes (+-x,
+-y, +-z: the two-column rotation) and general unit axes (Rodrigues), revolute, prismatic,
fixed and mimic joints."""
import numpy as np
from hypothesis import given, settings, strategies as st

from cdcore.articulated._robot_fk import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE, robot_fk


def _rot(axis, a):
    k = np.asarray(axis, float)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(a) * K + (1 - np.cos(a)) * K @ K


def _reference(parents, origins, jtype, axes, src, mult, offset, q, root):
    out = np.empty((len(parents), 4, 4))
    for i, p in enumerate(parents):
        base = root if p < 0 else out[p]
        J = base @ origins[i]
        M = np.eye(4)
        if jtype[i] != JOINT_FIXED and src[i] >= 0:
            v = mult[i] * q[src[i]] + offset[i]
            if jtype[i] == JOINT_REVOLUTE:
                M[:3, :3] = _rot(axes[i], v)
            else:
                M[:3, 3] = v * axes[i]
        out[i] = J @ M
    return out


def _random_pose(rng):
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    T = np.eye(4)
    T[:3, :3] = Q * np.sign(np.linalg.det(Q))
    T[:3, 3] = rng.normal(size=3)
    return T


AXES = [np.array(a, float) for a in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), K=st.integers(1, 12))
def test_fk_matches_chain_product(seed, K):
    rng = np.random.default_rng(seed)
    parents = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, K)], dtype=np.int32)
    origins = np.stack([np.eye(4)] + [_random_pose(rng) for _ in range(K - 1)])
    jtype = rng.choice([JOINT_FIXED, JOINT_REVOLUTE, JOINT_REVOLUTE, JOINT_PRISMATIC], K).astype(np.int32)
    jtype[0] = JOINT_FIXED
    axes = np.empty((K, 3))
    for i in range(K):
        if rng.random() < 0.6:
            axes[i] = AXES[rng.integers(0, 6)]
        else:
            a = rng.normal(size=3)
            axes[i] = a / np.linalg.norm(a)
    n = max(1, K // 2)
    src = np.where(jtype == JOINT_FIXED, -1, rng.integers(0, n, K)).astype(np.int32)
    mult = np.where(rng.random(K) < 0.3, rng.uniform(-2, 2, K), 1.0)
    offset = np.where(rng.random(K) < 0.3, rng.uniform(-1, 1, K), 0.0)
    F = 3
    q = rng.uniform(-4, 4, (F, n))
    root = np.stack([_random_pose(rng) for _ in range(F)])
    select = np.arange(K, dtype=np.int32)[::-1].copy()
    work = np.empty((K, 4, 4))
    out = np.empty((F, K, 4, 4))
    robot_fk(parents, origins, jtype, axes, src, mult, offset, q, root, select, work, out)
    for f in range(F):
        ref = _reference(parents, origins, jtype, axes, src, mult, offset, q[f], root[f])
        np.testing.assert_allclose(out[f], ref[select], rtol=0, atol=1e-12)
