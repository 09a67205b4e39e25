"""Primitive leaves against mesh hierarchies: a primitive solid (one leaf holding it, its
bounding box the leaf volume) descends a link's mesh hierarchy with the separating-axis
test of two oriented boxes; at the mesh's leaves the primitive-triangle test of ``_prim``
decides. Used for links made of exact primitives (``articulated.primlinks``)."""
import numpy as np
from numba import njit

from ._layout import C0, COUNT, E0, LEFT, START
from ._overlap import ABS_EPS
from ._prim import TRIANGLE, prim_triangle_distance, shapes_intersect
from .bv.aabb import box_axis


@njit(cache=True)
def _box_box_separated(ac, aR, ae, nf, node):
    """SAT of the primitive's box (centre ac, axes = columns of aR, half extents ae) and the
    hierarchy node's box, both in the mesh's frame: the 15 axes (3 of A, 3 of B, 9 edge
    cross products, Gottschalk et al. 1996). |C| is widened by ABS_EPS (the core's pad for
    rounding in the rotation, _overlap.ABS_EPS) so no overlapping pair is rejected."""
    d0 = nf[node, C0] - ac[0]
    d1 = nf[node, C0 + 1] - ac[1]
    d2 = nf[node, C0 + 2] - ac[2]
    C = np.empty((3, 3))
    AC = np.empty((3, 3))
    T = np.empty(3)
    for r in range(3):  # rows: A's axes; C = aR^T nR, T = aR^T d
        ux, uy, uz = aR[0, r], aR[1, r], aR[2, r]
        T[r] = ux * d0 + uy * d1 + uz * d2
        for c in range(3):
            v = ux * box_axis(nf, node, c) + uy * box_axis(nf, node, 3 + c) + uz * box_axis(nf, node, 6 + c)
            C[r, c] = v
            AC[r, c] = abs(v) + ABS_EPS
    be0, be1, be2 = nf[node, E0], nf[node, E0 + 1], nf[node, E0 + 2]
    # A's face axes
    for r in range(3):
        if abs(T[r]) > ae[r] + be0 * AC[r, 0] + be1 * AC[r, 1] + be2 * AC[r, 2]:
            return True
    # B's face axes
    for c in range(3):
        t = T[0] * C[0, c] + T[1] * C[1, c] + T[2] * C[2, c]
        if abs(t) > ae[0] * AC[0, c] + ae[1] * AC[1, c] + ae[2] * AC[2, c] + nf[node, E0 + c]:
            return True
    # edge-edge axes A_i x B_j
    be = (be0, be1, be2)
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            ra = ae[i1] * AC[i2, j] + ae[i2] * AC[i1, j]
            rb = be[j1] * AC[i, j2] + be[j2] * AC[i, j1]
            if abs(T[i2] * C[i1, j] - T[i1] * C[i2, j]) > ra + rb:
                return True
    return False


@njit(cache=True, inline='always')
def _load_triangle(v, faces, f, tri):
    """tri (3, 3) := the corners of face ``f``."""
    for c in range(3):
        for d in range(3):
            tri[c, d] = v[faces[f, c], d]


@njit(cache=True)
def prim_vs_mesh(kind, size, pose, verts, v0, v1, bc, be, nf, ni, po, vB, fB, stack):
    """Whether the solid primitive meets a triangle of the mesh hierarchy (nf, ni, po over
    vertices vB and faces fB, all in the mesh's frame). ``pose`` (4, 4) is the primitive in
    the mesh's frame; ``bc``, ``be`` (3,) its bounding box (centre and half extents in the
    primitive's own frame). ``stack`` (>= tree height + 2,) int32 scratch."""
    ac = np.empty(3)
    aR = np.empty((3, 3))
    for r in range(3):
        ac[r] = pose[r, 0] * bc[0] + pose[r, 1] * bc[1] + pose[r, 2] * bc[2] + pose[r, 3]
        for c in range(3):
            aR[r, c] = pose[r, c]
    tri = np.empty((3, 3))
    sp = 1
    stack[0] = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if _box_box_separated(ac, aR, be, nf, node):
            continue
        left = ni[node, LEFT]
        if left >= 0:
            stack[sp] = left
            stack[sp + 1] = ni[node, LEFT + 1]
            sp += 2
            continue
        s = ni[node, START]
        for k in range(s, s + ni[node, COUNT]):
            _load_triangle(vB, fB, po[k], tri)
            if shapes_intersect(np.int64(kind), size, pose, verts, np.int64(v0), np.int64(v1), np.int64(TRIANGLE), size,
                                pose, tri, np.int64(0), np.int64(3)):
                return True
    return False


