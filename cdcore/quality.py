"""Tree-quality metrics of a hierarchy, and the cost model that turns them into node tests.

For any ``BVH`` (every BV type):

* **SAH cost** (Goldsmith & Salmon 1987; MacDonald & Booth 1990): ``sum_internal C_t A(n)/A(root)
  + sum_leaves C_i |n| A(n)/A(root)`` with C_t = C_i = 1 (tinybvh's convention), A the surface
  area of the node's volume; and its **volume analogue** with V for A.
* **EPO** (end-point overlap, Aila, Karras & Laine 2013): ``sum_n C(n) A(S ∩ n minus S_n) / A(S)``,
  the surface of the mesh that lies inside a node's volume but belongs to triangles outside
  the node's subtree, weighted by the node's cost. Estimated from 4 area-weighted sample points
  per triangle (centroid and three interior points), each descended through the nodes whose
  volume contains it (children of AABB and k-DOP trees lie inside their parents, so the descent
  is exact there; oriented boxes and spheres are merged conservatively, the descent misses the
  rare sample inside a child but not its parent).
* **Sibling overlap**: ``sum_internal V(L ∩ R) / V(root)``: exact for axis-aligned boxes
  (k-DOPs: their AABB) and spheres (the lens), estimated on a 4x4x4 grid in the smaller box for
  oriented boxes.
* **Depth and leaf-size histograms**, height, node and leaf counts.

Measures of a node: spheres for ``"sphere"``, the node's box for every other type (k-DOPs: the
AABB of their x, y, z slabs, an upper bound on the polytope).

**Cost model** (van den Bergen 1998, section 5, after Gottschalk et al. 1996): a query costs
``T = N_v C_v + N_p C_p`` (node tests times the cost of one, plus triangle tests times theirs).
``fit_cost_model`` adds a fixed cost C_0 per query call. ``expected_tests`` predicts N_v and N_p
for two trees under random relative placement: a node
pair overlaps with the probability that a random placement of B (uniform rotation, uniform
translation among those where the roots overlap) makes their volumes meet, the ratio of the
mean volumes of their Minkowski sums (Hadwiger: ``V_a + V_b + (M_a S_b + M_b S_a) / 4 pi`` with
M the integral of mean curvature: pi (l1 + l2 + l3) for a box of edges l, 4 pi r for a sphere);
the descent follows the traversal's descend rule. ``fit_cost_model`` fits the costs to measured
frame times. A real motion is not a random placement (contact concentrates the work), which is
what the measured/predicted ratio on a motion shows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from . import _layout as L
from .bvh import BVH

C_T = 1.0  # cost of visiting an internal node (SAH/EPO weights)
C_I = 1.0  # cost of one primitive in a leaf


@dataclass
class TreeQuality:
    """Quality numbers of one hierarchy (see the module docstring)."""
    bv: str
    split: str
    leaf_size: int
    n_nodes: int
    n_leaves: int
    height: int
    sah_cost: float
    volume_cost: float
    epo: float
    sibling_overlap: float
    depth_hist: np.ndarray = field(repr=False)  # leaves per depth
    leaf_size_hist: np.ndarray = field(repr=False)  # leaves per triangle count

    def as_row(self) -> dict:
        return {"bv": self.bv, "split": self.split, "leaf": self.leaf_size, "nodes": self.n_nodes,
                "height": self.height, "sah": self.sah_cost, "vol": self.volume_cost, "epo": self.epo,
                "overlap": self.sibling_overlap}


def node_measures(bvh: BVH):
    """(area (n,), volume (n,), mean-curvature integral (n,)) of every node's volume."""
    nf = bvh.nodes_f
    if bvh.kind == L.KIND_SPHERE:
        r = nf[:, L.SR]
        return 4 * np.pi * r ** 2, 4 / 3 * np.pi * r ** 3, 4 * np.pi * r
    e = 2.0 * nf[:, L.E0:L.E0 + 3]
    area = 2.0 * (e[:, 0] * e[:, 1] + e[:, 1] * e[:, 2] + e[:, 2] * e[:, 0])
    return area, e.prod(axis=1), np.pi * e.sum(axis=1)


def sah_costs(bvh: BVH) -> tuple[float, float]:
    """(SAH cost, volume cost) normalised by the root's measure."""
    area, vol, _ = node_measures(bvh)
    leaf = bvh.is_leaf
    w = np.where(leaf, C_I * bvh.nodes_i[:, L.COUNT], C_T)
    sah = float((w * area).sum() / area[0]) if area[0] > 0 else 0.0
    vc = float((w * vol).sum() / vol[0]) if vol[0] > 0 else 0.0
    return sah, vc


