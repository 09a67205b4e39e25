"""Read-only inputs compile nothing new, and every kernel has a cache file of its own.

The fresh clone's CI once failed in ``test_audit.py::test_dask_local_cluster_gives_identical_counts``:
a dask worker's pose sweep answered "no contact" for every pose. Two defects met there:
- a dask worker receives arrays in read-only buffers (a pose chunk memory-mapped from a ``.npy``
  file is read-only too), and the kernels, compiled for writable arrays, compiled a second
  signature in each worker at run time, two processes at once;
- numba's on-disk index is not safe when two processes save *different* entries of one index
  file at once (both take the next free data file; the last writer's code wins). The four
  family loops of the traversal (``_core._make_walk``) were closures of one function, four
  entries of one index: after such a race an entry named a file holding another family's loop,
  and a later process loaded it silently.
Now inputs are made writable at the API (``transforms.writable_f64``, ``as_pose``, ``as_poses``,
``BVH``/``Mesh``/``KdopData`` unpickling) and each family loop has its own cache file.
"""
import os
import pickle
import subprocess
import sys

import numpy as np

import cdcore
from cdcore import shapes
from cdcore.transforms import make_pose, rotation_about

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _received(obj):
    """``obj`` as a dask worker gets it: pickle protocol 5, every buffer out of band and read-only."""
    bufs = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
    return pickle.loads(data, buffers=[memoryview(bytes(b.raw())) for b in bufs])


