"""The articulation hierarchy (CAB section 3.1, Fig. 1a) and its per-frame update.

A binary tree over the links built from the articulation tree: every node holds a
connected set of links, split at the joint that best balances the two connected parts,
so every internal node has a joint joining its two children. Leaves are single links.

Four updates of the node volumes from the link poses (CAB Tables 1-5):
    aabb_plus  AABB+  leaf AABBs fitted to all link vertices; parents merged (exact)
    aabb_star  AABB*  leaf AABBs fitted to the 8 corners of the link's leaf OBB; merged
    obb        OBB    per internal node, covariance of the geometry below it (Gottschalk),
                      extents enclosing the leaf OBBs below it
    cab        CAB    bottom-up merge of the two child OBBs (CAB eq. 1-4)
    cab_sum    CAB-sum the variant of CAB section 3.2.1's note (a JGT reviewer's): when the
                      endpoint vector E is the shortest of a1, a2, E, the major axis is the
                      normalised sum of a1 and a2; the paper rejected it ("a slightly larger
                      parent box"), the table row shows why
``obb``, ``cab`` and ``cab_sum`` share the leaf OBBs, so the leaf pairs reaching an exact query are
the same for both (every internal box encloses the leaf boxes below it).
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from .._layout import (C0, COUNT, E0, KIND_AABB, KIND_OBB, LEFT, N_FCOLS, N_ICOLS, R0, RIGHT, S0,
                       SIZE, SR, START)
from .._linalg import sym_eig3
from ..bv import aabb
from ..bv.obb import sort_axes
from ..transforms import writable_f64
from .methods import (METHOD_AABB_PLUS, METHOD_AABB_STAR, METHOD_CAB, METHOD_CAB_SUM,  # noqa: F401 (re-exported)
                      METHOD_LABELS, METHOD_OBB, UPDATE_METHODS)

# CAB section 3.2.1: child major axes whose |cos| exceeds this count as parallel
CAB_PARALLEL_TOL = 1.0 - 1e-5


class Topology:
    """Articulation hierarchy over L links: ``nodes_i`` (2L-1, 4) int32 as in ``_layout``
    with START/COUNT into ``link_order`` (L,) int32; ``joint_link`` (2L-1,) int32: for an
    internal node, the link whose joint joins its two children (-1 at leaves);
    ``leaf_of_link`` (L,) int32; ``depth`` (2L-1,) int32."""

    def __init__(self, nodes_i, link_order, joint_link, depth):
        self.nodes_i = nodes_i
        self.link_order = link_order
        self.joint_link = joint_link
        self.depth = depth
        n_links = len(link_order)
        self.leaf_of_link = np.full(n_links, -1, dtype=np.int32)
        for n in np.flatnonzero(nodes_i[:, LEFT] < 0):
            self.leaf_of_link[link_order[nodes_i[n, START]]] = n

    @property
    def n_nodes(self) -> int:
        return len(self.nodes_i)

    @property
    def height(self) -> int:
        return int(self.depth.max())


def build_topology(parents) -> Topology:
    """Split connected link sets at the joint that best balances them (children after
    parents in the node arrays). ``parents`` (L,): parent link index, parents before
    children (-1: a root).

    Each node costs time linear in its link count (subtree sizes within the set in one
    reverse pass, the cut's descendants in one forward pass): O(sum of node sizes), i.e.
    O(L log L) for balanced trees and chains; a star's hierarchy is a caterpillar (every
    balanced cut removes one leaf) and costs O(L^2) elementary steps in compiled code
    (5,000 links: milliseconds). The old set-based version was cubic for a star."""
    parents = np.asarray(parents)
    L = len(parents)
    if L < 1:
        raise ValueError("parents: an articulation needs at least one link")
    p = np.ascontiguousarray(parents, dtype=np.int64)
    if np.any(p >= np.arange(L)) or np.any(p < -1):
        raise ValueError("parents: every parent must be an earlier link or -1")
    nodes_i = np.full((2 * L - 1, N_ICOLS), -1, dtype=np.int32)
    joint_link = np.full(2 * L - 1, -1, dtype=np.int32)
    depth = np.zeros(2 * L - 1, dtype=np.int32)
    order = np.arange(L, dtype=np.int32)
    _split_sets(p, nodes_i, joint_link, depth, order)
    return Topology(nodes_i, order, joint_link, depth)


@njit(cache=True)
def _split_sets(parents, nodes_i, joint_link, depth, order):
    """The topology's top-down splits (``build_topology``). A set's links are kept in
    ascending order (so parents precede children inside it); the cut is the first link,
    in that order, with its parent in the set minimising |2 |subtree| - |set||."""
    L = parents.shape[0]
    stamp = np.full(L, -1, dtype=np.int64)  # node whose set holds the link
    size = np.zeros(L, dtype=np.int64)
    insub = np.zeros(L, dtype=np.bool_)
    tmp = np.empty(L, dtype=np.int32)
    stack = np.empty(2 * L + 2, dtype=np.int64)
    nodes_i[0, START] = 0
    nodes_i[0, COUNT] = L
    n_nodes = 1
    sp = 1
    stack[0] = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        s = nodes_i[node, START]
        c = nodes_i[node, COUNT]
        if c == 1:
            continue
        for k in range(s, s + c):
            stamp[order[k]] = node
            size[order[k]] = 1
        for k in range(s + c - 1, s - 1, -1):  # subtree sizes within the set
            m = order[k]
            pm = parents[m]
            if pm >= 0 and stamp[pm] == node:
                size[pm] += size[m]
        cut = -1
        best = 0
        for k in range(s, s + c):
            m = order[k]
            pm = parents[m]
            if pm >= 0 and stamp[pm] == node:
                score = abs(2 * size[m] - c)
                if cut < 0 or score < best:
                    best = score
                    cut = m
        if cut < 0:
            raise ValueError("parents: the links do not form one tree")
        n2 = 0
        for k in range(s, s + c):  # the cut's descendants within the set
            m = order[k]
            insub[m] = m == cut or (parents[m] >= 0 and stamp[parents[m]] == node and insub[parents[m]])
            n2 += insub[m]
        n1 = 0
        j2 = 0
        for k in range(s, s + c):  # stable partition: the rest (with the set's root), then the subtree
            m = order[k]
            if insub[m]:
                tmp[j2] = m
                j2 += 1
            else:
                order[s + n1] = m
                n1 += 1
        for k in range(n2):
            order[s + n1 + k] = tmp[k]
            insub[tmp[k]] = False
        left = n_nodes
        right = n_nodes + 1
        n_nodes += 2
        nodes_i[node, LEFT] = left
        nodes_i[node, RIGHT] = right
        nodes_i[left, START] = s
        nodes_i[left, COUNT] = n1
        nodes_i[right, START] = s + n1
        nodes_i[right, COUNT] = n2
        joint_link[node] = cut
        depth[left] = depth[node] + 1
        depth[right] = depth[node] + 1
        stack[sp] = right
        stack[sp + 1] = left
        sp += 2


# ---- per-frame update kernels ---------------------------------------------------------

@njit(cache=True)
def _set_box(nf, node, cx, cy, cz, R, e0, e1, e2):
    nf[node, C0] = cx
    nf[node, C0 + 1] = cy
    nf[node, C0 + 2] = cz
    for r in range(3):
        for c in range(3):
            nf[node, R0 + 3 * r + c] = R[r, c]
    nf[node, E0] = e0
    nf[node, E0 + 1] = e1
    nf[node, E0 + 2] = e2


@njit(cache=True)
def _project_box(nf, node, ux, uy, uz):
    """Interval (lo, hi) of node's box projected on the unit axis u."""
    c = nf[node, C0] * ux + nf[node, C0 + 1] * uy + nf[node, C0 + 2] * uz
    r = 0.0
    for k in range(3):
        r += nf[node, E0 + k] * abs(nf[node, R0 + k] * ux + nf[node, R0 + 3 + k] * uy
                                    + nf[node, R0 + 6 + k] * uz)
    return c - r, c + r


