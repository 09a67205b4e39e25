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

    def set_scene(self, scene) -> None:
        self.clear()
        b = scene_bounds(scene)
        self.diag = float(np.linalg.norm(b[1::2] - b[0::2])) or 1.0
        self.selected = None
        self.data, self.actors = {}, {}

    def clear(self) -> None:
        for a in self.actors.values():
            a.SetVisibility(False)
        self.contacts = None

    def _put(self, name, poly) -> None:
        """Show ``poly`` under ``name`` (the actor is made on first use, then reused)."""
        if name not in self.actors:
            rgb, opts = self._STYLE[name]
            self.data[name] = poly.copy()
            self.actors[name] = self.plotter.add_mesh(self.data[name], color=to_float(rgb), name=name,
                                                      reset_camera=False, pickable=False, **opts)
        else:
            self.data[name].copy_from(poly)
        self.actors[name].SetVisibility(poly.n_points > 0)

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
        import pyvista as pv
        self.contacts = c
        k = len(c)
        pts = np.asarray(c.points, dtype=np.float64).reshape(-1, 3)
        lines = np.hstack([np.full((k, 1), 2), np.arange(2 * k).reshape(k, 2)]).ravel()
        self._put("contact-segments", pv.PolyData(pts, lines=lines))
        self._put("contact-ends", pv.PolyData(pts))
        lengths = self.arrow_lengths(np.asarray(c.depths))
        self._arrows("contact-normals", c.points.mean(axis=1), c.normals, lengths)
        d = c.deepest
        seg = np.asarray(c.points[d], dtype=np.float64)
        self._put("contact-deepest", pv.PolyData(seg, lines=np.array([2, 0, 1])))
        self._put("contact-deepest-ends", pv.PolyData(seg))
        self._arrows("contact-deepest-normal", seg.mean(axis=0)[None], c.normals[d][None], lengths[d:d + 1],
                     width=2.0)
        if self.selected is not None and self.selected >= k:
            self.selected = None
        self._draw_selected()

    def _arrows(self, name, origins, directions, lengths, width=1.0):
        import pyvista as pv
        ok = np.linalg.norm(directions, axis=1) > 0
        if not ok.any():
            self._hide(name)
            return
        cloud = pv.PolyData(np.asarray(origins, dtype=np.float64)[ok])
        cloud["vec"] = np.asarray(directions, dtype=np.float64)[ok] * np.asarray(lengths)[ok, None]
        cloud["len"] = np.asarray(lengths, dtype=np.float64)[ok]
        arrow = pv.Arrow(tip_length=0.3, tip_radius=0.08 * width, shaft_radius=0.025 * width)
        glyphs = cloud.glyph(orient="vec", scale="len", factor=1.0, geom=arrow)
        self._put(name, pv.PolyData(glyphs.points, faces=glyphs.faces) if glyphs.n_points else glyphs)

    def _draw_selected(self):
        import pyvista as pv
        c, r = self.contacts, self.selected
        if c is None or r is None or r >= len(c):
            self._hide("contact-selected")
            return
        self._put("contact-selected", pv.PolyData(np.asarray(c.points[r], dtype=np.float64)))

    def visible(self, name) -> bool:
        a = self.actors.get(name)
        return a is not None and bool(a.GetVisibility())

    def legend_entries(self) -> list:
        if self.contacts is None:
            return []
        out = [("contact segment", CONTACT_COLOR), ("contact normal (length ~ depth)", NORMAL_COLOR),
               ("deepest contact", DEEPEST_COLOR)]
        if self.selected is not None:
            out.append(("selected contact", SELECTED_COLOR))
        return out
