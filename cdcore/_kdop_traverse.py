"""Realignment of B's k-DOPs into A's directions: the k-DOP branch of the traversal core
(``_core.traverse``'s ``TEST_SLAB`` branch, ``bv.dispatch.kdop_separation``) and of the distance bounds.

Everything happens in A's model frame (Fünzig & Fellner section 2: the k-DOP of node b of
B under M = (R, t) is realigned to A's directions, then the overlap test is the k/2
slab-interval comparisons of section 4). Per query, ``prepare_query`` turns R into the
tables of the chosen realignment; per node pair, ``realigned_interval`` gives, for each of
A's slab directions E_i, an interval [lo', hi'] that contains E_i . (R p + t) for every
vertex p under b -- conservatively, in floating point (see ``QUERY_PAD_REL``). A's slabs are
tested in order 0 .. k/2-1 and the first one whose intervals are disjoint is the
"separating axis" of traces and histograms (ids 0 .. k/2-1, ``bv.kdop.KDOP_AXIS_NAMES``).

Realignments (``method``):

``REALIGN_MAJOR`` (0)  SAT-lite-like (van den Bergen 1998, section 3; Fünzig section 2,
    Fig. 3): only B's x, y, z slabs (its AABB): E.(Rp + t) = sum_j (R^T E)_j x_j + E.t,
    each term bounded by the slab's lo or hi by the sign of its coefficient. Exact for the
    AABB, conservative for the k-DOP.
``REALIGN_ALL`` (1)  Zachmann's approximation (1998; Fünzig section 2, eq. 3): the unit
    DOP's vertex extremal in D' = R^T E names a triple of B's half-space directions with
    D' = sum lambda_h D_h, lambda >= 0, and E.(Rp + t) <= sum lambda_h d_h + E.t for every
    k-DOP (weak LP duality). Found once per query for every E (the "k inversions" are
    precomputed once per k in B's frame, where the directions are fixed, ``FacetTable``);
    per realignment: 3 multiply-adds per bound. A coefficient that rounding made slightly
    negative takes the opposite slab bound, so every triple gives a valid bound.
``REALIGN_TABLE`` (2)  the paper's method (section 3-4): remap D' to the nearest of B's
    k directions, sigma (eq. 9), find its ring m; per node pair
    hi' = E.(R c + t) + |D'| max(T[m, outer] hrel, TN[m] rho) (eq. 5-8, the "correct" term
    of section 4 is E.(R c + t)), with the conservative 2-D table of ``RingTable``.
``REALIGN_TABLE_ANGLE`` (3)  the paper's own entries (eq. 5-7) on rings equally spaced in
    angle (``bv.kdop_angle``): the same remapping; m from the angle of D'; per node pair
    the highest occupied ring <= m and the outermost one (two lookups) and eq. 5's term.

At leaf pairs, every moved triangle of B is first tested with its own exact k-DOP in A's
directions against A's leaf k-DOP (``_leaf_pair``) before the exact triangle tests.
"""
from __future__ import annotations

from typing import Literal, overload

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ._kdop import ensure_table
from ._layout import N_AXES
from .bv.kdop import facet_table, ring_table
from .bv.kdop_angle import angle_ring_bound, angle_ring_table

REALIGN_MAJOR = 0
REALIGN_ALL = 1
REALIGN_TABLE = 2
REALIGN_TABLE_ANGLE = 3
REALIGN_METHODS = {"table": REALIGN_TABLE, "all": REALIGN_ALL, "major": REALIGN_MAJOR,
                   "table_angle": REALIGN_TABLE_ANGLE}
DEFAULT_REALIGN = "table"


# Realigned intervals are widened by QUERY_PAD_REL * (max |t_i| + scale_B) on both sides.
# Sources of rounding it absorbs: (1) the leaf test sees B's vertices transformed in
# floating point, a few ulps (~1e-15 relative) of |R p| + |t| away from the exact R p + t;
# (2) the realignment arithmetic (R^T E, E.t, the triple's lambda, E.(R c + t), the table
# factor times hrel/rho: a few ulps each, with magnitudes bounded by a few times
# scale_B + |t| since |lambda| <= 2 and the table factors are <= 1/a <= 1.8). 1e-12 is
# >100x the sum of those, and 1e-12 of the scene is far below any meaningful gap. The
# slabs themselves carry the build pad for their own projection rounding.
QUERY_PAD_REL = 1e-12


# exit-axis histogram length: A's slab ids 0 .. k/2-1 (k/2 <= 13) fit the 16 slots of the
# other types (``_layout.N_AXES``), so ``CollisionStats.axis_hist`` keeps one shape
N_HIST = max(N_AXES, 13)


