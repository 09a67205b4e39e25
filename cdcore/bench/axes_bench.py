"""``python -m cdcore.bench axes``: which 5 of the 15 box axes should the dual OBB-sphere
test (Chang, Wang & Kim 2010) keep after its sphere test?

The paper omits its list. Its argument: once two bounding spheres overlap, the boxes are
close, and the axes most likely to still separate them are the normals of the faces
spanned by the two longer edges (where the sphere leaves the largest void) and the plane
parallel to both longest edges. This bench measures that claim: over every node pair whose
spheres overlap in realistic queries (the rigid scenes' random placements and linked tori
near contact), it evaluates all 15 axes *individually* (not first-exit), in role terms
(long / mid / short axis of each box), and compares candidate 5-axis sets by the share of
SAT-separable pairs they still reject and by query time.
"""
from __future__ import annotations

import time

import numpy as np

from .. import _layout as L
from .._core import batch_serial_entry, make_plan
from .._kdop_traverse import no_kdop_arrays
from .._overlap import ABS_EPS, PROGRAM_CUSTOM, SPHERE5_AXES
from ..bvh import build_bvh
from ..collide import collide
from ..transforms import relative_transform
from .common import near_contact_poses, table, torus_mesh

ROLE = ("long", "mid", "short")
CANDIDATES = {
    "chosen: a_s, b_s, a_l x b_l, a_l x b_m, a_m x b_l": tuple(int(k) for k in SPHERE5_AXES),
    "short+mid faces, a_l x b_l": (2, 5, 1, 4, 6),
    "faces of A + 2 of B": (0, 1, 2, 3, 4),
    "long faces + long crosses": (0, 3, 6, 7, 9),
    "short faces + 3 short crosses": (2, 5, 14, 11, 13),
}


def axis_name(k: int) -> str:
    if k < 3:
        return f"a_{ROLE[k]}"
    if k < 6:
        return f"b_{ROLE[k - 3]}"
    i, j = divmod(k - 6, 3)
    return f"a_{ROLE[i]} x b_{ROLE[j]}"


def separations(bvh_a, bvh_b, R, t, a_nodes, b_nodes) -> np.ndarray:
    """(k, 15) bool: does each axis separate each node pair (the kernel's formulas, in numpy)."""
    fa, fb = bvh_a.nodes_f[a_nodes], bvh_b.nodes_f[b_nodes]
    Ra = fa[:, L.R0:L.R0 + 9].reshape(-1, 3, 3)
    Rb = R @ fb[:, L.R0:L.R0 + 9].reshape(-1, 3, 3)
    d = fb[:, L.C0:L.C0 + 3] @ R.T + t - fa[:, L.C0:L.C0 + 3]
    C = np.einsum("kji,kjc->kic", Ra, Rb)
    AC = np.abs(C) + ABS_EPS
    T = np.einsum("kji,kj->ki", Ra, d)
    ea, eb = fa[:, L.E0:L.E0 + 3], fb[:, L.E0:L.E0 + 3]
    out = np.zeros((len(a_nodes), 15), dtype=bool)
    for k in range(3):
        out[:, k] = np.abs(T[:, k]) > ea[:, k] + np.einsum("kc,kc->k", eb, AC[:, k, :])
        out[:, 3 + k] = (np.abs(np.einsum("kr,kr->k", T, C[:, :, k]))
                         > eb[:, k] + np.einsum("kr,kr->k", ea, AC[:, :, k]))
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            out[:, 6 + 3 * i + j] = (np.abs(T[:, i2] * C[:, i1, j] - T[:, i1] * C[:, i2, j])
                                     > ea[:, i1] * AC[:, i2, j] + ea[:, i2] * AC[:, i1, j]
                                     + eb[:, j1] * AC[:, i, j2] + eb[:, j2] * AC[:, i, j1])
    return out


def collect(bvh, poses, max_pairs=400_000) -> np.ndarray:
    """Separation matrix over node pairs whose spheres overlap, from full traversals
    (sphere then all 15 axes) of ``bvh`` against itself at ``poses``."""
    rows = []
    n = 0
    for p in poses:
        r = collide(bvh, None, bvh, p, test="sphere15", trace=True)
        keep = r.trace.axis != L.AXIS_SPHERE
        a, b = r.trace.node_a[keep], r.trace.node_b[keep]
        if len(a):
            R, t = relative_transform(np.eye(4), p)
            rows.append(separations(bvh, bvh, R, t, a, b))
            n += len(a)
        if n > max_pairs:
            break
    return np.concatenate(rows) if rows else np.zeros((0, 15), bool)