@njit(cache=True, nogil=True)
def _epo_kernel(sphere, nf, ni, pos, verts, faces, area):
    """EPO from 4 sample points per triangle (see the module docstring)."""
    n = ni.shape[0]
    stack = np.empty(2 * n + 2, dtype=np.int64)
    total = 0.0
    bary = np.array([[1 / 3, 1 / 3, 1 / 3], [2 / 3, 1 / 6, 1 / 6], [1 / 6, 2 / 3, 1 / 6], [1 / 6, 1 / 6, 2 / 3]])
    for f in range(faces.shape[0]):
        w = 0.25 * area[f]
        if w == 0.0:
            continue
        pf = pos[f]
        for s in range(4):
            p = np.zeros(3)
            for k in range(3):
                v = faces[f, k]
                for d in range(3):
                    p[d] += bary[s, k] * verts[v, d]
            sp = 0
            stack[sp] = 0
            sp += 1
            while sp > 0:
                sp -= 1
                node = stack[sp]
                inside = True
                if sphere:
                    dx = p[0] - nf[node, L.S0]
                    dy = p[1] - nf[node, L.S0 + 1]
                    dz = p[2] - nf[node, L.S0 + 2]
                    inside = dx * dx + dy * dy + dz * dz <= nf[node, L.SR] ** 2
                else:
                    dx = p[0] - nf[node, L.C0]
                    dy = p[1] - nf[node, L.C0 + 1]
                    dz = p[2] - nf[node, L.C0 + 2]
                    for a in range(3):  # coordinates along the box's axes (its columns)
                        q = dx * nf[node, L.R0 + a] + dy * nf[node, L.R0 + 3 + a] + dz * nf[node, L.R0 + 6 + a]
                        if abs(q) > nf[node, L.E0 + a]:
                            inside = False
                            break
                if not inside:
                    continue
                start = ni[node, L.START]
                count = ni[node, L.COUNT]
                left = ni[node, L.LEFT]
                if not (start <= pf < start + count):
                    total += w * (C_T if left >= 0 else C_I * count)
                if left >= 0:
                    stack[sp] = left
                    stack[sp + 1] = ni[node, L.RIGHT]
                    sp += 2
    return total


def epo(bvh: BVH) -> float:
    """Sampled end-point overlap (module docstring), normalised by the mesh's area."""
    v, f = bvh.mesh.vertices, bvh.mesh.faces
    area = 0.5 * np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]), axis=1)
    total_area = area.sum()
    if total_area <= 0:
        return 0.0
    pos = np.empty(len(f), dtype=np.int64)
    pos[bvh.prim_order] = np.arange(len(f))
    return float(_epo_kernel(bvh.kind == L.KIND_SPHERE, bvh.nodes_f, bvh.nodes_i, pos, v, f, area)
                 / total_area)


_GRID = (np.stack(np.meshgrid(*[np.arange(4)] * 3, indexing="ij"), -1).reshape(-1, 3) + 0.5) / 4 * 2 - 1


def sibling_overlap(bvh: BVH) -> float:
    """``sum_internal V(L ∩ R) / V(root)`` (module docstring)."""
    ni, nf = bvh.nodes_i, bvh.nodes_f
    internal = np.flatnonzero(ni[:, L.LEFT] >= 0)
    if len(internal) == 0:
        return 0.0
    lft, rgt = ni[internal, L.LEFT], ni[internal, L.RIGHT]
    _, vol, _ = node_measures(bvh)
    if vol[0] <= 0:
        return 0.0
    if bvh.kind == L.KIND_SPHERE:
        c1, c2 = nf[lft, L.S0:L.S0 + 3], nf[rgt, L.S0:L.S0 + 3]
        r1, r2 = nf[lft, L.SR], nf[rgt, L.SR]
        d = np.linalg.norm(c1 - c2, axis=1)
        inter = np.zeros(len(d))
        inside = d <= np.abs(r1 - r2)
        inter[inside] = 4 / 3 * np.pi * np.minimum(r1, r2)[inside] ** 3
        lens = (~inside) & (d < r1 + r2)
        dd, a, b = d[lens], r1[lens], r2[lens]
        inter[lens] = (np.pi * (a + b - dd) ** 2 * (dd ** 2 + 2 * dd * (a + b) - 3 * (a - b) ** 2) / (12 * dd))
        return float(inter.sum() / vol[0])
    c, e = nf[:, L.C0:L.C0 + 3], nf[:, L.E0:L.E0 + 3]
    if bvh.kind == L.KIND_AABB or bvh.kind in L.KDOP_KINDS:
        lo = np.maximum(c[lft] - e[lft], c[rgt] - e[rgt])
        hi = np.minimum(c[lft] + e[lft], c[rgt] + e[rgt])
        return float(np.clip(hi - lo, 0, None).prod(axis=1).sum() / vol[0])
    # oriented boxes: grid points in the smaller box, counted inside the other
    small = np.where(vol[lft] <= vol[rgt], lft, rgt)
    other = np.where(vol[lft] <= vol[rgt], rgt, lft)
    U = bvh.box_axes()
    pts = c[small][:, None, :] + np.einsum("nij,nkj->nki", U[small], _GRID[None, :, :] * e[small][:, None, :])
    local = np.einsum("nji,nkj->nki", U[other], pts - c[other][:, None, :])
    inside = np.all(np.abs(local) <= e[other][:, None, :], axis=2).mean(axis=1)
    return float((inside * vol[small]).sum() / vol[0])


