"""The fixed-cost and per-pair shortcuts of the common query path (issue 15) change no answer,
counter or trace:

* ``traverse``'s oriented-box loop keeps the share of a pair's transform that depends on the
  node that stays (``_core._obb_rows``, B's R cb + t) and tests the fixed axis programs on it:
  its traces and counters equal, bit for bit, those of the general path (``PROGRAM_CUSTOM``
  with the same axis list: ``bv.dispatch.box_separation``, no caching);
* ``query_entry_w`` (pairs at the workspace's end, no trace buffer) returns what
  ``query_entry`` returns and writes the same counts; it refuses a traced plan;
* ``collide``'s common-case result (slots, lazy views) equals the general path's result
  (a trace forces the general path), survives ``dataclasses.replace`` and pickling.
"""
import dataclasses
import pickle

import numpy as np
import pytest

import cdcore
from cdcore import _core
from cdcore import _layout as L
from cdcore._overlap import PROGRAM_CUSTOM, SAT6_AXES, SAT15_AXES, SPHERE5_AXES
from cdcore.bench.common import linked_pose, near_contact_poses, torus_mesh
from cdcore.collide import _NO_PAIRS, _PLANS, _Result, collide
from cdcore.transforms import make_pose, random_rotations

from meshgen import torus


def _trees():
    a = cdcore.build_bvh(torus_mesh(32, 12), "obb")
    b = cdcore.build_bvh(cdcore.Mesh(*torus(0.9, 0.3, 20, 9)), "obb", 2)
    return a, b


def _poses(n, seed):
    rng = np.random.default_rng(seed)
    out = [linked_pose(g) for g in (0.1, 0.01, -0.05)] + list(near_contact_poses(8, seed=seed))
    for R in random_rotations(n, rng):
        out.append(make_pose(R, rng.uniform(-1.2, 1.2, 3)))
    return out


def _traced(bvh_a, bvh_b, pose_b, plan):
    """query_entry with a trace buffer big enough for the whole traversal: (n, counts, trace rows)."""
    o = _core.workspace_len(bvh_a._stack_h, bvh_b._stack_h)
    W = np.zeros(o + 200000, dtype=np.int64)
    rows = np.zeros((200000, L.TRACE_COLS), dtype=np.int32)
    n = _core.query_entry(bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I, np.eye(4), pose_b, plan, W, _NO_PAIRS, rows)
    assert n >= 0
    return n, W[:L.N_STATS].copy(), rows[:W[L.W_STATE + L.ST_TRACE]].copy()


@pytest.mark.parametrize("test, axes", [("sat15", SAT15_AXES), ("sat6", SAT6_AXES), ("sphere5", SPHERE5_AXES)])
@pytest.mark.parametrize("first", [False, True])
def test_obb_loop_equals_the_uncached_general_path(test, axes, first):
    """The fixed programs' cached loop against PROGRAM_CUSTOM with the same axes (uncached),
    trace row by row, counters and histogram."""
    bv = "obb_sphere" if test == "sphere5" else "obb"
    a, b = _trees()
    if bv != "obb":
        a = cdcore.build_bvh(a.mesh, bv)
        b = cdcore.build_bvh(b.mesh, bv, 2)
    fixed = _PLANS[(bv, test, None)]
    plan = _core.make_plan(fixed.kind, fixed.test, fixed.program, 0, first, True)
    custom = _core.make_plan(fixed.kind, fixed.test, PROGRAM_CUSTOM, 0, first, True, axes=axes)
    seen_sep = seen_hit = 0
    for pose in _poses(12, 7):
        n1, c1, t1 = _traced(a, b, pose, plan)
        n2, c2, t2 = _traced(a, b, pose, custom)
        assert n1 == n2
        np.testing.assert_array_equal(c1[:L.CNT_PRIM_CYCLES], c2[:L.CNT_PRIM_CYCLES])
        np.testing.assert_array_equal(c1[L.CNT_MAX_STACK:], c2[L.CNT_MAX_STACK:])  # max stack, histogram
        np.testing.assert_array_equal(t1, t2)
        seen_sep += int(c1[L.N_COUNTERS:L.N_COUNTERS + 15].sum() > 0)
        seen_hit += n1 > 0
    assert seen_sep > 5 and seen_hit > 3  # both outcomes exercised


