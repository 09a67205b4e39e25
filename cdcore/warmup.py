"""Compile every kernel into numba's on-disk cache, so that a fresh process starts fast.

``python -m cdcore.warmup`` runs once in the README's set-up (``.ci/setup.sh``): numba compiles
a kernel on its first call with a given argument signature and ``cache=True`` stores the
machine code beside the module. This module makes those first calls, on tiny inputs with
the argument types real queries use, for every bounding-volume type, test, realignment,
query kind and articulated update method. A second run loads everything from the cache.

``warm(progress)`` is the same from Python; ``progress(done, total, label)`` is called
before each step (the app shows it while it starts).
"""
from __future__ import annotations

import sys
import time


# The steps fall in two parts with no kernel in common, so that ``main`` can compile them in two
# processes at once on a machine with two cores (numba compiles on one thread): "core" is the
# traversal core and everything built on it (collide, Query, FrontCache, batches, scenes) and the
# exact primitives' queries; "side" is the distance search and the robots (URDF, MJCF: the
# self-collision kernels). The side part starts with the distance search (its own loop, no
# ``traverse``), so by the time it reaches the robots (whose mesh links call ``traverse``) the
# core part has cached it. Measured with numba's compile events (a fresh cache, 2 cores): no
# kernel compiled by both, 86 and 94 s (the self-check loaded first in the side part and the
# primitives there: 33 kernels compiled by both, ~48 s each, 105 and 108 s).
PARTS = ("core", "side")