def time_set(bvh, poses, axes, repeat=3) -> float:
    """Seconds per first-contact query with the sphere test + ``axes`` in order."""
    axes = np.asarray(axes, dtype=np.int64)
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        # the traversal core with a custom axis program after the sphere test, serial
        batch_serial_entry(bvh._F, bvh._I, bvh._F, bvh._I, np.eye(4), poses,
                           make_plan(bvh.kind, L.TEST_SPHERE15, PROGRAM_CUSTOM, first=True, axes=axes),
                           no_kdop_arrays())
        best = min(best, time.perf_counter() - t0)
    return best / len(poses)


def workloads(quick: bool):
    from ..scenes import load_scene
    n = 60 if quick else 400
    out = []
    tor = build_bvh(torus_mesh(64, 16), "obb_sphere")
    out.append(("linked tori, near contact", tor, near_contact_poses(n, seed=3)))
    for name in ("rigid-torus", "rigid-teapot-like", "rigid-slender"):
        s = load_scene(name, frames=n)
        b = build_bvh(s.bodies[0].body.links[0].mesh, "obb_sphere")
        out.append((name, b, np.ascontiguousarray(s.bodies[1].link_poses[:, 0])))
    return out


def add_parser(sub):
    p = sub.add_parser("axes", help="measure which 5 axes the dual OBB-sphere test should keep")
    p.add_argument("--quick", action="store_true", help="fewer poses (< 30 s)")
    p.set_defaults(run=run)


def run(args) -> int:
    quick = getattr(args, "quick", False)
    print("Dual OBB-sphere test: separating power of each axis over node pairs whose spheres overlap\n"
          "(each axis evaluated on its own; 'share' = fraction of those pairs it separates; 'of SAT' = "
          "fraction of the pairs the full 15-axis SAT separates)\n")
    summary = []
    for label, bvh, poses in workloads(quick):
        sep = collect(bvh, poses)
        any15 = sep.any(axis=1)
        n, n_sat = len(sep), int(any15.sum())
        print(f"== {label}: {n} sphere-overlapping node pairs, {n_sat} ({n_sat / max(n, 1):.1%}) separable by SAT")
        share = sep.mean(axis=0) if n else np.zeros(15)
        order = np.argsort(-share)
        print(table(["rank", "axis id", "role", "share", "of SAT"],
                    [[r + 1, int(k), axis_name(k), f"{share[k]:.1%}",
                      f"{sep[:, k].sum() / max(n_sat, 1):.1%}"] for r, k in enumerate(order)]))
        rows = []
        greedy = []
        for _ in range(5):
            best = max((k for k in range(15) if k not in greedy),
                       key=lambda k: sep[:, greedy + [k]].any(axis=1).sum())
            greedy.append(best)
        cands = dict(CANDIDATES)
        cands["greedy best 5 for this workload"] = tuple(greedy)
        t15 = time_set(bvh, poses, np.arange(15))
        for name, axes in cands.items():
            cov = sep[:, list(axes)].any(axis=1).sum() / max(n_sat, 1)
            t = time_set(bvh, poses, axes)
            rows.append([name, " ".join(str(a) for a in axes), f"{cov:.1%}", f"{t * 1e6:.1f} us",
                         f"{t / t15:.2f}"])
        rows.append(["all 15 (sphere15)", "0..14", "100.0%", f"{t15 * 1e6:.1f} us", "1.00"])
        print()
        print(table(["candidate set", "axes", "rejects of SAT", "per query", "time / sphere15"], rows))
        print()
        chosen = rows[0]
        summary.append((label, chosen[2], chosen[4], " ".join(axis_name(k) for k in greedy)))
    print("Summary for the chosen set (" + ", ".join(axis_name(int(k)) for k in SPHERE5_AXES) + "):")
    print(table(["workload", "rejects of SAT", "time / sphere15", "greedy best 5"], summary))
    return 0
