"""k-DOP realignment, numpy-facing (for tests, benchmarks and the app's realignment view).

Given a node of a k-DOP hierarchy (B) and a rigid motion (R, t) into another frame with
the same direction set (A's), ``realign_kdop`` returns the realigned k-DOP by each method,
computed by the traversal's own kernels (``cdcore._kdop_traverse.realign_node``, query pad
included), and ``rotated_exact_kdop`` the exact k-DOP of the node's vertices after the
motion (what an oracle would fit). ``looseness`` compares the two:

* per-slab width ratio ``(hi' - lo') / (hi - lo)`` along each of the k/2 directions, and
  the per-slab excess ``((hi' - lo') - (hi - lo)) / max width`` (robust for flat nodes,
  whose exact k-DOP has zero-width slabs: a single triangle along its normal);
* the volume ratio vol(realigned) / vol(exact), with both volumes computed exactly from the
  polytope (``kdop_polytope``: vertices by intersecting plane triples, faces ordered
  around each plane, volume as a sum of pyramids); ``inf`` when the exact k-DOP is flat.

k-DOP slab rows are ``[lo_0 .. lo_{k/2-1}, hi_0 .. hi_{k/2-1}]`` throughout.
"""
from __future__ import annotations

import itertools

import numpy as np

from ._kdop_traverse import QI_SIGHI, REALIGN_METHODS, prepare, realign_node
from .bv.kdop import KDOP_DIRS, signed_dirs
from .transforms import transform_points

METHODS = tuple(REALIGN_METHODS)  # ("table", "all", "major", "table_angle")


def _as_rt(R, t):
    R = np.ascontiguousarray(np.asarray(R, dtype=np.float64))
    t = np.zeros(3) if t is None else np.ascontiguousarray(np.asarray(t, dtype=np.float64))
    if R.shape != (3, 3) or t.shape != (3,):
        raise ValueError("expected R (3, 3) and t (3,)")
    return R, t


def exact_kdop(points, bv: str) -> np.ndarray:
    """(k,) the tight k-DOP of ``points`` (n, 3) over ``bv``'s directions (no pad)."""
    d = KDOP_DIRS[bv]
    p = np.asarray(points, dtype=np.float64).reshape(-1, 3) @ d.T
    return np.concatenate([p.min(axis=0), p.max(axis=0)])


def node_vertices(bvh, node: int) -> np.ndarray:
    """(3 c, 3) the vertices of the node's triangles (with repeats)."""
    return bvh.mesh.vertices[bvh.mesh.faces[bvh.node_primitives(node)].ravel()]


def rotated_exact_kdop(bvh, node: int, R, t=None) -> np.ndarray:
    """(k,) the exact k-DOP of the node's vertices moved by x -> R x + t (the kernels'
    transform arithmetic, ``transform_points``)."""
    R, t = _as_rt(R, t)
    return exact_kdop(transform_points(R, t, node_vertices(bvh, node)), bvh.bv)


def realign_kdop(bvh, node: int, R, t=None, method: str = "table") -> np.ndarray:
    """(k,) node ``node``'s k-DOP realigned by ``method`` ("table", "all" or "major") after
    the motion x -> R x + t, exactly as a traversal computes it (query pad included)."""
    if method not in REALIGN_METHODS:
        raise ValueError(f"method: expected one of {METHODS}, got {method!r}")
    if getattr(bvh, "kdop", None) is None:
        raise ValueError(f"realign_kdop: bvh must be a k-DOP hierarchy, got bv={bvh.bv!r}")
    R, t = _as_rt(R, t)
    m, qf, qi = prepare(bvh, method, R, t)
    kd = bvh.kdop
    out = np.empty(kd.k)
    realign_node(m, int(node), kd.slabs, kd.tab, kd.outer, qf, qi, out)
    return out


def looseness(realigned, exact, bv: str) -> dict:
    """How much larger the realigned k-DOP is than the exact one (see the module docstring).
    Returns ``width_ratio`` (k/2,), ``excess`` (k/2,), ``mean_width_ratio`` (over slabs with
    a non-zero exact width), ``max_excess`` and ``volume_ratio``."""
    realigned = np.asarray(realigned, float)
    exact = np.asarray(exact, float)
    k2 = len(exact) // 2
    wr = realigned[k2:] - realigned[:k2]
    we = exact[k2:] - exact[:k2]
    scale = max(float(we.max()), 1e-300)
    # slabs narrower than 1e-12 of the widest are flat (a triangle along its normal): their
    # ratio is reported as inf and left out of the mean; ``excess`` still measures them
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(we > 1e-12 * scale, wr / np.where(we > 0, we, 1.0), np.inf)
    finite = ratio[np.isfinite(ratio)]
    ve = kdop_volume(exact, bv)
    vr = kdop_volume(realigned, bv)
    return {
        "width_ratio": ratio,
        "excess": (wr - we) / scale,
        "mean_width_ratio": float(finite.mean()) if len(finite) else float("inf"),
        "max_excess": float(((wr - we) / scale).max()),
        "volume_ratio": float(vr / ve) if ve > 1e-12 * scale ** 3 else float("inf"),  # flat: no ratio
    }