@njit(cache=True)
def _rel(pa, pb, out):
    """out = pa^-1 pb for rigid (4, 4) poses."""
    for r in range(3):
        for c in range(4):
            acc = 0.0
            for m in range(3):
                acc += pa[m, r] * pb[m, c]
            if c == 3:
                acc -= pa[0, r] * pa[0, 3] + pa[1, r] * pa[1, 3] + pa[2, r] * pa[2, 3]
            out[r, c] = acc
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True, inline="always")
def _mul(a, b, out):
    """out = a b for (4, 4) rigid poses (the last row is [0 0 0 1])."""
    for r in range(3):
        for c in range(4):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]
        out[r, 3] += a[r, 3]
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def link_pairs_prims(pairs, poses_a, poses_b,
                     kA, sA, lA, loA, voA, pvA, bcA, beA, nfA, niA, poA, vA, fA, noA, foA, vxA, realA,
                     kB, sB, lB, loB, voB, pvB, bcB, beB, nfB, niB, poB, vB, fB, noB, foB, vxB, realB,
                     stack, hits, need_mesh):
    """Per link pair (i of A, j of B): primitive-primitive tests, then each primitive against
    the other link's real-mesh hierarchy. ``hits[k]`` True when any meets; ``need_mesh[k]``
    True when neither did and both links have real triangles (the caller then runs the
    mesh-mesh query). Per body: primitive kinds/sizes/link-frame poses (k, s, l), per-link
    primitive offsets (lo), convex vertex offsets/rows (vo, pv), local boxes (bc, be); the
    real meshes' packed hierarchies (nf, ni, po, v, f with node/face/vertex offsets no, fo,
    vx) and ``real`` (L,) bool."""
    wa = np.empty((4, 4))
    wb = np.empty((4, 4))
    rel = np.empty((4, 4))
    for k in range(pairs.shape[0]):
        i = pairs[k, 0]
        j = pairs[k, 1]
        hit = False
        for p in range(loA[i], loA[i + 1]):
            if hit:
                break
            _mul(poses_a[i], lA[p], wa)
            for q in range(loB[j], loB[j + 1]):
                _mul(poses_b[j], lB[q], wb)
                if shapes_intersect(np.int64(kA[p]), sA[p], wa, pvA, np.int64(voA[p]), np.int64(voA[p + 1]),
                                    np.int64(kB[q]), sB[q], wb, pvB, np.int64(voB[q]), np.int64(voB[q + 1])):
                    hit = True
                    break
        if not hit and realB[j] != 0:
            for p in range(loA[i], loA[i + 1]):
                _mul(poses_a[i], lA[p], wa)
                _rel(poses_b[j], wa, rel)
                if prim_vs_mesh(np.int64(kA[p]), sA[p], rel, pvA, np.int64(voA[p]), np.int64(voA[p + 1]),
                                bcA[p], beA[p],
                                nfB[noB[j]:noB[j + 1]], niB[noB[j]:noB[j + 1]], poB[foB[j]:foB[j + 1]],
                                vB[vxB[j]:vxB[j + 1]], fB[foB[j]:foB[j + 1]], stack):
                    hit = True
                    break
        if not hit and realA[i] != 0:
            for q in range(loB[j], loB[j + 1]):
                _mul(poses_b[j], lB[q], wb)
                _rel(poses_a[i], wb, rel)
                if prim_vs_mesh(np.int64(kB[q]), sB[q], rel, pvB, np.int64(voB[q]), np.int64(voB[q + 1]),
                                bcB[q], beB[q],
                                nfA[noA[i]:noA[i + 1]], niA[noA[i]:noA[i + 1]], poA[foA[i]:foA[i + 1]],
                                vA[vxA[i]:vxA[i + 1]], fA[foA[i]:foA[i + 1]], stack):
                    hit = True
                    break
        hits[k] = hit
        need_mesh[k] = (not hit) and realA[i] != 0 and realB[j] != 0


