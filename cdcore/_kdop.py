"""k-DOP hierarchies: top-down build, exact bottom-up refit and the table-realignment pass.

Build (van den Bergen 1998, section 2, with the k-DOP rule of Fünzig & Fellner section 6:
"a binary hierarchy with subdivision of the longest k-DOP direction at the midpoint"): at
each node fit the k-DOP (``bv.kdop.fit_prims``), take the widest slab i (unit directions,
so widths compare), split by the plane D_i . p = (lo_i + hi_i)/2; a triangle goes to the
positive side when the midpoint of its projection onto D_i is greater than that value;
when all fall on one side, split into two halves of (almost) equal size. Nodes are
allocated in pre-order pairs, children after parents, exactly like ``_build.build_into``.

Refit (van den Bergen section 4): one reverse loop; leaves refit their slabs to their
triangles, parents take the exact union of their children's slabs, so a refitted node's
slabs equal the tight slabs of its triangles (+ pad) and the root equals a rebuild's root.

Table data (Fünzig & Fellner section 3.1, "second pass"): per node, from its vertices;
O(m log m) for a balanced tree, recomputed lazily after a refit (``ensure_table``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._build_sah import N_BINS, SPLIT_MEAN, SPLIT_MEDIAN, binned_split, mean_key
from ._layout import C0, COUNT, E0, LEFT, N_FCOLS, N_ICOLS, RIGHT, SIZE, START
from .bv import aabb, sphere
from .bv.kdop_angle import angle_ring_table, fit_angle_occupancy
from .bv.kdop import (KDOP_DIRS, KdopData, fit_prims, fit_table_node, merge, project_vertices,
                      ring_table, widest_slab)


@njit(cache=True)
def _write_box(nodes_f, slabs, node):
    """The node's box columns: the AABB of slabs 0..2 (x, y, z; already padded)."""
    k2 = slabs.shape[1] // 2
    for d in range(3):
        lo = slabs[node, d]
        hi = slabs[node, k2 + d]
        nodes_f[node, C0 + d] = 0.5 * (lo + hi)
        nodes_f[node, E0 + d] = 0.5 * (hi - lo)
    nodes_f[node, SIZE] = aabb.box_size(nodes_f, node)


@njit(cache=True)
def build_kdop_tree(dirs, verts, faces, leaf_size, pad, split):
    """``split``: ``_build_sah.SPLIT_*`` (median: the widest slab's midpoint, as above; mean:
    the widest slab through the mean key; SAH/volume: binned over x, y, z with the AABB as the
    cost box). Returns ``nodes_f`` (n, 20), ``nodes_i`` (n, 4) int32, ``prim_order`` (m,) int32,
    ``depth`` (n,) int32 and ``slabs`` (n, k)."""
    m = faces.shape[0]
    k2 = dirs.shape[0]
    cap = 2 * m - 1
    proj = project_vertices(dirs, verts)
    slabs = np.zeros((cap, 2 * k2))
    nodes_f = np.zeros((cap, N_FCOLS))
    nodes_i = np.full((cap, N_ICOLS), -1, dtype=np.int32)
    depth = np.zeros(cap, dtype=np.int32)
    prim_order = np.arange(m).astype(np.int32)
    stack = np.empty(cap, dtype=np.int32)
    lo = np.empty((1 if split == SPLIT_MEDIAN else m, 3))
    hi = np.empty_like(lo)
    bins = np.empty((N_BINS, 7))
    nodes_i[0, START] = 0
    nodes_i[0, COUNT] = m
    n_nodes = 1
    sp = 0
    stack[sp] = 0
    sp += 1
    while sp > 0:
        sp -= 1
        node = np.int64(stack[sp])  # (the refit's loop index is int64: one signature of the node kernels)
        start = nodes_i[node, START]
        count = nodes_i[node, COUNT]
        fit_prims(slabs, node, proj, faces, prim_order, start, count, pad)
        aabb.set_identity_axes(nodes_f, node)
        _write_box(nodes_f, slabs, node)
        sphere.fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad)
        if count <= leaf_size:
            continue
        axis = widest_slab(slabs, node)
        delta = 0.5 * (slabs[node, axis] + slabs[node, k2 + axis])
        if split == SPLIT_MEAN:
            delta = mean_key(dirs, axis, verts, faces, prim_order, start, count)
        elif split != SPLIT_MEDIAN:
            best_axis, best_delta = binned_split(split, dirs, verts, faces, prim_order, start, count, lo, hi, bins)
            if best_axis >= 0:
                axis = best_axis
                delta = best_delta
        i = start
        j = start + count - 1
        while i <= j:
            f = prim_order[i]
            x0 = proj[faces[f, 0], axis]
            x1 = proj[faces[f, 1], axis]
            x2 = proj[faces[f, 2], axis]
            key = 0.5 * (min(x0, min(x1, x2)) + max(x0, max(x1, x2)))
            if key > delta:
                prim_order[i] = prim_order[j]
                prim_order[j] = f
                j -= 1
            else:
                i += 1
        n_neg = i - start
        if n_neg == 0 or n_neg == count:
            n_neg = count // 2
        left = n_nodes
        right = n_nodes + 1
        n_nodes += 2
        nodes_i[node, LEFT] = left
        nodes_i[node, RIGHT] = right
        nodes_i[left, START] = start
        nodes_i[left, COUNT] = n_neg
        nodes_i[right, START] = start + n_neg
        nodes_i[right, COUNT] = count - n_neg
        depth[left] = depth[node] + 1
        depth[right] = depth[node] + 1
        stack[sp] = right
        stack[sp + 1] = left
        sp += 2
    return (nodes_f[:n_nodes].copy(), nodes_i[:n_nodes].copy(), prim_order, depth[:n_nodes].copy(),
            slabs[:n_nodes].copy())