def realignment_report(bvh, node: int, R, t=None) -> dict:
    """Everything the app's realignment view shows for one node and motion: the node's own
    k-DOP, the exact k-DOP after the motion, the realigned k-DOP and its looseness by each
    method, and (for "table") the remapping and the node's occupancy bits."""
    R, t = _as_rt(R, t)
    kd = bvh.kdop
    exact = rotated_exact_kdop(bvh, node, R, t)
    out = {"bv": bvh.bv, "node": int(node), "kdop": kd.slabs[node].copy(), "exact": exact, "methods": {}}
    for m in METHODS:
        r = realign_kdop(bvh, node, R, t, m)
        out["methods"][m] = {"kdop": r, **looseness(r, exact, bvh.bv)}
    # the table method's remapping of A's directions (eq. 9) and the node's table data
    _, _, qi = prepare(bvh, "table", R, t)
    out["sigma"] = qi[:, QI_SIGHI].copy()
    out["center"] = kd.center[node].copy()
    out["occ"] = kd.occ[node].copy()
    out["ratio"] = kd.ratio()[node].copy()
    return out


# ---- k-DOP polytopes ----------------------------------------------------------------------
def kdop_polytope(slabs, bv: str, rtol: float = 1e-9):
    """Vertices (V, 3) and faces (list of vertex-index arrays, ordered around each face,
    one per supporting plane with >= 3 vertices) of the k-DOP ``slabs`` (k,)."""
    dirs = KDOP_DIRS[bv]
    k2 = len(dirs)
    slabs = np.asarray(slabs, float)
    N = signed_dirs(dirs)  # (k, 3): D . x <= d
    d = np.concatenate([slabs[k2:], -slabs[:k2]])
    scale = float(np.abs(slabs).max()) + float((slabs[k2:] - slabs[:k2]).max()) + 1e-300
    tol = rtol * scale
    tri = np.array(list(itertools.combinations(range(len(N)), 3)))
    A = N[tri]  # (T, 3, 3)
    det = np.linalg.det(A)
    ok = np.abs(det) > 1e-9
    x = np.linalg.solve(A[ok], d[tri[ok]][..., None])[..., 0]
    inside = np.all(x @ N.T <= d + tol, axis=1)
    x = x[inside]
    if len(x) == 0:
        return np.zeros((0, 3)), []
    # merge coincident vertices (several plane triples meet at degenerate vertices)
    key = np.round(x / tol).astype(np.int64)
    _, first = np.unique(key, axis=0, return_index=True)
    verts = x[np.sort(first)]
    faces = []
    for h in range(len(N)):
        on = np.flatnonzero(np.abs(verts @ N[h] - d[h]) <= tol)
        if len(on) < 3:
            continue
        p = verts[on]
        c = p.mean(axis=0)
        u = p[0] - c
        if np.linalg.norm(u) <= tol:
            u = p[np.argmax(np.linalg.norm(p - c, axis=1))] - c
        u = u / max(np.linalg.norm(u), 1e-300)
        w = np.cross(N[h], u)
        ang = np.arctan2((p - c) @ w, (p - c) @ u)
        faces.append(on[np.argsort(ang)])
    return verts, faces


def kdop_volume(slabs, bv: str) -> float:
    """Exact volume of the k-DOP ``slabs`` (k,) (0 for a flat one)."""
    verts, faces = kdop_polytope(slabs, bv)
    if len(verts) < 4 or not faces:
        return 0.0
    c = verts.mean(axis=0)
    vol = 0.0
    for f in faces:
        p = verts[f]
        a = np.zeros(3)
        for i in range(1, len(p) - 1):
            a += np.cross(p[i] - p[0], p[i + 1] - p[0])
        area2 = np.linalg.norm(a)
        if area2 == 0.0:
            continue
        n = a / area2
        vol += abs(float(n @ (p[0] - c))) * 0.5 * area2 / 3.0
    return vol


def looseness_study(bvh, rotations, nodes, translation=None, volume_every: int = 0) -> dict:
    """Looseness of every method over ``nodes`` x ``rotations`` (for tables and plots):
    per method, the arrays ``width`` (mean per-slab width ratio of each sample),
    ``excess`` (max per-slab excess) and ``volume`` (volume ratio of every
    ``volume_every``-th sample; empty when 0 -- the exact volume costs ~1 ms)."""
    t = np.zeros(3) if translation is None else np.asarray(translation, float)
    out = {m: {"width": [], "excess": [], "volume": []} for m in METHODS}
    i = 0
    for node in nodes:
        for R in rotations:
            ex = rotated_exact_kdop(bvh, int(node), R, t)
            k2 = len(ex) // 2
            we = ex[k2:] - ex[:k2]
            for m in METHODS:
                r = realign_kdop(bvh, int(node), R, t, m)
                wr = r[k2:] - r[:k2]
                ok = we > 1e-9 * we.max()
                out[m]["width"].append(float(np.mean(wr[ok] / we[ok])))
                out[m]["excess"].append(float(((wr - we) / we.max()).max()))
                if volume_every and i % volume_every == 0:
                    v = kdop_volume(ex, bvh.bv)
                    if v > 1e-12 * we.max() ** 3:
                        out[m]["volume"].append(kdop_volume(r, bvh.bv) / v)
            i += 1
    return {m: {k: np.asarray(v) for k, v in d.items()} for m, d in out.items()}
