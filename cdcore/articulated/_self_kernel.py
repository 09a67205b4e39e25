"""One compiled call per self-collision query of a URDF robot: forward kinematics, the
articulation-hierarchy update, a self-traversal of that hierarchy (each node pair once) and
the exact queries of the allowed overlapping link pairs. Python-level overhead of the
step-by-step path (several calls, temporaries) dominated the time of small robots."""
import numpy as np
from numba import njit

from .._layout import C0, E0, LEFT, R0, RIGHT, SIZE, START
from ._robot_fk import robot_fk
from .hierarchy import update_nodes
from .query import exact_queries

_EPS = 1e-12


@njit(cache=True)
def world_boxes_overlap(nf, a, b, R, AR, t):
    """SAT with 15 axes between nodes a and b of one world-frame box array (Gottschalk);
    R, AR (3, 3) and t (3,) are scratch."""
    dx = nf[b, C0] - nf[a, C0]
    dy = nf[b, C0 + 1] - nf[a, C0 + 1]
    dz = nf[b, C0 + 2] - nf[a, C0 + 2]
    for i in range(3):  # R = A^T B, t = A^T (cb - ca)
        ax, ay, az = nf[a, R0 + i], nf[a, R0 + 3 + i], nf[a, R0 + 6 + i]
        t[i] = ax * dx + ay * dy + az * dz
        for j in range(3):
            R[i, j] = ax * nf[b, R0 + j] + ay * nf[b, R0 + 3 + j] + az * nf[b, R0 + 6 + j]
            AR[i, j] = abs(R[i, j]) + _EPS
    ea0, ea1, ea2 = nf[a, E0], nf[a, E0 + 1], nf[a, E0 + 2]
    eb0, eb1, eb2 = nf[b, E0], nf[b, E0 + 1], nf[b, E0 + 2]
    ea = (ea0, ea1, ea2)
    for i in range(3):
        if abs(t[i]) > ea[i] + eb0 * AR[i, 0] + eb1 * AR[i, 1] + eb2 * AR[i, 2]:
            return False
    eb = (eb0, eb1, eb2)
    for j in range(3):
        if abs(t[0] * R[0, j] + t[1] * R[1, j] + t[2] * R[2, j]) > (ea0 * AR[0, j] + ea1 * AR[1, j] + ea2 * AR[2, j]
                                                                   + eb[j]):
            return False
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            ra = ea[i1] * AR[i2, j] + ea[i2] * AR[i1, j]
            rb = eb[j1] * AR[i, j2] + eb[j2] * AR[i, j1]
            if abs(t[i2] * R[i1, j] - t[i1] * R[i2, j]) > ra + rb:
                return False
    return True


@njit(cache=True)
def world_aabbs_overlap(nf, a, b):
    """Interval test of two axis-aligned boxes (AABB+ / AABB* hierarchies: their internal
    nodes carry no axes)."""
    for d in range(3):
        if abs(nf[b, C0 + d] - nf[a, C0 + d]) > nf[a, E0 + d] + nf[b, E0 + d]:
            return False
    return True


@njit(cache=True)
def self_traverse(nf, ni, link_order, mask, bits, reach, aabb, cand, counters):
    """Overlapping allowed leaf (link) pairs of one hierarchy against itself (``aabb``:
    axis-aligned boxes, else oriented boxes); every node
    pair is visited once ((n, n) splits into (l, l), (r, r), (l, r)). Writes (i < j) rows to
    ``cand``; returns their count. counters[0] += box tests.

    ``bits`` (n,) int64: the links under each node as a bit set; ``reach`` (n,): the links
    some link under the node may be checked against. A node pair with
    ``reach[a] & bits[b] == 0`` holds no allowed pair and is skipped untested (bodies of
    more than 64 links pass all-ones sets: no pruning)."""
    stack = np.empty((4 * ni.shape[0] + 8, 2), dtype=np.int64)
    R = np.empty((3, 3))
    AR = np.empty((3, 3))
    t = np.empty(3)
    sp = 1
    stack[0, 0] = 0
    stack[0, 1] = 0
    n = 0
    while sp > 0:
        sp -= 1
        a = stack[sp, 0]
        b = stack[sp, 1]
        la = ni[a, LEFT]
        if (reach[a] & bits[b]) == 0:
            continue
        if a == b:
            if la >= 0:
                r = ni[a, RIGHT]
                stack[sp, 0] = la
                stack[sp, 1] = la
                stack[sp + 1, 0] = r
                stack[sp + 1, 1] = r
                stack[sp + 2, 0] = la
                stack[sp + 2, 1] = r
                sp += 3
            continue
        counters[0] += 1
        if aabb:
            if not world_aabbs_overlap(nf, a, b):
                continue
        elif not world_boxes_overlap(nf, a, b, R, AR, t):
            continue
        lb = ni[b, LEFT]
        if la < 0 and lb < 0:
            i = link_order[ni[a, START]]
            j = link_order[ni[b, START]]
            if mask[i, j]:
                if i < j:
                    cand[n, 0] = i
                    cand[n, 1] = j
                else:
                    cand[n, 0] = j
                    cand[n, 1] = i
                n += 1
            continue
        if lb < 0 or (la >= 0 and nf[a, SIZE] >= nf[b, SIZE]):
            stack[sp, 0] = la
            stack[sp, 1] = b
            stack[sp + 1, 0] = ni[a, RIGHT]
            stack[sp + 1, 1] = b
        else:
            stack[sp, 0] = a
            stack[sp, 1] = lb
            stack[sp + 1, 0] = a
            stack[sp + 1, 1] = ni[b, RIGHT]
        sp += 2
    return n


