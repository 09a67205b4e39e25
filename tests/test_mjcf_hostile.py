"""load_mjcf on hostile or unusual MJCF files: names that collide with the names cdcore
invents, collision geoms in <worldbody>, files named by the model that are not regular files
(a FIFO would block MuJoCo for ever)."""
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from cdcore.articulated import load_mjcf, self_collision_pairs  # noqa: E402

BOX = '<geom type="box" size=".1 .1 .1"/>'


def _write(d, name, text):
    p = os.path.join(str(d), name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)
    return p


def _load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_mjcf(path, **kw)


def _assert_fk_equals_mujoco(path, r, seed=3):
    """cdcore's link and geom poses against mj_kinematics, q set by dof order (invented joint
    names are not MuJoCo's, so no lookup by name)."""
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    dofs = [j for j in range(m.njnt) if m.jnt_type[j] in (2, 3)]
    assert r.n_dofs == len(dofs)
    assert len(set(r.frame_names)) == len(r.frame_names)
    assert len(set(r.link_names)) == len(r.link_names)
    assert len(set(r.joint_names)) == len(r.joint_names)
    assert len({g.name for g in r.geoms}) == len(r.geoms)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        q = rng.uniform(-1.0, 1.0, r.n_dofs)
        d.qpos[:] = m.qpos0
        for k, j in enumerate(dofs):
            d.qpos[m.jnt_qposadr[j]] = q[k]
        mujoco.mj_kinematics(m, d)
        P = r.fk(q)
        np.testing.assert_allclose(P[:, :3, 3], d.xpos[r.body_ids], atol=1e-12)
        np.testing.assert_allclose(P[:, :3, :3], d.xmat[r.body_ids].reshape(-1, 3, 3), atol=1e-12)
        G = r.geom_poses(q)
        ids = [g.id for g in r.geoms]
        np.testing.assert_allclose(G[:, :3, 3], d.geom_xpos[ids], atol=1e-12)
        np.testing.assert_allclose(G[:, :3, :3], d.geom_xmat[ids].reshape(-1, 3, 3), atol=1e-12)


# --- collision geoms directly in <worldbody> ------------------------------------------------

def test_world_geoms_are_a_fixed_root_link(tmp_path):
    path = _write(tmp_path, "table.xml",
                  '<mujoco><worldbody><geom name="table" type="box" size=".5 .5 .02" pos="0 0 -.02"/>'
                  '<geom name="floor" type="plane" size="2 2 .1"/>'
                  '<body name="a" pos="0 0 .05"><joint name="ja" axis="0 1 0" pos="0 0 .3"/>'
                  '<geom name="ball" type="sphere" size=".1"/>'
                  '<body name="b" pos="0 0 .5"><joint name="jb" axis="0 1 0"/><geom name="rod" type="capsule" '
                  'fromto="0 0 0 .3 0 0" size=".03"/></body></body>'
                  '<body name="post" pos=".3 .3 .1"><geom name="post" type="cylinder" size=".05 .1"/></body>'
                  '</worldbody></mujoco>')
    r = _load(path)
    assert r.link_names[0] == "world" and r.body_ids[0] == 0 and r.has_geometry[0]
    assert {g.name for g in r.geoms if g.link == 0} == {"table"}
    assert [n for n, _ in r.skipped_geoms] == ["floor"]
    _assert_fk_equals_mujoco(path, r)
    np.testing.assert_allclose(r.fk(np.array([0.4, -0.2]))[0], np.eye(4))
    # the ball rests in the table at q = 0: MuJoCo's contacts and cdcore's agree
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    for q in ([0.0, 0.0], [0.6, 0.0], [-1.2, 0.3]):
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        mj = {tuple(sorted((m.geom(c.geom1).name, m.geom(c.geom2).name))) for c in d.contact[:d.ncon]
              if c.dist < -1e-6}
        mj = {p for p in mj if "floor" not in p}
        ours = {tuple(sorted(p)) for p in r.colliding_geoms(np.array(q))}
        assert ours == mj
        pairs = self_collision_pairs(r, np.array(q))
        assert all(isinstance(a, str) and isinstance(b, str) for a, b in pairs)
    assert ("ball", "table") in {tuple(sorted(p)) for p in r.colliding_geoms(np.zeros(2))}
    assert ("a", "world") in {tuple(sorted(p)) for p in self_collision_pairs(r, np.zeros(2))}


def test_world_geoms_only(tmp_path):
    path = _write(tmp_path, "only.xml", '<mujoco><worldbody><geom name="table" type="box" size=".5 .5 .02"/>'
                                        '<geom name="leg" type="box" size=".02 .02 .2" pos=".4 .4 -.2"/>'
                                        '</worldbody></mujoco>')
    r = _load(path)
    assert r.link_names == ["world"] and r.n_dofs == 0
    _assert_fk_equals_mujoco(path, r)
    assert self_collision_pairs(r, np.zeros(0)) == []
    assert r.colliding_geoms(np.zeros(0)) == []