# Per-query tables, one row per A slab direction i (``prepare_query``):
#   qf (k/2, QF_TROW + n) float64: G_i = R^T E_i (3), E_i.t + qpad, E_i.t - qpad,
#       coef (3, major/all), |D'| TN[m], the query pad and |D'| T[m, :] (n, table);
#   qi (k/2, 8) int64: the slab columns of B's slab row for hi' and lo' (3 + 3, major/all)
#       and the remapped directions sigma(E_i), sigma(-E_i) (table).
QF_G = 0
QF_ETHI = 3
QF_ETLO = 4
QF_COEF = 5
QF_TN = 8
QF_PAD = 9  # the query pad itself (row 0 only)
QF_TROW = 10
QI_HI = 0
QI_LO = 3
QI_SIGHI = 6
QI_SIGLO = 7
QI_COLS = 8


@njit(cache=True)
def prepare_query(method, dirs, R, t, scale_b, fvert, fstart, fslab, fsign, finv, T, TN, inv_delta, qf, qi):
    """Per-query realignment tables for the rotation R (B's frame to A's) and translation t
    into ``qf``/``qi`` (layout above). ``G_i = R^T E_i`` is A's direction i in B's frame (D'_i),
    not normalised: R is only orthonormal to 1e-6, and every bound below is linear in D'.
    """
    k2 = dirs.shape[0]
    n = T.shape[0]
    k = 2 * k2
    tmax = max(abs(t[0]), max(abs(t[1]), abs(t[2])))
    qpad = QUERY_PAD_REL * (tmax + scale_b)
    for i in range(k2):
        e0 = dirs[i, 0]
        e1 = dirs[i, 1]
        e2 = dirs[i, 2]
        gx = e0 * R[0, 0] + e1 * R[1, 0] + e2 * R[2, 0]
        gy = e0 * R[0, 1] + e1 * R[1, 1] + e2 * R[2, 1]
        gz = e0 * R[0, 2] + e1 * R[1, 2] + e2 * R[2, 2]
        qf[i, QF_G] = gx
        qf[i, QF_G + 1] = gy
        qf[i, QF_G + 2] = gz
        et = e0 * t[0] + e1 * t[1] + e2 * t[2]
        qf[i, QF_ETHI] = et + qpad
        qf[i, QF_ETLO] = et - qpad
        qf[i, QF_PAD] = qpad
        if method == REALIGN_MAJOR:
            # B's x, y, z slabs: E.(R p) = gx x + gy y + gz z
            for c in range(3):
                g = qf[i, QF_G + c]
                qf[i, QF_COEF + c] = g
                qi[i, QI_HI + c] = k2 + c if g >= 0.0 else c
                qi[i, QI_LO + c] = c if g >= 0.0 else k2 + c
        elif method == REALIGN_ALL:
            # the unit DOP's vertex extremal in direction D' names a facet ...
            best = -np.inf
            fbest = 0
            for f in range(fvert.shape[0]):
                d = gx * fvert[f, 0] + gy * fvert[f, 1] + gz * fvert[f, 2]
                if d > best:
                    best = d
                    fbest = f
            # ... and the facet's triangle whose cone holds D' (largest smallest coefficient)
            tbest = fstart[fbest]
            mbest = -np.inf
            for tt in range(fstart[fbest], fstart[fbest + 1]):
                mn = np.inf
                for r in range(3):
                    mn = min(mn, finv[tt, r, 0] * gx + finv[tt, r, 1] * gy + finv[tt, r, 2] * gz)
                if mn > mbest:
                    mbest = mn
                    tbest = tt
            for r in range(3):
                lam = finv[tbest, r, 0] * gx + finv[tbest, r, 1] * gy + finv[tbest, r, 2] * gz
                mu = fsign[tbest, r] * lam  # coefficient of slab j (direction +D_j)
                j = fslab[tbest, r]
                qf[i, QF_COEF + r] = mu
                # a coefficient that rounding made negative takes the opposite slab bound
                qi[i, QI_HI + r] = k2 + j if mu >= 0.0 else j
                qi[i, QI_LO + r] = j if mu >= 0.0 else k2 + j
        else:
            nu = math.sqrt(gx * gx + gy * gy + gz * gz)
            # remapping sigma (eq. 9): the nearest of B's k half-space directions
            best = -np.inf
            h = 0
            for j in range(k2):
                d = (gx * dirs[j, 0] + gy * dirs[j, 1] + gz * dirs[j, 2]) / nu
                if d > best:
                    best = d
                    h = j
                if -d > best:
                    best = -d
                    h = k2 + j
            qi[i, QI_SIGHI] = h
            qi[i, QI_SIGLO] = (h + k2) % k
            if method == REALIGN_TABLE_ANGLE:  # rings equally spaced in angle (inv_delta: 1/dtheta)
                m = int(math.ceil(math.acos(min(best, 1.0)) * inv_delta))
            else:
                m = int(math.ceil((1.0 - best) * inv_delta))
            if m < 1:
                m = 1
            if m > n - 1:
                m = n - 1  # best < a only by rounding: covered by the table's angular slack
            if method == REALIGN_TABLE_ANGLE:
                qi[i, QI_HI] = m
                qf[i, QF_COEF] = nu * TN[n]  # eq. 5's initial factor a (TN[n] holds it)
            qf[i, QF_TN] = nu * TN[m]
            for j in range(n):
                qf[i, QF_TROW + j] = nu * T[m, j]


