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


def _steps():
    """(label, callable) pairs, cheapest first."""
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
                    cdcore.collide_batch(b, b, poses, test=test, realign=realign)
                    cdcore.collide_batch(b, b, poses[:2], test=test, realign=realign, parallel=False)
                for order in ("depth", "best"):
                    for trace in (False, True):
                        cdcore.distance(b, None, b, linked, order=order, trace=trace, realign=realign)
                cdcore.distance_batch(b, b, poses, realign=realign)
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

    steps = [(f"{bv} hierarchies", bv_steps(bv)) for bv in cdcore.BV_TYPES]
    steps.append(("contact geometry", contact_step))
    steps.append(("tree quality", quality_step))
    steps.append(("tree validation", validate_step))
    steps.append(("articulated chains", scene_step("chains-6to1", ("aabb_plus", "aabb_star", "obb", "cab"))))
    steps.append(("articulated hand", scene_step("hand-ball", ("cab",))))
    steps.append(("deforming meshes", scene_step("deform-wave", ("cab",))))
    return steps


def warm(progress=None) -> float:
    """Compile (or load from the cache) every kernel; returns the seconds it took."""
    t0 = time.perf_counter()
    steps = _steps()
    for i, (label, run) in enumerate(steps):
        if progress is not None:
            progress(i, len(steps), label)
        run()
    if progress is not None:
        progress(len(steps), len(steps), "done")
    return time.perf_counter() - t0


def main(argv=None) -> int:
    def show(i, n, label):
        print(f"[warmup] {i}/{n} {label}", flush=True)
    try:
        dt = warm(show)
    except Exception as e:  # a broken kernel must fail the set-up loudly, with its reason
        print(f"[warmup] failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"[warmup] kernels compiled or loaded from numba's cache in {dt:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
