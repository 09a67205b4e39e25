"""``cdcore-bench fcl``: cdcore against python-fcl on linked tori.

Two tori (major radius 1, tube radius 0.25) linked like chain links: A at the identity, B
rotated 90 degrees about x and moved along x so that the tube surfaces are 0.1 or 0.01
apart, or overlap by 0.05, plus a seeded set of random near-contact poses. Poses whose
root volumes do not even overlap would measure call overhead only, so every pose here is
interlocked.

Measured, per mesh size (~2K and ~16K triangles):

* ``collide(..., contacts="first")`` per query for obb, obb_sphere, aabb (default tests)
  and aabb/sat6, against ``fcl.collide`` with ``num_max_contacts=1, enable_contact=False``
  (objects built once; B's transform set with ``setTransform`` outside the timed call);
* ``collide_batch`` over the random poses (total / N) against a python-fcl loop over the
  same poses (``setTransform`` + ``collide``, total / N);
* build time per triangle for every BV type (and fcl's OBBRSS build);
* AABB refit of a ~100K-triangle torus; import and first-call cost in a fresh process;
* with ``--env env.obj --rob rob.obj`` (FCL's ``test/fcl_resources``, not shipped): FCL's own
  env/rob benchmark, rob at random poses inside env's box (uniform position, uniform
  rotation), first contact, per-pose time ratio to python-fcl and its geometric mean
  (``--envrob-only`` runs that section alone).

Every pose's hit/no-hit must agree between python-fcl and every cdcore variant (and with
the geometry for the fixed gaps); a disagreement is reported loudly and the exit code is 1.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np

from .output import atomic_write, output_file, output_path_problem
from .common import (fmt_ratio, fmt_time, linked_pose, near_contact_poses, summarize, table,
                     time_calls, torus, torus_mesh)

NAME = "fcl"

MESHES = (("2K", 64, 16), ("16K", 128, 64))  # label, sections around the ring, around the tube
FIXED_POSES = (("gap 0.1", 0.1), ("gap 0.01", 0.01), ("overlap 0.05", -0.05))
RANDOM_POSE = "random near-contact"
VARIANTS = (("obb", None), ("obb_sphere", None), ("aabb", None), ("aabb", "sat6"))
BUILD_BVS = ("aabb", "obb", "sphere", "obb_sphere")
REFIT_SIZE = (512, 98)  # 100,352 triangles

TARGET_COLLIDE = 1.0  # cdcore / python-fcl per query
TARGET_BATCH = 0.5  # collide_batch per query / python-fcl loop per query
TARGET_REFIT_S = 2e-3  # AABB refit of ~100K triangles
TARGET_BUILD_NS = 500.0  # ns per triangle
TARGET_FAR_COLLIDE = 1.0  # far-apart collide / python-fcl pose-and-call loop
TARGET_FAR_QUERY = 0.5  # prepared Query / python-fcl pose-and-call loop
TARGET_ENVROB = 0.7  # geometric mean over env/rob's random poses of cdcore / python-fcl per query

BLOCK = 10  # consecutive timed calls of one method before switching to the next


class Settings:
    """Sizes of one run (``--quick`` or full, ``--repeat``)."""

    def __init__(self, quick: bool, repeat: int | None):
        self.quick = quick
        self.repeat = repeat if repeat is not None else (100 if quick else 1000)
        self.n_random = 40 if quick else 256
        self.n_envrob = 100 if quick else 256
        self.random_passes = max(2, self.repeat // 20)
        self.batch_passes = max(3, self.repeat // 10)
        self.builds = 3 if quick else 15
        self.refits = 20
        self.startup_runs = 1 if quick else 3
        self.seed = 20240611

    def as_dict(self):
        return dict(quick=self.quick, repeat=self.repeat, n_random_poses=self.n_random,
                    n_envrob_poses=self.n_envrob, random_passes=self.random_passes, batch_passes=self.batch_passes,
                    builds=self.builds, refits=self.refits, startup_runs=self.startup_runs,
                    seed=self.seed)


# ---- command line -----------------------------------------------------------------
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
        NAME, help="cdcore vs python-fcl on linked tori (collide, collide_batch, build, refit, startup)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="fewer repeats and poses (finishes in well under a minute)")
    p.add_argument("--json", type=output_file, metavar="PATH", help="also write every result row to PATH as JSON")
    p.add_argument("--repeat", type=_positive_int, metavar="N",
                   help="timed calls per fixed pose and engine (default 1000, --quick 100); the "
                        "random poses get N/20 passes and collide_batch N/10 calls")
    p.add_argument("--env", metavar="OBJ", help="FCL's env.obj (test/fcl_resources): adds the env/rob section")
    p.add_argument("--rob", metavar="OBJ", help="FCL's rob.obj (goes with --env)")
    p.add_argument("--envrob-only", action="store_true", help="run only the env/rob section (needs --env, --rob)")
    p.set_defaults(run=run)
    return p


def _load_envrob(args):
    """(env, rob) meshes from --env/--rob, None without them; ValueError with a readable message."""
    if not args.env and not args.rob:
        if args.envrob_only:
            raise ValueError("--envrob-only needs --env and --rob")
        return None
    if not (args.env and args.rob):
        raise ValueError("--env and --rob go together")
    from ..mesh import load_mesh
    out = []
    for flag, path in (("--env", args.env), ("--rob", args.rob)):
        try:
            out.append(load_mesh(path))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{flag} {path}: {exc}") from None
    return tuple(out)


def run(args) -> int:
    try:
        import fcl
    except Exception as exc:  # ImportError, or a broken shared library
        print(f"cdcore-bench fcl: python-fcl is not importable ({type(exc).__name__}: {exc}).\n"
              "Install it with `pip install 'python-fcl>=0.7'` (the project's [bench] extra) "
              "and run again.", file=sys.stderr)
        return 2
    problem = args.json and output_path_problem(args.json)
    if problem:  # before the run, not after it
        print(f"cdcore-bench fcl: --json: {problem}", file=sys.stderr)
        return 2
    try:
        envrob = _load_envrob(args)
    except ValueError as exc:
        print(f"cdcore-bench fcl: {exc}", file=sys.stderr)
        return 2
    settings = Settings(args.quick, args.repeat)
    bench = FclBench(fcl, settings, envrob=envrob, envrob_only=args.envrob_only)
    try:
        bench.run_all()
    except KeyboardInterrupt:
        print("\ncdcore-bench fcl: interrupted", file=sys.stderr)
        return 130
    print(bench.report())
    if args.json:
        atomic_write(args.json, lambda fh: json.dump(bench.as_json(), fh, indent=1))
        print(f"\nwrote {len(bench.rows)} rows to {args.json}")
    return 0 if not bench.disagreements else 1


# ---- the benchmark ----------------------------------------------------------------
def _variant_label(bv, test):
    return f"{bv}/{test}"


def _nogc(fn):
    """Run ``fn()`` with the garbage collector paused (as timeit does)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return fn()
    finally:
        if enabled:
            gc.enable()


