"""load_mjcf on hostile or unusual MJCF files: names that collide with the names cdcore
invents, collision geoms in <worldbody>, files named by the model that are not regular files
(a FIFO would block MuJoCo for ever)."""
import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from cdcore.articulated import load_mjcf, self_collision_pairs  # noqa: E402
from cdcore.articulated.mjcf import MJCFError  # noqa: E402
from mjcfgen import assert_poses_equal_mujoco  # noqa: E402

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
        assert_poses_equal_mujoco(m, d, r, q)


# --- names cdcore invents must not collide with the model's -------------------------------

COLLIDING = {
    # body 2 is unnamed: cdcore's "body2" is body 1's real name
    # (and "body3", then "body3_1", are real names: unnamed body 3 becomes "body3_2")
    "unnamed_body": f'<body name="body3"><joint name="ja"/>{BOX}<body pos="0.5 0 0"><joint name="jb"/>{BOX}'
                    f'<body pos="0.5 0 0"><joint name="jc" pos="0.1 0 0"/>{BOX}</body></body></body>'
                    f'<body name="body3_1" pos="0 1 0"><joint name="jd"/>{BOX}</body>'
                    f'<body name="body2" pos="0 -1 0"><joint name="je"/>{BOX}</body>',
    # body a's hinge is off its origin: cdcore's frame "a/ja" is a real body's name
    "joint_frame": f'<body name="a"><joint name="ja" pos="0.1 0 0"/>{BOX}'
                   f'<body name="a/ja" pos="0.5 0 0"><joint name="jb"/>{BOX}</body></body>',
    # two invented frames that would be equal: body "a" joint "b/c", body "a/b" joint "c"
    "frame_frame": f'<body name="a"><joint name="b/c" pos="0.1 0 0"/>{BOX}'
                   f'<body name="a/b" pos="0.5 0 0"><joint name="c" pos="0 0.1 0"/>{BOX}</body></body>',
    # unnamed joint 1 and geom 1 beside a joint "joint1" and a geom "geom1"
    "unnamed_joint_geom": f'<body name="a"><joint name="joint1" pos="0.1 0 0"/><geom name="geom1" type="box" '
                          f'size=".1 .1 .1"/><body name="b" pos="0.5 0 0"><joint pos="0 .1 0"/>{BOX}'
                          f'<joint name="joint0" type="slide"/></body></body>',
}


@pytest.mark.parametrize("case", sorted(COLLIDING))
def test_invented_names_do_not_collide(tmp_path, case):
    xml = f"<mujoco><worldbody>{COLLIDING[case]}</worldbody></mujoco>"
    path = _write(tmp_path, case + ".xml", xml)
    r = _load(path)
    m = mujoco.MjModel.from_xml_path(path)
    assert sorted(set(r.body_ids.tolist()) - {0}) == list(range(1, m.nbody))
    for n in r.link_names:  # the model's own names are kept
        if n in xml:
            assert m.body(n).id == r.body_ids[r.link_names.index(n)]
    if case == "unnamed_body":
        assert r.link_names == ["world", "body3", "body2_1", "body3_2", "body3_1", "body2"]
    if case == "unnamed_joint_geom":
        assert r.joint_names == ["joint1", "joint1_1", "joint0"]
        assert [g.name for g in r.geoms] == ["geom1", "geom1_1"]
    _assert_fk_equals_mujoco(path, r)


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


# --- files the model names must be regular files ---------------------------------------------

def _stl(path):
    """A binary STL tetrahedron."""
    import struct
    v = [(0, 0, 0), (0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1)]
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    with open(path, "wb") as f:
        f.write(b"\0" * 80 + struct.pack("<I", len(faces)))
        for a, b, c in faces:
            f.write(struct.pack("<12fH", 0, 0, 0, *v[a], *v[b], *v[c], 0))


def _png(path):
    import struct
    import zlib

    def chunk(t, data):
        return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data))
    raw = b"".join(b"\0" + b"\x80\x80\x80" * 2 for _ in range(2))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


ARM = ('<body name="a"><joint name="ja"/><geom type="mesh" mesh="tet"{mat}/>'
       '<body name="b" pos="0.3 0 0"><joint name="jb"/><geom type="box" size=".1 .1 .1"/></body></body>')