def _steps(part=None):
    """(label, callable) pairs of ``part`` ("core", "side"; None: both, in one process)."""
    import numpy as np

    import cdcore
    from cdcore import shapes
    from cdcore._kdop_traverse import REALIGN_METHODS
    from cdcore.transforms import make_pose, rotation_about

    torus = shapes.torus(1.0, 0.3, 12, 6)
    linked = make_pose(rotation_about([1, 0, 0], np.pi / 2), [1.0, 0.0, 0.0])
    poses = np.stack([linked, make_pose(None, [5.0, 0.0, 0.0])] * 40)

    def bv_steps(bv):
        def run():
            b = cdcore.build_bvh(torus, bv=bv, leaf_size=1)
            b2 = cdcore.build_bvh(torus, bv=bv, leaf_size=2, split="sah")
            cdcore.build_bvh(torus, bv=bv, leaf_size=1, split="mean")
            b.refit(torus.vertices * 1.01)
            b.refit(torus.vertices, parallel=True)  # the threaded sweep of large trees
            b.check()
            realigns = tuple(REALIGN_METHODS) if bv.startswith("kdop") else (None,)
            for realign in realigns:
                tests = (None,) if realign else cdcore.BV_TYPES[bv].tests
                for test in tests:
                    for contacts in ("all", "first"):
                        for trace in (False, True):
                            cdcore.collide(b, None, b, linked, test=test, contacts=contacts, trace=trace,
                                           realign=realign)
                    cdcore.collide(b2, None, b2, linked, test=test, realign=realign)
                    cdcore.Query(b, b, test=test, realign=realign)(linked)
                    fc = cdcore.FrontCache(b, b2, test=test, realign=realign)
                    fc.collide(None, linked)
                    fc.collide(None, linked)
                    b2.refit(b2.mesh.vertices)  # a refit between frames: the vertices' moves are measured
                    fc.collide(None, linked)
                    cdcore.collide_batch(b, b, poses, test=test, realign=realign)
                    cdcore.collide_batch(b, b, poses[:2], test=test, realign=realign, parallel=False)
                if realign:  # the stepper's realigned interval of a node (app.model.stepper)
                    from cdcore.realign import realign_kdop
                    realign_kdop(b, 0, linked[:3, :3], linked[:3, 3], realign)
        return run

    def distance_steps(bv):
        def run():
            b = cdcore.build_bvh(torus, bv=bv, leaf_size=1)
            realigns = tuple(REALIGN_METHODS) if bv.startswith("kdop") else (None,)
            for realign in realigns:
                for order in ("depth", "best"):
                    for trace in (False, True):
                        cdcore.distance(b, None, b, linked, order=order, trace=trace, realign=realign)
                cdcore.distance_batch(b, b, poses, realign=realign)
                cdcore.distance_batch(b, b, poses[:2], realign=realign)  # the serial kernel
        return run

    def scene_step(name, methods):
        def run():
            from cdcore.scenes import SceneRunner, load_scene
            scene = load_scene(name, frames=3)
            for method in methods:
                runner = SceneRunner(scene, method=method, trace=True)
                for f in range(2):
                    runner.step(f)
        return run

    def contact_step():
        # one signature: (float64 C arrays, int32 faces and pairs), whatever the BV type
        b = cdcore.build_bvh(torus, bv="aabb")
        cdcore.collide(b, None, b, linked, geometry=True)
        cdcore.collide(b, None, b, linked @ np.diag([1.0, 1.2, 1.0, 1.0]), geometry=True)  # scaled pose
        # the linked tori do not touch, so ``collide`` computed no geometry: one pair directly
        # (the app's contacts of every frame with a hit; any pair is valid input)
        from cdcore.contacts import geometry_arrays
        geometry_arrays(torus, np.eye(4), torus, linked, np.array([[0, 1]]))
        from cdcore._tridist import tri_tri_distance  # witness checks and the cross-check's pair distances
        tri_tri_distance(*(np.ascontiguousarray(v, dtype=np.float64) for v in np.eye(3)), *np.eye(3) + 2.0)

    def quality_step():
        from cdcore.quality import expected_tests, tree_quality
        for bv in ("aabb", "sphere"):
            b = cdcore.build_bvh(torus, bv=bv)
            tree_quality(b)
            expected_tests(b, b)

    def validate_step():
        # the checks every loaded tree passes (cdcore.validate: one signature per kernel)
        from cdcore.bvh import BVH
        from cdcore.validate import validate_tree
        for bv in ("aabb", "obb", "sphere", "obb_sphere"):
            b = cdcore.build_bvh(torus, bv=bv)
            validate_tree(b.kind, b.nodes_f, b.nodes_i, b.prim_order, b.mesh.vertices, b.mesh.faces, 1)
            BVH(b.mesh, bv, 1, b.nodes_f, b.nodes_i, b.prim_order, b.depth)

    core = [(f"{bv} hierarchies", bv_steps(bv)) for bv in cdcore.BV_TYPES]
    core.append(("contact geometry", contact_step))
    core.append(("tree quality", quality_step))
    core.append(("tree validation", validate_step))
    core.append(("articulated chains", scene_step("chains-6to1", ("aabb_plus", "aabb_star", "obb", "cab"))))
    core.append(("articulated hand", scene_step("hand-ball", ("cab",))))
    core.append(("deforming meshes", scene_step("deform-wave", ("cab",))))
    side = [(f"{bv} distances", distance_steps(bv)) for bv in cdcore.BV_TYPES]
    side.append(("robot self-collision and audit", _robot_step))
    side.append(("MJCF robots", _mjcf_step))
    # the primitive queries last in the core part (no robot: the self-check is the side part's),
    # so that the two parts take about as long (~90 s each on 2 cores)
    core.append(("exact primitives", _primitive_step))
    if part == "core":
        return core
    if part == "side":
        return side
    return core + side


