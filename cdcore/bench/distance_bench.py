"""``cdcore-bench distance``: cdcore.distance against python-fcl's distance on linked tori.

Two tori (major radius 1, tube radius 0.25), ~2K and ~16K triangles, linked like chain
links: A at the identity, B rotated 90 degrees about x and moved along x so that the tube
surfaces are 0.1 or 0.01 apart, plus a seeded set of random near poses around the linked
configuration (gap in [0.01, 0.1], tilt <= 4 degrees, jitter <= 0.02: some may touch).

Measured per mesh size, time per query (median [IQR]):

* ``cdcore.distance(bvh_a, I, bvh_b, pose)`` (exact: abs_err = rel_err = 0) for obb,
  obb_sphere, aabb and sphere hierarchies (``--bv`` for others, k-DOPs included);
* python-fcl: ``fcl.distance(o1, o2, DistanceRequest(enable_nearest_points=True), result)``
  on BVHModel (OBBRSS) objects built once; B's transform (random poses) and a fresh
  ``DistanceResult`` are set up outside the timed call.

Fixed poses: every engine ``--repeat`` calls, interleaved in blocks of 10; random poses:
every engine over the whole pose list, several passes, every call timed. Every distance
must agree with python-fcl's to 1e-6 relative (1e-9 absolute near 0): a disagreement is
reported loudly and the exit code is 1. The target is cdcore / fcl <= 1.0 per query.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import sys
import time

import numpy as np

from .output import atomic_write, output_file, output_path_problem
from .common import fmt_ratio, fmt_time, linked_pose, near_contact_poses, summarize, table, torus, torus_mesh

NAME = "distance"

MESHES = (("2K", 64, 16), ("16K", 128, 64))  # label, sections around the ring, around the tube
FIXED_POSES = (("gap 0.1", 0.1), ("gap 0.01", 0.01))
RANDOM_POSE = "random near"
RANDOM_GAPS = (0.01, 0.1)
VARIANTS = ("obb", "obb_sphere", "aabb", "sphere")
TARGET = 1.0  # cdcore / python-fcl per query
RTOL = 1e-6  # distance agreement with python-fcl
ATOL = 1e-9
BLOCK = 10


class Settings:
    def __init__(self, quick: bool, repeat: int | None, bvs):
        self.quick = quick
        self.repeat = repeat or (100 if quick else 1000)
        self.n_random = 20 if quick else 50
        self.random_passes = 3 if quick else 10
        self.bvs = tuple(bvs)
        self.seed = 20240611

    def as_dict(self):
        return dict(quick=self.quick, repeat=self.repeat, n_random_poses=self.n_random,
                    random_passes=self.random_passes, variants=list(self.bvs), seed=self.seed)


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _bv_list(text):
    from ..bv import BV_TYPES
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [n for n in names if n not in BV_TYPES]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {sorted(BV_TYPES)}, got {text!r}")
    return names


def add_parser(subparsers):
    p = subparsers.add_parser(
        NAME, help="cdcore.distance vs python-fcl's distance on linked tori",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer repeats and poses (well under a minute)")
    p.add_argument("--repeat", type=_positive_int, metavar="N",
                   help="timed calls per fixed pose and engine (default 1000, --quick 100)")
    p.add_argument("--bv", type=_bv_list, metavar="LIST", default=list(VARIANTS),
                   help=f"comma-separated bounding-volume types (default {','.join(VARIANTS)})")
    p.add_argument("--json", type=output_file, metavar="PATH", help="also write every result row to PATH as JSON")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    try:
        import fcl
    except Exception as exc:  # ImportError, or a broken shared library
        print(f"cdcore-bench distance: python-fcl is not importable ({type(exc).__name__}: {exc}).\n"
              "Install it with `pip install 'python-fcl>=0.7'` (the project's [bench] extra) "
              "and run again.", file=sys.stderr)
        return 2
    problem = args.json and output_path_problem(args.json)
    if problem:  # before the run, not after it
        print(f"cdcore-bench distance: --json: {problem}", file=sys.stderr)
        return 2
    bench = DistanceBench(fcl, Settings(args.quick, args.repeat, args.bv))
    try:
        bench.run_all()
    except KeyboardInterrupt:
        print("\ncdcore-bench distance: interrupted", file=sys.stderr)
        return 130
    print(bench.report())
    if args.json:
        atomic_write(args.json, lambda fh: json.dump(dict(meta=bench.meta, rows=bench.rows,
                                                          disagreements=bench.disagreements), fh, indent=1))
        print(f"\nwrote {len(bench.rows)} rows to {args.json}")
    return 0 if not bench.disagreements else 1


def _nogc(fn):
    enabled = gc.isenabled()
    gc.disable()
    try:
        return fn()
    finally:
        if enabled:
            gc.enable()


def _agree(d, ref):
    return abs(d - ref) <= max(RTOL * abs(ref), ATOL)


class DistanceBench:
    def __init__(self, fcl, settings: Settings):
        self.fcl = fcl
        self.s = settings
        self.rows: list[dict] = []
        self.disagreements: list[str] = []
        self.meta: dict = {}
        self.elapsed = 0.0

    # -- helpers --------------------------------------------------------------------
    def _fcl_object(self, vertices, faces, pose):
        fcl = self.fcl
        model = fcl.BVHModel()
        model.beginModel(len(faces), len(vertices))
        model.addSubModel(vertices, faces)
        model.endModel()
        return fcl.CollisionObject(model, self._fcl_transform(pose))

    def _fcl_transform(self, pose):
        return self.fcl.Transform(np.ascontiguousarray(pose[:3, :3]), np.ascontiguousarray(pose[:3, 3]))

    def _disagree(self, message):
        self.disagreements.append(message)
        print(f"!!! DISTANCE DISAGREEMENT: {message}", file=sys.stderr)

    # -- driver ---------------------------------------------------------------------
    def run_all(self):
        import numba

        from .fcl_bench import _fcl_version, _load_avg
        t0 = time.perf_counter()
        self.meta = dict(
            benchmark="distance", python=platform.python_version(), numpy=np.__version__,
            numba=numba.__version__, python_fcl=_fcl_version(self.fcl), machine=platform.machine(),
            cpu_count=os.cpu_count(), load_avg_start=_load_avg(), settings=self.s.as_dict(),
            meshes={label: dict(n_major=nm, n_minor=nn, n_tris=2 * nm * nn) for label, nm, nn in MESHES})
        for label, nm, nn in MESHES:
            print(f"distance bench: {label} ...", file=sys.stderr, flush=True)
            self._bench_mesh(label, nm, nn)
        self.elapsed = time.perf_counter() - t0
        self.meta["elapsed_s"] = self.elapsed
        self.meta["load_avg_end"] = _load_avg()

    def _bench_mesh(self, label, nm, nn):
        import cdcore
        fcl = self.fcl
        v, f = torus(nm, nn)
        mesh = torus_mesh(nm, nn)
        common = dict(mesh=label, n_tris=len(f))
        bvhs = {bv: (cdcore.build_bvh(mesh, bv), cdcore.build_bvh(mesh, bv)) for bv in self.s.bvs}
        eye = np.eye(4)
        oa = self._fcl_object(v, f, eye)
        ob = self._fcl_object(v, f, eye)
        req = fcl.DistanceRequest(enable_nearest_points=True)
        dist = cdcore.distance
        slot = [None]

        def fcl_prep():
            slot[0] = fcl.DistanceResult()

        def fcl_call():
            return fcl.distance(oa, ob, req, slot[0])

        def cd_call(bv, pose):
            ba, bb = bvhs[bv]
            return lambda: dist(ba, eye, bb, pose).distance

        # fixed poses, engines interleaved in blocks
        for pose_name, gap in FIXED_POSES:
            pose = linked_pose(gap)
            ob.setTransform(self._fcl_transform(pose))
            methods = [("python-fcl", "obbrss", fcl_call, fcl_prep)]
            methods += [("cdcore", bv, cd_call(bv, pose), None) for bv in self.s.bvs]
            answers = []
            for m in methods:  # warm-up and the answer
                for _ in range(3):
                    fcl_prep()
                    d = m[2]()
                answers.append(float(d))
            samples = [[] for _ in methods]
            rounds = max(1, math.ceil(self.s.repeat / BLOCK))

            def body():
                pc = time.perf_counter
                for r in range(rounds):
                    block = min(BLOCK, self.s.repeat - r * BLOCK)
                    for i, m in enumerate(methods):
                        fn, prep = m[2], m[3]
                        out = samples[i]
                        for _ in range(block):
                            if prep is not None:
                                prep()
                            t0 = pc()
                            fn()
                            out.append(pc() - t0)
            _nogc(body)
            ops = {bv: dist(*bvhs[bv][:1], eye, bvhs[bv][1], pose).stats for bv in self.s.bvs}
            self._rows(common, pose_name, 1, methods, samples, [[a] for a in answers], ops)

        # random near poses
        poses = near_contact_poses(self.s.n_random, seed=self.s.seed, gap_range=RANDOM_GAPS)
        tfs = [self._fcl_transform(p) for p in poses]
        n = len(poses)

        def fcl_k(k):
            ob.setTransform(tfs[k])
            slot[0] = fcl.DistanceResult()

        methods = [("python-fcl", "obbrss", None)] + [("cdcore", bv, None) for bv in self.s.bvs]
        answers = [[] for _ in methods]
        for k in range(n):
            fcl_k(k)
            answers[0].append(float(fcl_call()))
            for i, bv in enumerate(self.s.bvs, start=1):
                ba, bb = bvhs[bv]
                answers[i].append(dist(ba, eye, bb, poses[k]).distance)
        samples = [[] for _ in methods]

        def body():
            pc = time.perf_counter
            for _ in range(self.s.random_passes):
                out = samples[0]
                for k in range(n):
                    fcl_k(k)
                    t0 = pc()
                    fcl_call()
                    out.append(pc() - t0)
                for i, bv in enumerate(self.s.bvs, start=1):
                    ba, bb = bvhs[bv]
                    out = samples[i]
                    for k in range(n):
                        p = poses[k]
                        t0 = pc()
                        dist(ba, eye, bb, p)
                        out.append(pc() - t0)
        _nogc(body)
        ops = {}
        for bv in self.s.bvs:
            ba, bb = bvhs[bv]
            st = [dist(ba, eye, bb, p).stats for p in poses]
            ops[bv] = (float(np.mean([x.bv_tests for x in st])), float(np.mean([x.prim_tests for x in st])))
        self._rows(common, RANDOM_POSE, n, methods, samples, answers, ops)

    def _rows(self, common, pose_name, n_poses, methods, samples, answers, ops):
        fcl_st = summarize(samples[0])
        ref = answers[0]
        for i, m in enumerate(methods):
            engine, bv = m[0], m[1]
            st = summarize(samples[i])
            got = answers[i]
            bad = [k for k in range(len(got)) if not _agree(got[k], ref[k])]
            if engine == "cdcore" and bad:
                k = bad[0]
                self._disagree(f"{common['mesh']} {pose_name}: cdcore {bv} and python-fcl disagree on {len(bad)} of "
                               f"{len(got)} poses (first: pose {k}, cdcore {got[k]!r}, fcl {ref[k]!r})")
            row = dict(section="distance", **common, pose=pose_name, n_poses=n_poses, engine=engine, bv=bv,
                       variant="python-fcl" if engine != "cdcore" else bv, median_s=st["median"],
                       iqr_s=st["iqr"], min_s=st["min"], n_samples=st["n"],
                       distance=float(got[0]) if n_poses == 1 else None,
                       distance_min=float(min(got)), distance_max=float(max(got)), n_zero=int(sum(d == 0 for d in got)),
                       agree_with_fcl=not bad, fcl_median_s=fcl_st["median"])
            if engine == "cdcore":
                ratio = st["median"] / fcl_st["median"]
                o = ops[bv]
                bvt, prt = (o.bv_tests, o.prim_tests) if not isinstance(o, tuple) else o
                row.update(ratio=ratio, target=TARGET, meets_target=bool(ratio <= TARGET),
                           bv_tests=float(bvt), prim_tests=float(prt))
            self.rows.append(row)

    # -- report ---------------------------------------------------------------------
    def report(self) -> str:
        s = self.s
        m = self.meta
        out = []
        mesh_desc = ", ".join(f"{label} = torus {v['n_major']}x{v['n_minor']} ({v['n_tris']} triangles)"
                              for label, v in m["meshes"].items())
        out.append(f"cdcore.distance vs python-fcl {m['python_fcl']} distance on linked tori "
                   f"({'quick' if s.quick else 'full'} run, {self.elapsed:.0f} s)")
        load = ""
        if m.get("load_avg_start") is not None:
            load = f", 1-min load average {m['load_avg_start']:.2f} at the start, {m['load_avg_end']:.2f} at the end"
        out.append(f"python {m['python']}, numpy {m['numpy']}, numba {m['numba']}, {m['machine']}, "
                   f"{m['cpu_count']} CPUs{load}")
        busy = max(m.get("load_avg_start") or 0.0, m.get("load_avg_end") or 0.0)
        if busy > 0.5 and m.get("load_avg_start") is not None:
            out.append("note: the machine was not idle (load average > 0.5): absolute times are noisy; the "
                       "ratios, measured interleaved, less so")
        out.append(f"meshes: {mesh_desc}; A at the identity, B rotated 90 deg about x, through A's hole")
        out.append(f"poses: tube gaps 0.1 and 0.01; {s.n_random} random near poses (gap in "
                   f"[{RANDOM_GAPS[0]}, {RANDOM_GAPS[1]}], <= 4 deg tilt, <= 0.02 jitter, seed {s.seed})")
        out.append("python-fcl: fcl.distance(o1, o2, DistanceRequest(enable_nearest_points=True), DistanceResult()) "
                   "on OBBRSS BVHModels; cdcore: distance(bvh_a, I, bvh_b, pose), exact")
        out.append(f"time per query: median [IQR] over {s.repeat} calls per fixed pose, {s.random_passes} passes x "
                   f"{s.n_random} random poses; BV/tri tests: cdcore's counts per query (random: mean)")
        out.append("")
        rows = []
        for r in self.rows:
            if r["n_poses"] == 1:
                d = f"{r['distance']:.9f}"
            else:
                d = f"{r['distance_min']:.4f}..{r['distance_max']:.4f}"
                if r["n_zero"]:
                    d += f" ({r['n_zero']} zero)"
            if r["engine"] == "cdcore":
                verdict = ("ok" if r["meets_target"] else "MISS") + f" (<= {TARGET:.1f}x)"
                agree = "yes" if r["agree_with_fcl"] else "NO"
                rows.append([r["mesh"], r["pose"], r["variant"], d, agree, fmt_time(r["median_s"]),
                             fmt_time(r["iqr_s"]), f"{r['bv_tests']:.0f}", f"{r['prim_tests']:.0f}",
                             fmt_ratio(r["ratio"]), verdict])
            else:
                rows.append([r["mesh"], r["pose"], r["variant"], d, "(ref)", fmt_time(r["median_s"]),
                             fmt_time(r["iqr_s"]), "", "", "(ref)", ""])
        out.append(table(["mesh", "pose", "engine", "distance", "= fcl", "median", "IQR", "BV tests", "tri tests",
                          "cdcore / fcl", "verdict"], rows, "<<<<<>>>>><"))
        out.append("")
        cd = [r for r in self.rows if r["engine"] == "cdcore"]
        out.append(f"verdict (target: cdcore / python-fcl <= {TARGET:.1f}x per query):")
        for bv in s.bvs:
            rs = [r for r in cd if r["bv"] == bv]
            worst = max(rs, key=lambda r: r["ratio"])
            n_ok = sum(r["meets_target"] for r in rs)
            status = "meets the target" if n_ok == len(rs) else "MISSES the target"
            out.append(f"  {bv:<11} {status}: {n_ok}/{len(rs)} rows within it, worst {fmt_ratio(worst['ratio'])} "
                       f"({worst['mesh']} {worst['pose']})")
        if self.disagreements:
            out.append(f"DISAGREEMENTS with python-fcl ({len(self.disagreements)}):")
            out.extend(f"  {d}" for d in self.disagreements)
        else:
            out.append(f"every distance agrees with python-fcl (to {RTOL:g} relative, {ATOL:g} absolute)")
        return "\n".join(out)