@njit(cache=True)
def _fit_axes_to_boxes(nf, node, boxes, n_boxes, A):
    """Centre and extents of node along the columns of A enclosing ``boxes`` (CAB eq. 4)."""
    # scalars, not arrays: this runs per node per frame and heap allocations dominated it
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for b in range(n_boxes):
        l, h = _project_box(nf, boxes[b], A[0, 0], A[1, 0], A[2, 0])
        lo0, hi0 = min(lo0, l), max(hi0, h)
        l, h = _project_box(nf, boxes[b], A[0, 1], A[1, 1], A[2, 1])
        lo1, hi1 = min(lo1, l), max(hi1, h)
        l, h = _project_box(nf, boxes[b], A[0, 2], A[1, 2], A[2, 2])
        lo2, hi2 = min(lo2, l), max(hi2, h)
    lo = (lo0, lo1, lo2)
    hi = (hi0, hi1, hi2)
    m0, m1, m2 = 0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])
    cx = A[0, 0] * m0 + A[0, 1] * m1 + A[0, 2] * m2
    cy = A[1, 0] * m0 + A[1, 1] * m1 + A[1, 2] * m2
    cz = A[2, 0] * m0 + A[2, 1] * m1 + A[2, 2] * m2
    # 1e-12 of the extent absorbs the rounding of the projections: parents enclose children
    pad = 1e-12 * max(hi[0] - lo[0], max(hi[1] - lo[1], hi[2] - lo[2]))
    _set_box(nf, node, cx, cy, cz, A, 0.5 * (hi[0] - lo[0]) + pad, 0.5 * (hi[1] - lo[1]) + pad,
             0.5 * (hi[2] - lo[2]) + pad)
    sort_axes(nf, node)