_WARM_MJCF = """<mujoco model="warm">
  <asset><mesh name="tet" vertex="0 0 0  0.06 0 0  0 0.06 0  0 0 0.06"/></asset>
  <worldbody>
    <body name="a"><geom type="box" size="0.1 0.1 0.02"/><geom type="mesh" mesh="tet" pos="0 0 0.05"/>
      <body name="b" pos="0 0 0.05"><joint name="j1" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
        <geom type="sphere" size="0.03" pos="0.2 0 0"/>
        <body name="c" pos="0.2 0 0"><joint name="j2" type="slide" axis="0 0 1" range="-0.1 0.1"/>
          <geom type="cylinder" size="0.02 0.05"/><geom type="ellipsoid" size="0.03 0.02 0.04" pos="0 0 0.06"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _primitive_step():
    """Exact primitives: MuJoCo-style geom tests and pair distances, primitive leaves against
    meshes (the public primitive queries)."""
    import numpy as np

    from cdcore import _prim, shapes
    from cdcore.primitives import KIND_NAMES, Primitive
    prims = [Primitive(k, (0.1, 0.2, 0.3)[:{"sphere": 1, "capsule": 2, "cylinder": 2}.get(k, 3)]) for k in
             KIND_NAMES[:5]] + [Primitive("convex", (), np.eye(4), np.eye(3))]
    kind, size, voff, verts = _prim.pack_primitives(prims)
    poses = np.tile(np.eye(4), (len(prims), 1, 1))
    pairs = np.array([[i, j] for i in range(len(prims)) for j in range(len(prims))], dtype=np.int64)
    _prim.prim_pairs_intersect(kind, size, voff, verts, poses, pairs)
    _prim.prim_pairs_distance(kind, size, voff, verts, poses, pairs, np.empty((len(pairs), 2, 3)))
    from cdcore import build_bvh, collide_primitive, distance_primitive
    tree = build_bvh(shapes.box((0.2, 0.2, 0.2)), "obb")
    for p in prims:  # the public primitive queries: against a mesh hierarchy and a primitive
        collide_primitive(p, None, tree, None)
        distance_primitive(p, None, tree, None)
        collide_primitive(p, None, prims[0], None)
        distance_primitive(p, None, prims[0], None)


def _mjcf_step():
    """MJCF robots (if mujoco is installed): exact primitive links in the fused self-collision
    kernel, meshes as given and as hulls, environment pairs."""
    import os
    import tempfile

    import numpy as np

    from cdcore import shapes
    from cdcore.articulated import SelfCollisionChecker, environment_pairs
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return
    import warnings

    from cdcore.articulated import load_mjcf
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "warm.xml")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_WARM_MJCF)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robots = [load_mjcf(path), load_mjcf(path, meshes="hull")]
    q = np.array([0.3, 0.05])
    for robot in robots:
        chk = SelfCollisionChecker(robot, skip_adjacent=False, disabled=[])
        chk.check(q)
        chk.check_poses(robot.fk(q))
        robot.colliding_geoms(q)
        environment_pairs(robot, q, shapes.box((0.1, 0.1, 0.1)))


_WARM_URDF = """<?xml version="1.0"?>
<robot name="warm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.05"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0.1 0 0"/><geometry><box size="0.2 0.03 0.03"/></geometry></collision></link>
  <link name="tip"><collision><geometry><box size="0.05 0.05 0.05"/></geometry></collision></link>
  <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="slide" type="prismatic"><parent link="arm"/><child link="tip"/><origin xyz="0.2 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-0.3" upper="0.3" effort="1" velocity="1"/></joint>
</robot>
"""


def _robot_step():
    """A URDF robot: the one-call self-collision kernel (every update method), check_poses,
    environment pairs and the audit's batch kernel (serial and parallel chunks)."""
    import os
    import tempfile

    import numpy as np

    from cdcore import shapes
    from cdcore.articulated import SelfCollisionChecker, UPDATE_METHODS, audit, environment_pairs, load_urdf
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "warm.urdf")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_WARM_URDF)
        robot = load_urdf(path)
    q = np.array([0.3, 0.1])
    for method in UPDATE_METHODS:
        chk = SelfCollisionChecker(robot, method, skip_adjacent=False)
        chk.check(q)
        chk.check_poses(robot.fk(q))
    environment_pairs(robot, q, shapes.box((0.1, 0.1, 0.1)))
    audit(robot, samples=10, seed=0)
    audit(robot, samples=200, seed=0, threads=False)


