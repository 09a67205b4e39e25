"""load_urdf: structure, FK against pinocchio and yourdfpy, link geometry, typed errors."""
import shutil

import numpy as np
import pytest
from robotgen import PACKAGE, write_twoarm

from cdcore.articulated import PackageNotFoundError, URDFError, load_urdf
from cdcore.articulated.shared_robots import shared_robot


@pytest.fixture(scope="module")
def twoarm(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("robots"))
    return write_twoarm(root), root


def shared(name):
    try:
        return shared_robot(name)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def test_structure(twoarm):
    urdf, root = twoarm
    b = load_urdf(urdf, root)
    assert b.joint_names == ["left_turn", "right_turn", "left_slide"]  # document order, mimic excluded
    assert b.link_names == ["base", "left_arm", "left_slider", "right_arm", "right_slider", "post"]
    assert "mount" in b.frame_names and "mount" not in b.link_names  # no geometry: chain only
    assert b.parents.tolist() == [-1, 0, 1, 0, 3, 0]  # right_arm hangs on base through the mount
    np.testing.assert_allclose(b.limits, [[-2.5, 2.5], [-np.pi, np.pi], [0.0, 0.1]])
    assert b.continuous.tolist() == [False, True, False]
    assert b.joints["right_slide"].mimic == "left_slide"
    assert b.joint_values(np.array([0.1, 0.2, 0.03]))["right_slide"] == pytest.approx(-0.03 + 0.05)


def test_geometry_merge_origin_scale(twoarm):
    urdf, root = twoarm
    b = load_urdf(urdf, root, primitives="tessellate")
    # base: a 0.5 x 0.3 x 0.05 box lifted by its origin, exact (12 triangles)
    base = b.bvhs[b.link_index("base")].mesh
    assert base.n_faces == 12
    np.testing.assert_allclose(base.vertices.min(0), [-0.25, -0.15, 0.0], atol=1e-12)
    np.testing.assert_allclose(base.vertices.max(0), [0.25, 0.15, 0.05], atol=1e-12)
    # left arm: the STL authored at 2x (0.6 long), scale 0.5
    arm = b.bvhs[b.link_index("left_arm")].mesh
    ext = arm.vertices.max(0) - arm.vertices.min(0)
    assert arm.vertices[:, 0].min() == pytest.approx(0.0, abs=1e-9)
    assert ext[0] == pytest.approx(0.3, rel=1e-6)
    # right arm: cylinder along x (rpy origin) merged with a sphere at x = 0.3
    ra = b.bvhs[b.link_index("right_arm")].mesh
    assert ra.vertices[:, 0].max() == pytest.approx(0.335, abs=1e-9)
    assert ra.vertices[:, 0].min() == pytest.approx(0.0, abs=1e-9)
    # knob PLY scaled 1.5 in z then rotated about x by 0.3 and lifted 0.02
    knob = b.bvhs[b.link_index("right_slider")].mesh
    assert knob.vertices[:, 0].max() == pytest.approx(0.03, rel=1e-6)
    assert knob.n_faces == 320


def test_visual_and_relative_paths(tmp_path):
    urdf = write_twoarm(str(tmp_path), package_uri=False)
    b = load_urdf(urdf)  # relative mesh paths, no package dirs
    assert b.n_links == 6
    with pytest.raises(URDFError, match="visual"):  # the robot has no <visual> at all
        load_urdf(urdf, geometry="visual")
    with pytest.raises(ValueError, match="geometry"):
        load_urdf(urdf, geometry="both")


def test_package_resolution(tmp_path):
    root = tmp_path / "ws"
    urdf = write_twoarm(str(root))
    moved = tmp_path / "elsewhere" / "twoarm.urdf"
    moved.parent.mkdir()
    shutil.copy(urdf, moved)
    with pytest.raises(PackageNotFoundError) as err:
        load_urdf(moved)
    assert err.value.package == PACKAGE and err.value.link == "left_arm"
    assert PACKAGE in str(err.value)
    # a package dir holding NAME/, or NAME itself
    assert load_urdf(moved, package_dirs=[str(root)]).n_links == 6
    assert load_urdf(moved, package_dirs=str(root / PACKAGE)).n_links == 6
    # found by walking up from the URDF (ws/twoarm_description/urdf/..)
    assert load_urdf(urdf).n_links == 6


def _fk_check_pinocchio(body, urdf, pkg, n, seed):
    from cdcore.bench.pin_reference import PinocchioRobot
    ref = PinocchioRobot(body, urdf, pkg)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = rng.uniform(body.limits[:, 0], body.limits[:, 1])
        ours = body.fk_all(q)
        for name in body.frame_names:
            np.testing.assert_allclose(ours[name], ref.frame_pose(q, name), atol=1e-10, err_msg=name)
        np.testing.assert_allclose(body.fk(q), np.array([ours[x] for x in body.link_names]))


def _fk_check_yourdfpy(body, urdf, n, seed):
    import yourdfpy
    u = yourdfpy.URDF.load(urdf, build_scene_graph=True, load_meshes=False)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = rng.uniform(body.limits[:, 0], body.limits[:, 1])
        u.update_cfg({k: v for k, v in zip(body.joint_names, q)})  # yourdfpy applies mimic joints itself
        ours = body.fk_all(q)
        base = u.base_link
        for name in body.frame_names:
            np.testing.assert_allclose(ours[name], u.get_transform(name, base), atol=1e-10, err_msg=name)


def test_fk_own_robot(twoarm):
    pytest.importorskip("pinocchio")
    urdf, root = twoarm
    b = load_urdf(urdf, root)
    _fk_check_pinocchio(b, urdf, root, 40, 1)
    _fk_check_yourdfpy(b, urdf, 40, 2)


