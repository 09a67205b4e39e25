"""Compiled self-collision of a URDF robot: forward kinematics, the articulation-hierarchy
update, a self-traversal of that hierarchy (each node pair once) and the exact queries of the
allowed overlapping link pairs, in one compiled call per configuration (``self_check``) or per
batch of configurations (``_count_chunk``: the audit's kernel, counts per link pair summed in
the kernel; the audit runs chunks of configurations on threads).

The body's static arrays travel packed in three buffers (``fbuf`` float64, ``ibuf`` int32,
``lbuf`` int64; see ``SelfCollisionChecker``): unboxing ~40 arrays per call cost as much as
the query. All working memory is allocated per call (a checker is safe to share between
threads); validation (finite joint values, finite link poses within ``MAX_COORD``) and the
compaction of the hits happen here too, so the Python wrapper does almost nothing.

The node-pair test and the descend rule are the traversal core's (``_overlap.sat_program``,
``_core.descend_a``), with the core's epsilon ``ABS_EPS`` (1e-6 added to |C|): the broad phase
may only ever report more overlaps than the exact boxes have, so one epsilon for the whole
engine, the one chosen for rounding of near-parallel edge axes, keeps the articulation
hierarchy and the mesh hierarchies consistent (the copy here used 1e-12, below the rounding
of world-frame products of metre-scale boxes far from the origin).
"""
import numpy as np
from numba import njit

from .._core import descend_a
from .._pairjit import entry_njit, pair_njit
from .._layout import C0, E0, LEFT, N_FCOLS, N_STATS, P_AXES, P_NAXES, R0, RIGHT, S0, SIZE, SR, START
from .._overlap import ABS_EPS, PROGRAM_SAT6, PROGRAM_SAT15, sat_program, sat_scalars
from ..mesh import MAX_COORD
from ._robot_fk import robot_fk
from .hierarchy import update_nodes
from .._prim import closed_form_hit, has_closed_form, shapes_intersect
from .._prim_leaf import _mul, link_pairs_prims
from .query import exact_queries

# lbuf layout: the offsets of the packed arrays, then the dims, then per hierarchy node the
# link bit sets ``bits`` (H) and ``reach`` (H), then the checked-pair mask (L * L, 0/1), then
# the exact queries' plan. Everything static travels in fbuf/ibuf/lbuf: every array argument
# of an entry point costs its unboxing on every call.
N_OFF = 42  # 24 for meshes, 17 for exact primitive links (primlinks: real meshes, primitives), the pair list
N_DIMS = 22  # ..., [18] broad phase (BROAD_*), [19] number of checked pairs, [20] exact-query stack rows,
# [21] joint values per configuration (n_dofs)
BROAD_HIERARCHY = 0  # self-traversal of the articulation hierarchy
BROAD_PAIRS = 1      # every checked link pair's leaf boxes (small robots; see ``pair_sweep``)
LB_DIMS = N_OFF
LB_BITS = N_OFF + N_DIMS

# status codes of the entry points (out[0] of ``self_check``)
ST_OK = 0
ST_Q_NONFINITE = 1
ST_POSE_BAD = 2
ST_Q_SHAPE = 3  # q has the wrong length (out[3]: its length)
# the packed body (``pbuf``, int64): a header, then fbuf's float64 words, ibuf's int32 pairs,
# lbuf: one array argument instead of three (each array argument costs its unboxing, ~0.1 us,
# on every call of an entry point)
PB_HEAD = 2  # pbuf[0]: start of the int32 section, pbuf[1]: start of lbuf
# out[] of ``self_check``: status, n_hits, n_candidates, the bad link (ST_POSE_BAD), then the
# counters (2 + N_STATS), then the hit pairs (2 n_hits), then the candidate pairs
OUT_HEAD = 4
OUT_PAIRS = OUT_HEAD + 2 + N_STATS