def warm(progress=None, part=None) -> float:
    """Compile (or load from the cache) every kernel (``part``: one of ``PARTS`` only); returns
    the seconds it took."""
    t0 = time.perf_counter()
    # every entry point, also those no step calls (their first call compiles them): the core
    # part's first, the robots' self-check last in the side part. Loaded at the start of the side
    # part, the self-check compiled the traversal loops it calls before the core part had cached
    # them: both processes compiled them (~20 s each, a profile of numba's compile events)
    robot = ("articulated._self_kernel.self_check",)
    if part != "side":
        load_kernels(tuple(k for k in IMPORT_COMPILED if k not in robot))
    steps = _steps(part)
    for i, (label, run) in enumerate(steps):
        if progress is not None:
            progress(i, len(steps), label)
        run()
    if part != "core":
        load_kernels(robot)
    if progress is not None:
        progress(len(steps), len(steps), "done")
    return time.perf_counter() - t0


def cached_signatures(roots) -> dict[str, int]:
    """Compiled signatures per kernel in numba's on-disk cache: ``{"module.function": n}``
    read from the cache index files (``*.nbi``) under ``roots``. Issue 15 asks for one
    signature per kernel: a kernel reached with literal constants, int32 and int64, or
    read-only and writable arrays from different call sites is compiled (and cached) once per
    combination, and each costs a full compile of it and of everything inlined into it."""
    import glob
    import os
    import pickle

    out: dict[str, int] = {}
    for root in roots:
        for path in glob.glob(os.path.join(root, "**", "*.nbi"), recursive=True):
            try:
                with open(path, "rb") as fh:
                    pickle.load(fh)  # numba's version tag
                    _stamp, overloads = pickle.loads(fh.read())
            except Exception:  # another numba's or a damaged index: numba ignores it too
                continue
            name = os.path.basename(path).split("-")[0]  # "module.function-LINE.pyXY.nbi"
            # a key is (signature, target, (bytecode hash, closure-constants hash)): closures one
            # factory makes share an index file, one function each, unless renamed first (as
            # ``_core._make_walk`` does: a shared index is unsafe between processes)
            per_function: dict = {}
            for key in overloads:
                code = key[2] if isinstance(key, tuple) and len(key) > 2 else None
                per_function[code] = per_function.get(code, 0) + 1
            out[name] = max(out.get(name, 0), max(per_function.values(), default=0))
    return out


#: the entry points: kernels compiled for one explicit signature (``_pairjit.entry_njit``,
#: ``pair_njit`` with ``signature``) at their first call or by ``load_kernels``, not at import.
#: Their load compiles the traversal core they call when numba's cache does not hold it
#: (minutes), so the app's first start loads them behind a window (``app.first_start``), and
#: ``kernels_cached`` reads their index files (``tests/test_first_start.py`` checks the list)
IMPORT_COMPILED = ("_core.query_entry", "_core.query_entry_w", "_core.resume_entry", "_core.query_kdop_entry",
                   "_core.resume_kdop_entry", "_build.refit_aabb",
                   "articulated._self_kernel.self_check")


def load_kernels(names=IMPORT_COMPILED) -> None:
    """Compile, or load from numba's cache, the entry points ``names`` ("module.function" in
    ``cdcore``) now, importing their modules (an ImportError or a compile error propagates)."""
    import importlib

    from cdcore._pairjit import load_kernel
    for name in names:
        module, func = name.rsplit(".", 1)
        load_kernel(getattr(importlib.import_module(f"cdcore.{module}"), func))


