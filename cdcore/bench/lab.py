"""``cdcore-bench lab``: the build lab (why is a hierarchy slow on *this* motion?).

Three reports, each measured in one run with the configurations interleaved frame by frame:

* (default) 2-8 configurations ``bv[:test[:split[:leaf[:realign]]]]`` over one scene's motion: per frame
  the node tests N_v, triangle tests N_p and query time; per configuration the build time per
  triangle (beside python-fcl's OBBRSS build when it is installed), the tree-quality numbers
  (``cdcore.quality``: SAH and volume cost, EPO, sibling overlap, height), the cost model
  T = N_v C_v + N_p C_p fitted to the frames (C_v, C_p, R^2: predicted vs measured time), the
  random-placement model's expected node tests per query against the measured ones, and a
  verdict in words. ``--png`` plots the frame series and predicted against measured time.
* ``--front``: full traversals against the front cache (``cdcore.FrontCache``) on coherent
  motions: node tests and time per frame, their ratios, the front's size; ``--png`` plots them.
* ``--splits``: node tests per query of median-, mean-, SAH- and volume-split trees on the
  shipped rigid scenes and, with ``--env/--rob`` (FCL's test meshes
  ``test/fcl_resources/env.obj`` and ``rob.obj``, not shipped), on FCL's env/rob pair under
  random placements.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

from .common import fmt_ratio, table
from .output import atomic_write, output_path_problem

NAME = "lab"
DEFAULT_CONFIGS = ("aabb:sat15:median:1", "aabb:sat15:sah:1", "obb:sat15:median:1", "obb:sat15:sah:1",
                   "obb_sphere:sphere5:sah:1", "kdop18:slab:sah:1:table", "kdop18:slab:sah:1:all")
FRONT_SCENES = ("rigid-torus", "chains-6to1", "hand-ball", "deform-wave")
RIGID_SCENES = ("rigid-torus", "rigid-torus-20k", "rigid-slender", "rigid-teapot-like")


def add_parser(subparsers):
    p = subparsers.add_parser(NAME, help="build lab: configurations x tree quality on a scene's motion; "
                                         "front cache; split rules", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scene", default="hand-ball", help="scene name or JSON path (default hand-ball)")
    p.add_argument("--frames", type=int, default=120, help="frames of the motion (default 120)")
    p.add_argument("--config", action="append", metavar="BV[:TEST[:SPLIT[:LEAF[:REALIGN]]]]",
                   help=f"a configuration (2-8; repeat the option); default: {' '.join(DEFAULT_CONFIGS)}")
    p.add_argument("--front", action="store_true", help="compare full traversals with the front cache")
    p.add_argument("--front-scenes", nargs="+", default=list(FRONT_SCENES), metavar="SCENE")
    p.add_argument("--splits", action="store_true", help="node tests per query: median vs mean vs SAH vs volume")
    p.add_argument("--env", metavar="OBJ", help="FCL's env.obj (for --splits)")
    p.add_argument("--rob", metavar="OBJ", help="FCL's rob.obj (for --splits)")
    p.add_argument("--poses", type=int, default=400, help="random placements for --splits (default 400)")
    p.add_argument("--png", metavar="PATH", help="write the plot here (matplotlib)")
    p.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    for opt in ("png", "json"):
        path = getattr(args, opt)
        problem = path and output_path_problem(path)
        if problem:
            print(f"cdcore-bench lab: --{opt}: {problem}", file=sys.stderr)
            return 2
    if args.frames < 2:
        print("cdcore-bench lab: --frames: at least 2", file=sys.stderr)
        return 2
    from ..lab import LabConfig
    try:
        configs = [LabConfig.parse(c) for c in (args.config or DEFAULT_CONFIGS)]
    except ValueError as exc:
        print(f"cdcore-bench lab: --config: {exc}", file=sys.stderr)
        return 2
    if not 1 <= len(configs) <= 8:
        print(f"cdcore-bench lab: give 1 to 8 configurations, got {len(configs)}", file=sys.stderr)
        return 2
    try:
        if args.splits:
            out = run_splits(args)
        elif args.front:
            out = run_front(args, configs[0] if args.config else LabConfig("obb"))
        else:
            out = run_configs(args, configs)
    except (FileNotFoundError, ValueError) as exc:
        print(f"cdcore-bench lab: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cdcore-bench lab: interrupted", file=sys.stderr)
        return 130
    if args.json:
        atomic_write(args.json, lambda fh: json.dump(out, fh, indent=1, default=_jsonable))
        print(f"wrote {args.json}")
    return 0


def _jsonable(x):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.integer, np.floating)):
        return x.item()
    return str(x)


def _load(name, frames):
    from ..scenes import load_scene
    return load_scene(name, frames=None if frames is None else frames + 1)


# ---- build times beside python-fcl ------------------------------------------------------------
def fcl_build_ns_per_tri(meshes, repeat=3) -> float | None:
    """python-fcl's ``BVHModel`` (OBBRSS) build time per triangle over ``meshes``, or None."""
    try:
        import fcl
    except Exception:
        return None
    best = np.inf
    n = sum(m.n_faces for m in meshes)
    for _ in range(repeat):
        t0 = time.perf_counter()
        for m in meshes:
            bvh = fcl.BVHModel()
            bvh.beginModel(m.n_faces, m.n_vertices)
            bvh.addSubModel(m.vertices, m.faces)
            bvh.endModel()
        best = min(best, time.perf_counter() - t0)
    return 1e9 * best / max(1, n)


