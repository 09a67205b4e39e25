"""The render module of the debugger: one object owns every actor of the 3-D view.

``SceneView(plotter)`` takes ``FrameView`` snapshots from the model (``draw``) and the
stepper's / panels' requests (``show_step``, ``show_realign``, ``show_closest``,
``highlight_triangles``, ``show_picked``), updates its PolyData in place and never renders
itself: the window schedules one render per frame. No Qt here; widgets never build
actors (import-linter contract), they ask the window, which asks this module.

Adding a layer (e.g. contact points): write a class with ``set_scene(scene)``,
``update(view, options)`` and ``clear()`` that builds its actors on ``plotter`` with
unique names, then ``scene_view.add_layer("contacts", layer)``; it is rebuilt on every
scene change and updated on every frame, after the built-in layers. Give it a legend
entry with ``legend_entries()`` returning [(label, uint8 RGB)] if it draws in a colour.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..model.framing import pair_bounds, scene_bounds
from ..model.trees import readable_selection
from . import camera
from .colors import AXIS_COLOR, CONTACT_COLOR, PAIR_COLORS, body_color
from .hierarchy import HierarchyLayer, NodeHighlight
from .hud import ViewHud
from .meshes import BodyMeshLayer
from .overlay import AxisOverlay

LINK_CONTACT_COLOR = CONTACT_COLOR  # links in contact: the "leaf pair hit" family, never the pair's magenta
CLOSEST_COLOR = (220, 20, 60)  # crimson points, black segment
PICK_COLOR = (0, 158, 115)  # the node picked with the mouse


@dataclass(frozen=True)
class DrawOptions:
    """What the user chose to see (the hierarchy panel's state), as one value."""
    show_tree: bool = True
    show_mesh: bool = True
    opacity: float = 1.0
    color_by: str = "state"          # "state" or "heat"
    depth: tuple = ("auto", 0, 0)    # (mode, lo, hi); "auto" is resolved per frame
    highlight_contacts: bool = True  # links in contact drawn in LINK_CONTACT_COLOR


class SceneView:
    """Owns the body meshes, the hierarchies, the stepper pair and its separating axis, the
    picked node, realignment wires, closest points, link/triangle highlights, the HUD and
    any layer added with ``add_layer``."""

    def __init__(self, plotter):
        self.plotter = plotter
        self.meshes: list[BodyMeshLayer] = []
        self.trees: list[HierarchyLayer] = []
        self.axis = AxisOverlay(plotter)
        self.hud = ViewHud(plotter)
        self.picked = NodeHighlight(plotter, "picked-node", line_width=5.0)
        self.layers: dict = {}
        self.scene = None
        self.scene_box = None
        self.view = None
        self.options = DrawOptions()
        self.resolved_depth = ("all", 0, 0)
        self._auto = None  # (depth arrays, readable_selection of them)
        self._selected: dict = {}  # body -> (depth array, child array, (mode, lo, hi), node ids)
        self.nodes_drawn = 0
        self.step = (None, None)  # the stepper's (step, traversal)
        self.closest = None
        self._realign_actors: list = []
        self._link_hl: dict = {}
        self._tri_hl: list = []

    # ---- layers ------------------------------------------------------------------------
    def add_layer(self, name: str, layer) -> None:
        """Add a layer (see the module docstring); replaces one of the same name."""
        old = self.layers.pop(name, None)
        if old is not None:
            old.clear()
        self.layers[name] = layer
        if self.scene is not None:
            layer.set_scene(self.scene)
            if self.view is not None:
                layer.update(self.view, self.options)

    # ---- scene -------------------------------------------------------------------------
    def set_scene(self, scene) -> None:
        """Rebuild every actor for ``scene``."""
        for layer in self.meshes + self.trees:
            layer.clear()
        for layer in self.layers.values():
            layer.clear()
        self.plotter.clear()
        self._lighting()
        self.axis = AxisOverlay(self.plotter)
        self.hud = ViewHud(self.plotter)
        self.picked = NodeHighlight(self.plotter, "picked-node", line_width=5.0)
        self._realign_actors = []
        self._selected = {}
        self._link_hl, self._tri_hl = {}, []
        self.step, self.closest, self.view = (None, None), None, None
        self.scene = scene
        self.meshes = [BodyMeshLayer(self.plotter, i, sb) for i, sb in enumerate(scene.bodies)]
        self.trees = [HierarchyLayer(self.plotter, f"tree{i}") for i in range(len(scene.bodies))]
        for i, t in enumerate(self.trees):
            t.actor_body = i
        self.scene_box = scene_bounds(scene)
        for layer in self.layers.values():
            layer.set_scene(scene)
        self._legend()

    def _lighting(self):
        """One headlight instead of pyvista's light kit: half the cost of shading the meshes
        under software OpenGL, and boxes are drawn unlit anyway."""
        import pyvista as pv
        self.plotter.remove_all_lights()
        self.plotter.add_light(pv.Light(light_type="headlight"))

    # ---- per frame ---------------------------------------------------------------------
    def draw(self, view, options: DrawOptions | None = None) -> float:
        """Update every actor to ``view`` (a ``FrameView``); returns the seconds spent."""
        t0 = time.perf_counter()
        if options is not None:
            self.options = options
        o = self.options
        self.view = view
        if self.scene is None:
            return 0.0
        mode, lo, hi = o.depth
        trees = view.trees
        if mode == "auto":
            mode, lo, hi = self._auto_selection(trees)
        self.resolved_depth = (mode, lo, hi)
        heat_on = o.color_by == "heat" and view.heat is not None
        heat_max = max(view.heat_max, 1.0) if heat_on else None
        drawn = 0
        for i, ml in enumerate(self.meshes):
            ml.set_visible(o.show_mesh)
            if abs(ml.actor.GetProperty().GetOpacity() - o.opacity) > 1e-6:
                ml.set_opacity(o.opacity)
            if o.show_mesh:
                ml.update(view.link_poses[i], view.vertices[i])
            tl = self.trees[i]
            show = o.show_tree and i < len(trees)
            tl.set_visible(show)
            if show:
                tree = trees[i]
                nodes = self._select(i, tree, (mode, lo, hi))
                drawn += len(nodes)
                tl.update(tree, nodes, colors_by="heat" if heat_on else "state", states=view.states[i],
                          heat=view.heat[i] if heat_on else None, heat_max=heat_max)
        self.nodes_drawn = drawn
        if not o.show_tree:
            self.hud.set_key("none")
        elif heat_on:
            self.hud.set_key("heat", heat_max or 0.0, view.heat_frames)
        else:
            self.hud.set_key("state")
        self._highlight_links(view.contact_links if o.highlight_contacts else {})
        for layer in self.layers.values():
            layer.update(view, o)
        self._legend()
        return time.perf_counter() - t0

    def _select(self, i: int, tree, sel: tuple):
        """``tree.select(*sel)``, made again only when the tree's topology (its depth and child
        arrays: the engine's own, the same objects from frame to frame) or the selection
        changes: a cut of deform-wave's 40,000-node sheet cost ~35 us a frame per tree."""
        cached = self._selected.get(i)
        if (cached is not None and cached[0] is tree.depth and cached[1] is tree.nodes_i and cached[2] == sel):
            return cached[3]
        nodes = tree.select(*sel)
        self._selected[i] = (tree.depth, tree.nodes_i, sel, nodes)
        return nodes

    def _auto_selection(self, trees) -> tuple:
        """``readable_selection(trees)``, recomputed only when a tree's topology changes: it
        reads the trees' depth arrays alone, which are the engine's own (the same objects from
        frame to frame; a rebuild makes new ones), and cost ~0.2 ms a frame on the robots."""
        if not trees:
            return "all", 0, 0
        depths = tuple(t.depth for t in trees)
        cached = self._auto
        if cached is not None and len(cached[0]) == len(depths) and all(a is b for a, b in zip(cached[0], depths)):
            return cached[1]
        sel = readable_selection(trees)
        self._auto = (depths, sel)  # holds the arrays: their ids cannot be reused meanwhile
        return sel

    def _highlight_links(self, links: dict) -> None:
        """Links in contact in LINK_CONTACT_COLOR; rewritten only when the set changes."""
        links = {b: tuple(v) for b, v in links.items() if b < len(self.meshes) and self.meshes[b].n_links > 1}
        if links == self._link_hl:
            return
        for b in set(self._link_hl) | set(links):
            if b in links:
                self.meshes[b].highlight_links(links[b], color=LINK_CONTACT_COLOR)  # one colour write
            else:
                self.meshes[b].clear_highlight()
        self._link_hl = links
        self._reapply_triangles()

    def highlight_triangles(self, items) -> None:
        """``items``: [(body, link, triangle ids)] (e.g. the insight panel's contacts)."""
        self._tri_hl = [(b, li, np.asarray(t)) for b, li, t in items if b < len(self.meshes)]
        self._reapply_triangles()

    def _reapply_triangles(self):
        for b, li, tris in self._tri_hl:
            self.meshes[b].highlight_triangles(li, tris)

    # ---- the stepper, panels' requests ---------------------------------------------------
    def show_step(self, step, traversal, up=None) -> None:
        """Highlight the stepper's node pair and draw its separating axis (if separated)."""
        self.step = (step, traversal)
        if step is None or traversal is None:
            self.axis.hide()
            for tl in self.trees:
                tl.clear_highlight()
            return
        if self.trees:
            self.trees[0].highlight(traversal.tree_a, step.node_a, traversal.tree_b, step.node_b)
        if step.axis_dir is not None:
            self.axis.show(step, traversal.tree_a, traversal.tree_b, up=up)
        else:
            self.axis.hide()
        self._legend()

    def show_picked(self, tree, node) -> None:
        """Outline the node picked in the view (None: none)."""
        if tree is None or node is None:
            self.picked.hide()
        else:
            self.picked.show(tree, int(node))

    def show_realign(self, wires) -> None:
        """Realigned k-DOPs as line sets (label, dirs, slabs, pose, rgb) and their key."""
        import pyvista as pv

        from .hierarchy import kdop_wireframes
        for a in self._realign_actors:
            self.plotter.remove_actor(a, render=False)
        self._realign_actors = []
        key = []
        for k, (label, dirs, slabs, pose, rgb) in enumerate(wires):
            k2 = len(dirs)
            local, edges, _ = kdop_wireframes(dirs, slabs[None, :k2], slabs[None, k2:])
            pts = local @ pose[:3, :3].T + pose[:3, 3]
            if len(edges) == 0:
                continue
            lines = np.hstack([np.full((len(edges), 1), 2), edges]).ravel()
            poly = pv.PolyData(np.asarray(pts, dtype=np.float64), lines=lines)
            self._realign_actors.append(self.plotter.add_mesh(
                poly, color=[c / 255 for c in rgb], line_width=3 if k >= 2 else 2, lighting=False,
                name=f"realign-{k}", reset_camera=False, pickable=False))
            key.append((label, rgb))
        self.hud.set_realign_key(key)

    def show_closest(self, points) -> None:
        """The two closest points (2, 3) and the segment between them (None: hide)."""
        import pyvista as pv
        for name in ("closest-segment", "closest-points"):
            self.plotter.remove_actor(name, render=False)
        self.closest = None if points is None else np.asarray(points, dtype=np.float64)
        if points is not None:
            p = self.closest
            self.plotter.add_mesh(pv.Line(p[0], p[1]), color="black", line_width=4, name="closest-segment",
                                  reset_camera=False, pickable=False, lighting=False)
            self.plotter.add_mesh(pv.PolyData(p), color=[c / 255 for c in CLOSEST_COLOR], point_size=14,
                                  render_points_as_spheres=True, name="closest-points", reset_camera=False,
                                  pickable=False)
        self._legend()

    # ---- legend ----------------------------------------------------------------------
    def legend_entries(self) -> list:
        """Every colour the view uses beyond the node-state / heat key: the bodies, the
        stepper pair, the separating axis, links in contact, closest points, layers'."""
        out = []
        if self.scene is not None and self.options.show_mesh:
            for i, sb in enumerate(self.scene.bodies[:6]):
                label = f"body: {sb.name}"
                ml = self.meshes[i] if i < len(self.meshes) else None
                if ml is not None and ml.drawn_triangles < ml.n_triangles:
                    label += f" (drawn with {ml.drawn_triangles:,} of {ml.n_triangles:,} triangles)"
                out.append((label, tuple(int(c) for c in body_color(i))))
        step, trav = self.step
        if step is not None and trav is not None:
            out.append(("stepper node A", tuple(int(c) for c in PAIR_COLORS[0])))
            out.append(("stepper node B", tuple(int(c) for c in PAIR_COLORS[1])))
            if self.axis.visible:
                out.append(("separating axis", AXIS_COLOR))
        if self.picked.visible:
            out.append(("picked node", PICK_COLOR))
        if self._link_hl:
            out.append(("links in contact", LINK_CONTACT_COLOR))
        if self.closest is not None:
            out.append(("closest points", CLOSEST_COLOR))
        for layer in self.layers.values():
            if hasattr(layer, "legend_entries"):
                out.extend(layer.legend_entries())
        return out

    def _legend(self):
        self.hud.set_legend(self.legend_entries())

    # ---- picking ---------------------------------------------------------------------
    def pick_node(self, x: int, y: int):
        """The tree node under display pixel (x, y) (VTK's origin: bottom-left): (body,
        node) or None. Picks the line cells of the drawn hierarchies only."""
        from vtkmodules.vtkRenderingCore import vtkCellPicker
        picker = vtkCellPicker()
        picker.SetTolerance(0.004)
        picker.PickFromListOn()
        owners = {}
        for i, tl in enumerate(self.trees):
            if tl.actor is not None and tl.actor.GetVisibility():
                picker.AddPickList(tl.actor)
                owners[id(tl.actor)] = i
        if not owners:
            return None
        was = {}
        for tl in self.trees:  # the hierarchies are built unpickable (mouse moves never pick)
            if tl.actor is not None:
                was[id(tl)] = tl.actor.GetPickable()
                tl.actor.SetPickable(True)
        try:
            picked = picker.Pick(x, y, 0, self.plotter.renderer)
        finally:
            for tl in self.trees:
                if tl.actor is not None and id(tl) in was:
                    tl.actor.SetPickable(was[id(tl)])
        if not picked:
            return None
        actor = picker.GetActor()
        i = owners.get(id(actor))
        if i is None:
            for a_id, k in owners.items():  # VTK may return a new wrapper of the same actor
                if self.trees[k].actor is not None and self.trees[k].actor.GetAddressAsString("vtkObject") == \
                        actor.GetAddressAsString("vtkObject"):
                    i = k
        cell = picker.GetCellId()
        if i is None or cell < 0:
            return None
        return i, self.trees[i].node_of_cell(cell)

    # ---- camera ----------------------------------------------------------------------
    def frame_bounds(self, which: str = "pose") -> np.ndarray | None:
        """Bounds to frame: "pose" (the bodies at the current frame) or "motion" (over the
        whole motion)."""
        if self.scene is None:
            return None
        if which == "motion":
            return self.scene_box
        f = self.view.frame if self.view is not None else 0
        return scene_bounds(self.scene, frames=[f])

    def fit(self, bounds=None) -> None:
        b = bounds if bounds is not None else self.frame_bounds("pose")
        if b is None:
            self.plotter.reset_camera()
        else:
            camera.fit_bounds(self.plotter.renderer, b)

    def focus_bounds(self):
        """Bounds of the stepper pair with its drawn axis, or of the closest points."""
        step, trav = self.step
        extra = None
        if step is not None and self.axis.visible and self.axis.geometry is not None:
            g = self.axis.geometry
            extra = np.vstack([g["start"], g["end"], g["ends"]])
        b = pair_bounds(step, trav, pad=0.12, extra_points=extra)  # the pair and its axis fill the view
        if b is None and self.closest is not None:
            p = self.closest
            r = max(float(np.linalg.norm(p[1] - p[0])), 1e-3 * float(np.ptp(self.scene_box.reshape(3, 2), 1).max()))
            b = pair_bounds(None, None, pad=0.0, extra_points=np.vstack([p - 2 * r, p + 2 * r]))
        return b

    def view_extent(self, bounds) -> float:
        return camera.view_extent(self.plotter.renderer, camera.corners_of(bounds))

    # ---- heads-up display ----------------------------------------------------------------
    def update_hud(self, view, fps: float | None = None, auto: bool = False) -> None:
        from cdcore.articulated import METHOD_LABELS
        if view is None or self.scene is None:
            return
        mode, lo, hi = self.resolved_depth
        depth = {"all": "all levels", "leaves": "leaves", "level": f"level {lo}", "cut": f"cut at level {lo}",
                 "range": f"levels {lo}-{hi}"}[mode]
        if auto:
            depth += " (auto)"
        st = view.settings
        multi = any(sb.body.n_links > 1 for sb in self.scene.bodies)
        method = f"  ·  update {METHOD_LABELS[st['method']]}" if multi else ""
        rec = view.record
        self.hud.set_info(
            f"{view.scene_name}   frame {view.frame} / {view.n_frames - 1}\n"
            f"BV {st['bv']}{method}  ·  test {st['exact_test']}\n{depth}: {self.nodes_drawn:,} nodes drawn",
            f"BV tests {rec.bv_tests:,}\ntriangle tests {rec.prim_tests:,}\n#exact {rec.n_exact}  #false {rec.n_false}"
            f"\ncontacts {rec.contacts}" + (f"\n{fps:.0f} fps" if fps else ""))