@njit(cache=True)
def _signed_major(nf, ch, jx, jy, jz):
    """Child box ch's longest axis scaled by its half-extent, pointing away from the joint."""
    e = nf[ch, E0]
    ux, uy, uz = nf[ch, R0], nf[ch, R0 + 3], nf[ch, R0 + 6]
    d = (nf[ch, C0] - jx) * ux + (nf[ch, C0 + 1] - jy) * uy + (nf[ch, C0 + 2] - jz) * uz
    s = e if d >= 0.0 else -e
    return s * ux, s * uy, s * uz


@njit(cache=True)
def _parallel_case_child(nf, c1, c2):
    """CAB's parallel case: the child whose largest axis other than its major one (extent
    column 1) is the larger (ties: the next extent, then c1)."""
    if nf[c1, E0 + 1] != nf[c2, E0 + 1]:
        return c1 if nf[c1, E0 + 1] > nf[c2, E0 + 1] else c2
    return c1 if nf[c1, E0 + 2] >= nf[c2, E0 + 2] else c2


@njit(cache=True)
def _cab_axes(nf, c1, c2, jx, jy, jz, A, use_sum=False):
    """CAB eq. 1-3: parent axes from the child boxes c1, c2 joined at joint (jx, jy, jz).
    ``use_sum``: the rejected variant of section 3.2.1's note (``cab_sum``): when E is the
    shortest of a1, a2, E, A_1 is the normalised sum a1 + a2."""
    # longest child axes (column 0, axes are sorted), scaled by their half-extents and
    # pointing away from the joint
    a0x, a0y, a0z = _signed_major(nf, c1, jx, jy, jz)
    a1x, a1y, a1z = _signed_major(nf, c2, jx, jy, jz)
    n1 = np.sqrt(a0x ** 2 + a0y ** 2 + a0z ** 2)
    n2 = np.sqrt(a1x ** 2 + a1y ** 2 + a1z ** 2)
    cosang = (a0x * a1x + a0y * a1y + a0z * a1z) / max(n1 * n2, 1e-300)
    if abs(cosang) > CAB_PARALLEL_TOL or n1 * n2 == 0.0:  # a point-like child (no axis): the same rule
        # special case (section 3.2.1): "the child box with the largest axis, not
        # considering the major axes a1 and a2" -- the largest of the children's two
        # remaining extents (columns 1, 2; axes are sorted, so column 1 is each child's
        # largest non-major one). Its axes are the parent's basis.
        ch = _parallel_case_child(nf, c1, c2)
        for r in range(3):
            for c in range(3):
                A[r, c] = nf[ch, R0 + 3 * r + c]
        return
    # endpoint vector E = a1 - a2; the major axis M is the longest of a1, a2, E (eq. 1)
    ex, ey, ez = a0x - a1x, a0y - a1y, a0z - a1z
    ne = np.sqrt(ex * ex + ey * ey + ez * ez)
    if use_sum and ne <= n1 and ne <= n2:
        # the rejected variant: the normalised sum of a1 and a2. E shortest means the
        # angle between a1 and a2 is below 60 degrees, so the sum is never short.
        mx, my, mz = a0x + a1x, a0y + a1y, a0z + a1z
        nm = np.sqrt(mx * mx + my * my + mz * mz)
    elif ne >= n1 and ne >= n2:
        mx, my, mz, nm = ex, ey, ez, ne
    elif n1 >= n2:
        mx, my, mz, nm = a0x, a0y, a0z, n1
    else:
        mx, my, mz, nm = a1x, a1y, a1z, n2
    A[0, 0], A[1, 0], A[2, 0] = mx / nm, my / nm, mz / nm
    # eq. 2: the normal of the plane of the child axes
    px = a0y * a1z - a0z * a1y
    py = a0z * a1x - a0x * a1z
    pz = a0x * a1y - a0y * a1x
    npn = np.sqrt(px * px + py * py + pz * pz)
    A[0, 1], A[1, 1], A[2, 1] = px / npn, py / npn, pz / npn
    # eq. 3
    A[0, 2] = A[1, 0] * A[2, 1] - A[2, 0] * A[1, 1]
    A[1, 2] = A[2, 0] * A[0, 1] - A[0, 0] * A[2, 1]
    A[2, 2] = A[0, 0] * A[1, 1] - A[1, 0] * A[0, 1]


