"""The contacts layer of the 3-D view: each intersecting triangle pair's intersection
segment, its normal as an arrow whose length grows with the penetration depth, the deepest
contact emphasised and the contact selected in the Contacts table marked.

A ``SceneView`` layer (``set_scene``, ``update``, ``clear``, ``legend_entries``): it draws
``view.contacts`` (``app.model.contacts.FrameContacts``) and nothing else.
"""
from __future__ import annotations

import numpy as np

from ..model.framing import scene_bounds
from .colors import CONTACT_COLOR, to_float

NORMAL_COLOR = (0, 70, 150)        # deep blue arrows (darker than "separated" blue, and arrow-shaped)
DEEPEST_COLOR = (120, 0, 60)       # dark crimson: the deepest contact, thicker and larger
SELECTED_COLOR = (0, 158, 115)     # bluish green ring: the contact chosen in the table

ARROW_MIN = 0.008  # arrow length at depth 0, as a fraction of the scene's diagonal
ARROW_GAIN = 0.05  # extra length of the deepest contact's arrow, same unit
ARROW_SIDES = 6  # facets around an arrow: 30 triangles (10 sides: 54; pyvista's 20: twice that again). Under
# software GL the arrows of hand-ball's ~280 contacts were 15,000 triangles, more than its meshes
MAX_ARROWS = 256  # normals drawn for the deepest contacts only (rows are sorted deepest first): hundreds of
# overlapping arrows on one contact patch are not read one by one; every contact keeps its segment


class ContactsLayer:
    """Actors are made once per scene and their PolyData replaced in place every frame
    (``copy_from``): re-adding actors each frame cost tens of ms under software GL."""

    _STYLE = {  # name: (rgb, add_mesh options)
        "contact-segments": (CONTACT_COLOR, dict(line_width=4, lighting=False)),
        "contact-ends": (CONTACT_COLOR, dict(point_size=7, render_points_as_spheres=True, lighting=False)),
        "contact-normals": (NORMAL_COLOR, dict()),
        "contact-deepest": (DEEPEST_COLOR, dict(line_width=9, lighting=False)),
        "contact-deepest-ends": (DEEPEST_COLOR, dict(point_size=15, render_points_as_spheres=True, lighting=False)),
        "contact-deepest-normal": (DEEPEST_COLOR, dict()),
        "contact-selected": (SELECTED_COLOR, dict(point_size=22, render_points_as_spheres=True, lighting=False)),
    }

    def __init__(self, plotter):
        self.plotter = plotter
        self.diag = 1.0
        self.selected: int | None = None
        self.contacts = None
        self.enabled = True
        self.data: dict = {}
        self.actors: dict = {}
        self._shape: dict = {}  # name: (cell kind, points, cell array length) now in its PolyData

    def set_scene(self, scene) -> None:
        self.clear()
        b = scene_bounds(scene)
        self.diag = float(np.linalg.norm(b[1::2] - b[0::2])) or 1.0
        self.selected = None
        self.data, self.actors, self._shape = {}, {}, {}

    def clear(self) -> None:
        for a in self.actors.values():
            a.SetVisibility(False)
        self.contacts = None

    def _put(self, name, points, lines=None, faces=None) -> None:
        """Show ``points`` (n, 3) under ``name`` as ``lines`` / ``faces`` (VTK cell arrays) or,
        with neither, as a point cloud. The PolyData and its actor are made on first use;
        after that the point array is rewritten in place while the number of points stays
        the same (cells are then unchanged: they depend on the count only), else replaced
        through VTK directly (pyvista's ``points`` / ``lines`` setters cost ~1 ms each)."""
        import pyvista as pv
        from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy
        from vtkmodules.vtkCommonCore import vtkPoints
        from vtkmodules.vtkCommonDataModel import vtkCellArray
        pts = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
        n = len(pts)
        poly = self.data.get(name)
        if poly is None:
            if n == 0:
                return
            poly = pv.PolyData()
        kind = "lines" if lines is not None else "faces" if faces is not None else "verts"
        cells = lines if lines is not None else faces if faces is not None else None
        key = (kind, n, None if cells is None else len(cells))
        vp = poly.GetPoints()
        if key == self._shape.get(name) and vp is not None:
            vtk_to_numpy(vp.GetData())[...] = pts  # same count: the same cells, points in place
            vp.GetData().Modified()
            vp.Modified()
        else:
            vp = vtkPoints()
            vp.SetData(numpy_to_vtk(pts, deep=True))
            poly.SetPoints(vp)
            if cells is None:
                cells = _vert_cells(n)
            ca = vtkCellArray()
            ca.ImportLegacyFormat(numpy_to_vtkIdTypeArray(np.ascontiguousarray(cells, dtype=np.int64), deep=True))
            poly.SetVerts(ca if kind == "verts" else vtkCellArray())
            poly.SetLines(ca if kind == "lines" else vtkCellArray())
            poly.SetPolys(ca if kind == "faces" else vtkCellArray())
            self._shape[name] = key
        poly.Modified()
        if name not in self.actors:
            rgb, opts = self._STYLE[name]
            self.data[name] = poly
            self.actors[name] = self.plotter.add_mesh(poly, color=to_float(rgb), name=name,
                                                      reset_camera=False, pickable=False, **opts)
        self.actors[name].SetVisibility(n > 0)

    def _hide(self, name) -> None:
        if name in self.actors:
            self.actors[name].SetVisibility(False)

    def select(self, row: int | None) -> None:
        self.selected = row
        self._draw_selected()

    def arrow_lengths(self, depths: np.ndarray) -> np.ndarray:
        """Arrow length per contact: ARROW_MIN of the scene diagonal at depth 0, growing
        linearly with the depth up to (ARROW_MIN + ARROW_GAIN) x diagonal for the deepest."""
        top = float(depths.max()) if len(depths) else 0.0
        scale = depths / top if top > 0 else np.zeros_like(depths)
        return self.diag * (ARROW_MIN + ARROW_GAIN * scale)

    def update(self, view, options=None) -> None:
        c = getattr(view, "contacts", None)
        if not self.enabled or c is None or len(c) == 0:
            self.clear()
            return
        self.contacts = c
        k = len(c)
        pts = np.asarray(c.points, dtype=np.float64).reshape(-1, 3)
        self._put("contact-segments", pts, lines=_segment_cells(k))
        self._put("contact-ends", pts)
        lengths = self.arrow_lengths(np.asarray(c.depths))
        shown = min(k, MAX_ARROWS)
        self._arrows("contact-normals", c.points[:shown].mean(axis=1), c.normals[:shown], lengths[:shown])
        d = c.deepest
        seg = np.asarray(c.points[d], dtype=np.float64)
        self._put("contact-deepest", seg, lines=_segment_cells(1))
        self._put("contact-deepest-ends", seg)
        self._arrows("contact-deepest-normal", seg.mean(axis=0)[None], c.normals[d][None], lengths[d:d + 1],
                     width=2.0)
        if self.selected is not None and self.selected >= k:
            self.selected = None
        self._draw_selected()

    def _arrows(self, name, origins, directions, lengths, width=1.0):
        """One arrow per origin along its direction, ``lengths`` long: a template arrow
        placed by numpy (pyvista's glyph filter rebuilt it every frame: ~10 ms per call)."""
        d = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
        norm = np.linalg.norm(d, axis=1)
        ok = norm > 0
        if not ok.any():
            self._hide(name)
            return
        tpl_pts, tpl_faces, n_tpl = _arrow_template(width)
        o = np.asarray(origins, dtype=np.float64).reshape(-1, 3)[ok]
        x = d[ok] / norm[ok, None]
        y, z = _perpendiculars(x)
        ln = np.asarray(lengths, dtype=np.float64)[ok, None, None]
        # template (m, 3) in (along, across, across) coordinates -> world, per arrow
        basis = np.stack([x, y, z], axis=1)  # (k, 3, 3): rows are the arrow's axes
        pts = o[:, None, :] + ln * (tpl_pts @ basis)  # (m, 3) @ (k, 3, 3) -> (k, m, 3)
        k = len(o)
        faces = (tpl_faces[None, :] + (np.arange(k) * n_tpl)[:, None] * _face_offset_mask(tpl_faces)[None, :]).ravel()
        self._put(name, pts.reshape(-1, 3), faces=faces)

    def _draw_selected(self):
        c, r = self.contacts, self.selected
        if c is None or r is None or r >= len(c):
            self._hide("contact-selected")
            return
        self._put("contact-selected", np.asarray(c.points[r], dtype=np.float64))

    def visible(self, name) -> bool:
        a = self.actors.get(name)
        return a is not None and bool(a.GetVisibility())

    def legend_entries(self) -> list:
        if self.contacts is None:
            return []
        normal = "contact normal (length ~ depth)"
        if len(self.contacts) > MAX_ARROWS:
            normal = f"contact normal (length ~ depth; deepest {MAX_ARROWS})"
        out = [("contact segment", CONTACT_COLOR), (normal, NORMAL_COLOR),
               ("deepest contact", DEEPEST_COLOR)]
        if self.selected is not None:
            out.append(("selected contact", SELECTED_COLOR))
        return out