def build_ns_per_tri(meshes, bv, split, leaf, repeat=3) -> float:
    from ..bvh import build_bvh
    build_bvh(meshes[0], bv, leaf, split=split)  # compiled outside the timing
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for m in meshes:
            build_bvh(m, bv, leaf, split=split)
        best = min(best, time.perf_counter() - t0)
    return 1e9 * best / max(1, sum(m.n_faces for m in meshes))


# ---- configurations on a motion ---------------------------------------------------------------
def run_configs(args, configs) -> dict:
    from ..lab import run_lab, verdict
    scene = _load(args.scene, args.frames)
    meshes = [ln.mesh for sb in scene.bodies for ln in sb.body.links]
    print(f"scene {scene.name}: {scene.n_triangles} triangles, {args.frames} frames; "
          f"{len(configs)} configurations, interleaved frame by frame")
    t0 = time.perf_counter()
    results = run_lab(scene, configs, frames=args.frames)
    print(f"(ran in {time.perf_counter() - t0:.1f} s)\n")
    fcl_ns = fcl_build_ns_per_tri(meshes)
    rows = []
    for r in results:
        q = r.quality[0]
        ns = build_ns_per_tri(meshes, r.config.bv, r.config.split, r.config.leaf_size)
        rows.append([r.config.label, f"{ns:.0f}", f"{fcl_ns:.0f}" if fcl_ns else "-", f"{r.mean_nv:.0f}",
                     f"{r.mean_np:.0f}", f"{r.mean_seconds * 1e3:.3f}", f"{r.c_v * 1e9:.1f}", f"{r.c_p * 1e9:.1f}",
                     f"{r.c_0 * 1e6:.2f}",
                     f"{r.r2:.2f}", f"{r.expected_nv:.0f}/{r.measured_nv:.0f}", f"{q.sah_cost:.1f}",
                     f"{q.volume_cost:.2f}", f"{q.epo:.1f}", f"{q.sibling_overlap:.3f}", q.height, _slack(r)])
    print(table(["configuration", "build ns/tri", "fcl ns/tri", "N_v/frame", "N_p/frame", "ms/frame", "C_v ns",
                 "C_p ns", "C_0 us", "R^2", "E[N_v]/meas", "SAH", "vol", "EPO", "overlap", "height", "realign"],
                rows))
    print("\nN_v, N_p, ms: means per frame over the motion (link pairs whose root spheres overlap, all contacts).\n"
          "C_v, C_p, C_0: the cost model T = N_v C_v + N_p C_p (+ N_queries C_0) fitted to the frames; R^2 how "
          "well it predicts them.\n"
          "E[N_v]/meas: node tests per query (roots overlapping) of the costliest link pair, random-placement "
          "model / measured.\n"
          "Quality (first body's largest link tree): SAH and volume cost, EPO (sampled), sibling overlap "
          "(V(L∩R)/V(root)).\n"
          "realign (k-DOPs, B's top levels at the costliest query): volume of the exact moved k-DOPs / their own "
          "(x), + the slack the realignment method adds on top (mean slab excess, in node sizes).\n")
    text = verdict(results)
    print("Verdict:\n" + text)
    if args.png:
        plot_configs(results, scene.name, args.png)
        print(f"\nwrote {args.png}")
    return {"scene": scene.name, "frames": args.frames, "verdict": text, "fcl_build_ns_per_tri": fcl_ns,
            "configs": [{"label": r.config.label, **r.log, "c_v": r.c_v, "c_p": r.c_p, "c_0": r.c_0, "r2": r.r2,
                         "expected_nv": r.expected_nv, "measured_nv": r.measured_nv,
                         "quality": r.quality[0].as_row(), "realign_slack": r.realign_slack} for r in results]}


