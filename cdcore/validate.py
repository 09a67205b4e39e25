"""Validation of hierarchy arrays that come from outside (a saved query, a caller's arrays).

The query kernels trust a tree: they follow child ids, leaf ranges and ``prim_order``
without bounds checks (a check per node pair would cost ~10 % of a traversal). So every
tree that did not come out of ``build_bvh`` passes through here first:

* :func:`check_structure` — memory safety: child ids in range and after their parent
  (so the tree is acyclic and a refit is one reverse loop), every node but the root has
  exactly one parent, a leaf's ``[start, start + count)`` lies in ``prim_order``, an inner
  node's range is its children's ranges side by side (so the leaves partition
  ``[0, m)``), ``prim_order`` is a permutation of the triangle ids. A compiled kernel
  (O(nodes + triangles)) with a plain-numpy reference (:func:`structure_problem_ref`).
* :func:`check_volumes` — correctness: every value finite, and every volume the kind's
  kernels read (box for ``aabb``/``obb``, sphere for ``sphere``, both for ``obb_sphere``)
  encloses the vertices of its node's triangles with at least half the build's padding
  (a shrunken box makes a traversal miss contacts: a saved hit would replay as "no hit").

Both raise ``ValueError`` naming the array, the node and the rule broken.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import _layout as L

# problem codes of the structure kernel (0: none)
OK = 0
E_ROOT_RANGE = 1
E_LEAF_LINKS = 2
E_LEAF_COUNT = 3
E_CHILD_RANGE = 4
E_CHILD_ORDER = 5
E_TWO_PARENTS = 6
E_CHILD_SPAN = 7
E_ORPHAN = 8
E_PRIM_RANGE = 9
E_PRIM_REPEAT = 10

_MESSAGES = {
    E_ROOT_RANGE: "the root must hold every triangle (start 0, count = number of triangles)",
    E_LEAF_LINKS: "a leaf must have both child ids -1",
    E_LEAF_COUNT: "a leaf must hold between 1 and leaf_size triangles",
    E_CHILD_RANGE: "child id out of range",
    E_CHILD_ORDER: "a child id must be greater than its parent's, and the two children distinct",
    E_TWO_PARENTS: "a node is the child of two nodes (not a tree)",
    E_CHILD_SPAN: "the children's triangle ranges must split the parent's range (left then right, each non-empty)",
    E_ORPHAN: "a node other than the root has no parent (unreachable)",
    E_PRIM_RANGE: "triangle id out of range",
    E_PRIM_REPEAT: "triangle id listed twice (prim_order must be a permutation)",
}


@njit(cache=True, nogil=True)
def structure_problem(ni, prim_order, n_faces, leaf_size):
    """(code, index): the first structural problem of a tree, or (0, -1). ``ni`` (n, 4)
    int32, ``prim_order`` (m,) int32. Indices are widened to int64 before any sum, so no
    stored value can overflow a check. The index is a node (codes 1-8) or a position in
    ``prim_order`` (9, 10)."""
    n = ni.shape[0]
    m = prim_order.shape[0]
    if n < 1 or m != n_faces or np.int64(ni[0, L.START]) != 0 or np.int64(ni[0, L.COUNT]) != m:
        return E_ROOT_RANGE, 0
    parents = np.zeros(n, dtype=np.int32)
    for node in range(n):
        left = np.int64(ni[node, L.LEFT])
        right = np.int64(ni[node, L.RIGHT])
        start = np.int64(ni[node, L.START])
        count = np.int64(ni[node, L.COUNT])
        # this node's range was checked when its parent was (children come after parents)
        if left < 0 or right < 0:
            if left != -1 or right != -1:
                return E_LEAF_LINKS, node
            if count < 1 or count > leaf_size:
                return E_LEAF_COUNT, node
            continue
        if left >= n or right >= n:
            return E_CHILD_RANGE, node
        if left <= node or right <= node or left == right:
            return E_CHILD_ORDER, node
        parents[left] += 1
        parents[right] += 1
        if parents[left] > 1 or parents[right] > 1:
            return E_TWO_PARENTS, node
        ls = np.int64(ni[left, L.START])
        lc = np.int64(ni[left, L.COUNT])
        rs = np.int64(ni[right, L.START])
        rc = np.int64(ni[right, L.COUNT])
        if ls != start or lc < 1 or rc < 1 or rs != ls + lc or lc + rc != count:
            return E_CHILD_SPAN, node
    for node in range(1, n):
        if parents[node] != 1:
            return E_ORPHAN, node
    seen = np.zeros(m, dtype=np.bool_)
    for k in range(m):
        p = prim_order[k]
        if p < 0 or p >= m:
            return E_PRIM_RANGE, k
        if seen[p]:
            return E_PRIM_REPEAT, k
        seen[p] = True
    return OK, -1


def structure_problem_ref(ni, prim_order, n_faces, leaf_size):
    """Plain-numpy reference of :func:`structure_problem` (same codes; the reported index
    may differ where several rules fail, the code of the first failing node agrees)."""
    ni = np.asarray(ni, dtype=np.int64)
    po = np.asarray(prim_order, dtype=np.int64)
    n, m = len(ni), len(po)
    if n < 1 or m != n_faces or ni[0, L.START] != 0 or ni[0, L.COUNT] != m:
        return E_ROOT_RANGE, 0
    parents = np.zeros(n, dtype=np.int64)
    for node in range(n):
        left, right, start, count = (int(x) for x in ni[node])
        if left < 0 or right < 0:
            if (left, right) != (-1, -1):
                return E_LEAF_LINKS, node
            if not 1 <= count <= leaf_size:
                return E_LEAF_COUNT, node
            continue
        if max(left, right) >= n:
            return E_CHILD_RANGE, node
        if min(left, right) <= node or left == right:
            return E_CHILD_ORDER, node
        parents[[left, right]] += 1
        if parents[left] > 1 or parents[right] > 1:
            return E_TWO_PARENTS, node
        (ls, lc), (rs, rc) = ni[left, 2:], ni[right, 2:]
        if not (ls == start and lc >= 1 and rc >= 1 and rs == ls + lc and lc + rc == count):
            return E_CHILD_SPAN, node
    orphan = np.flatnonzero(parents[1:] != 1)
    if len(orphan):
        return E_ORPHAN, int(orphan[0]) + 1
    bad = np.flatnonzero((po < 0) | (po >= m))
    if len(bad):
        return E_PRIM_RANGE, int(bad[0])
    first = np.unique(po, return_index=True)[1]
    if len(first) != m:
        return E_PRIM_REPEAT, int(np.setdiff1d(np.arange(m), first)[0])
    return OK, -1


def as_index_array(a, name: str, ndim: int, cols: int | None = None) -> np.ndarray:
    """An integer array within int32 -> C-contiguous writable int32 (a private copy).
    ``TypeError`` for other dtypes, ``ValueError`` for wrong shapes or values that int32
    cannot hold (a cast would wrap them silently)."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected an integer array, got dtype {a.dtype}")
    if a.ndim != ndim or (cols is not None and a.shape[1] != cols):
        want = "(n,)" if ndim == 1 else f"(n, {cols})"
        raise ValueError(f"{name}: expected shape {want}, got {a.shape}")
    if a.size and (int(a.min()) < -2**31 or int(a.max()) > 2**31 - 1):
        raise ValueError(f"{name}: values outside the int32 range")
    return np.array(a, dtype=np.int32, order="C", copy=True)


