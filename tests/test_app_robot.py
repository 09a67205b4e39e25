"""Robots, trajectories and saved queries in the app: the Qt-free model, then the window
(joint sliders, contact list, package-directory prompt, error dialogs, the CLI)."""
import os
import subprocess
import sys

import numpy as np
import pytest
from robotgen import write_twoarm

from app.model import Session
from app.model.robot import RobotModel, open_query, open_robot, open_trajectory
from cdcore import build_bvh, collide, save_query, shapes
from cdcore.articulated import PackageNotFoundError, RobotBody, brute_force_self_pairs
from cdcore.articulated.trajectory import save_trajectory
from cdcore.transforms import make_pose, rotation_about

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("ws"))
    return write_twoarm(root), root


@pytest.fixture
def query_file(tmp_path):
    a = build_bvh(shapes.torus(1.0, 0.25, 24, 8), "obb")
    pose_b = make_pose(rotation_about([1, 0, 0], np.pi / 2), [1.2, 0.0, 0.0])
    save_query(tmp_path / "q.npz", a, None, a, pose_b, test="sat15", note="linked tori")
    return str(tmp_path / "q.npz"), a, pose_b


def test_robot_model_sets_joints_and_lists_contacts(robot):
    urdf, root = robot
    s = Session()
    m = RobotModel(s)
    open_robot(s, urdf, [root], frames=20)
    assert isinstance(s.scene.bodies[0].body, RobotBody) and m.joint_names == ["left_turn", "right_turn",
                                                                              "left_slide"]
    s.goto(7)
    body = m.body
    # cross the arms: the frame is recomputed, the contacts are the brute-force ones
    m.set_q(np.array([0.3, 0.0, 0.02]))
    np.testing.assert_allclose(m.q(), [0.3, 0.0, 0.02])
    np.testing.assert_allclose(s.scene.bodies[0].link_poses[7], body.fk(m.q()))
    want = brute_force_self_pairs(body, m.q())
    assert ("left_arm", "right_arm") in want
    assert sorted((a, b) for _, a, b in m.contacts()) == sorted(want)
    assert s.result.contacts == len(want)
    links = m.contact_links()[0]
    assert body.link_index("left_arm") in links and body.link_index("right_arm") in links
    m.set_joint(0, 10.0)  # clipped to the limit
    assert m.q()[0] == pytest.approx(2.5)
    with pytest.raises(ValueError):
        m.set_joint(5, 0.0)


def test_missing_package_is_typed(robot, tmp_path):
    urdf, _ = robot
    lone = tmp_path / "lone.urdf"
    lone.write_text(open(urdf).read())
    with pytest.raises(PackageNotFoundError):
        open_robot(Session(), str(lone))


def test_trajectory_and_bv_change(robot, tmp_path):
    urdf, root = robot
    s = Session()
    with pytest.raises(ValueError, match="robot"):
        open_trajectory(s, str(tmp_path / "t.csv"))
    open_robot(s, urdf, [root])
    q = np.zeros((25, 3))
    q[:, 0] = np.linspace(-1, 1, 25)
    save_trajectory(tmp_path / "t.csv", s.scene.bodies[0].body, q)
    open_trajectory(s, str(tmp_path / "t.csv"))
    assert s.n_frames == 25
    np.testing.assert_allclose(s.scene.bodies[0].body.scene_q, q)
    s.set_bv("aabb")  # rebuilt through its builder
    assert s.scene.bodies[0].body.mesh_bv == "aabb" and s.n_frames == 25


def test_open_query_steps_through_the_saved_traversal(query_file):
    path, a, pose_b = query_file
    s = Session()
    q = open_query(s, path)
    assert s.bv == "obb" and s.test == "sat15" and "linked tori" in s.scene.description
    st = s.stepper()
    ref = collide(a, np.eye(4), a, pose_b, test="sat15", contacts="first", trace=True)
    assert st.count == len(ref.trace) > 0
    assert q.run().hit == ref.hit


# ---- the window ----------------------------------------------------------------------------