def _poses(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.stack([make_pose(rotation_about(rng.normal(size=3), rng.uniform(0, 3)), rng.uniform(-1.5, 1.5, 3))
                     for _ in range(n)])


def _frozen(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


def test_received_trees_answer_as_the_sent_ones_and_refit_in_place():
    m = shapes.torus(1.0, 0.3, 16, 8)
    poses = _poses(90)
    for bv in ("aabb", "obb", "sphere", "obb_sphere", "kdop18"):
        b = cdcore.build_bvh(m, bv=bv)
        r = _received(b)
        assert not any(a.flags.writeable for a in (r.mesh.vertices, r.mesh.faces))  # a Mesh stays frozen
        assert r._F.flags.writeable and r._I.flags.writeable
        want = cdcore.collide_batch(b, b, poses).hits
        assert np.array_equal(cdcore.collide_batch(r, r, poses).hits, want), bv
        assert np.array_equal(cdcore.collide_batch(b, b, _frozen(poses)).hits, want), bv
        for p in poses[:10]:
            assert cdcore.collide(r, None, b, _frozen(p)).hit == cdcore.collide(b, None, b, p).hit
        # the public arrays are views of the pack again: a refit shows in them
        v = m.vertices * 1.1
        r.refit(v)
        b2 = cdcore.build_bvh(m, bv=bv)
        b2.refit(v)
        assert np.array_equal(r.nodes_f, b2.nodes_f), bv
        assert np.array_equal(r.box_extents(), b2.box_extents()), bv


READONLY_AFTER_WRITABLE = r"""
import importlib, pickle, pkgutil, sys, tempfile
import numpy as np
from numba.core.registry import CPUDispatcher
import cdcore
from cdcore import shapes
from cdcore.transforms import make_pose, rotation_about
sys.path.insert(0, sys.argv[1])
from robotgen import write_twoarm
from cdcore.articulated import SelfCollisionChecker, load_urdf

def received(obj):
    bufs = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
    return pickle.loads(data, buffers=[memoryview(bytes(b.raw())) for b in bufs])

def frozen(a):
    a = np.array(a)
    a.flags.writeable = False
    return a

def signatures():
    # every kernel's signatures in this process, compiled or loaded from the cache
    out = {}
    for info in pkgutil.walk_packages(cdcore.__path__, "cdcore."):
        if info.name.startswith(("cdcore.bench", "cdcore.scenes")) or info.name.endswith("__main__"):
            continue
        for name, obj in vars(importlib.import_module(info.name)).items():
            if isinstance(obj, CPUDispatcher):
                out[f"{info.name}.{name}"] = set(map(str, obj.signatures))
    return out

rng = np.random.default_rng(1)
poses = np.stack([make_pose(rotation_about(rng.normal(size=3), rng.uniform(0, 3)), rng.uniform(-1.5, 1.5, 3))
                  for _ in range(80)])
m = shapes.torus(1.0, 0.3, 24, 12)
root = tempfile.mkdtemp()
robot = load_urdf(write_twoarm(root), root)

def run(bvhs, wrap, robot):
    for b in bvhs:
        p = wrap(poses[0])
        cdcore.collide(b, None, b, p)
        cdcore.collide(b, wrap(np.eye(4)), b, p, contacts="all", trace=True)
        cdcore.Query(b, b)(p)
        cdcore.collide_batch(b, b, wrap(poses))
        cdcore.collide_batch(b, b, wrap(poses[:2]))
        cdcore.distance(b, None, b, p)
        cdcore.distance_batch(b, b, wrap(poses))
        fc = cdcore.FrontCache(b, b)
        fc.collide(None, p)
        fc.collide(None, wrap(poses[1]))
        b.refit(wrap(b.mesh.vertices * 1.01))
    q = wrap(np.zeros(robot.n_dofs))
    for method in ("cab", "obb", "aabb_plus"):
        chk = SelfCollisionChecker(robot, method=method)
        chk.check(q)
        chk.check_poses(wrap(robot.fk(q)))
    robot.fk_frames(wrap(np.zeros((3, robot.n_dofs))))

bvhs = [cdcore.build_bvh(m, bv=bv) for bv in ("aabb", "obb", "sphere", "obb_sphere", "kdop18")]
from cdcore.warmup import load_kernels
load_kernels()  # the entry points' one declared signature each (they load at their first call)
run(bvhs, np.array, robot)
stages = (("read-only arrays", lambda: run(bvhs, frozen, robot)),
          ("received trees", lambda: run([received(b) for b in bvhs], np.array, robot)),
          ("received robot", lambda: run([], frozen, received(robot))))
for label, stage in stages:
    before = signatures()
    stage()
    after = signatures()
    new = sorted(k for k in after if after[k] - before.get(k, set()))
    print(f"{label}: " + ",".join(new))
"""


def test_read_only_and_received_inputs_reach_no_new_signature():
    # a fresh process makes the calls with writable arrays, then again with read-only ones,
    # trees and a robot received as a dask worker receives them: no kernel may gain a
    # signature (compiled, or loaded from a cache an earlier run left: both are counted)
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-c", READONLY_AFTER_WRITABLE, os.path.join(ROOT, "tests")], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line.rstrip() for line in out.stdout.strip().splitlines()[-3:]]
    assert lines == ["read-only arrays:", "received trees:", "received robot:"], "\n".join(lines)


def test_every_kernel_has_a_cache_file_of_its_own():
    # numba names a kernel's cache file by module, qualified name and first line; two kernels
    # with one name share an index file, which two processes can corrupt (module docstring)
    import importlib
    import pkgutil

    from numba.core.caching import NullCache
    from numba.core.registry import CPUDispatcher
    seen = {}
    for info in pkgutil.walk_packages(cdcore.__path__, "cdcore."):
        if info.name.startswith(("cdcore.bench", "cdcore.scenes")) or info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for obj in vars(mod).values():
            if isinstance(obj, CPUDispatcher) and not isinstance(obj._cache, NullCache):
                f = obj.py_func
                key = (f.__code__.co_filename, f.__qualname__, f.__code__.co_firstlineno)
                seen.setdefault(key, set()).add(id(obj))
    assert len(seen) > 100, len(seen)
    shared = {k: len(v) for k, v in seen.items() if len(v) > 1}
    assert shared == {}


def test_a_body_uses_a_given_hierarchy_with_writable_packed_arrays(tmp_path):
    # the app's saved-query scene kept the saved tree by pointing the body at the tree's public
    # (read-only) arrays: the first step compiled the traversal core once more (~80 s)
    from app.model.robot import query_scene
    from cdcore import load_query, save_query
    from cdcore.articulated import ArticulatedBody, Link
    m = shapes.torus(1.0, 0.25, 24, 8)
    b = cdcore.build_bvh(m, "obb")
    b.refit(m.vertices * 1.05)  # a refitted tree: not what a rebuild of the link's mesh gives
    body = ArticulatedBody([Link("t", m, -1)], "t", "obb")
    body.use_hierarchy(0, b)
    assert body.bvhs[0] is b
    assert all(a.flags.writeable for a in (body.nodes_f, body.nodes_i, body.prim_order, body.vertices))
    assert np.array_equal(body.nodes_f, b.nodes_f) and np.array_equal(body.nodes_i, b.nodes_i)
    with np.testing.assert_raises(ValueError):
        body.use_hierarchy(0, cdcore.build_bvh(m, "aabb"))
    with np.testing.assert_raises(IndexError):
        body.use_hierarchy(1, b)
    with np.testing.assert_raises(ValueError):
        body.use_hierarchy(0, cdcore.build_bvh(shapes.torus(1.0, 0.25, 12, 8), "obb"))
    pose_b = make_pose(rotation_about([1, 0, 0], np.pi / 2), [1.2, 0.0, 0.0])
    save_query(tmp_path / "q.npz", b, None, b, pose_b, test="sat15")
    scene = query_scene(load_query(str(tmp_path / "q.npz")), "obb")
    for sb in scene.bodies:
        assert all(a.flags.writeable for a in (sb.body.nodes_f, sb.body.nodes_i, sb.body.prim_order))