def check_structure(nodes_i, prim_order, n_faces: int, leaf_size: int | None = None, where: str = "tree"):
    """Raise ``ValueError`` unless ``nodes_i`` (n, 4) and ``prim_order`` (m,) form a valid
    tree over ``n_faces`` triangles whose leaves hold at most ``leaf_size`` (default: any
    number). Returns the validated int32 copies ``(nodes_i, prim_order)``."""
    ni = as_index_array(nodes_i, f"{where}: nodes_i", 2, L.N_ICOLS)
    po = as_index_array(prim_order, f"{where}: prim_order", 1)
    if len(ni) > max(2 * n_faces - 1, 1):
        raise ValueError(f"{where}: nodes_i: {len(ni)} nodes for {n_faces} triangles (a binary tree has at most "
                         f"{2 * n_faces - 1})")
    cap = n_faces if leaf_size is None else int(leaf_size)
    code, at = structure_problem(ni, po, int(n_faces), cap)
    if code != OK:
        what = f"prim_order[{at}]" if code in (E_PRIM_RANGE, E_PRIM_REPEAT) else f"nodes_i[{at}]"
        raise ValueError(f"{where}: {what}: {_MESSAGES[code]}")
    return ni, po


def tree_depth(nodes_i) -> np.ndarray:
    """(n,) int32 depth of every node of a tree that passed :func:`check_structure`."""
    return _depth(np.array(nodes_i, dtype=np.int32, order="C", copy=True))


