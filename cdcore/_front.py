"""Kernels of the generalized front cache (``cdcore.front``).

Ehmann & Lin 2001 ("Accurate and fast proximity queries between polyhedra using convex surface
decomposition", section 5: generalized front tracking; named by Fünzig & Fellner 2003, section 2,
as the cache their k-DOP pipeline takes): the *front* is the set of node pairs of the bounding-
volume test tree (BVTT) where the last traversal stopped: pairs whose volumes were separated, and
leaf pairs. The leaf x leaf products under the front pairs partition all of A's leaves x B's
leaves, so a traversal seeded with the front instead of the root pair finds exactly the same
intersecting triangles as one from the root (a pair whose triangles are apart has no
intersecting triangles below it; every other pair is descended to its leaves).

Temporal coherence certificates
-------------------------------
A front that re-tests every front pair each frame costs at least F node tests where a full
traversal costs about 2F (F stopping pairs plus the overlapping pairs above them), so it can
never reach half a full traversal's tests. Here a separated front pair also keeps a *margin*:
a lower bound on the distance between the triangles below its two nodes, certified by the
frame (call) that tested it, and the call's index (its reference). While the motion since the
reference provably cannot have closed that distance the pair is not tested (it is *skipped*:
counted in ``M_SKIPPED``, never in the node tests). This is the separation-distance certificate
of kinetic / conservative-advancement collision detection (Mirtich's "time of impact" bounds,
and the motion bounds of FCL's conservative advancement, Tang, Kim & Manocha 2009, "C2A"): a
lower bound on the distance minus an upper bound on how far any point can have moved.

* **Margin** (``_margin``): at the test, with B's box in A's frame (``R cB + t``, axes
  ``R UB``), the gap along a direction L between the two boxes' projections, divided by |L|,
  maximised over A's three face normals, B's three face normals (``R UB_j``) and, when the
  traversal's separating axis was an edge x edge axis (ids 6..14), that axis; with sphere
  tests also the sphere gap |R sB + t - sA| - rA - rB. The box support of B along L is
  ``sum_j eB_j |L . R UB_j|``, exact for the parallelepiped ``R box + t`` whatever R is (poses
  are orthonormal only to ``transforms._ORTHO_TOL``); A's node axes are orthonormal by
  construction (what the core's SAT also assumes). Every triangle lies in its node's box
  (the build's pad), so the triangles are at least that far apart. From the stored margin the
  call's rounding slack ``CERT_REL * S`` is subtracted (S: the coordinate scale, below).
* **Motion bound** (``_motion``): a point p of B's node (its model coordinates now, p_h at
  the reference call h) is at ``R p + t`` now and was at ``R_h p_h + t_h``; the difference is
  ``R_h (p - p_h) + (R - R_h) p + (t - t_h)``, of length at most
  ``||R_h||_2 * D_B + |(R - R_h) p_h + t - t_h| + ||R - R_h||_2 * D_B`` (p = p_h + (p - p_h)),
  at most ``(||R_h||_2 + ||R - R_h||_2) D_B + |(R - R_h) cB + t - t_h| + ||R - R_h||_2 rho_B``
  with (cB, rho_B) a ball around B's node box at call h (box centre, half-diagonal; kept in
  the front row, so that checking a row reads no node data), and D_B the largest vertex
  displacement of B's mesh since call h (refits: the sum of the per-call maxima, measured by
  ``cdcore.front.FrontCache`` from the meshes; every point of a triangle moves by a convex
  combination of its vertices' moves, so by at most the largest). A's points (A's own frame)
  move by at most D_A. Spectral norms are bounded above by ``_norm2_bound`` (the smaller of
  the Frobenius norm and the square root of the Gershgorin bound of M^T M). This is the
  "|dt| + ||dR|| r" bound with r per node about the node's own centre, so a small node far
  from B's origin pays for B's rotation only through its centre's actual displacement.
* **Keep** a pair iff margin - bound > ``CERT_REL * S_now``: the triangles below are then
  further apart than the exact triangle test (``_tritri``, rounding of the moved vertices and
  of its projections: a few ulps of the coordinates) could ever mistake for touching, so a
  full traversal reports no triangle pair below it. Otherwise the pair is a *seed*: tested as
  before. A pair whose reference left the ring of the last ``RING`` calls is tested too.

S (the coordinate scale) = |cA_root| + |eA_root| + ||R||_2 (|cB_root| + |eB_root|) + |t|:
bounds every coordinate the call computes in A's frame. ``CERT_REL = 1e-9`` of it is ~10^7
times double rounding (1e-16 per operation, a few hundred operations) and far below any
useful gap (a nanometre on a metre-sized scene).

Not certified (tested every frame, as before): leaf pairs whose volumes overlapped, and pairs
whose best gap is not above the slack. A rebuild (new topology) and per-axis scaled poses are
refused or reset by ``cdcore.front.FrontCache``; refits are followed through D_A, D_B.

One frame (``front_entry``)
---------------------------
0. **Incoherent frames** (``JUMP_REL``): a traversal from the root; with the trace (the new
   front its stop rows, certified) after a coherent call, without it after an incoherent one.
1. **Certificates and pruning**: a first pass (``all_kept``) checks the rows' certificates in
   order and stops at the first that fails; when none does, the front is kept as it is (a row's
   state changes only when it is tested: nothing is written, ``M_SAME``). Otherwise one
   shift-reduce pass over the front (kept in traversal order so that BVTT siblings are
   neighbours: no sorting, no hashing) classifies each row as *kept* (certified) or a *seed*.
   Two sibling rows, (l, b) and (r, b) with l, r the children of p in A (or (a, l), (a, r) in
   B), both separated at their last test and not waiting, at least one of them a seed, are
   replaced by their parent pair (Ehmann & Lin's pull-up), a seed tested this frame (the test
   gives it its own margin), and so on upwards. Two kept siblings stay: merging them into a
   kept parent (the smaller remaining margin, rebased to this call, with the parent's larger
   ball) is sound, but on the lab's scenes the parent expired sooner and then failed near
   contacts (more node tests, no less time). A pulled-up pair found overlapping makes the pairs
   sprouted below it wait ``2, 4, .. WAIT_MAX`` calls before the next pull-up (exponential
   back-off: a pair whose parent overlaps in a steady contact pays for a failed attempt
   O(log frames) times, not every frame).
2. **Sprouting**: the seeds are pushed on the traversal stack and ``_core.traverse`` (resumable
   from a seeded stack) tests each and descends where they now overlap, with the trace on.
3. The trace rows whose outcome is not OVERLAP replace their seed in the new front (the rows
   of one seed's sub-traversal are contiguous and start with the seed itself: depth-first),
   each separated one with a fresh margin; kept rows are copied.

The state lives in arrays of the caller (one ``FrontCache``): the front in two slots (input and
output), the ring of the last ``RING`` calls' transforms, ``meta``, and a scratch block (the
counters, R and t, the pass-1 sequence, the traversal's buffers and the pairs) reused by the
calls and made larger by the caller when a call asks (``MORE``, before anything is changed).
The entries are compiled without reference counting (``_pairjit``) and allocate nothing. A call
never writes its input slot, so when the front's output slot is too small it returns ``GROW``
and the caller grows the slots and repeats the call.
"""
import numpy as np
from numba import njit