@pytest.mark.parametrize("name", ["allegro", "panda"])
def test_fk_shared_robots(name):
    pytest.importorskip("pinocchio")
    sr = shared(name)
    b = load_urdf(sr.urdf, sr.package_dir)
    _fk_check_pinocchio(b, sr.urdf, sr.package_dir, 25, 3)
    _fk_check_yourdfpy(b, sr.urdf, 25, 4)


def test_shared_robots_structure():
    sr = shared("panda")
    b = load_urdf(sr.urdf, sr.package_dir)
    assert b.n_dofs == 8 and b.joint_names[-1] == "panda_finger_joint1"  # finger_joint2 mimics it
    assert "panda_link8" in b.frame_names and "panda_link8" not in b.link_names
    v = load_urdf(sr.urdf, sr.package_dir, geometry="visual")  # Collada meshes through trimesh
    assert len(v.faces) > len(b.faces)
    h = load_urdf(shared("allegro").urdf, sr.package_dir)
    assert h.n_dofs == 16 and h.n_links == 21


def test_fk_input_validation(twoarm):
    b = load_urdf(*twoarm)
    with pytest.raises(ValueError, match="shape"):
        b.fk(np.zeros(4))
    with pytest.raises(ValueError, match="NaN"):
        b.fk(np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="unknown joints"):
        b.q_from_dict({"right_slide": 0.1})  # a mimic joint is not a dof
    assert b.q_from_dict({"left_slide": 0.05}).tolist() == [0.0, 0.0, 0.05]


# ---- typed errors naming the element --------------------------------------------------

def _write(tmp_path, body):
    p = tmp_path / "r.urdf"
    p.write_text(f'<?xml version="1.0"?>\n<robot name="r">{body}</robot>')
    return p


BOX = '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'


@pytest.mark.parametrize("xml, exc, words", [
    (f'<link name="a">{BOX}</link><link name="b">{BOX}</link>'
     '<joint name="j" type="floating"><parent link="a"/><child link="b"/></joint>', URDFError, ["'j'", "floating"]),
    (f'<link name="a">{BOX}</link><link name="b">{BOX}</link>'
     '<joint name="j" type="fixed"><parent link="nope"/><child link="b"/></joint>', URDFError, ["'j'", "nope"]),
    (f'<link name="a">{BOX}</link><link name="b">{BOX}</link>'
     '<joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>'
     '<joint name="j2" type="fixed"><parent link="b"/><child link="a"/></joint>', URDFError, ["cycle"]),
    ('', URDFError, ["no <link>"]),
    ('<link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>',
     URDFError, ["empty"]),
    ('<link name="a"><collision><geometry><mesh filename="missing.stl"/></geometry></collision></link>',
     FileNotFoundError, ["'a'", "missing.stl"]),
    (f'<link name="a">{BOX}</link><link name="b">{BOX}</link>'
     '<joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>', URDFError, ["'j'", "limit"]),
    (f'<link name="a">{BOX}</link><link name="b">{BOX}</link>'
     '<joint name="j" type="prismatic"><parent link="a"/><child link="b"/><limit lower="0" upper="1"/>'
     '<mimic joint="ghost"/></joint>', URDFError, ["'j'", "ghost"]),
    ('<link name="a"><collision><geometry><box size="0 1 1"/></geometry></collision></link>',
     URDFError, ["'a'", "box"]),
    (f'<link name="a">{BOX}</link><link name="b">{BOX}</link>', URDFError, ["several root"]),
])
def test_bad_urdf(tmp_path, xml, exc, words):
    p = _write(tmp_path, xml)
    with pytest.raises(exc) as err:
        load_urdf(p)
    for w in words:
        assert w in str(err.value)


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="URDF file not found"):
        load_urdf(tmp_path / "none.urdf")
    p = tmp_path / "broken.urdf"
    p.write_text("<robot name='x'><link name='a'>")
    with pytest.raises(URDFError, match="XML"):
        load_urdf(p)
    bad_mesh = tmp_path / "bad.stl"
    bad_mesh.write_text("not a mesh")
    p2 = _write(tmp_path, '<link name="a"><collision><geometry><mesh filename="bad.stl"/></geometry></collision></link>')
    with pytest.raises((URDFError, FileNotFoundError)) as err:
        load_urdf(p2)
    assert "'a'" in str(err.value)


def test_exact_primitives(twoarm):
    """<box>/<cylinder>/<sphere> are exact solids by default; the link mesh is their proxy
    (holding the solid), the true shapes are the link's primitives."""
    urdf, root = twoarm
    b = load_urdf(urdf, root)
    assert b.primitives == "exact"
    ps = b.link_primitives[b.link_index("right_arm")]
    assert [p.kind for p in ps] == ["cylinder", "sphere"]
    np.testing.assert_allclose(ps[0].size[:2], [0.02, 0.15])
    np.testing.assert_allclose(ps[0].pose[:3, 2], [1.0, 0.0, 0.0], atol=1e-12)  # rpy turns z onto x
    np.testing.assert_allclose(ps[1].pose[:3, 3], [0.3, 0.0, 0.0])
    assert ps[1].size[0] == 0.035
    ra = b.bvhs[b.link_index("right_arm")].mesh
    assert 0.335 <= ra.vertices[:, 0].max() < 0.335 * 1.01  # the proxy holds the sphere
    assert b.link_primitives[b.link_index("left_arm")] == []  # a mesh link
    assert b.link_primitives[b.link_index("base")][0].kind == "box"
    with pytest.raises(ValueError, match="primitives"):
        load_urdf(urdf, root, primitives="analytic")
    assert load_urdf(urdf, root, mesh_bv="kdop18").primitives == "tessellate"