@njit(cache=True)
def _ball_box_gap(c, r, nf, node):
    """A lower bound on the distance from anything in the ball (centre c, radius r) to
    anything in the node's box: |c - box point nearest to c| - r (the box's axes are the
    columns of its R0 block; an AABB's are the identity: ``box_axis``), 0 when they meet."""
    dd = 0.0
    for k in range(3):
        x = ((c[0] - nf[node, C0]) * box_axis(nf, node, k) + (c[1] - nf[node, C0 + 1]) * box_axis(nf, node, 3 + k)
             + (c[2] - nf[node, C0 + 2]) * box_axis(nf, node, 6 + k))
        e = abs(x) - nf[node, E0 + k]
        if e > 0.0:
            dd += e * e
    g = np.sqrt(dd) - r
    return g if g > 0.0 else 0.0


@njit(cache=True)
def prim_mesh_distance(kind, size, pose, verts, v0, v1, bc, be, nf, ni, po, vB, fB, stack, wa, wb):
    """Distance from the solid primitive to the mesh's triangles (0 when it meets one),
    branch and bound over the mesh hierarchy (Larsen et al. 1999's scheme with the
    primitive as a one-leaf tree): a node is descended only when the primitive's bounding
    ball can be nearer to its box than the best distance found so far, the nearer child
    first. Arguments as ``prim_vs_mesh``; the closest points (the mesh's frame) go to
    ``wa`` (on the primitive) and ``wb`` (on the mesh). ``stack`` (>= tree height + 2,)
    int32 scratch."""
    c = np.empty(3)
    for r in range(3):
        c[r] = pose[r, 0] * bc[0] + pose[r, 1] * bc[1] + pose[r, 2] * bc[2] + pose[r, 3]
    rad = np.sqrt(be[0] * be[0] + be[1] * be[1] + be[2] * be[2])
    tri = np.empty((3, 3))
    ta = np.empty(3)
    tb = np.empty(3)
    best = np.inf
    sp = 1
    stack[0] = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        # the bound may only prune a node that cannot hold anything nearer than ``best``
        if _ball_box_gap(c, rad, nf, node) >= best:
            continue
        left = ni[node, LEFT]
        if left >= 0:
            right = ni[node, LEFT + 1]
            if _ball_box_gap(c, rad, nf, left) <= _ball_box_gap(c, rad, nf, right):
                stack[sp] = right  # pushed first: the nearer child is popped first
                stack[sp + 1] = left
            else:
                stack[sp] = left
                stack[sp + 1] = right
            sp += 2
            continue
        s = ni[node, START]
        for k in range(s, s + ni[node, COUNT]):
            _load_triangle(vB, fB, po[k], tri)
            d = prim_triangle_distance(kind, size, pose, verts, v0, v1, tri, ta, tb)
            if d < best:
                best = d
                for i in range(3):
                    wa[i] = ta[i]
                    wb[i] = tb[i]
                if best == 0.0:
                    return 0.0
    return best


__all__ = ["prim_vs_mesh", "prim_mesh_distance", "link_pairs_prims"]
