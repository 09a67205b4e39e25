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
from numba import njit, prange, types

from ._build_sah import N_BINS, SPLIT_MEAN, SPLIT_MEDIAN, binned_split, mean_key
from ._layout import (AABB_FCOLS, AABB_SIZE, C0, COUNT, E0, KIND_AABB, KIND_OBB, KIND_SPHERE, LEFT, N_ICOLS, R0,
                      RIGHT, SIZE, START)
from ._pack import unpack
from ._pairjit import pair_njit
from .bv import aabb, obb, sphere
from .bv.dispatch import fit_node
from .mesh import MAX_COORD, MIN_SCALE

# Every box and sphere is grown by this fraction of the mesh's coordinate scale: it
# absorbs the few ulps by which transforming a box and transforming the triangles it
# encloses can round apart, so a BV test never rejects a pair the exact triangle test
# (run on the transformed vertices) would accept.
PAD_REL = 1e-12


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
    a packed tree's own views, so nothing is copied afterwards; AABB trees: compact rows, no
    axes) with the split rule ``split`` (``_build_sah.SPLIT_*``). Returns the node count."""
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
        node = np.int64(stack[sp])  # (the refit's loop index is int64: one signature of the node kernels)
        start = nodes_i[node, START]
        count = nodes_i[node, COUNT]
        if kind == KIND_AABB:  # the hot, simple case stays inline (measured 1.4x faster)
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
                    if kind == KIND_AABB:  # compact rows: the axes are the identity
                        dirs[d, r] = 1.0 if d == r else 0.0
                    else:
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


@pair_njit(nogil=True)
def refit_tree(kind, nodes_f, nodes_i, prim_order, verts, faces, pad, axes_buf, ranges, r0, r1):
    """Bottom-up refit in one reverse loop over the node arrays (section 4): the id ranges
    ``ranges[r0:r1]`` ((R, 2) int64 [first, end) rows, ascending), last range first and each
    from its last id down, so children (larger ids) come before their parents; the whole tree
    is the one range (0, n). Several threads: ``refit_tree_parts``.

    AABB: leaves refitted to their triangles, parents merged exactly from their children.
    Oriented kinds: single-triangle leaves take the triangle's own frame, larger leaves keep
    their axes and refit the intervals; parents keep their axes and enclose the children's
    boxes (conservative, one pass); spheres enclose the children's spheres. ``axes_buf``
    (3, 3) float64 is the caller's scratch: the loop and its per-node callees allocate nothing
    and are compiled without reference counting (``_pairjit``: the per-node calls passing
    ``nodes_f`` and the mesh's arrays were most of an OBB refit's time).
    """
    for g in range(r1 - 1, r0 - 1, -1):
        for node in range(ranges[g, 1] - 1, ranges[g, 0] - 1, -1):
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


@njit(cache=True, nogil=True, parallel=True)
def refit_tree_parts(kind, nodes_f, nodes_i, prim_order, verts, faces, pad, axes_bufs, ranges, cuts):
    """``refit_tree`` of oriented and sphere trees on numba's threads: part p's id ranges
    ``ranges[cuts[p]:cuts[p + 1]]`` (disjoint subtrees, ``bvh.refit_split``) with scratch
    ``axes_bufs[p]`` (P, 3, 3), then the nodes above them, ``ranges[cuts[-1]:]``, on this thread.
    The same volumes, bit for bit: each node's arithmetic reads only its own children."""
    n_parts = cuts.shape[0] - 1
    if axes_bufs.shape[0] < n_parts or not _ranges_ok(ranges, cuts, nodes_i.shape[0]):
        raise ValueError("refit_tree_parts: ranges of another tree")
    for p in prange(n_parts):
        refit_tree(kind, nodes_f, nodes_i, prim_order, verts, faces, pad, axes_bufs[p], ranges, cuts[p],
                   cuts[p + 1])
    refit_tree(kind, nodes_f, nodes_i, prim_order, verts, faces, pad, axes_bufs[0], ranges, cuts[n_parts],
               np.int64(ranges.shape[0]))


