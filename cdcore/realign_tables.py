"""The three realignment tables of Fünzig & Fellner section 3.1 side by side, on plain
point sets (numpy + the tables' own Python reference evaluations; no kernels).

* ``paper_cosine`` -- the paper taken literally: rings equally spaced in cosine
  (``a_j = 1 - j (1 - a)/(n - 1)``), eq. 5-7 with eq. 7's range h = 1 .. (n - 2) - m
  (``RingTable.paper_factor``). NOT conservative (see ``bv.kdop.RingTable``).
* ``table_angle`` -- the paper's formulas on rings equally spaced in angle, eq. 7 up to
  ring n - 1 (``bv.kdop_angle.AngleRingTable.factor``): what the traversal's
  ``realign="table_angle"`` computes.
* ``table`` -- the derived exact entries on cosine rings (``RingTable.T``/``TN``): the
  traversal's ``realign="table"``.

``conservativeness_study`` draws random ellipsoid patches (the shape of a BVH node over a
smooth surface), fits each table's per-direction data around the patch's vertex mean c
(hrel, rho = max l_p, occupancy bits) exactly as the hierarchy build does, turns the patch
by a random rotation, and compares every bound ``f hrel`` (|D'| = 1, no pads) with the
true support ``max_q D'.q``: the share of bounds that fail, the worst escape (in units of
hrel) and the mean looseness (bound / true support where it is positive).
"""
from __future__ import annotations

import numpy as np

from .bv.kdop import KDOP_DIRS, ring_table, signed_dirs
from .bv.kdop_angle import angle_ring_table
from .transforms import random_rotations

TABLES = ("paper_cosine", "table_angle", "table")
TABLE_LABELS = {"paper_cosine": "paper as printed (cosine rings)", "table_angle": "table (angle rings)",
                "table": "table (derived)"}


def ellipsoid_patch(rng, n: int = 60) -> np.ndarray:
    """Points on a random patch of a random ellipsoid (semi-axes 0.2-1, a cap of random
    angular radius around a random pole, then a random rotation)."""
    axes = rng.uniform(0.2, 1.0, 3)
    pole = rng.normal(size=3)
    pole /= np.linalg.norm(pole)
    cap = rng.uniform(0.3, np.pi)
    u = rng.normal(size=(8 * n, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    u = u[u @ pole >= np.cos(cap)][:n]
    if len(u) < 4:
        u = np.vstack([u, pole[None] * np.ones((4, 1))])
    return (u * axes) @ random_rotations(1, rng)[0].T


def node_data(q: np.ndarray, sd: np.ndarray, a: float):
    """Per half-space direction: hrel, rho (max l_p over the remaining region) and the
    cosines of the offsets q (relative to the centre) -- the build's second pass."""
    L = np.linalg.norm(q, axis=1)
    q, L = q[L > 0], L[L > 0]
    proj = q @ sd.T  # (p, k)
    cos = proj / L[:, None]
    hrel = proj.max(axis=0)
    sin = np.sqrt(np.clip(1.0 - cos ** 2, 0.0, None))
    lp = np.maximum(L[:, None] * (a * cos + np.sqrt(1.0 - a * a) * sin), 0.0)
    rem = cos < a
    rho = np.where(rem, lp, 0.0).max(axis=0)
    return q, hrel, rho, cos, rem


def _bits(rings, rem, n):
    """Occupancy words (k,) from ring numbers (p, k) and the remaining-region mask."""
    words = np.zeros(rings.shape[1], dtype=np.int64)
    for h in range(rings.shape[1]):
        r = rings[~rem[:, h], h]
        w = 0
        for j in np.unique(r):
            w |= 1 << (int(j) - 1)
        if rem[:, h].any():
            w |= 1 << (n - 1)
        words[h] = w
    return words


def table_bounds(q, bv: str, R):
    """(k,) true support max_q D'.q, {table: (k,) bounds} and (k,) the hrel of the
    remapped direction, for the k rotated half-space directions D' = R^T E_h (|D'| = 1)."""
    sd = signed_dirs(KDOP_DIRS[bv])
    rt, at = ring_table(bv), angle_ring_table(bv)
    q, hrel, rho, cos, rem = node_data(q, sd, rt.a)
    n = rt.n
    occ_c = _bits(np.clip(rt.ring_of(cos), 1, n - 1), rem, n)
    occ_a = _bits(np.clip(at.ring_of(cos), 1, n - 1), rem, n)
    outer = np.array([int(w & ((1 << (n - 1)) - 1)).bit_length() for w in occ_c])
    Dp = sd @ R  # rows: D'_h = R^T E_h
    true = (q @ Dp.T).max(axis=0)
    out = {t: np.empty(len(sd)) for t in TABLES}
    hsig = np.empty(len(sd))
    for i, d in enumerate(Dp):
        cs = sd @ d
        h = int(np.argmax(cs))  # remapping sigma (eq. 9)
        hsig[i] = hrel[h]
        mc = int(np.clip(rt.ring_of(cs[h]), 1, n - 1))
        ma = int(np.clip(at.ring_of(cs[h]), 1, n - 1))
        r = hrel[h] / rho[h] if rho[h] > 0 else np.inf
        out["paper_cosine"][i] = rt.paper_factor(mc, int(occ_c[h]), r) * hrel[h]
        out["table_angle"][i] = at.factor(ma, int(occ_a[h]), hrel[h], rho[h])
        out["table"][i] = max(rt.T[mc, outer[h]] * hrel[h], rt.TN[mc] * rho[h])
    return true, out, hsig


def conservativeness_study(bv: str, samples: int = 200, seed: int = 0) -> dict:
    """Per table: ``fail_share`` (bounds below the true support, beyond 1e-12 of the patch
    size), ``max_escape`` (worst (true - bound) / hrel), ``mean_ratio`` (mean bound / true
    over positive supports) and ``n_bounds``."""
    rng = np.random.default_rng(seed)
    fails = {t: 0 for t in TABLES}
    esc = {t: 0.0 for t in TABLES}
    ratios = {t: [] for t in TABLES}
    total = 0
    for R in random_rotations(samples, rng):
        p = ellipsoid_patch(rng)
        q = p - p.mean(axis=0)
        true, bounds, hrel = table_bounds(q, bv, R)
        tol = 1e-12 * np.abs(q).max()
        total += len(true)
        pos = true > 0
        for t in TABLES:
            bad = bounds[t] < true - tol
            fails[t] += int(bad.sum())
            esc[t] = max(esc[t], float(((true - bounds[t]) / hrel).max()))
            ratios[t].extend((bounds[t][pos] / true[pos]).tolist())
    return {t: {"fail_share": fails[t] / total, "max_escape": max(esc[t], 0.0),
                "mean_ratio": float(np.mean(ratios[t])), "n_bounds": total} for t in TABLES}


__all__ = ["TABLES", "TABLE_LABELS", "ellipsoid_patch", "table_bounds", "conservativeness_study"]
