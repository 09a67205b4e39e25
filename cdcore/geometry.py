"""Wireframe geometry of bounding volumes, for whoever draws a hierarchy (the app's render
adapters, notebooks): pure numpy, no drawing library. Boxes are 8 corners and 12 edges (or 6
quads), spheres 3 great circles of ``segments`` points, k-DOPs the edges of their polytopes
(the intersection of k half-spaces: vertices from triples of planes, edges from pairs).

Corner index = 4 * (x > 0) + 2 * (y > 0) + (z > 0) in a box's own frame. Functions take
centres, axes and extents or slabs as arrays over many nodes at once (vectorised), and may
write into a caller's ``out`` buffer (the app updates its VTK arrays in place).
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

# ---- geometry templates --------------------------------------------------------------
BOX_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
# corner index = 4 * (x > 0) + 2 * (y > 0) + (z > 0); edges join corners differing in one bit
BOX_EDGES = np.array([(a, a | b) for b in (4, 2, 1) for a in range(8) if not a & b], dtype=np.int64)
BOX_QUADS = np.array([(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)],
                     dtype=np.int64)
SPHERE_SEGMENTS = 24


def box_corners(c, ax, e, out=None):
    """Corners (k, 8, 3) of boxes with centres ``c`` (k, 3), axes ``ax`` (k, 3, 3) as
    columns and half-extents ``e`` (k, 3); corner order as ``BOX_SIGNS``."""
    half = np.moveaxis(np.asarray(ax) * np.asarray(e)[:, None, :], 2, 0)  # (3, k, 3): scaled axes
    return _corners(np.asarray(c), half, out)


def _corners(c, half, out=None):
    """c (k, 3) + sum_j BOX_SIGNS[m, j] half[j] for the 8 corners m, by 14 elementwise
    adds in the output's precision (no BLAS: a threaded BLAS call on a loaded machine can
    cost 100x more than the arithmetic)."""
    k = len(c)
    if out is None:
        out = np.empty((k, 8, 3))
    dt = out.dtype
    h = [np.asarray(x, dtype=dt) for x in half]
    level = [np.asarray(c, dtype=dt)]
    for j in range(3):  # corner index bits: x (4), y (2), z (1), as BOX_SIGNS
        level = [v for base in level for v in (base - h[j], base + h[j])]
    for m in range(8):
        out[:, m, :] = level[m]
    return out


def _rotate(x, R, t=None, out=None):
    """x @ R.T (+ t) for (n, 3) points, per output coordinate (elementwise, no BLAS);
    ``out`` may be float32."""
    x = np.asarray(x, dtype=np.float64)
    if out is None:
        out = np.empty((len(x), 3))
    c0, c1, c2 = x[:, 0], x[:, 1], x[:, 2]
    for j in range(3):
        col = c0 * R[j, 0]
        col += c1 * R[j, 1]
        col += c2 * R[j, 2]
        if t is not None:
            col += t[j]
        out[:, j] = col
    return out


def transform_into(out, pts, R, t) -> None:
    """out[...] = pts @ R.T + t (``out`` may be a float32 view of a VTK array)."""
    _rotate(pts, np.asarray(R, dtype=np.float64), np.asarray(t, dtype=np.float64), out=out)


def _line_cells(k: int, per: int, template: np.ndarray) -> np.ndarray:
    """VTK line connectivity ``[2, a, b, ...]`` for k copies of ``template`` (m, 2) edge
    indices, copy i offset by i * per points."""
    e = template[None, :, :] + (np.arange(k, dtype=np.int64) * per)[:, None, None]
    cells = np.empty((k * len(template), 3), dtype=np.int64)
    cells[:, 0] = 2
    cells[:, 1:] = e.reshape(-1, 2)
    return cells.ravel()


def box_lines(k: int) -> np.ndarray:
    return _line_cells(k, 8, BOX_EDGES)


def box_faces(k: int) -> np.ndarray:
    q = BOX_QUADS[None, :, :] + (np.arange(k, dtype=np.int64) * 8)[:, None, None]
    cells = np.empty((k * 6, 5), dtype=np.int64)
    cells[:, 0] = 4
    cells[:, 1:] = q.reshape(-1, 4)
    return cells.ravel()


def circle_template(segments: int = SPHERE_SEGMENTS) -> np.ndarray:
    """(3 * segments, 3) points of three unit great circles (in the yz, zx and xy planes)."""
    t = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    cs, sn, z = np.cos(t), np.sin(t), np.zeros_like(t)
    return np.concatenate([np.stack([z, cs, sn], 1), np.stack([sn, z, cs], 1), np.stack([cs, sn, z], 1)])


def circle_edges(segments: int = SPHERE_SEGMENTS) -> np.ndarray:
    """(3 * segments, 2) closed loops over ``circle_template`` points."""
    i = np.arange(segments)
    return np.concatenate([np.stack([i + c * segments, (i + 1) % segments + c * segments], 1) for c in range(3)])


def sphere_points(centres, radii, rotation=None, segments: int = SPHERE_SEGMENTS, out=None):
    """(k, 3 * segments, 3) great-circle points of spheres; the circles turn with
    ``rotation`` (3, 3) (the tree's pose) so that they follow the body."""
    tpl = circle_template(segments)
    if rotation is not None:
        tpl = tpl @ np.asarray(rotation).T
    if out is None:
        out = np.empty((len(radii), len(tpl), 3))
    dt = out.dtype  # compute in the output's precision (float32 for drawing): no casts
    k, m = len(radii), len(tpl)
    # flat (k, 3m) product, then one strided add per coordinate (numpy is slow on inner length-3 loops)
    np.multiply(np.asarray(radii, dtype=dt)[:, None], tpl.astype(dt).reshape(1, 3 * m), out=out.reshape(k, 3 * m))
    c = np.asarray(centres, dtype=dt)
    for j in range(3):
        out[:, :, j] += c[:, j:j + 1]
    return out


def _fill_repeated(out, value, k: int, per: int) -> None:
    """out[i * per + j] = value[i] for j < per, without a temporary (one strided write per
    component: numpy's inner loops are slow on length-3 rows)."""
    if out.ndim == 1:
        out.reshape(k, per)[...] = value[:, None]
    else:
        o = out.reshape(k, per, out.shape[1])
        for j in range(out.shape[1]):
            o[:, :, j] = value[:, j:j + 1]


# ---- k-DOP polytopes -----------------------------------------------------------------
def kdop_polytope_edges(normals, mins, maxs, tol: float = 1e-9):
    """Vertices and edges of the k-DOP ``{x : mins[i] <= normals[i] . x <= maxs[i]}``.

    ``normals`` (m, 3) (need not be unit), ``mins``/``maxs`` (m,). The 2m slab planes are
    intersected three at a time; a vertex is a triple's intersection point that satisfies
    every slab (within ``tol`` times the polytope's scale); coincident vertices (more than
    three planes through a point) are merged. Two vertices are joined by an edge when they
    share two non-parallel planes: the vertices on the line of such a plane pair are sorted
    along it and joined consecutively. Returns (vertices (V, 3), edges (E, 2) int64, each
    edge once, lower index first). Pure numpy; one polytope.
    """
    n = np.asarray(normals, dtype=np.float64).reshape(-1, 3)
    lo = np.asarray(mins, dtype=np.float64).reshape(-1)
    hi = np.asarray(maxs, dtype=np.float64).reshape(-1)
    m = len(n)
    if len(lo) != m or len(hi) != m:
        raise ValueError(f"kdop_polytope_edges: {m} normals but {len(lo)} mins and {len(hi)} maxs")
    # planes P_p . x = d_p, outward normals: -n . x <= -lo (min side), n . x <= hi (max side)
    P = np.concatenate([-n, n])
    d = np.concatenate([-lo, hi])
    scale = max(1.0, float(np.abs(d).max()) if len(d) else 1.0)
    eps = tol * scale * max(1.0, float(np.linalg.norm(n, axis=1).max()) if m else 1.0)

    tri = np.array(list(combinations(range(2 * m), 3)), dtype=np.int64)
    if len(tri) == 0:
        return np.zeros((0, 3)), np.zeros((0, 2), dtype=np.int64)
    A = P[tri]  # (T, 3, 3)
    det = np.linalg.det(A)
    ok = np.abs(det) > 1e-12 * np.prod(np.linalg.norm(A, axis=2), axis=1)
    tri, A = tri[ok], A[ok]
    x = np.linalg.solve(A, d[tri][:, :, None])[:, :, 0]  # (T, 3)
    inside = np.all(x @ P.T <= d + eps, axis=1)
    x = x[inside]
    if len(x) == 0:
        return np.zeros((0, 3)), np.zeros((0, 2), dtype=np.int64)
    # merge coincident vertices (several triples giving one point when more than three
    # planes meet there): each point joins the first point within a tolerance far above
    # round-off; a polytope has at most a few hundred candidate points
    merge = 1e3 * eps
    near = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2) <= merge
    first = np.unique(np.argmax(near, axis=1))
    verts = x[first]
    on = np.abs(verts @ P.T - d) <= 1e3 * eps  # (V, 2m): the planes through each vertex
    # edges: for every plane pair (p, q) with non-parallel normals, vertices on both planes
    edges = set()
    for p, r in combinations(range(2 * m), 2):
        cr = np.cross(P[p], P[r])
        if np.linalg.norm(cr) <= 1e-12 * np.linalg.norm(P[p]) * np.linalg.norm(P[r]):
            continue
        vid = np.flatnonzero(on[:, p] & on[:, r])
        if len(vid) < 2:
            continue
        vid = vid[np.argsort(verts[vid] @ cr)]
        for a, b in zip(vid[:-1], vid[1:]):
            edges.add((min(a, b), max(a, b)))
    e = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    return verts, e


