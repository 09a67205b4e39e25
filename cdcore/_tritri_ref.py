"""Vectorised numpy reference for ``cdcore._tritri`` (test oracle, not a hot path).

``tri_tri_overlap_numpy`` evaluates exactly the axes of the numba kernel with the same
floating-point formulas in the same operation order (translation by A's first vertex,
cross and dot products, min/max of the projections, the rounding-error slack), so its
booleans agree with ``tri_tri_overlap`` bit for bit. Vectors are tuples of three (k,)
component arrays, so every numpy expression below is the kernel's scalar expression
applied elementwise. Pairs separated by an earlier stage are dropped before the next one
(only the order of evaluation differs from the kernel, not the result).

``all_pairs_overlap`` applies it to every pair of two triangle sets, chunked.
"""
import numpy as np

from ._tritri import DEGENERATE_EPS, SLACK


def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _take(v, idx):
    return tuple(c[idx] for c in v)


class _Frame:
    """Translated vertices a1, a2, b0, b1, b2 (a0 = 0) and per-component max |coord|."""

    def __init__(self, a1, a2, b0, b1, b2):
        self.a1, self.a2, self.b0, self.b1, self.b2 = a1, a2, b0, b1, b2
        verts = (a1, a2, b0, b1, b2)
        self.m = tuple(np.maximum.reduce([np.abs(v[c]) for v in verts]) for c in range(3))

    def take(self, idx):
        f = _Frame.__new__(_Frame)
        f.a1, f.a2, f.b0, f.b1, f.b2 = (_take(v, idx) for v in
                                        (self.a1, self.a2, self.b0, self.b1, self.b2))
        f.m = _take(self.m, idx)
        return f

    def separates(self, l):
        """Kernel ``_separates`` for axis l (tuple of component arrays), elementwise."""
        pa1 = _dot(l, self.a1)
        pa2 = _dot(l, self.a2)
        pb0 = _dot(l, self.b0)
        pb1 = _dot(l, self.b1)
        pb2 = _dot(l, self.b2)
        amin = np.minimum(np.minimum(0.0, pa1), pa2)
        amax = np.maximum(np.maximum(0.0, pa1), pa2)
        bmin = np.minimum(np.minimum(pb0, pb1), pb2)
        bmax = np.maximum(np.maximum(pb0, pb1), pb2)
        m = self.m
        err2 = 2.0 * (SLACK * (np.abs(l[0]) * m[0] + np.abs(l[1]) * m[1]
                               + np.abs(l[2]) * m[2]))
        with np.errstate(invalid='ignore', over='ignore'):
            return (((amax < bmin) & ((bmin - amax) > err2))
                    | ((bmax < amin) & ((amin - bmax) > err2)))


def _is_degenerate(n, e0, e1, e2):
    lmax = np.maximum(np.maximum(_dot(e0, e0), _dot(e1, e1)), _dot(e2, e2))
    return _dot(n, n) <= DEGENERATE_EPS * (lmax * lmax)