class FclBench:
    def __init__(self, fcl, settings: Settings, envrob=None, envrob_only=False):
        self.fcl = fcl
        self.s = settings
        self.envrob = envrob
        self.envrob_only = bool(envrob_only and envrob is not None)
        self.rows: list[dict] = []
        self.disagreements: list[str] = []
        self.meta: dict = {}
        self.elapsed = 0.0
        self._bar = None

    # -- helpers --------------------------------------------------------------------
    def _fcl_object(self, vertices, faces):
        fcl = self.fcl
        model = fcl.BVHModel()
        model.beginModel(len(faces), len(vertices))  # (num_tris, num_vertices): that order
        model.addSubModel(vertices, faces)
        model.endModel()
        return model

    def _fcl_transform(self, pose):
        return self.fcl.Transform(np.ascontiguousarray(pose[:3, :3]), np.ascontiguousarray(pose[:3, 3]))

    def _disagree(self, message):
        self.disagreements.append(message)
        text = f"!!! HIT DISAGREEMENT: {message}"
        if self._bar is not None:
            self._bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr)

    def _step(self, what):
        """Context manager: one progress-bar step named ``what``."""
        bench = self

        class _Step:
            def __enter__(self):
                if bench._bar is not None:
                    bench._bar.set_description(what)

            def __exit__(self, *exc):
                if bench._bar is not None and exc[0] is None:
                    bench._bar.update(1)
                return False
        return _Step()

    # -- driver ---------------------------------------------------------------------
    def run_all(self):
        from tqdm import tqdm

        import cdcore
        import numba

        from .. import BV_TYPES
        self.variants = [(bv, test or BV_TYPES[bv].tests[0]) for bv, test in VARIANTS]
        n_tasks = (0 if self.envrob_only else len(MESHES) * (len(FIXED_POSES) + 4) + 2) + (self.envrob is not None)
        t0 = time.perf_counter()
        self.meta = dict(
            benchmark="fcl", python=platform.python_version(), numpy=np.__version__,
            numba=numba.__version__, python_fcl=_fcl_version(self.fcl), machine=platform.machine(),
            cpu_count=os.cpu_count(), load_avg_start=_load_avg(), settings=self.s.as_dict(),
            meshes=({} if self.envrob_only else
                    {label: dict(n_major=nm, n_minor=nn, n_tris=2 * nm * nn) for label, nm, nn in MESHES}),
            pose_kinds=[name for name, _ in FIXED_POSES] + [RANDOM_POSE],
            variants=[_variant_label(*v) for v in self.variants])
        with tqdm(total=n_tasks, file=sys.stderr, desc="fcl bench", leave=False, dynamic_ncols=True) as bar:
            self._bar = bar
            try:
                if not self.envrob_only:
                    for label, nm, nn in MESHES:
                        self._bench_mesh(cdcore, label, nm, nn)
                    with self._step("refit 100K"):
                        self._bench_refit(cdcore)
                    with self._step("fresh-process startup"):
                        self._bench_startup()
                if self.envrob is not None:
                    with self._step("env/rob random poses"):
                        self._bench_envrob(cdcore)
            finally:
                self._bar = None
        self.elapsed = time.perf_counter() - t0
        self.meta["elapsed_s"] = self.elapsed
        self.meta["load_avg_end"] = _load_avg()

    def _bench_mesh(self, cdcore, label, nm, nn):
        fcl = self.fcl
        v, f = torus(nm, nn)
        mesh = torus_mesh(nm, nn)
        n_tris = len(f)
        common = dict(mesh=label, n_tris=n_tris)

        with self._step(f"{label}: build"):
            self._bench_build(cdcore, label, mesh, v, f)
        bvhs = {}
        for bv, test in self.variants:
            if bv not in bvhs:
                bvhs[bv] = (cdcore.build_bvh(mesh, bv), cdcore.build_bvh(mesh, bv))
        oa = fcl.CollisionObject(self._fcl_object(v, f), fcl.Transform())
        ob = fcl.CollisionObject(self._fcl_object(v, f), fcl.Transform())
        req = fcl.CollisionRequest(num_max_contacts=1, enable_contact=False)
        eye = np.eye(4)
        collide = cdcore.collide

        def fcl_call():
            return fcl.collide(oa, ob, req) > 0

        def cd_call(bv, test, pose):
            ba, bb = bvhs[bv]
            return lambda: collide(ba, eye, bb, pose, test=test, contacts="first").hit

        def op_counts(pose_list):
            """Mean BV and triangle tests per query of every cdcore variant."""
            out = {}
            for bv, test in self.variants:
                ba, bb = bvhs[bv]
                st = [collide(ba, eye, bb, p, test=test, contacts="first").stats for p in pose_list]
                out[(bv, test)] = (float(np.mean([x.bv_tests for x in st])),
                                   float(np.mean([x.prim_tests for x in st])))
            return out

        # fixed poses, every engine interleaved in blocks of BLOCK calls
        for pose_name, gap in FIXED_POSES:
            with self._step(f"{label}: {pose_name}"):
                pose = linked_pose(gap)
                ob.setTransform(self._fcl_transform(pose))
                methods = [("python-fcl", "obbrss", None, fcl_call)]
                methods += [("cdcore", bv, test, cd_call(bv, test, pose)) for bv, test in self.variants]
                samples, hits = self._interleaved(methods, self.s.repeat)
                expected = gap < 0
                if hits[0] != expected:
                    self._disagree(f"{label} {pose_name}: python-fcl says hit={hits[0]}, the geometry "
                                   f"(gap {gap:+g}) says hit={expected}")
                self._collide_rows(common, pose_name, 1, methods, samples, hits, [hits[0]], expected,
                                   op_counts([pose]))

        # random near-contact poses
        poses = near_contact_poses(self.s.n_random, seed=self.s.seed)
        tfs = [self._fcl_transform(p) for p in poses]
        n = len(poses)
        with self._step(f"{label}: {RANDOM_POSE}"):
            methods = self._pose_methods(collide, oa, ob, req, tfs, bvhs, poses)
            samples, hit_lists = self._random_pass(methods, n, self.s.random_passes)
            fcl_hits = hit_lists[0]
            self._collide_rows(common, RANDOM_POSE, n, methods, samples, hit_lists, fcl_hits, None,
                               op_counts(poses))

        # collide_batch vs a python-fcl loop over the same poses
        with self._step(f"{label}: collide_batch"):
            self._bench_batch(cdcore, common, bvhs, oa, ob, req, tfs, poses, fcl_hits)

        # fixed cost of one call (B far away: only the two roots are tested), against
        # python-fcl's pose-and-call loop (Transform from the (4, 4) pose, setTransform, collide:
        # what a user's loop over numpy poses does)
        with self._step(f"{label}: call overhead"):
            far = np.eye(4)
            far[0, 3] = 10.0
            tf_far = self._fcl_transform(far)
            ob.setTransform(tf_far)

            def fcl_pose_call():  # a user's loop: the pose as a numpy array, converted per call
                ob.setTransform(self._fcl_transform(far))
                return fcl.collide(oa, ob, req) > 0

            def cd_query(bv, test):
                ba, bb = bvhs[bv]
                q = cdcore.Query(ba, bb, test=test)
                return lambda: q(eye, far)

            methods = [("python-fcl pose+call", "obbrss", None, fcl_pose_call),
                       ("python-fcl", "obbrss", None, fcl_call)]
            methods += [("cdcore", bv, test, cd_call(bv, test, far)) for bv, test in self.variants]
            methods += [("cdcore Query", bv, test, cd_query(bv, test)) for bv, test in self.variants]
            samples, _ = self._interleaved(methods, self.s.repeat)
            fars = np.repeat(far[None], n, axis=0)
            batch = {}
            for bv, test in self.variants:
                ba, bb = bvhs[bv]
                fn = lambda ba=ba, bb=bb, test=test: cdcore.collide_batch(ba, bb, fars, pose_a=eye, test=test)  # noqa: E731
                fn()
                ts, _ = _nogc(lambda: time_calls(fn, self.s.batch_passes))
                batch[(bv, test)] = summarize([t / n for t in ts])["median"]
            fcl_med = summarize(samples[0])["median"]
            for i, m in enumerate(methods):
                st = summarize(samples[i])
                cd = m[0].startswith("cdcore")
                row = dict(section="overhead", **common, pose="disjoint roots (B at x = 10)", engine=m[0], bv=m[1],
                           test=m[2], variant=(f"{m[0]} {_variant_label(m[1], m[2])}" if cd else m[0]),
                           median_s=st["median"], iqr_s=st["iqr"], n_samples=st["n"], fcl_median_s=fcl_med,
                           ratio=st["median"] / fcl_med if i else None,
                           batch_per_query_s=batch.get((m[1], m[2])) if m[0] == "cdcore" else None)
                if cd:
                    target = TARGET_FAR_COLLIDE if m[0] == "cdcore" else TARGET_FAR_QUERY
                    row.update(target=target, meets_target=bool(row["ratio"] <= target))
                self.rows.append(row)

    def _pose_methods(self, collide, oa, ob, req, tfs, bvhs, poses):
        """``_random_pass``'s methods over a pose list: python-fcl (B's transform set outside
        the timed call) and ``collide(..., contacts="first")`` for every variant."""
        fcl = self.fcl
        eye = np.eye(4)

        def fcl_k(k):
            return fcl.collide(oa, ob, req) > 0

        def fcl_prep(k):
            ob.setTransform(tfs[k])

        def cd_k(bv, test):
            ba, bb = bvhs[bv]
            return lambda k: collide(ba, eye, bb, poses[k], test=test, contacts="first").hit

        return ([("python-fcl", "obbrss", None, fcl_k, fcl_prep)]
                + [("cdcore", bv, test, cd_k(bv, test), None) for bv, test in self.variants])

    def _interleaved(self, methods, repeat):
        """Fixed pose: per method ``repeat`` timed calls, in blocks of BLOCK, methods in turn."""
        hits = []
        for m in methods:  # warm-up (loads cached kernels for the first time) + the answer
            fn = m[3]
            for _ in range(3):
                fn()
            hits.append(bool(fn()))
        samples = [[] for _ in methods]
        rounds = max(1, math.ceil(repeat / BLOCK))

        def body():
            for r in range(rounds):
                block = min(BLOCK, repeat - r * BLOCK)
                for i, m in enumerate(methods):
                    ts, _ = time_calls(m[3], block)
                    samples[i].extend(ts)
        _nogc(body)
        return samples, hits

    def _random_pass(self, methods, n, passes):
        """Random poses: every method over the whole pose list, ``passes`` times; every call timed."""
        pc = time.perf_counter
        hit_lists = []
        for m in methods:
            fn, prep = m[3], m[4]
            hits = []
            for k in range(n):
                if prep is not None:
                    prep(k)
                hits.append(bool(fn(k)))
            hit_lists.append(hits)
        samples = [[] for _ in methods]

        def body():
            for _ in range(passes):
                for i, m in enumerate(methods):
                    fn, prep = m[3], m[4]
                    out = samples[i]
                    for k in range(n):
                        if prep is not None:
                            prep(k)
                        t0 = pc()
                        fn(k)
                        out.append(pc() - t0)
        _nogc(body)
        return samples, hit_lists

    def _collide_rows(self, common, pose_name, n_poses, methods, samples, hits, fcl_hits, expected, ops):
        fcl_stats = summarize(samples[0])
        for i, m in enumerate(methods):
            engine, bv, test = m[0], m[1], m[2]
            st = summarize(samples[i])
            h = hits[i] if isinstance(hits[i], list) else [hits[i]]
            agree = h == list(fcl_hits)
            if engine.startswith("cdcore") and not agree:
                bad = [k for k in range(len(h)) if h[k] != fcl_hits[k]]
                self._disagree(f"{common['mesh']} {pose_name}: cdcore {_variant_label(bv, test)} and python-fcl "
                               f"disagree on {len(bad)} of {len(h)} poses (first: pose {bad[0]}, "
                               f"cdcore hit={h[bad[0]]}, fcl hit={fcl_hits[bad[0]]})")
            ratio = st["median"] / fcl_stats["median"] if engine == "cdcore" else None
            row = dict(section="collide", **common, pose=pose_name, n_poses=n_poses, engine=engine, bv=bv,
                       test=test, variant="python-fcl" if engine != "cdcore" else _variant_label(bv, test),
                       median_s=st["median"], iqr_s=st["iqr"], min_s=st["min"], n_samples=st["n"],
                       hits=int(sum(h)), agree_with_fcl=bool(agree),
                       fcl_median_s=fcl_stats["median"], ratio=ratio)
            if expected is not None:
                row["expected_hit"] = bool(expected)
            if engine == "cdcore":
                row.update(target=TARGET_COLLIDE, meets_target=bool(ratio <= TARGET_COLLIDE),
                           bv_tests=ops[(bv, test)][0], prim_tests=ops[(bv, test)][1])
            self.rows.append(row)

    def _bench_batch(self, cdcore, common, bvhs, oa, ob, req, tfs, poses, fcl_hits):
        fcl = self.fcl
        n = len(poses)
        pc = time.perf_counter
        cb = cdcore.collide_batch
        eye = np.eye(4)

        def fcl_loop():
            out = np.empty(n, dtype=bool)
            for k in range(n):
                ob.setTransform(tfs[k])
                out[k] = fcl.collide(oa, ob, req) > 0
            return out

        methods = [("python-fcl", "obbrss", None, fcl_loop)]
        for bv, test in self.variants:
            ba, bb = bvhs[bv]
            methods.append(("cdcore", bv, test,
                            lambda ba=ba, bb=bb, test=test: cb(ba, bb, poses, pose_a=eye, test=test).hits))
            # the same batch on one thread: the parallel speed-up is the ratio of the two rows
            methods.append(("cdcore-serial", bv, test,
                            lambda ba=ba, bb=bb, test=test: cb(ba, bb, poses, pose_a=eye, test=test,
                                                               parallel=False).hits))
        results = [np.asarray(m[3]()) for m in methods]  # warm-up + answers
        if not np.array_equal(results[0], np.asarray(fcl_hits)):
            self._disagree(f"{common['mesh']} batch: the python-fcl loop's hits differ from its single queries")
        samples = [[] for _ in methods]

        def body():
            for _ in range(self.s.batch_passes):
                for i, m in enumerate(methods):
                    t0 = pc()
                    m[3]()
                    samples[i].append((pc() - t0) / n)
        _nogc(body)
        fcl_stats = summarize(samples[0])
        for i, m in enumerate(methods):
            engine, bv, test = m[0], m[1], m[2]
            st = summarize(samples[i])
            agree = bool(np.array_equal(results[i], results[0]))
            if engine.startswith("cdcore") and not agree:
                bad = np.flatnonzero(results[i] != results[0])
                self._disagree(f"{common['mesh']} collide_batch {_variant_label(bv, test)}: disagrees with "
                               f"python-fcl on {len(bad)} of {n} poses (first: pose {bad[0]})")
            ratio = st["median"] / fcl_stats["median"] if engine.startswith("cdcore") else None
            variant = "python-fcl loop" if not engine.startswith("cdcore") else _variant_label(bv, test)
            if engine == "cdcore-serial":
                import numba
                variant += f" (1 thread; parallel: {numba.get_num_threads()})"
            row = dict(section="batch", **common, pose=RANDOM_POSE, n_poses=n, engine=engine, bv=bv, test=test,
                       variant=variant,
                       median_s=st["median"], iqr_s=st["iqr"], min_s=st["min"], n_samples=st["n"],
                       hits=int(results[i].sum()), agree_with_fcl=agree,
                       fcl_median_s=fcl_stats["median"], ratio=ratio)
            if engine == "cdcore":
                row.update(target=TARGET_BATCH, meets_target=bool(ratio <= TARGET_BATCH))
            self.rows.append(row)

    def _bench_build(self, cdcore, label, mesh, v, f):
        n_tris = len(f)

        def timed(fn):
            fn()  # warm-up
            return _nogc(lambda: time_calls(fn, self.s.builds)[0])

        fcl_st = summarize(timed(lambda: self._fcl_object(v, f)))
        fcl_ns = fcl_st["median"] / n_tris * 1e9
        self.rows.append(dict(section="build", mesh=label, n_tris=n_tris, engine="python-fcl", bv="obbrss",
                              variant="python-fcl obbrss", median_s=fcl_st["median"], iqr_s=fcl_st["iqr"],
                              n_samples=fcl_st["n"], ns_per_tri=fcl_ns, fcl_ns_per_tri=fcl_ns, ratio=None))
        for bv in BUILD_BVS:
            st = summarize(timed(lambda bv=bv: cdcore.build_bvh(mesh, bv)))
            ns = st["median"] / n_tris * 1e9
            self.rows.append(dict(section="build", mesh=label, n_tris=n_tris, engine="cdcore", bv=bv,
                                  variant=bv, median_s=st["median"], iqr_s=st["iqr"], n_samples=st["n"],
                                  ns_per_tri=ns, fcl_ns_per_tri=fcl_ns, ratio=ns / fcl_ns,
                                  target=TARGET_BUILD_NS, meets_target=bool(ns <= TARGET_BUILD_NS)))

    def _bench_refit(self, cdcore):
        try:  # internals, for the breakdown rows only
            from .._build import refit_aabb
        except ImportError:
            refit_aabb = None
        nm, nn = REFIT_SIZE
        mesh = torus_mesh(nm, nn)
        bvh = cdcore.build_bvh(mesh, "aabb")
        rng = np.random.default_rng(self.s.seed)
        base = mesh.vertices
        scale = 1e-3
        vsets = [np.ascontiguousarray(base + rng.normal(scale=scale, size=base.shape)) for _ in range(2)]
        n_tris = mesh.n_faces
        for k in range(2):
            bvh.refit(vsets[k], parallel=True)  # warm-up (and the threaded sweep's split, made once)
            bvh.refit(vsets[k], parallel=False)
        import numba
        threads = numba.get_num_threads()

        def public():
            # the threaded and the one-thread sweep, alternating call by call (the same load for both)
            ts = {True: [], False: []}
            for k in range(2 * self.s.refits):
                par = k % 2 == 0
                t0 = time.perf_counter()
                bvh.refit(vsets[k % 2], parallel=par)
                ts[par].append(time.perf_counter() - t0)
            return ts

        def kernel():
            out = np.empty_like(base)
            ts = []
            for k in range(self.s.refits):
                t0 = time.perf_counter()
                # the tree's own pack, faces in primitive order and plan (made by the first refit)
                refit_aabb(vsets[k % 2], out, bvh._F, bvh._I, bvh._tri_verts, *bvh._plan[1:3])
                ts.append(time.perf_counter() - t0)
            return ts

        ts = _nogc(public)
        problems = bvh.check()
        if problems:
            self._disagree(f"refit: the refitted AABB tree fails its invariant check: {problems[:3]}")
        common = dict(section="refit", mesh=f"torus {nm}x{nn}", n_tris=n_tris, engine="cdcore", bv="aabb",
                      perturbation=scale)
        st = summarize(ts[True])
        self.rows.append(dict(common, variant=f"BVH.refit (public call, {threads} threads)", median_s=st["median"],
                              iqr_s=st["iqr"], n_samples=st["n"], ns_per_tri=st["median"] / n_tris * 1e9,
                              target=TARGET_REFIT_S, meets_target=bool(st["median"] <= TARGET_REFIT_S)))
        st = summarize(ts[False])
        self.rows.append(dict(common, variant="BVH.refit(parallel=False), one thread", median_s=st["median"],
                              iqr_s=st["iqr"], n_samples=st["n"], ns_per_tri=st["median"] / n_tris * 1e9))
        if refit_aabb is not None:
            try:
                st = summarize(_nogc(kernel))
            except (TypeError, ValueError, AttributeError):  # the internals changed: skip the breakdown
                return
            self.rows.append(dict(common, variant="  of which refit_aabb kernel (copy, checks, pad, sweep)",
                                  median_s=st["median"], iqr_s=st["iqr"], n_samples=st["n"],
                                  ns_per_tri=st["median"] / n_tris * 1e9))

    def _bench_envrob(self, cdcore):
        """FCL's env/rob benchmark: env at the identity, rob at random poses inside env's box.

        FCL's test draws the translation uniformly in env's extents and a uniform rotation; both
        engines answer first-contact collision for the same poses, each call timed alone (fcl's
        setTransform outside the timed call), every pose ``random_passes`` times with the
        engines taking turns over the whole list. The verdict is the geometric mean over poses
        of (cdcore's median time / fcl's median time) for that pose.
        """
        from ..transforms import make_pose, random_rotations
        fcl = self.fcl
        env, rob = self.envrob
        rng = np.random.default_rng(self.s.seed)
        lo, hi = env.vertices.min(axis=0), env.vertices.max(axis=0)
        n = self.s.n_envrob
        rots = random_rotations(n, rng)
        poses = np.stack([make_pose(rots[k], rng.uniform(lo, hi)) for k in range(n)])
        tfs = [self._fcl_transform(p) for p in poses]
        oa = fcl.CollisionObject(self._fcl_object(env.vertices, env.faces), fcl.Transform())
        ob = fcl.CollisionObject(self._fcl_object(rob.vertices, rob.faces), fcl.Transform())
        req = fcl.CollisionRequest(num_max_contacts=1, enable_contact=False)
        bvhs = {}
        for bv, _ in self.variants:
            if bv not in bvhs:
                bvhs[bv] = (cdcore.build_bvh(env, bv), cdcore.build_bvh(rob, bv))

        def q_k(bv, test):
            q = cdcore.Query(*bvhs[bv], test=test)
            return lambda k: q(poses[k])

        methods = self._pose_methods(cdcore.collide, oa, ob, req, tfs, bvhs, poses)
        methods += [("cdcore Query", bv, test, q_k(bv, test), None) for bv, test in self.variants]
        passes = max(3, self.s.random_passes)
        samples, hit_lists = self._random_pass(methods, n, passes)
        # samples[i] is pass-major: pose k's times are samples[i][k::n]
        per_pose = [np.median(np.asarray(samples[i]).reshape(passes, n), axis=0) for i in range(len(methods))]
        fcl_hits = hit_lists[0]
        label = f"env {env.n_faces} / rob {rob.n_faces} tris"
        fcl_stats = summarize(samples[0])
        for i, m in enumerate(methods):
            engine, bv, test = m[0], m[1], m[2]
            h = hit_lists[i]
            agree = h == fcl_hits
            if engine != "python-fcl" and not agree:
                bad = [k for k in range(n) if h[k] != fcl_hits[k]]
                self._disagree(f"env/rob: {engine} {_variant_label(bv, test)} and python-fcl disagree on "
                               f"{len(bad)} of {n} poses (first: pose {bad[0]}, cdcore hit={h[bad[0]]})")
            st = summarize(samples[i])
            row = dict(section="envrob", mesh=label, pose=f"{n} random", n_poses=n, engine=engine, bv=bv, test=test,
                       variant=("python-fcl" if engine == "python-fcl" else f"{engine} {_variant_label(bv, test)}"),
                       median_s=st["median"], iqr_s=st["iqr"], n_samples=st["n"], hits=int(sum(h)),
                       agree_with_fcl=bool(agree), fcl_median_s=fcl_stats["median"],
                       total_s=float(per_pose[i].sum()), fcl_total_s=float(per_pose[0].sum()))
            if i:
                g = float(np.exp(np.mean(np.log(per_pose[i] / per_pose[0]))))
                row.update(ratio=g, total_ratio=float(per_pose[i].sum() / per_pose[0].sum()))
                if engine == "cdcore":
                    row.update(target=TARGET_ENVROB, meets_target=bool(g <= TARGET_ENVROB))
            else:
                row["ratio"] = None
            self.rows.append(row)

    def _bench_startup(self):
        runs = {"cdcore": [], "python-fcl": []}
        env = dict(os.environ)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        for engine, script in (("cdcore", _STARTUP_CDCORE), ("python-fcl", _STARTUP_FCL)):
            for i in range(self.s.startup_runs + 1):  # the first run makes sure kernels are cached
                proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                                      cwd=root, timeout=600)
                if proc.returncode != 0:
                    raise RuntimeError(f"startup probe ({engine}) failed:\n{proc.stderr}")
                if i > 0:
                    runs[engine].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        keys = (("import", "import"), ("first build (2K tris)", "first_build"),
                ("first collide (gap 0.01)", "first_collide"),
                ("import + first build + first collide", "total"),
                ("warm collide (median of 50)", "warm_collide"))
        for label, key in keys:
            cd = float(np.median([r[key] for r in runs["cdcore"]]))
            fc = float(np.median([r[key] for r in runs["python-fcl"]]))
            self.rows.append(dict(section="startup", variant=label, key=key, engine="cdcore", median_s=cd,
                                  fcl_median_s=fc, ratio=cd / fc if fc > 0 else None,
                                  n_samples=len(runs["cdcore"])))

    # -- output ---------------------------------------------------------------------
    def as_json(self):
        return dict(meta=self.meta, rows=self.rows,
                    agreement=dict(ok=not self.disagreements, disagreements=self.disagreements))

    def report(self) -> str:
        s = self.s
        m = self.meta
        out = []
        mesh_desc = ", ".join(f"{label} = torus {v['n_major']}x{v['n_minor']} ({v['n_tris']} triangles)"
                              for label, v in m["meshes"].items())
        what = "FCL's env/rob" if self.envrob_only else "linked tori"
        out.append(f"cdcore vs python-fcl {m['python_fcl']}: first-contact collision of {what} "
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
        if not self.envrob_only:
            out.append(f"meshes: {mesh_desc}; A at the identity, B rotated 90 deg about x, through A's hole")
            out.append(f"poses: tube gaps +0.1, +0.01, -0.05 (x = 1.5 - gap); {s.n_random} random near-contact "
                       f"poses (gap in [-0.03, 0.03], <= 4 deg tilt, <= 0.02 jitter, seed {s.seed})")
        out.append("")
        out.extend(self._report_tori() if not self.envrob_only else [])
        out.extend(self._report_envrob())
        # 8. summary
        out.append("8. verdict against the targets")
        out.extend(self._summary())
        return "\n".join(out)

    def _report_envrob(self):
        rr = [r for r in self.rows if r["section"] == "envrob"]
        if not rr:
            return []
        out = [f"7. FCL's env/rob ({rr[0]['mesh']}): rob at {rr[0]['n_poses']} random poses in env's box (uniform "
               f"position and rotation, seed {self.s.seed}), first contact, every pose timed "
               f"{max(3, self.s.random_passes)} times",
               "   ratio = geometric mean over poses of (median time / python-fcl's median time for that pose); "
               "total = sum of the per-pose medians"]
        rows = []
        for r in rr:
            verdict = ("" if "meets_target" not in r else
                       ("ok" if r["meets_target"] else "MISS") + f" (<= {TARGET_ENVROB:.1f}x)")
            rows.append([r["variant"], f"{r['hits']}/{r['n_poses']}", fmt_time(r["median_s"]),
                         fmt_time(r["total_s"]), fmt_ratio(r["ratio"]) if r["ratio"] is not None else "(ref)",
                         fmt_ratio(r.get("total_ratio")) if r.get("total_ratio") is not None else "",
                         verdict])
        out.append(table(["engine", "hits", "median", "total", "geo-mean / fcl", "total / fcl", "verdict"],
                         rows, "<>>>>><"))
        out.append("")
        return out

    def _report_tori(self):
        s = self.s
        out = []

        def verdict(row):
            if "meets_target" not in row:
                return ""
            return "ok" if row["meets_target"] else "MISS"

        def ratio_cell(row):
            return fmt_ratio(row.get("ratio")) if row.get("ratio") is not None else "(ref)"

        # 1. collide
        out.append(f"1. collide, first contact, time per query: median [IQR] over {s.repeat} calls per fixed "
                   f"pose, {s.random_passes} passes x {s.n_random} random poses")
        out.append("   python-fcl: fcl.collide(o1, o2, CollisionRequest(num_max_contacts=1, "
                   "enable_contact=False)); cdcore: collide(..., contacts='first')")
        rows = []
        for r in self.rows:
            if r["section"] != "collide":
                continue
            hits = (("hit" if r["hits"] else "no hit") if r["n_poses"] == 1 else f"{r['hits']}/{r['n_poses']} hit")
            ops = ((f"{r['bv_tests']:.0f}", f"{r['prim_tests']:.0f}") if "bv_tests" in r else ("", ""))
            rows.append([r["mesh"], r["pose"], r["variant"], hits, fmt_time(r["median_s"]), fmt_time(r["iqr_s"]),
                         *ops, ratio_cell(r), verdict(r) and f"{verdict(r)} (<= {TARGET_COLLIDE:.1f}x)"])
        out.append(table(["mesh", "pose", "engine", "answer", "median", "IQR", "BV tests", "tri tests",
                          "cdcore / fcl", "verdict"], rows, "<<<<>>>>><"))
        out.append("   (random poses: statistics pooled over every pose and pass; BV/tri tests: cdcore's "
                   "mean counts per query)")
        out.append("")

        # 2. batch
        out.append(f"2. collide_batch over the {s.n_random} random near-contact poses, time per query "
                   f"(batch time / N, median [IQR] of {s.batch_passes} batches) vs a python-fcl loop "
                   "(setTransform + collide per pose)")
        rows = []
        for r in self.rows:
            if r["section"] != "batch":
                continue
            rows.append([r["mesh"], r["variant"], f"{r['hits']}/{r['n_poses']}", fmt_time(r["median_s"]),
                         fmt_time(r["iqr_s"]), ratio_cell(r),
                         verdict(r) and f"{verdict(r)} (<= {TARGET_BATCH:.1f}x)"])
        out.append(table(["mesh", "engine", "hits", "per query", "IQR", "cdcore / fcl", "verdict"], rows,
                         "<<>>>><"))
        out.append("")

        # 3. build
        out.append(f"3. build time per triangle (median of {s.builds} builds after a warm-up; python-fcl: "
                   "BVHModel OBBRSS beginModel/addSubModel/endModel)")
        rows = []
        for r in self.rows:
            if r["section"] != "build":
                continue
            rows.append([r["mesh"], r["variant"], fmt_time(r["median_s"]), f"{r['ns_per_tri']:.0f}",
                         ratio_cell(r), verdict(r) and f"{verdict(r)} (<= {TARGET_BUILD_NS:.0f} ns/tri)"])
        out.append(table(["mesh", "bv", "build", "ns/tri", "cdcore / fcl", "verdict"], rows, "<<>>><"))
        out.append("")

        # 4. refit
        rr = [r for r in self.rows if r["section"] == "refit"]
        if rr:
            out.append(f"4. AABB refit, {rr[0]['mesh']} ({rr[0]['n_tris']} triangles), vertices perturbed by "
                       f"N(0, {rr[0]['perturbation']:g}), median of {s.refits} (python-fcl exposes no refit)")
            rows = [[r["variant"], fmt_time(r["median_s"]), fmt_time(r["iqr_s"]), f"{r['ns_per_tri']:.1f}",
                     verdict(r) and f"{verdict(r)} (<= {fmt_time(TARGET_REFIT_S)})"] for r in rr]
            out.append(table(["refit", "median", "IQR", "ns/tri", "verdict"], rows, "<>>><"))
            out.append("")

        # 5. startup
        rows = [[r["variant"], fmt_time(r["median_s"]), fmt_time(r["fcl_median_s"]), fmt_ratio(r["ratio"])]
                for r in self.rows if r["section"] == "startup"]
        if rows:
            out.append(f"5. fresh-process cost (median of {s.startup_runs} subprocess runs, numba kernels cached "
                       "on disk; 2K-triangle torus, obb vs OBBRSS)")
            out.append(table(["step", "cdcore", "python-fcl", "cdcore / fcl"], rows, "<>>>"))
            out.append("")

        # 6. overhead diagnostic
        rows = [[r["mesh"], r["variant"], fmt_time(r["median_s"]), ratio_cell(r),
                 fmt_time(r["batch_per_query_s"]) if r.get("batch_per_query_s") is not None else "-"]
                for r in self.rows if r["section"] == "overhead"]
        if rows:
            out.append("6. fixed cost per call: B at x = 10, only the two root volumes are tested; ratios against "
                       "python-fcl's pose-and-call loop (setTransform + collide); targets: collide <= "
                       f"{TARGET_FAR_COLLIDE:.1f}x, prepared cdcore.Query <= {TARGET_FAR_QUERY:.1f}x")
            out.append(table(["mesh", "engine", "per call", "/ fcl pose+call", "collide_batch / query"], rows,
                             "<<>>>"))
            out.append("")
        return out

    def _summary(self):
        lines = []

        def tally(section, label):
            rows = [r for r in self.rows if r["section"] == section and "meets_target" in r]
            if not rows:  # a section this run did not measure (--envrob-only)
                return
            ok = sum(r["meets_target"] for r in rows)
            verdict = "MET" if ok == len(rows) else ("NOT MET" if ok == 0 else "PARTLY MET")
            lines.append(f"   {label}: {verdict} ({ok} of {len(rows)} rows)")
            by_var = {}
            for r in rows:
                by_var.setdefault(r["variant"], []).append(r)
            for var, vr in by_var.items():
                ratios = [r["ratio"] for r in vr]
                lines.append(f"      {var:<20} ratio {min(ratios):.2f}x .. {max(ratios):.2f}x, "
                             f"{sum(r['meets_target'] for r in vr)}/{len(vr)} within target")

        tally("collide", f"collide <= {TARGET_COLLIDE:.1f}x python-fcl per query")
        tally("batch", f"collide_batch <= {TARGET_BATCH:.1f}x the python-fcl loop")
        tally("overhead", "far-apart call vs the python-fcl pose-and-call loop")
        envrob = [r for r in self.rows if r["section"] == "envrob" and "meets_target" in r]
        if envrob:
            ok = sum(r["meets_target"] for r in envrob)
            verdict = "MET" if ok == len(envrob) else ("NOT MET" if ok == 0 else "PARTLY MET")
            lines.append(f"   env/rob random poses <= {TARGET_ENVROB:.1f}x python-fcl (geo-mean): {verdict} "
                         f"({ok} of {len(envrob)} rows: "
                         + ", ".join(f"{r['bv']}/{r['test']} {r['ratio']:.2f}x" for r in envrob) + ")")
        refit = [r for r in self.rows if r["section"] == "refit" and "meets_target" in r]
        for r in refit:
            lines.append(f"   AABB refit of {r['n_tris']} triangles <= {fmt_time(TARGET_REFIT_S)}: "
                         f"{'MET' if r['meets_target'] else 'NOT MET'} ({fmt_time(r['median_s'])})")
        build = [r for r in self.rows if r["section"] == "build" and "meets_target" in r]
        ok = [r for r in build if r["meets_target"]]
        if build:
            lines.append(f"   build <= {TARGET_BUILD_NS:.0f} ns per triangle: "
                         f"{'MET' if len(ok) == len(build) else ('NOT MET' if not ok else 'PARTLY MET')} "
                         f"({len(ok)} of {len(build)} rows; "
                         + ", ".join(f"{r['mesh']} {r['bv']} {r['ns_per_tri']:.0f}" for r in build) + ")")
        if self.disagreements:
            lines.append(f"   !!! HIT AGREEMENT FAILED: {len(self.disagreements)} disagreement(s):")
            lines.extend(f"   !!!   {d}" for d in self.disagreements)
        else:
            n = sum(r["n_poses"] for r in self.rows if r["section"] in ("collide", "envrob")
                    and r["engine"] == "cdcore")
            lines.append(f"   hit agreement: every cdcore variant matched python-fcl on all {n} (variant, pose) "
                         "queries" + ("" if self.envrob_only else " and the geometry on the fixed gaps"))
        return lines


def _load_avg():
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):  # not on every platform
        return None


