"""Branches of the primitive kernels (``cdcore._prim``) the distance tests do not reach, each
against an independent reference: the closest point of a degenerate (collinear) triangle, the
simplex reduction of GJK on every simplex size (brute force over all faces), concentric
shapes (GJK's zero start direction) and the ellipsoid's support point along a zero direction.
The two nearly-collinear-triangle tests found a kernel defect (fixed in _prim._closest_triangle)."""
import itertools

import numpy as np
import pytest

from cdcore._prim import (_closest_triangle, _reduce, core_support, pack_primitives, prim_pairs_distance,
                          prim_pairs_intersect, prim_triangle_intersect)
from cdcore.primitives import ELLIPSOID, Primitive


def _closest_on_segment(p, q):
    d = q - p
    ll = d @ d
    t = 0.0 if ll == 0 else min(1.0, max(0.0, -(p @ d) / ll))
    return p + t * d


def _hull_distance(P):
    """Distance from the origin to the convex hull of the rows of P (<= 4 points), by brute
    force: the origin's projection onto the affine hull of every subset, kept when its
    weights are >= 0 (the closest point lies in the relative interior of some face)."""
    best = np.inf
    for r in range(1, len(P) + 1):
        for sub in itertools.combinations(range(len(P)), r):
            S = P[list(sub)]
            # minimise |S^T lam|^2 subject to sum(lam) = 1 (KKT system)
            k = len(sub)
            M = np.zeros((k + 1, k + 1))
            M[:k, :k] = 2 * S @ S.T
            M[:k, k] = M[k, :k] = 1.0
            rhs = np.zeros(k + 1)
            rhs[k] = 1.0
            sol, *_ = np.linalg.lstsq(M, rhs, rcond=None)
            lam = sol[:k]
            if lam.min() >= -1e-12:
                best = min(best, float(np.linalg.norm(lam @ S)))
    return best


def _triangle_distance(a, b, c):
    """Distance from the origin to triangle abc: its plane's foot if inside, else its edges."""
    n = np.cross(b - a, c - a)
    cands = [np.linalg.norm(_closest_on_segment(p, q)) for p, q in ((a, b), (b, c), (c, a))]
    nn = n @ n
    if nn > 1e-24 * ((b - a) @ (b - a)) * ((c - a) @ (c - a)):
        foot = (a @ n) / nn * n
        ins = [np.cross(q - p, foot - p) @ n >= 0 for p, q in ((a, b), (b, c), (c, a))]
        if all(ins):
            cands.append(np.linalg.norm(foot))
    return min(cands)


@pytest.mark.parametrize("case", ["general", "collinear", "coincident", "point"])
def test_closest_triangle_equals_brute_force(case):
    rng = np.random.default_rng({"general": 1, "collinear": 2, "coincident": 3, "point": 4}[case])
    bary = np.empty(3)
    for _ in range(300):
        a, b, c = rng.normal(size=(3, 3))
        if case == "collinear":  # c on the line through a and b (inside or beyond the segment),
            # exactly: small integers and a dyadic factor, so every product is exact
            a, b = rng.integers(-4, 5, size=(2, 3)).astype(float)
            c = a + rng.choice([-1.5, -0.5, 0.25, 0.5, 2.0, 3.0]) * (b - a)
        elif case == "coincident":
            c = b.copy()
        elif case == "point":
            b = a.copy()
            c = a.copy()
        _closest_triangle(a, b, c, bary)
        assert bary.min() >= 0 and bary.sum() == pytest.approx(1.0, abs=1e-12)
        got = np.linalg.norm(bary[0] * a + bary[1] * b + bary[2] * c)
        assert got == pytest.approx(_triangle_distance(a, b, c), rel=1e-9, abs=1e-12), (a, b, c)


def test_closest_triangle_of_a_nearly_collinear_triangle():
    rng = np.random.default_rng(2)
    bary = np.empty(3)
    for _ in range(300):
        a, b = rng.normal(size=(2, 3))
        c = a + rng.uniform(-1.5, 2.5) * (b - a)  # collinear up to rounding
        _closest_triangle(a, b, c, bary)
        got = np.linalg.norm(bary[0] * a + bary[1] * b + bary[2] * c)
        assert got == pytest.approx(_triangle_distance(a, b, c), rel=1e-9, abs=1e-12), (a, b, c)