@njit(cache=True)
def robot_self_collide(q, root, fbuf, ibuf, off, dims, plan_axes, mask, bits, reach, hnf, poses, work, stack,
                       counters, cand, hits):
    """FK of ``q`` (1, n_dofs) into ``poses`` (1, L, 4, 4), hierarchy update into ``hnf``,
    self-traversal into ``cand``, exact queries into ``hits`` (sorted by (i, j)); returns
    the candidate count. The body's static arrays come packed in ``fbuf`` (float64) and
    ``ibuf`` (int32) at offsets ``off`` (see ``SelfCollisionChecker``): one call with few
    arguments, because unboxing ~40 arrays per call cost as much as the query.
    ``dims``: K, L, H, N, V, M, method, kind, test code, program, max_leaf.
    ``counters`` (2 + N_STATS,) int64: broad box tests, unused, the exact queries' counters.
    """
    K, L, H, N, V, M = dims[0], dims[1], dims[2], dims[3], dims[4], dims[5]
    method, kind, code, program, max_leaf = dims[6], dims[7], dims[8], dims[9], dims[10]
    origins = fbuf[off[0]:off[0] + 16 * K].reshape((K, 4, 4))
    kaxes = fbuf[off[1]:off[1] + 3 * K].reshape((K, 3))
    mult = fbuf[off[2]:off[2] + K]
    offset = fbuf[off[3]:off[3] + K]
    leaf_c = fbuf[off[4]:off[4] + 3 * L].reshape((L, 3))
    leaf_R = fbuf[off[5]:off[5] + 9 * L].reshape((L, 3, 3))
    leaf_e = fbuf[off[6]:off[6] + 3 * L].reshape((L, 3))
    moments = fbuf[off[7]:off[7] + 10 * L].reshape((L, 10))
    nf = fbuf[off[8]:off[8] + 20 * N].reshape((N, 20))
    v = fbuf[off[9]:off[9] + 3 * V].reshape((V, 3))
    kparents = ibuf[off[10]:off[10] + K]
    jtype = ibuf[off[11]:off[11] + K]
    src = ibuf[off[12]:off[12] + K]
    select = ibuf[off[13]:off[13] + L]
    tni = ibuf[off[14]:off[14] + 4 * H].reshape((H, 4))
    link_order = ibuf[off[15]:off[15] + L]
    joint_link = ibuf[off[16]:off[16] + H]
    leaf_of_link = ibuf[off[17]:off[17] + L]
    ni = ibuf[off[18]:off[18] + 4 * N].reshape((N, 4))
    po = ibuf[off[19]:off[19] + M]
    f = ibuf[off[20]:off[20] + 3 * M].reshape((M, 3))
    no = ibuf[off[21]:off[21] + L + 1]
    fo = ibuf[off[22]:off[22] + L + 1]
    vo = ibuf[off[23]:off[23] + L + 1]
    counters[:] = 0
    robot_fk(kparents, origins, jtype, kaxes, src, mult, offset, q, root, select, work, poses)
    P = poses[0]
    update_nodes(method, P, tni, link_order, joint_link, leaf_of_link, leaf_c, leaf_R, leaf_e, moments, v, vo, hnf)
    n = self_traverse(hnf, tni, link_order, mask, bits, reach, method <= 1, cand, counters[0:1])
    exact_queries(cand[:n], P, P, kind, code, program, plan_axes, nf, ni, po, v, f, no, fo, vo,
                  nf, ni, po, v, f, no, fo, vo, max_leaf, stack, counters[2:], hits[:n])
    for k in range(1, n):  # insertion sort by (i, j): few candidates
        i, j, hk = cand[k, 0], cand[k, 1], hits[k]
        m = k - 1
        while m >= 0 and (cand[m, 0] > i or (cand[m, 0] == i and cand[m, 1] > j)):
            cand[m + 1, 0] = cand[m, 0]
            cand[m + 1, 1] = cand[m, 1]
            hits[m + 1] = hits[m]
            m -= 1
        cand[m + 1, 0] = i
        cand[m + 1, 1] = j
        hits[m + 1] = hk
    return n