def _fcl_version(fcl):
    for attr in ("__version__", "version"):
        v = getattr(fcl, attr, None)
        if isinstance(v, str):
            return v
    try:
        from importlib.metadata import version
        return version("python-fcl")
    except Exception:
        return "?"


# Fresh-process probes: print one JSON line of seconds.
_STARTUP_CDCORE = r"""
import json, time
pc = time.perf_counter
t0 = pc()
import cdcore
t1 = pc()
from cdcore.bench.common import linked_pose, torus
v, f = torus(64, 16)
mesh = cdcore.Mesh(v, f)
pose = linked_pose(0.01)
t2 = pc()
a = cdcore.build_bvh(mesh, "obb")
t3 = pc()
b = cdcore.build_bvh(mesh, "obb")
t3b = pc()
cdcore.collide(a, None, b, pose, contacts="first")
t4 = pc()
warm = []
for _ in range(50):
    s = pc(); cdcore.collide(a, None, b, pose, contacts="first"); warm.append(pc() - s)
warm.sort()
print(json.dumps({"import": t1 - t0, "first_build": t3 - t2, "first_collide": t4 - t3b,
                  "total": (t1 - t0) + (t3 - t2) + (t4 - t3b), "warm_collide": warm[25]}))
"""

_STARTUP_FCL = r"""
import json, time
pc = time.perf_counter
t0 = pc()
import fcl
t1 = pc()
from cdcore.bench.common import linked_pose, torus
v, f = torus(64, 16)
pose = linked_pose(0.01)
def model():
    m = fcl.BVHModel(); m.beginModel(len(f), len(v)); m.addSubModel(v, f); m.endModel(); return m
t2 = pc()
a = fcl.CollisionObject(model(), fcl.Transform())
t3 = pc()
b = fcl.CollisionObject(model(), fcl.Transform(pose[:3, :3].copy(), pose[:3, 3].copy()))
t3b = pc()
req = fcl.CollisionRequest(num_max_contacts=1, enable_contact=False)
fcl.collide(a, b, req)
t4 = pc()
warm = []
for _ in range(50):
    s = pc(); fcl.collide(a, b, req); warm.append(pc() - s)
warm.sort()
print(json.dumps({"import": t1 - t0, "first_build": t3 - t2, "first_collide": t4 - t3b,
                  "total": (t1 - t0) + (t3 - t2) + (t4 - t3b), "warm_collide": warm[25]}))
"""