def tri_tri_overlap_numpy(A, B):
    """Pairwise overlap of closed triangles A[k] and B[k]; A, B are (k, 3, 3) float64
    (k pairs, 3 vertices, xyz). Returns a (k,) bool array equal to the numba kernel's
    ``tri_tri_overlap(A[k, 0], A[k, 1], A[k, 2], B[k, 0], B[k, 1], B[k, 2])``."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 3 or A.shape[1:] != (3, 3) or B.shape != A.shape:
        raise ValueError("A and B must both have shape (k, 3, 3)")
    k = A.shape[0]
    result = np.zeros(k, dtype=bool)
    idx = np.arange(k)

    def comp(v):
        return tuple(np.ascontiguousarray(v[:, c]) for c in range(3))

    p0 = comp(A[:, 0])
    f = _Frame(*(_sub(comp(V[:, i]), p0)
                 for V, i in ((A, 1), (A, 2), (B, 0), (B, 1), (B, 2))))

    def keep(sep):
        nonlocal idx, f, vecs
        alive = ~sep
        idx = idx[alive]
        f = f.take(alive)
        vecs = {name: _take(v, alive) for name, v in vecs.items()}

    # stage 1: plane normals
    nA = _cross(f.a1, f.a2)
    eB0 = _sub(f.b1, f.b0)
    eB1 = _sub(f.b2, f.b1)
    eB2 = _sub(f.b0, f.b2)
    nB = _cross(eB0, _sub(f.b2, f.b0))
    eA0 = f.a1
    eA1 = _sub(f.a2, f.a1)
    eA2 = (-f.a2[0], -f.a2[1], -f.a2[2])
    vecs = dict(nA=nA, nB=nB, eA0=eA0, eA1=eA1, eA2=eA2, eB0=eB0, eB1=eB1, eB2=eB2)
    keep(f.separates(nA) | f.separates(nB))

    # stage 2: edge x edge
    eAs = lambda: (vecs['eA0'], vecs['eA1'], vecs['eA2'])  # noqa: E731
    eBs = lambda: (vecs['eB0'], vecs['eB1'], vecs['eB2'])  # noqa: E731
    sep = np.zeros(len(idx), dtype=bool)
    for eA in eAs():
        for eB in eBs():
            sep |= f.separates(_cross(eA, eB))
    keep(sep)

    # stage 3: in-plane edge normals
    sep = np.zeros(len(idx), dtype=bool)
    for eA in eAs():
        sep |= f.separates(_cross(vecs['nA'], eA))
    for eB in eBs():
        sep |= f.separates(_cross(vecs['nB'], eB))
    keep(sep)

    # stage 4: degenerate triangles only
    deg = (_is_degenerate(vecs['nA'], *eAs()) | _is_degenerate(vecs['nB'], *eBs()))
    result[idx[~deg]] = True
    keep(~deg)
    sep = np.zeros(len(idx), dtype=bool)
    if len(idx):
        nA, nB = vecs['nA'], vecs['nB']
        for eB in eBs():
            sep |= f.separates(_cross(nA, eB))
        for eA in eAs():
            sep |= f.separates(_cross(nB, eA))
        zero = np.zeros(len(idx))
        a0 = (zero, zero, zero)
        diffs = [_sub(a, b) for a in (a0, f.a1, f.a2) for b in (f.b0, f.b1, f.b2)]
        for d in diffs:
            sep |= f.separates(d)
        for e in eAs() + eBs():
            for d in diffs:
                sep |= f.separates(_cross(e, _cross(e, d)))
    result[idx[~sep]] = True
    return result


def all_pairs_overlap(tris_a, tris_b, chunk=1 << 17):
    """All intersecting pairs (i, j) of tris_a (m, 3, 3) x tris_b (n, 3, 3), brute force
    with ``tri_tri_overlap_numpy`` (the kernel's answer on every pair). Returns a (k, 2)
    int32 array sorted lexicographically. Works on ``chunk`` pairs at a time (peak memory
    roughly 600 bytes per pair of the chunk, ~80 MB for the default)."""
    tris_a = np.asarray(tris_a, dtype=np.float64).reshape(-1, 3, 3)
    tris_b = np.asarray(tris_b, dtype=np.float64).reshape(-1, 3, 3)
    m, n = len(tris_a), len(tris_b)
    out = []
    for start in range(0, m * n, chunk):
        flat = np.arange(start, min(start + chunk, m * n), dtype=np.int64)
        i, j = np.divmod(flat, n)
        hit = tri_tri_overlap_numpy(tris_a[i], tris_b[j])
        out.append(np.stack([i[hit], j[hit]], axis=1).astype(np.int32))
    if not out:
        return np.zeros((0, 2), dtype=np.int32)
    return np.concatenate(out, axis=0)
