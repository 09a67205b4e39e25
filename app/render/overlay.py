"""Overlays of the 3D view: the stepper's separating axis with the two projected
intervals, contact points, and the state legend entries.

Every overlay owns a few persistent PolyData/actors; ``show`` rewrites their contents
(``shallow_copy``), ``hide`` turns them off. Nothing renders: the caller renders once.
"""
from __future__ import annotations

import numpy as np
import pyvista as pv

from cdcore import layout as L

from .colors import (AXIS_COLOR, CONTACT_COLOR, HEAT_CMAP, PAIR_COLORS, STATE_COLORS, STATE_LABELS,
                     colormap_table, to_float)


def _perp_unit(u, prefer):
    """A unit vector perpendicular to ``u``, as close as possible to ``prefer``."""
    for cand in (prefer, (0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)):
        w = np.asarray(cand, dtype=np.float64)
        w = w - (w @ u) * u
        n = np.linalg.norm(w)
        if n > 1e-6:
            return w / n
    raise ValueError("axis direction is zero")


def _node_centre(tree, node, sphere):
    if sphere or tree.family == "sphere":
        return tree.world_spheres([node])[0][0]
    return tree.world_boxes([node])[0][0]


def _support(tree, node, w, sphere):
    """max over the node's volume of ``x . w`` (w unit)."""
    if sphere or tree.family == "sphere":
        c, r = tree.world_spheres([node])
        return float(c[0] @ w + r[0])
    c, ax, e = tree.world_boxes([node])
    return float(c[0] @ w + np.sum(e[0] * np.abs(ax[0].T @ w)))


class _Slot:
    """A persistent PolyData + actor whose contents are replaced in place."""

    def __init__(self, plotter, name, **kw):
        self.plotter, self.name, self.kw = plotter, name, kw
        self.polydata = pv.PolyData()
        self.actor = None

    def set(self, mesh: pv.PolyData, visible=True):
        self.polydata.shallow_copy(mesh)
        if "rgb" in mesh.cell_data or "rgb" in mesh.point_data:
            self.polydata.set_active_scalars("rgb", preference="cell" if "rgb" in mesh.cell_data else "point")
        self.polydata.Modified()
        if self.actor is None:
            self.actor = self.plotter.add_mesh(self.polydata, name=self.name, reset_camera=False, pickable=False,
                                               **self.kw)
        self.actor.SetVisibility(bool(visible))

    def hide(self):
        if self.actor is not None:
            self.actor.SetVisibility(False)

    @property
    def visible(self) -> bool:
        return self.actor is not None and bool(self.actor.GetVisibility())

    def clear(self):
        if self.actor is not None:
            self.plotter.remove_actor(self.actor, render=False)
        self.actor = None


class AxisOverlay:
    """The separating axis of a stepper ``Step`` (``step.axis_dir`` set: a separated
    pair): an arrow along the axis through the midpoint of the two nodes' centres,
    spanning both projected intervals; the intervals (``PAIR_COLORS``: A, B) as thick
    segments on a line parallel to the axis, offset sideways (towards ``up``, default
    world +z; pass the camera's view-up to keep them above the boxes on screen) beyond
    both nodes' extent in that direction; thin ticks from the axis to the interval ends and the
    gap between the intervals; small spheres at the interval ends.

    Coordinates along the axis are the projections themselves: the point of projection
    ``s`` is ``m + (s - m.u) u`` (m: the midpoint), so the drawn intervals are exactly
    ``step.interval_a`` / ``step.interval_b``.
    """

    def __init__(self, plotter, name: str = "axis-overlay", interval_width: float = 7.0, end_size: float = 12.0):
        self.plotter = plotter
        self._arrow = _Slot(plotter, name + "-arrow", color=to_float(AXIS_COLOR), lighting=True)
        self._intervals = _Slot(plotter, name + "-intervals", scalars="rgb", rgb=True, preference="cell",
                                line_width=interval_width, lighting=False)
        self._guides = _Slot(plotter, name + "-guides", scalars="rgb", rgb=True, preference="cell", line_width=1.0,
                             lighting=False)
        self._ends = _Slot(plotter, name + "-ends", scalars="rgb", rgb=True, preference="point",
                           render_points_as_spheres=True, point_size=end_size, lighting=False)
        self.geometry = None  # dict of what was drawn last (for tests and labels)

    def show(self, step, tree_a, tree_b, up=None) -> bool:
        """Draw the axis of ``step``; hides and returns False when the step has none."""
        if step is None or getattr(step, "axis_dir", None) is None or step.interval_a is None \
                or step.interval_b is None:
            self.hide()
            return False
        u = np.asarray(step.axis_dir, dtype=np.float64)
        u = u / np.linalg.norm(u)
        sphere = step.axis == L.AXIS_SPHERE
        ca = _node_centre(tree_a, step.node_a, sphere)
        cb = _node_centre(tree_b, step.node_b, sphere)
        m = 0.5 * (ca + cb)
        sm = float(m @ u)
        (a0, a1), (b0, b1) = (float(x) for x in step.interval_a), (float(x) for x in step.interval_b)
        lo, hi = min(a0, b0), max(a1, b1)
        span = max(hi - lo, 1e-9)
        pad = 0.15 * span

        def at(s):
            return m + (s - sm) * u

        w = _perp_unit(u, up if up is not None else (0.0, 0.0, 1.0))

        # clear of both nodes along w: beyond their support in that direction
        top = max(_support(tree_a, step.node_a, w, sphere), _support(tree_b, step.node_b, w, sphere))
        off = max(top - float(m @ w), 0.0) + 0.12 * span
        o = off * w
        start, end = at(lo - pad), at(hi + pad)
        length = float(np.linalg.norm(end - start))
        arrow = pv.Arrow(start=start, direction=u, scale=length, tip_length=0.06, tip_radius=0.018,
                         shaft_radius=0.006)
        self._arrow.set(arrow)

        ends = np.array([at(a0), at(a1), at(b0), at(b1)]) + o
        seg = pv.PolyData(ends.astype(np.float32), lines=np.array([2, 0, 1, 2, 2, 3]))
        seg.cell_data["rgb"] = PAIR_COLORS.copy()
        self._intervals.set(seg)

        pe = pv.PolyData(ends.astype(np.float32))
        pe.point_data["rgb"] = np.repeat(PAIR_COLORS, 2, axis=0)
        self._ends.set(pe)

        # ticks from the axis to each interval end, and the gap between the intervals
        g0, g1 = (a1, b0) if a1 <= b0 else (b1, a0)
        gpts = np.concatenate([ends - o, ends, [at(g0) + o, at(g1) + o]])
        gl = np.array([[2, i, i + 4] for i in range(4)] + [[2, 8, 9]]).ravel()
        guides = pv.PolyData(gpts.astype(np.float32), lines=gl)
        guides.cell_data["rgb"] = np.array([(150, 150, 150)] * 4 + [AXIS_COLOR], dtype=np.uint8)
        self._guides.set(guides)
        self.geometry = {"midpoint": m, "axis": u, "offset": o, "start": start, "end": end, "ends": ends,
                         "gap": (g0, g1), "axis_name": getattr(step, "axis_name", "")}
        return True

    def hide(self) -> None:
        for s in self._slots:
            s.hide()

    @property
    def _slots(self):
        return (self._arrow, self._intervals, self._guides, self._ends)

    @property
    def visible(self) -> bool:
        return self._arrow.visible

    def clear(self) -> None:
        for s in self._slots:
            s.clear()
        self.geometry = None


