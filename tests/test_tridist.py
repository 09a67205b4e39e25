"""Triangle-triangle distance kernel (cdcore._tridist) against independent oracles.

Oracles:
* an exact convex QP in barycentric coordinates, solved in rational arithmetic
  (``fractions.Fraction``): the minimiser lies in the relative interior of some pair of
  faces (vertex / edge / the triangle itself) of the two triangles, where it is the
  unconstrained least-squares point of the two affine hulls; enumerating the 7 x 7 face
  pairs, solving each normal equation exactly and keeping the feasible solutions gives
  the exact squared distance (a singular system is skipped: its minimisers extend to a
  smaller face pair). Intersecting triangles come out at exactly 0;
* dense sampling (an upper bound: every sampled pair is a pair of points of the triangles);
* the numpy reference ``tri_tri_distance_numpy`` (same formulas, vectorised).
"""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cdcore._tridist import (all_pairs_distance, tri_plane_bound, tri_tri_distance, tri_tri_distance_numpy,
                             tri_tri_distance_xyz)
from cdcore._tritri import tri_tri_overlap

# ---- exact oracle -------------------------------------------------------------------------

FACES = [(0,), (1,), (2,), (0, 1), (1, 2), (0, 2), (0, 1, 2)]


def _solve(M, r):
    """Exact Gaussian elimination; None when singular."""
    n = len(r)
    A = [row[:] + [r[i]] for i, row in enumerate(M)]
    for c in range(n):
        p = next((i for i in range(c, n) if A[i][c] != 0), None)
        if p is None:
            return None
        A[c], A[p] = A[p], A[c]
        for i in range(n):
            if i != c and A[i][c] != 0:
                f = A[i][c] / A[c][c]
                A[i] = [x - f * y for x, y in zip(A[i], A[c])]
    return [A[i][n] / A[i][i] for i in range(n)]


def exact_sq_distance(T, U):
    """Exact squared distance of triangles T, U ((3, 3) float arrays), as a Fraction."""
    P = [[Fraction(float(x)) for x in v] for v in T]
    Q = [[Fraction(float(x)) for x in v] for v in U]
    best = None
    for fa in FACES:
        for fb in FACES:
            ea = [[P[i][k] - P[fa[0]][k] for k in range(3)] for i in fa[1:]]
            eb = [[Q[i][k] - Q[fb[0]][k] for k in range(3)] for i in fb[1:]]
            cols = ea + [[-x for x in e] for e in eb]  # p - q = c + sum x_j cols_j
            c = [P[fa[0]][k] - Q[fb[0]][k] for k in range(3)]
            n = len(cols)
            if n:
                M = [[sum(cols[i][k] * cols[j][k] for k in range(3)) for j in range(n)] for i in range(n)]
                r = [-sum(cols[i][k] * c[k] for k in range(3)) for i in range(n)]
                x = _solve(M, r)
                if x is None:
                    continue
            else:
                x = []
            lam, mu = x[:len(ea)], x[len(ea):]
            if any(v < 0 for v in lam + mu) or sum(lam) > 1 or sum(mu) > 1:
                continue
            d = [c[k] + sum(x[j] * cols[j][k] for j in range(n)) for k in range(3)]
            d2 = sum(v * v for v in d)
            if best is None or d2 < best:
                best = d2
    return best


def point_triangle_distance(p, T):
    """Distance of point p to triangle T by the exact oracle (degenerate triangle U = p)."""
    return float(exact_sq_distance(T, np.array([p, p, p]))) ** 0.5


def kernel(T, U):
    d, p, q = tri_tri_distance(T[0], T[1], T[2], U[0], U[1], U[2])
    return d, p, q


def check_pair(T, U, atol=1e-12):
    T = np.asarray(T, float)
    U = np.asarray(U, float)
    d2 = exact_sq_distance(T, U)
    exact = float(d2) ** 0.5
    d, p, q = kernel(T, U)
    scale = max(1.0, np.abs(T).max(), np.abs(U).max())
    assert abs(d - exact) <= atol * scale, (d, exact, T.tolist(), U.tolist())
    # the closest points lie on their triangles and realise the distance
    assert point_triangle_distance(p, T) <= atol * scale
    assert point_triangle_distance(q, U) <= atol * scale
    assert abs(np.linalg.norm(p - q) - d) <= atol * scale
    # symmetric
    d_sw, p_sw, q_sw = kernel(U, T)
    assert abs(d_sw - exact) <= atol * scale
    # the numpy reference agrees
    dn = tri_tri_distance_numpy(T[None], U[None])[0][0]
    assert abs(dn - d) <= 1e-15 * scale
    return exact, d


