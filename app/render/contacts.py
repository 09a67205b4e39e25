"""The contacts layer of the 3-D view: each intersecting triangle pair's intersection
segment, its normal as an arrow whose length grows with the penetration depth, the deepest
contact emphasised and the contact selected in the Contacts table marked.

A ``SceneView`` layer (``set_scene``, ``update``, ``clear``, ``legend_entries``): it draws
``view.contacts`` (``app.model.contacts.FrameContacts``) and nothing else.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray

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
        self._bufs: dict = {}  # name: point buffer, cell templates and the count now shown (``_put``)
        self._arrow_width: dict = {}

    def set_scene(self, scene) -> None:
        self.clear()
        b = scene_bounds(scene)
        self.diag = float(np.linalg.norm(b[1::2] - b[0::2])) or 1.0
        self.selected = None
        self.data, self.actors, self._bufs = {}, {}, {}

    def clear(self) -> None:
        for a in self.actors.values():
            a.SetVisibility(False)
        self.contacts = None

    def _put(self, name, points, cells: str = "verts", k: int | None = None) -> None:
        """Show ``points`` (n, 3) under ``name`` as ``cells``: ``"verts"`` (a point cloud),
        ``"segments"`` (point pairs 2i, 2i+1) or ``"arrows"`` (``k`` arrows of the template's
        points each). Nothing of the frame's size is allocated: points go into a buffer of
        the layer (grown by doubling) and the PolyData's VTK arrays wrap that buffer and the
        cell templates made once per capacity (the cells of k elements are those of the
        first k of any larger count); a new count only sets the arrays' tuple counts."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        self._put_buffer(name, len(pts), cells, k)[...] = pts
        self._commit(name)

    def _put_buffer(self, name, n: int, cells: str = "verts", k: int | None = None) -> np.ndarray:
        """The (n, 3) point buffer of ``name``, sized for ``n`` points in ``cells`` (see
        ``_put``): write the points into it, then call ``_commit(name)``."""
        k = n if k is None else k  # elements: points (verts), segments, arrows
        if cells == "segments":
            k = n // 2
        buf = self._bufs.get(name)
        width = self._arrow_width.get(name, 1.0)
        per = {"verts": 1, "segments": 2}.get(cells) or _arrow_template(width)[2]  # points per element
        poly = self.data.get(name)
        if poly is None:
            poly = self.data[name] = pv.PolyData()
        if buf is None or buf["cap"] < k or buf["cells"] != cells or buf["per"] != per or poly.GetPoints() is None:
            cap = max(16, 1 << int(np.ceil(np.log2(max(k, 1))))) if buf is None or buf["cap"] < k else buf["cap"]
            offsets, conn = _cell_template(cells, cap, width)
            buf = self._bufs[name] = {"cap": cap, "cells": cells, "per": per, "pts": np.zeros((cap * per, 3)),
                                      "offsets": offsets, "conn": conn, "n": -1}
            # VTK arrays over the whole capacity, made once: a count change sets their
            # tuple counts (no reallocation below their size, so they keep viewing the
            # buffers); new wrappers, a new vtkPoints and three new cell arrays per count
            # change cost ~15x the point write itself, and counts change nearly every frame
            vpts = numpy_to_vtk(buf["pts"], deep=False)
            voff = numpy_to_vtkIdTypeArray(offsets, deep=False)
            vconn = numpy_to_vtkIdTypeArray(conn, deep=False)
            vp = vtkPoints()
            vp.SetData(vpts)
            ca = vtkCellArray()
            ca.SetData(voff, vconn)
            poly.SetPoints(vp)
            empty = vtkCellArray()
            poly.SetVerts(ca if cells == "verts" else empty)
            poly.SetLines(ca if cells == "segments" else empty)
            poly.SetPolys(ca if cells == "arrows" else empty)
            buf["vtk"] = (vp, ca, vpts, voff, vconn)  # the wrappers hold the numpy buffers alive
        if buf["n"] != n and n == 0:  # nothing to show (the actor is hidden): VTK would free
            buf["n"] = 0                 # an array set to 0 tuples, detaching it from the buffer
        elif buf["n"] != n:
            vp, ca, vpts, voff, vconn = buf["vtk"]
            per_cell = len(buf["offsets"]) - 1  # cells of the whole capacity
            n_cells = per_cell * k // buf["cap"]
            vpts.SetNumberOfTuples(n)
            voff.SetNumberOfTuples(n_cells + 1)
            vconn.SetNumberOfTuples(int(buf["offsets"][n_cells]))
            for o in (vpts, voff, vconn, ca):
                o.Modified()
            buf["n"] = n
        return buf["pts"][:n]

    def _commit(self, name) -> None:
        """The points of ``name`` were written: mark them modified, show the actor."""
        poly = self.data[name]
        vp = poly.GetPoints()
        n = self._bufs[name]["n"]
        vp.GetData().Modified()
        vp.Modified()
        poly.Modified()
        if name not in self.actors:
            if n == 0:
                return
            rgb, opts = self._STYLE[name]
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
        self._put("contact-segments", pts, "segments")
        self._put("contact-ends", pts)
        lengths = self.arrow_lengths(np.asarray(c.depths))
        shown = min(k, MAX_ARROWS)
        self._arrows("contact-normals", c.points[:shown].mean(axis=1), c.normals[:shown], lengths[:shown])
        d = c.deepest
        seg = np.asarray(c.points[d], dtype=np.float64)
        self._put("contact-deepest", seg, "segments")
        self._put("contact-deepest-ends", seg)
        self._arrows("contact-deepest-normal", seg.mean(axis=0)[None], c.normals[d][None], lengths[d:d + 1],
                     width=2.0)
        if self.selected is not None and self.selected >= k:
            self.selected = None
        self._draw_selected()

    def _arrows(self, name, origins, directions, lengths, width=1.0):
        """One arrow per origin along its direction, ``lengths`` long: a template arrow
        placed by numpy (pyvista's glyph filter rebuilt it every frame: ~10 ms per call),
        written straight into the layer's point buffer."""
        d = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
        norm = np.linalg.norm(d, axis=1)
        ok = norm > 0
        if not ok.any():
            self._hide(name)
            return
        self._arrow_width[name] = width
        tpl_pts, _tpl_faces, n_tpl = _arrow_template(width)
        o = np.asarray(origins, dtype=np.float64).reshape(-1, 3)[ok]
        x = d[ok] / norm[ok, None]
        y, z = _perpendiculars(x)
        k = len(o)
        basis = np.stack([x, y, z], axis=1)  # (k, 3, 3): rows are the arrow's axes
        basis *= np.asarray(lengths, dtype=np.float64)[ok, None, None]
        out = self._put_buffer(name, k * n_tpl, "arrows", k).reshape(k, n_tpl, 3)
        np.matmul(tpl_pts, basis, out=out)  # template (m, 3) in (along, across, across) -> world
        out += o[:, None, :]
        self._commit(name)

    def _draw_selected(self):
        c, r = self.contacts, self.selected
        if c is None or r is None or r >= len(c):
            self._hide("contact-selected")
            return
        self._put("contact-selected", c.points[r])

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
def _cell_template(cells: str, cap: int, width: float = 1.0):
    """(offsets, connectivity) int64 of ``cap`` elements: ``"verts"`` one vertex cell per
    point, ``"segments"`` a line (2i, 2i+1) per segment, ``"arrows"`` the arrow template's
    triangles per arrow (its points offset by the arrow's index). The cells of the first k
    elements are a prefix of both arrays."""
    if cells == "verts":
        return np.arange(cap + 1, dtype=np.int64), np.arange(cap, dtype=np.int64)
    if cells == "segments":
        return np.arange(0, 2 * cap + 1, 2, dtype=np.int64), np.arange(2 * cap, dtype=np.int64)
    if cells != "arrows":
        raise ValueError(f"cells: expected 'verts', 'segments' or 'arrows', got {cells!r}")
    _pts, faces, n_tpl = _arrow_template(width)
    tpl_off, tpl_conn = _legacy_to_offsets(faces)
    conn = (tpl_conn[None, :] + n_tpl * np.arange(cap, dtype=np.int64)[:, None]).ravel()
    starts = (tpl_off[:-1][None, :] + len(tpl_conn) * np.arange(cap, dtype=np.int64)[:, None]).ravel()
    return np.append(starts, len(conn)).astype(np.int64), conn


def _legacy_to_offsets(cells: np.ndarray):
    """A VTK legacy cell array (n, ids..., n, ids...) as (offsets, connectivity)."""
    offsets, conn, i = [0], [], 0
    while i < len(cells):
        m = int(cells[i])
        conn.extend(int(c) for c in cells[i + 1:i + 1 + m])
        offsets.append(len(conn))
        i += m + 1
    return np.asarray(offsets, dtype=np.int64), np.asarray(conn, dtype=np.int64)


_ARROWS: dict = {}


def _arrow_template(width: float):
    """pyvista's arrow (unit length along +x from the origin) as (points (m, 3), its face
    cells, m), made once per width."""
    got = _ARROWS.get(width)
    if got is None:
        a = pv.Arrow(tip_length=0.3, tip_radius=0.08 * width, shaft_radius=0.025 * width, tip_resolution=ARROW_SIDES,
                     shaft_resolution=ARROW_SIDES).triangulate()
        got = _ARROWS[width] = (np.asarray(a.points, dtype=np.float64), np.asarray(a.faces, dtype=np.int64),
                                a.n_points)
    return got


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
