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

_NAMES = ("contact-segments", "contact-ends", "contact-normals", "contact-deepest", "contact-deepest-ends",
          "contact-deepest-normal", "contact-selected")
ARROW_MIN = 0.04   # arrow length at depth 0, as a fraction of the scene's diagonal
ARROW_GAIN = 0.16  # extra length of the deepest contact's arrow, same unit


class ContactsLayer:
    def __init__(self, plotter):
        self.plotter = plotter
        self.diag = 1.0
        self.selected: int | None = None
        self.contacts = None
        self.enabled = True

    def set_scene(self, scene) -> None:
        self.clear()
        b = scene_bounds(scene)
        self.diag = float(np.linalg.norm(b[1::2] - b[0::2])) or 1.0
        self.selected = None

    def clear(self) -> None:
        for n in _NAMES:
            self.plotter.remove_actor(n, render=False)
        self.contacts = None

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
        add = dict(reset_camera=False, pickable=False, lighting=False)
        self.plotter.add_mesh(pv.PolyData(pts, lines=lines), color=to_float(CONTACT_COLOR), line_width=4,
                              name="contact-segments", **add)
        self.plotter.add_mesh(pv.PolyData(pts), color=to_float(CONTACT_COLOR), point_size=7,
                              render_points_as_spheres=True, name="contact-ends", **add)
        self._arrows("contact-normals", c.points.mean(axis=1), c.normals, self.arrow_lengths(c.depths),
                     NORMAL_COLOR)
        d = c.deepest
        seg = np.asarray(c.points[d], dtype=np.float64)
        self.plotter.add_mesh(pv.Line(seg[0], seg[1]), color=to_float(DEEPEST_COLOR), line_width=9,
                              name="contact-deepest", **add)
        self.plotter.add_mesh(pv.PolyData(seg), color=to_float(DEEPEST_COLOR), point_size=15,
                              render_points_as_spheres=True, name="contact-deepest-ends", **add)
        self._arrows("contact-deepest-normal", seg.mean(axis=0)[None], c.normals[d][None],
                     self.arrow_lengths(c.depths)[d:d + 1], DEEPEST_COLOR, width=2.0)
        if self.selected is not None and self.selected >= k:
            self.selected = None
        self._draw_selected()

    def _arrows(self, name, origins, directions, lengths, rgb, width=1.0):
        import pyvista as pv
        ok = np.linalg.norm(directions, axis=1) > 0
        if not ok.any():
            self.plotter.remove_actor(name, render=False)
            return
        cloud = pv.PolyData(np.asarray(origins, dtype=np.float64)[ok])
        cloud["vec"] = np.asarray(directions, dtype=np.float64)[ok] * np.asarray(lengths)[ok, None]
        cloud["len"] = np.asarray(lengths, dtype=np.float64)[ok]
        arrow = pv.Arrow(tip_length=0.3, tip_radius=0.12 * width, shaft_radius=0.04 * width)
        glyphs = cloud.glyph(orient="vec", scale="len", factor=1.0, geom=arrow)
        self.plotter.add_mesh(glyphs, color=to_float(rgb), name=name, reset_camera=False, pickable=False)

    def _draw_selected(self):
        import pyvista as pv
        c, r = self.contacts, self.selected
        if c is None or r is None or r >= len(c):
            self.plotter.remove_actor("contact-selected", render=False)
            return
        self.plotter.add_mesh(pv.PolyData(np.asarray(c.points[r], dtype=np.float64)), color=to_float(SELECTED_COLOR),
                              point_size=22, render_points_as_spheres=True, name="contact-selected",
                              reset_camera=False, pickable=False, lighting=False)

    def legend_entries(self) -> list:
        if self.contacts is None:
            return []
        out = [("contact segment", CONTACT_COLOR), ("contact normal (length ~ depth)", NORMAL_COLOR),
               ("deepest contact", DEEPEST_COLOR)]
        if self.selected is not None:
            out.append(("selected contact", SELECTED_COLOR))
        return out
