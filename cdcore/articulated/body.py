"""Articulated bodies: rigid links joined by revolute joints, with forward kinematics."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._layout import C0, E0, N_FCOLS, R0
from ..bvh import BVH, build_bvh
from ..bv.obb import triangle_moments
from ..mesh import Mesh
from .._arrival import WritableOnArrival
from ..transforms import as_pose, writable_f64
from ._fk import fk_frames


@dataclass
class Link:
    """One rigid link.

    Parameters
    ----------
    name : str
    mesh : Mesh
        Geometry in the link frame; the link frame's origin is its joint.
    parent : int
        Index of the parent link, -1 for the root. Parents come before children.
    origin : (4, 4) float64
        The joint frame in the parent link's frame at zero angle (root: in the body frame).
    axis : (3,) float64
        Revolute joint axis in the joint frame.
    limits : (2,) float64
        Joint angle range in radians.
    """

    name: str
    mesh: Mesh
    parent: int = -1
    origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    limits: tuple = (-np.pi, np.pi)


class ArticulatedBody(WritableOnArrival):
    """A tree of rigid links, each with a precomputed mesh hierarchy and leaf OBB.

    Parameters
    ----------
    links : list of Link
        In parent-before-child order.
    name : str
    mesh_bv : str
        Bounding-volume type of the links' own mesh hierarchies (the exact queries).
    """

    def __init__(self, links: list[Link], name: str = "body", mesh_bv: str = "obb", leaf_size: int = 1,
                 joints_touch: bool = True):
        if not links:
            raise ValueError("links: an articulated body needs at least one link")
        self.name = name
        self.links = list(links)
        L = len(links)
        self.parents = np.empty(L, dtype=np.int32)
        self.origins = np.empty((L, 4, 4))
        self.axes = np.empty((L, 3))
        self.limits = np.empty((L, 2))
        for i, ln in enumerate(links):
            if not isinstance(ln, Link):
                raise TypeError(f"links[{i}]: expected Link, got {type(ln).__name__}")
            if not isinstance(ln.mesh, Mesh):
                raise TypeError(f"links[{i}].mesh: expected cdcore.Mesh, got {type(ln.mesh).__name__}")
            if not (-1 <= ln.parent < i) or (ln.parent == -1 and i != 0) or (i == 0 and ln.parent != -1):
                raise ValueError(f"links[{i}] ({ln.name}): parent {ln.parent} must be an earlier link "
                                 f"(only link 0 is the root)")
            self.parents[i] = ln.parent
            self.origins[i] = as_pose(ln.origin, f"links[{i}].origin")
            ax = np.asarray(ln.axis, dtype=np.float64)
            if ax.shape != (3,) or not np.all(np.isfinite(ax)) or np.linalg.norm(ax) < 1e-12:
                raise ValueError(f"links[{i}].axis: expected a finite non-zero 3-vector, got {ln.axis!r}")
            self.axes[i] = ax / np.linalg.norm(ax)
            lo, hi = (float(x) for x in ln.limits)
            if not lo <= hi:
                raise ValueError(f"links[{i}].limits: lower {lo} above upper {hi}")
            self.limits[i] = lo, hi
        self.mesh_bv = mesh_bv
        # whether parent and child touch at their joint (then their pair is left out of
        # self-collision); chains built with a joint gap (CAB's 16-link scenes) do not
        self.joints_touch = bool(joints_touch)
        self.bvhs: list[BVH] = [build_bvh(ln.mesh, mesh_bv, leaf_size) for ln in links]
        self._pack()
        if L == 1:  # share the single link's arrays (a deforming link refits in place)
            self._share(self.bvhs[0])
        self._leaf_volumes()
        from .hierarchy import build_topology
        self.tree = build_topology(self.parents)

    # ---- kinematics ------------------------------------------------------------
    @property
    def n_links(self) -> int:
        return len(self.links)

    @property
    def n_dofs(self) -> int:
        return len(self.links)

    def adjacent_pairs(self) -> set:
        """Parent-child link pairs (excluded from self-collision when ``joints_touch``)."""
        return {(int(p), i) for i, p in enumerate(self.parents) if p >= 0}

    def skipped_self_pairs(self) -> set:
        """Link pairs self-collision leaves out: the adjacent ones when the links touch at
        their joints, none otherwise (every C(L, 2) pair is tested, as in CAB's brute row)."""
        return self.adjacent_pairs() if self.joints_touch else set()

    def clip(self, q) -> np.ndarray:
        return np.clip(q, self.limits[:, 0], self.limits[:, 1])

    def fk(self, q, root_pose=None) -> np.ndarray:
        """World pose (L, 4, 4) of every link for joint angles ``q`` (L,) (not clipped)."""
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (self.n_dofs,):
            raise ValueError(f"q: expected shape ({self.n_dofs},), got {q.shape}")
        return self.fk_frames(q[None], None if root_pose is None else np.asarray(root_pose)[None])[0]

    def fk_frames(self, q, root_poses=None) -> np.ndarray:
        """Vectorised FK: ``q`` (F, L), ``root_poses`` (F, 4, 4) or None -> (F, L, 4, 4)."""
        q = writable_f64(q)
        if q.ndim != 2 or q.shape[1] != self.n_dofs:
            raise ValueError(f"q: expected shape (frames, {self.n_dofs}), got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise ValueError("q: contains NaN or infinite joint angles")
        if root_poses is None:  # (writable, as every caller's: one compiled signature of fk_frames)
            root_poses = np.tile(np.eye(4), (len(q), 1, 1))
        root_poses = writable_f64(root_poses)
        if root_poses.shape != (len(q), 4, 4):
            raise ValueError(f"root_poses: expected shape ({len(q)}, 4, 4), got {root_poses.shape}")
        out = np.empty((len(q), self.n_links, 4, 4))
        fk_frames(self.parents, self.origins, self.axes, q, root_poses, out)
        return out

    # ---- packed link geometry for the kernels ------------------------------------
    def _pack(self):
        """Concatenate the links' mesh hierarchies; slices by the offsets give each link's
        arrays with its own local indices."""
        b = self.bvhs
        # int32, as in the fused self-collision kernel's packed buffer: the kernels they reach
        # (exact queries, hierarchy update) then have one compiled signature (issue 15)
        self.node_off = np.cumsum([0] + [x.n_nodes for x in b]).astype(np.int32)
        self.prim_off = np.cumsum([0] + [x.mesh.n_faces for x in b]).astype(np.int32)
        self.vert_off = np.cumsum([0] + [x.mesh.n_vertices for x in b]).astype(np.int32)
        self.nodes_f = np.ascontiguousarray(np.vstack([x.nodes_f for x in b]))
        self.nodes_i = np.ascontiguousarray(np.vstack([x.nodes_i for x in b]))
        self.prim_order = np.ascontiguousarray(np.concatenate([x.prim_order for x in b]))
        self.vertices = np.ascontiguousarray(np.vstack([x.mesh.vertices for x in b]))
        self.faces = np.ascontiguousarray(np.vstack([x.mesh.faces for x in b]))
        self.max_height = max(x.height for x in b)

    def _leaf_volumes(self):
        """Per link: the leaf OBB (the root box of an OBB hierarchy of the link: a
        covariance fit, identical for the ``obb`` and ``cab`` updates), and the area-weighted
        surface moments used by the ``obb`` update's covariance."""
        L = self.n_links
        self.leaf_c = np.empty((L, 3))
        self.leaf_R = np.empty((L, 3, 3))
        self.leaf_e = np.empty((L, 3))
        self.moments = np.zeros((L, 10))  # area, area*centroid (3), second moments (6)
        for i, ln in enumerate(self.links):
            ob = self.bvhs[i] if self.mesh_bv in ("obb", "obb_sphere") else build_bvh(ln.mesh, "obb")
            self.leaf_c[i] = ob.nodes_f[0, C0:C0 + 3]
            self.leaf_e[i] = ob.nodes_f[0, E0:E0 + 3]
            self.leaf_R[i] = ob.nodes_f[0, R0:R0 + 9].reshape(3, 3)
            m1, m2, p1, p2, area = triangle_moments(ln.mesh.vertices, ln.mesh.faces)
            if area.sum() > 0:
                self.moments[i, 0] = area.sum()
                self.moments[i, 1:4] = m1.sum(axis=0)
                self.moments[i, 4:10] = m2.sum(axis=0)
            else:  # all triangles degenerate: vertex moments
                self.moments[i, 0] = 3.0 * len(p1)
                self.moments[i, 1:4] = p1.sum(axis=0)
                self.moments[i, 4:10] = p2.sum(axis=0)

    def _share(self, bvh) -> None:
        """A one-link body's packed arrays are its hierarchy's own, as the kernels take them:
        writeable (numba types a read-only array as another type, so the public read-only
        views compiled the traversal core once more per combination, ~5 min each: issue 15)
        and in full rows (an AABB tree's compact rows are spelled out: a copy, refreshed by
        ``set_link_vertices``)."""
        full = bvh._nf.shape[1] == N_FCOLS
        self.nodes_f = bvh._nf if full else np.array(bvh.nodes_f)
        self.nodes_i, self.prim_order, self.vertices = bvh._ni, bvh._po, bvh._v

    def use_hierarchy(self, i: int, bvh: BVH) -> None:
        """Use ``bvh`` as link ``i``'s mesh hierarchy, exactly as it is (a saved or refitted
        tree differs from a rebuild of its mesh): a hierarchy of the body's ``mesh_bv`` over
        a mesh with the link's vertex and triangle counts. The packed arrays the kernels read
        are refreshed (writable, as the kernels take them: the tree's public arrays are
        read-only views and would compile the traversal core once more)."""
        if not isinstance(bvh, BVH):
            raise TypeError(f"bvh: expected cdcore.BVH, got {type(bvh).__name__}")
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.n_links:
            raise IndexError(f"i: expected a link index in [0, {self.n_links}), got {i!r}")
        mesh = self.links[i].mesh
        if bvh.bv != self.mesh_bv:
            raise ValueError(f"bvh: expected a {self.mesh_bv!r} hierarchy (the body's mesh_bv), got {bvh.bv!r}")
        if (bvh.mesh.n_vertices, bvh.mesh.n_faces) != (mesh.n_vertices, mesh.n_faces):
            raise ValueError(f"bvh: its mesh has {bvh.mesh.n_vertices} vertices and {bvh.mesh.n_faces} triangles, "
                             f"link {i}'s {mesh.n_vertices} and {mesh.n_faces}")
        self.bvhs[i] = bvh
        self._pack()
        if self.n_links == 1:
            self._share(bvh)
        self._leaf_volumes()

    def set_link_vertices(self, i: int, vertices, rebuild: bool = False) -> None:
        """Deform link ``i``: refit (or rebuild) its mesh hierarchy to ``vertices`` (n, 3)
        and refresh the packed arrays and its leaf box (the refitted root box)."""
        bvh = self.bvhs[i]
        if rebuild:
            bvh.rebuild(vertices)
        else:
            bvh.refit(vertices)
        if self.n_links == 1:  # share the arrays
            self._share(bvh)
            self.max_height = bvh.height
        else:
            if bvh.n_nodes != self.node_off[i + 1] - self.node_off[i]:
                self._pack()
            else:
                self.nodes_f[self.node_off[i]:self.node_off[i + 1]] = bvh.nodes_f
                self.nodes_i[self.node_off[i]:self.node_off[i + 1]] = bvh.nodes_i
                self.prim_order[self.prim_off[i]:self.prim_off[i + 1]] = bvh.prim_order
                self.vertices[self.vert_off[i]:self.vert_off[i + 1]] = bvh.mesh.vertices
                self.max_height = max(b.height for b in self.bvhs)
        self.leaf_c[i] = bvh.nodes_f[0, C0:C0 + 3]
        self.leaf_e[i] = bvh.nodes_f[0, E0:E0 + 3]
        self.leaf_R[i] = bvh.nodes_f[0, R0:R0 + 9].reshape(3, 3)

    def link_vertices(self, i: int) -> np.ndarray:
        return self.vertices[self.vert_off[i]:self.vert_off[i + 1]]

    def __repr__(self) -> str:
        return f"ArticulatedBody({self.name!r}, links={self.n_links}, triangles={len(self.faces)})"