def pair_midpoints(verts_a, faces_a, verts_b, faces_b, pairs) -> np.ndarray:
    """Contact markers for triangle pairs (k, 2) (A's triangle, B's triangle): the
    midpoint of the two triangles' centroids, (k, 3). Vertices in world coordinates."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    ca = np.asarray(verts_a)[np.asarray(faces_a)[pairs[:, 0]]].mean(axis=1)
    cb = np.asarray(verts_b)[np.asarray(faces_b)[pairs[:, 1]]].mean(axis=1)
    return 0.5 * (ca + cb)


class ContactOverlay:
    """Contact points as one point-cloud actor (spheres on screen)."""

    def __init__(self, plotter, name: str = "contacts", color=CONTACT_COLOR, point_size: float = 10.0):
        self.plotter = plotter
        self._slot = _Slot(plotter, name, color=to_float(color), render_points_as_spheres=True,
                           point_size=point_size, lighting=False)
        self.n_points = 0

    def show(self, points) -> None:
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if len(pts) == 0:
            self.hide()
            return
        if len(pts) == self.n_points and self._slot.actor is not None:  # in place
            view = np.asarray(self._slot.polydata.points)
            view[...] = pts
            self._slot.polydata.GetPoints().Modified()
            self._slot.polydata.Modified()
            self._slot.actor.SetVisibility(True)
        else:
            self._slot.set(pv.PolyData(pts.astype(np.float32)))
        self.n_points = len(pts)

    def hide(self) -> None:
        self._slot.hide()

    @property
    def visible(self) -> bool:
        return self._slot.visible

    @property
    def polydata(self) -> pv.PolyData:
        return self._slot.polydata

    def clear(self) -> None:
        self._slot.clear()
        self.n_points = 0


class Legend:
    """Legend entries (label, RGB floats) for node states and heat; ``add_to`` puts them
    on a pyvista plotter (``add_legend``), or a Qt widget can draw them."""

    @staticmethod
    def state_entries() -> list:
        return [(label, to_float(c)) for label, c in zip(STATE_LABELS, STATE_COLORS)]

    @staticmethod
    def heat_entries(vmax: float, n: int = 5, cmap: str = HEAT_CMAP) -> list:
        """``n`` evenly spaced heat levels from 0 to ``vmax`` (tests per node)."""
        table = colormap_table(cmap)
        out = []
        for i in range(n):
            f = i / max(n - 1, 1)
            out.append((f"{f * vmax:.0f} tests", to_float(table[int(round(f * (len(table) - 1)))])))
        return out

    @staticmethod
    def add_to(plotter, entries=None, **kw):
        """``plotter.add_legend`` with ``entries`` (default: the states); returns the
        legend actor."""
        entries = entries if entries is not None else Legend.state_entries()
        kw.setdefault("bcolor", (1.0, 1.0, 1.0))
        kw.setdefault("size", (0.28, 0.18))
        return plotter.add_legend(labels=[[label, color] for label, color in entries], **kw)
