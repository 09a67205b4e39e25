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
from ._layout import (AABB_FCOLS, C0, COUNT, E0, KIND_AABB, KIND_OBB, KIND_SPHERE, LEFT, N_ICOLS, R0,
                      RIGHT, SIZE, START)
from ._pack import unpack
from ._pairjit import entry_njit, pair_njit
from ._rows import box_row, leaf_row, merge_row
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
                             types.int32[:, ::1], types.int32[:, ::1], types.int64[:, ::1])


@pair_njit(nogil=True)
def _copy_rows(src, out, v, i0, i1, red, p):
    """Step 1 of ``refit_aabb`` on rows [i0, i1): copy ``src`` into ``out`` and into the pack's
    vertices ``v`` while summing ``x - x`` (0 when all are finite, NaN otherwise) and taking the
    bounds, into ``red[p]`` (acc, lo xyz, hi xyz). Both copies in the one pass that reads
    ``src``: the second copy from ``out`` afterwards cost a third of this pass (issue 15)."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    acc = 0.0
    for k in range(np.uint64(i0), np.uint64(i1)):  # unsigned: no negative-index wrap-around
        i = np.uint64(k)
        x = src[i, 0]
        y = src[i, 1]
        z = src[i, 2]
        out[i, 0] = x
        out[i, 1] = y
        out[i, 2] = z
        v[i, 0] = x
        v[i, 1] = y
        v[i, 2] = z
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
def _refit_aabb_blocks(nf, v, tri_verts, pad, tab, blocks, b0, b1):
    """Step 3 of ``refit_aabb`` for the blocks ``b0..b1`` of a refit plan (``bvh.refit_plan``: in
    each block of consecutive node ids, its one-triangle leaves, its leaves of several triangles,
    then its parents by decreasing id, so children come first). A leaf's box from its
    triangles' corners (a one-triangle leaf's vertex ids are in the plan: the leaf loop streams
    the plan and reads nothing else but the vertices), a parent's the merge of its children's.
    Leaves and parents in separate loops: no branch on the kind of node (the mixed sweep
    mispredicted it on ~1 node in 5). The rows are written by ``_rows``' vector intrinsics (53
    instructions per node instead of 78, perf stat); a several-triangle leaf's bounds are taken in scalars
    first, adding the corners in the order ``aabb.fit_prims`` does. The arithmetic of
    ``aabb.fit_prims`` / ``aabb.merge`` / ``box_size``, so the boxes equal ``refit_tree``'s bit for
    bit. One call per sweep, compiled without reference counting (``_pairjit``). Ids as unsigned
    integers: numba adds no negative-index wrap-around to them; the plan's ids were checked when
    it was made, and the caller checks that it was made for this tree (``_plan_ok``)."""
    for b in range(b0, b1):
        for j in range(blocks[b, 0], blocks[b, 1]):  # one-triangle leaves: [node, p, q, r]
            leaf_row(nf, np.uint64(tab[j, 0]), v, np.uint64(tab[j, 1]), np.uint64(tab[j, 2]),
                     np.uint64(tab[j, 3]), pad)
        for j in range(blocks[b, 1], blocks[b, 2]):  # leaves of several triangles: [node, start, count]
            s = np.uint64(tab[j, 1])
            p = np.uint64(tri_verts[s, 0])
            q = np.uint64(tri_verts[s, 1])
            r = np.uint64(tri_verts[s, 2])
            lo0 = _mn(v[p, 0], _mn(v[q, 0], v[r, 0]))
            hi0 = _mx(v[p, 0], _mx(v[q, 0], v[r, 0]))
            lo1 = _mn(v[p, 1], _mn(v[q, 1], v[r, 1]))
            hi1 = _mx(v[p, 1], _mx(v[q, 1], v[r, 1]))
            lo2 = _mn(v[p, 2], _mn(v[q, 2], v[r, 2]))
            hi2 = _mx(v[p, 2], _mx(v[q, 2], v[r, 2]))
            for k in range(s + np.uint64(1), s + np.uint64(tab[j, 2])):
                for c in range(3):
                    q = np.uint64(tri_verts[k, c])
                    lo0 = _mn(lo0, v[q, 0])
                    hi0 = _mx(hi0, v[q, 0])
                    lo1 = _mn(lo1, v[q, 1])
                    hi1 = _mx(hi1, v[q, 1])
                    lo2 = _mn(lo2, v[q, 2])
                    hi2 = _mx(hi2, v[q, 2])
            box_row(nf, np.uint64(tab[j, 0]), lo0, lo1, lo2, hi0, hi1, hi2, pad)
        for j in range(blocks[b, 2], blocks[b, 3]):  # parents: [node, left, right]
            merge_row(nf, np.uint64(tab[j, 0]), np.uint64(tab[j, 1]), np.uint64(tab[j, 2]))


@njit(cache=True, inline='always')
def _aabb_args_ok(src, out, nf, v, po, tri_verts):
    return (src.shape[1] == 3 and out.shape[0] == src.shape[0] and out.shape[1] == 3 and v.shape[0] == src.shape[0]
            and tri_verts.shape[0] == po.shape[0] and tri_verts.shape[1] == 3 and nf.shape[1] == AABB_FCOLS)


@njit(cache=True, nogil=True)
def _plan_ok(tab, blocks, bcuts, n, nv, m):
    """The plan was made for a tree of this tree's sizes (``blocks``' last row: nodes, vertices,
    triangles, table rows), its blocks lie inside its table and the parts' cuts inside its
    blocks. A plan holds only ids checked against those sizes when it was made
    (``bvh.refit_plan``), so even a plan of another tree of the same sizes reads and writes in
    bounds."""
    nb = blocks.shape[0] - 1
    if (tab.shape[1] != 4 or blocks.shape[1] != 4 or nb < 0 or blocks[nb, 0] != n or blocks[nb, 1] != nv
            or blocks[nb, 2] != m or blocks[nb, 3] != tab.shape[0]):
        return False
    for b in range(nb):
        if not 0 <= blocks[b, 0] <= blocks[b, 1] <= blocks[b, 2] <= blocks[b, 3] <= tab.shape[0]:
            return False
    for c in range(bcuts.shape[0]):
        if not 0 <= bcuts[c] <= nb or (c > 0 and bcuts[c] < bcuts[c - 1]):
            return False
    return True


@entry_njit(SIG_REFIT_AABB, nogil=True)
def refit_aabb(src, out, F, I, tri_verts, tab, blocks):
    """Refit a packed AABB tree (compact rows) to the vertices ``src`` (n, 3), in one call:

    1. copy ``src`` into ``out`` (the new ``Mesh``'s own array) and into the pack's vertices
       while summing ``x - x`` over every coordinate (0 when all are finite, NaN otherwise) and
       taking the bounds (``_copy_rows``);
    2. the check and the pad (``bvh._pad``'s arithmetic on the same bounds: bit-identical,
       ``_pad_of``): a non-finite coordinate returns 1, a largest |coordinate| outside
       ``mesh.check_range``'s range 2, with the node rows untouched but the pack's vertices
       overwritten: the caller puts the old ones back (``BVH._refit_aabb``: the mesh's own) and
       ``mesh.as_vertices`` says what is wrong;
    3. the node sweep of the tree's refit plan ``tab``, ``blocks`` (``bvh.refit_plan``, made once
       per tree), every block in order (``_refit_aabb_blocks``).

    The rows are compact (56 bytes: centre, half-extents, SIZE), so the sweep writes whole
    rows: it streams memory (issue 15: the same sweep over 160-byte rows was 3-5x slower).
    Returns 0 when done. Large trees on several threads: ``refit_aabb_parts``."""
    nf, ni, po, v, f = unpack(F, I)
    nb = np.int64(blocks.shape[0] - 1)
    if (not _aabb_args_ok(src, out, nf, v, po, tri_verts)
            or not _plan_ok(tab, blocks, np.zeros(1, dtype=np.int64), ni.shape[0], v.shape[0], po.shape[0])):
        raise ValueError("refit_aabb: arrays of another tree or mesh")
    red = np.empty((1, 7))
    n = np.int64(src.shape[0])
    _copy_rows(src, out, v, np.int64(0), n, red, np.int64(0))
    code, pad = _pad_of(red)
    if code:
        return code
    _refit_aabb_blocks(nf, out, tri_verts, pad, tab, blocks, np.int64(0), nb)
    return 0


# no explicit signature (compiled on first use, one signature: ``BVH._refit_aabb`` passes ``src``
# read-only and the rest as the tree holds it): loading a parallel kernel starts numba's thread
# pool, which importing cdcore must not do (``tests/test_thread_waiting.py``)
@njit(cache=True, nogil=True, parallel=True)
def refit_aabb_parts(src, out, F, I, tri_verts, tab, blocks, bcuts):
    """``refit_aabb`` with its node sweep split into disjoint subtrees refitted on numba's
    threads (``bvh.refit_split``, ``bvh.refit_plan``): part p's blocks ``bcuts[p]:bcuts[p + 1]``,
    then the nodes above the subtrees, blocks ``bcuts[-1]:``, swept last on this thread. The
    same boxes, bit for bit: every node's arithmetic is ``_refit_aabb_blocks``'s and reads only
    its own children. Two parallel regions: the copies with the bounds (the pad needs their
    reduction before any box), then the subtrees. On bad vertices, as ``refit_aabb``: the
    pack's vertices are overwritten, the node rows untouched."""
    nf, ni, po, v, f = unpack(F, I)
    if (not _aabb_args_ok(src, out, nf, v, po, tri_verts)
            or not _plan_ok(tab, blocks, bcuts, ni.shape[0], v.shape[0], po.shape[0]) or bcuts.shape[0] < 2):
        raise ValueError("refit_aabb_parts: arrays of another tree or mesh")
    n_parts = bcuts.shape[0] - 1
    n = np.int64(src.shape[0])
    red = np.empty((n_parts, 7))
    for p in prange(n_parts):
        _copy_rows(src, out, v, n * p // n_parts, n * (p + 1) // n_parts, red, np.int64(p))
    code, pad = _pad_of(red)
    if code:
        return code
    for p in prange(n_parts):
        _refit_aabb_blocks(nf, out, tri_verts, pad, tab, blocks, bcuts[p], bcuts[p + 1])
    _refit_aabb_blocks(nf, out, tri_verts, pad, tab, blocks, bcuts[n_parts], np.int64(blocks.shape[0] - 1))
    return 0
