"""Bounding-volume hierarchies drawn as one batched line PolyData per body.

Every selected node becomes line cells in a single ``pyvista.PolyData`` (one actor):
boxes (AABB/OBB) as their 12 edges, spheres as 3 great circles of ``segments`` line
segments each, k-DOPs as their polytope edges when the tree exposes its slabs
(``tree.kdop_slabs(nodes)`` or ``tree.kdop``: cdcore's ``KdopData``), otherwise as their
box columns (the AABB of slabs 0..2). Colours are per-cell RGB
(``cell_data["rgb"]``), from the node states (``STATE_COLORS``) or a heat colormap; the
``"node"``, ``"state"`` and ``"heat"`` cell arrays say which node / value each cell shows
(for tests and picking).

``update`` is vectorised numpy and in place: while the geometry kind and the number of
drawn nodes stay the same, points and colours are written into the existing VTK arrays
(same actor, same PolyData, same point array); otherwise the PolyData's arrays are
replaced (same actor and PolyData object, new arrays).
"""
from __future__ import annotations

import hashlib
from itertools import combinations

import numpy as np
import pyvista as pv

from app.model.trees import NOT_VISITED
from cdcore import layout as L

from .colors import PAIR_COLORS, STATE_COLORS, heat_colors, to_float

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


def tree_box_corners(tree, nodes, out=None):
    """World corners (k, 8, 3) of ``tree``'s node boxes: ``Tree.world_boxes`` without
    its per-node 3x3 products (the pose is applied to centres and scaled axes)."""
    f = tree.nodes_f[nodes]
    R, t = tree.pose[:3, :3], tree.pose[:3, 3]
    axes = f[:, L.R0:L.R0 + 9].reshape(-1, 3, 3)  # columns are the box axes
    e = f[:, L.E0:L.E0 + 3]
    half = [_rotate(axes[:, :, j] * e[:, j:j + 1], R) for j in range(3)]
    return _corners(_rotate(f[:, L.C0:L.C0 + 3], R, t), half, out)


def tree_spheres(tree, nodes):
    """World centres (k, 3) and radii (k,) of ``tree``'s node spheres (``Tree.world_spheres``
    without BLAS)."""
    f = tree.nodes_f[nodes]
    return _rotate(f[:, L.S0:L.S0 + 3], tree.pose[:3, :3], tree.pose[:3, 3]), f[:, L.SR]


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


# ---- per-tree geometry -----------------------------------------------------------------
def kdop_slabs_of(tree, nodes):
    """(normals (m, 3), mins (k, m), maxs (k, m)) of ``nodes`` in the tree's own frame,
    from ``tree.kdop_slabs(nodes)`` or from a ``tree.kdop`` holding cdcore's
    ``KdopData`` (``dirs``, ``lo``, ``hi``); None when the tree carries no slabs."""
    if hasattr(tree, "kdop_slabs"):
        return tree.kdop_slabs(nodes)
    kd = getattr(tree, "kdop", None)
    if kd is not None and hasattr(kd, "dirs"):
        nodes = np.asarray(nodes)
        return kd.dirs, kd.lo[nodes], kd.hi[nodes]
    return None


def _kind(tree) -> str:
    if tree.family == "sphere":
        return "sphere"
    if tree.family == "kdop" and (hasattr(tree, "kdop_slabs") or getattr(tree, "kdop", None) is not None):
        return "kdop"
    return "box"


class _KdopCache:
    """Polytopes of a k-DOP tree in its own frame, keyed on the slab values (rigid trees
    recompute nothing from frame to frame)."""

    def __init__(self):
        self.key = None
        self.value = None

    def get(self, tree, nodes):
        normals, mins, maxs = kdop_slabs_of(tree, nodes)
        h = hashlib.blake2b(np.ascontiguousarray(normals).tobytes(), digest_size=16)
        h.update(np.ascontiguousarray(mins).tobytes())
        h.update(np.ascontiguousarray(maxs).tobytes())
        key = h.digest()
        if key != self.key:
            self.key, self.value = key, kdop_wireframes(normals, mins, maxs)
        return self.value


