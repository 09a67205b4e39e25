"""The front cache returns exactly the pairs of a full traversal (and of brute force) on coherent
and incoherent motions, with refit and rebuild, for every BV type; it does fewer node tests."""
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import BV_TYPES, FrontCache, build_bvh, collide
from cdcore.transforms import make_pose, rotation_about

from meshgen import torus, uv_sphere
from test_collide_oracle import as_set, oracle

TYPES = [(bv, t) for bv in ("aabb", "obb", "sphere", "obb_sphere", "kdop14") for t in BV_TYPES[bv].tests[:2]]


def _linked(phase, gap=-0.02):
    """B interlocked with A (tori like chain links), slowly sliding and turning."""
    rot = rotation_about([1, 0, 0], np.pi / 2) @ rotation_about([0, 0, 1], 0.3 * np.sin(phase))
    return make_pose(rot, [0.5 * 1.5 - gap + 0.05 * np.sin(2 * phase), 0.03 * np.cos(phase), 0.0])


@pytest.fixture(scope="module")
def tori():
    return cdcore.Mesh(*torus(0.5, 0.125, 24, 8)), cdcore.Mesh(*torus(0.5, 0.125, 20, 8))


@pytest.mark.parametrize("bv,test", TYPES)
def test_coherent_motion_equals_full_traversal(tori, bv, test):
    ma, mb = tori
    ba, bb = build_bvh(ma, bv, 1), build_bvh(mb, bv, 2, split="sah")
    fc = FrontCache(ba, bb, test=test)
    full_tests = front_tests = 0
    for k in range(40):
        pb = _linked(0.05 * k)
        full = collide(ba, None, bb, pb, test=test, contacts="all")
        got = fc.collide(None, pb)
        assert np.array_equal(got.pairs, full.pairs), (bv, test, k)
        assert got.hit == full.hit
        if k >= 5:
            full_tests += full.stats.bv_tests
            front_tests += got.stats.bv_tests
    assert any(collide(ba, None, bb, _linked(0.05 * k)).hit for k in range(40))
    assert front_tests < 0.75 * full_tests, (bv, test, front_tests, full_tests)


def test_front_matches_oracle_and_partitions_the_leaf_pairs(tori):
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    fc = FrontCache(ba, bb)
    for k in range(12):
        pb = _linked(0.2 * k)
        assert as_set(fc.collide(None, pb).pairs) == as_set(oracle(ma, np.eye(4), mb, pb))
        # the front's leaf products cover every leaf pair exactly once
        leaves_a = {n: set(ba.node_primitives(n).tolist()) for n in range(ba.n_nodes)}
        leaves_b = {n: set(bb.node_primitives(n).tolist()) for n in range(bb.n_nodes)}
        cover = sum(len(leaves_a[a]) * len(leaves_b[b]) for a, b in fc.front.tolist())
        assert cover == ma.n_faces * mb.n_faces
        assert len(set(map(tuple, fc.front.tolist()))) == fc.front_size


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), bv=st.sampled_from(["aabb", "obb", "obb_sphere", "kdop18", "sphere"]),
       step=st.sampled_from([0.01, 0.1, 1.0]))
def test_random_walks_match_full_traversal(seed, bv, step):
    rng = np.random.default_rng(seed)
    ma = cdcore.Mesh(*uv_sphere(0.5, 6, 10))
    mb = cdcore.Mesh(*torus(0.5, 0.15, 12, 6))
    ba, bb = build_bvh(ma, bv, 1, split="mean"), build_bvh(mb, bv, 1)
    fc = FrontCache(ba, bb)
    x = rng.uniform(-0.5, 0.5, 3)
    ang = rng.uniform(0, 6, 3)
    for _ in range(12):
        x = np.clip(x + rng.normal(0, step * 0.3, 3), -1.2, 1.2)
        ang = ang + rng.normal(0, step, 3)
        pose = make_pose(rotation_about([1, 0, 0], ang[0]) @ rotation_about([0, 1, 0], ang[1]), x)
        assert as_set(fc.collide(None, pose).pairs) == as_set(collide(ba, None, bb, pose).pairs)


