"""Invariant checker for hierarchies (plain numpy; slow, for tests and inspection)."""
from __future__ import annotations

import numpy as np

from . import _layout as L


def check_bvh(bvh, rtol: float = 1e-12, children: bool | None = None) -> list[str]:
    """Every node's box and sphere enclose its triangles' vertices (within ``rtol`` of the
    mesh's coordinate scale); every node finite; children after parents; the leaves partition the triangles.
    With ``children`` (default: for AABB trees) every box also encloses its children's
    boxes and every sphere its children's spheres: always true for AABBs, and for oriented
    boxes and spheres after a refit (which merges children); a top-down fit encloses the
    primitives only, and a child's box may poke out of its parent's where it holds no
    geometry. Returns human-readable violations."""
    if children is None:
        children = bvh.kind == L.KIND_AABB
    errs: list[str] = []
    bad = ~np.isfinite(bvh.nodes_f).all(axis=1)
    if bad.any():
        errs.append(f"{int(bad.sum())} nodes have NaN or infinite values (first: node {int(np.argmax(bad))})")
        return errs  # the volume checks below would compare against NaN and pass
    v, f = bvh.mesh.vertices, bvh.mesh.faces
    tol = rtol * float(np.abs(v).max() + np.ptp(v, axis=0).max()) + 1e-300
    ni = bvh.nodes_i
    n = len(ni)
    left, right = ni[:, L.LEFT], ni[:, L.RIGHT]
    internal = left >= 0
    ids = np.arange(n)
    if np.any(internal & ((left <= ids) | (right <= ids))):
        errs.append("a child id is not greater than its parent's")
    if np.any(internal & ((left >= n) | (right >= n))):
        errs.append("a child id is out of range")
        return errs  # the volume checks below would follow the broken links
    leaves = ~internal
    covered = np.concatenate([bvh.node_primitives(i) for i in np.flatnonzero(leaves)])
    if len(covered) != len(f) or not np.array_equal(np.sort(covered), np.arange(len(f))):
        errs.append("leaves do not partition the triangles")
    has_box = bvh.kind != L.KIND_SPHERE
    # OBB-only trees keep a box-derived sphere in the row but never test it
    has_sphere = bvh.kind in (L.KIND_SPHERE, L.KIND_OBB_SPHERE)
    centers, ext, axes = bvh.box_centers(), bvh.box_extents(), bvh.box_axes()
    sc, sr = bvh.sphere_centers(), bvh.sphere_radii()
    for i in range(n):
        pts = v[f[bvh.node_primitives(i)]].reshape(-1, 3)
        if has_box:
            bpts = pts
            if internal[i] and children:
                bpts = np.vstack([pts, bvh.box_corners([left[i], right[i]]).reshape(-1, 3)])
            local = (bpts - centers[i]) @ axes[i]
            over = np.abs(local) - ext[i]
            if over.max() > tol:
                errs.append(f"node {i}: box misses a point by {over.max():.3g}")
        if has_sphere:
            d = np.linalg.norm(pts - sc[i], axis=1)
            if internal[i] and children:
                for c in (left[i], right[i]):
                    d = np.append(d, np.linalg.norm(sc[c] - sc[i]) + sr[c])
            if d.max() - sr[i] > tol:
                errs.append(f"node {i}: sphere misses a point by {d.max() - sr[i]:.3g}")
    if has_box and bvh.kind != L.KIND_AABB:
        gram = np.einsum("nki,nkj->nij", axes, axes)
        if np.abs(gram - np.eye(3)).max() > 1e-9:
            errs.append("box axes are not orthonormal")
    return errs