# ---- the layer ------------------------------------------------------------------------
class HierarchyLayer:
    """The selected nodes of one tree, drawn as one line actor (plus an optional
    translucent face actor for boxes sharing its points, and the pair highlight).

    ``plotter``: anything with pyvista's ``add_mesh`` / ``remove_actor`` / ``render``
    (a ``pyvista.Plotter`` or a pyvistaqt ``QtInteractor``). ``name`` prefixes the actor
    names. The layer never renders; the caller calls ``plotter.render()`` once per frame.
    """

    def __init__(self, plotter, name: str = "hierarchy", line_width: float = 1.0, faces: bool = False,
                 face_opacity: float = 0.12, segments: int = SPHERE_SEGMENTS, highlight_width: float = 4.0):
        self.plotter = plotter
        self.name = name
        self.segments = int(segments)
        self._line_width = float(line_width)
        self._faces = bool(faces)
        self._face_opacity = float(face_opacity)
        self._visible = True
        self.polydata = pv.PolyData()
        self.face_polydata = pv.PolyData()
        self.actor = None
        self.face_actor = None
        self._key = None  # (kind, n_nodes, extra): what the current arrays fit
        self.nodes = np.zeros(0, dtype=np.int64)
        self._cell_node = np.zeros(0, dtype=np.int64)  # node slot (0..k-1) of each line cell
        self._kdop = _KdopCache()
        self._highlight = NodeHighlight(plotter, name + "-highlight", highlight_width)
        self._circle_edges = circle_edges(self.segments)
        self._per_node = None
        self._drawn = None
        self._heat_zero = False
        self._faces_built = False

    # ---- what is drawn ----------------------------------------------------------
    @property
    def n_cells(self) -> int:
        """Line cells drawn (12 per box, 3 * segments per sphere)."""
        return int(self.polydata.n_lines) if self._key is not None else 0

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    def update(self, tree, nodes, colors_by: str = "state", states=None, heat=None, heat_max=None,
               color=None) -> None:
        """Draw ``nodes`` (ids) of ``tree`` coloured ``"state"`` (``states``: (n,) per node
        of the tree, default all not visited), ``"heat"`` (``heat``: (n,) counts, scaled by
        ``heat_max`` or their max over the drawn nodes) or ``"solid"`` (``color`` RGB)."""
        if colors_by not in ("state", "heat", "solid"):
            raise ValueError(f"colors_by: expected 'state', 'heat' or 'solid', got {colors_by!r}")
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        kind = _kind(tree)
        k = len(nodes)
        if k == 0:
            self._set_empty()
            return
        if kind == "kdop":
            pts, edges, owner = self._kdop.get(tree, nodes)
            R, t = tree.pose[:3, :3], tree.pose[:3, 3]
            key = (kind, k, self._kdop.key)
        else:
            key = (kind, k, self.segments if kind == "sphere" else 0)
        in_place = key == self._key
        if not in_place:
            self._rebuild(kind, k, key, edges if kind == "kdop" else None, owner if kind == "kdop" else None)
        view = np.asarray(self.polydata.points)  # plain numpy view of the VTK point array
        if kind == "box":
            tree_box_corners(tree, nodes, out=view.reshape(k, 8, 3))
        elif kind == "sphere":
            c, r = tree_spheres(tree, nodes)
            sphere_points(c, r, tree.pose[:3, :3], self.segments, out=view.reshape(k, 3 * self.segments, 3))
        else:
            transform_into(view, pts, R, t)
        self.nodes = nodes
        self._set_colors(nodes, colors_by, states, heat, heat_max, color)
        pts_vtk = self.polydata.GetPoints()
        pts_vtk.GetData().Modified()
        pts_vtk.Modified()
        self.polydata.Modified()
        if self._faces_built:
            self.face_polydata.Modified()
        self._ensure_actors(kind)

    def _rebuild(self, kind, k, key, edges=None, owner=None):
        per = 8 if kind == "box" else 3 * self.segments
        if kind == "box":
            n_pts, lines, cell_node = 8 * k, box_lines(k), np.repeat(np.arange(k), 12)
        elif kind == "sphere":
            n_pts = per * k
            lines = _line_cells(k, per, self._circle_edges)
            cell_node = np.repeat(np.arange(k), len(self._circle_edges))
        else:
            n_pts = int(edges.max()) + 1 if len(edges) else 0
            cells = np.empty((len(edges), 3), dtype=np.int64)
            cells[:, 0] = 2
            cells[:, 1:] = edges
            lines, cell_node = cells.ravel(), owner
        pd = self.polydata
        pd.points = np.zeros((n_pts, 3), dtype=np.float32)
        pd.lines = lines
        n = len(cell_node)
        pd.cell_data.clear()
        pd.cell_data["rgb"] = np.zeros((n, 3), dtype=np.uint8)
        pd.cell_data["node"] = np.zeros(n, dtype=np.int32)
        pd.cell_data["state"] = np.zeros(n, dtype=np.int8)
        pd.cell_data["heat"] = np.zeros(n, dtype=np.float32)
        pd.cell_data.active_scalars_name = "rgb"
        self._cell_node = cell_node
        self._per_node = None if kind == "kdop" else n // k
        self._drawn = None
        self._heat_zero = False
        if kind == "box" and self._faces:
            fp = self.face_polydata
            fp.SetPoints(pd.GetPoints())  # shared: one point update moves both
            fp.faces = box_faces(k)
            fp.cell_data.clear()
            fp.cell_data["rgb"] = np.zeros((6 * k, 3), dtype=np.uint8)
            fp.cell_data.active_scalars_name = "rgb"
        self._key = key
        self._faces_built = kind == "box" and self._faces

    def _set_colors(self, nodes, colors_by, states, heat, heat_max, color):
        k = len(nodes)
        st = (np.asarray(states)[nodes] if states is not None else np.full(k, NOT_VISITED, dtype=np.int8))
        ht = np.asarray(heat)[nodes] if heat is not None else None
        if colors_by == "state":
            rgb = STATE_COLORS[np.clip(st, 0, len(STATE_COLORS) - 1)]
        elif colors_by == "heat":
            rgb = heat_colors(ht if ht is not None else np.zeros(k), heat_max)
        elif colors_by == "solid":
            rgb = np.broadcast_to(np.asarray(color if color is not None else STATE_COLORS[0], np.uint8), (k, 3))
        else:
            raise ValueError(f"colors_by: expected 'state', 'heat' or 'solid', got {colors_by!r}")
        cd = self.polydata.cell_data
        per = self._per_node  # cells per node when uniform (boxes, spheres), else None (k-DOPs)
        same_nodes = self._drawn is not None and np.array_equal(self._drawn, nodes)
        for name, value in (("rgb", rgb), ("state", st), ("heat", ht), ("node", None if same_nodes else nodes)):
            if value is None and name == "heat" and self._heat_zero:
                continue
            if value is None and name == "node":
                continue
            vtk_arr = cd[name]
            arr = np.asarray(vtk_arr)  # plain view: no per-write VTK bookkeeping
            if value is None:  # heat: no counts given
                arr[...] = 0
            elif per is not None:
                _fill_repeated(arr, value, k, per)
            else:
                arr[...] = value[self._cell_node]
            vtk_arr.VTKObject.Modified()
        self._heat_zero = ht is None
        self._drawn = nodes.copy()
        if self._faces_built:
            fa = self.face_polydata.cell_data["rgb"]
            _fill_repeated(np.asarray(fa), rgb, k, 6)
            fa.VTKObject.Modified()

    def _ensure_actors(self, kind):
        if self.actor is None:
            self.actor = self.plotter.add_mesh(self.polydata, scalars="rgb", rgb=True, preference="cell",
                                               line_width=self._line_width, lighting=False, name=self.name,
                                               reset_camera=False, pickable=True)
        self.actor.SetVisibility(self._visible)
        want_faces = self._faces_built
        if want_faces and self.face_actor is None:
            self.face_actor = self.plotter.add_mesh(self.face_polydata, scalars="rgb", rgb=True,
                                                    preference="cell", opacity=self._face_opacity,
                                                    lighting=False, name=self.name + "-faces",
                                                    reset_camera=False, pickable=False)
        if self.face_actor is not None:
            self.face_actor.SetVisibility(self._visible and want_faces)

    def _set_empty(self):
        self._drawn = None
        self._faces_built = False
        self.nodes = np.zeros(0, dtype=np.int64)
        self._key = None
        self._cell_node = np.zeros(0, dtype=np.int64)
        self.polydata.points = np.zeros((0, 3), dtype=np.float32)
        self.polydata.lines = np.zeros(0, dtype=np.int64)
        self.polydata.cell_data.clear()
        for a in (self.actor, self.face_actor):
            if a is not None:
                a.SetVisibility(False)

    # ---- cells to nodes (picking) ------------------------------------------------
    def node_of_cell(self, cell_id: int) -> int:
        """The tree node drawn by line cell ``cell_id`` (e.g. from a cell picker)."""
        return int(self.nodes[self._cell_node[cell_id]])

    # ---- appearance -------------------------------------------------------------
    def set_visible(self, visible: bool) -> None:
        self._visible = bool(visible)
        if self.actor is not None:
            self.actor.SetVisibility(self._visible and self._key is not None)
        if self.face_actor is not None:
            self.face_actor.SetVisibility(self._visible and self._faces_built and self._key is not None)
        self._highlight.set_visible(visible)

    @property
    def visible(self) -> bool:
        return self._visible

    def set_line_width(self, width: float) -> None:
        self._line_width = float(width)
        if self.actor is not None:
            self.actor.GetProperty().SetLineWidth(self._line_width)

    def set_faces(self, faces: bool, opacity: float | None = None) -> None:
        """Translucent box faces on/off (boxes only; takes effect at the next ``update``
        if the faces were never built)."""
        if opacity is not None:
            self._face_opacity = float(opacity)
            if self.face_actor is not None:
                self.face_actor.GetProperty().SetOpacity(self._face_opacity)
        if bool(faces) != self._faces:
            self._faces = bool(faces)
            self._key = None  # rebuild the face cells at the next update

    def clear(self) -> None:
        """Remove the layer's actors from the plotter (the layer can be updated again)."""
        for a in (self.actor, self.face_actor):
            if a is not None:
                self.plotter.remove_actor(a, render=False)
        self.actor = self.face_actor = None
        self._set_empty()
        self._highlight.clear()

    # ---- stepper pair ---------------------------------------------------------------
    def highlight(self, tree_a, node_a, tree_b, node_b) -> None:
        """Draw node ``node_a`` of ``tree_a`` and ``node_b`` of ``tree_b`` thicker, in
        ``PAIR_COLORS`` (either node may be None)."""
        self._highlight.show(tree_a, node_a, tree_b, node_b)

    def clear_highlight(self) -> None:
        self._highlight.hide()