@pytest.fixture
def window(qtbot, tmp_path):
    pytest.importorskip("pytestqt")
    from PySide6 import QtCore

    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


def test_window_robot_asks_for_package_dir_and_sliders_pose(window, robot, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    from app.widgets.robot_actions import open_robot_file
    urdf, root = robot
    lone = tmp_path / "lone.urdf"
    lone.write_text(open(urdf).read())
    asked = []
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory",
                        lambda *a, **k: asked.append(a[1]) or root)
    assert open_robot_file(window, str(lone))
    assert asked and "twoarm_description" in asked[0]
    panel = window.joint_panel
    assert len(panel.sliders) == 3
    before = window.session.scene.bodies[0].link_poses[window.session.frame].copy()
    panel.sliders[0].setValue(900)
    after = window.session.scene.bodies[0].link_poses[window.session.frame]
    assert not np.allclose(before, after)
    lo, hi = window.robot_model.limits[0]
    assert window.robot_model.q()[0] == pytest.approx(lo + 0.9 * (hi - lo))
    # the contact list follows the frame
    window.robot_model.set_q(np.array([0.3, 0.0, 0.0]))
    items = [panel.contacts.item(k).text() for k in range(panel.contacts.count())]
    assert any("left_arm" in t and "right_arm" in t for t in items)
    assert window.mesh_layers[0].highlighted.size > 0


def test_window_bad_robot_and_query_show_dialogs(window, tmp_path):
    from PySide6 import QtWidgets

    from app.widgets.robot_actions import open_query_file, open_robot_file
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    assert not open_robot_file(window, str(bad))
    box = window.findChild(QtWidgets.QMessageBox, "errorDialog")
    assert box is not None and "bad.urdf" in box.text()
    box.close()
    (tmp_path / "junk.npz").write_bytes(b"junk")
    assert not open_query_file(window, str(tmp_path / "junk.npz"))


def test_window_query_raises_the_stepper(window, query_file):
    from PySide6 import QtWidgets

    from app.widgets.robot_actions import open_query_file
    assert open_query_file(window, query_file[0])
    dock = window.findChild(QtWidgets.QDockWidget, "Traversal_stepper")
    assert dock.isVisible()
    assert window.stepper_panel is not None and window.session.scene.name.startswith("query")


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)


def test_cli_opens_query_and_robot(query_file, robot, tmp_path):
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs the virtual display")
    r = _cli(query_file[0], "--frames", "1", "--screenshot", str(tmp_path / "q.png"), "--quit")
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(tmp_path / "q.png") > 1000
    urdf, root = robot
    r = _cli(urdf, "--package-dir", root, "--frames", "3", "--quit")
    assert r.returncode == 0, r.stderr
    r = _cli(str(tmp_path / "none.npz"), "--frames", "1", "--quit")
    assert r.returncode == 2 and "none.npz" in r.stderr


# ---- MJCF robots ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mjcf_robot(tmp_path_factory):
    pytest.importorskip("mujoco")
    from mjcfgen import write_crossarms
    return write_crossarms(str(tmp_path_factory.mktemp("mjcf")))


def test_robot_format_by_root_element(robot, mjcf_robot, tmp_path):
    from app.model.robot import robot_format
    urdf, _ = robot
    as_xml = tmp_path / "twoarm.xml"  # a URDF may come as .xml: the root element decides
    as_xml.write_text(open(urdf).read())
    assert robot_format(urdf) == "urdf" and robot_format(str(as_xml)) == "urdf"
    assert robot_format(mjcf_robot) == "mjcf"
    (tmp_path / "other.xml").write_text("<scene><a/></scene>")
    with pytest.raises(ValueError, match="other.xml.*<scene>"):
        robot_format(str(tmp_path / "other.xml"))
    (tmp_path / "broken.xml").write_text("<mujoco worldbody>")  # only the root is read here: the
    with pytest.raises(ValueError, match="broken.xml"):          # loaders report errors further in
        robot_format(str(tmp_path / "broken.xml"))
    (tmp_path / "empty.xml").write_text("")
    with pytest.raises(ValueError, match="empty.xml"):
        robot_format(str(tmp_path / "empty.xml"))
    with pytest.raises(FileNotFoundError):
        robot_format(str(tmp_path / "none.xml"))