@njit(cache=True, nogil=True)
def self_traverse(nf, ni, link_order, mask, bits, reach, aabb, cand, counters, stack):
    """Overlapping allowed leaf (link) pairs of one hierarchy against itself (``aabb``:
    axis-aligned boxes, else oriented boxes); every node pair is visited once ((n, n)
    splits into (l, l), (r, r), (l, r)). Writes (i < j) rows to ``cand``; returns their
    count. counters[0] += box tests. ``stack`` (4 H + 8, 2) int64 scratch.

    ``bits`` (n,) int64: the links under each node as a bit set; ``reach`` (n,): the links
    some link under the node may be checked against. A node pair with
    ``reach[a] & bits[b] == 0`` holds no allowed pair and is skipped untested (bodies of
    more than 63 links pass all-ones sets: no pruning). The box test is the core's
    ``sat_program`` (15 axes for oriented boxes; the 3 face axes for world AABBs, whose
    rotation is the identity), the descend rule the core's ``descend_a``."""
    C = np.empty((3, 3))
    AC = np.empty((3, 3))
    T = np.empty(3)
    ea = np.empty(3)
    eb = np.empty(3)
    axes = np.zeros(1, dtype=np.int64)
    if aabb:  # world AABBs: B in A's frame is a pure translation
        for i in range(3):
            for j in range(3):
                C[i, j] = 1.0 if i == j else 0.0
                AC[i, j] = C[i, j] + ABS_EPS
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
        dx = nf[b, C0] - nf[a, C0]
        dy = nf[b, C0 + 1] - nf[a, C0 + 1]
        dz = nf[b, C0 + 2] - nf[a, C0 + 2]
        for k in range(3):
            ea[k] = nf[a, E0 + k]
            eb[k] = nf[b, E0 + k]
        if aabb:
            T[0] = dx
            T[1] = dy
            T[2] = dz
            sep = sat_program(PROGRAM_SAT6, axes, T, C, AC, ea, eb)
        else:
            for i in range(3):  # C = A^T B, T = A^T (cb - ca): B's box in A's box frame
                ax, ay, az = nf[a, R0 + i], nf[a, R0 + 3 + i], nf[a, R0 + 6 + i]
                T[i] = ax * dx + ay * dy + az * dz
                for j in range(3):
                    c = ax * nf[b, R0 + j] + ay * nf[b, R0 + 3 + j] + az * nf[b, R0 + 6 + j]
                    C[i, j] = c
                    AC[i, j] = abs(c) + ABS_EPS
            sep = sat_program(PROGRAM_SAT15, axes, T, C, AC, ea, eb)
        if sep >= 0:
            continue
        lb = ni[b, LEFT]
        leaf_a = la < 0
        leaf_b = lb < 0
        if leaf_a and leaf_b:
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
        if descend_a(leaf_a, leaf_b, nf[a, SIZE], nf[b, SIZE]):
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


@pair_njit(nogil=True)
def leaf_boxes(poses, leaf_c, leaf_R, leaf_e, nf):
    """Row i of ``nf`` := link i's oriented box moved with its pose ``poses[i]`` (the
    articulation hierarchy's leaf box, ``hierarchy.update_nodes`` with the same
    arithmetic) and its bounding sphere (centre, radius |e| (1 + 1e-15))."""
    for i in range(poses.shape[0]):
        P = poses[i]
        c = leaf_c[i]
        for r in range(3):
            nf[i, C0 + r] = P[r, 0] * c[0] + P[r, 1] * c[1] + P[r, 2] * c[2] + P[r, 3]
            nf[i, S0 + r] = nf[i, C0 + r]
            for k in range(3):
                nf[i, R0 + 3 * r + k] = (P[r, 0] * leaf_R[i, 0, k] + P[r, 1] * leaf_R[i, 1, k]
                                         + P[r, 2] * leaf_R[i, 2, k])
        e0, e1, e2 = leaf_e[i, 0], leaf_e[i, 1], leaf_e[i, 2]
        nf[i, E0] = e0
        nf[i, E0 + 1] = e1
        nf[i, E0 + 2] = e2
        nf[i, SR] = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) * (1.0 + 1e-15)