@njit(cache=True)
def update_nodes(method, poses, nodes_i, link_order, joint_link, leaf_of_link,
                 leaf_c, leaf_R, leaf_e, moments, vertices, vert_off, nf):
    """Refit the articulation hierarchy ``nf`` (n, 20) to link ``poses`` (L, 4, 4) in one
    reverse loop over the nodes (children after parents)."""
    n = nodes_i.shape[0]
    A = np.empty((3, 3))
    eig_work = np.empty((2, 3, 3))  # sym_eig3's scratch (passed: one signature, no allocation per node)
    boxes = np.empty(poses.shape[0], dtype=np.int64)
    wm = np.zeros((poses.shape[0], 10))
    if method == 2:  # world-frame surface moments per link, for the covariance
        for i in range(poses.shape[0]):
            _world_moments(poses[i], moments[i], wm[i])
    for node in range(n - 1, -1, -1):
        left = nodes_i[node, LEFT]
        if left < 0:
            i = link_order[nodes_i[node, START]]
            P = poses[i]
            if method == 0:  # AABB+: all vertices
                lo0 = lo1 = lo2 = np.inf
                hi0 = hi1 = hi2 = -np.inf
                for v in range(vert_off[i], vert_off[i + 1]):
                    x, y, z = vertices[v, 0], vertices[v, 1], vertices[v, 2]
                    wx = P[0, 0] * x + P[0, 1] * y + P[0, 2] * z + P[0, 3]
                    wy = P[1, 0] * x + P[1, 1] * y + P[1, 2] * z + P[1, 3]
                    wz = P[2, 0] * x + P[2, 1] * y + P[2, 2] * z + P[2, 3]
                    lo0, hi0 = min(lo0, wx), max(hi0, wx)
                    lo1, hi1 = min(lo1, wy), max(hi1, wy)
                    lo2, hi2 = min(lo2, wz), max(hi2, wz)
                aabb.write_minmax(nf, node, lo0, lo1, lo2, hi0, hi1, hi2, 0.0)
                aabb.set_identity_axes(nf, node)
            else:
                # the leaf OBB moved with the link
                c = leaf_c[i]
                cx = P[0, 0] * c[0] + P[0, 1] * c[1] + P[0, 2] * c[2] + P[0, 3]
                cy = P[1, 0] * c[0] + P[1, 1] * c[1] + P[1, 2] * c[2] + P[1, 3]
                cz = P[2, 0] * c[0] + P[2, 1] * c[1] + P[2, 2] * c[2] + P[2, 3]
                for r in range(3):
                    for k in range(3):
                        A[r, k] = P[r, 0] * leaf_R[i, 0, k] + P[r, 1] * leaf_R[i, 1, k] + P[r, 2] * leaf_R[i, 2, k]
                _set_box(nf, node, cx, cy, cz, A, leaf_e[i, 0], leaf_e[i, 1], leaf_e[i, 2])
                if method == 1:  # AABB*: the AABB of that box's 8 corners
                    for d in range(3):
                        nf[node, E0 + d] = (abs(A[d, 0]) * leaf_e[i, 0] + abs(A[d, 1]) * leaf_e[i, 1]
                                            + abs(A[d, 2]) * leaf_e[i, 2])
                    aabb.set_identity_axes(nf, node)
        else:
            right = nodes_i[node, RIGHT]
            if method <= 1:
                aabb.merge(nf, node, left, right)
            elif method == 2:
                # covariance of the geometry below: summed world moments
                s = np.zeros(10)
                st = nodes_i[node, START]
                for k in range(st, st + nodes_i[node, COUNT]):
                    for d in range(10):
                        s[d] += wm[link_order[k], d]
                w = s[0]
                mx, my, mz = s[1] / w, s[2] / w, s[3] / w
                sym_eig3(s[4] / w - mx * mx, s[5] / w - mx * my, s[6] / w - mx * mz,
                         s[7] / w - my * my, s[8] / w - my * mz, s[9] / w - mz * mz, A, eig_work)
                nb = 0
                for k in range(st, st + nodes_i[node, COUNT]):
                    boxes[nb] = leaf_of_link[link_order[k]]
                    nb += 1
                _fit_axes_to_boxes(nf, node, boxes, np.int64(nb), A)
            else:
                j = joint_link[node]
                _cab_axes(nf, left, right, poses[j, 0, 3], poses[j, 1, 3], poses[j, 2, 3], A, method == 4)
                boxes[0] = left
                boxes[1] = right
                _fit_axes_to_boxes(nf, node, boxes, np.int64(2), A)
        # bounding sphere of the box (for the sphere tests) and the descend size
        e0, e1, e2 = nf[node, E0], nf[node, E0 + 1], nf[node, E0 + 2]
        nf[node, S0] = nf[node, C0]
        nf[node, S0 + 1] = nf[node, C0 + 1]
        nf[node, S0 + 2] = nf[node, C0 + 2]
        nf[node, SR] = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) * (1.0 + 1e-15)
        nf[node, SIZE] = aabb.box_size(nf, node)