from ._core import Buffers, KdopQuery, _sort_pairs, pose_status, traverse, trees
from ._cycles import read_cycles
from ._kdop_traverse import QF_TROW, QI_COLS, prepare_query
from ._layout import (C0, E0, LEFT, N_STATS, OUT_OVERLAP, OUT_SEPARATED, P_METHOD,
                      P_TEST, RIGHT, S0, SR, ST_PAIRS, ST_SP, ST_TRACE, TEST_SPHERE, TEST_SPHERE5, TEST_SPHERE15,
                      TR_A, TR_AXIS, TR_B, TR_OUTCOME, TRACE_COLS)
from ._pack import H_HEIGHT, H_LEAF_CAP, c_view
from ._pairjit import pair_njit
from .bv.aabb import box_axis
from .transforms import _relative_transform

WAIT_MAX = 16  # longest back-off (frames) after failed pull-ups

# the certificates' relative slack (module docstring: ~1e7 x double rounding of the scale S)
CERT_REL = 1e-9
# a node box's half-diagonal bounds its points only for orthonormal axes: they are, to rounding
# (build: identity, normalised triangle frames, eigenvectors), so |sum s_i e_i U_i| <= |e| (1 + 1e-12)
BALL_REL = 1e-12
NO_MARGIN = -1.0  # the margin of a row without a certificate (its ST_REF is -1)
# Incoherent frames: when B's root box can have moved, relative to A, by more than this fraction
# of the larger root ball's radius since the last call (the smaller one's would call a finger
# turning against a ball incoherent, while most of the front around it still holds), the last
# front says little about this frame (a cut of the BVTT around contacts that moved away): the
# frame is a traversal from the root, with the trace (its stop rows the next front) after a
# coherent call, and without it (what ``collide`` does; the next front is the root pair) after
# an incoherent one. Random placements (the rigid-torus scene) move by about the objects' size
# every frame; a coherent animation by a few percent.
JUMP_REL = 0.25

# columns of a front row (int32): the node pair, then its state. A row's state only changes
# when it is tested (a kept row is copied as it is), so a frame that keeps every row leaves
# the front where it is (``M_SAME``)
FR_A = 0
FR_B = 1
ST_SEP = 2  # 1: separated at its last test (0: a leaf pair whose volumes overlapped)
ST_WAIT = 3  # the first call at which a pull-up may be tried again (0: now)
ST_FAILS = 4  # failed pull-ups in a row
ST_PULLED = 5  # 1: made by a pull-up and not tested since (its failure backs off the pairs below)
ST_REF = 6  # the call whose test (or kept pull-up) certified the margin; -1: no certificate
SQ_SEED = 7  # pass 1 only: 1 for a seed (tested this frame), 0 for a kept row
FRONT_COLS = 8
SQ_SRC = 8  # pass 1 only: the input row (a kept row's margin columns are read from there)
SQ_COLS = 10  # (an even number: the sequence's rows are whole int64 slots)

# the front's slots (fr: (2, cap, FRONT_COLS) int32, mg: (2, cap, MG_COLS) float64): input and
# output alternate between 0 and 1 (meta[M_SIDE] is the input); pass 1's sequence is scratch of
# the call (the same columns)
MG_M = 0  # the margin
MG_C = 1  # the ball around B's node box at the reference call: centre (3), radius (kept in the
MG_RHO = 4  # row: pass 1 then reads the front sequentially, not B's nodes, ~2 cache misses a row)
MG_L = 5  # |c| + rho: the quick bound |dR c + dt| + ||dR|| rho <= |dt| + ||dR|| (|c| + rho)
MG_COLS = 6

# the ring of the last RING calls (float64 rows): the transform, the cumulative deformation,
# ||R||_2, and the motion since that call to the current one (computed when first needed)
RING = 16
RG_R = 0  # R (3, 3) row-major
RG_T = 9  # t (3,)
RG_DA = 12  # A's deformation since the first call (sum of the per-call largest vertex moves)
RG_DB = 13  # B's, in B's model frame
RG_NR = 14  # ||R||_2 (upper bound)
RG_STAMP = 15  # the call the columns below were computed for (-1: none)
RG_DR = 16  # R_now - R_h (3, 3)
RG_DT = 25  # t_now - t_h
RG_DRN = 28  # ||R_now - R_h||_2 (upper bound)
RG_DEF = 29  # D_A + (||R_h||_2 + ||R_now - R_h||_2) D_B since call h
RG_Q = 30  # RG_DEF + |t_now - t_h|: the quick bound's constant part
RING_COLS = 31

# meta (int64): the call's outputs and the state kept between calls
M_NEED = 0  # out with MORE: the scratch block's length this call needs (int64 slots)
M_PREV_JUMP = 1  # in/out: 1 when the last call was incoherent (M_JUMP)
M_SAME = 2  # out: 1 when every front row was kept (the front is unchanged, in the input slot)
M_NOUT = 3  # out: rows of the new front (in slot 1 - side; in ``side`` with M_SAME)
M_NPAIRS = 4  # out: intersecting triangle pairs (sorted, in the block from slot M_OPAIRS)
M_SKIPPED = 5  # out: front pairs kept by their certificate (not tested)
M_SEEDS = 6  # out: seeds traversed
M_OPAIRS = 7  # out: where the pairs start in the block (int64 slots)
M_CYC = 8  # out: cycle-counter ticks spent in the call
M_MERGED = 9  # out: pull-ups this call
M_STATE = 10  # the traversal's state (ST_SP, ST_PAIRS, ST_TRACE): 3 slots
M_JUMP = 13  # out: 1 when the frame was incoherent (a traversal from the root)
M_FROM_ROOT = 14  # out: 1 when the root pair was the frame's only seed (a full traversal's tests)
M_PAIRS_HINT = 15  # in/out: the largest pair and trace counts of recent frames (the scratch block
M_TRACE_HINT = 16  # is sized by them: an overflow repeats the frame with larger ones)
META_LEN = 17

