"""MJCF robots (cdcore.articulated.load_mjcf) against MuJoCo itself: forward kinematics
against mj_kinematics, hull-mode geom contacts against mj_collision, the pair filter."""
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from cdcore.articulated import SelfCollisionChecker, load_mjcf, self_collision_pairs  # noqa: E402
from cdcore.articulated.mjcf import MJCFError, MJCFRobot  # noqa: E402
from cdcore.articulated.selfcollision import pair_mask  # noqa: E402
from cdcore.articulated.urdf import RobotBody  # noqa: E402
from mjcfgen import assert_poses_equal_mujoco, write_crossarms  # noqa: E402

SHADOW = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "robots", "mjcf", "shadow_hand", "hand",
                      "reach.xml")
if not os.path.isfile(SHADOW):
    SHADOW = "/work/shared/robots/mjcf/shadow_hand/hand/reach.xml"
# Geom pairs whose MuJoCo contact distance or our exact distance is within this of zero
# are touching: either answer is right (MuJoCo's narrow phase and ours round differently).
TOUCH = 1e-6


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("mjcf")
    out = {"crossarms": write_crossarms(str(d)), "nofilterparent": write_crossarms(str(d), False, "nofp.xml")}
    if os.path.isfile(SHADOW):
        out["shadow"] = SHADOW
    return out


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_mjcf(path, **kw)


def _set_q(m, d, robot, q):
    d.qpos[:] = m.qpos0
    for k, n in enumerate(robot.joint_names):
        d.qpos[m.jnt_qposadr[m.joint(n).id]] = q[k]


@pytest.mark.parametrize("name", ["crossarms", "nofilterparent", "shadow"])
def test_fk_equals_mj_kinematics(models, name):
    if name not in models:
        pytest.skip("shared Shadow hand not present")
    path = models[name]
    r = _load(path)
    assert isinstance(r, RobotBody) and isinstance(r, MJCFRobot)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(7)
    for _ in range(25):
        q = rng.uniform(r.limits[:, 0], r.limits[:, 1])
        _set_q(m, d, r, q)
        assert_poses_equal_mujoco(m, d, r, q)


def test_crossarms_structure(models):
    r = _load(models["crossarms"])
    m = mujoco.MjModel.from_xml_path(models["crossarms"])
    hs = [m.joint(j).name for j in range(m.njnt) if m.jnt_type[j] in (2, 3)]
    assert r.joint_names == hs == ["left_shoulder", "left_twist", "left_elbow", "left_slide", "right_shoulder",
                                   "right_elbow", "right_spin", "right_rail"]
    assert r.joints["left_wrist"].type == "ball" and r.joints["left_wrist"].dof == -1
    assert r.joints["puck_free"].type == "free"
    np.testing.assert_allclose(r.limits[0], np.radians([-80, 80]))
    np.testing.assert_allclose(r.limits[3], [0, 0.05])
    assert r.continuous.tolist() == [False] * 6 + [True, False]
    assert r.limits[6].tolist() == [-np.pi, np.pi]
    assert r.limits[7, 1] == pytest.approx(m.stat.extent) and r.limits[7, 0] == -r.limits[7, 1]
    # bodies with collision geoms (mount and left_elbow_link have none); the world joins
    # the arm tree and the free puck
    assert r.link_names == ["world", "base", "left_upper", "left_fore", "left_hand", "left_welded", "right_upper",
                            "right_fore", "right_rail", "puck"]
    assert r.has_geometry.tolist() == [False] + [True] * 9
    assert r.skipped_geoms == [("floor", "plane (infinite)")]
    assert "base_vis" not in [g.name for g in r.geoms]
    # ball/free joints take no q entry: q at qpos0 reproduces the compiled rest pose
    with pytest.warns(UserWarning, match="floor"):
        load_mjcf(models["crossarms"])


