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

import numpy as np
import pyvista as pv

from app.model.trees import NOT_VISITED
from cdcore import layout as L

from .colors import PAIR_COLORS, STATE_COLORS, heat_colors, to_float

# ---- geometry: cdcore.geometry (pure numpy), re-exported for the adapters below ----
from cdcore.geometry import (  # noqa: F401 (re-exported for the adapters and their tests)
    BOX_EDGES, BOX_QUADS, BOX_SIGNS, SPHERE_SEGMENTS, _corners, _fill_repeated, _line_cells, _pair_tables,
    _rotate, box_corners, box_faces, box_lines, circle_edges, circle_template, kdop_polytope_edges,
    kdop_wireframes, sphere_points, transform_into)


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



def direct_input(actor, polydata):
    """Feed ``actor``'s mapper ``polydata`` itself. pyvista's ``add_mesh(scalars=...)`` may put
    its ``ActiveScalarsAlgorithm`` (a Python ``vtkAlgorithm``) between them: the renderer's
    frustum culler asks every actor's bounds, and for an input modified since the last render
    that re-runs the algorithm (a call back into Python, a shallow copy of the data and
    pipeline requests) every frame. The PolyData already has ``rgb`` as its active scalars,
    so the mapper draws the same colours from it directly."""
    actor.GetMapper().SetInputData(polydata)
    return actor


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
                 face_opacity: float = 0.12, segments: int = SPHERE_SEGMENTS, highlight_width: float = 6.0):
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
        self._views: dict = {}  # numpy views of the line PolyData's arrays (see _view)
        self._vtk_arrays: dict = {}

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
        view = self._view("points")  # plain numpy view of the VTK point array
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
        self._views, self._vtk_arrays = {}, {}
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

    def _view(self, name: str) -> np.ndarray:
        """A numpy view of the line PolyData's point array (``"points"``) or cell array
        ``name``, kept until the arrays are replaced (pyvista's accessors cost ~50 us each,
        a dozen times a frame)."""
        v = self._views.get(name)
        if v is None:
            from vtkmodules.util.numpy_support import vtk_to_numpy
            pd = self.polydata
            arr = pd.GetPoints().GetData() if name == "points" else pd.GetCellData().GetArray(name)
            v = vtk_to_numpy(arr)
            if name == "rgb":
                v = v.reshape(-1, 3)
            self._vtk_arrays[name] = arr
            self._views[name] = v
        return v

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
        per = self._per_node  # cells per node when uniform (boxes, spheres), else None (k-DOPs)
        same_nodes = self._drawn is not None and np.array_equal(self._drawn, nodes)
        for name, value in (("rgb", rgb), ("state", st), ("heat", ht), ("node", None if same_nodes else nodes)):
            if value is None and name == "heat" and self._heat_zero:
                continue
            if value is None and name == "node":
                continue
            arr = self._view(name)  # plain view: no per-write VTK bookkeeping
            if value is None:  # heat: no counts given
                arr[...] = 0
            elif per is not None:
                _fill_repeated(arr, value, k, per)
            else:
                arr[...] = value[self._cell_node]
            self._vtk_arrays[name].Modified()
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
            direct_input(self.actor, self.polydata)
        self.actor.SetVisibility(self._visible)
        want_faces = self._faces_built
        if want_faces and self.face_actor is None:
            self.face_actor = self.plotter.add_mesh(self.face_polydata, scalars="rgb", rgb=True,
                                                    preference="cell", opacity=self._face_opacity,
                                                    lighting=False, name=self.name + "-faces",
                                                    reset_camera=False, pickable=False)
            direct_input(self.face_actor, self.face_polydata)
        if self.face_actor is not None:
            self.face_actor.SetVisibility(self._visible and want_faces)

    def _set_empty(self):
        if self._key is None and self.polydata.GetNumberOfPoints() == 0:
            for a in (self.actor, self.face_actor):  # already empty: nothing to reallocate (pyvista's
                if a is not None:                     # setters cost ~1 ms a frame for a tree drawing nothing)
                    a.SetVisibility(False)
            return
        self._views, self._vtk_arrays = {}, {}
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
    """The stepper's current node pair: thick wireframes in ``PAIR_COLORS`` (A, B) over a
    translucent fill of the same colour, so the pair stands out of hundreds of boxes; two
    small actors (lines, faces) whose PolyData are replaced in place."""

    def __init__(self, plotter, name: str = "pair-highlight", line_width: float = 6.0,
                 segments: int = SPHERE_SEGMENTS, fill_opacity: float = 0.22):
        self.plotter = plotter
        self.name = name
        self.line_width = float(line_width)
        self.fill_opacity = float(fill_opacity)
        self.segments = segments
        self.polydata = pv.PolyData()
        self.fill_polydata = pv.PolyData()
        self.actor = None
        self.fill_actor = None
        self._visible = True
        self._shown = False

    def show(self, tree_a, node_a, tree_b=None, node_b=None) -> None:
        pts, lines, rgb, base = [], [], [], 0
        fills = []
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
            surf = _node_surface(tree, int(node))
            if surf is not None and surf.n_cells:
                surf.cell_data["rgb"] = np.broadcast_to(PAIR_COLORS[slot], (surf.n_cells, 3)).astype(np.uint8)
                fills.append(surf)
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
            direct_input(self.actor, self.polydata)
        fill = pv.merge(fills) if len(fills) > 1 else (fills[0] if fills else pv.PolyData())
        self.fill_polydata.shallow_copy(fill)
        if fills:
            self.fill_polydata.cell_data.active_scalars_name = "rgb"
        self.fill_polydata.Modified()
        if self.fill_actor is None and fills:
            self.fill_actor = self.plotter.add_mesh(self.fill_polydata, scalars="rgb", rgb=True, preference="cell",
                                                    opacity=self.fill_opacity, lighting=False,
                                                    name=self.name + "-fill", reset_camera=False, pickable=False)
            direct_input(self.fill_actor, self.fill_polydata)
        self._shown = True
        self._apply_visibility()

    def _apply_visibility(self):
        on = self._visible and self._shown
        if self.actor is not None:
            self.actor.SetVisibility(on)
        if self.fill_actor is not None:
            self.fill_actor.SetVisibility(on and self.fill_polydata.n_cells > 0)

    def hide(self) -> None:
        self._shown = False
        self._apply_visibility()

    def set_visible(self, visible: bool) -> None:
        self._visible = bool(visible)
        self._apply_visibility()

    @property
    def visible(self) -> bool:
        return self.actor is not None and bool(self.actor.GetVisibility())

    def clear(self) -> None:
        for a in (self.actor, self.fill_actor):
            if a is not None:
                self.plotter.remove_actor(a, render=False)
        self.actor = self.fill_actor = None
        self._shown = False


def _node_surface(tree, node: int):
    """A closed surface of one node's volume (box, sphere or k-DOP polytope), world frame."""
    kind = _kind(tree)
    if kind == "sphere":
        c, r = tree.world_spheres([node])
        return pv.Sphere(radius=float(r[0]), center=c[0], theta_resolution=20, phi_resolution=12)
    if kind == "kdop":
        from cdcore.realign import kdop_polytope
        v, faces = kdop_polytope(tree.kdop.slabs[node], tree.kdop.bv)
        if len(v) < 4 or not len(faces):
            return None
        cells = np.concatenate([np.concatenate([[len(f)], f]) for f in faces]).astype(np.int64)
        return pv.PolyData(np.asarray(v) @ tree.pose[:3, :3].T + tree.pose[:3, 3], faces=cells)
    c, ax, e = tree.world_boxes([node])
    return pv.PolyData(box_corners(c, ax, e)[0].astype(np.float64), faces=box_faces(1))


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