# the scratch block (int64, the caller's, reused by its calls): the counters and the status
# (``_core``'s layout: ``blk[:N_STATS + 1]`` is a query's ``counts``), R, t, the box tests'
# scratch, then the k-DOP tables, the sequence, the stack, the trace and the pairs
B_WF = N_STATS + 1
WF_R = 0
WF_T = 9
WF_BOX = 12
WF_LEN = WF_BOX + 27
B_FIXED = B_WF + WF_LEN

# return codes
DONE_OK = 0
GROW = 1  # the front's slots are too small: the caller grows them and repeats the call
BAD_POSE = 2  # (the status is at blk[N_STATS]; nothing else was done)
MORE = 3  # the scratch block is too small: the caller makes one of meta[M_NEED] slots and repeats

NO_PARENT = -1


@njit(cache=True, nogil=True)
def parents(ni):
    """(n,) parent of every node (-1 for the root)."""
    n = ni.shape[0]
    p = np.full(n, NO_PARENT, dtype=np.int32)
    for node in range(n):
        left = ni[node, LEFT]
        if left >= 0:
            p[left] = node
            p[ni[node, RIGHT]] = node
    return p


@njit(cache=True, inline='always')
def _norm2_bound(m00, m01, m02, m10, m11, m12, m20, m21, m22):
    """An upper bound of the spectral norm of M: sqrt(min(||M||_F^2, the Gershgorin bound of
    the largest eigenvalue of M^T M)), widened by 1e-12 for its own rounding (a few ulps)."""
    g00 = m00 * m00 + m10 * m10 + m20 * m20
    g11 = m01 * m01 + m11 * m11 + m21 * m21
    g22 = m02 * m02 + m12 * m12 + m22 * m22
    g01 = abs(m00 * m01 + m10 * m11 + m20 * m21)
    g02 = abs(m00 * m02 + m10 * m12 + m20 * m22)
    g12 = abs(m01 * m02 + m11 * m12 + m21 * m22)
    gersh = max(g00 + g01 + g02, max(g01 + g11 + g12, g02 + g12 + g22))
    frob = g00 + g11 + g22
    return np.sqrt(min(gersh, frob)) * (1.0 + 1e-12)


@njit(cache=True, inline='always')
def _root_scale(nf):
    """|c| + |e| of the root box: bounds every vertex's distance to the model origin."""
    c = np.sqrt(nf[0, C0] ** 2 + nf[0, C0 + 1] ** 2 + nf[0, C0 + 2] ** 2)
    e = np.sqrt(nf[0, E0] ** 2 + nf[0, E0 + 1] ** 2 + nf[0, E0 + 2] ** 2)
    return c + e


@njit(cache=True, inline='always')
def _ball(nf, b):
    """(centre x, y, z, radius) of a ball around node b's box (module docstring, BALL_REL)."""
    e = np.sqrt(nf[b, E0] ** 2 + nf[b, E0 + 1] ** 2 + nf[b, E0 + 2] ** 2) * (1.0 + BALL_REL)
    return nf[b, C0], nf[b, C0 + 1], nf[b, C0 + 2], e


@pair_njit
def _motion_terms(ring, hs, s, call):
    """Fills ring row ``hs``'s motion columns (R_now - R_h, t_now - t_h, its norm, the
    deformation since h) for this call ``call`` (ring row ``s``), once per call."""
    if ring[hs, RG_STAMP] == call:
        return
    for k in range(9):
        ring[hs, RG_DR + k] = ring[s, RG_R + k] - ring[hs, RG_R + k]
    for k in range(3):
        ring[hs, RG_DT + k] = ring[s, RG_T + k] - ring[hs, RG_T + k]
    d = ring[hs, RG_DR:RG_DR + 9]
    ring[hs, RG_DRN] = _norm2_bound(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8])
    # deformation since h: cumulative sums are non-decreasing, the difference is >= 0 up to
    # rounding of a sum (relative 1e-16; the slack covers it)
    ring[hs, RG_DEF] = ((ring[s, RG_DA] - ring[hs, RG_DA])
                        + (ring[hs, RG_NR] + ring[hs, RG_DRN]) * (ring[s, RG_DB] - ring[hs, RG_DB]))
    ring[hs, RG_Q] = ring[hs, RG_DEF] + np.sqrt(ring[hs, RG_DT] ** 2 + ring[hs, RG_DT + 1] ** 2
                                                + ring[hs, RG_DT + 2] ** 2) * (1.0 + 1e-12)
    ring[hs, RG_STAMP] = call


@njit(cache=True, inline='always')
def _motion(ring, hs, cx, cy, cz, rho):
    """Upper bound of how far any point of B's node (whose box was in the ball (c, rho) at ring
    row ``hs``'s call) and of A's nodes can have moved relative to the other body since that
    call (module docstring)."""
    dx = ring[hs, RG_DR] * cx + ring[hs, RG_DR + 1] * cy + ring[hs, RG_DR + 2] * cz + ring[hs, RG_DT]
    dy = ring[hs, RG_DR + 3] * cx + ring[hs, RG_DR + 4] * cy + ring[hs, RG_DR + 5] * cz + ring[hs, RG_DT + 1]
    dz = ring[hs, RG_DR + 6] * cx + ring[hs, RG_DR + 7] * cy + ring[hs, RG_DR + 8] * cz + ring[hs, RG_DT + 2]
    return ring[hs, RG_DEF] + np.sqrt(dx * dx + dy * dy + dz * dz) + ring[hs, RG_DRN] * rho


@njit(cache=True, inline='always')
def _axis_gap(lx, ly, lz, tx, ty, tz, ea0, ea1, ea2, c, eb0, eb1, eb2):
    """Distance lower bound along L = (lx, ly, lz) (A's box frame) between A's box (axes the
    unit vectors, half-extents ea) and B's parallelepiped (centre T, edge vectors the columns
    of ``c`` scaled by eb): (|L.T| - supA - supB) / |L|; -inf for a zero L."""
    n = np.sqrt(lx * lx + ly * ly + lz * lz)
    if not n > 0.0:
        return -np.inf
    d = abs(lx * tx + ly * ty + lz * tz)
    sa = ea0 * abs(lx) + ea1 * abs(ly) + ea2 * abs(lz)
    sb = (eb0 * abs(lx * c[0, 0] + ly * c[1, 0] + lz * c[2, 0])
          + eb1 * abs(lx * c[0, 1] + ly * c[1, 1] + lz * c[2, 1])
          + eb2 * abs(lx * c[0, 2] + ly * c[1, 2] + lz * c[2, 2]))
    return (d - sa - sb) / n