# ---- hand-made cases ------------------------------------------------------------------------

def test_parallel_faces_above_each_other():
    T = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    U = [[0.1, 0.1, 0.5], [0.3, 0.1, 0.5], [0.1, 0.3, 0.5]]
    exact, d = check_pair(T, U)
    assert exact == pytest.approx(0.5)


def test_crossing_edges_skew():
    T = [[-1, 0, 0], [1, 0, 0], [0, -1, -1]]
    U = [[0, -1, 0.25], [0, 1, 0.25], [0, 0, 2]]
    exact, d = check_pair(T, U)
    assert exact == pytest.approx(0.25)


def test_vertex_over_face_interior():
    T = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]
    U = [[0.5, 0.5, 0.3], [0.5, 0.5, 2], [1.5, 1.5, 3]]
    exact, d = check_pair(T, U)
    assert exact == pytest.approx(0.3)


def test_intersecting_pierced_triangle_gives_zero_and_a_common_point():
    T = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]
    U = [[0.5, 0.5, -1], [0.6, 0.5, 1], [0.5, 0.6, 1]]  # a needle through T's interior
    d, p, q = kernel(np.array(T, float), np.array(U, float))
    assert d == 0.0
    assert tri_tri_overlap(*np.array(T, float), *np.array(U, float))
    assert point_triangle_distance(p, np.array(T, float)) < 1e-12
    assert point_triangle_distance(p, np.array(U, float)) < 1e-12
    assert np.linalg.norm(p - q) < 1e-12
    check_pair(T, U)


def test_coplanar_overlapping_and_touching():
    T = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]
    check_pair(T, [[0.5, 0.5, 0], [3, 0.5, 0], [0.5, 3, 0]])  # overlapping
    check_pair(T, [[1, 1, 0], [3, 1, 0], [1, 3, 0]])  # touching at a vertex on the hypotenuse
    check_pair(T, [[2.5, 0, 0], [4, 0, 0], [3, 1, 0]])  # coplanar, apart


def test_degenerate_triangles_points_and_segments():
    T = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    check_pair(T, [[0.2, 0.2, 1], [0.2, 0.2, 1], [0.2, 0.2, 1]])  # a point above
    check_pair(T, [[2, 2, 0], [2, 2, 0], [2, 2, 0]])  # a point beside, coplanar
    check_pair(T, [[-1, 0.5, 0.5], [2, 0.5, 0.5], [0.5, 0.5, 0.5]])  # a segment (collinear), parallel
    check_pair(T, [[0.25, 0.25, -1], [0.25, 0.25, 1], [0.25, 0.25, 1]])  # a segment piercing T
    check_pair([[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]])  # point-point
    check_pair([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0.5, 1, 0], [1.5, 1, 0], [2.5, 1, 0]])  # parallel segments
    check_pair([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[1, -1, 1], [1, 1, 1], [1, 0, 1]])  # skew segments
    check_pair([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[1, -1, 0], [1, 1, 0], [1, 1, 0]])  # crossing segments


def test_parallel_edges_overlapping_in_projection():
    # two triangles whose nearest features are parallel edges with an overlap
    T = [[0, 0, 0], [4, 0, 0], [2, -1, -1]]
    U = [[1, 0.5, 0.5], [5, 0.5, 0.5], [3, 2, 1]]
    exact, d = check_pair(T, U)
    assert exact == pytest.approx(np.sqrt(0.5))


def test_far_from_origin():
    off = np.array([1e3, -2e3, 5e2])
    T = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float) + off
    U = np.array([[0.2, 0.2, 0.7], [1, 0.3, 0.9], [0.1, 1, 0.8]], float) + off
    check_pair(T, U, atol=1e-12)


# ---- random cases -------------------------------------------------------------------------

def _dyadic_triangle(rng, lo=-4, hi=4):
    return rng.integers(lo * 8, hi * 8 + 1, size=(3, 3)) / 8.0