def test_refit_keeps_the_front_and_rebuild_resets_it(tori):
    ma, mb = tori
    ba, bb = build_bvh(ma, "aabb", 1), build_bvh(mb, "aabb", 1)
    fc = FrontCache(ba, bb)
    pb = _linked(0.0)
    for k in range(10):
        v = ma.vertices * (1.0 + 0.02 * np.sin(0.5 * k))
        ba.refit(v)
        got = fc.collide(None, pb)
        assert np.array_equal(got.pairs, collide(ba, None, bb, pb).pairs)
        assert got.pairs.size and fc.front_size > 1
    ba.rebuild(ma.vertices * 1.01)
    got = fc.collide(None, pb)  # a new topology: from the root again
    assert np.array_equal(got.pairs, collide(ba, None, bb, pb).pairs)
    assert got.stats.bv_tests == collide(ba, None, bb, pb).stats.bv_tests


def test_disabled_front_is_a_full_traversal(tori):
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    fc = FrontCache(ba, bb, enabled=False)
    for k in range(3):
        got = fc.collide(None, _linked(0.1 * k))
        full = collide(ba, None, bb, _linked(0.1 * k))
        assert np.array_equal(got.pairs, full.pairs) and got.stats.bv_tests == full.stats.bv_tests
    assert fc.front_size == 1


def test_bad_input_is_a_clear_error(tori):
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "aabb", 1)
    with pytest.raises(ValueError, match="same bounding-volume type"):
        FrontCache(ba, bb)
    with pytest.raises(TypeError):
        FrontCache(ba, "tree")
    fc = FrontCache(ba, build_bvh(mb, "obb", 1))
    with pytest.raises(ValueError, match="test"):
        FrontCache(ba, build_bvh(mb, "obb", 1), test="slab")
    bad = np.eye(4)
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="pose_b"):
        fc.collide(None, bad)
    assert fc.front_size == 1  # a refused frame leaves the front alone


def test_threads_with_one_cache_per_pair(tori):
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    expected = [collide(ba, None, bb, _linked(0.1 * k)).pairs for k in range(15)]
    errors = []

    def run():
        fc = FrontCache(ba, bb)
        for k in range(15):
            if not np.array_equal(fc.collide(None, _linked(0.1 * k)).pairs, expected[k]):
                errors.append(k)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("bv", ["obb", "kdop18"])
def test_a_scratch_block_too_small_is_grown_and_the_frame_repeated(tori, bv):
    """Every frame starts on a one-slot block: the kernel asks for a larger one (MORE) before it
    changes anything, and the repeated frame gives the full traversal's answer."""
    ma, mb = tori
    ba, bb = build_bvh(ma, bv, 1), build_bvh(mb, bv, 2, split="sah")
    fc = FrontCache(ba, bb)
    for k in range(25):
        fc._blk = np.zeros(1, dtype=np.int64)
        pb = _linked(0.07 * k)
        got = fc.collide(None, pb)
        full = collide(ba, None, bb, pb)
        assert np.array_equal(got.pairs, full.pairs), (bv, k)
        assert fc._blk.shape[0] > 1
    assert fc.front_size > 1


def test_a_frame_that_keeps_every_row_leaves_the_front_unchanged(tori):
    """B apart from A (no leaf pair overlapping) and still: the second frame keeps every front
    row by its certificate (no node test), the front stays as it is, and the answers are the
    full traversal's; a move that uses the certificates up tests again."""
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    fc = FrontCache(ba, bb)
    pb = _linked(0.0, gap=0.03)
    first = fc.collide(None, pb)
    assert first.stats.bv_tests > 1 and not first.hit
    front = fc._front
    again = fc.collide(None, pb)
    assert again.stats.bv_tests == 0 and fc.last_skipped == fc.front_size == len(front)
    assert np.array_equal(fc._front, front) and not again.hit
    moved = _linked(0.0)  # interlocked
    full = collide(ba, None, bb, moved)
    got = fc.collide(None, moved)
    assert full.hit and got.stats.bv_tests > 0
    assert np.array_equal(got.pairs, full.pairs)