@njit(cache=True, inline='always')
def _margin(nfA, a, nfB, b, R, t, axis, spheres, c):
    """A lower bound on the distance between the triangles below nodes a and b (module
    docstring, *Margin*), before the rounding slack; ``axis``: the traversal's separating
    axis (TR_AXIS); ``c``: (3, 3) scratch."""
    # B's box axes in A's box frame: C = UA^T R UB (the SAT's matrix), T = UA^T (R cB + t - cA)
    wx = R[0, 0] * nfB[b, C0] + R[0, 1] * nfB[b, C0 + 1] + R[0, 2] * nfB[b, C0 + 2] + t[0] - nfA[a, C0]
    wy = R[1, 0] * nfB[b, C0] + R[1, 1] * nfB[b, C0 + 1] + R[1, 2] * nfB[b, C0 + 2] + t[1] - nfA[a, C0 + 1]
    wz = R[2, 0] * nfB[b, C0] + R[2, 1] * nfB[b, C0 + 1] + R[2, 2] * nfB[b, C0 + 2] + t[2] - nfA[a, C0 + 2]
    # A's axes are the columns of its R0 block: UA[r][i] = nfA[a, R0 + 3 r + i] (``box_axis``: the
    # identity for an AABB tree's compact rows, which have no axes columns)
    tx = box_axis(nfA, a, 0) * wx + box_axis(nfA, a, 3) * wy + box_axis(nfA, a, 6) * wz
    ty = box_axis(nfA, a, 1) * wx + box_axis(nfA, a, 4) * wy + box_axis(nfA, a, 7) * wz
    tz = box_axis(nfA, a, 2) * wx + box_axis(nfA, a, 5) * wy + box_axis(nfA, a, 8) * wz
    for j in range(3):
        # R UB_j in A's model frame, then in A's box frame
        ux = R[0, 0] * box_axis(nfB, b, j) + R[0, 1] * box_axis(nfB, b, 3 + j) + R[0, 2] * box_axis(nfB, b, 6 + j)
        uy = R[1, 0] * box_axis(nfB, b, j) + R[1, 1] * box_axis(nfB, b, 3 + j) + R[1, 2] * box_axis(nfB, b, 6 + j)
        uz = R[2, 0] * box_axis(nfB, b, j) + R[2, 1] * box_axis(nfB, b, 3 + j) + R[2, 2] * box_axis(nfB, b, 6 + j)
        for i in range(3):
            c[i, j] = box_axis(nfA, a, i) * ux + box_axis(nfA, a, 3 + i) * uy + box_axis(nfA, a, 6 + i) * uz
    ea0 = nfA[a, E0]
    ea1 = nfA[a, E0 + 1]
    ea2 = nfA[a, E0 + 2]
    eb0 = nfB[b, E0]
    eb1 = nfB[b, E0 + 1]
    eb2 = nfB[b, E0 + 2]
    # A's face normals (axis ids 0..2): L = e_i, a unit vector, so no division
    best = abs(tx) - ea0 - (eb0 * abs(c[0, 0]) + eb1 * abs(c[0, 1]) + eb2 * abs(c[0, 2]))
    best = max(best, abs(ty) - ea1 - (eb0 * abs(c[1, 0]) + eb1 * abs(c[1, 1]) + eb2 * abs(c[1, 2])))
    best = max(best, abs(tz) - ea2 - (eb0 * abs(c[2, 0]) + eb1 * abs(c[2, 1]) + eb2 * abs(c[2, 2])))
    # B's face normals (3..5): L = C_j, of length 1 up to the poses' orthonormality; the gap is
    # divided by (1 + |L|^2) / 2 >= |L| (no square root): a positive gap stays a lower bound of
    # the distance along L, a negative one stays negative (it never certifies)
    for j in range(3):
        lx = c[0, j]
        ly = c[1, j]
        lz = c[2, j]
        num = (abs(lx * tx + ly * ty + lz * tz) - (ea0 * abs(lx) + ea1 * abs(ly) + ea2 * abs(lz))
               - (eb0 * abs(lx * c[0, 0] + ly * c[1, 0] + lz * c[2, 0])
                  + eb1 * abs(lx * c[0, 1] + ly * c[1, 1] + lz * c[2, 1])
                  + eb2 * abs(lx * c[0, 2] + ly * c[1, 2] + lz * c[2, 2])))
        best = max(best, num / (0.5 * (1.0 + (lx * lx + ly * ly + lz * lz))))
    if 6 <= axis < 15:  # the traversal's edge x edge axis A_i x B_j (id 6 + 3 i + j)
        i = (axis - 6) // 3
        j = (axis - 6) % 3
        # e_i x C_j in A's box frame
        if i == 0:
            lx, ly, lz = 0.0, -c[2, j], c[1, j]
        elif i == 1:
            lx, ly, lz = c[2, j], 0.0, -c[0, j]
        else:
            lx, ly, lz = -c[1, j], c[0, j], 0.0
        best = max(best, _axis_gap(lx, ly, lz, tx, ty, tz, ea0, ea1, ea2, c, eb0, eb1, eb2))
    if spheres:  # the nodes' bounding spheres (valid columns under the sphere tests)
        sx = R[0, 0] * nfB[b, S0] + R[0, 1] * nfB[b, S0 + 1] + R[0, 2] * nfB[b, S0 + 2] + t[0] - nfA[a, S0]
        sy = R[1, 0] * nfB[b, S0] + R[1, 1] * nfB[b, S0 + 1] + R[1, 2] * nfB[b, S0 + 2] + t[1] - nfA[a, S0 + 1]
        sz = R[2, 0] * nfB[b, S0] + R[2, 1] * nfB[b, S0 + 1] + R[2, 2] * nfB[b, S0 + 2] + t[2] - nfA[a, S0 + 2]
        # B's sphere in A's frame is the image of a ball under R: radius ||R||_2 rB; ||R||_2 <=
        # 1 + 3 ortho tolerance (1e-6) for an accepted pose, so widen by 1e-5
        best = max(best, np.sqrt(sx * sx + sy * sy + sz * sz) - nfA[a, SR] - nfB[b, SR] * (1.0 + 1e-5))
    return best