@njit(cache=True, nogil=True)
def _ranges_ok(ranges, cuts, n):
    """Every range inside [0, n) and every cut inside the ranges' rows: a split of another
    tree must not make a sweep read or write out of bounds."""
    for r in range(ranges.shape[0]):
        if not 0 <= ranges[r, 0] <= ranges[r, 1] <= n:
            return False
    for c in range(cuts.shape[0]):
        if not 0 <= cuts[c] <= ranges.shape[0] or (c > 0 and cuts[c] < cuts[c - 1]):
            return False
    return True


@njit(cache=True, inline='always')
def _mn(a, b):
    return a if a < b else b  # a select, not a branch: refit's coordinates are in no order


@njit(cache=True, inline='always')
def _mx(a, b):
    return a if a > b else b


# one explicit signature: the new vertices may be read-only (a Mesh's own), the rest is the
# tree's (its pack and its faces in primitive order)
_RO2 = types.Array(types.float64, 2, "C", readonly=True)
SIG_REFIT_AABB = types.int64(_RO2, types.float64[:, ::1], types.float64[::1], types.int32[::1],
                             types.int32[:, ::1])


@pair_njit(nogil=True)
def _copy_rows(src, out, i0, i1, red, p):
    """Steps 1 of ``refit_aabb`` on rows [i0, i1): copy ``src`` into ``out`` while summing ``x - x``
    (0 when all are finite, NaN otherwise) and taking the bounds, into ``red[p]`` (acc, lo xyz,
    hi xyz)."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    acc = 0.0
    for i in range(i0, i1):
        x = src[i, 0]
        y = src[i, 1]
        z = src[i, 2]
        out[i, 0] = x
        out[i, 1] = y
        out[i, 2] = z
        acc += (x - x) + (y - y) + (z - z)  # inf - inf and NaN are NaN, and NaN sticks
        lo0 = _mn(lo0, x)
        hi0 = _mx(hi0, x)
        lo1 = _mn(lo1, y)
        hi1 = _mx(hi1, y)
        lo2 = _mn(lo2, z)
        hi2 = _mx(hi2, z)
    red[p, 0] = acc
    red[p, 1] = lo0
    red[p, 2] = lo1
    red[p, 3] = lo2
    red[p, 4] = hi0
    red[p, 5] = hi1
    red[p, 6] = hi2


@pair_njit(nogil=True)
def _put_rows(out, v, i0, i1):
    """Step 2's copy on rows [i0, i1): the pack's vertices := ``out``."""
    for i in range(i0, i1):
        v[i, 0] = out[i, 0]
        v[i, 1] = out[i, 1]
        v[i, 2] = out[i, 2]


@njit(cache=True, nogil=True)
def _pad_of(red):
    """Step 2's check and pad from the rows' partial bounds ``red`` (P, 7): (code, pad), code 1
    for a non-finite coordinate, 2 for one outside ``mesh.check_range``'s range, else 0 with the
    pad (``bvh._pad``'s arithmetic on the same bounds: bit-identical; min/max are exact, so the
    order of the parts does not matter)."""
    acc = 0.0
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for p in range(red.shape[0]):
        acc += red[p, 0]
        lo0 = _mn(lo0, red[p, 1])
        lo1 = _mn(lo1, red[p, 2])
        lo2 = _mn(lo2, red[p, 3])
        hi0 = _mx(hi0, red[p, 4])
        hi1 = _mx(hi1, red[p, 5])
        hi2 = _mx(hi2, red[p, 6])
    if acc != 0.0:
        return 1, 0.0
    big = max(max(abs(lo0), max(abs(lo1), abs(lo2))), max(abs(hi0), max(abs(hi1), abs(hi2))))
    if big > MAX_COORD or 0.0 < big < MIN_SCALE:
        return 2, 0.0
    return 0, PAD_REL * (big + max(hi0 - lo0, max(hi1 - lo1, hi2 - lo2)))


@pair_njit(nogil=True)
def _refit_aabb_nodes(nf, ni, v, tri_verts, pad, ranges, r0, r1):
    """Step 3 of ``refit_aabb`` for the id ranges ``ranges[r0:r1]`` (as ``refit_tree``: last range
    first, each from its last id down, so children come first): a leaf's box from its
    triangles' corners, read once through ``tri_verts`` (the faces in primitive order, so a leaf
    reads its own rows and not ``prim_order`` then ``faces``), a parent's the merge of its
    children's. The arithmetic of ``aabb.fit_prims`` / ``aabb.merge`` / ``box_size``, so the boxes
    equal ``refit_tree``'s bit for bit. One call per sweep, compiled without reference counting
    (``_pairjit``: the body inlined from a per-node function counted references to its four
    arrays per node and cost twice the instructions)."""
    for g in range(r1 - 1, r0 - 1, -1):
        for k in range(ranges[g, 1] - 1, ranges[g, 0] - 1, -1):
            node = np.uint64(k)  # unsigned: no negative-index wrap-around on the rows (checked ranges)
            left = ni[node, LEFT]
            # indices as unsigned integers: numba adds no negative-index wrap-around to them
            # (the sweep measured 7 % faster); they are checked ids (``validate.check_structure``)
            if left < 0:  # a leaf: its first triangle's corners, then the others' (COUNT >= 1, checked)
                s = np.uint64(ni[node, START])
                p = np.uint64(tri_verts[s, 0])
                q = np.uint64(tri_verts[s, 1])
                r = np.uint64(tri_verts[s, 2])
                lo0 = _mn(v[p, 0], _mn(v[q, 0], v[r, 0]))
                hi0 = _mx(v[p, 0], _mx(v[q, 0], v[r, 0]))
                lo1 = _mn(v[p, 1], _mn(v[q, 1], v[r, 1]))
                hi1 = _mx(v[p, 1], _mx(v[q, 1], v[r, 1]))
                lo2 = _mn(v[p, 2], _mn(v[q, 2], v[r, 2]))
                hi2 = _mx(v[p, 2], _mx(v[q, 2], v[r, 2]))
                for k in range(ni[node, START] + 1, ni[node, START] + ni[node, COUNT]):
                    for j in range(3):
                        q = np.uint64(tri_verts[k, j])
                        lo0 = _mn(lo0, v[q, 0])
                        hi0 = _mx(hi0, v[q, 0])
                        lo1 = _mn(lo1, v[q, 1])
                        hi1 = _mx(hi1, v[q, 1])
                        lo2 = _mn(lo2, v[q, 2])
                        hi2 = _mx(hi2, v[q, 2])
                nf[node, C0] = 0.5 * (lo0 + hi0)  # aabb.write_minmax
                nf[node, C0 + 1] = 0.5 * (lo1 + hi1)
                nf[node, C0 + 2] = 0.5 * (lo2 + hi2)
                e0 = 0.5 * (hi0 - lo0) + pad
                e1 = 0.5 * (hi1 - lo1) + pad
                e2 = 0.5 * (hi2 - lo2) + pad
            else:  # aabb.merge
                lc = np.uint64(left)
                rc = np.uint64(ni[node, RIGHT])
                lo0 = _mn(nf[lc, C0] - nf[lc, E0], nf[rc, C0] - nf[rc, E0])
                hi0 = _mx(nf[lc, C0] + nf[lc, E0], nf[rc, C0] + nf[rc, E0])
                lo1 = _mn(nf[lc, C0 + 1] - nf[lc, E0 + 1], nf[rc, C0 + 1] - nf[rc, E0 + 1])
                hi1 = _mx(nf[lc, C0 + 1] + nf[lc, E0 + 1], nf[rc, C0 + 1] + nf[rc, E0 + 1])
                lo2 = _mn(nf[lc, C0 + 2] - nf[lc, E0 + 2], nf[rc, C0 + 2] - nf[rc, E0 + 2])
                hi2 = _mx(nf[lc, C0 + 2] + nf[lc, E0 + 2], nf[rc, C0 + 2] + nf[rc, E0 + 2])
                nf[node, C0] = 0.5 * (lo0 + hi0)
                nf[node, C0 + 1] = 0.5 * (lo1 + hi1)
                nf[node, C0 + 2] = 0.5 * (lo2 + hi2)
                e0 = 0.5 * (hi0 - lo0)
                e1 = 0.5 * (hi1 - lo1)
                e2 = 0.5 * (hi2 - lo2)
            nf[node, E0] = e0
            nf[node, E0 + 1] = e1
            nf[node, E0 + 2] = e2
            m = 1e-3 * _mx(e0, _mx(e1, e2))  # aabb.box_size (with selects: ~8 % faster here)
            nf[node, AABB_SIZE] = 8.0 * (e0 + m) * (e1 + m) * (e2 + m)


@njit(cache=True, inline='always')
def _aabb_args_ok(src, out, nf, v, po, tri_verts):
    return (src.shape[1] == 3 and out.shape[0] == src.shape[0] and out.shape[1] == 3 and v.shape[0] == src.shape[0]
            and tri_verts.shape[0] == po.shape[0] and tri_verts.shape[1] == 3 and nf.shape[1] == AABB_FCOLS)


@njit(SIG_REFIT_AABB, cache=True, nogil=True)
def refit_aabb(src, out, F, I, tri_verts):
    """Refit a packed AABB tree (compact rows) to the vertices ``src`` (n, 3), in one call:

    1. copy ``src`` into ``out`` (the new ``Mesh``'s own array) while summing ``x - x`` over
       every coordinate (0 when all are finite, NaN otherwise) and taking the bounds; a
       non-finite coordinate returns 1, a largest |coordinate| outside ``mesh.check_range``'s
       range 2, with the tree untouched (``mesh.as_vertices`` then says what is wrong);
    2. the pad (``bvh._pad``'s arithmetic on the same bounds: bit-identical), the pack's
       vertices := ``out`` (``_copy_rows``, ``_pad_of``, ``_put_rows``);
    3. one reverse sweep over the nodes (children come after their parents,
       ``_refit_aabb_node``).

    The rows are compact (56 bytes: centre, half-extents, SIZE), so the sweep writes whole
    rows: it streams memory (issue 15: the same sweep over 160-byte rows was 3-5x slower).
    Returns 0 when done. Large trees on several threads: ``refit_aabb_parts``."""
    nf, ni, po, v, f = unpack(F, I)
    if not _aabb_args_ok(src, out, nf, v, po, tri_verts):
        raise ValueError("refit_aabb: arrays of another tree or mesh")
    red = np.empty((1, 7))
    n = np.int64(src.shape[0])
    _copy_rows(src, out, np.int64(0), n, red, np.int64(0))
    code, pad = _pad_of(red)
    if code:
        return code
    _put_rows(out, v, np.int64(0), n)
    whole = np.empty((1, 2), dtype=np.int64)
    whole[0, 0] = 0
    whole[0, 1] = ni.shape[0]
    _refit_aabb_nodes(nf, ni, v, tri_verts, pad, whole, np.int64(0), np.int64(1))
    return 0


# no explicit signature (compiled on first use, one signature: ``BVH._refit_aabb`` passes ``src``
# read-only and the rest as the tree holds it): loading a parallel kernel starts numba's thread
# pool, which importing cdcore must not do (``tests/test_thread_waiting.py``)
@njit(cache=True, nogil=True, parallel=True)
def refit_aabb_parts(src, out, F, I, tri_verts, ranges, cuts):
    """``refit_aabb`` with its node sweep split into disjoint subtrees refitted on numba's
    threads (``bvh.refit_split``): part p's id ranges ``ranges[cuts[p]:cuts[p + 1]]``, then the
    nodes above the subtrees, ``ranges[cuts[-1]:]``, swept last on this thread. The same boxes,
    bit for bit: every node's arithmetic is ``_refit_aabb_nodes``'s and reads only its own
    children."""
    nf, ni, po, v, f = unpack(F, I)
    if not _aabb_args_ok(src, out, nf, v, po, tri_verts) or not _ranges_ok(ranges, cuts, ni.shape[0]):
        raise ValueError("refit_aabb_parts: arrays of another tree or mesh")
    n_parts = cuts.shape[0] - 1
    # steps 1-2 in n_parts row blocks too (the copy, the first writes to the new array's pages)
    n = np.int64(src.shape[0])
    red = np.empty((n_parts, 7))
    for p in prange(n_parts):
        _copy_rows(src, out, n * p // n_parts, n * (p + 1) // n_parts, red, np.int64(p))
    code, pad = _pad_of(red)
    if code:
        return code
    for p in prange(n_parts):
        _put_rows(out, v, n * p // n_parts, n * (p + 1) // n_parts)
    for p in prange(n_parts):
        _refit_aabb_nodes(nf, ni, v, tri_verts, pad, ranges, cuts[p], cuts[p + 1])
    _refit_aabb_nodes(nf, ni, v, tri_verts, pad, ranges, cuts[n_parts], np.int64(ranges.shape[0]))
    return 0