@pair_njit(nogil=True)
def pair_sweep(nf, pairs, cand, counters):
    """The broad phase of a small robot without a hierarchy: for every checked link pair
    (rows (i < j) of ``pairs``, sorted) the links' boxes (rows of ``nf``, ``leaf_boxes``)
    are tested, bounding spheres first, then the 15-axis test of the traversal
    (``sat_program`` with the core's ``ABS_EPS`` pad). Writes the overlapping pairs to
    ``cand`` in ``pairs`` order; returns their count. counters[0] += volume tests.

    The spheres hold the boxes, so disjoint spheres mean disjoint boxes; they are widened
    by ``ABS_EPS`` (the pad every box test of the engine gets) so that rounding in the
    sphere test never rejects a pair the padded box test would keep. The candidate set is
    the overlapping leaf-box pairs: what the hierarchy's self-traversal reports (its inner
    boxes enclose the leaves, so it prunes no overlapping leaf pair)."""
    n = 0
    tests = 0
    for k in range(pairs.shape[0]):
        a = pairs[k, 0]
        b = pairs[k, 1]
        dx = nf[b, C0] - nf[a, C0]
        dy = nf[b, C0 + 1] - nf[a, C0 + 1]
        dz = nf[b, C0 + 2] - nf[a, C0 + 2]
        rr = nf[a, SR] + nf[b, SR] + ABS_EPS
        tests += 1
        if dx * dx + dy * dy + dz * dz > rr * rr:
            continue
        tests += 1
        # B's box in A's box frame: C = A^T B, T = A^T (cb - ca), M = |C| + ABS_EPS; then the
        # core's 15-axis test on scalars (``_overlap.sat_scalars``: no (3, 3) scratch per pair)
        ux, uy, uz = nf[a, R0 + 0], nf[a, R0 + 3 + 0], nf[a, R0 + 6 + 0]
        t0 = ux * dx + uy * dy + uz * dz
        c00 = ux * nf[b, R0 + 0] + uy * nf[b, R0 + 3 + 0] + uz * nf[b, R0 + 6 + 0]
        m00 = abs(c00) + ABS_EPS
        c01 = ux * nf[b, R0 + 1] + uy * nf[b, R0 + 3 + 1] + uz * nf[b, R0 + 6 + 1]
        m01 = abs(c01) + ABS_EPS
        c02 = ux * nf[b, R0 + 2] + uy * nf[b, R0 + 3 + 2] + uz * nf[b, R0 + 6 + 2]
        m02 = abs(c02) + ABS_EPS
        ux, uy, uz = nf[a, R0 + 1], nf[a, R0 + 3 + 1], nf[a, R0 + 6 + 1]
        t1 = ux * dx + uy * dy + uz * dz
        c10 = ux * nf[b, R0 + 0] + uy * nf[b, R0 + 3 + 0] + uz * nf[b, R0 + 6 + 0]
        m10 = abs(c10) + ABS_EPS
        c11 = ux * nf[b, R0 + 1] + uy * nf[b, R0 + 3 + 1] + uz * nf[b, R0 + 6 + 1]
        m11 = abs(c11) + ABS_EPS
        c12 = ux * nf[b, R0 + 2] + uy * nf[b, R0 + 3 + 2] + uz * nf[b, R0 + 6 + 2]
        m12 = abs(c12) + ABS_EPS
        ux, uy, uz = nf[a, R0 + 2], nf[a, R0 + 3 + 2], nf[a, R0 + 6 + 2]
        t2 = ux * dx + uy * dy + uz * dz
        c20 = ux * nf[b, R0 + 0] + uy * nf[b, R0 + 3 + 0] + uz * nf[b, R0 + 6 + 0]
        m20 = abs(c20) + ABS_EPS
        c21 = ux * nf[b, R0 + 1] + uy * nf[b, R0 + 3 + 1] + uz * nf[b, R0 + 6 + 1]
        m21 = abs(c21) + ABS_EPS
        c22 = ux * nf[b, R0 + 2] + uy * nf[b, R0 + 3 + 2] + uz * nf[b, R0 + 6 + 2]
        m22 = abs(c22) + ABS_EPS
        a0, a1, a2 = nf[a, E0], nf[a, E0 + 1], nf[a, E0 + 2]
        b0, b1, b2 = nf[b, E0], nf[b, E0 + 1], nf[b, E0 + 2]
        if sat_scalars(PROGRAM_SAT15, t0, t1, t2, c00, c01, c02, c10, c11, c12, c20, c21, c22,
                       m00, m01, m02, m10, m11, m12, m20, m21, m22, a0, a1, a2, b0, b1, b2) >= 0:
            continue
        cand[n, 0] = a
        cand[n, 1] = b
        n += 1
    counters[0] += tests
    return n