# a row whose last margin could not outlast one call's motion goes without a new one (below)
# except once every HINT_EVERY calls (a hint grows stale when the bodies part)
HINT_EVERY = 4


@njit(cache=True, inline='always')
def _skip_margin(m_in, src, had_ball, ring, hp, mscale, phase):
    """True when a separated seed row need not get a margin this call: its previous margin
    (input row ``src``'s MG_M column, kept also when it gave no certificate) was not above the
    motion of B's node over the previous call's step (ring row ``hp``; -1: unknown), so a new
    one would most likely fail at the next call (measured on the lab's scenes: half of
    deform-wave's margins and three quarters of hand-ball's did), and computing it costs about
    a node test. The motion: ``_kept``'s quick bound when the row had a certificate
    (``had_ball``: its ball columns are its own), else the translation and deformation part
    alone (no node data read, no square root). ``phase`` (a + b + call) spreads the
    recomputations (one call in HINT_EVERY). Only a cost filter: a row without a certificate
    (ST_REF -1) is tested at the next call, so no answer can change."""
    if hp < 0 or phase % HINT_EVERY == 0:
        return False
    est = ring[hp, RG_Q]
    if had_ball:
        est += ring[hp, RG_DRN] * m_in[src, MG_L]
    return m_in[src, MG_M] <= mscale * est


@njit(cache=True, inline='always')
def _kept(fin, m_in, i, mscale, ring, s, call, slack):
    """True when row ``i``'s certificate still holds: its margin minus the motion bound since
    its reference call (the quick bound first, no square root; the row's own one when the
    quick one does not hold) is above the slack."""
    h = fin[i, ST_REF]
    if h < 0 or call - h >= RING:
        return False
    hs = h % RING
    if ring[hs, RG_STAMP] != call:
        _motion_terms(ring, hs, s, call)
    m = m_in[i, MG_M]
    if m - mscale * (ring[hs, RG_Q] + ring[hs, RG_DRN] * m_in[i, MG_L]) > slack:
        return True
    return m - mscale * _motion(ring, hs, m_in[i, MG_C], m_in[i, MG_C + 1], m_in[i, MG_C + 2],
                                m_in[i, MG_RHO]) > slack


@pair_njit
def all_kept(fin, m_in, n_in, mscale, ring, s, call, slack):
    """The first row whose certificate does not hold (``_kept``), or ``n_in`` when every one
    does (the front is kept as it is: no row is tested, none changes)."""
    if mscale < 0.0:
        return 0
    for i in range(n_in):
        if not _kept(fin, m_in, i, mscale, ring, s, call, slack):
            return i
    return n_in


@pair_njit
def seed_pass(fin, m_in, n_in, sq, par, nA, mscale, ring, s, call, slack, first_seed):
    """Pass 1 (module docstring): the input front (``fin``, ``m_in``: ``n_in`` rows) classified
    into kept rows and seeds, with sibling pull-ups, into the sequence ``sq`` (the rows' integer
    columns and their input row: a kept row's margin columns stay in ``m_in``).
    ``par``: parents of A's nodes then of B's (offset ``nA``). ``mscale``: the motion bound's
    factor, 1.0 (a negative value keeps no row: every front pair is tested;
    tests set 0.0 to show that an unsound bound is caught). Rows before ``first_seed`` are
    known to be kept (``all_kept``). Returns (rows, skipped, pull-ups)."""
    k = 0
    skipped = 0
    merges = 0
    certify = mscale >= 0.0
    for i in range(n_in):
        for col in range(SQ_SEED):
            sq[k, col] = fin[i, col]
        sq[k, SQ_SRC] = i
        if i < first_seed or (certify and _kept(fin, m_in, i, mscale, ring, s, call, slack)):
            sq[k, SQ_SEED] = 0
            skipped += 1
        else:
            sq[k, SQ_SEED] = 1
        k += 1
        while k >= 2:
            q = k - 2
            if sq[q, SQ_SEED] == 0 and sq[k - 1, SQ_SEED] == 0:
                # two kept siblings stay apart: a kept parent (margin: the smaller remaining one,
                # larger node) expired sooner and then failed its test near contacts (measured
                # on the four lab scenes: more node tests, no less time)
                break
            if not (sq[q, ST_SEP] != 0 and sq[q, ST_WAIT] <= call and sq[k - 1, ST_SEP] != 0
                    and sq[k - 1, ST_WAIT] <= call):
                break
            a1 = sq[q, FR_A]
            b1 = sq[q, FR_B]
            a2 = sq[k - 1, FR_A]
            b2 = sq[k - 1, FR_B]
            if b1 == b2 and a1 != a2 and par[a1] >= 0 and par[a1] == par[a2]:
                pa = par[a1]
                pb = b1
            elif a1 == a2 and b1 != b2 and par[nA + b1] >= 0 and par[nA + b1] == par[nA + b2]:
                pa = a1
                pb = par[nA + b1]
            else:
                break
            k -= 1
            skipped -= (1 - sq[q, SQ_SEED]) + (1 - sq[k, SQ_SEED])  # (a kept row is now in a seed)
            sq[q, FR_A] = pa
            sq[q, FR_B] = pb
            sq[q, ST_WAIT] = max(sq[q, ST_WAIT], sq[k, ST_WAIT])
            sq[q, ST_FAILS] = max(sq[q, ST_FAILS], sq[k, ST_FAILS])
            sq[q, ST_PULLED] = 1
            merges += 1
            sq[q, SQ_SEED] = 1  # a seed: tested this frame, its own margin if it holds
            sq[q, ST_REF] = -1
            sq[q, SQ_SRC] = -1
    return k, skipped, merges


@njit(cache=True, inline='always')
def _next_state(fo, w, seed_row, outcome, pulled, fails, wait, call):
    """State of a new front row ``w`` from its seed's (``fails``, ``wait``: the seed's);
    ``seed_row`` when it is the seed's own row (the seed stopped there), else the traversal
    sprouted below the seed."""
    sep = 1 if outcome == OUT_SEPARATED else 0
    fo[w, ST_SEP] = sep
    if pulled:
        if seed_row:  # the pull-up held: a fresh entry
            fo[w, ST_WAIT] = 0
            fo[w, ST_FAILS] = 0
        else:  # it failed: the pairs below wait 2, 4, .. WAIT_MAX calls before the next try
            fo[w, ST_WAIT] = call + 1 + min(WAIT_MAX, 2 << min(fails, 10))
            fo[w, ST_FAILS] = fails + 1
    elif seed_row:
        fo[w, ST_WAIT] = wait
        fo[w, ST_FAILS] = fails
    else:  # sprouted below a seed
        fo[w, ST_WAIT] = 0
        fo[w, ST_FAILS] = 0
    fo[w, ST_PULLED] = 0


