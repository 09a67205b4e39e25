"""A display proxy that follows a deforming mesh: vertex clustering onto original vertices.

Software GL spends ~1,500 instructions per drawn triangle on the CPU side (``meshes``), so a
20,000-triangle deforming sheet costs ~30 M instructions a frame to draw. A rigid mesh is
drawn through a decimated copy (``pyvista``'s quadric decimation, which moves vertices); a
deforming one cannot be: its vertices change every frame. Here the proxy's vertices are a
*subset* of the mesh's own (Rossignac & Borrel's vertex clustering on a uniform grid of the
rest shape, each cell represented by its vertex nearest the cell's centroid), so the proxy
follows the deformation by indexing the current vertices: ``proxy_points = vertices[rep]``.
Drawing only: the engine, picking and highlights use the exact mesh.
"""
from __future__ import annotations

import numpy as np


def cluster_proxy(vertices, faces, target_vertices: int):
    """Vertex clustering of a triangle mesh onto its own vertices.

    Parameters
    ----------
    vertices : (n, 3) float64
        the rest shape (the grid's cells are laid over it).
    faces : (m, 3) int
        triangles, indices into ``vertices``.
    target_vertices : int
        about how many vertices the proxy keeps (a surface: about twice as many triangles).

    Returns
    -------
    rep : (k,) int64
        the kept vertices (indices into ``vertices``), one per occupied grid cell.
    proxy_faces : (p, 3) int64
        the proxy's triangles, indices into ``rep``: each face's corners mapped to their
        cells' representatives, with the faces that collapsed (two corners in one cell) and
        repeated triangles dropped; the orientation of the first of each is kept.
    """
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    n = len(v)
    if n == 0 or len(f) == 0 or target_vertices >= n:
        return np.arange(n, dtype=np.int64), f.copy()
    # the cell size: a surface's vertex count goes as 1 / h^2, so h = (mean edge) sqrt(n / target)
    e = np.linalg.norm(v[f[:, [1, 2, 0]]] - v[f], axis=2)
    edge = float(e[np.isfinite(e)].mean()) if np.isfinite(e).any() else 0.0
    span = float(np.ptp(v, axis=0).max())
    if not edge > 0.0 or not span > 0.0:
        return np.arange(n, dtype=np.int64), f.copy()
    h = edge * np.sqrt(n / max(int(target_vertices), 1))
    ijk = np.floor((v - v.min(axis=0)) / h).astype(np.int64)
    dims = ijk.max(axis=0) + 1
    key = (ijk[:, 0] * dims[1] + ijk[:, 1]) * dims[2] + ijk[:, 2]
    _, cell = np.unique(key, return_inverse=True)
    k = int(cell.max()) + 1
    counts = np.bincount(cell, minlength=k).astype(np.float64)
    centroid = np.stack([np.bincount(cell, weights=v[:, c], minlength=k) for c in range(3)], axis=1)
    centroid /= counts[:, None]
    d2 = ((v - centroid[cell]) ** 2).sum(axis=1)
    order = np.lexsort((d2, cell))  # by cell, nearest first
    first = np.ones(n, dtype=bool)
    first[1:] = cell[order[1:]] != cell[order[:-1]]
    rep = order[first]  # rep[c]: cell c's vertex nearest its centroid (cells in increasing order)
    pf = cell[f]
    keep = (pf[:, 0] != pf[:, 1]) & (pf[:, 1] != pf[:, 2]) & (pf[:, 0] != pf[:, 2])
    pf = pf[keep]
    if len(pf):
        _, once = np.unique(np.sort(pf, axis=1), axis=0, return_index=True)
        pf = pf[np.sort(once)]
    return rep.astype(np.int64), pf.astype(np.int64)
