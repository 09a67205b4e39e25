"""_prim._closest_triangle on slivers and needles (degenerate triangles are valid input): the
closest point equals a reference computed differently (plane projection + edges, in long
double) across aspect ratios from 1 down to exactly collinear."""
import numpy as np
import pytest

from cdcore._prim import _closest_triangle


def _seg(p, q):
    d = q - p
    ll = d @ d
    t = 0 if ll == 0 else min(1, max(0, -(p @ d) / ll))
    return np.sqrt(((p + t * d) ** 2).sum())


def _reference(a, b, c):
    """Distance from the origin to triangle abc: the origin's projection on the plane when it
    falls inside (barycentrics from sub-areas along the unit normal), else the nearest edge."""
    a, b, c = (np.asarray(x, dtype=np.longdouble) for x in (a, b, c))
    best = min(_seg(a, b), _seg(b, c), _seg(c, a))
    n = np.cross(b - a, c - a)
    nn = np.sqrt((n * n).sum())
    if nn > 0:
        u = n / nn
        q = u * (u @ a)  # projection of the origin onto the plane
        w = [np.cross(c - b, q - b) @ u, np.cross(a - c, q - c) @ u, np.cross(b - a, q - a) @ u]
        if min(w) >= 0:
            best = min(best, np.sqrt((q * q).sum()))
    return float(best)


@pytest.mark.parametrize("log_width", [0, -1, -2, -3, -4, -5, -6, -8, -10, -13, -16, None])
def test_closest_point_of_slivers(log_width):
    rng = np.random.default_rng(100 + (99 if log_width is None else -log_width))
    bary = np.empty(3)
    worst = 0.0
    for _ in range(300):
        a, b = rng.normal(size=(2, 3))
        c = a + rng.uniform(-1.5, 2.5) * (b - a)
        if log_width is not None:  # lift c off the line ab by 10^log_width of |ab|
            off = np.cross(b - a, rng.normal(size=3))
            c = c + off / np.linalg.norm(off) * np.linalg.norm(b - a) * 10.0 ** log_width
        if rng.random() < 0.3:  # a needle: one edge tiny
            b = a + (b - a) * 1e-9
        _closest_triangle(a, b, c, bary)
        assert bary.min() >= 0 and abs(bary.sum() - 1) < 1e-12
        got = np.linalg.norm(bary[0] * a + bary[1] * b + bary[2] * c)
        ref = _reference(a, b, c)
        worst = max(worst, abs(got - ref) / max(ref, 1.0))
        assert got >= ref - 1e-12  # a point of the triangle: never nearer than the truth
    # the measured worst relative error (1e-6 allowed: near the sliver threshold neither the
    # interior formula nor the edges is exact; the kernel takes the nearer of the two)
    assert worst < 1e-6, worst