@pair_njit
def emit_front(plan, R, t, nfA, nfB, sq, m_in, fo, mo, trace, n_trace, nq, call, mscale, slack, cscratch, ring):
    """Step 3 (module docstring): the new front in ``fo``, ``mo`` from the sequence ``sq`` (a
    kept row's margin columns: ``m_in``): kept rows copied, each seed replaced by its
    sub-traversal's stop rows (separated ones with a fresh margin, unless ``_skip_margin``).
    Returns the new front's rows, or -1 (the front's slots are too small)."""
    cap = fo.shape[0]
    spheres = plan[P_TEST] == TEST_SPHERE or plan[P_TEST] == TEST_SPHERE5 or plan[P_TEST] == TEST_SPHERE15
    certify = mscale >= 0.0
    # the ring row of the previous call, when its motion to this call is known (``_frame``'s
    # jump check computed it): the motion estimate of ``_skip_margin``; -1: none (every
    # separated row gets its margin)
    hp = -1
    if certify and call > 0:
        hp = (call - 1) % RING
        if ring[hp, RG_STAMP] != call:
            hp = -1
    w = 0
    r = 0
    nxt = 0  # the sequence row of the next seed after the current one (nq: none)
    for q in range(nq):
        if w >= cap:
            return -1
        if sq[q, SQ_SEED] == 0:
            for col in range(SQ_SEED):
                fo[w, col] = sq[q, col]
            src = sq[q, SQ_SRC]
            for col in range(MG_COLS):
                mo[w, col] = m_in[src, col]
            w += 1
            continue
        pulled = sq[q, ST_PULLED] != 0
        fails = sq[q, ST_FAILS]
        wait = sq[q, ST_WAIT]
        src = sq[q, SQ_SRC]  # the seed's input row (-1: made by a pull-up)
        had_ball = sq[q, ST_REF] >= 0  # its certificate just expired (its ball columns are its own)
        nxt = max(nxt, q + 1)
        while nxt < nq and sq[nxt, SQ_SEED] == 0:
            nxt += 1
        na = sq[nxt, FR_A] if nxt < nq else -1
        nb = sq[nxt, FR_B] if nxt < nq else -1
        first = True
        while r < n_trace:
            a = trace[r, TR_A]
            b = trace[r, TR_B]
            if not first and a == na and b == nb:
                break  # the next seed's sub-traversal
            outcome = trace[r, TR_OUTCOME]
            seed_row = first
            first = False
            r += 1
            if outcome == OUT_OVERLAP:
                continue
            if w >= cap:
                return -1
            fo[w, FR_A] = a
            fo[w, FR_B] = b
            _next_state(fo, w, seed_row, outcome, pulled, fails, wait, call)
            fo[w, ST_REF] = -1
            mo[w, MG_M] = NO_MARGIN
            if outcome == OUT_SEPARATED and certify:
                if seed_row and src >= 0 and _skip_margin(m_in, src, had_ball, ring, hp, mscale, a + b + call):
                    mo[w, MG_M] = m_in[src, MG_M]  # the hint stays (no certificate: ST_REF -1)
                    w += 1
                    continue
                m = _margin(nfA, a, nfB, b, R, t, trace[r - 1, TR_AXIS], spheres, cscratch) - slack
                mo[w, MG_M] = m  # (the next frame's hint when it gives no certificate)
                if m > slack:  # else no certificate: tested next frame
                    fo[w, ST_REF] = call
                    cx, cy, cz, rho = _ball(nfB, b)
                    mo[w, MG_C] = cx
                    mo[w, MG_C + 1] = cy
                    mo[w, MG_C + 2] = cz
                    mo[w, MG_RHO] = rho
                    mo[w, MG_L] = np.sqrt(cx * cx + cy * cy + cz * cz) * (1.0 + 1e-12) + rho
            w += 1
    return w


@njit(cache=True, inline='always')
def _finish(buf, meta):
    n = buf.state[ST_PAIRS]
    if n > 1:
        _sort_pairs(buf.pairs, n)
    meta[M_NPAIRS] = n
    return DONE_OK