@njit(cache=True, inline='always')
def realigned_interval(method, i, b, slabB, tabB, outB, qf, qi):
    """(lo', hi') of B's node b along A's direction i, already widened by the query pad.
    ``tabB`` rows: [centre (3), hrel (k), rho (k), angle-ring occupancy (k)]."""
    if method == REALIGN_TABLE_ANGLE:
        k = outB.shape[1]
        cc = qf[i, QF_G] * tabB[b, 0] + qf[i, QF_G + 1] * tabB[b, 1] + qf[i, QF_G + 2] * tabB[b, 2]
        m = qi[i, QI_HI]
        up = angle_ring_bound(qf, i, m, tabB, b, k, qi[i, QI_SIGHI], QF_TROW, QF_TN, QF_COEF)
        dn = angle_ring_bound(qf, i, m, tabB, b, k, qi[i, QI_SIGLO], QF_TROW, QF_TN, QF_COEF)
        return cc + qf[i, QF_ETLO] - dn, cc + qf[i, QF_ETHI] + up
    if method == REALIGN_TABLE:
        k = outB.shape[1]
        # the "correct" term of section 4: E.(R c + t)
        cc = qf[i, QF_G] * tabB[b, 0] + qf[i, QF_G + 1] * tabB[b, 1] + qf[i, QF_G + 2] * tabB[b, 2]
        tn = qf[i, QF_TN]
        h = qi[i, QI_SIGHI]
        up = max(qf[i, QF_TROW + outB[b, h]] * tabB[b, 3 + h], tn * tabB[b, 3 + k + h])
        h = qi[i, QI_SIGLO]
        dn = max(qf[i, QF_TROW + outB[b, h]] * tabB[b, 3 + h], tn * tabB[b, 3 + k + h])
        return cc + qf[i, QF_ETLO] - dn, cc + qf[i, QF_ETHI] + up
    c0 = qf[i, QF_COEF]
    c1 = qf[i, QF_COEF + 1]
    c2 = qf[i, QF_COEF + 2]
    hi = qf[i, QF_ETHI] + c0 * slabB[b, qi[i, 0]] + c1 * slabB[b, qi[i, 1]] + c2 * slabB[b, qi[i, 2]]
    lo = qf[i, QF_ETLO] + c0 * slabB[b, qi[i, 3]] + c1 * slabB[b, qi[i, 4]] + c2 * slabB[b, qi[i, 5]]
    return lo, hi


@njit(cache=True)
def realign_node(method, b, slabB, tabB, outB, qf, qi, out):
    """All k/2 realigned intervals of node b into ``out`` (k,) as [lo..., hi...] (for the
    numpy-facing helpers in ``cdcore.realign``: the traversal's own arithmetic)."""
    k2 = qf.shape[0]
    for i in range(k2):
        lo, hi = realigned_interval(method, i, b, slabB, tabB, outB, qf, qi)
        out[i] = lo
        out[k2 + i] = hi


# ---- python drivers (called by cdcore.collide) -------------------------------------------
@overload
def check_realign(realign, is_kdop: Literal[True]) -> str: ...
@overload
def check_realign(realign, is_kdop: bool) -> str | None: ...
def check_realign(realign, is_kdop: bool) -> str | None:
    """Validate ``realign`` for a hierarchy pair: a method name (default "table") for k-DOP
    trees, ``None`` for every other type. Returns the method name or None."""
    if not is_kdop:
        if realign is not None:
            raise ValueError(f"realign: only k-DOP hierarchies are realigned; got realign={realign!r} "
                             f"for a non-k-DOP bounding-volume type (leave it None)")
        return None
    if realign is None:
        return DEFAULT_REALIGN
    if not isinstance(realign, str) or realign not in REALIGN_METHODS:
        raise ValueError(f"realign: expected one of {tuple(REALIGN_METHODS)}, got {realign!r}")
    return realign