# ---- cell arrays and the arrow template -------------------------------------------------------
def _segment_cells(k: int) -> np.ndarray:
    """VTK line cells (2, a, b) of k segments over points 0..2k-1."""
    cells = np.empty((k, 3), dtype=np.int64)
    cells[:, 0] = 2
    cells[:, 1:] = np.arange(2 * k).reshape(k, 2)
    return cells.ravel()


def _vert_cells(n: int) -> np.ndarray:
    cells = np.empty((n, 2), dtype=np.int64)
    cells[:, 0] = 1
    cells[:, 1] = np.arange(n)
    return cells.ravel()


_ARROWS: dict = {}


def _arrow_template(width: float):
    """pyvista's arrow (unit length along +x from the origin) as (points (m, 3), its face
    cells, m), made once per width."""
    got = _ARROWS.get(width)
    if got is None:
        import pyvista as pv
        a = pv.Arrow(tip_length=0.3, tip_radius=0.08 * width, shaft_radius=0.025 * width, tip_resolution=ARROW_SIDES,
                     shaft_resolution=ARROW_SIDES).triangulate()
        got = _ARROWS[width] = (np.asarray(a.points, dtype=np.float64), np.asarray(a.faces, dtype=np.int64),
                                a.n_points)
    return got


_MASKS: dict = {}


def _face_offset_mask(faces: np.ndarray) -> np.ndarray:
    """1 where ``faces`` (a VTK cell array) holds a point id, 0 where it holds a count."""
    key = faces.tobytes()
    m = _MASKS.get(key)
    if m is None:
        m = np.ones(len(faces), dtype=np.int64)
        i = 0
        while i < len(faces):
            m[i] = 0
            i += int(faces[i]) + 1
        _MASKS[key] = m
    return m


def _perpendiculars(x: np.ndarray):
    """Two unit vectors completing each unit row of ``x`` to a right-handed frame."""
    helper = np.where(np.abs(x[:, :1]) < 0.9, np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    y = _cross(x, helper)
    y /= np.sqrt(np.einsum("ij,ij->i", y, y))[:, None]
    return y, _cross(x, y)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (k, 3) arrays (``np.cross`` costs ~0.3 ms of axis juggling
    per call on a few hundred rows)."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out