@njit(cache=True, inline='always')
def _block(n_in, trace_rows, pair_rows, h, kq):
    """Offsets (int64 slots) in a call's scratch block: the k-DOP tables (``kq`` slots), the
    sequence rows, the stack (``h`` = the trees' heights + 2), the trace, the pairs; and the
    block's length."""
    o_seq = np.int64(B_FIXED) + kq
    o_stack = o_seq + n_in * (SQ_COLS // 2)
    o_trace = o_stack + n_in + h
    o_pairs = o_trace + (trace_rows * TRACE_COLS + 1) // 2
    return o_seq, o_stack, o_trace, o_pairs, o_pairs + pair_rows


@njit(cache=True, inline='always')
def _sizes(meta, IA, IB, n_in):
    """(stack rows beyond the seeds, trace rows, pair rows) of this call's block: the last
    frames' counts with room to spare (the hints are halved every frame, so a burst is
    forgotten)."""
    h = np.int64(IA[H_HEIGHT]) + np.int64(IB[H_HEIGHT]) + 2
    trace_rows = max(4 * n_in + 16, 2 * meta[M_TRACE_HINT])
    pair_rows = max(np.int64(64), np.int64(IA[H_LEAF_CAP]) * np.int64(IB[H_LEAF_CAP]) + 2 * meta[M_PAIRS_HINT])
    return h, trace_rows, pair_rows


@pair_njit
def _frame(plans, FA, IA, FB, IB, R, t, K, par, fr, mg, ring, meta, blk, call, side, n_in, da, db, mscale, kq):
    """The frame after the pose checks (module docstring), on the scratch block ``blk`` (R, t
    already in it; ``kq``: the k-DOP tables' slots before the sequence). Returns DONE_OK,
    GROW (the front's slots) or MORE (the block). Called, not inlined, by both entries (their
    k-DOP bundles have one type): compiled once (inlined, each entry's copy cost ~8 s of the
    cold compile), and one call per frame costs nothing measurable."""
    out = 1 - side
    A, B = trees(FA, IA, FB, IB)
    nA = A.ni.shape[0]
    # this call's ring row
    s = call % RING
    for k in range(9):
        ring[s, RG_R + k] = R[k // 3, k % 3]
    for k in range(3):
        ring[s, RG_T + k] = t[k]
    if call > 0:
        p = (call - 1) % RING
        ring[s, RG_DA] = ring[p, RG_DA] + da
        ring[s, RG_DB] = ring[p, RG_DB] + db
    else:
        ring[s, RG_DA] = 0.0
        ring[s, RG_DB] = 0.0
    nr = _norm2_bound(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2])
    ring[s, RG_NR] = nr
    ring[s, RG_STAMP] = -1.0
    scale = (_root_scale(A.nf) + nr * _root_scale(B.nf)
             + np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]))
    slack = CERT_REL * scale
    # 0. an incoherent frame (JUMP_REL): a traversal from the root
    jump = False
    if call > 0 and mscale >= 0.0:
        p = (call - 1) % RING
        _motion_terms(ring, p, s, call)
        ra = _ball(A.nf, 0)[3]
        cx, cy, cz, rb = _ball(B.nf, 0)  # (B's root ball now: its deformation is in the terms)
        jump = _motion(ring, p, cx, cy, cz, rb) > JUMP_REL * max(ra, rb)
    meta[M_JUMP] = jump
    plain = jump and meta[M_PREV_JUMP] != 0  # (after a coherent call: traced, the front rebuilt)
    # 1. a front whose every row is kept stays as it is
    first_seed = 0
    if not jump:
        first_seed = all_kept(fr[side], mg[side], n_in, mscale, ring, s, call, slack)
        if first_seed == n_in:
            meta[M_SAME] = 1
            meta[M_NOUT] = n_in
            meta[M_SKIPPED] = n_in
            meta[M_OPAIRS] = B_FIXED
            meta[M_PREV_JUMP] = 0
            return DONE_OK
    # the block's layout (the caller makes a larger one when it is too small)
    nq_max = 1 if jump else n_in
    h, trace_rows, pair_rows = _sizes(meta, IA, IB, nq_max)
    if plain:
        trace_rows = 1
    o_seq, o_stack, o_trace, o_pairs, n = _block(nq_max, trace_rows, pair_rows, h, kq)
    if n > blk.shape[0]:
        meta[M_NEED] = n
        return MORE
    box = c_view(blk, B_WF + WF_BOX, (np.int64(3), np.int64(3), np.int64(3)), np.float64)
    sq = c_view(blk, o_seq, (nq_max, np.int64(SQ_COLS)), np.int32)
    state = meta[M_STATE:M_STATE + 3]
    state[ST_PAIRS] = 0
    state[ST_TRACE] = 0
    buf = Buffers(c_view(blk, o_pairs, (pair_rows, np.int64(2)), np.int32),
                  c_view(blk, o_trace, (trace_rows, np.int64(TRACE_COLS)), np.int32),
                  c_view(blk, o_stack, (nq_max + h, np.int64(2)), np.int32), blk[:N_STATS], state, box)
    meta[M_OPAIRS] = o_pairs
    if plain:  # without the trace; the new front is the root pair (no certificate)
        buf.stack[0, 0] = 0
        buf.stack[0, 1] = 0
        state[ST_SP] = 1
        if traverse(plans[1], R, t, A, B, K, buf) != 0:
            return _more(meta, trace_rows, pair_rows, nq_max, h, kq)
        fo = fr[out]
        for col in range(SQ_SEED):
            fo[0, col] = 0
        fo[0, ST_REF] = -1
        mg[out, 0, MG_M] = NO_MARGIN
        meta[M_NOUT] = 1
        meta[M_FROM_ROOT] = 1
        meta[M_PREV_JUMP] = 1
        return _finish(buf, meta)
    plan = plans[0]
    # 2. certificates and pull-ups
    if jump:  # the root pair, a fresh seed
        for col in range(SQ_COLS):
            sq[0, col] = 0
        sq[0, ST_REF] = -1
        sq[0, SQ_SEED] = 1
        sq[0, SQ_SRC] = -1
        nq, skipped, merges = 1, 0, 0
    else:
        nq, skipped, merges = seed_pass(fr[side], mg[side], n_in, sq, par, nA, mscale, ring, s, call, slack,
                                        first_seed)
    meta[M_SKIPPED] = skipped
    meta[M_MERGED] = merges
    ns = nq - skipped
    meta[M_SEEDS] = ns
    meta[M_FROM_ROOT] = nq == 1 and ns == 1 and sq[0, FR_A] == 0 and sq[0, FR_B] == 0
    # 3. the seeded traversal (the first seed on top: popped first)
    stack = buf.stack
    top = ns
    for q in range(nq):
        if sq[q, SQ_SEED]:
            top -= 1
            stack[top, 0] = sq[q, FR_A]
            stack[top, 1] = sq[q, FR_B]
    state[ST_SP] = ns
    if ns > 0 and traverse(plan, R, t, A, B, K, buf) != 0:
        return _more(meta, trace_rows, pair_rows, nq_max, h, kq)
    # 4. the new front
    w = emit_front(plan, R, t, A.nf, B.nf, sq, mg[side], fr[out], mg[out], buf.trace, state[ST_TRACE], nq, call, mscale,
                   slack, box[0], ring)
    if w < 0:
        return GROW
    meta[M_NOUT] = w
    meta[M_PREV_JUMP] = jump
    return _finish(buf, meta)


@njit(cache=True, inline='always')
def _more(meta, trace_rows, pair_rows, nq, h, kq):
    """The traversal's buffers are full: hints for 4 times the rows (either may be full), and
    the block's length they need (MORE)."""
    meta[M_TRACE_HINT] = 2 * trace_rows
    meta[M_PAIRS_HINT] = 2 * pair_rows
    tr = max(4 * nq + 16, 4 * trace_rows)
    pr = 4 * pair_rows
    meta[M_NEED] = _block(nq, tr, pr, h, kq)[4]
    return MORE


@njit(cache=True, inline='always')
def _start(pose_a, pose_b, meta, blk):
    """Counters zeroed, the outputs reset, the poses checked; returns the status (also at
    ``blk[N_STATS]``)."""
    for k in range(N_STATS + 1):
        blk[k] = 0
    meta[M_SAME] = 0
    meta[M_NOUT] = 0
    meta[M_NPAIRS] = 0
    meta[M_SKIPPED] = 0
    meta[M_SEEDS] = 0
    meta[M_MERGED] = 0
    meta[M_FROM_ROOT] = 0
    meta[M_OPAIRS] = B_FIXED
    meta[M_STATE + ST_PAIRS] = 0
    meta[M_STATE + ST_TRACE] = 0
    st = pose_status(pose_a, pose_b)
    blk[N_STATS] = st
    return st