def test_pair_filter(models):
    r = _load(models["crossarms"])
    names = r.link_names
    ix = {n: i for i, n in enumerate(names)}
    # weld parents (MuJoCo's filterparent): left_fore's parent body has no joint, so its
    # weld parent is left_upper; base is welded to the world, which is never a filtered parent
    pc = {(names[a], names[b]) for a, b in r.parent_child_pairs()}
    assert pc == {("left_upper", "left_fore"), ("left_fore", "left_hand"), ("left_fore", "left_welded"),
                  ("right_upper", "right_fore"), ("right_fore", "right_rail")}
    # the welded body is one weld body with left_hand; the exclude removes left_hand-right_fore
    assert ("left_hand", "left_welded") in r.default_disabled
    assert ("left_hand", "right_fore") in r.default_disabled
    # the explicit <pair> keeps left_fore-right_fore although contype 2 vs conaffinity 0/1
    # would allow left_tip only against ... (the pair is explicit)
    assert r.link_mask[ix["left_fore"], ix["right_fore"]]
    # pair_mask with defaults is exactly MuJoCo's link-level filter
    mask = pair_mask(r)
    assert np.array_equal(mask, r.link_mask | r.link_mask.T)
    # an explicit empty list turns the MJCF filter off (parent-child skipping stays)
    assert pair_mask(r, True, []).sum() > mask.sum()
    rn = _load(models["nofilterparent"])
    assert rn.parent_child_pairs() == set()


@pytest.mark.parametrize("name", ["crossarms", "nofilterparent", "shadow"])
def test_hull_mode_pairs_equal_mj_collision(models, name):
    if name not in models:
        pytest.skip("shared Shadow hand not present")
    path = models[name]
    r = _load(path, meshes="hull")
    m = mujoco.MjModel.from_xml_path(path)
    m.geom_margin[:] = 0.0
    m.geom_gap[:] = 0.0
    if m.npair:
        m.pair_margin[:] = 0.0
        m.pair_gap[:] = 0.0
    d = mujoco.MjData(m)
    ids = {g.id: k for k, g in enumerate(r.geoms)}
    names = [g.name for g in r.geoms]
    from cdcore._prim import pack_primitives, prim_pairs_distance
    kind, size, voff, verts = pack_primitives([g.hull for g in r.geoms])
    rng = np.random.default_rng(11)
    total = 0
    n_conf = 150 if name == "shadow" else 200
    for _ in range(n_conf):
        q = rng.uniform(r.limits[:, 0], r.limits[:, 1])
        _set_q(m, d, r, q)
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)
        theirs, touching = set(), set()
        for c in d.contact[:d.ncon]:
            if c.geom1 in ids and c.geom2 in ids:
                pr = tuple(sorted((ids[c.geom1], ids[c.geom2])))
                (touching if c.dist > -TOUCH else theirs).add(pr)
        theirs -= touching
        ours = {tuple(sorted((names.index(a), names.index(b)))) for a, b in r.colliding_geoms(q)}
        diff = sorted(ours ^ theirs)
        if diff:  # only touching pairs may differ: check our exact distance
            pairs = np.array(diff, dtype=np.int64)
            dist = prim_pairs_distance(kind, size, voff, verts, np.ascontiguousarray(r.geom_poses(q)), pairs,
                                       np.empty((len(pairs), 2, 3)))
            bad = [(names[i], names[j]) for (i, j), dd in zip(diff, dist) if dd > TOUCH and (i, j) not in touching]
            assert not bad, f"q={q.tolist()}: pairs differ from mj_collision: {bad}"
        total += len(theirs)
    assert total > 50  # the comparison saw contacts


def test_hull_mode_link_meshes_are_hulls(models):
    exact = _load(models["crossarms"])
    hull = _load(models["crossarms"], meshes="hull")
    li = exact.link_names.index("right_fore")
    ge = [g for g in exact.geoms if g.name == "right_ell"][0]
    gh = [g for g in hull.geoms if g.name == "right_ell"][0]
    assert ge.primitive is None and gh.primitive.kind == "convex"
    # the L's hull has fewer triangles than the L and contains its vertices
    assert gh.mesh.n_faces < ge.mesh.n_faces
    assert exact.bvhs[li].mesh.n_faces != hull.bvhs[li].mesh.n_faces