def _kdata(bvh, name):
    kd = getattr(bvh, "kdop", None)
    if kd is None:
        raise ValueError(f"{name}: this {bvh.bv} hierarchy carries no k-DOP node data (build it with build_bvh)")
    return kd


def _tables(kd, method=REALIGN_TABLE):
    """The per-k constant tables (dirs, facet arrays, T, TN, inv_delta), kept on the node
    data (computed once per hierarchy, never changed). ``REALIGN_TABLE_ANGLE`` takes the
    angle-ring table (T, TN, 1/dtheta) in the T, TN, inv_delta places."""
    if method == REALIGN_TABLE_ANGLE:
        tabs = getattr(kd, "_query_tables_angle", None)
        if tabs is None:
            ft, at = facet_table(kd.bv), angle_ring_table(kd.bv)
            tabs = kd._query_tables_angle = (kd.dirs, ft.vert, ft.start, ft.slab, ft.sign, ft.inv, at.T, at.TN,
                                             at.inv_dtheta)
        return tabs
    tabs = getattr(kd, "_query_tables", None)
    if tabs is None:
        ft, rt = facet_table(kd.bv), ring_table(kd.bv)
        tabs = kd._query_tables = (kd.dirs, ft.vert, ft.start, ft.slab, ft.sign, ft.inv, rt.T, rt.TN,
                                   rt.inv_delta)
    return tabs


def _plan(bvh_b, realign):
    """(method, B's KdopData, the per-k tables (dirs, facet arrays, T, TN, inv_delta))."""
    kd = _kdata(bvh_b, "bvh_b")
    method = REALIGN_METHODS[realign]
    if method in (REALIGN_TABLE, REALIGN_TABLE_ANGLE) and not kd.table_valid:
        ensure_table(bvh_b)
    return method, kd, _tables(kd, method)


#: the k-DOP data of a query between two k-DOP hierarchies, as the kernels take it (one
#: argument): A's slabs, B's slabs, table rows and outer rings, B's padding scale, then the
#: per-k tables (``_tables``). ``_core._kdop_query`` turns it into a ``KdopQuery`` per pose.
KdopTables = namedtuple("KdopTables", ("slabA", "slabB", "tabB", "outB", "scale_b", "dirs", "fvert", "fstart",
                                       "fslab", "fsign", "finv", "T", "TN", "inv_delta"))


def kdop_query_arrays(bvh_a, bvh_b, method: int):
    """The ``KdopTables`` of a query (``_core.collide_kdop_entry``, ``batch_entry``, distance)."""
    kd_a = _kdata(bvh_a, "bvh_a")
    kd_b = _kdata(bvh_b, "bvh_b")
    if method in (REALIGN_TABLE, REALIGN_TABLE_ANGLE) and not kd_b.table_valid:
        ensure_table(bvh_b)
    return KdopTables(kd_a.slabs, kd_b.slabs, kd_b.tab, kd_b.outer, float(kd_b.scale), *_tables(kd_b, method))


# placeholders of the same types for queries on other bounding volumes (never written)
_NO_KDOP = KdopTables(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 3)), np.zeros((1, 2), dtype=np.int32), 0.0,
                      np.zeros((1, 3)), np.zeros((1, 3)), np.zeros(2, dtype=np.int64),
                      np.zeros((1, 3), dtype=np.int64), np.zeros((1, 3)), np.zeros((1, 3, 3)), np.zeros((2, 2)),
                      np.zeros(2), 1.0)


def no_kdop_arrays():
    return _NO_KDOP


def new_query_tables(k2: int, n_rings: int):
    return np.zeros((k2, QF_TROW + n_rings)), np.zeros((k2, QI_COLS), dtype=np.int64)


def prepare(bvh_b, realign, R, t):
    """(method, qf, qi): the per-query tables of ``prepare_query`` for B (numpy-facing)."""
    method, kd, tabs = _plan(bvh_b, realign)
    qf, qi = new_query_tables(len(kd.dirs), tabs[6].shape[0])
    prepare_query(method, tabs[0], np.ascontiguousarray(R, dtype=np.float64),
                  np.ascontiguousarray(t, dtype=np.float64), kd.scale, *tabs[1:], qf, qi)  # pyright: ignore[reportCallIssue]
    return method, qf, qi