def tree_quality(bvh: BVH, with_epo: bool = True) -> TreeQuality:
    """Every quality number of ``bvh`` (``with_epo=False`` skips the sampled EPO, the slow one)."""
    if not isinstance(bvh, BVH):
        raise TypeError(f"bvh: expected cdcore.BVH, got {type(bvh).__name__}")
    sah, vc = sah_costs(bvh)
    leaf = bvh.is_leaf
    return TreeQuality(bvh.bv, getattr(bvh, "split", "median"), bvh.leaf_size, bvh.n_nodes, int(leaf.sum()),
                       bvh.height, sah, vc, epo(bvh) if with_epo else float("nan"), sibling_overlap(bvh),
                       np.bincount(bvh.depth[leaf]), np.bincount(bvh.nodes_i[leaf, L.COUNT]))


# ---- the cost model ----------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _expected_kernel(niA, sizeA, vA, sA, mA, niB, sizeB, vB, sB, mB, eps, max_pairs):
    """Expected (N_v, N_p) of a traversal under random placement (module docstring): pairs
    below probability ``eps`` are not expanded (their subtree's tests are dropped); at most
    ``max_pairs`` pairs are expanded. Returns (N_v, N_p, pairs expanded, truncated?)."""
    root = vA[0] + vB[0] + (mA[0] * sB[0] + mB[0] * sA[0]) / (4 * np.pi)
    stack = np.empty((max_pairs + 2, 2), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    sp = 1
    nv = 1.0  # the root pair is always tested
    npr = 0.0
    done = 0
    truncated = False
    while sp > 0:
        sp -= 1
        a = stack[sp, 0]
        b = stack[sp, 1]
        p = min(1.0, (vA[a] + vB[b] + (mA[a] * sB[b] + mB[b] * sA[a]) / (4 * np.pi)) / root)
        leaf_a = niA[a, 0] < 0
        leaf_b = niB[b, 0] < 0
        if leaf_a and leaf_b:
            npr += p * niA[a, 3] * niB[b, 3]
            continue
        if p < eps:
            truncated = True
            continue
        done += 1
        if done > max_pairs or sp + 2 > stack.shape[0]:
            truncated = True
            continue
        nv += 2.0 * p  # both children pairs are tested when this pair overlaps
        if leaf_b or (not leaf_a and sizeA[a] >= sizeB[b]):
            stack[sp, 0] = niA[a, 0]
            stack[sp, 1] = b
            stack[sp + 1, 0] = niA[a, 1]
            stack[sp + 1, 1] = b
        else:
            stack[sp, 0] = a
            stack[sp, 1] = niB[b, 0]
            stack[sp + 1, 0] = a
            stack[sp + 1, 1] = niB[b, 1]
        sp += 2
    return nv, npr, done, truncated


def expected_tests(bvh_a: BVH, bvh_b: BVH, eps: float = 1e-5, max_pairs: int = 2_000_000) -> tuple[float, float]:
    """Expected (node tests N_v, triangle tests N_p) of one query of ``bvh_a`` against ``bvh_b``
    under random placement with overlapping roots (module docstring)."""
    ma, mb = node_measures(bvh_a), node_measures(bvh_b)
    nv, npr, _, _ = _expected_kernel(bvh_a.nodes_i, bvh_a.nodes_f[:, L.SIZE], ma[1], ma[0], ma[2],
                                     bvh_b.nodes_i, bvh_b.nodes_f[:, L.SIZE], mb[1], mb[0], mb[2],
                                     float(eps), int(max_pairs))
    return float(nv), float(npr)


def fit_cost_model(n_v, n_p, seconds, n_q=None) -> tuple[float, float, float, float]:
    """Least-squares C_v, C_p, C_0 >= 0 of ``T = N_v C_v + N_p C_p + N_q C_0`` over frames
    (seconds per node test, per triangle test, per query call: the fixed cost of a query, which
    the paper's model leaves out but which dominates many small queries). Returns
    (C_v, C_p, C_0, R^2)."""
    cols = [np.asarray(n_v, float), np.asarray(n_p, float)]
    cols.append(np.zeros(len(cols[0])) if n_q is None else np.asarray(n_q, float))
    A = np.column_stack(cols)
    y = np.asarray(seconds, float)
    best = None
    for sub in ((0, 1, 2), (0, 1), (0, 2), (1, 2), (0,), (1,), (2,)):
        M = A[:, sub]
        if not np.any(M):
            continue
        x, *_ = np.linalg.lstsq(M, y, rcond=None)
        if np.any(x < 0):
            continue
        c = np.zeros(3)
        c[list(sub)] = x
        err = float(((A @ c - y) ** 2).sum())
        if best is None or err < best[0]:
            best = (err, c)
    if best is None:
        return 0.0, 0.0, 0.0, 0.0
    ss = float(((y - y.mean()) ** 2).sum())
    c = best[1]
    return float(c[0]), float(c[1]), float(c[2]), 1.0 - best[0] / ss if ss > 0 else 1.0
