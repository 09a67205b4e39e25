"""Small fixed-size linear algebra for the kernels (no LAPACK call per node)."""
import numpy as np
from numba import njit

from ._pairjit import pair_njit


@njit(cache=True)
def sym_eig3(a00, a01, a02, a11, a12, a22, vecs, work=None):
    """Eigen-decompose a symmetric 3x3 matrix by cyclic Jacobi rotations.

    Writes the eigenvectors as the columns of ``vecs`` (3, 3), sorted by decreasing
    eigenvalue, right-handed. ``work`` (2, 3, 3) is optional scratch (the build passes one
    so that no node allocates). Returns nothing; ~30 rotations at most for doubles.
    """
    # scale to unit magnitude so the convergence test neither underflows nor overflows
    scale = max(max(abs(a00), abs(a01)), max(max(abs(a02), abs(a11)), max(abs(a12), abs(a22))))
    if scale == 0.0 or not np.isfinite(scale):
        scale = 1.0
    a00, a01, a02, a11, a12, a22 = a00 / scale, a01 / scale, a02 / scale, a11 / scale, a12 / scale, a22 / scale
    if work is None:
        work = np.empty((2, 3, 3))
    a = work[0]
    a[0, 0] = a00
    a[0, 1] = a01
    a[0, 2] = a02
    a[1, 0] = a01
    a[1, 1] = a11
    a[1, 2] = a12
    a[2, 0] = a02
    a[2, 1] = a12
    a[2, 2] = a22
    v = work[1]
    for r in range(3):
        for c in range(3):
            v[r, c] = 1.0 if r == c else 0.0
    for _sweep in range(12):
        off = a[0, 1] * a[0, 1] + a[0, 2] * a[0, 2] + a[1, 2] * a[1, 2]
        diag = a[0, 0] * a[0, 0] + a[1, 1] * a[1, 1] + a[2, 2] * a[2, 2]
        # converged once the off-diagonal mass is at rounding level of the diagonal
        if off <= 1e-30 * diag or off == 0.0:
            break
        for p in range(2):
            for q in range(p + 1, 3):
                apq = a[p, q]
                if apq == 0.0:
                    continue
                theta = (a[q, q] - a[p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + np.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                for k in range(3):
                    akp = a[k, p]
                    akq = a[k, q]
                    a[k, p] = c * akp - s * akq
                    a[k, q] = s * akp + c * akq
                for k in range(3):
                    apk = a[p, k]
                    aqk = a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                for k in range(3):
                    vkp = v[k, p]
                    vkq = v[k, q]
                    v[k, p] = c * vkp - s * vkq
                    v[k, q] = s * vkp + c * vkq
    # sort columns by decreasing eigenvalue (three elements: a tiny sorting network)
    o0, o1, o2 = 0, 1, 2
    if a[o1, o1] > a[o0, o0]:
        o0, o1 = o1, o0
    if a[o2, o2] > a[o1, o1]:
        o1, o2 = o2, o1
    if a[o1, o1] > a[o0, o0]:
        o0, o1 = o1, o0
    for r in range(3):
        vecs[r, 0] = v[r, o0]
        vecs[r, 1] = v[r, o1]
        vecs[r, 2] = v[r, o2]
    orthonormal_frame(vecs)


@pair_njit
def orthonormal_frame(m):
    """Re-orthonormalise the columns of ``m`` (3, 3) in place, keeping column 0's
    direction, and make the frame right-handed (column 2 = column 0 x column 1)."""
    x0, x1, x2 = m[0, 0], m[1, 0], m[2, 0]
    n = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    if n < 1e-300:
        x0, x1, x2, n = 1.0, 0.0, 0.0, 1.0
    x0 /= n
    x1 /= n
    x2 /= n
    y0, y1, y2 = m[0, 1], m[1, 1], m[2, 1]
    ny = np.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    # Gram-Schmidt twice: for a nearly parallel column (a sliver triangle's apex direction)
    # one pass leaves an error of rounding / sin(angle); the second removes it
    for _ in range(2):
        d = x0 * y0 + x1 * y1 + x2 * y2
        y0 -= d * x0
        y1 -= d * x1
        y2 -= d * x2
    n = np.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    if not n > 1e-12 * ny:
        # column 1 was (nearly) parallel to column 0: pick any perpendicular
        if abs(x0) < 0.9:
            y0, y1, y2 = 0.0, -x2, x1
        else:
            y0, y1, y2 = x2, 0.0, -x0
        n = np.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    y0 /= n
    y1 /= n
    y2 /= n
    m[0, 0], m[1, 0], m[2, 0] = x0, x1, x2
    m[0, 1], m[1, 1], m[2, 1] = y0, y1, y2
    m[0, 2] = x1 * y2 - x2 * y1
    m[1, 2] = x2 * y0 - x0 * y2
    m[2, 2] = x0 * y1 - x1 * y0