@pair_njit(nogil=True)
def _poses_bad(P):
    """First link whose pose is non-finite or translated beyond MAX_COORD, else -1 (huge
    joint values or mimic multipliers; such poses would give NaN boxes and wrong pairs)."""
    for i in range(P.shape[0]):
        for r in range(3):
            for c in range(4):
                x = P[i, r, c]
                if not (abs(x) <= MAX_COORD):  # NaN fails every comparison
                    return i
    return -1


@pair_njit(nogil=True)
def _fk_checked(f, qs, root, fbuf, ibuf, lbuf, poses, work):
    """FK of configuration row ``f`` of ``qs`` into ``poses`` (1, L, 4, 4), with the checks
    that keep every later read in bounds and every box finite: (status, offending index).
    Allocates nothing: compiled without reference counting (``pair_njit``), so the dozen
    views of the packed arrays made here cost no atomic counts."""
    off = lbuf[0:N_OFF]
    dims = lbuf[LB_DIMS:LB_DIMS + N_DIMS]
    K, L = dims[0], dims[1]
    if qs.shape[1] != dims[21]:  # FK reads q[src]: a short q would be read out of bounds
        return ST_Q_SHAPE, qs.shape[1]
    for k in range(qs.shape[1]):
        if not np.isfinite(qs[f, k]):
            return ST_Q_NONFINITE, k
    origins = fbuf[off[0]:off[0] + 16 * K].reshape((K, 4, 4))
    kaxes = fbuf[off[1]:off[1] + 3 * K].reshape((K, 3))
    mult = fbuf[off[2]:off[2] + K]
    offset = fbuf[off[3]:off[3] + K]
    kparents = ibuf[off[10]:off[10] + K]
    jtype = ibuf[off[11]:off[11] + K]
    src = ibuf[off[12]:off[12] + K]
    select = ibuf[off[13]:off[13] + L]
    robot_fk(kparents, origins, jtype, kaxes, src, mult, offset, qs[f:f + 1], root, select, work, poses)
    bad = _poses_bad(poses[0])
    if bad >= 0:
        return ST_POSE_BAD, bad
    return ST_OK, -1


@pair_njit(nogil=True)
def _pairs_broad(P, fbuf, ibuf, lbuf, hnf, cand, counters):
    """The pair-sweep broad phase (``leaf_boxes`` + ``pair_sweep``) on the packed body;
    returns the candidate count. Allocates nothing (``pair_njit``)."""
    off = lbuf[0:N_OFF]
    dims = lbuf[LB_DIMS:LB_DIMS + N_DIMS]
    L = dims[1]
    leaf_c = fbuf[off[4]:off[4] + 3 * L].reshape((L, 3))
    leaf_R = fbuf[off[5]:off[5] + 9 * L].reshape((L, 3, 3))
    leaf_e = fbuf[off[6]:off[6] + 3 * L].reshape((L, 3))
    leaf_boxes(P, leaf_c, leaf_R, leaf_e, hnf)
    pairs = ibuf[off[41]:off[41] + 2 * dims[19]].reshape((dims[19], 2))
    return pair_sweep(hnf, pairs, cand, counters)


@pair_njit(nogil=True)
def _closed_pair(i, j, pk, plo, hreal):
    """Whether link pair (i, j) is made of primitives only, each primitive pair with a
    closed form (``_prim.has_closed_form``)."""
    if hreal[i] != 0 or hreal[j] != 0:
        return False
    for p in range(plo[i], plo[i + 1]):
        for q in range(plo[j], plo[j + 1]):
            if not has_closed_form(np.int64(pk[p]), np.int64(pk[q])):
                return False
    return True


@pair_njit(nogil=True)
def _prims_closed(n, P, cand, hits, fbuf, ibuf, lbuf, work):
    """The exact test of every candidate link pair that ``_closed_pair`` accepts (the
    common case of capsule hands), into ``hits``; returns how many candidates are left for
    ``_prim_exact`` (GJK or meshes). Allocates nothing (``pair_njit``): the per-primitive
    views cost no reference counts. ``work`` (>= 2, 4, 4): scratch for the world poses."""
    off = lbuf[0:N_OFF]
    dims = lbuf[LB_DIMS:LB_DIMS + N_DIMS]
    NP = dims[14]
    psz = fbuf[off[26]:off[26] + 3 * NP].reshape((NP, 3))
    ploc = fbuf[off[27]:off[27] + 16 * NP].reshape((NP, 4, 4))
    pk = ibuf[off[37]:off[37] + NP]
    plo = ibuf[off[38]:off[38] + dims[1] + 1]
    hreal = ibuf[off[40]:off[40] + dims[1]]
    wa = work[0]
    wb = work[1]
    rest = 0
    for k in range(n):
        i = cand[k, 0]
        j = cand[k, 1]
        if not _closed_pair(i, j, pk, plo, hreal):
            rest += 1
            continue
        hit = False
        for p in range(plo[i], plo[i + 1]):
            if hit:
                break
            _mul(P[i], ploc[p], wa)
            for q in range(plo[j], plo[j + 1]):
                _mul(P[j], ploc[q], wb)
                if closed_form_hit(np.int64(pk[p]), psz[p], wa, np.int64(pk[q]), psz[q], wb):
                    hit = True
                    break
        hits[k] = hit
    return rest


