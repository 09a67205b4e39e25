"""Thread stress: threads of mixed queries (collide of every BV type, collide_batch,
distance, articulated hierarchy updates + body queries, refits of per-thread trees,
lazily computed scene poses) under a 1 us switch interval; every answer must equal the
single-threaded one. What may be shared: trees that nobody refits, meshes, articulated
bodies (not their deforming links) and scenes; each thread refits its own trees and
owns its BodyHierarchy."""
import copy
import sys
import threading

import numpy as np
import pytest

from cdcore import BVH, Query, build_bvh, collide, collide_batch, distance, shapes
from cdcore.articulated import BodyHierarchy, collide_bodies
from cdcore.scenes import load_scene, rigid_scene
from cdcore.transforms import make_pose, random_rotations, rotation_about

THREADS = 4
ROUNDS = 12


@pytest.fixture
def tiny_switch_interval():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _collide_key(r):
    return (r.pairs.tobytes(), r.stats.bv_tests, r.stats.prim_tests, r.stats.leaf_pairs, r.stats.axis_hist.tobytes())


def _workloads():
    """name -> (make per-thread state, run(state, k) -> comparable answer). k selects a pose."""
    rng = np.random.default_rng(12)
    torus = shapes.torus(1.0, 0.25, 40, 12)
    sphere = shapes.icosphere(0.6, 2)
    poses = [make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 1.2) for _ in range(6)]
    poses.append(make_pose(rotation_about([1, 0, 0], np.pi / 2), [1.49, 0, 0]))  # linked, near contact
    trees = {bv: build_bvh(torus, bv, leaf) for bv, leaf in
             (("obb", 1), ("aabb", 2), ("sphere", 1), ("obb_sphere", 1), ("kdop18", 1), ("kdop6", 3))}
    trees_b = {bv: build_bvh(sphere, bv, t.leaf_size) for bv, t in trees.items()}
    tests = {"obb": "sat15", "aabb": "sat6", "sphere": "sphere", "obb_sphere": "sphere5", "kdop18": None,
             "kdop6": None}
    batch = np.stack(poses * 8)
    chains = load_scene("chains-6to1", frames=400)
    deform_base = torus.vertices

    def wave(k):
        return deform_base + 0.05 * np.sin(3 * deform_base[:, [1, 2, 0]] + k)[:, :]

    W = {}
    for bv in trees:
        W[f"collide-{bv}"] = (lambda: None, lambda st, k, bv=bv: _collide_key(
            collide(trees[bv], poses[k % 3], trees_b[bv] if k % 2 else trees[bv], poses[k], test=tests[bv])))
    # one prepared Query per type shared by every thread (its workspace pool is the only state)
    queries = {bv: Query(trees[bv], trees_b[bv], test=tests[bv]) for bv in trees}
    for bv in trees:
        W[f"query-{bv}"] = (lambda: None, lambda st, k, bv=bv: tuple(queries[bv](poses[k % 3], p) for p in poses))
    W["collide-first-trace"] = (lambda: None, lambda st, k: (
        lambda r: (r.hit, len(r.pairs), r.trace.node_a.tobytes(), r.trace.outcome.tobytes(), r.trace.axis.tobytes()))(
        collide(trees["obb"], None, trees["obb"], poses[k], contacts="first", trace=True)))
    W["batch"] = (lambda: None, lambda st, k: collide_batch(trees["obb_sphere"], trees_b["obb_sphere"],
                                                            batch[k:], test="sphere5").hits.tobytes())
    W["batch-kdop"] = (lambda: None, lambda st, k: collide_batch(trees["kdop18"], trees_b["kdop18"],
                                                                 batch[k:]).hits.tobytes())
    W["distance"] = (lambda: None, lambda st, k: (lambda r: (r.distance, r.pair, r.points.tobytes()))(
        distance(trees["obb"], None, trees_b["obb"], make_pose(None, [2.5 + 0.1 * k, 0.3, 0.0]))))

    def articulated(st, k):
        ha, hb = st
        f = 120 + 37 * k
        ha.update(chains.bodies[0].link_poses[f])
        hb.update(chains.bodies[1].link_poses[f])
        r = collide_bodies(ha, hb, "sat15")
        return ha.nodes_f.tobytes(), r.link_pairs.tobytes(), r.hits.tobytes(), r.broad.bv_tests
    W["articulated"] = (lambda: (BodyHierarchy(chains.bodies[0].body, "cab"),
                                 BodyHierarchy(chains.bodies[1].body, "obb")), articulated)

    def fresh(b):
        # a private copy of a built tree: an OBB refit's result depends (in the last bits,
        # through the order of its axes) on the tree's previous refits, so each call starts
        # from the built state to have one exact single-threaded answer per k
        return BVH(b.mesh, b.bv, b.leaf_size, b.nodes_f.copy(), b.nodes_i, b.prim_order, b.depth,
                   copy.deepcopy(b.kdop))

    def refit(st, k):
        t = fresh(st)
        t.refit(wave(k))  # this thread's own tree
        r = collide(t, None, trees["obb"], poses[-1])
        return t.nodes_f.tobytes(), _collide_key(r)
    W["refit"] = (lambda: build_bvh(torus, "obb"), refit)
    W["refit-kdop"] = (lambda: build_bvh(torus, "kdop14"),
                       lambda st, k: (lambda t: (t.refit(wave(k)), t.nodes_f.tobytes())[1])(fresh(st)))

    scene = rigid_scene(torus, sphere, frames=5000)
    W["lazy-poses"] = (lambda: None, lambda st, k: scene.bodies[1].link_poses[(k * 997) % 5000].tobytes())
    return W


def test_mixed_queries_from_threads_equal_single_threaded(tiny_switch_interval):
    W = _workloads()
    names = sorted(W)
    expected = {}
    for name in names:
        make, run = W[name]
        st = make()
        for k in range(7):
            expected[name, k] = run(st, k)
    for name in names:  # every workload depends on k (a test that cannot fail is a defect)
        assert len({expected[name, k] for k in range(7)}) > 1 or name.startswith("collide-first"), name
    for bv in ("obb", "aabb", "kdop18"):  # the shared queries answer both ways
        assert {True, False} <= set(sum((expected[f"query-{bv}", k] for k in range(7)), ())), bv

    errors, wrong, done = [], [], []
    start = threading.Barrier(THREADS)

    def worker(seed):
        order = np.random.default_rng(seed)
        states = {name: W[name][0]() for name in names}
        start.wait()
        try:
            for _ in range(ROUNDS):
                for name in order.permutation(names):
                    k = int(order.integers(7))
                    got = W[name][1](states[name], k)
                    if got != expected[name, k]:
                        wrong.append((name, k))
                    done.append(1)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[:3]
    assert not wrong, wrong[:10]
    assert len(done) == THREADS * ROUNDS * len(names)