@njit(cache=True, inline='always')
def _done(meta, code, c0):
    """The hints updated after a frame (halved, at least this frame's counts) and the cycles."""
    if code == DONE_OK:
        meta[M_TRACE_HINT] = max(meta[M_TRACE_HINT] // 2, meta[M_STATE + ST_TRACE])
        meta[M_PAIRS_HINT] = max(meta[M_PAIRS_HINT] // 2, meta[M_NPAIRS])
    meta[M_CYC] = read_cycles() - c0
    return code


@pair_njit(nogil=True)
def front_entry(FA, IA, FB, IB, pose_a, pose_b, plans, par, fr, mg, ring, meta, blk, call, side, n_front, da, db,
                mscale):
    """One frame of the front cache (module docstring) on non-k-DOP trees: all contacts of the
    query. ``plans`` (2, PLAN_LEN): the query's plan with the trace on and all contacts, then
    the same without the trace (``_core.make_plan``). The state is the caller's
    (``cdcore.front.FrontCache``): ``par`` the parents of A's nodes then B's, ``fr``/``mg``
    the front's slots (``side``: the input's, ``n_front`` rows), ``ring`` (RING, RING_COLS),
    ``meta`` (META_LEN,) int64 (M_*), ``blk`` the scratch block (int64: the counters and the
    status first, ``_core``'s layout; the pairs from meta[M_OPAIRS]); ``call`` this call's
    index (0, 1, ..; incremented by the caller after each DONE_OK); ``da``, ``db``: the
    largest vertex moves of A's and B's meshes since the previous call (refits); ``mscale``:
    the motion bound's factor (``seed_pass``). Returns DONE_OK, GROW (the front's slots are too
    small: grow them and repeat), MORE (a block of meta[M_NEED] slots, and repeat) or BAD_POSE.
    Compiled without reference counting (``_pairjit``): it allocates nothing."""
    c0 = read_cycles()
    if blk.shape[0] < B_FIXED:
        meta[M_NEED] = B_FIXED
        return MORE
    if _start(pose_a, pose_b, meta, blk):
        return BAD_POSE
    R = c_view(blk, B_WF + WF_R, (np.int64(3), np.int64(3)), np.float64)
    t = c_view(blk, B_WF + WF_T, (np.int64(3),), np.float64)
    _relative_transform(pose_a, pose_b, R, t)
    # arrays of the k-DOP bundle's types, never read (``_core._unread_kdop``)
    f2 = mg[0]
    K = KdopQuery(f2, f2, f2, f2, fr[0], f2, c_view(meta, 0, (np.int64(1), np.int64(META_LEN)), np.int64))
    code = _frame(plans, FA, IA, FB, IB, R, t, K, par, fr, mg, ring, meta, blk, call, side, n_front, da, db, mscale,
                  np.int64(0))
    return _done(meta, code, c0)


@pair_njit(nogil=True)
def front_kdop_entry(FA, IA, FB, IB, pose_a, pose_b, plans, par, fr, mg, ring, meta, blk, call, side, n_front,
                     da, db, mscale, KT):
    """``front_entry`` for k-DOP trees (``KT``: ``KdopTables``; B realigned for this query: the
    tables in the block, after the fixed slots)."""
    c0 = read_cycles()
    k2 = np.int64(KT.dirs.shape[0])
    qf_cols = np.int64(QF_TROW + KT.T.shape[0])
    kq = k2 * (qf_cols + QI_COLS)
    if blk.shape[0] < B_FIXED + kq:
        meta[M_NEED] = B_FIXED + kq
        return MORE
    if _start(pose_a, pose_b, meta, blk):
        return BAD_POSE
    R = c_view(blk, B_WF + WF_R, (np.int64(3), np.int64(3)), np.float64)
    t = c_view(blk, B_WF + WF_T, (np.int64(3),), np.float64)
    _relative_transform(pose_a, pose_b, R, t)
    qf = c_view(blk, B_FIXED, (k2, qf_cols), np.float64)
    qi = c_view(blk, B_FIXED + k2 * qf_cols, (k2, np.int64(QI_COLS)), np.int64)
    qf[:] = 0.0
    qi[:] = 0
    prepare_query(plans[0, P_METHOD], KT.dirs, R, t, KT.scale_b, KT.fvert, KT.fstart, KT.fslab, KT.fsign, KT.finv,
                  KT.T, KT.TN, KT.inv_delta, qf, qi)
    K = KdopQuery(KT.dirs, KT.slabA, KT.slabB, KT.tabB, KT.outB, qf, qi)
    code = _frame(plans, FA, IA, FB, IB, R, t, K, par, fr, mg, ring, meta, blk, call, side, n_front, da, db, mscale,
                  kq)
    return _done(meta, code, c0)


@njit(cache=True, nogil=True)
def max_displacement(old, new):
    """The largest vertex move between two (n, 3) vertex arrays (a refit's D)."""
    # two independent maxima (even and odd rows): the loop is not one chain of dependent maxima
    b0 = 0.0
    b1 = 0.0
    n = old.shape[0]
    for i in range(0, n - 1, 2):
        dx = new[i, 0] - old[i, 0]
        dy = new[i, 1] - old[i, 1]
        dz = new[i, 2] - old[i, 2]
        b0 = max(b0, dx * dx + dy * dy + dz * dz)
        ex = new[i + 1, 0] - old[i + 1, 0]
        ey = new[i + 1, 1] - old[i + 1, 1]
        ez = new[i + 1, 2] - old[i + 1, 2]
        b1 = max(b1, ex * ex + ey * ey + ez * ez)
    if n % 2:
        dx = new[n - 1, 0] - old[n - 1, 0]
        dy = new[n - 1, 1] - old[n - 1, 1]
        dz = new[n - 1, 2] - old[n - 1, 2]
        b0 = max(b0, dx * dx + dy * dy + dz * dz)
    best = max(b0, b1)
    # the square root of a sum of three squares: relative error a few ulps, widened by 1e-12
    return np.sqrt(best) * (1.0 + 1e-12)


__all__ = ["front_entry", "front_kdop_entry", "parents", "all_kept", "seed_pass", "max_displacement", "WAIT_MAX",
           "FRONT_COLS", "RING", "CERT_REL"]