@njit(cache=True, nogil=True)
def _query(f, qs, root, fbuf, ibuf, lbuf, poses, work, hnf, tstack, counters, cand, hits):
    """One configuration (row ``f`` of ``qs``): FK into ``poses`` (1, L, 4, 4), hierarchy
    update into ``hnf``, self-traversal into ``cand``, exact queries into ``hits``.
    Returns (status, candidate count, bad link)."""
    off = lbuf[0:N_OFF]
    dims = lbuf[LB_DIMS:LB_DIMS + N_DIMS]
    L, H, N, V, M = dims[1], dims[2], dims[3], dims[4], dims[5]
    method, max_leaf, stack_rows = dims[6], dims[10], dims[20]
    status, bad = _fk_checked(f, qs, root, fbuf, ibuf, lbuf, poses, work)
    if status != ST_OK:
        return status, 0, bad
    P = poses[0]
    if dims[18] == BROAD_PAIRS:
        n = _pairs_broad(P, fbuf, ibuf, lbuf, hnf, cand, counters[0:1])
    else:
        # views of the packed arrays are made where they are read (each costs reference counts)
        leaf_c = fbuf[off[4]:off[4] + 3 * L].reshape((L, 3))
        leaf_R = fbuf[off[5]:off[5] + 9 * L].reshape((L, 3, 3))
        leaf_e = fbuf[off[6]:off[6] + 3 * L].reshape((L, 3))
        bits = lbuf[LB_BITS:LB_BITS + H]
        reach = lbuf[LB_BITS + H:LB_BITS + 2 * H]
        mask = lbuf[LB_BITS + 2 * H:LB_BITS + 2 * H + L * L].reshape((L, L))
        moments = fbuf[off[7]:off[7] + 10 * L].reshape((L, 10))
        tni = ibuf[off[14]:off[14] + 4 * H].reshape((H, 4))
        link_order = ibuf[off[15]:off[15] + L]
        joint_link = ibuf[off[16]:off[16] + H]
        leaf_of_link = ibuf[off[17]:off[17] + L]
        hv = fbuf[off[9]:off[9] + 3 * V].reshape((V, 3))
        hvo = ibuf[off[23]:off[23] + L + 1]
        update_nodes(method, P, tni, link_order, joint_link, leaf_of_link, leaf_c, leaf_R, leaf_e, moments, hv, hvo,
                     hnf)
        n = self_traverse(hnf, tni, link_order, mask, bits, reach, method <= 1, cand, counters[0:1], tstack)
    plan = lbuf[LB_BITS + 2 * H + L * L:]  # the exact queries' plan (``_core.make_plan``, first contact)
    if n == 0:
        pass
    elif dims[16] == 0:
        nf = fbuf[off[8]:off[8] + 20 * N].reshape((N, 20))
        v = fbuf[off[9]:off[9] + 3 * V].reshape((V, 3))
        ni = ibuf[off[18]:off[18] + 4 * N].reshape((N, 4))
        po = ibuf[off[19]:off[19] + M]
        fc = ibuf[off[20]:off[20] + 3 * M].reshape((M, 3))
        no = ibuf[off[21]:off[21] + L + 1]
        fo = ibuf[off[22]:off[22] + L + 1]
        vo = ibuf[off[23]:off[23] + L + 1]
        exact_queries(cand[:n], P, P, dims[7], dims[8], dims[9], plan[P_AXES:P_AXES + max(1, plan[P_NAXES])],
                      nf, ni, po, v, fc, no, fo, vo, nf, ni, po, v, fc, no, fo, vo, max_leaf,
                      np.empty((stack_rows, 2), dtype=np.int32), counters[2:], hits[:n])
    elif _prims_closed(n, P, cand, hits, fbuf, ibuf, lbuf, work) > 0:
        _prim_exact(n, P, cand, hits, fbuf, ibuf, off, dims, plan, stack_rows, counters, work)
    return ST_OK, n, -1