def test_open_mjcf_robot_model(mjcf_robot):
    from cdcore.articulated import MJCFRobot
    s = Session()
    m = RobotModel(s)
    open_robot(s, mjcf_robot, frames=12)
    body = m.body
    assert isinstance(body, MJCFRobot)
    assert m.joint_names == body.joint_names and len(m.joint_names) == 8
    assert s.robot_source["format"] == "mjcf"
    rng = np.random.default_rng(4)
    seen = 0
    for _ in range(15):  # the contacts are the brute-force ones under MuJoCo's pair filter
        q = rng.uniform(body.limits[:, 0], body.limits[:, 1])
        m.set_q(q)
        want = brute_force_self_pairs(body, m.q())
        assert sorted((a, b) for _, a, b in m.contacts()) == sorted(want)
        seen += len(want)
    assert seen > 0


def test_window_opens_mjcf_by_dialog_drop_and_recent(window, mjcf_robot, tmp_path, monkeypatch):
    from PySide6 import QtCore, QtGui, QtWidgets

    from app.widgets import robot_actions as ra
    assert "MJCF" in window.act_robot.text()
    filters = []

    def fake_dialog(parent, title, directory, flt):
        filters.append(flt)
        return mjcf_robot, flt
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", fake_dialog)
    ra.open_robot_dialog(window)
    assert "*.xml" in filters[0] and "MJCF" in filters[0]
    n = window.robot_model.body.n_dofs
    assert type(window.robot_model.body).__name__ == "MJCFRobot" and len(window.joint_panel.sliders) == n
    assert window.recent()[0] == {"robot": os.path.abspath(mjcf_robot)}
    # a scene without the robot, then the robot again from the recent list
    window.session.load_scene("hand-ball", frames=5)
    assert window.robot_model.body is None
    assert window.open_recent({"robot": os.path.abspath(mjcf_robot)})
    assert type(window.robot_model.body).__name__ == "MJCFRobot"
    # dropped on the window
    window.session.load_scene("hand-ball", frames=5)
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(mjcf_robot)])
    ev = QtGui.QDropEvent(QtCore.QPointF(20, 20), QtCore.Qt.DropAction.CopyAction, mime,
                          QtCore.Qt.MouseButton.NoButton, QtCore.Qt.KeyboardModifier.NoModifier)
    window.dropEvent(ev)
    assert type(window.robot_model.body).__name__ == "MJCFRobot"


@pytest.mark.parametrize("text, needle", [
    ("<mujoco><worldbody><body><geom type='capsule' size='0.1'/></body></worldbody>", "bad_model.xml"),
    ("<mujoco><worldbody><body name='b'><joint type='hinge'/><geom type='nonsense' size='0.1'/></body>"
     "</worldbody></mujoco>", "bad_model.xml"),
    ("<mujoco><worldbody/></mujoco>", "no collision geom"),
    ("<library><book/></library>", "neither a URDF"),
])
def test_window_bad_mjcf_shows_a_dialog(window, tmp_path, text, needle):
    pytest.importorskip("mujoco")
    from PySide6 import QtWidgets

    from app.widgets.robot_actions import open_robot_file
    bad = tmp_path / "bad_model.xml"
    bad.write_text(text)
    assert not open_robot_file(window, str(bad))
    box = window.findChild(QtWidgets.QMessageBox, "errorDialog")
    assert box is not None and needle in box.text(), box.text()
    box.close()
    assert window.robot_model.body is None


def test_cli_opens_mjcf_robot(mjcf_robot, tmp_path):
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs the virtual display")
    r = _cli(mjcf_robot, "--frames", "3", "--quit")
    assert r.returncode == 0, r.stderr
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom type='nonsense'/></body></worldbody></mujoco>")
    r = _cli(str(bad), "--frames", "1", "--quit")
    assert r.returncode == 2 and "bad.xml" in r.stderr, r.stderr