@njit(cache=True, nogil=True)
def _depth(ni):
    n = ni.shape[0]
    depth = np.zeros(n, dtype=np.int32)
    for node in range(n):
        if ni[node, L.LEFT] >= 0:
            depth[ni[node, L.LEFT]] = depth[node] + 1
            depth[ni[node, L.RIGHT]] = depth[node] + 1
    return depth


# ---- volumes -----------------------------------------------------------------------------
#: A stored volume must clear its triangles' vertices by at least this fraction of the mesh's
#: coordinate scale: half the build's padding (``bvh.PAD_REL`` = 1e-12; built and refitted
#: trees clear them by ~0.9998e-12). The padding absorbs the rounding of transforming boxes
#: and triangles apart; a volume without it, or one that misses a vertex, can hide contacts.
ENCLOSE_TOL_REL = 0.5e-12
#: oriented boxes' axes must be orthonormal to this (|R^T R - I|); a build's are to ~1e-15
AXES_TOL = 1e-9

WHICH_BOX = 1
WHICH_SPHERE = 2


@njit(cache=True, nogil=True)
def volume_excess(kind, nf, ni, prim_order, verts, faces):
    """(node, which, excess): the node whose box (which 1) or sphere (2) misses one of its
    triangles' vertices by the most, and by how much (<= 0: all enclosed). Only the volumes
    the kind's kernels read are checked (AABB: centre and extents; OBB: also the axes;
    sphere: centre and radius). O(sum of node sizes) = O(m * height)."""
    worst = -np.inf
    wnode = -1
    which = 0
    box = kind != L.KIND_SPHERE
    sph = kind == L.KIND_SPHERE or kind == L.KIND_OBB_SPHERE
    for node in range(ni.shape[0]):
        start = ni[node, L.START]
        for k in range(start, start + ni[node, L.COUNT]):
            f = prim_order[k]
            for c in range(3):
                v = faces[f, c]
                px = verts[v, 0]
                py = verts[v, 1]
                pz = verts[v, 2]
                if box:
                    dx = px - nf[node, L.C0]
                    dy = py - nf[node, L.C0 + 1]
                    dz = pz - nf[node, L.C0 + 2]
                    for a in range(3):
                        if kind == L.KIND_AABB:
                            loc = dx if a == 0 else (dy if a == 1 else dz)
                        else:  # the axes are the columns of R
                            loc = (dx * nf[node, L.R0 + a] + dy * nf[node, L.R0 + 3 + a]
                                   + dz * nf[node, L.R0 + 6 + a])
                        e = abs(loc) - nf[node, L.E0 + a]
                        if e > worst:
                            worst, wnode, which = e, node, WHICH_BOX
                if sph:
                    dx = px - nf[node, L.S0]
                    dy = py - nf[node, L.S0 + 1]
                    dz = pz - nf[node, L.S0 + 2]
                    e = np.sqrt(dx * dx + dy * dy + dz * dz) - nf[node, L.SR]
                    if e > worst:
                        worst, wnode, which = e, node, WHICH_SPHERE
    return wnode, which, worst


def volume_excess_ref(kind, nf, ni, prim_order, verts, faces):
    """Plain-numpy reference of :func:`volume_excess` (the excess agrees to rounding)."""
    best = (-1, 0, -np.inf)
    for node in range(len(ni)):
        s, c = int(ni[node, L.START]), int(ni[node, L.COUNT])
        p = verts[faces[prim_order[s:s + c]]].reshape(-1, 3)
        if kind != L.KIND_SPHERE:
            d = p - nf[node, L.C0:L.C0 + 3]
            loc = d if kind == L.KIND_AABB else d @ nf[node, L.R0:L.R0 + 9].reshape(3, 3)
            e = float((np.abs(loc) - nf[node, L.E0:L.E0 + 3]).max())
            if e > best[2]:
                best = (node, WHICH_BOX, e)
        if kind in (L.KIND_SPHERE, L.KIND_OBB_SPHERE):
            e = float((np.linalg.norm(p - nf[node, L.S0:L.S0 + 3], axis=1) - nf[node, L.SR]).max())
            if e > best[2]:
                best = (node, WHICH_SPHERE, e)
    return best