@njit(cache=True, nogil=True)
def _prim_exact(n, P, cand, hits, fbuf, ibuf, off, dims, plan, stack_rows, counters, work):
    """Exact queries of a body with primitive links (``articulated.primlinks``): primitive
    pairs and primitive leaves against the real meshes (``_prim_leaf``), then the real
    meshes against each other by the core for the pairs still open. ``work`` (K, 4, 4): the
    FK scratch, free once the poses are out (its first two rows hold the primitives' world
    poses: one allocation less per query)."""
    L = dims[1]
    Nr, Vr, Mr, NP, PV = dims[11], dims[12], dims[13], dims[14], dims[15]
    psz = fbuf[off[26]:off[26] + 3 * NP].reshape((NP, 3))
    ploc = fbuf[off[27]:off[27] + 16 * NP].reshape((NP, 4, 4))
    pvv = fbuf[off[28]:off[28] + 3 * PV].reshape((PV, 3))
    pk = ibuf[off[37]:off[37] + NP]
    plo = ibuf[off[38]:off[38] + L + 1]
    pvo = ibuf[off[39]:off[39] + NP + 1]
    hreal = ibuf[off[40]:off[40] + L]
    # pairs of links made only of primitives: their primitive pairs here (what
    # ``link_pairs_prims`` does for them, without its 40 array arguments and scratch)
    wa = work[0]  # >= 2 rows (``_scratch``, ``self_check``)
    wb = work[1]
    rest = 0
    for k in range(n):
        i = cand[k, 0]
        j = cand[k, 1]
        if hreal[i] != 0 or hreal[j] != 0:
            rest += 1
            continue
        if _closed_pair(i, j, pk, plo, hreal):
            continue  # decided by ``_prims_closed``
        hit = False
        for p in range(plo[i], plo[i + 1]):
            if hit:
                break
            _mul(P[i], ploc[p], wa)
            for q in range(plo[j], plo[j + 1]):
                _mul(P[j], ploc[q], wb)
                if shapes_intersect(np.int64(pk[p]), psz[p], wa, pvv, np.int64(pvo[p]), np.int64(pvo[p + 1]),
                                    np.int64(pk[q]), psz[q], wb, pvv, np.int64(pvo[q]), np.int64(pvo[q + 1])):
                    hit = True
                    break
        hits[k] = hit
    if rest == 0:
        return
    rnf = fbuf[off[24]:off[24] + 20 * Nr].reshape((Nr, 20))
    rv = fbuf[off[25]:off[25] + 3 * Vr].reshape((Vr, 3))
    pbc = fbuf[off[29]:off[29] + 3 * NP].reshape((NP, 3))
    pbe = fbuf[off[30]:off[30] + 3 * NP].reshape((NP, 3))
    rni = ibuf[off[31]:off[31] + 4 * Nr].reshape((Nr, 4))
    rpo = ibuf[off[32]:off[32] + Mr]
    rfc = ibuf[off[33]:off[33] + 3 * Mr].reshape((Mr, 3))
    rno = ibuf[off[34]:off[34] + L + 1]
    rfo = ibuf[off[35]:off[35] + L + 1]
    rvo = ibuf[off[36]:off[36] + L + 1]
    # links with real triangles: primitives against them, then mesh against mesh
    sel = np.empty(rest, dtype=np.int64)
    mixed = np.empty((rest, 2), dtype=np.int32)
    r = 0
    for k in range(n):
        if hreal[cand[k, 0]] != 0 or hreal[cand[k, 1]] != 0:
            sel[r] = k
            mixed[r, 0] = cand[k, 0]
            mixed[r, 1] = cand[k, 1]
            r += 1
    mh = np.zeros(rest, dtype=np.bool_)
    need = np.zeros(rest, dtype=np.bool_)
    pstack = np.empty(dims[17] + 2, dtype=np.int32)
    link_pairs_prims(mixed, P, P, pk, psz, ploc, plo, pvo, pvv, pbc, pbe, rnf, rni, rpo, rv, rfc, rno, rfo, rvo,
                     hreal, pk, psz, ploc, plo, pvo, pvv, pbc, pbe, rnf, rni, rpo, rv, rfc, rno, rfo, rvo, hreal,
                     pstack, mh, need)
    m = 0
    for k in range(rest):
        m += need[k]
    if m > 0:
        sub = np.empty((m, 2), dtype=np.int32)
        h2 = np.zeros(m, dtype=np.bool_)
        m = 0
        for k in range(rest):
            if need[k]:
                sub[m, 0] = mixed[k, 0]
                sub[m, 1] = mixed[k, 1]
                m += 1
        exact_queries(sub, P, P, dims[7], dims[8], dims[9], plan[P_AXES:P_AXES + max(1, plan[P_NAXES])],
                      rnf, rni, rpo, rv, rfc, rno, rfo, rvo, rnf, rni, rpo, rv, rfc, rno, rfo, rvo,
                      np.int64(1), np.empty((stack_rows, 2), dtype=np.int32), counters[2:], h2)
        m = 0
        for k in range(rest):
            if need[k]:
                mh[k] = h2[m]
                m += 1
    for k in range(rest):
        hits[sel[k]] = mh[k]