@pytest.mark.parametrize("bv", ["obb", "aabb", "sphere", "obb_sphere"])
def test_entry_w_equals_query_entry(bv):
    a, b = _trees()
    a = cdcore.build_bvh(a.mesh, bv)
    b = cdcore.build_bvh(b.mesh, bv, 2)
    o = _core.workspace_len(a._stack_h, b._stack_h)
    for first in (False, True):
        plan = _PLANS[(bv, None, None)].plan(first)
        for pose in _poses(6, 11):
            W1 = np.full(o + 64 * a._leaf_cap * b._leaf_cap, -7, dtype=np.int64)
            W2 = W1.copy()
            n1 = _core.query_entry(a._F, a._I, b._F, b._I, np.eye(4), pose, plan, W1, _NO_PAIRS,
                                   np.zeros((1, L.TRACE_COLS), dtype=np.int32))
            n2 = _core.query_entry_w(a._F, a._I, b._F, b._I, np.eye(4), pose, plan, W2)
            assert n1 == n2
            k = L.W_STATUS + 1 + L.N_STATE  # counts, status, state (not the cycle counts: timings)
            W1[L.CNT_PRIM_CYCLES] = W2[L.CNT_PRIM_CYCLES] = 0
            np.testing.assert_array_equal(W1[:k], W2[:k])
            if n1 > 0:
                np.testing.assert_array_equal(W1[o:o + n1], W2[o:o + n1])  # the sorted pairs


def test_entry_w_refuses_a_traced_plan_and_bad_poses():
    a, b = _trees()
    o = _core.workspace_len(a._stack_h, b._stack_h)
    W = np.zeros(o + 64, dtype=np.int64)
    traced = _PLANS[("obb", None, None)].plan(False, True)
    with pytest.raises(ValueError, match="trace buffer"):
        _core.query_entry_w(a._F, a._I, b._F, b._I, np.eye(4), np.eye(4), traced, W)
    bad = np.eye(4)
    bad[0, 0] = 2.0  # not rigid
    plan = _PLANS[("obb", None, None)].plan(True)
    assert _core.query_entry_w(a._F, a._I, b._F, b._I, np.eye(4), bad, plan, W) == -(_core.POSE_B_BAD + 3)
    with pytest.raises(TypeError):  # the one signature: other types are refused, not compiled
        _core.query_entry_w(a._F, a._I, b._F, b._I, np.eye(4), np.eye(4, dtype=np.float32), plan, W)


def test_common_result_equals_the_general_path():
    a, b = _trees()
    common = 0
    for pose in _poses(6, 3):
        for contacts in ("all", "first"):
            fast = collide(a, None, b, pose, contacts=contacts)
            common += type(fast) is _Result  # else a full pairs buffer was grown (``_finish``)
            full = collide(a, None, b, pose, contacts=contacts, trace=True)  # the general path
            assert fast.hit == full.hit
            np.testing.assert_array_equal(fast.pairs, full.pairs)
            keep = np.arange(len(full.counts)) != L.CNT_PRIM_CYCLES  # not the timings
            np.testing.assert_array_equal(fast.counts[keep], full.counts[keep])
            assert fast.stats.bv_tests == full.stats.bv_tests == len(full.trace)
            np.testing.assert_array_equal(fast.stats.axis_hist, full.stats.axis_hist)
            assert fast.trace is None and fast.points is None and fast.t_total > 0.0
    assert common > 10
    res = collide(a, None, b, linked_pose(-0.05), contacts="first")
    assert type(res) is _Result and res.hit and len(res.pairs) == 1
    none = dataclasses.replace(res, pairs=res.pairs[:0])
    assert none.pairs.shape == (0, 2) and none.hit and none.stats.bv_tests == res.stats.bv_tests
    back = pickle.loads(pickle.dumps(res))
    assert back.hit == res.hit and back.stats.bv_tests == res.stats.bv_tests
    np.testing.assert_array_equal(back.pairs, res.pairs)