_PAIR_TABLES: dict = {}


def _pair_tables(normals):
    """Per direction set: the 2m planes P, their non-parallel pairs (p, q), each pair's
    line direction and the vectors giving the point of the line nearest the origin from
    the two plane offsets (x0 = d_p U + d_q V), projected on every plane."""
    key = normals.tobytes()
    t = _PAIR_TABLES.get(key)
    if t is None:
        P = np.concatenate([-normals, normals])
        pq = np.array(list(combinations(range(len(P)), 2)), dtype=np.int64).reshape(-1, 2)
        dirs = np.cross(P[pq[:, 0]], P[pq[:, 1]])
        n2 = np.einsum("ij,ij->i", dirs, dirs)
        scale = np.linalg.norm(P[pq[:, 0]], axis=1) * np.linalg.norm(P[pq[:, 1]], axis=1)
        ok = n2 > (1e-12 * scale) ** 2
        pq, dirs, n2 = pq[ok], dirs[ok], n2[ok]
        U = np.cross(P[pq[:, 1]], dirs) / n2[:, None]
        V = np.cross(dirs, P[pq[:, 0]]) / n2[:, None]
        t = _PAIR_TABLES[key] = (P, pq, dirs, U, V, U @ P.T, V @ P.T, dirs @ P.T)
    return t


