"""The paper-faithful realignment table of Fünzig & Fellner (section 3.1, eq. 5-8), with
cone rings equally spaced in *angle*.

The paper defines the rings by cosines equally spaced, ``a_j = 1 - j (1 - a)/(n - 1)``,
and bounds a point of ring ``m -+ h`` seen from a direction D' of ring m by
``a_{h-1}/a_{m-+h}`` (eq. 6-7): the numerator is meant as "an upper bound on the cosine
between the direction of the point and D'" -- the cosine of the h - 1 whole rings that
separate them. That reading holds only if every ring is equally wide in angle; with
equal cosine steps the outer rings are much wider in angle than the inner ones and a
point escapes (``RingTable.paper_factor``; k = 6, m = 22, ring 30: by 0.144 hrel). So the
geometric argument of the paper decides the spacing: ``theta_j = j theta_{n-1}/(n-1)``,
``a_j = cos theta_j``; then

* eq. 6/7: a point of ring j lies at an angle >= (|m - j| - 1) ring widths from D', so
  its cosine to D' is <= a_{|m-j|-1} (<= 1 when |m - j| <= 1, i.e. ``a_{-1} := a_0 = 1``),
  and its length is <= hrel / a_j: ``T[m, j] = a_{max(|m-j|-1, 0)} / a_j``. Eq. 7's range
  runs up to ring n - 1 (h = 1 .. (n - 1) - m; the paper's (n - 2) - m leaves the
  outermost inner ring unbounded);
* eq. 5: a point of the remaining region contributes ``a_{(n-2)-m} l_p`` (l_p its
  projection onto the cone's shell; the angle to D' is >= theta_{n-1} - theta_m =
  theta_{(n-1)-m}, the paper's index (n - 2) - m is one ring more generous); with no
  point there the factor starts at ``a`` ("otherwise we initialize f_i := a");
* the factor is the maximum over the set bits; since T[m, j] increases with j on either
  side of m (section 3.1's monotonicity), only two bits matter: the highest occupied
  ring <= m (eq. 6, scanning inwards) and the outermost occupied ring (eq. 7, scanning
  from outside) -- two 2-D table lookups (section 4).

Every entry is grown by ``TABLE_ANGLE_EPS`` of angle (numerator angle less, denominator
angle more) and ``TABLE_REL_PAD``, which absorbs the rounding of the ring classification
(cosines carry ~1e-16, ring boundaries sit at angles >= theta_1 >= 0.015 rad, so acos
moves by <= 1e-14 rad there) -- the same slack as the derived table.

Per-node data: the occupancy word of the angle rings, stored as a float64 (exact for 32
bits) in the last k columns of ``KdopData.tab`` (centre and hrel/rho are shared with the
derived table: the remaining region and l_p depend only on the aperture).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._layout import COUNT, START
from .kdop import APERTURE_MARGIN, N_RINGS, TABLE_ANGLE_EPS, TABLE_REL_PAD, aperture


class AngleRingTable:
    """Factor table T (n, n), TN (n + 1,) of eq. 5-7 with rings equally spaced in angle.

    ``T[m, j]`` (m: ring of D'; j = 1 .. n-1: an occupied ring) multiplies hrel;
    ``T[m, 0] = 0`` (no ring). ``TN[m]`` (m < n) multiplies rho (= max l_p) when the
    remaining region is occupied; ``TN[n] = a`` is eq. 5's initial factor otherwise.
    ``inv_dtheta`` = 1 / ring width: ring of a direction at angle theta = ceil(theta / dtheta).
    """

    def __init__(self, a: float, n: int = N_RINGS):
        self.a = a
        self.n = n
        self.theta_max = math.acos(a)
        self.dtheta = self.theta_max / (n - 1)
        self.theta = np.arange(n) * self.dtheta
        self.acos = np.cos(self.theta)
        self.inv_dtheta = 1.0 / self.dtheta
        eps = TABLE_ANGLE_EPS
        T = np.zeros((n, n))
        TN = np.zeros(n + 1)
        for m in range(1, n):
            for j in range(1, n):
                num = math.cos(max((abs(m - j) - 1) * self.dtheta - eps, 0.0))
                T[m, j] = num / math.cos(self.theta[j] + eps)
            TN[m] = math.cos(max((n - 2 - m) * self.dtheta - eps, 0.0))
        TN[n] = a
        self.T = np.ascontiguousarray(T * (1.0 + TABLE_REL_PAD))
        self.TN = np.ascontiguousarray(TN * (1.0 + TABLE_REL_PAD))

    def ring_of(self, cosine):
        """Ring number (1 .. n-1) of a direction with this cosine to D_h (n: remaining)."""
        c = np.clip(np.asarray(cosine, dtype=np.float64), -1.0, 1.0)
        j = np.clip(np.ceil(np.arccos(c) * self.inv_dtheta).astype(np.int64), 1, self.n - 1)
        return np.where(c >= self.a, j, self.n)

    def factor(self, m: int, occ: int, hrel: float, rho: float) -> float:
        """d' - D'.c for one node and direction, by the paper's bit scan written out
        (eq. 5-8, plain Python, every set bit visited): the reference of the kernel's
        two-lookup evaluation (``angle_ring_bound``), at |D'| = 1."""
        n, A = self.n, self.acos

        def acc(i):
            return A[max(i, 0)]

        f = acc((n - 2) - m) * rho if (occ >> (n - 1)) & 1 else self.a * hrel  # eq. 5
        for h in range(0, m):  # eq. 6: inner rings m - h
            if (occ >> (m - h - 1)) & 1:
                f = max(f, acc(h - 1) / acc(m - h) * hrel)
        for h in range(1, n - m):  # eq. 7: outer rings m + h, up to ring n - 1
            if (occ >> (m + h - 1)) & 1:
                f = max(f, acc(h - 1) / acc(m + h) * hrel)
        return f


_TABLES: dict = {}


def angle_ring_table(bv: str) -> AngleRingTable:
    if bv not in _TABLES:
        _TABLES[bv] = AngleRingTable(aperture(bv) - APERTURE_MARGIN)
    return _TABLES[bv]


@njit(cache=True, inline='always')
def bit_length(w):
    """Number of bits of the non-negative integer w (0 for 0): the ring of its highest set
    bit. frexp returns the binary exponent e with w = x 2^e, 0.5 <= x < 1."""
    if w <= 0:
        return 0
    return math.frexp(float(w))[1]


@njit(cache=True, inline='always')
def angle_ring_bound(qf, i, m, tabB, b, k, h, trow, tn_col, floor_col):
    """|D'| f h_rel for node b's half-space direction h (eq. 5-8 in two lookups): ``qf``
    row i holds |D'| T[m, :] from column ``trow``, |D'| TN[m] at ``tn_col`` and |D'| a at
    ``floor_col``; ``tabB`` rows are [centre (3), hrel (k), rho (k), occupancy (k)]."""
    occ = np.int64(tabB[b, 3 + 2 * k + h])
    hrel = tabB[b, 3 + h]
    outer = bit_length(occ & np.int64(0x7FFFFFFF))  # outermost occupied ring (eq. 7)
    f = qf[i, trow + outer]
    if outer > m:  # else the outermost ring is also the highest one <= m
        inner = bit_length(occ & ((np.int64(1) << m) - 1))  # highest occupied ring <= m (eq. 6)
        f = max(f, qf[i, trow + inner])
    f *= hrel
    if (occ >> 31) & 1:  # eq. 5: the remaining region is occupied
        return max(f, qf[i, tn_col] * tabB[b, 3 + k + h])
    return max(f, qf[i, floor_col] * hrel)


@njit(cache=True)
def fit_angle_occupancy(dirs, nodes_i, prim_order, verts, faces, tab, a, inv_dtheta, n_rings):
    """Section 3.1's second pass for the angle rings: per node and half-space direction h,
    bit j-1 when a vertex direction (p - c)/|p - c| lies in ring j of D_h, bit n-1 when it
    lies in the remaining region; stored as floats in ``tab[:, 3 + 2k:]``. Reads the
    centre c from ``tab[:, :3]`` (fitted by ``fit_table_node``)."""
    k2 = dirs.shape[0]
    k = 2 * k2
    occ_col = 3 + 2 * k
    top = n_rings - 1
    occ = np.zeros(k, dtype=np.int64)
    for node in range(nodes_i.shape[0]):
        cx = tab[node, 0]
        cy = tab[node, 1]
        cz = tab[node, 2]
        occ[:] = 0
        for kk in range(nodes_i[node, START], nodes_i[node, START] + nodes_i[node, COUNT]):
            f = prim_order[kk]
            for c in range(3):
                v = faces[f, c]
                qx = verts[v, 0] - cx
                qy = verts[v, 1] - cy
                qz = verts[v, 2] - cz
                L = math.sqrt(qx * qx + qy * qy + qz * qz)
                if L == 0.0:
                    continue  # at the centre: contributes 0 <= any bound
                for i in range(k2):
                    cs = (dirs[i, 0] * qx + dirs[i, 1] * qy + dirs[i, 2] * qz) / L
                    for s in range(2):
                        cos_h = cs if s == 0 else -cs
                        h = i if s == 0 else k2 + i
                        if cos_h >= a:
                            j = int(math.ceil(math.acos(min(cos_h, 1.0)) * inv_dtheta))
                            if j < 1:
                                j = 1
                            if j > top:
                                j = top
                            occ[h] |= np.int64(1) << (j - 1)
                        else:
                            occ[h] |= np.int64(1) << top
        for h in range(k):
            tab[node, occ_col + h] = float(occ[h])