@njit(cache=True, nogil=True)
def _scratch(lbuf, n_pairs):
    dims = lbuf[LB_DIMS:LB_DIMS + N_DIMS]
    K, L, H = dims[0], dims[1], dims[2]
    # four allocations, not seven, and no more than the broad phase uses (the pair sweep
    # keeps one box per link and no stack): glibc's malloc/free of these buffers was a
    # fifth of a hand's query
    if dims[18] == BROAD_PAIRS:
        H = L
        S = 1
    else:
        S = 4 * H + 8
    Kw = max(K, 2)  # the FK scratch; its first two rows are the primitive tests' scratch after FK
    fl = np.empty(16 * L + 16 * Kw + N_FCOLS * H)
    poses = fl[:16 * L].reshape((1, L, 4, 4))
    work = fl[16 * L:16 * (L + Kw)].reshape((Kw, 4, 4))
    hnf = fl[16 * (L + Kw):].reshape((H, N_FCOLS))
    it = np.zeros(2 * S + 2 + N_STATS, dtype=np.int64)
    tstack = it[:2 * S].reshape((S, 2))
    counters = it[2 * S:]
    cand = np.empty((max(1, n_pairs), 2), dtype=np.int32)
    hits = np.zeros(max(1, n_pairs), dtype=np.bool_)
    return poses, work, hnf, tstack, cand, hits, counters


def out_length(lbuf) -> int:
    """Length of the int64 ``out`` array ``self_check`` writes (``lbuf``: a packed body)."""
    dims = lbuf[LB_DIMS:LB_DIMS + N_DIMS]
    S = 1 if dims[18] == BROAD_PAIRS else 4 * int(dims[2]) + 8
    return OUT_PAIRS + 4 * max(1, int(dims[19])) + 2 * S


@njit(cache=True, nogil=True)
def unpack(pbuf):
    """(fbuf float64, ibuf int32, lbuf int64) views of a packed body (``pack``)."""
    return (pbuf[PB_HEAD:pbuf[0]].view(np.float64), pbuf[pbuf[0]:pbuf[1]].view(np.int32),
            pbuf[pbuf[1]:])