def check_volumes(kind: int, nodes_f, nodes_i, prim_order, vertices, faces, where: str = "tree") -> np.ndarray:
    """Raise ``ValueError`` unless ``nodes_f`` (n, 20) is finite, its extents and radii are
    non-negative, oriented boxes' axes orthonormal, and every volume the kind uses encloses
    its node's triangles with margin (see ``ENCLOSE_TOL_REL``). ``nodes_i``/``prim_order`` must have
    passed :func:`check_structure`. Returns the validated float64 copy of ``nodes_f``."""
    nf = np.asarray(nodes_f)
    if nf.dtype.kind != "f":
        raise TypeError(f"{where}: nodes_f: expected a float array, got dtype {nf.dtype}")
    if nf.shape != (len(nodes_i), L.N_FCOLS):
        raise ValueError(f"{where}: nodes_f: expected shape ({len(nodes_i)}, {L.N_FCOLS}), got {nf.shape}")
    nf = np.array(nf, dtype=np.float64, order="C", copy=True)
    bad = ~np.isfinite(nf).all(axis=1)
    if bad.any():
        raise ValueError(f"{where}: nodes_f[{int(np.argmax(bad))}]: NaN or infinite values")
    if kind in L.KDOP_KINDS:
        raise ValueError(f"{where}: k-DOP trees are rebuilt from their mesh, not restored from arrays")
    used = []
    if kind != L.KIND_SPHERE:
        used.append(("box half-extents", nf[:, L.E0:L.E0 + 3].min(axis=1)))
    if kind in (L.KIND_SPHERE, L.KIND_OBB_SPHERE):
        used.append(("sphere radius", nf[:, L.SR]))
    for label, col in used:
        neg = col < 0
        if neg.any():
            raise ValueError(f"{where}: nodes_f[{int(np.argmax(neg))}]: negative {label}")
    if kind in (L.KIND_OBB, L.KIND_OBB_SPHERE):
        R = nf[:, L.R0:L.R0 + 9].reshape(-1, 3, 3)
        dev = np.abs(np.einsum("nki,nkj->nij", R, R) - np.eye(3)).max(axis=(1, 2))
        if dev.max() > AXES_TOL:
            raise ValueError(f"{where}: nodes_f[{int(np.argmax(dev))}]: box axes are not orthonormal "
                             f"(|R^T R - I| = {dev.max():.3g})")
    # private writable copies: one compiled signature whatever the caller passes (a
    # read-only or non-contiguous array would compile another)
    v = np.array(vertices, dtype=np.float64, order="C", copy=True)
    f = np.array(faces, dtype=np.int32, order="C", copy=True)
    scale = float(np.abs(v).max() + np.ptp(v, axis=0).max())
    node, which, excess = volume_excess(int(kind), nf, np.array(nodes_i, dtype=np.int32, order="C", copy=True),
                                        np.array(prim_order, dtype=np.int32, order="C", copy=True), v, f)
    if excess > -ENCLOSE_TOL_REL * scale:
        label = "box" if which == WHICH_BOX else "sphere"
        raise ValueError(f"{where}: nodes_f[{node}]: the {label} does not enclose its triangles with the build's "
                         f"padding (a vertex is {excess:.3g} outside; required <= {-ENCLOSE_TOL_REL * scale:.3g})")
    return nf


def validate_tree(kind: int, nodes_f, nodes_i, prim_order, vertices, faces, leaf_size: int | None = None,
                  where: str = "tree"):
    """:func:`check_structure` then :func:`check_volumes`: the validated
    ``(nodes_f float64, nodes_i int32, prim_order int32, depth int32)`` copies."""
    ni, po = check_structure(nodes_i, prim_order, len(faces), leaf_size, where)
    nf = check_volumes(kind, nodes_f, ni, po, vertices, faces, where)
    return nf, ni, po, tree_depth(ni)


__all__ = ["check_structure", "check_volumes", "validate_tree", "structure_problem", "structure_problem_ref",
           "volume_excess", "volume_excess_ref", "tree_depth", "ENCLOSE_TOL_REL", "AXES_TOL"]