def kdop_wireframes(normals, mins, maxs, tol: float = 1e-9, chunk_elems: int = 4_000_000):
    """Edges of many k-DOPs sharing ``normals`` (m, 3), vectorised over the polytopes:
    ``mins``/``maxs`` (k, m). Each pair of non-parallel slab planes meets in a line; the
    line is clipped by every other half-space and a non-empty clip is an edge (an edge
    lying on more than two planes is kept once, for its two lowest planes). Returns
    points (2E, 3), edges (E, 2) into them and the owning polytope of each edge (E,).
    Gives the same edges as ``kdop_polytope_edges`` on each polytope, without a Python
    loop per polytope (it loops over chunks of about ``chunk_elems`` array elements)."""
    normals = np.asarray(normals, dtype=np.float64).reshape(-1, 3)
    lo = np.atleast_2d(np.asarray(mins, dtype=np.float64))
    hi = np.atleast_2d(np.asarray(maxs, dtype=np.float64))
    P, pq, dirs, U, V, PU, PV, PD = _pair_tables(normals)
    D = np.concatenate([-lo, hi], axis=1)  # (k, 2m) plane offsets
    k, nplanes, npairs = len(D), P.shape[0], len(pq)
    ends0, ends1, owners = [], [], []
    step = max(1, chunk_elems // max(1, npairs * nplanes))
    par = np.abs(PD) <= 1e-12 * np.linalg.norm(dirs, axis=1)[:, None] * np.linalg.norm(P, axis=1)[None, :]
    pos, neg = (PD > 0) & ~par, (PD < 0) & ~par
    safe = np.where(par, 1.0, PD)
    for a in range(0, k, step):
        d = D[a:a + step]
        scale = max(1.0, float(np.abs(d).max()))
        eps = tol * scale
        dp, dq = d[:, pq[:, 0]], d[:, pq[:, 1]]  # (c, pairs)
        # b_r = d_r - P_r . x0: the room left on plane r at the line's base point
        b = d[:, None, :] - dp[:, :, None] * PU[None] - dq[:, :, None] * PV[None]
        ratio = b / safe[None]
        tmax = np.where(pos[None], ratio, np.inf).min(axis=2)
        tmin = np.where(neg[None], ratio, -np.inf).max(axis=2)
        feasible = np.all(np.where(par[None], b >= -eps, True), axis=2)
        length = (tmax - tmin) * np.linalg.norm(dirs, axis=1)[None]
        ci, pi = np.nonzero(feasible & (length > 1e3 * eps))
        if len(ci) == 0:
            continue
        x0 = dp[ci, pi, None] * U[pi] + dq[ci, pi, None] * V[pi]
        e0 = x0 + tmin[ci, pi, None] * dirs[pi]
        e1 = x0 + tmax[ci, pi, None] * dirs[pi]
        # keep an edge once: only for the two lowest-numbered planes that contain it
        dd = d[ci]
        on = (np.abs(e0 @ P.T - dd) <= 1e3 * eps) & (np.abs(e1 @ P.T - dd) <= 1e3 * eps)
        first = np.argmax(on, axis=1)
        on2 = on.copy()
        on2[np.arange(len(on)), first] = False
        second = np.argmax(on2, axis=1)
        keep = (first == pq[pi, 0]) & (second == pq[pi, 1])
        ends0.append(e0[keep])
        ends1.append(e1[keep])
        owners.append(a + ci[keep])
    if not owners:
        return np.zeros((0, 3)), np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
    e0, e1, owner = np.concatenate(ends0), np.concatenate(ends1), np.concatenate(owners)
    order = np.argsort(owner, kind="stable")
    e0, e1, owner = e0[order], e1[order], owner[order]
    pts = np.empty((2 * len(owner), 3))
    pts[0::2], pts[1::2] = e0, e1
    edges = np.arange(2 * len(owner), dtype=np.int64).reshape(-1, 2)
    return pts, edges, owner
