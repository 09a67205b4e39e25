"""A body's triangles as one PolyData whose points follow the link poses in place.

All links' triangles are concatenated once (faces constant); every frame the points are
rewritten from the link-frame vertices: ``R_l v + t_l`` for each link l, vectorised over
all vertices (one batched product, each vertex with its link's pose), or,
for a deforming body, from its current vertices. A body of one rigid link is not rewritten
at all: its points stay in the link frame and the pose is the actor's matrix (a 4x4 uniform
instead of re-sending the mesh to OpenGL every frame); above ``PROXY_ABOVE`` triangles it
is drawn through a decimated display proxy, a deforming one-link body through a proxy made of
some of its own vertices that follows them (``decimate``; the exact mesh while triangles are
highlighted; the engine never sees a proxy). Colour is a per-triangle RGB cell
array (the body colour, with optional contact-triangle highlights).
"""
from __future__ import annotations

import numpy as np
import pyvista as pv

from .colors import TRIANGLE_HIGHLIGHT, body_color
from .hierarchy import transform_into


#: one-link meshes above this many triangles are drawn through a decimated display proxy of
#: about PROXY_TRIANGLES triangles (rigid-torus-20k's tori: 10,000 -> 3,000), a deforming one
#: through a vertex-clustered proxy of about FOLLOW_TRIANGLES that follows its vertices
#: (``decimate``; deform-wave's sheet: 20,000 -> ~5,000, 17 samples a wavelength)
PROXY_ABOVE = 8000
PROXY_TRIANGLES = 3000
FOLLOW_TRIANGLES = 5000