@pytest.mark.parametrize("seed", range(4))
def test_random_dyadic_triangles_match_the_exact_oracle(seed):
    """Small dyadic coordinates: many exact coincidences (shared planes, parallel edges,
    degenerate triangles, touching)."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        T = _dyadic_triangle(rng)
        U = _dyadic_triangle(rng) + rng.integers(-3, 4, size=3)
        if rng.random() < 0.2:  # make one degenerate: a repeated or collinear vertex
            U[2] = U[1] if rng.random() < 0.5 else 2 * U[1] - U[0]
        check_pair(T, U)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([0.3, 1.0, 3.0]))
def test_random_float_triangles_match_the_exact_oracle(seed, spread):
    rng = np.random.default_rng(seed)
    T = rng.normal(size=(3, 3))
    U = rng.normal(size=(3, 3)) + rng.normal(size=3) * spread
    check_pair(T, U)


def test_dense_sampling_is_an_upper_bound():
    rng = np.random.default_rng(5)
    A = rng.random((60, 3, 3))
    B = rng.random((60, 3, 3)) + np.array([0.8, 0.0, 0.0])

    def sample(T, n=300):
        u = rng.random((n, 2))
        m = u.sum(1) > 1
        u[m] = 1 - u[m]
        return T[0] + u[:, :1] * (T[1] - T[0]) + u[:, 1:] * (T[2] - T[0])

    for i in range(len(A)):
        d = kernel(A[i], B[i])[0]
        pa, pb = sample(A[i]), sample(B[i])
        ub = np.sqrt(((pa[:, None] - pb[None]) ** 2).sum(-1)).min()
        assert d <= ub + 1e-12


def test_numpy_reference_matches_the_kernel_bit_for_bit():
    rng = np.random.default_rng(11)
    A = rng.normal(size=(500, 3, 3))
    B = rng.normal(size=(500, 3, 3)) + rng.normal(size=(500, 1, 3)) * 2
    B[::7, 2] = B[::7, 1]  # some degenerate
    dn, Pn, Qn = tri_tri_distance_numpy(A, B)
    for i in range(len(A)):
        d, p, q = tri_tri_distance(*A[i], *B[i])
        assert d == dn[i]
        if d > 0:
            assert np.array_equal(p, Pn[i]) and np.array_equal(q, Qn[i])
    # xyz entry point
    d0 = tri_tri_distance_xyz(*A[0].ravel(), *B[0].ravel())[0]
    assert d0 == dn[0]
    # all pairs
    D = all_pairs_distance(A[:20], B[:30])
    assert D.shape == (20, 30)
    assert D[3, 4] == tri_tri_distance_numpy(A[3:4], B[4:5])[0][0]


def test_plane_bound_never_exceeds_the_distance():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(2000):
        T = rng.normal(size=(3, 3))
        U = rng.normal(size=(3, 3)) + rng.normal(size=3) * 2
        if rng.random() < 0.1:
            U[2] = U[1]
        g, which = tri_plane_bound(*(tuple(v) for v in T), *(tuple(v) for v in U))
        d = kernel(T, U)[0]
        assert g <= d
        hits += g > 0
    assert hits > 200  # the bound is informative


@pytest.mark.parametrize("angle", [1e-3, 1e-6, 1e-9, 1e-12])
def test_nearly_parallel_edges(angle):
    """Closest features are two nearly parallel edges (the Gram determinant of the line
    pair cancels): the endpoint candidates keep the result accurate."""
    T = np.array([[0, 0, 0], [4, 0, 0], [2, -1, -1]], float)
    U = np.array([[1, 0.5, 0.5], [1 + 4 * np.cos(angle), 0.5 + 4 * np.sin(angle), 0.5], [3, 2, 1]], float)
    check_pair(T, U)


@pytest.mark.parametrize("h", [1e-4, 1e-8, 1e-12])
def test_sliver_triangles(h):
    """A cap-shaped sliver (nearly collinear vertices) over a triangle and under a point."""
    T = np.array([[0, 0, 0], [2, 0, 0], [1, h, 0]], float)
    U = np.array([[0.9, 0.3, 0.4], [1.1, -0.2, 0.5], [1.0, 0.0, 0.2]], float)
    check_pair(T, U)
    check_pair(U, T)
