"""What the camera should frame, Qt- and VTK-free: the extent of the bodies over their
whole motion (so a fit keeps them in view on every frame), the bodies at one frame (for
follow mode), and the stepper's current node pair (focus on the pair)."""
from __future__ import annotations

import numpy as np

from .trees import Tree

_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=np.float64)


def _link_boxes(scene):
    """(body, link, (8, 3) link-frame corners of the link mesh's bounding box)."""
    for b, sb in enumerate(scene.bodies):
        for li, link in enumerate(sb.body.links):
            v = np.asarray(link.mesh.vertices)
            lo, hi = v.min(axis=0), v.max(axis=0)
            yield b, li, lo + _CORNERS * (hi - lo)


def bounds_of_points(points, pad: float = 0.0) -> np.ndarray:
    """(6,) ``[xmin, xmax, ymin, ymax, zmin, zmax]`` (VTK's order) of (n, 3) points,
    grown by ``pad`` times the largest extent on every side."""
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    lo, hi = p.min(axis=0), p.max(axis=0)
    g = pad * float(max((hi - lo).max(), 1e-9))
    return np.column_stack([lo - g, hi + g]).ravel()


def scene_bounds(scene, frames=None, max_frames: int = 64, pad: float = 0.03) -> np.ndarray:
    """Bounds of every body over ``frames`` (default: the whole motion, sampled at most
    ``max_frames`` times), from the links' mesh boxes moved by their poses. Deforming
    meshes move within a few percent of their box: ``pad`` covers it."""
    if frames is None:
        n = scene.frames
        frames = np.unique(np.linspace(0, n - 1, min(n, max_frames)).round().astype(int))
    frames = np.atleast_1d(np.asarray(frames, dtype=int))
    pts = []
    sampled = {}  # body -> (f, L, 4, 4): a scene's poses are computed on demand (``FramePoses``):
    # the sampled frames only, once per body (per link, the whole motion: hand-ball 103 -> 8 ms)
    for b, li, corners in _link_boxes(scene):
        if b not in sampled:
            sampled[b] = np.asarray(scene.bodies[b].link_poses[frames], dtype=np.float64)
        poses = sampled[b][:, li]  # (f, 4, 4)
        pts.append((corners @ poses[:, :3, :3].transpose(0, 2, 1) + poses[:, None, :3, 3]).reshape(-1, 3))
    return bounds_of_points(np.concatenate(pts), pad)


def node_points(tree: Tree, node: int) -> np.ndarray:
    """World points spanning one node's volume (box corners, or a sphere's extreme points)."""
    if tree.family == "sphere":
        c, r = tree.world_spheres([node])
        return c[0] + r[0] * np.vstack([np.eye(3), -np.eye(3)])
    if tree.kdop is not None:  # the polytope's vertices
        from cdcore.realign import kdop_polytope
        v, _ = kdop_polytope(tree.kdop.slabs[node], tree.kdop.bv)
        return np.asarray(v) @ tree.pose[:3, :3].T + tree.pose[:3, 3]
    c, ax, e = tree.world_boxes([node])
    signs = _CORNERS * 2.0 - 1.0
    return c[0] + (signs * e[0]) @ ax[0].T


def pair_bounds(step, traversal, pad: float = 0.25, extra_points=None) -> np.ndarray | None:
    """Bounds of the stepper's current node pair (and ``extra_points``, e.g. the drawn
    separating axis or closest points), grown by ``pad``; None when there is no pair."""
    pts = [] if extra_points is None else [np.asarray(extra_points, dtype=np.float64).reshape(-1, 3)]
    if step is not None and traversal is not None:
        for tree, node in ((traversal.tree_a, step.node_a), (traversal.tree_b, step.node_b)):
            if tree is not None and node is not None and node >= 0:
                pts.append(node_points(tree, int(node)))
    pts = [p for p in pts if len(p)]
    if not pts:
        return None
    return bounds_of_points(np.concatenate(pts), pad)