def _model(tmp_path, case):
    """(main file, the path MuJoCo opens that will be replaced by something not regular, the
    value the model names it by). Every file is first regular: the model loads."""
    d = str(tmp_path)
    os.makedirs(d, exist_ok=True)
    mesh = '<mesh name="tet" file="{f}"/>'
    main = os.path.join(d, "main.xml")
    if case == "include":
        _write(d, "arm.xml", f"<mujoco><worldbody>{ARM.format(mat='')}</worldbody></mujoco>")
        _stl(os.path.join(d, "tet.stl"))
        _write(d, "main.xml", f'<mujoco><asset>{mesh.format(f="tet.stl")}</asset><include file="arm.xml"/></mujoco>')
        return main, os.path.join(d, "arm.xml"), "arm.xml"
    if case == "nested_include":  # sub/inc.xml includes inner.xml, found beside it
        _write(d, "sub/inc.xml", '<mujoco><include file="inner.xml"/></mujoco>')
        _write(d, "sub/inner.xml", f"<mujoco><worldbody>{ARM.format(mat='')}</worldbody></mujoco>")
        _stl(os.path.join(d, "tet.stl"))
        _write(d, "main.xml", f'<mujoco><asset>{mesh.format(f="tet.stl")}</asset><include file="sub/inc.xml"/>'
                              f'</mujoco>')
        return main, os.path.join(d, "sub", "inner.xml"), "inner.xml"
    if case in ("mesh", "mesh_dir", "mesh_abs", "mesh_entity"):
        os.makedirs(os.path.join(d, "meshes"))
        _stl(os.path.join(d, "meshes", "tet.stl"))
        f = {"mesh": "meshes/tet.stl", "mesh_dir": "tet.stl", "mesh_abs": os.path.join(d, "meshes", "tet.stl"),
             "mesh_entity": "meshes/t&#101;t.stl"}[case]
        comp = '<compiler meshdir="meshes"/>' if case == "mesh_dir" else ""
        _write(d, "main.xml", f'<mujoco>{comp}<asset>{mesh.format(f=f)}</asset><worldbody>{ARM.format(mat="")}'
                              f'</worldbody></mujoco>')
        return main, os.path.join(d, "meshes", "tet.stl"), f
    if case == "mesh_in_include":  # the <compiler assetdir> and the mesh in an included file
        os.makedirs(os.path.join(d, "assets"))
        _stl(os.path.join(d, "assets", "tet.stl"))
        _write(d, "parts/arm.xml", f'<mujoco><compiler assetdir="assets"/><asset>{mesh.format(f="tet.stl")}</asset>'
                                   f'<worldbody>{ARM.format(mat="")}</worldbody></mujoco>')
        _write(d, "main.xml", '<mujoco><include file="parts/arm.xml"/></mujoco>')
        return main, os.path.join(d, "assets", "tet.stl"), "tet.stl"
    if case in ("texture", "texture_cube", "hfield"):
        os.makedirs(os.path.join(d, "tex"))
        _stl(os.path.join(d, "tet.stl"))
        _png(os.path.join(d, "tex", "t.png"))
        _png(os.path.join(d, "tex", "h.png"))
        tex = ('<texture name="t" type="2d" file="t.png"/>' if case == "texture" else
               '<texture name="t" type="cube" fileright="t.png" fileleft="t.png" fileup="t.png" filedown="t.png" '
               'filefront="t.png" fileback="t.png"/>')
        comp = '<compiler texturedir="tex"/>' if case != "hfield" else '<compiler assetdir="tex"/>'
        hf = '<hfield name="h" file="h.png" size="1 1 .1 .1"/>' if case == "hfield" else ""
        hg = '<geom type="hfield" hfield="h" pos="0 0 -2"/>' if case == "hfield" else ""
        tet = mesh.format(f="../tet.stl" if case == "hfield" else "tet.stl")
        arm = ARM.format(mat=' material="m"')
        _write(d, "main.xml", f'<mujoco>{comp}<asset>{tet}{tex}<material name="m" texture="t"/>{hf}</asset>'
                              f'<worldbody>{hg}{arm}</worldbody></mujoco>')
        return main, os.path.join(d, "tex", "h.png" if case == "hfield" else "t.png"), "h.png" if case == "hfield" else "t.png"
    raise AssertionError(case)


def _load_or_block(path, fifos, wait=10.0):
    """load_mjcf(path), failing the test (instead of hanging it) when it blocks: after
    ``wait`` seconds the FIFOs are opened for writing and closed, so MuJoCo reads an empty
    file and the loading thread ends."""
    import threading
    import time
    out = {}

    def run():
        try:
            out["robot"] = _load(path)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(wait)
    if th.is_alive():
        end = time.time() + 30
        while th.is_alive() and time.time() < end:
            for f in fifos:
                try:
                    os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass
            th.join(0.2)
        pytest.fail(f"load_mjcf blocked for {wait} s opening a FIFO the model names")
    if "error" in out:
        raise out["error"]
    return out["robot"]