class NodeHighlight:
    """A few nodes (the stepper's current pair) drawn thick in their own small actor."""

    def __init__(self, plotter, name: str = "pair-highlight", line_width: float = 4.0,
                 segments: int = SPHERE_SEGMENTS):
        self.plotter = plotter
        self.name = name
        self.line_width = float(line_width)
        self.segments = segments
        self.polydata = pv.PolyData()
        self.actor = None
        self._visible = True
        self._shown = False

    def show(self, tree_a, node_a, tree_b=None, node_b=None) -> None:
        pts, lines, rgb, base = [], [], [], 0
        for slot, (tree, node) in enumerate(((tree_a, node_a), (tree_b, node_b))):
            if tree is None or node is None or node < 0:
                continue
            p, cells = _node_wire(tree, int(node), self.segments)
            pts.append(p)
            e = cells + base
            c = np.empty((len(e), 3), dtype=np.int64)
            c[:, 0] = 2
            c[:, 1:] = e
            lines.append(c.ravel())
            rgb.append(np.broadcast_to(PAIR_COLORS[slot], (len(e), 3)))
            base += len(p)
        if not pts:
            self.hide()
            return
        new = pv.PolyData(np.concatenate(pts).astype(np.float32), lines=np.concatenate(lines))
        new.cell_data["rgb"] = np.concatenate(rgb).astype(np.uint8)
        self.polydata.shallow_copy(new)  # keep the actor and its mapper's input
        self.polydata.cell_data.active_scalars_name = "rgb"
        self.polydata.Modified()
        if self.actor is None:
            self.actor = self.plotter.add_mesh(self.polydata, scalars="rgb", rgb=True, preference="cell",
                                               line_width=self.line_width, lighting=False, name=self.name,
                                               reset_camera=False, pickable=False)
        self._shown = True
        self.actor.SetVisibility(self._visible)

    def hide(self) -> None:
        self._shown = False
        if self.actor is not None:
            self.actor.SetVisibility(False)

    def set_visible(self, visible: bool) -> None:
        self._visible = bool(visible)
        if self.actor is not None:
            self.actor.SetVisibility(self._visible and self._shown)

    def clear(self) -> None:
        if self.actor is not None:
            self.plotter.remove_actor(self.actor, render=False)
        self.actor = None
        self._shown = False


def _node_wire(tree, node: int, segments: int):
    """Points and (m, 2) edges of one node's wireframe."""
    kind = _kind(tree)
    if kind == "sphere":
        c, r = tree.world_spheres([node])
        return sphere_points(c, r, tree.pose[:3, :3], segments)[0], circle_edges(segments)
    if kind == "kdop":
        normals, mins, maxs = kdop_slabs_of(tree, [node])
        v, e = kdop_polytope_edges(normals, mins[0], maxs[0])
        return v @ tree.pose[:3, :3].T + tree.pose[:3, 3], e
    c, ax, e = tree.world_boxes([node])
    return box_corners(c, ax, e)[0], BOX_EDGES


__all__ = ["HierarchyLayer", "NodeHighlight", "kdop_polytope_edges", "kdop_wireframes", "kdop_slabs_of",
           "box_corners", "sphere_points", "BOX_EDGES", "STATE_COLORS", "to_float"]
