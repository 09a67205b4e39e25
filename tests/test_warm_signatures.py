"""After ``python -m cdcore.warmup``, a fresh process that exercises every BV type, test,
realignment, query kind (collide, trace, batch, serial batch, Query, distance, distance_batch)
and articulated collision with every update method, contact geometry, the stepper's realigned
k-DOP and a saved query opened as the app opens it compiles nothing: every kernel it reaches is
loaded from numba's cache, in the one signature the warm-up compiled. (The last three were gaps:
the warm-up's linked tori never touch, so it computed no contact geometry; the app's saved-query
bodies held the trees' read-only arrays, whose first step compiled the traversal core again.)"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXERCISE = r"""
import json, sys, numpy as np
import cdcore
from cdcore import shapes
from cdcore._kdop_traverse import REALIGN_METHODS
from cdcore.transforms import make_pose, rotation_about

rng = np.random.default_rng(5)
mesh = shapes.icosphere(0.8, 2)
other = shapes.torus(1.0, 0.3, 9, 5)
pose = make_pose(rotation_about([0, 1, 0], 0.3), [0.9, 0.1, 0.0])
poses = np.stack([make_pose(rotation_about([1, 0, 0], a), [x, 0.0, 0.0])
                  for a, x in zip(np.linspace(0, 3, 70), np.linspace(0, 2, 70))])
for bv, spec in cdcore.BV_TYPES.items():
    a = cdcore.build_bvh(mesh, bv=bv, leaf_size=3)
    b = cdcore.build_bvh(other, bv=bv, leaf_size=1)
    b.refit(other.vertices * 0.98)
    b.refit(other.vertices * 0.97, parallel=True)  # the threaded sweep of large trees
    realigns = tuple(REALIGN_METHODS) if bv.startswith("kdop") else (None,)
    for realign in realigns:
        for test in ((None,) if realign else spec.tests):
            for contacts in ("all", "first"):
                for trace in (False, True):
                    cdcore.collide(a, pose.tolist(), b, None, test=test, contacts=contacts, trace=trace,
                                   realign=realign)
            cdcore.collide_batch(a, b, poses, test=test, realign=realign)
            cdcore.collide_batch(a, b, poses[:5], test=test, realign=realign)
            cdcore.collide_batch(a, b, poses, test=test, realign=realign, parallel=False)
            q = cdcore.Query(a, b, test=test, realign=realign)
            q(pose)
            fc = cdcore.FrontCache(a, cdcore.build_bvh(other, bv=bv, split="sah"), test=test, realign=realign)
            fc.collide(pose, None)
            fc.collide(pose, None)
            fc.bvh_b.refit(other.vertices * 0.99)
            fc.collide(pose, None)
            q(np.eye(4), pose)
        for order in ("depth", "best"):
            for trace in (False, True):
                cdcore.distance(a, None, b, pose, order=order, trace=trace, realign=realign)
        cdcore.distance_batch(a, b, poses[:9], realign=realign)

from cdcore.primitives import KIND_NAMES, Primitive
cube = Primitive("box", (0.2, 0.3, 0.1))
for kind in KIND_NAMES:
    prim = (Primitive(kind, (), np.eye(4), rng.normal(size=(6, 3))) if kind == "convex"
            else Primitive(kind, (0.2, 0.3, 0.1)[:{"sphere": 1, "capsule": 2, "cylinder": 2}.get(kind, 3)]))
    for bv in cdcore.BV_TYPES:
        tree = cdcore.build_bvh(mesh, bv=bv)
        cdcore.collide_primitive(prim, pose, tree, None)
        cdcore.distance_primitive(prim, pose, tree, None)
    cdcore.collide_primitive(prim, pose, cube, None)
    cdcore.distance_primitive(prim, pose, cube, None)

from cdcore.scenes import SceneRunner, load_scene
from cdcore.articulated import UPDATE_METHODS
from cdcore.quality import expected_tests, tree_quality
for bv in ("obb", "sphere"):
    t = cdcore.build_bvh(other, bv=bv, split="mean")
    tree_quality(t)
    expected_tests(t, t)
scene = load_scene("chains-6to1", frames=3)
for method in UPDATE_METHODS:
    for trace in (False, True):
        runner = SceneRunner(scene, method=method, trace=trace)
        runner.step(1)

# contact geometry of touching meshes (the app's contacts of a frame with a hit), the stepper's
# realigned k-DOP, and a saved query opened as the app opens it (its bodies keep the saved trees)
import os, tempfile
from cdcore.contacts import geometry_arrays
from cdcore.realign import realign_kdop
t = cdcore.build_bvh(other)
assert len(cdcore.collide(t, None, t, make_pose(None, [0.05, 0.0, 0.0]), geometry=True).depths)
geometry_arrays(other, np.eye(4), other, pose, np.array([[0, 1]]))
for bv in cdcore.BV_TYPES:
    if bv.startswith("kdop"):
        k = cdcore.build_bvh(other, bv=bv)
        for method in REALIGN_METHODS:
            realign_kdop(k, 0, pose[:3, :3], pose[:3, 3], method)
from app.model.robot import open_query
from app.model.session import Session
path = os.path.join(tempfile.mkdtemp(), "q.npz")
t = cdcore.build_bvh(other, bv="obb")
cdcore.save_query(path, t, None, t, pose, test="sat15")
session = Session()
open_query(session, path)
session.stepper()
session.goto(0)

from numba.core.registry import CPUDispatcher
compiled = {}
for name, mod in list(sys.modules.items()):
    if not name.startswith("cdcore"):
        continue
    for attr, obj in vars(mod).items():
        if isinstance(obj, CPUDispatcher) and obj.stats.cache_misses:
            compiled[f"{name}.{attr}"] = [str(s) for s in obj.signatures]
core = {k: len(getattr(sys.modules["cdcore._core"], k).signatures)
        for k in ("traverse", "drive", "leaf_pair", "query_entry", "query_entry_w", "resume_entry", "query_kdop_entry",
                  "resume_kdop_entry", "_batch_chunk")}
print(json.dumps({"compiled": compiled, "core": core}))
"""


@pytest.mark.slow
def test_nothing_compiles_after_the_warmup(tmp_path):
    # a cache of its own: the suite's shared cache also holds what earlier tests compiled (the app's
    # contact geometry, say), which would hide a kernel the warm-up misses
    env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    warm = subprocess.run([sys.executable, "-m", "cdcore.warmup"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=3600)
    assert warm.returncode == 0, warm.stderr
    out = subprocess.run([sys.executable, "-c", EXERCISE], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=3600)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["compiled"] == {}, f"compiled after the warm-up: {res['compiled']}"
    assert all(n <= 1 for n in res["core"].values()), res["core"]