CASES = ["include", "nested_include", "mesh", "mesh_dir", "mesh_abs", "mesh_entity", "mesh_in_include", "texture",
         "texture_cube", "hfield"]


@pytest.mark.parametrize("case", CASES)
def test_fifo_named_by_the_model_is_refused(tmp_path, case):
    # all regular: it loads (in its own directory: MuJoCo caches the assets it read by path,
    # and would not open the FIFO below if it had read a file at that path before)
    ok, _, _ = _model(tmp_path / "ok", case)
    r = _load(ok)
    assert r.n_dofs == 2
    _assert_fk_equals_mujoco(ok, r)
    main, target, named = _model(tmp_path / "bad", case)
    os.remove(target)
    os.mkfifo(target)
    with pytest.raises(MJCFError, match="is a FIFO, not a regular file") as exc:
        _load_or_block(main, [target])
    assert target in str(exc.value) and repr(named) in str(exc.value) and "main.xml" in str(exc.value)


@pytest.mark.parametrize("kind", ["symlink_to_fifo", "directory", "device"])
def test_other_non_regular_files_are_refused(tmp_path, kind):
    main, target, named = _model(tmp_path, "mesh")
    os.remove(target)
    if kind == "symlink_to_fifo":
        os.mkfifo(os.path.join(str(tmp_path), "pipe"))
        os.symlink(os.path.join(str(tmp_path), "pipe"), target)
        what = "a FIFO"
    elif kind == "directory":
        os.mkdir(target)
        what = "a directory"
    else:
        os.symlink("/dev/zero", target)
        what = "a character device"
    with pytest.raises(MJCFError, match=f"is {what}, not a regular file"):
        _load_or_block(main, [os.path.join(str(tmp_path), "pipe")])


def test_missing_file_keeps_mujocos_error(tmp_path):
    main, target, named = _model(tmp_path, "include")
    os.remove(target)
    with pytest.raises(MJCFError, match="main.xml: MuJoCo cannot compile it"):
        _load(main)
    os.mkfifo(target)  # and the same name as a FIFO
    with pytest.raises(MJCFError, match="is a FIFO"):
        _load_or_block(main, [target])


def test_skin_fifo_is_refused(tmp_path):
    d = str(tmp_path)
    _stl(os.path.join(d, "tet.stl"))
    os.mkfifo(os.path.join(d, "s.skn"))
    _write(d, "main.xml", '<mujoco><asset><mesh name="tet" file="tet.stl"/></asset>'
                          f'<worldbody>{ARM.format(mat="")}</worldbody>'
                          '<deformable><skin name="s" file="s.skn"/></deformable></mujoco>')
    with pytest.raises(MJCFError, match="'s.skn'.* is a FIFO"):
        _load_or_block(os.path.join(d, "main.xml"), [os.path.join(d, "s.skn")])


@pytest.mark.parametrize("body, expect", [
    ('<body name="b"><geom name="g" type="sphere" size="1e300"/></body>', "<geom name='g'> of body 'b'"),
    ('<body name="b"><geom name="g" type="ellipsoid" size="1 1e70 1"/></body>', "<geom name='g'> of body 'b'"),
    ('<body name="b"><geom name="g" type="sphere" size="1e-300"/></body>', "<geom name='g'> of body 'b'"),
    ('<body name="far" pos="1e300 0 0">' + BOX + '</body><body name="b">' + BOX + '</body>', "body 'far'"),
    ('<body name="p" pos="1e70 0 0">' + BOX + '<body name="c" pos="1 0 0"><joint type="hinge"/>' + BOX
     + '</body></body>', "body 'p'"),
])
def test_out_of_range_geometry_names_the_file_and_the_element(tmp_path, body, expect):
    """Sizes and positions MuJoCo accepts but the kernels cannot take (beyond 1e60, below
    1e-72): an MJCFError naming the file and the geom or body, at load (a far body was
    reported at the first check as 'joint values too large')."""
    path = _write(tmp_path, "far.xml", f"<mujoco><worldbody>{body}</worldbody></mujoco>")
    with pytest.raises(MJCFError) as e:
        _load(path)
    assert str(e.value).startswith("far.xml: ") and expect in str(e.value), str(e.value)
