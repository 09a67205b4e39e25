"""Top-down hierarchy construction (van den Bergen 1998, section 2).

At each node: fit the bounding volume; split the primitives by the plane orthogonal
to the box's longest axis through the box's centre (the box median); a triangle goes
to the positive side when the midpoint of its projection onto the axis is greater than
the plane's coordinate; when all fall on one side, split into two halves of (almost)
equal size. Nodes are allocated in pre-order pairs, so children come after parents.

That is the default ``split`` rule (``SPLIT_MEDIAN``); the mean split and the binned surface-area
and volume heuristics choose the plane differently (``_build_sah``), and partition the same way.
"""
import numpy as np
from numba import njit

from ._layout import (C0, COUNT, E0, KIND_AABB, KIND_OBB, KIND_SPHERE, LEFT, N_ICOLS, R0, RIGHT,
                      SIZE, START)
from ._build_sah import N_BINS, SPLIT_MEAN, SPLIT_MEDIAN, binned_split, mean_key
from .bv import aabb, obb, sphere
from .bv.dispatch import fit_node


@njit(cache=True)
def _split_key(kind, nodes_f, node, axis, verts, faces, f):
    """Midpoint of triangle ``f``'s projection onto the node's split axis."""
    if kind == KIND_AABB:
        x0 = verts[faces[f, 0], axis]
        x1 = verts[faces[f, 1], axis]
        x2 = verts[faces[f, 2], axis]
    else:
        ux = nodes_f[node, R0 + axis]
        uy = nodes_f[node, R0 + 3 + axis]
        uz = nodes_f[node, R0 + 6 + axis]
        v = faces[f, 0]
        x0 = ux * verts[v, 0] + uy * verts[v, 1] + uz * verts[v, 2]
        v = faces[f, 1]
        x1 = ux * verts[v, 0] + uy * verts[v, 1] + uz * verts[v, 2]
        v = faces[f, 2]
        x2 = ux * verts[v, 0] + uy * verts[v, 1] + uz * verts[v, 2]
    return 0.5 * (min(x0, min(x1, x2)) + max(x0, max(x1, x2)))


@njit(cache=True, nogil=True)
def build_into(kind, split, verts, faces, leaf_size, pad, tri_m1, tri_m2, pts_m1, pts_m2, tri_area,
               nodes_f, nodes_i, prim_order, depth):
    """Build the hierarchy into caller-provided arrays of ``2 m - 1`` rows (``nodes_f`` zeroed;
    a packed tree's own views, so nothing is copied afterwards) with the split rule ``split``
    (``_build_sah.SPLIT_*``). Returns the node count."""
    m = faces.shape[0]
    cap = 2 * m - 1
    for i in range(cap):
        for c in range(N_ICOLS):
            nodes_i[i, c] = -1
        depth[i] = 0
    for i in range(m):
        prim_order[i] = i
    stack = np.empty(cap, dtype=np.int32)
    axes_buf = np.empty((3, 3))
    work = np.empty((2, 3, 3))
    dirs = np.empty((3, 3))  # the node's box directions (rows) for the other split rules
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
        node = stack[sp]
        start = nodes_i[node, START]
        count = nodes_i[node, COUNT]
        if kind == KIND_AABB:  # the hot, simple case stays inline (measured 1.4x faster)
            aabb.set_identity_axes(nodes_f, node)
            aabb.fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad)
        else:
            fit_node(kind, nodes_f, node, verts, faces, prim_order, start, count, pad,
                     tri_m1, tri_m2, pts_m1, pts_m2, tri_area, axes_buf, work)
        if count <= leaf_size:
            continue
        # longest box axis; oriented boxes keep their axes sorted, so it is column 0
        axis = 0
        if kind == KIND_AABB:
            if nodes_f[node, E0 + 1] > nodes_f[node, E0 + axis]:
                axis = 1
            if nodes_f[node, E0 + 2] > nodes_f[node, E0 + axis]:
                axis = 2
            delta = nodes_f[node, C0 + axis]
        else:
            delta = (nodes_f[node, R0 + axis] * nodes_f[node, C0]
                     + nodes_f[node, R0 + 3 + axis] * nodes_f[node, C0 + 1]
                     + nodes_f[node, R0 + 6 + axis] * nodes_f[node, C0 + 2])
        if split != SPLIT_MEDIAN:
            for d in range(3):
                for r in range(3):
                    dirs[d, r] = nodes_f[node, R0 + 3 * r + d]
            if split == SPLIT_MEAN:
                delta = mean_key(dirs, axis, verts, faces, prim_order, start, count)
            else:
                best_axis, best_delta = binned_split(split, dirs, verts, faces, prim_order, start, count, lo, hi,
                                                     bins)
                if best_axis >= 0:  # else all keys coincide: the median's plane, then halves
                    axis = best_axis
                    delta = best_delta
        # in-place partition: negatives to the front
        i = start
        j = start + count - 1
        while i <= j:
            if _split_key(kind, nodes_f, node, axis, verts, faces, prim_order[i]) > delta:
                t = prim_order[i]
                prim_order[i] = prim_order[j]
                prim_order[j] = t
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
    return n_nodes


@njit(cache=True, nogil=True)
def refit_tree(kind, nodes_f, nodes_i, prim_order, verts, faces, pad):
    """Bottom-up refit in one reverse loop over the node arrays (section 4).

    AABB: leaves refitted to their triangles, parents merged exactly from their children.
    Oriented kinds: single-triangle leaves take the triangle's own frame, larger leaves keep
    their axes and refit the intervals; parents keep their axes and enclose the children's
    boxes (conservative, one pass); spheres enclose the children's spheres.
    """
    axes_buf = np.empty((3, 3))
    for node in range(nodes_i.shape[0] - 1, -1, -1):
        left = nodes_i[node, LEFT]
        if left < 0:
            start = nodes_i[node, START]
            count = nodes_i[node, COUNT]
            if kind == KIND_AABB:
                aabb.fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad)
                continue
            if count == 1:
                obb.triangle_axes(axes_buf, verts, faces, prim_order[start])
                for r in range(3):
                    for c in range(3):
                        nodes_f[node, R0 + 3 * r + c] = axes_buf[r, c]
            obb.fit_prims_axes(nodes_f, node, verts, faces, prim_order, start, count, pad)
            if kind == KIND_OBB:
                sphere.from_box(nodes_f, node)
            else:
                sphere.fit_prims(nodes_f, node, verts, faces, prim_order, start, count, pad)
        else:
            right = nodes_i[node, RIGHT]
            if kind == KIND_AABB:
                aabb.merge(nodes_f, node, left, right)
                continue
            obb.merge_keep_axes(nodes_f, node, left, right)
            if kind == KIND_OBB:
                sphere.from_box(nodes_f, node)
            else:
                sphere.merge(nodes_f, node, left, right)
        if kind == KIND_SPHERE:
            nodes_f[node, SIZE] = sphere.sphere_size(nodes_f, node)