@njit(cache=True)
def _world_moments(P, m, out):
    """Area-weighted surface moments moved by pose P: mean' = R m + t,
    second' = R S R^T + R m1 t^T + t m1^T R^T + w t t^T."""
    w = m[0]
    out[0] = w
    t = P[:3, 3]
    m1 = np.empty(3)
    for r in range(3):
        m1[r] = P[r, 0] * m[1] + P[r, 1] * m[2] + P[r, 2] * m[3]
        out[1 + r] = m1[r] + w * t[r]
    S = np.empty((3, 3))
    S[0, 0], S[0, 1], S[0, 2] = m[4], m[5], m[6]
    S[1, 0], S[1, 1], S[1, 2] = m[5], m[7], m[8]
    S[2, 0], S[2, 1], S[2, 2] = m[6], m[8], m[9]
    k = 4
    for r in range(3):
        for c in range(r, 3):
            acc = 0.0
            for a in range(3):
                for b in range(3):
                    acc += P[r, a] * S[a, b] * P[c, b]
            out[k] = acc + m1[r] * t[c] + t[r] * m1[c] + w * t[r] * t[c]
            k += 1


class BodyHierarchy:
    """The articulation hierarchy of one body, updated per frame by one method.

    Attributes: ``nodes_f`` (2L-1, 20) the volumes in world coordinates, ``kind``
    (``KIND_AABB`` for the AABB methods, else ``KIND_OBB``), ``last_update`` seconds.
    """

    def __init__(self, body, method: str = "cab"):
        if method not in UPDATE_METHODS:
            raise ValueError(f"method: expected one of {UPDATE_METHODS}, got {method!r}")
        self.body = body
        self.method = method
        self.method_id = UPDATE_METHODS.index(method)
        self.kind = KIND_AABB if self.method_id <= METHOD_AABB_STAR else KIND_OBB
        self.tree = body.tree
        self.nodes_f = np.zeros((self.tree.n_nodes, N_FCOLS))
        self.poses = None
        self.last_update = 0.0

    def update(self, poses) -> float:
        """Refit to link ``poses`` (L, 4, 4); returns the seconds it took."""
        b, tr = self.body, self.tree
        poses = writable_f64(poses)
        if poses.shape != (b.n_links, 4, 4):
            raise ValueError(f"poses: expected shape ({b.n_links}, 4, 4), got {poses.shape}")
        t0 = time.perf_counter()
        update_nodes(self.method_id, poses, tr.nodes_i, tr.link_order, tr.joint_link, tr.leaf_of_link,
                     b.leaf_c, b.leaf_R, b.leaf_e, b.moments, b.vertices, b.vert_off, self.nodes_f)
        self.last_update = time.perf_counter() - t0
        self.poses = poses
        return self.last_update
