"""``cdcore-bench kdop``: k-DOP hierarchies and their realignments (Fünzig & Fellner,
"Easy realignment of k-DOP bounding volumes", section 6), in shape.

Three scenarios, each swept over a distance:

* ``rotating`` -- Zachmann's benchmark: two objects in unit boxes (tori, ~2K triangles
  each), the second turning full circles about the z axis at decreasing centre distances
  (its ring stands upright, so at short distances it threads the first one's hole);
* ``parallel`` -- parallel-close proximity: a sphere (icosphere, 5120 triangles) around a
  smaller, randomly perturbed sphere; distance = radius gap, the inner one at random
  orientations;
* ``point`` -- point-close proximity: two such spheres side by side; distance = surface
  gap (negative: overlapping), the second at random orientations.

Every pose runs ``collide(..., contacts="first")`` for k = 6, 14, 18, 26 with each
realignment ("table", "all", "major"), for OBB trees (sat15) and, if ``coal`` is installed,
for Coal's KDOP18 (``coal.MeshLoader(coal.BV_KDOP18)``; Coal re-fits the k-DOP tree of the
moved mesh on every query, ~1 s each, so it runs on a subset of the poses:
``--coal-poses`` per distance). Reported per distance: the median time per query
(median over ``--repeat`` calls of each pose, averaged over the poses) and the mean number
of BV tests per query; plots (PNG, matplotlib) of both against distance go to ``--out``.
All cdcore variants must agree on hit / no hit for every pose (exit code 1 otherwise);
Coal's answers are compared and reported. The summary gives Coal KDOP18 time / cdcore
k-DOP18 time on the identical poses (target >= 100x).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

from .common import fmt_time, table, torus
from .output import atomic_write, output_dir_problem

NAME = "kdop"
KS = (6, 14, 18, 26)
REALIGNS = ("table", "all", "major")
TARGET_COAL_RATIO = 100.0


# ---- meshes --------------------------------------------------------------------------
def icosphere(subdiv: int, radius: float = 1.0):
    """Icosahedron subdivided ``subdiv`` times and projected onto the sphere:
    20 * 4**subdiv triangles (subdiv 4: 5120, the size of the paper's spheres)."""
    t = (1.0 + 5 ** 0.5) / 2.0
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
         (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11),
         (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    verts = [np.array(p, float) / np.linalg.norm(p) for p in v]
    faces = f
    for _ in range(subdiv):
        cache = {}

        def mid(a, b):
            key = (min(a, b), max(a, b))
            if key not in cache:
                m = verts[a] + verts[b]
                verts.append(m / np.linalg.norm(m))
                cache[key] = len(verts) - 1
            return cache[key]

        nf = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            nf += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = nf
    return np.array(verts) * radius, np.array(faces, dtype=np.int32)


def perturbed(verts, amplitude: float, seed: int):
    """Vertices moved radially by a seeded uniform factor in [1 - amplitude, 1 + amplitude]."""
    rng = np.random.default_rng(seed)
    return verts * (1.0 + amplitude * rng.uniform(-1.0, 1.0, size=(len(verts), 1)))


def _rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _pose(R, t):
    p = np.eye(4)
    p[:3, :3] = R
    p[:3, 3] = t
    return p


def _random_rotations(n, rng):
    from ..transforms import random_rotations
    return random_rotations(n, rng)


class Scenario:
    """``mesh_a``, ``mesh_b(distance)`` -> (vertices, faces), ``poses(distance)`` -> (N, 4, 4)."""

    def __init__(self, name, label, xlabel, distances, mesh_a, mesh_b, poses):
        self.name, self.label, self.xlabel = name, label, xlabel
        self.distances = list(distances)
        self.mesh_a, self.mesh_b, self.poses = mesh_a, mesh_b, poses


def scenarios(quick: bool, n_poses: int, seed: int):
    # rotating: tori scaled into unit boxes (outer diameter 1, tube 0.2), 2048 triangles
    tv, tf = torus(64, 16)
    tv = tv * 0.4
    angles = 2.0 * np.pi * np.arange(n_poses) / n_poses
    upright = _rot_x(np.pi / 2)

    def rot_poses(d):
        return np.stack([_pose(_rot_z(a) @ upright, (d, 0.0, 0.0)) for a in angles])

    # (distance 0.6 would make vertices of the two tori coincide to 1e-16: a touching case
    # decided by rounding, where engines legitimately differ -- so the sweep avoids it)
    rot_d = [1.1, 0.9, 0.7, 0.55, 0.4] if quick else list(np.round(np.linspace(1.21, 0.31, 10), 3))
    rotating = Scenario("rotating", "rotating (Zachmann): torus turning about z at centre distance d",
                        "centre distance", rot_d, lambda: (tv, tf), lambda d: (tv, tf), rot_poses)
    sub = 3 if quick else 4
    sv, sf = icosphere(sub)
    amp = 0.01
    inner = perturbed(sv, amp, seed)
    rng = np.random.default_rng(seed + 1)
    rots = _random_rotations(n_poses, rng)

    def rand_poses(center):
        return np.stack([_pose(R, center) for R in rots])

    par_d = [0.04, 0.02, 0.01, 0.005, 0.0] if quick else [0.06, 0.04, 0.03, 0.02, 0.015, 0.01, 0.0075, 0.005,
                                                          0.0025, 0.0]
    parallel = Scenario("parallel", f"parallel-close: sphere ({len(sf)} tris) in a perturbed sphere "
                        f"(+-{amp}) of radius 1 - gap", "radius gap", par_d,
                        lambda: (sv, sf), lambda d: (inner * (1.0 - d), sf), lambda d: rand_poses((0.0, 0.0, 0.0)))
    pt_d = [0.05, 0.01, 0.0, -0.01, -0.03] if quick else list(np.round(np.linspace(0.08, -0.06, 10), 4))
    half = (sv * 0.5, sf)
    point = Scenario("point", f"point-close: two spheres ({len(sf)} tris, radius 0.5) at surface gap g",
                     "surface gap", pt_d, lambda: half, lambda d: half,
                     lambda d: rand_poses((1.0 + d, 0.0, 0.0)))
    return [rotating, parallel, point]


# ---- engines ---------------------------------------------------------------------------
def variants():
    """(label, bv, kwargs) of the cdcore variants."""
    out = [(f"kdop{k}/{r}", f"kdop{k}", {"realign": r}) for k in KS for r in REALIGNS]
    out.append(("obb/sat15", "obb", {"test": "sat15"}))
    return out


class CoalKdop18:
    """Coal's KDOP18 trees (loaded from OBJ files: Coal exposes KDOP18 only via MeshLoader)."""

    def __init__(self, coal, tmpdir):
        self.coal = coal
        self.tmpdir = tmpdir
        self.req = coal.CollisionRequest()
        self.req.num_max_contacts = 1
        self.req.enable_contact = False

    def load(self, verts, faces, name):
        path = os.path.join(self.tmpdir, f"{name}.obj")
        with open(path, "w", encoding="ascii") as fh:
            fh.writelines("v %r %r %r\n" % (float(x), float(y), float(z)) for x, y, z in verts)
            fh.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in faces)
        return self.coal.MeshLoader(self.coal.BV_KDOP18).load(path)

    def transform(self, pose):
        return self.coal.Transform3s(np.ascontiguousarray(pose[:3, :3]), np.ascontiguousarray(pose[:3, 3]))

    def query(self, ma, ta, mb, tb):
        res = self.coal.CollisionResult()
        t0 = time.perf_counter()
        self.coal.collide(ma, ta, mb, tb, self.req, res)
        return time.perf_counter() - t0, bool(res.isCollision())


# ---- the benchmark -----------------------------------------------------------------------
class KdopBench:
    def __init__(self, quick, repeat, n_poses, coal_poses, use_coal, seed=20240611, log=print):
        self.quick = quick
        self.repeat = repeat
        self.n_poses = n_poses
        self.coal_poses = coal_poses
        self.seed = seed
        self.log = log
        self.coal = None
        if use_coal:
            try:
                import coal
                self.coal = coal
            except Exception as exc:  # ImportError or a broken shared library
                self.log(f"(coal not available: {type(exc).__name__}: {exc}; skipping Coal's KDOP18)")
        self.results = {}  # scenario -> {"distances", "methods": {label: {time, bv_tests, ...}}}
        self.disagreements = []
        self.coal_disagreements = []

    def run_all(self, which=None):
        from .. import Mesh, build_bvh, collide
        tmp = tempfile.mkdtemp(prefix="cdcore-kdop-bench-")
        coal = CoalKdop18(self.coal, tmp) if self.coal is not None else None
        for sc in scenarios(self.quick, self.n_poses, self.seed):
            if which and sc.name not in which:
                continue
            t_sc = time.perf_counter()
            va, fa = sc.mesh_a()
            mesh_a = Mesh(va, fa, name=f"{sc.name}-A")
            vars_ = variants()
            trees_a = {bv: build_bvh(mesh_a, bv) for bv in {v[1] for v in vars_}}
            coal_a = coal.load(va, fa, f"{sc.name}-A") if coal else None
            res = {"label": sc.label, "xlabel": sc.xlabel, "distances": sc.distances,
                   "n_tris": [len(fa)], "methods": {lab: {"time": [], "bv_tests": [], "prim_tests": [],
                                                          "hits": []} for lab, _, _ in vars_},
                   "coal": {"time": [], "hits": [], "ratio": {lab: [] for lab, _, _ in vars_}}}
            for d in sc.distances:
                vb, fb = sc.mesh_b(d)
                mesh_b = Mesh(vb, fb, name=f"{sc.name}-B")
                trees_b = {bv: build_bvh(mesh_b, bv) for bv in trees_a}
                poses = sc.poses(d)
                per = {lab: ([], [], [], []) for lab, _, _ in vars_}
                for p in poses:
                    hits = {}
                    for lab, bv, kw in vars_:
                        ta, tb = trees_a[bv], trees_b[bv]
                        samples = []
                        for _ in range(self.repeat):
                            t0 = time.perf_counter()
                            r = collide(ta, None, tb, p, contacts="first", **kw)
                            samples.append(time.perf_counter() - t0)
                        per[lab][0].append(float(np.median(samples)))
                        per[lab][1].append(r.stats.bv_tests)
                        per[lab][2].append(r.stats.prim_tests)
                        per[lab][3].append(r.hit)
                        hits[lab] = r.hit
                    if len(set(hits.values())) > 1:
                        self.disagreements.append((sc.name, d, hits))
                for lab, (tt, bt, pt, hh) in per.items():
                    m = res["methods"][lab]
                    m["time"].append(float(np.mean(tt)))
                    m["bv_tests"].append(float(np.mean(bt)))
                    m["prim_tests"].append(float(np.mean(pt)))
                    m["hits"].append(float(np.mean(hh)))
                if coal:
                    mb_c = coal.load(vb, fb, f"{sc.name}-B-{len(res['coal']['time'])}")
                    ta_c = coal.transform(np.eye(4))
                    ct, ch = [], []
                    idx = np.linspace(0, len(poses) - 1, min(self.coal_poses, len(poses))).round().astype(int)
                    for i in idx:
                        dt, hit = coal.query(coal_a, ta_c, mb_c, coal.transform(poses[i]))
                        ct.append(dt)
                        ch.append(hit)
                        ours = per["kdop18/table"][3][i]
                        if hit != ours:
                            self.coal_disagreements.append((sc.name, d, int(i), hit, ours))
                        for lab in res["methods"]:
                            res["coal"]["ratio"][lab].append(dt / per[lab][0][i])
                    res["coal"]["time"].append(float(np.mean(ct)))
                    res["coal"]["hits"].append(float(np.mean(ch)))
            res["seconds"] = time.perf_counter() - t_sc
            self.results[sc.name] = res
            self.log(f"  {sc.name}: {len(sc.distances)} distances x {self.n_poses} poses in {res['seconds']:.1f} s")

    def run_looseness(self):
        """How much larger each realignment is than the exact k-DOP of the moved vertices
        (``cdcore.realign.looseness_study``): nodes of depth 1..6 of the rotating benchmark's
        torus and the parallel benchmark's sphere, at random rotations."""
        from .. import Mesh, build_bvh
        from ..realign import looseness_study
        rng = np.random.default_rng(self.seed + 7)
        n_nodes, n_rot = (12, 6) if self.quick else (40, 12)
        shapes = [("torus", torus(64, 16)), ("sphere", icosphere(3))]
        self.looseness = {}
        for name, (v, f) in shapes:
            m = Mesh(v, f)
            for k in KS:
                b = build_bvh(m, f"kdop{k}")
                nodes = rng.choice(np.flatnonzero((b.depth >= 1) & (b.depth <= 6)), n_nodes, replace=False)
                st = looseness_study(b, _random_rotations(n_rot, rng), nodes, volume_every=3)
                self.looseness[(name, k)] = {
                    r: {"width_median": float(np.median(d["width"])), "width_p90": float(np.percentile(d["width"], 90)),
                        "excess_median": float(np.median(d["excess"])),
                        "volume_median": float(np.median(d["volume"])) if len(d["volume"]) else float("nan")}
                    for r, d in st.items()}

    # ---- output ------------------------------------------------------------------------
    def report(self) -> str:
        out = []
        if getattr(self, "looseness", None):
            out.append("\n== realignment looseness: realigned / exact k-DOP of the moved vertices "
                       "(median over nodes x rotations) ==")
            rows = []
            for (shape, k), d in self.looseness.items():
                rows.append([shape, f"k={k}"] + [f"{d[r]['width_median']:.3f} / {d[r]['width_p90']:.3f} / "
                                                 f"{d[r]['volume_median']:.2f}" for r in REALIGNS])
            out.append("cells: per-slab width ratio median / 90th percentile / volume ratio median")
            out.append(table(["shape", "k"] + list(REALIGNS), rows))
        for name, res in self.results.items():
            ds = res["distances"]
            out.append(f"\n== {res['label']} ==")
            heads = ["method"] + [f"{res['xlabel'][:4]} {d:g}" for d in ds]
            rows_t = [[lab] + [fmt_time(x) for x in m["time"]] for lab, m in res["methods"].items()]
            rows_b = [[lab] + [f"{x:.0f}" for x in m["bv_tests"]] for lab, m in res["methods"].items()]
            if res["coal"]["time"]:
                rows_t.append(["coal KDOP18"] + [fmt_time(x) for x in res["coal"]["time"]])
            out.append("time per query (median of repeats, mean over poses):")
            out.append(table(heads, rows_t))
            out.append("BV tests per query (mean over poses):")
            out.append(table(heads, rows_b))
            hits = res["methods"]["kdop18/table"]["hits"]
            out.append("hit fraction: " + "  ".join(f"{d:g}: {h:.2f}" for d, h in zip(ds, hits)))
        ratio_rows = []
        for name, res in self.results.items():
            if not res["coal"]["time"]:
                continue
            for lab in ("kdop18/table", "kdop18/all", "kdop18/major"):
                r = np.asarray(res["coal"]["ratio"][lab])
                ratio_rows.append([name, lab, f"{np.median(r):.0f}x", f"{r.min():.0f}x", str(len(r))])
        if ratio_rows:
            out.append("\n== Coal KDOP18 time / cdcore k-DOP18 time, same poses "
                       f"(target >= {TARGET_COAL_RATIO:.0f}x) ==")
            out.append(table(["scenario", "cdcore", "median", "min", "poses"], ratio_rows))
        elif self.coal is None:
            out.append("\n(Coal not installed: no KDOP18 comparison; `pip install coal` into the venv to add it)")
        if self.disagreements:
            out.append(f"\n!! {len(self.disagreements)} poses where cdcore variants disagree on hit/no hit:")
            for sc, d, hits in self.disagreements[:10]:
                out.append(f"   {sc} d={d:g}: {hits}")
        else:
            out.append("\nall cdcore variants agree on hit / no hit for every pose")
        if self.coal is not None:
            out.append(f"Coal disagrees with cdcore on {len(self.coal_disagreements)} pose(s)"
                       + (": " + ", ".join(f"{s} d={d:g} pose {i} coal={c} cdcore={o}"
                                           for s, d, i, c, o in self.coal_disagreements[:5])
                          if self.coal_disagreements else ""))
        return "\n".join(out)

    def plot(self, out_dir) -> list:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        os.makedirs(out_dir, exist_ok=True)
        colors = {6: "tab:blue", 14: "tab:green", 18: "tab:orange", 26: "tab:purple"}
        styles = {"table": "-", "all": "--", "major": ":"}
        paths = []
        for name, res in self.results.items():
            fig, axes = plt.subplots(1, 2, figsize=(13, 5))
            ds = res["distances"]
            for lab, m in res["methods"].items():
                if lab.startswith("kdop"):
                    k = int(lab[4:].split("/")[0])
                    r = lab.split("/")[1]
                    kw = dict(color=colors[k], linestyle=styles[r], label=lab)
                else:
                    kw = dict(color="black", linewidth=2, marker="s", markersize=3, label=lab)
                axes[0].plot(ds, np.asarray(m["time"]) * 1e6, **kw)
                axes[1].plot(ds, m["bv_tests"], **kw)
            if res["coal"]["time"]:
                axes[0].plot(ds, np.asarray(res["coal"]["time"]) * 1e6, color="red", marker="o", linewidth=2,
                             label="coal KDOP18")
            axes[0].set_ylabel("time per query [us]")
            axes[1].set_ylabel("BV tests per query")
            for ax in axes:
                ax.set_xlabel(res["xlabel"])
                ax.set_yscale("log")
                ax.invert_xaxis()  # decreasing distance, as in the paper
                ax.grid(True, which="both", alpha=0.3)
            axes[1].legend(fontsize=7, ncol=2)
            fig.suptitle(res["label"], fontsize=10)
            fig.tight_layout()
            path = os.path.join(out_dir, f"kdop_{name}.png")
            fig.savefig(path, dpi=110)
            plt.close(fig)
            paths.append(path)
        return paths

    def as_json(self):
        loose = {f"{s}/kdop{k}": d for (s, k), d in getattr(self, "looseness", {}).items()}
        return {"quick": self.quick, "repeat": self.repeat, "poses": self.n_poses, "results": self.results,
                "looseness": loose,
                "disagreements": [[s, d, {k: bool(v) for k, v in h.items()}] for s, d, h in self.disagreements],
                "coal_disagreements": [list(map(lambda x: x if not isinstance(x, np.generic) else x.item(), c))
                                       for c in self.coal_disagreements]}


# ---- command line -------------------------------------------------------------------------
def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_parser(subparsers):
    p = subparsers.add_parser(
        NAME, help="k-DOPs (k = 6, 14, 18, 26) x realignments vs OBB and Coal's KDOP18 (Fünzig's benchmarks)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer distances, poses and repeats; smaller spheres "
                                                        "(well under a minute)")
    p.add_argument("--out", metavar="DIR", default=os.path.join("out", "kdop"),
                   help="directory for the PNG plots and results.json (default: out/kdop)")
    p.add_argument("--repeat", type=_positive_int, metavar="N", help="timed calls per pose (default 7, --quick 3)")
    p.add_argument("--poses", type=_positive_int, metavar="N",
                   help="poses per distance: rotation steps / random orientations (default 24, --quick 8)")
    p.add_argument("--coal-poses", type=_positive_int, metavar="N",
                   help="poses per distance run through Coal (default 2, --quick 1; ~1 s each)")
    p.add_argument("--no-coal", action="store_true", help="skip Coal even if installed")
    p.add_argument("--scenario", action="append", choices=("rotating", "parallel", "point"),
                   help="run only this scenario (repeatable)")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    quick = bool(args.quick)
    repeat = args.repeat or (3 if quick else 7)
    n_poses = args.poses or (8 if quick else 24)
    coal_poses = args.coal_poses or (1 if quick else 2)
    problem = output_dir_problem(args.out)
    if problem:  # before the run, not after it
        print(f"cdcore-bench kdop: --out: {problem}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    bench = KdopBench(quick, repeat, n_poses, coal_poses, not args.no_coal)
    print(f"cdcore-bench kdop{' --quick' if quick else ''}: {repeat} calls per pose, {n_poses} poses per distance"
          + (f", Coal on {coal_poses} per distance" if bench.coal is not None else ""))
    try:
        bench.run_all(args.scenario)
        bench.run_looseness()
    except KeyboardInterrupt:
        print("\ncdcore-bench kdop: interrupted", file=sys.stderr)
        return 130
    print(bench.report())
    try:
        paths = bench.plot(args.out)
        print("\nplots: " + ", ".join(paths))
    except ImportError as exc:
        print(f"\n(no plots: matplotlib is not importable: {exc})")
    os.makedirs(args.out, exist_ok=True)
    atomic_write(os.path.join(args.out, "results.json"),
                 lambda fh: json.dump(bench.as_json(), fh, indent=1, default=float))
    print(f"results: {os.path.join(args.out, 'results.json')}  ({time.perf_counter() - t0:.1f} s in all)")
    return 0 if not bench.disagreements else 1