class BodyMeshLayer:
    """The mesh of scene body ``body_index`` (a ``cdcore.scenes.SceneBody``).

    ``update(link_poses, vertices=None)``: ``link_poses`` (L, 4, 4) world poses of the
    links at this frame (``scene_body.link_poses[frame]``; a rigid single-link body keeps its
    points in the link frame and is posed by the actor's matrix: ``world_points()`` gives the
    drawn vertices); ``vertices`` (V, 3) optional link-frame vertices of all links
    concatenated (a deforming body's current shape). When omitted, the body's own current
    vertices are used (``body.vertices``, which cdcore refreshes when a deforming link is
    refitted).
    """

    def __init__(self, plotter, body_index: int, scene_body, color=None, opacity: float = 1.0,
                 name: str | None = None, show_edges: bool = False):
        self.plotter = plotter
        self.body_index = int(body_index)
        self.scene_body = scene_body
        self.name = name or f"body-{body_index}"
        body = scene_body.body
        links = body.links
        nv = np.array([len(ln.mesh.vertices) for ln in links], dtype=np.int64)
        nf = np.array([len(ln.mesh.faces) for ln in links], dtype=np.int64)
        self.vert_off = np.concatenate([[0], np.cumsum(nv)])
        self.face_off = np.concatenate([[0], np.cumsum(nf)])
        self.n_links = len(links)
        self.link_of_vertex = np.repeat(np.arange(self.n_links), nv)
        self._v0 = np.ascontiguousarray(np.concatenate([ln.mesh.vertices for ln in links]), dtype=np.float64)
        faces = np.concatenate([ln.mesh.faces + off for ln, off in zip(links, self.vert_off[:-1])])
        cells = np.empty((len(faces), 4), dtype=np.int64)
        cells[:, 0] = 3
        cells[:, 1:] = faces
        self.polydata = pv.PolyData(self._v0.astype(np.float32), faces=cells.ravel())
        self._color = np.asarray(color if color is not None else body_color(self.body_index), dtype=np.uint8)
        self.polydata.cell_data["rgb"] = np.broadcast_to(self._color, (len(faces), 3)).copy()
        self.polydata.cell_data["link"] = np.repeat(np.arange(self.n_links, dtype=np.int32), nf)
        self.polydata.cell_data.active_scalars_name = "rgb"
        self._highlighted = np.zeros(len(faces), dtype=bool)
        self._rgb = None  # (VTK colour array, its numpy view), made on first write
        from vtkmodules.util.numpy_support import vtk_to_numpy
        self._points_view = vtk_to_numpy(self.polydata.GetPoints().GetData())  # the points never change arrays
        self.actor = plotter.add_mesh(self.polydata, scalars="rgb", rgb=True, preference="cell", opacity=opacity,
                                      show_edges=show_edges, name=self.name, reset_camera=False, pickable=True)
        from vtkmodules.vtkCommonMath import vtkMatrix4x4
        #: a single rigid link is posed by the actor's matrix; other bodies by their points
        self.rigid = self.n_links == 1 and not getattr(scene_body, "deforming", False)
        self._matrix = vtkMatrix4x4()
        self._posed = None  # True while the points hold world coordinates
        self.actor.SetUserMatrix(self._matrix)
        self._follow = None  # a deforming body's proxy: its vertices (indices into the mesh's)
        self._pending = None  # (pose, vertices) of the last update the exact points have not had
        self.proxy = None
        if len(faces) > PROXY_ABOVE and self.rigid:
            self.proxy = self._make_proxy()
        elif len(faces) > PROXY_ABOVE and self.n_links == 1:
            self.proxy = self._make_follow_proxy(faces)
        self._drawn = None
        self._show(self.proxy if self.proxy is not None else self.polydata)
        if len(scene_body.link_poses):
            self.update(scene_body.link_poses[0])

    @property
    def n_triangles(self) -> int:
        return len(self._highlighted)

    # ---- the display proxy ---------------------------------------------------------------
    def _make_proxy(self):
        """A decimated copy of a large rigid mesh, drawn instead of it (software GL spends
        ~1,500 instructions per triangle on the CPU side alone: 20,000 triangles were ~30 M a
        frame). Drawing only: the engine, picking and highlights use the exact mesh, and a
        highlight shows the exact mesh while it lasts."""
        target = 1.0 - PROXY_TRIANGLES / self.n_triangles
        proxy = pv.PolyData(self._v0.astype(np.float32), faces=self.polydata.faces).decimate(target)
        if proxy.n_cells == 0:
            return None
        proxy.cell_data["rgb"] = np.broadcast_to(self._color, (proxy.n_cells, 3)).copy()
        proxy.cell_data.active_scalars_name = "rgb"
        return proxy

    def _make_follow_proxy(self, faces):
        """A deforming (or multi-pose) one-link mesh's proxy: vertex clustering onto its own
        vertices (``decimate.cluster_proxy``), whose points ``update`` copies from the
        mesh's every frame."""
        from .decimate import cluster_proxy
        rep, pfaces = cluster_proxy(self._v0, faces, FOLLOW_TRIANGLES // 2)
        if len(pfaces) == 0 or len(pfaces) >= len(faces):
            return None
        cells = np.empty((len(pfaces), 4), dtype=np.int64)
        cells[:, 0] = 3
        cells[:, 1:] = pfaces
        proxy = pv.PolyData(self._v0[rep].astype(np.float32), faces=cells.ravel())
        proxy.cell_data["rgb"] = np.broadcast_to(self._color, (proxy.n_cells, 3)).copy()
        proxy.cell_data.active_scalars_name = "rgb"
        from vtkmodules.util.numpy_support import vtk_to_numpy
        self._follow = (rep, vtk_to_numpy(proxy.GetPoints().GetData()))
        return proxy

    def _show(self, polydata) -> None:
        if polydata is not self._drawn:
            self.actor.GetMapper().SetInputData(polydata)
            self._drawn = polydata

    @property
    def drawn_triangles(self) -> int:
        """Triangles drawn now (fewer than ``n_triangles`` while the display proxy is shown)."""
        return int(self._drawn.n_cells)

    # ---- motion -----------------------------------------------------------------------
    def _current_vertices(self, vertices):
        if vertices is not None:
            v = np.asarray(vertices, dtype=np.float64)
        else:
            v = getattr(self.scene_body.body, "vertices", None)
            if v is None or len(v) != len(self._v0):
                v = self._v0
        if v.shape != self._v0.shape:
            raise ValueError(f"vertices: expected shape {self._v0.shape}, got {v.shape}")
        return v

    def update(self, link_poses, vertices=None) -> None:
        P = np.asarray(link_poses, dtype=np.float64).reshape(-1, 4, 4)
        if len(P) != self.n_links:
            raise ValueError(f"link_poses: expected {self.n_links} poses, got {len(P)}")
        if self.rigid and vertices is None:
            # one rigid link: its points stay in the link frame and the pose is the actor's
            # matrix (no per-frame transform, no re-upload of the mesh to the GL)
            self._matrix.DeepCopy(P[0].ravel())
            self._matrix.Modified()
            if self._posed is not None:  # points were written in world coordinates: back to the link frame
                self._points_view[...] = self._v0
                self._mark(self.polydata)
                self._posed = None
                if self.proxy is not None and not self._highlighted.any():
                    self._show(self.proxy)
            return
        if self._posed is None:
            self._matrix.Identity()
            self._matrix.Modified()
        self._posed = True
        if self.proxy is not None and self._follow is None:
            # a rigid mesh's decimated proxy is in the link frame and cannot take other
            # vertices: the exact mesh is drawn while they are given
            self._show(self.polydata)
        v = self._current_vertices(vertices)
        if self._follow is not None and self._drawn is self.proxy:
            # only the proxy is drawn: its vertices now, the exact mesh's when it is needed
            # (``_sync_exact``: a highlight, ``world_points``): ~70 us a frame on deform-wave
            rep, pts = self._follow
            transform_into(pts, v[rep], P[0, :3, :3], P[0, :3, 3])
            self._mark(self.proxy)
            self._pending = (P[0].copy(), v)
            return
        self._pending = None
        out = self._points_view  # plain view of the VTK array
        if self.n_links == 1:
            transform_into(out, v, P[0, :3, :3], P[0, :3, 3])
        else:  # every vertex by its link's pose in one batched product (a loop over the links
            # cost ~60 us of numpy call overhead per link: 1.2 ms a frame for a 20-link hand)
            M = P[:, :3, :].reshape(-1, 12)[self.link_of_vertex]  # (V, 12): each vertex's [R | t] rows
            x, y, z = v[:, 0], v[:, 1], v[:, 2]
            for r in range(3):
                out[:, r] = M[:, 4 * r] * x + M[:, 4 * r + 1] * y + M[:, 4 * r + 2] * z + M[:, 4 * r + 3]
        self._mark(self.polydata)
        if self._follow is not None:  # the proxy's vertices are some of the mesh's
            rep, pts = self._follow
            np.take(out, rep, axis=0, out=pts)
            self._mark(self.proxy)

    def _sync_exact(self) -> None:
        """The exact mesh's points for the last ``update`` that wrote only the proxy's."""
        if self._pending is not None:
            P, v = self._pending
            self._pending = None
            transform_into(self._points_view, v, P[:3, :3], P[:3, 3])
            self._mark(self.polydata)

    @staticmethod
    def _mark(polydata):
        pts = polydata.GetPoints()
        pts.GetData().Modified()
        pts.Modified()
        polydata.Modified()

    def world_points(self) -> np.ndarray:
        """The mesh's vertices in world coordinates (the points, through the actor's matrix)."""
        self._sync_exact()
        M = np.array([[self._matrix.GetElement(r, c) for c in range(4)] for r in range(4)])
        return np.asarray(self.polydata.points, dtype=np.float64) @ M[:3, :3].T + M[:3, 3]

    # ---- appearance ---------------------------------------------------------------------
    def set_opacity(self, opacity: float) -> None:
        self.actor.GetProperty().SetOpacity(float(opacity))

    def set_visible(self, visible: bool) -> None:
        self.actor.SetVisibility(bool(visible))

    @property
    def visible(self) -> bool:
        return bool(self.actor.GetVisibility())

    def set_color(self, color) -> None:
        self._color = np.asarray(color, dtype=np.uint8)
        self._write_colors()

    def highlight_triangles(self, link: int, tri_ids, color=TRIANGLE_HIGHLIGHT, replace: bool = False) -> None:
        """Colour triangles ``tri_ids`` (indices into link ``link``'s own faces) with
        ``color``; earlier highlights stay unless ``replace``."""
        if not 0 <= link < self.n_links:
            raise ValueError(f"link {link} out of range (body has {self.n_links} links)")
        ids = np.asarray(tri_ids, dtype=np.int64).reshape(-1)
        n = self.face_off[link + 1] - self.face_off[link]
        if ids.size and (ids.min() < 0 or ids.max() >= n):
            raise ValueError(f"triangle ids out of range for link {link} ({n} triangles)")
        if replace:
            self._highlighted[:] = False
        self._highlighted[self.face_off[link] + ids] = True
        self._hl_color = np.asarray(color, dtype=np.uint8)
        self._write_colors()

    def highlight_links(self, links, color=TRIANGLE_HIGHLIGHT) -> None:
        """Colour every triangle of ``links`` with ``color``, replacing all highlights, in
        one write of the colour array (a ``highlight_triangles`` call per link rewrote it
        once per link: ~2.5 M instructions a frame on hand-ball)."""
        self._highlighted[:] = False
        for li in links:
            if 0 <= li < self.n_links:
                self._highlighted[self.face_off[li]:self.face_off[li + 1]] = True
        self._hl_color = np.asarray(color, dtype=np.uint8)
        self._write_colors()

    def clear_highlight(self) -> None:
        if self._highlighted.any():
            self._highlighted[:] = False
            self._write_colors()

    @property
    def highlighted(self) -> np.ndarray:
        """Global triangle ids (into the concatenated faces) currently highlighted."""
        return np.flatnonzero(self._highlighted)

    def _write_colors(self):
        if self._rgb is None:  # a plain numpy view of the colour array (pyvista's accessor: ~50 us)
            from vtkmodules.util.numpy_support import vtk_to_numpy
            vtk_arr = self.polydata.GetCellData().GetArray("rgb")
            self._rgb = (vtk_arr, vtk_to_numpy(vtk_arr).reshape(-1, 3))
        vtk_arr, arr = self._rgb
        arr[...] = self._color
        highlighted = bool(self._highlighted.any())
        if highlighted:
            arr[self._highlighted] = self._hl_color
        vtk_arr.Modified()
        self.polydata.Modified()
        if self.proxy is not None:
            parr = self.proxy.cell_data["rgb"]
            parr[...] = self._color
            parr.VTKObject.Modified()
            self.proxy.Modified()
            if highlighted:
                self._sync_exact()
            self._show(self.polydata if highlighted else self.proxy)  # highlights: the exact triangles

    def clear(self) -> None:
        self.plotter.remove_actor(self.actor, render=False)
