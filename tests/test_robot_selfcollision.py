"""Self-collision of URDF robots: every update method equals brute force and pinocchio +
coal; adjacency, disabled pairs (SRDF) and robot-versus-environment."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdcore import build_bvh, collide, shapes
from cdcore.articulated import (
    SelfCollisionChecker,
    brute_force_self_pairs,
    environment_pairs,
    load_urdf,
    read_srdf_disabled,
    self_collision_pairs,
)
from cdcore.articulated.hierarchy import UPDATE_METHODS
from cdcore.articulated.shared_robots import shared_robot
from cdcore.articulated.trajectory import grasp_trajectory
from cdcore.transforms import make_pose

TOUCH_TOL = 1e-5


def shared(name):
    try:
        sr = shared_robot(name)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    return load_urdf(sr.urdf, sr.package_dir), sr


def _configs(body, n, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(body.limits[:, 0], body.limits[:, 1]) for _ in range(n)]


@pytest.mark.parametrize("method", UPDATE_METHODS)
def test_methods_equal_brute_force_own(twoarm, method):
    body = twoarm[0]
    chks = [SelfCollisionChecker(body, method, broad="hierarchy")]
    if method in ("obb", "cab", "cab_sum"):
        chks.append(SelfCollisionChecker(body, method, broad="pairs"))
    chk = chks[0]
    hits = 0
    for q in _configs(body, 60, 5):
        ref = brute_force_self_pairs(body, q)
        for c in chks:
            assert c.check(q).pairs == ref, c.broad
        # the step-by-step path (public pieces, no fused kernel) agrees too
        assert chk.check_poses(body.fk(q)).pairs == ref
        hits += len(ref)
    assert hits > 20  # the arms do cross: the test can fail


@settings(max_examples=40)
@given(st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3), st.sampled_from(UPDATE_METHODS),
       st.booleans())
def test_hypothesis_brute_force(twoarm, u, method, skip_adjacent):
    body = twoarm[0]
    lo, hi = body.limits[:, 0], body.limits[:, 1]
    q = lo + (np.array(u) + 1) / 2 * (hi - lo)
    assert (self_collision_pairs(body, q, method, skip_adjacent=skip_adjacent)
            == brute_force_self_pairs(body, q, skip_adjacent=skip_adjacent))


def test_adjacent_and_disabled(twoarm):
    body = twoarm[0]
    # left slider sits on the left arm: always touching, reported only without skip_adjacent
    q = np.array([0.0, 2.0, 0.05])
    assert ("left_arm", "left_slider") not in self_collision_pairs(body, q)
    assert ("left_arm", "left_slider") in self_collision_pairs(body, q, skip_adjacent=False)
    # arms crossed: disabling the pair removes it, in either order
    q = np.array([0.3, 0.0, 0.0])
    assert ("left_arm", "right_arm") in self_collision_pairs(body, q)
    assert ("left_arm", "right_arm") not in self_collision_pairs(body, q, disabled=[("right_arm", "left_arm")])
    # a geometry-less URDF link may be named; unknown names are an error naming them
    self_collision_pairs(body, q, disabled=[("mount", "base")])
    with pytest.raises(ValueError, match="ghost"):
        self_collision_pairs(body, q, disabled=[("ghost", "base")])
    with pytest.raises(ValueError, match="method"):
        SelfCollisionChecker(body, "sphere")
    with pytest.raises(ValueError, match="shape"):
        SelfCollisionChecker(body).check(np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        SelfCollisionChecker(body).check(np.array([0, np.inf, 0]))


def test_root_pose_does_not_change_self_collision(twoarm):
    body = twoarm[0]
    chk = SelfCollisionChecker(body)
    pose = make_pose(None, [1.0, -2.0, 0.5])
    for q in _configs(body, 10, 9):
        assert chk.check(q, root_pose=pose).pairs == chk.check(q).pairs


def test_against_pinocchio_own(twoarm):
    pytest.importorskip("pinocchio")
    from cdcore.bench.pin_reference import PinocchioRobot
    body, urdf, root = twoarm
    chk = SelfCollisionChecker(body)
    ref = PinocchioRobot(body, urdf, root, chk.mask)
    assert ref.pair_universe() == {(body.link_names[i], body.link_names[j]) for i, j in zip(*np.nonzero(
        np.triu(chk.mask, 1)))}
    for q in _configs(body, 100, 11):
        diff = set(chk.check(q).pairs) ^ ref.colliding_pairs(q)
        assert all(abs(ref.link_distance(q, *p)) < TOUCH_TOL for p in diff), diff


@pytest.mark.parametrize("name", ["allegro", "panda"])
def test_shared_robots_against_brute_force_and_pinocchio(name):
    pytest.importorskip("pinocchio")
    from cdcore.bench.pin_reference import PinocchioRobot
    body, sr = shared(name)
    disabled = read_srdf_disabled(sr.srdf) if sr.srdf else None
    checkers = [SelfCollisionChecker(body, m, disabled=disabled, broad="hierarchy") for m in UPDATE_METHODS]
    checkers += [SelfCollisionChecker(body, m, disabled=disabled, broad="pairs") for m in ("obb", "cab", "cab_sum")]
    assert {c.broad for c in checkers} == {"hierarchy", "pairs"}
    ref = PinocchioRobot(body, sr.urdf, sr.package_dir, checkers[0].mask)
    qs = _configs(body, 40, 13)
    if name == "allegro":
        qs += list(grasp_trajectory(body, 20))
    hits = 0
    for q in qs:
        bf = brute_force_self_pairs(body, q, disabled=disabled)
        cands = None
        for c in checkers:
            r = c.check(q)
            assert r.pairs == bf, (c.method, c.broad)
            if c.method == "cab":  # both broad phases report the same overlapping leaf boxes
                if cands is None:
                    cands = r.candidates.tolist()
                assert r.candidates.tolist() == cands, c.broad
        diff = set(bf) ^ ref.colliding_pairs(q)
        assert all(abs(ref.link_distance(q, *p)) < TOUCH_TOL for p in diff), diff
        hits += len(bf)
    assert hits > 0


def test_broad_phase_choice(twoarm):
    body = twoarm[0]
    assert SelfCollisionChecker(body).broad == "pairs"  # a small robot, CAB leaves are oriented boxes
    assert SelfCollisionChecker(body, "aabb_plus").broad == "hierarchy"
    assert SelfCollisionChecker(body, broad="hierarchy").broad == "hierarchy"
    with pytest.raises(ValueError, match="oriented leaf boxes"):
        SelfCollisionChecker(body, "aabb_star", broad="pairs")
    with pytest.raises(ValueError, match="broad"):
        SelfCollisionChecker(body, broad="tree")
    a, b = SelfCollisionChecker(body, broad="hierarchy"), SelfCollisionChecker(body, broad="pairs")
    for q in _configs(body, 60, 17):
        ra, rb = a.check(q), b.check(q)
        assert ra.pairs == rb.pairs
        assert ra.candidates.tolist() == rb.candidates.tolist()


def test_srdf_reader(tmp_path):
    p = tmp_path / "r.srdf"
    p.write_text('<robot name="r"><disable_collisions link1="a" link2="b" reason="Adjacent"/>'
                 '<disable_collisions link1="b" link2="c"/></robot>')
    assert read_srdf_disabled(p) == [("a", "b"), ("b", "c")]
    p.write_text('<robot name="r"><disable_collisions link1="a"/></robot>')
    with pytest.raises(ValueError, match="link2"):
        read_srdf_disabled(p)
    p.write_text('<robot')
    with pytest.raises(ValueError, match="XML"):
        read_srdf_disabled(p)
    with pytest.raises(FileNotFoundError):
        read_srdf_disabled(tmp_path / "none.srdf")


def test_panda_srdf_disables_pairs():
    body, sr = shared("panda")
    dis = read_srdf_disabled(sr.srdf)
    full = SelfCollisionChecker(body).mask.sum()
    assert SelfCollisionChecker(body, disabled=dis).mask.sum() < full


def test_environment_equals_per_link_collide(twoarm):
    # tessellated primitives: every link is its mesh hierarchy (exact primitive links are
    # checked against a brute force in test_mjcf.py)
    body = load_urdf(twoarm[1], twoarm[2], primitives="tessellate")
    table = shapes.box((0.6, 0.6, 0.02))
    tb = build_bvh(table, "obb")
    rng = np.random.default_rng(3)
    seen = 0
    for k in range(40):
        q = rng.uniform(body.limits[:, 0], body.limits[:, 1])
        env_pose = make_pose(None, [rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), rng.uniform(0.0, 0.15)])
        got = environment_pairs(body, q, table, env_pose)
        poses = body.fk(q)
        ref = [(n, table.name) for i, n in enumerate(body.link_names)
               if collide(body.bvhs[i], poses[i], tb, env_pose, contacts="first").hit]
        assert got == ref
        seen += len(ref)
    assert seen > 5
    with pytest.raises(TypeError, match="env"):
        environment_pairs(body, np.zeros(3), "table")


def test_q_passed_through_or_copied_one_signature(twoarm):
    """A float64 contiguous writeable q goes to the kernel as it is; read-only, strided,
    unaligned, integer or list inputs are copied: same answers, one compiled signature."""
    from cdcore.articulated._self_kernel import self_check
    body = twoarm[0]
    chk = SelfCollisionChecker(body)
    q = np.array([0.3, 0.0, 0.02])
    want = chk.check(q).pairs
    assert want  # the arms cross
    ro = q.copy()
    ro.setflags(write=False)
    strided = np.zeros(6)
    strided[::2] = q
    for v in (ro, strided[::2], q.tolist(), q.astype(np.float32), np.asarray(q, dtype=">f8")):
        assert chk.check(v).pairs == want
    unaligned_q = np.frombuffer(np.concatenate([[0], np.frombuffer(q.tobytes(), np.uint8)]).astype(np.uint8).tobytes(),
                                dtype=np.float64, count=3, offset=1)
    assert chk.check(unaligned_q).pairs == want
    # the kernel checks the length (FK reads q[src]): a short or long vector is refused
    for v in (np.zeros(2), np.zeros(4), np.zeros((1, 3)), np.zeros(0)):
        with pytest.raises(ValueError, match=r"q: expected shape \(3,\)"):
            chk.check(v)
    with pytest.raises(TypeError, match="q: expected 3 real joint values"):
        chk.check("abc")
    assert len(self_check.signatures) == 1
    assert q.tolist() == [0.3, 0.0, 0.02]  # never written


def test_robot_kernels_without_reference_counting():
    """The robot kernels that allocate nothing are compiled without numba's runtime
    (``cdcore._pairjit``): FK, the leaf boxes, the pair sweep, the pose check and the
    closed-form primitive tests."""
    from cdcore import _pairjit, _prim
    from cdcore.articulated import _robot_fk, _self_kernel
    for fn in (_robot_fk.robot_fk, _self_kernel.leaf_boxes, _self_kernel.pair_sweep, _self_kernel._poses_bad,
               _self_kernel._fk_checked, _self_kernel._pairs_broad, _self_kernel._prims_closed,
               _self_kernel._closed_pair, _prim._round_round_hit, _prim._box_box_hit, _prim._sphere_box_hit,
               _prim.closed_form_hit, _prim.has_closed_form):
        assert fn.targetoptions.get("_nrt") is (False if _pairjit.NRT_FREE else None), fn.py_func.__name__


@pytest.mark.parametrize("broad", ["hierarchy", "pairs"])
def test_results_keep_their_own_output(twoarm, broad):
    """``check`` writes each query into its own output array: results read after later
    queries (pairs, candidates, counters) are still their own configuration's."""
    body = twoarm[0]
    chk = SelfCollisionChecker(body, broad=broad)
    qs = _configs(body, 30, 5) + [np.array([0.3, 0.0, 0.02])]
    results = [chk.check(q) for q in qs]  # all queries first, then read every result
    want = [brute_force_self_pairs(body, q) for q in qs]
    assert any(want) and not all(want)  # hits and misses interleaved
    for q, r, w in zip(qs, results, want):
        assert r.pairs == w
        assert r.hit == bool(w)
        assert {tuple(p) for p in r.link_pairs.tolist()} <= {tuple(p) for p in r.candidates.tolist()}
        again = chk.check(q)
        assert r.candidates.tolist() == again.candidates.tolist()
        assert r.broad.bv_tests == again.broad.bv_tests