def pack(fbuf, ibuf, lbuf) -> np.ndarray:
    """The three buffers of a body as one int64 array (``unpack`` reverses it)."""
    iw = np.zeros(2 * ((len(ibuf) + 1) // 2), dtype=np.int32)
    iw[:len(ibuf)] = ibuf
    i0 = PB_HEAD + len(fbuf)
    l0 = i0 + len(iw) // 2
    return np.concatenate([np.array([i0, l0], dtype=np.int64),
                           np.ascontiguousarray(fbuf, dtype=np.float64).view(np.int64), iw.view(np.int64),
                           np.asarray(lbuf, dtype=np.int64)])


# One compiled signature, given: a q that is not a contiguous, aligned, writeable float64
# vector makes numba raise TypeError (never compile another), and the caller converts it
# (``SelfCollisionChecker.check``: the common call pays no checks in Python).
SELF_CHECK_SIG = "int64(float64[::1], float64[:, :, ::1], int64[::1], int64[::1])"


@entry_njit(SELF_CHECK_SIG, nogil=True)
def self_check(q, root, pbuf, out):
    """Self-collision of one configuration ``q`` (n_dofs,) with the root at ``root``
    (1, 4, 4) of the packed body ``pbuf`` (``pack``), written to ``out``
    (``out_length(lbuf)``,) int64; returns the status.
    ``out[0]`` status (``ST_*``), ``out[1]`` hits, ``out[2]`` candidates, ``out[3]`` the
    offending joint value / link index, then the counters (broad box tests, unused, the
    exact queries' N_STATS), then the hit link pairs and the candidate pairs as (i, j) rows
    with i < j, sorted by (i, j); the traversal stack is the tail of ``out``.

    The caller allocates ``out`` (one per call: the result keeps it): an array made here
    and returned cost its boxing into a Python object, about a tenth of a hand's query;
    the counters and the traversal stack live in it too (one allocation less here)."""
    fbuf, ibuf, lbuf = unpack(pbuf)
    dims = lbuf[LB_DIMS:LB_DIMS + N_DIMS]
    K, L, H, n_pairs = dims[0], dims[1], dims[2], dims[19]
    # candidates are checked pairs: at most as many as the mask holds
    if dims[18] == BROAD_PAIRS:  # the pair sweep keeps one box per link and no stack
        H = L
        S = 1
    else:
        S = 4 * H + 8
    Kw = max(K, 2)  # the FK scratch; its first two rows are the primitive tests' scratch after FK
    fl = np.empty(16 * L + 16 * Kw + N_FCOLS * H)
    poses = fl[:16 * L].reshape((1, L, 4, 4))
    work = fl[16 * L:16 * (L + Kw)].reshape((Kw, 4, 4))
    hnf = fl[16 * (L + Kw):].reshape((H, N_FCOLS))
    P2 = OUT_PAIRS + 4 * max(1, n_pairs)
    tstack = out[P2:P2 + 2 * S].reshape((S, 2))
    counters = out[OUT_HEAD:OUT_PAIRS]
    counters[:] = 0
    cand = np.empty((max(1, n_pairs), 2), dtype=np.int32)
    hits = np.zeros(max(1, n_pairs), dtype=np.bool_)
    status, n, bad = _query(np.int64(0), q.reshape((1, q.shape[0])), root, fbuf, ibuf, lbuf, poses, work, hnf, tstack,
                            counters, cand, hits)
    out[0] = status
    out[3] = bad
    if status != ST_OK:
        out[1] = 0
        out[2] = 0
        return status
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
    nh = 0
    for k in range(n):
        nh += hits[k]
    out[1] = nh
    out[2] = n
    h = OUT_PAIRS
    c = OUT_PAIRS + 2 * nh
    for k in range(n):
        if hits[k]:
            out[h] = cand[k, 0]
            out[h + 1] = cand[k, 1]
            h += 2
        out[c] = cand[k, 0]
        out[c + 1] = cand[k, 1]
        c += 2
    return ST_OK


@njit(cache=True, nogil=True)
def _count_chunk(qs, root, fbuf, ibuf, lbuf, lo, hi, base, cc, wc, sc):
    """Rows ``lo:hi`` of ``qs`` (one chunk of the audit) on the calling thread: per link
    pair the colliding configurations into ``cc`` (L, L), the first one (plus ``base``) into
    ``wc``; the first failing row's (status, row, joint/link) into ``sc`` (3,), and stop there.
    ``audit.count_configurations`` runs the chunks on Python threads (``nogil``)."""
    poses, work, hnf, tstack, cand, hits, counters = _scratch(lbuf, lbuf[LB_DIMS + 19])
    for f in range(lo, hi):
        hits[:] = False
        status, n, bad = _query(f, qs, root, fbuf, ibuf, lbuf, poses, work, hnf, tstack, counters, cand, hits)
        if status != ST_OK:
            sc[0] = status
            sc[1] = f + base
            sc[2] = bad
            return
        for k in range(n):
            if hits[k]:
                i = cand[k, 0]
                j = cand[k, 1]
                cc[i, j] += 1
                if wc[i, j] < 0:
                    wc[i, j] = f + base