def _slack(r) -> str:
    from .._kdop_traverse import DEFAULT_REALIGN
    used = r.config.realign or DEFAULT_REALIGN
    sl = r.realign_slack
    return f"{sl['moved']:.1f}x+{sl[used]:.2f}" if sl else "-"


def _save_png(fig, path):
    """Write the figure atomically (a temporary file beside ``path``, then rename)."""
    path = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".png", dir=os.path.dirname(path))
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_configs(results, scene_name, path):
    plt = _pyplot()
    fig, axs = plt.subplots(2, 2, figsize=(12, 7.5))
    for r in results:
        f = np.arange(len(r.log["n_v"]))
        axs[0, 0].plot(f, r.log["n_v"], lw=1, label=r.config.label)
        axs[0, 1].plot(f, np.asarray(r.log["seconds"]) * 1e3, lw=1, label=r.config.label)
        axs[1, 0].scatter(np.asarray(r.predicted_seconds) * 1e3, np.asarray(r.log["seconds"]) * 1e3, s=6,
                          label=r.config.label)
    axs[0, 0].set(title="node tests per frame (N_v)", xlabel="frame", yscale="log")
    axs[0, 1].set(title="query time per frame (ms)", xlabel="frame", yscale="log")
    lim = max(1e-6, max(float(np.max(r.log["seconds"])) for r in results) * 1e3)
    axs[1, 0].plot([0, lim], [0, lim], "k--", lw=0.8)
    axs[1, 0].set(title="cost model: predicted vs measured (ms)", xlabel="N_v C_v + N_p C_p",
                  ylabel="measured")
    labels = [r.config.label.replace("/", "\n", 1) for r in results]
    x = np.arange(len(results))
    axs[1, 1].bar(x - 0.2, [r.mean_nv for r in results], 0.4, label="N_v / frame")
    ax2 = axs[1, 1].twinx()
    ax2.bar(x + 0.2, [r.mean_seconds * 1e3 for r in results], 0.4, color="tab:orange", label="ms / frame")
    axs[1, 1].set_xticks(x, labels, fontsize=7)
    axs[1, 1].set_title("means per frame (blue: N_v, orange: ms)")
    axs[0, 0].legend(fontsize=7)
    fig.suptitle(f"build lab: {scene_name}")
    fig.tight_layout()
    _save_png(fig, path)
    plt.close(fig)


