"""A scene-view layer (``SceneView.add_layer``): the generalized front cache drawn in the 3-D
view. The link pair with the largest front this frame gets its front nodes' boxes as wireframes
(A's in teal, B's in orange): where the next frame's traversal will start. Its model is
``app.model.front.FrontTracker``."""
from __future__ import annotations

import numpy as np
import pyvista as pv

from ..model.front import FrontTracker
from .hierarchy import BOX_EDGES, box_corners, direct_input

FRONT_COLORS = ((0, 150, 136), (230, 120, 0))
MAX_BOXES = 4000  # per tree: beyond this the wireframe is a grey tangle and slow to build


class FrontLayer:
    def __init__(self, plotter, line_width: float = 1.5):
        self.plotter = plotter
        self.line_width = line_width
        self.tracker = None
        self.last = None
        self.polydata = pv.PolyData()
        self.actor = None

    def set_scene(self, scene) -> None:
        self.clear()
        self.tracker = FrontTracker(scene)

    def clear(self) -> None:
        if self.actor is not None:
            self.plotter.remove_actor(self.actor, render=False)
        self.actor = None
        self.last = None

    def update(self, view, options) -> None:
        if self.tracker is None:
            return
        ff = self.last = self.tracker.update(view.link_poses)
        pts, cells, rgb, base = [], [], [], 0
        if ff.pair is not None:
            s = self.tracker.scene
            for slot, ((body, link), nodes) in enumerate(zip(ff.pair, (ff.nodes_a, ff.nodes_b))):
                tree = s.bodies[body].body.bvhs[link]
                nodes = nodes[:MAX_BOXES]
                pose = np.asarray(view.link_poses[body][link], float)
                c = tree.nodes_f[nodes, 0:3] @ pose[:3, :3].T + pose[:3, 3]
                ax = np.einsum("ij,njk->nik", pose[:3, :3], tree.box_axes()[nodes])
                corners = box_corners(c, ax, tree.box_extents()[nodes]).reshape(-1, 3)
                e = (BOX_EDGES[None, :, :] + 8 * np.arange(len(nodes))[:, None, None]).reshape(-1, 2) + base
                pts.append(corners)
                cells.append(np.column_stack([np.full(len(e), 2), e]).ravel())
                rgb.append(np.broadcast_to(FRONT_COLORS[slot], (len(e), 3)))
                base += len(corners)
        if not pts:
            if self.actor is not None:
                self.actor.SetVisibility(False)
            return
        new = pv.PolyData(np.concatenate(pts).astype(np.float32), lines=np.concatenate(cells))
        new.cell_data["rgb"] = np.concatenate(rgb).astype(np.uint8)
        self.polydata.shallow_copy(new)
        self.polydata.cell_data.active_scalars_name = "rgb"
        if self.actor is None:
            self.actor = self.plotter.add_mesh(self.polydata, scalars="rgb", rgb=True, line_width=self.line_width,
                                               name="front-cache", pickable=False, reset_camera=False)
            direct_input(self.actor, self.polydata)
        self.actor.SetVisibility(True)
        self.polydata.Modified()

    def legend_entries(self) -> list:
        if self.last is None or self.last.pair is None:
            return []
        return [("front cache, A's nodes", FRONT_COLORS[0]), ("front cache, B's nodes", FRONT_COLORS[1])]
