"""State shared between calls and threads (a thread-safety audit's findings, each test failing on
the code before its fix):

- ``FrontCache.reset`` from another thread while a frame runs: the reset took no lock, so the
  running frame saw the root pair plus the old front and reported every contact twice;
- a prepared k-DOP ``Query`` after B's refit: it kept the realignment table and padding scale
  of the old vertices and missed collisions (the docstring says a refit is seen);
- several threads querying a refitted k-DOP tree: each fitted B's table again, in place, while
  another's kernel could be reading it (now once, under the tree's lock).
"""
import sys
import threading
import time

import numpy as np

from cdcore import FrontCache, Query, build_bvh, collide, shapes
from cdcore.transforms import make_pose, random_rotations, rotation_about


def _linked(phase, gap=-0.02):
    rot = rotation_about([1, 0, 0], np.pi / 2) @ rotation_about([0, 0, 1], 0.3 * np.sin(phase))
    return make_pose(rot, [1.5 - gap + 0.1 * np.sin(2 * phase), 0.06 * np.cos(phase), 0.0])


def test_a_front_cache_reset_from_another_thread_never_changes_an_answer():
    a = build_bvh(shapes.torus(1.0, 0.25, 48, 12), "obb")
    b = build_bvh(shapes.torus(1.0, 0.25, 40, 12), "obb")
    frames = [_linked(0.02 * k) for k in range(120)]
    ref = [collide(a, None, b, p, contacts="all").pairs.copy() for p in frames]
    assert max(map(len, ref)) > 0
    fc = FrontCache(a, b)
    stop = threading.Event()
    wrong, errors, calls = [], [], [0]

    def player():
        k = 0
        try:
            while not stop.is_set():
                got = fc.collide(None, frames[k]).pairs
                calls[0] += 1
                if not np.array_equal(got, ref[k]):
                    wrong.append((k, len(got), len(ref[k])))
                k = (k + 1) % len(frames)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    def resetter():
        while not stop.is_set():
            fc.reset()
            _ = fc.front, fc.front_nodes(), fc.certified  # the readers take the lock too
            time.sleep(0.0005)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the GIL over often: the reset lands inside frames
    try:
        threads = [threading.Thread(target=player), threading.Thread(target=resetter)]
        for t in threads:
            t.start()
        time.sleep(3.0)
        stop.set()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[:3]
    assert calls[0] > 100
    assert not wrong, f"{len(wrong)} of {calls[0]} frames wrong, e.g. (frame, pairs, reference) {wrong[:5]}"


def _kdop_pair(bv):
    big, small = shapes.torus(1.0, 0.25, 64, 16), shapes.torus(0.3, 0.1, 32, 12)
    rng = np.random.default_rng(1)
    n = 200
    s = rng.random(n) * 6.3
    r = 1.0 + rng.choice([-1, 1], n) * (0.3 + 0.4 * rng.random(n))
    poses = [make_pose(R, [ri * np.cos(si), ri * np.sin(si), 0.05 * rng.normal()])
             for R, si, ri in zip(random_rotations(n, rng), s, r)]
    warp = small.vertices * np.array([1.6, 0.7, 1.3]) + 0.05 * np.sin(7 * small.vertices[:, [1, 2, 0]])
    return build_bvh(big, bv), build_bvh(small, bv), poses, warp


def test_a_prepared_kdop_query_sees_b_refitted():
    for bv, realign in (("kdop14", None), ("kdop18", None), ("kdop18", "table_angle"), ("kdop18", "all")):
        a, b, poses, warp = _kdop_pair(bv)
        q = Query(a, b, realign=realign)
        assert [q(p) for p in poses] == [collide(a, None, b, p, contacts="first", realign=realign).hit for p in poses]
        b.refit(warp)
        got = [q(p) for p in poses]  # before any other call refreshed B's table
        ref = [collide(a, None, b, p, contacts="first", realign=realign).hit for p in poses]
        assert sum(ref) > 0 and got == ref, (bv, realign)
        if realign == "all":  # no table read: the arrays are remade once (the scale), not per call
            kd = q._kd
            q(poses[0])
            assert q._kd is kd


def test_threads_querying_a_refitted_kdop_tree_fit_its_table_once(monkeypatch):
    import cdcore._kdop as K
    a, b, poses, warp = _kdop_pair("kdop18")
    fits = []
    real = K._fit_table

    def counting(*args):
        fits.append(threading.get_ident())
        time.sleep(0.05)  # a slow fit: the other threads arrive while it runs
        real(*args)
    monkeypatch.setattr(K, "_fit_table", counting)
    for rnd in range(3):
        b.refit(warp if rnd % 2 == 0 else b.mesh.vertices * 1.01)
        ref = [collide(a, None, b, p, contacts="all").pairs for p in poses[:20]]  # fits it (one)
        b.refit(b.mesh.vertices + 0.0)  # stale again: the threads below fit it
        fits.clear()
        got = {}
        barrier = threading.Barrier(4)

        def worker(i):
            barrier.wait()
            got[i] = [collide(a, None, b, p, contacts="all").pairs for p in poses[:20]]
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(fits) == 1, f"round {rnd}: the table was fitted {len(fits)} times by 4 threads"
        for i in range(4):
            assert all(np.array_equal(x, y) for x, y in zip(got[i], ref)), (rnd, i)