# ---- the front cache --------------------------------------------------------------------------
def run_front(args, config) -> dict:
    from ..lab import compare_front
    rows = []
    out = {}
    comps = []
    for name in args.front_scenes:
        scene = _load(name, args.frames)
        t0 = time.perf_counter()
        c = compare_front(scene, config, frames=args.frames, check=True)
        comps.append(c)
        dt = time.perf_counter() - t0
        rows.append([name, f"{c.full['n_v'].mean():.0f}", f"{c.front['n_v'].mean():.0f}", fmt_ratio(c.test_ratio),
                     f"{c.front['skipped'].mean():.0f}", f"{c.full['seconds'].mean() * 1e6:.1f}",
                     f"{c.front['seconds'].mean() * 1e6:.1f}", fmt_ratio(c.time_ratio), fmt_ratio(c.wall_ratio),
                     f"{c.front['front'].mean():.0f}", f"{dt:.1f} s"])
        out[name] = {"test_ratio": c.test_ratio, "time_ratio": c.time_ratio, "wall_ratio": c.wall_ratio,
                     "full": c.full, "front": c.front}
    print(f"front cache vs full traversal, {config.label}, {args.frames} frames (the first is not counted), "
          "every front query checked against a full traversal:")
    print(table(["scene", "N_v full", "N_v front", "tests", "skipped", "us full", "us front", "time", "wall",
                 "front size", "run"], rows))
    print("\nPer frame means. tests: front / full node tests summed over the frames; skipped: front pairs "
          "kept by their certificates (not tested, not counted in N_v); time: median over frames of front / "
          "full time inside the compiled calls (us columns); wall: the same with Python's part of each call.")
    if args.png:
        plt = _pyplot()
        fig, axs = plt.subplots(len(comps), 1, figsize=(10, 2.6 * len(comps)), squeeze=False)
        for ax, c in zip(axs[:, 0], comps):
            f = np.arange(len(c.full["n_v"]))
            ax.plot(f, c.full["n_v"], lw=1, label="node tests, full")
            ax.plot(f, c.front["n_v"], lw=1, label="node tests, front cache")
            ax.plot(f, c.front["front"], lw=1, ls="--", label="front size")
            ax.set(title=f"{c.scene}: tests {c.test_ratio:.2f}x, time {c.time_ratio:.2f}x", xlabel="frame")
            ax.legend(fontsize=7)
        fig.tight_layout()
        _save_png(fig, args.png)
        plt.close(fig)
        print(f"wrote {args.png}")
    return out


# ---- split rules ------------------------------------------------------------------------------
SPLIT_BVS = ("aabb", "obb", "obb_sphere", "kdop18")


def run_splits(args) -> dict:
    from ..bvh import build_bvh
    from ..collide import collide
    from ..mesh import load_mesh
    from ..transforms import make_pose, random_rotations
    cases = []
    for name in RIGID_SCENES:
        scene = _load(name, args.frames)
        a, b = scene.bodies[0], scene.bodies[1]
        poses = [(np.asarray(a.link_poses[f])[0], np.asarray(b.link_poses[f])[0]) for f in range(args.frames)]
        cases.append((name, a.body.links[0].mesh, b.body.links[0].mesh, poses))
    if args.env and args.rob:
        env, rob = load_mesh(args.env), load_mesh(args.rob)
        rng = np.random.default_rng(0)
        lo, hi = env.vertices.min(axis=0), env.vertices.max(axis=0)
        rots = random_rotations(args.poses, rng)
        poses = [(np.eye(4), make_pose(rots[k], rng.uniform(lo, hi))) for k in range(args.poses)]
        cases.append(("fcl env/rob", env, rob, poses))
    elif args.env or args.rob:
        raise ValueError("--env and --rob go together")
    rows = []
    out = {}
    for name, ma, mb, poses in cases:
        for bv in SPLIT_BVS:
            per = {}
            for split in ("median", "mean", "sah", "volume"):
                ta, tb = build_bvh(ma, bv, 1, split=split), build_bvh(mb, bv, 1, split=split)
                n = sum(collide(ta, pa, tb, pb, contacts="all").stats.bv_tests for pa, pb in poses)
                per[split] = n / len(poses)
            rows.append([name, bv, f"{per['median']:.0f}", f"{per['mean']:.0f}", f"{per['sah']:.0f}",
                         f"{per['volume']:.0f}", fmt_ratio(per["sah"] / per["median"]),
                         fmt_ratio(per["volume"] / per["median"])])
            out[f"{name}/{bv}"] = per
    print("node tests per query (all contacts) by split rule; ratios to the median split:")
    print(table(["pair", "bv", "median", "mean", "sah", "volume", "sah/median", "volume/median"], rows))
    return out