def kernels_cached(names=IMPORT_COMPILED, roots=None) -> bool:
    """Whether numba's on-disk cache holds each kernel of ``names`` ("module.function" in
    ``cdcore``) compiled from the current source file: its index file (``*.nbi``) exists, lists
    at least one compiled signature and carries the source's stamp as numba computes it. Reads
    only the index files and the sources (no kernel is imported or compiled), so a caller can
    tell before the import whether it will take seconds or minutes (``app.first_start``). Any
    doubt (an unreadable index, another numba) answers False."""
    import glob
    import os
    import pickle
    import sys

    try:
        from numba.core.caching import _hash_source_file  # numba's own stamp of a source file
    except ImportError:
        return False
    pkg = os.path.dirname(os.path.abspath(__file__))
    roots = _cache_roots() if roots is None else roots
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    for name in names:
        module, func = name.rsplit(".", 1)
        src = os.path.join(pkg, *module.split(".")) + ".py"
        try:
            st = os.stat(src)
            stamp = _hash_source_file(src, st.st_mtime, st.st_size)
        except (OSError, TypeError):
            return False
        found = False
        for root in roots:
            # numba names an index by the module's last component: "_self_kernel.self_check-LINE.py311.nbi"
            stem = f"{module.rsplit('.', 1)[-1]}.{func}"
            for path in glob.glob(os.path.join(root, "**", f"{stem}-*.{tag}.nbi"), recursive=True):
                try:
                    with open(path, "rb") as fh:
                        pickle.load(fh)  # numba's version tag
                        index_stamp, overloads = pickle.loads(fh.read())
                except Exception:  # noqa: BLE001 - a damaged or foreign index: numba ignores it too
                    continue
                if index_stamp == stamp and overloads:
                    found = True
                    break
            if found:
                break
        if not found:
            return False
    return True


def _cache_roots() -> list[str]:
    """Where numba caches this package's kernels: ``NUMBA_CACHE_DIR`` or the sources' __pycache__."""
    import os

    env = os.environ.get("NUMBA_CACHE_DIR")
    return [env] if env else [os.path.dirname(os.path.abspath(__file__))]


def _parse(argv):
    import argparse
    import os

    p = argparse.ArgumentParser(prog="python -m cdcore.warmup",
                                description="Compile every cdcore kernel into numba's on-disk cache.")
    p.add_argument("--jobs", type=int, choices=(1, 2), default=2 if (os.cpu_count() or 1) > 1 else 1,
                   help="processes compiling at once (default: 2 on a machine with two or more cores)")
    p.add_argument("--part", choices=PARTS, help=argparse.SUPPRESS)  # the second process's share
    return p.parse_args(argv)


def main(argv=None) -> int:
    import subprocess

    args = _parse(argv)
    tag = f"warmup:{args.part}" if args.part else "warmup"

    def show(i, n, label):
        print(f"[{tag}] {i}/{n} {label}", flush=True)
    t0 = time.perf_counter()
    child = None
    part = args.part
    if args.jobs == 2 and part is None:  # the side part in a second process, the core part here
        child = subprocess.Popen([sys.executable, "-m", "cdcore.warmup", "--part", "side"])
        part = "core"
    try:
        warm(show, part)
    except BaseException as e:
        if child is not None:  # no orphan compiling on after a failure or Ctrl-C
            child.terminate()
        if not isinstance(e, Exception):
            raise
        # a broken kernel must fail the set-up loudly, with its reason
        print(f"[{tag}] failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if child is not None and child.wait() != 0:
        print(f"[{tag}] failed: the second process (--part side) exited with {child.returncode}", file=sys.stderr)
        return 1
    dt = time.perf_counter() - t0
    if args.part:  # the parent reports the total
        return 0
    print(f"[warmup] kernels compiled or loaded from numba's cache in {dt:.1f} s"
          + (" (two processes)" if child is not None else ""), flush=True)
    sigs = cached_signatures(_cache_roots())
    multi = sorted(((n, k) for k, n in sigs.items() if n > 1), reverse=True)
    print(f"[warmup] {len(sigs)} cached kernels, {sum(sigs.values())} signatures; more than one: "
          + (", ".join(f"{k} ({n})" for n, k in multi) or "none"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