def test_self_collision_applies_mujoco_filter(models):
    r = _load(models["crossarms"])
    rng = np.random.default_rng(3)
    allowed = pair_mask(r)
    names = r.link_names
    seen = 0
    for _ in range(30):
        q = rng.uniform(r.limits[:, 0], r.limits[:, 1])
        for a, b in self_collision_pairs(r, q):
            assert allowed[names.index(a), names.index(b)]
            seen += 1
        every = self_collision_pairs(r, q, disabled=[])
        assert set(self_collision_pairs(r, q)) <= set(every)
    assert seen > 0


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_mjcf(tmp_path / "missing.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom type='sphere' size='0.1'></body></worldbody></mujoco>")
    with pytest.raises(MJCFError, match="bad.xml: MuJoCo cannot compile"):
        load_mjcf(bad)
    empty = tmp_path / "empty.xml"
    empty.write_text("<mujoco><worldbody><geom type='plane' size='1 1 1'/><body><joint/>"
                     "<geom type='sphere' size='0.1' contype='0' conaffinity='0'/></body></worldbody></mujoco>")
    with pytest.raises(MJCFError, match="no collision geom"), pytest.warns(UserWarning, match="plane"):
        load_mjcf(empty)
    ok = tmp_path / "ok.xml"
    ok.write_text("<mujoco><worldbody><body><joint/><geom type='sphere' size='0.1'/></body></worldbody></mujoco>")
    with pytest.raises(ValueError, match="meshes"):
        load_mjcf(ok, meshes="convex")
    r = load_mjcf(ok)
    assert r.n_dofs == 1 and r.link_names == ["body1"]


def _brute_link_pairs(r, q):
    """Reference for exact-primitive links: every geom pair of different links, primitives
    as solids (``_prim`` pair test), each primitive against every triangle of a mesh geom,
    meshes against meshes triangle by triangle; no hierarchy anywhere."""
    from cdcore._prim import pack_primitives, prim_pairs_intersect, prim_triangle_intersect
    from cdcore._tritri_ref import tri_tri_overlap_numpy
    poses = r.fk(q)
    out = set()
    G = r.geoms
    for a in range(len(G)):
        for b in range(a + 1, len(G)):
            ga, gb = G[a], G[b]
            la, lb = sorted((ga.link, gb.link))
            if ga.link == gb.link or (la, lb) in out:
                continue
            if ga.primitive is not None and gb.primitive is not None:
                k, s, vo, v = pack_primitives([ga.primitive, gb.primitive])
                P = np.ascontiguousarray([poses[ga.link] @ ga.primitive.pose, poses[gb.link] @ gb.primitive.pose])
                hit = prim_pairs_intersect(k, s, vo, v, P, np.array([[0, 1]], np.int64))[0]
            elif ga.primitive is None and gb.primitive is None:
                ta = ga.mesh.triangles() @ poses[ga.link][:3, :3].T + poses[ga.link][:3, 3]
                tb = gb.mesh.triangles() @ poses[gb.link][:3, :3].T + poses[gb.link][:3, 3]
                ia, ib = np.divmod(np.arange(len(ta) * len(tb)), len(tb))
                hit = tri_tri_overlap_numpy(ta[ia], tb[ib]).any()
            else:
                gp, gm = (ga, gb) if ga.primitive is not None else (gb, ga)
                k, s, vo, v = pack_primitives([gp.primitive])
                pose = poses[gp.link] @ gp.primitive.pose
                tris = gm.mesh.triangles() @ poses[gm.link][:3, :3].T + poses[gm.link][:3, 3]
                hit = any(prim_triangle_intersect(k[0], s[0], pose, v, vo[0], vo[1], np.ascontiguousarray(t))
                          for t in tris)
            if hit:
                out.add((la, lb))
    return {(r.link_names[a], r.link_names[b]) for a, b in out}


@pytest.mark.parametrize("name,meshes", [("crossarms", "exact"), ("crossarms", "hull"), ("shadow", "exact")])
def test_exact_primitive_links_vs_brute_force(models, name, meshes):
    if name not in models:
        pytest.skip("shared Shadow hand not present")
    r = _load(models[name], meshes=meshes)
    assert r.prims is not None and len(r.prims.kind) > 0
    rng = np.random.default_rng(5)
    seen = 0
    for _ in range(40 if name == "crossarms" else 15):
        q = rng.uniform(r.limits[:, 0], r.limits[:, 1])
        chk = SelfCollisionChecker(r, skip_adjacent=False, disabled=[])
        ours = set(chk.check(q).pairs)  # the fused kernel
        ref = _brute_link_pairs(r, q)
        assert ours == ref, q.tolist()
        assert set(chk.check_poses(r.fk(q)).pairs) == ref  # broad phase + run_exact_queries
        seen += len(ref)
    assert seen > 0