@njit(cache=True)
def refit_kdop_tree(dirs, nodes_f, nodes_i, prim_order, verts, faces, pad, slabs):
    """Bottom-up refit in one reverse loop (section 4): leaves refit to their triangles,
    parents merge their children exactly. Spheres: fitted at leaves, merged above."""
    proj = project_vertices(dirs, verts)
    for node in range(nodes_i.shape[0] - 1, -1, -1):
        left = nodes_i[node, LEFT]
        if left < 0:
            start = nodes_i[node, START]
            count = nodes_i[node, COUNT]
            fit_prims(slabs, node, proj, faces, prim_order, start, count, pad)
            _write_box(nodes_f, slabs, node)
            sphere.fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad)
        else:
            right = nodes_i[node, RIGHT]
            merge(slabs, node, left, right)
            _write_box(nodes_f, slabs, node)
            sphere.merge(nodes_f, node, left, right)


@njit(cache=True)
def fit_table(dirs, nodes_i, prim_order, verts, faces, slabs, tab, occ, outer, pad, a, inv_delta, n_rings):
    """The table-realignment data of every node (section 3.1)."""
    for node in range(nodes_i.shape[0]):
        fit_table_node(dirs, node, verts, faces, prim_order, nodes_i[node, START], nodes_i[node, COUNT],
                       slabs, tab, occ, outer, pad, a, inv_delta, n_rings)


# ---- python-level glue used by cdcore.bvh ------------------------------------------------
def mesh_scale(vertices: np.ndarray) -> float:
    """max |coordinate| + largest extent: the scale ``bvh._pad`` takes PAD_REL of."""
    lo = np.array([vertices[:, i].min() for i in range(3)])
    hi = np.array([vertices[:, i].max() for i in range(3)])
    return float(max(np.abs(lo).max(), np.abs(hi).max()) + (hi - lo).max())


def build_kdop_arrays(bv: str, vertices, faces, leaf_size: int, pad: float, split: int = 0):
    """(nodes_f, nodes_i, prim_order, depth, KdopData) of a new k-DOP hierarchy; the table
    data is fitted right away. The kernels get writable copies of ``vertices`` and ``faces`` (a
    ``Mesh``'s are read-only): numba compiles a kernel once per read-only-ness of its
    arguments, and the refit, the table fit and the other builders pass writable pack arrays."""
    vertices = np.array(vertices, dtype=np.float64, order="C")
    faces = np.array(faces, dtype=np.int32, order="C")
    nf, ni, order, depth, slabs = build_kdop_tree(KDOP_DIRS[bv], vertices, faces, leaf_size, pad, split)
    kd = KdopData(bv, slabs, mesh_scale(vertices), pad)
    _fit_table(kd, ni, order, vertices, faces)
    return nf, ni, order, depth, kd


def refit_kdop(bvh, pad: float) -> None:
    """Exact refit of the slabs (and boxes/spheres) of a k-DOP ``BVH`` to its mesh's current
    vertices; the table data is marked stale and refreshed by ``ensure_table``."""
    kd = bvh.kdop
    refit_kdop_tree(kd.dirs, bvh._nf, bvh._ni, bvh._po, bvh._v, bvh._f,
                    pad, kd.slabs)
    kd.scale = mesh_scale(bvh.mesh.vertices)
    kd.pad = pad
    kd.table_valid = False


def ensure_table(bvh) -> None:
    """Fit the table-realignment data if a refit made it stale. Several threads may query a
    refitted tree at once: the first fits the table (in place: a prepared ``Query`` holds
    these arrays) under the tree's ``table_lock`` while the others wait, and ``table_valid``
    is set only once the fit is complete, so no query reads a half-fitted table (its rows are
    zeroed, then accumulated) and none fits it twice."""
    kd = bvh.kdop
    if kd.table_valid:
        return
    with kd.table_lock:
        if not kd.table_valid:
            _fit_table(kd, bvh._ni, bvh._po, bvh._v, bvh._f)


def _fit_table(kd: KdopData, nodes_i, prim_order, vertices, faces) -> None:
    rt = ring_table(kd.bv)
    fit_table(kd.dirs, nodes_i, prim_order, vertices, faces, kd.slabs, kd.tab, kd.occ, kd.outer, kd.pad, rt.a,
              rt.inv_delta, rt.n)
    # the paper-faithful table's occupancy (rings equally spaced in angle; same centres)
    at = angle_ring_table(kd.bv)
    fit_angle_occupancy(kd.dirs, nodes_i, prim_order, vertices, faces, kd.tab, at.a, at.inv_dtheta, at.n)
    kd.table_valid = True
