"""The split-plane kernels of ``cdcore._build_sah`` against a plain-numpy reference: the key of
a triangle, the mean key, and the binned SAH / volume sweep (every axis and plane scored by
brute force), including the branches a mesh build rarely reaches: all keys equal along one or
every direction, a node of two triangles, empty bins, rotated directions."""
import zlib

import numpy as np
import pytest

from cdcore._build_sah import N_BINS, SPLIT_SAH, SPLIT_VOLUME, binned_split, mean_key, tri_key


def _soup(rng, m, flat_axes=()):
    """m random triangles; along each direction in ``flat_axes`` every vertex has the same
    coordinate (all keys equal there)."""
    verts = rng.normal(size=(3 * m, 3))
    for d in flat_axes:
        verts[:, d] = 0.25
    faces = np.arange(3 * m, dtype=np.int32).reshape(m, 3)
    return verts, faces


def _intervals(dirs, verts, faces, order):
    x = np.einsum("fkc,dc->fdk", verts[faces[order]], dirs)  # (count, 3 directions, 3 vertices)
    return x.min(axis=2), x.max(axis=2)


def _measure(split, ext):
    dx, dy, dz = ext
    if split == SPLIT_SAH:
        return 2.0 * (dx * dy + dy * dz + dz * dx)
    m = 1e-3 * max(dx, max(dy, dz))
    return (dx + m) * (dy + m) * (dz + m)


def _reference(split, dirs, verts, faces, order):
    """Every axis, every plane between bins, scored from the triangles on each side (no prefix
    sweep): (cost, axis, delta) of the kernel's choice (lowest cost, first axis, then the
    rightmost plane on ties), and every candidate's cost."""
    lo, hi = _intervals(dirs, verts, faces, order)
    best = (np.inf, -1, 0.0)
    costs = []
    for axis in range(3):
        k = 0.5 * (lo[:, axis] + hi[:, axis])
        kmin, kmax = k.min(), k.max()
        if not kmax > kmin:
            continue
        scale = N_BINS / (kmax - kmin)
        b = np.minimum(N_BINS - 1, ((k - kmin) * scale).astype(np.int64))
        for j in range(N_BINS - 1, 0, -1):
            left, right = b < j, b >= j
            if not left.any() or not right.any():
                continue
            cost = (left.sum() * _measure(split, hi[left].max(0) - lo[left].min(0))
                    + right.sum() * _measure(split, hi[right].max(0) - lo[right].min(0)))
            costs.append(cost)
            if cost < best[0]:
                best = (cost, axis, kmin + j / scale)
    return best, costs


def _rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.diag(r))


def test_tri_key_and_mean_key_equal_numpy():
    rng = np.random.default_rng(7)
    verts, faces = _soup(rng, 40)
    dirs = _rotation(rng)
    order = rng.permutation(40).astype(np.int32)
    lo, hi = _intervals(dirs, verts, faces, order)
    for d in range(3):
        keys = np.array([tri_key(dirs, d, verts, faces, f) for f in order])
        assert np.allclose(keys, 0.5 * (lo[:, d] + hi[:, d]), rtol=0, atol=1e-12)
        for start, count in ((0, 40), (5, 1), (10, 17)):
            ref = (0.5 * (lo[start:start + count, d] + hi[start:start + count, d])).mean()
            assert mean_key(dirs, d, verts, faces, order, start, count) == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("split", [SPLIT_SAH, SPLIT_VOLUME])
@pytest.mark.parametrize("case", ["random", "rotated", "two", "flat-x", "flat-xy", "clustered", "sub-range"])
def test_binned_split_equals_the_brute_force_sweep(split, case):
    rng = np.random.default_rng(zlib.crc32(f"{split}-{case}".encode()))
    m = {"two": 2, "clustered": 60}.get(case, 50)
    verts, faces = _soup(rng, m, {"flat-x": (0,), "flat-xy": (0, 1)}.get(case, ()))
    if case == "clustered":  # two far clusters: most bins empty, the gap is the plane
        verts[: 3 * (m // 2)] += np.array([40.0, 0.0, 0.0])
    dirs = _rotation(rng) if case == "rotated" else np.eye(3)
    order = rng.permutation(m).astype(np.int32)
    start, count = (7, 30) if case == "sub-range" else (0, m)
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    bins = np.empty((N_BINS, 7))
    axis, delta = binned_split(split, dirs, verts, faces, order, start, count, lo, hi, bins)
    (cost, ref_axis, ref_delta), costs = _reference(split, dirs, verts, faces, order[start:start + count])
    assert costs, "the case must offer planes"
    assert (axis, delta) == (ref_axis, pytest.approx(ref_delta, rel=1e-12, abs=1e-12)), (axis, delta, ref_axis)
    assert cost <= min(costs) * (1 + 1e-12)
    if case.startswith("flat"):  # no plane along a flat direction
        assert axis not in {"flat-x": (0,), "flat-xy": (0, 1)}[case]
    if case == "clustered":  # the plane lies in the gap between the clusters
        k = 0.5 * np.add(*_intervals(dirs, verts, faces, order))[:, 0]
        assert axis == 0 and k[k < 20].max() < delta < k[k > 20].min()


@pytest.mark.parametrize("split", [SPLIT_SAH, SPLIT_VOLUME])
def test_binned_split_without_any_plane(split):
    """Every key equal along every direction (copies of one triangle): no plane, (-1, 0.0)."""
    tri = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    verts = np.tile(tri, (6, 1))
    faces = np.arange(18, dtype=np.int32).reshape(6, 3)
    order = np.arange(6, dtype=np.int32)
    lo = np.empty((6, 3))
    hi = np.empty((6, 3))
    assert binned_split(split, np.eye(3), verts, faces, order, 0, 6, lo, hi, np.empty((N_BINS, 7))) == (-1, 0.0)
    assert _reference(split, np.eye(3), verts, faces, order)[0][1] == -1