def test_environment_pairs_with_primitive_links(models):
    """A robot of exact primitives against a mesh obstacle equals a per-geom brute force."""
    from cdcore import shapes
    from cdcore._prim import pack_primitives, prim_triangle_intersect
    from cdcore._tritri_ref import tri_tri_overlap_numpy
    from cdcore.articulated import environment_pairs
    from cdcore.transforms import make_pose
    r = _load(models["crossarms"])
    slab = shapes.box((0.5, 0.5, 0.03))
    tris0 = slab.triangles()
    rng = np.random.default_rng(9)
    seen = 0
    for _ in range(25):
        q = rng.uniform(r.limits[:, 0], r.limits[:, 1])
        pose = make_pose(None, [rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), rng.uniform(0.1, 0.5)])
        got = {a for a, _ in environment_pairs(r, q, slab, pose)}
        tris = tris0 + pose[:3, 3]
        P = r.fk(q)
        ref = set()
        for g in r.geoms:
            if g.primitive is not None:
                k, sz, vo, v = pack_primitives([g.primitive])
                gp = P[g.link] @ g.primitive.pose
                hit = any(prim_triangle_intersect(k[0], sz[0], gp, v, vo[0], vo[1], np.ascontiguousarray(t))
                          for t in tris)
            else:
                tg = g.mesh.triangles() @ P[g.link][:3, :3].T + P[g.link][:3, 3]
                ia, ib = np.divmod(np.arange(len(tg) * len(tris)), len(tris))
                hit = tri_tri_overlap_numpy(tg[ia], tris[ib]).any()
            if hit:
                ref.add(r.link_names[g.link])
        assert got == ref
        seen += len(ref)
    assert seen > 3


def test_shadow_hand_against_pinocchio_and_coal(models):
    """pinocchio + coal (from a normalised copy of the scene) as an independent reference:
    its geom placements equal MuJoCo's, its pair set is the checker's, and the colliding
    link pairs agree (touching pairs excepted) on random and grasp configurations."""
    if "shadow" not in models:
        pytest.skip("shared Shadow hand not present")
    pytest.importorskip("pinocchio")
    from cdcore.articulated.trajectory import grasp_trajectory
    from cdcore.bench.pin_reference import PinocchioRobot

    path = models["shadow"]
    r = _load(path)
    chk = SelfCollisionChecker(r)
    ref = PinocchioRobot.from_mjcf(r, path, chk.mask)
    names = r.link_names
    assert ref.pair_universe() == {(names[i], names[j]) for i, j in zip(*np.nonzero(np.triu(chk.mask, 1)))}
    pin = ref.pin
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(5)
    qs = [rng.uniform(r.limits[:, 0], r.limits[:, 1]) for _ in range(60)] + list(grasp_trajectory(r, 30))
    hits = 0
    for k, q in enumerate(qs):
        if k < 10:  # pinocchio's kinematics and geom frames are MuJoCo's (mesh geoms: vertices)
            _set_q(m, d, r, q)
            mujoco.mj_kinematics(m, d)
            pin.updateGeometryPlacements(ref.model, ref.data, ref.gmodel, ref.gdata, ref.q(q))
            for i, go in enumerate(ref.gmodel.geometryObjects):
                g = m.geom(go.name).id
                T = ref.gdata.oMg[i]
                if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
                    a, n = m.mesh_vertadr[m.geom_dataid[g]], m.mesh_vertnum[m.geom_dataid[g]]
                    ours = m.mesh_vert[a:a + n] @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
                    geo = go.geometry
                    theirs = np.asarray(geo.vertices()) @ T.rotation.T + T.translation
                    assert ours.shape == theirs.shape
                    assert np.abs(np.sort(ours, 0) - np.sort(theirs, 0)).max() < 1e-7  # STL float32 vs MuJoCo
                else:
                    np.testing.assert_allclose(T.translation, d.geom_xpos[g], atol=1e-12)
                    np.testing.assert_allclose(T.rotation, d.geom_xmat[g].reshape(3, 3), atol=1e-12)
        ours = set(chk.check(q).pairs)
        diff = ours ^ ref.colliding_pairs(q)
        assert all(abs(ref.link_distance(q, *p)) < 1e-5 for p in diff), (k, diff)
        hits += len(ours)
    assert hits > 50  # grasps close the fingers on the thumb: the test can fail