def test_a_sliver_triangle_through_an_ellipsoid_is_a_hit():
    rng = np.random.default_rng(2)
    size, pose, none = np.ones(3), np.eye(4), np.zeros((1, 3))
    for _ in range(2000):
        a, b = rng.normal(size=(2, 3))
        tri = np.array([a, b, a + rng.uniform(-1.5, 2.5) * (b - a)])
        tri *= 0.9 / _triangle_distance(*tri)  # its closest point at 0.9 from the centre: inside
        assert prim_triangle_intersect(np.int32(ELLIPSOID), size, pose, none, np.int64(0), np.int64(0), tri), tri


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_reduce_finds_the_closest_point_of_every_simplex(n):
    rng = np.random.default_rng(10 + n)
    lam = np.zeros(4)
    inside = 0
    for trial in range(300):
        P = rng.normal(size=(n, 3)) + (rng.normal(size=3) * (trial % 3))  # some far from the origin
        W, B = P.copy(), rng.normal(size=(n, 3))
        A = W + B  # witness rows: W = A - B, kept aligned by the reduction
        W4, A4, B4 = (np.vstack([x, np.zeros((4 - n, 3))]) for x in (W, A, B))
        m = _reduce(W4, A4, B4, n, lam)
        ref = _hull_distance(P)
        if m == 0:  # the origin inside the tetrahedron
            inside += 1
            assert n == 4 and ref == pytest.approx(0.0, abs=1e-9)
            continue
        assert 1 <= m <= n and lam[:m].min() > 0 and lam[:m].sum() == pytest.approx(1.0, abs=1e-12)
        assert all(any(np.array_equal(w, p) for p in P) for w in W4[:m])  # a face of the input
        assert np.allclose(A4[:m] - B4[:m], W4[:m], atol=1e-12)
        assert np.linalg.norm(lam[:m] @ W4[:m]) == pytest.approx(ref, rel=1e-9, abs=1e-12), (trial, P)
    if n == 4:
        assert inside > 0


def _box_pose(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    T = np.eye(4)
    T[:3, :3] = q * np.sign(np.diag(r)) * np.sign(np.linalg.det(q * np.sign(np.diag(r))))
    T[:3, 3] = rng.normal(size=3)
    return T


def test_concentric_shapes_start_gjk_along_a_fixed_axis():
    """Shapes whose centres coincide (GJK's first direction would be zero): they overlap (the
    common centre is in both), so distance 0 and a hit, whatever their orientations."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        hull = rng.uniform(-0.3, 0.3, (8, 3))
        hull -= hull.mean(axis=0)  # its vertex mean (GJK's centre) at the pose's origin
        prims = [Primitive("box", [0.3, 0.1, 0.2], np.eye(4)), Primitive("cylinder", [0.2, 0.4], np.eye(4)),
                 Primitive("convex", (), np.eye(4), hull)]
        kind, size, voff, verts = pack_primitives(prims)
        centre = rng.normal(size=3)
        poses = np.array([_box_pose(rng) for _ in prims])
        poses[:, :3, 3] = centre
        pairs = np.array([(i, j) for i in range(3) for j in range(3) if i != j], np.int64)
        w = np.empty((len(pairs), 2, 3))
        assert (prim_pairs_distance(kind, size, voff, verts, poses, pairs, w) == 0.0).all()
        assert prim_pairs_intersect(kind, size, voff, verts, poses, pairs).all()


def test_ellipsoid_support_point_is_on_the_surface_and_extreme():
    rng = np.random.default_rng(7)
    size = np.array([0.5, 0.3, 0.2])
    pose = _box_pose(rng)
    out = np.empty(3)
    surface = rng.normal(size=(20000, 3))
    surface /= np.linalg.norm(surface, axis=1, keepdims=True)
    world = (surface * size) @ pose[:3, :3].T + pose[:3, 3]
    for d in [np.zeros(3)] + list(rng.normal(size=(20, 3))):
        core_support(ELLIPSOID, size, pose, np.zeros((1, 3)), 0, 0, d[0], d[1], d[2], out)
        local = (out - pose[:3, 3]) @ pose[:3, :3]
        assert ((local / size) ** 2).sum() == pytest.approx(1.0, abs=1e-12)  # on the surface
        if d.any():  # the extreme point along d: no sampled surface point beyond it
            assert out @ d >= (world @ d).max() - 1e-12
