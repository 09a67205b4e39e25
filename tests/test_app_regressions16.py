"""Issue 16: the 18 problems a new user hit in the live debugger, one regression test each
(each fails on the code before the fix), and the frame path's contracts."""
import csv
import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pytestqt")
from PySide6 import QtCore, QtWidgets  # noqa: E402

from app.model import Session  # noqa: E402
from app.model.frame_view import FrameView  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROBOTS = "/work/shared/robots"


@pytest.fixture
def robots_dir(monkeypatch):
    d = os.environ.get("CDCORE_ROBOTS_DIR") or ROBOTS
    if not os.path.isdir(os.path.join(d, "example-robot-data")):
        pytest.skip("the shared robots are not on this machine")
    monkeypatch.setenv("CDCORE_ROBOTS_DIR", d)
    return d


def _settings(tmp_path):
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, tmp_path):
    from app.main_window import MainWindow
    made = []

    def make(size=(1600, 1000), scene="rigid-torus", frames=None):
        win = MainWindow(Session(), settings=_settings(tmp_path))
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        qtbot.waitExposed(win)
        if scene:
            win.session.load_scene(scene, frames=frames)
        QtWidgets.QApplication.processEvents()
        made.append(win)
        return win
    yield make
    for w in made:
        w.close()


def _play(win, frames):
    """Frames as the scripted run plays them (playing, events processed per frame)."""
    s = win.session
    s.playing = True
    s.reset_fps_clock()
    for k in range(frames):
        s.goto((s.frame + 1) % s.n_frames)
        QtWidgets.QApplication.processEvents()
    s.set_playing(False)


# ---- the frame path ------------------------------------------------------------------------

def test_frame_view_is_immutable_and_complete():
    s = Session()
    views = []
    s.frame_changed.connect(lambda v: views.append(v))
    s.load_scene("hand-ball", frames=40)
    s.goto(29)
    v = views[-1]
    assert isinstance(v, FrameView) and v.frame == 29 and v.record is s.record
    with pytest.raises(Exception):
        v.frame = 3  # frozen
    assert v.states and not v.states[0].flags.writeable  # read-only arrays
    assert len(v.link_poses) == len(s.scene.bodies) and len(v.traversals) == len(s.scene.pairs)
    # the traced re-run only for what is shown
    s.wants = {"trace": False, "heat": False}
    s.goto(30)
    assert not views[-1].traced and views[-1].traversals == ()
    s.wants = {"trace": True, "heat": True}
    s.goto(31)
    assert views[-1].heat is not None and len(views[-1].heat) == len(views[-1].trees)


def test_scene_view_owns_the_actors_and_takes_layers(make_window):
    win = make_window(scene="rigid-torus")
    v = win.view3d
    calls = []

    class Layer:
        def set_scene(self, scene):
            calls.append(("scene", scene.name))

        def update(self, view, options):
            calls.append(("frame", view.frame))

        def clear(self):
            calls.append(("clear",))

        def legend_entries(self):
            return [("my layer", (1, 2, 3))]

    v.add_layer("mine", Layer())
    win.session.goto(3)
    assert ("frame", 3) in calls and "my layer" in v.hud.legend_labels()
    win.session.load_scene("chains-6to1", frames=5)
    assert ("scene", "chains-6to1") in calls


# ---- bug 1: another scene from a frame with contacts ---------------------------------------

def test_bug1_scene_change_never_pairs_new_pairs_with_the_old_result(robots_dir):
    from app.model.robot import RobotModel
    s = Session()
    model = RobotModel(s)
    seen = []
    model.changed.connect(lambda: seen.append(model.contacts()))  # what the joint panel reads
    s.load_scene("hand-ball")
    s.goto(29)
    assert s.result.contacts > 0
    s.load_scene("panda-reach")  # raised "list index out of range" inside scene_changed
    assert s.scene.name.startswith("panda") or "panda" in s.scene.name
    s.step()  # and stepping works on the new scene
    assert len(s.result.pairs) == len(s.scene.pairs)


# ---- bug 2: a timed trajectory keeps all of its duration ---------------------------------------

def test_bug2_timed_trajectory_is_played_to_its_end(tmp_path):
    from robotgen import write_twoarm

    from app.model.robot import open_robot
    from cdcore.articulated.trajectory import load_trajectory
    root = str(tmp_path / "ws")
    os.makedirs(root)
    urdf = write_twoarm(root)
    n = 60  # 3 s at 20 Hz
    path = tmp_path / "t.csv"
    rows = ["time,left_turn"] + [f"{k / 20:.4f},{0.01 * k:.4f}" for k in range(n)]
    path.write_text("\n".join(rows) + "\n")
    s = Session()
    open_robot(s, urdf, [root], str(path))
    # 2.95 s on the scene's 30 Hz clock: 89 frames (it was 60: the last third never showed)
    assert s.n_frames == int(round((n - 1) / 20 * 30)) + 1
    body = s.scene.bodies[0].body
    tr = load_trajectory(str(path), body)
    s.goto(s.n_frames - 1)
    j = body.joint_names.index("left_turn")
    t_last = (s.n_frames - 1) / 30.0  # within the file's last sample interval
    assert t_last > tr.times[-2]
    assert body.scene_q[s.n_frames - 1][j] == pytest.approx(np.interp(t_last, tr.times, tr.q[:, j]), abs=1e-6)


# ---- bug 3: the heat key ---------------------------------------------------------------------------

def test_bug3_heat_key_is_a_short_labelled_key(make_window):
    win = make_window(scene="rigid-torus")
    for _ in range(5):
        win.session.step()
    win.hierarchy_panel.color_by.setCurrentText("heat")
    QtWidgets.QApplication.processEvents()
    hud = win.hud
    assert hud.key_mode == "heat"
    w, h = hud._size()
    ys = [lab.GetPosition()[1] for _, lab in hud.heat_rows]
    assert max(ys) < h / 2  # a key in the corner, not a band the height of the view
    labels = [lab.GetInput() for _, lab in hud.heat_rows]
    assert labels[-1] == "never tested" and labels[-2] != "0" and float(labels[-2].replace(",", "")) >= 1


# ---- bug 4 (+ the robot-first layout) ----------------------------------------------------------------

@pytest.mark.parametrize("size", [(1366, 768), (1600, 1000), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_bug4_robot_joint_sliders_are_all_visible(make_window, robots_dir, qtbot, size):
    win = make_window(size=size, scene="panda-reach")
    qtbot.wait(100)
    QtWidgets.QApplication.processEvents()
    assert win.joint_dock.isVisible()
    scroll = win.joint_dock.widget()
    vp = scroll.viewport()
    sliders = win.joint_panel.sliders
    assert len(sliders) >= 7
    for sl in sliders:
        top = sl.mapTo(vp, QtCore.QPoint(0, 0)).y()
        assert sl.isVisible() and 0 <= top and top + sl.height() <= vp.height(), (sl.objectName(), top, vp.height())


# ---- bug 5: colours ---------------------------------------------------------------------------------

def test_bug5_contact_links_and_stepper_node_b_differ_and_have_legend_entries(make_window, robots_dir):
    from app.render.colors import PAIR_COLORS
    from app.render.scene_view import LINK_CONTACT_COLOR
    assert tuple(LINK_CONTACT_COLOR) != tuple(int(c) for c in PAIR_COLORS[1])
    win = make_window(scene="hand-ball")
    win.session.goto(29)
    QtWidgets.QApplication.processEvents()
    win.stepper_panel.reload()
    win.stepper_panel.next_btn.click()
    labels = win.hud.legend_labels()
    assert "stepper node A" in labels and "stepper node B" in labels
    if win.session.view.contact_links and any(sb.body.n_links > 1 for sb in win.session.scene.bodies):
        assert "links in contact" in labels


# ---- bug 6: first-use compiles are not frame timings --------------------------------------------------

def test_bug6_a_frame_that_compiled_is_marked_and_left_out(qtbot):
    from numba import njit

    from app.widgets.timing_panel import TimingPanel
    s = Session()
    s.load_scene("rigid-torus", frames=20)
    for _ in range(3):
        s.step()
    real = s.runner.step

    @njit(cache=False)
    def fresh(x):  # a new function: its first call compiles
        return x * 2 + 1

    def step_that_compiles(frame):
        fresh(frame)
        return real(frame)
    s.runner.step = step_that_compiles
    s.step()
    assert not s.record.warm
    s.runner.step = real
    s.step()
    assert s.record.warm
    panel = TimingPanel(s)
    qtbot.addWidget(panel)
    panel.refresh()
    assert len(panel.series("t_total")) == len([r for r in s.history if r.warm]) == len(s.history) - 1 \
        or not s.history[0].warm
    assert "compile frame" in panel.breakdown.text()


# ---- bug 7: the window fits the screen and comes back as it was -----------------------------------

def test_bug7_window_sized_to_the_screen_and_restored(qtbot, tmp_path):
    from app.__main__ import build_parser
    from app.main_window import MainWindow
    assert build_parser().parse_args([]).size is None  # no fixed 1600x1000 over the saved geometry
    win = MainWindow(Session(), settings=_settings(tmp_path))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    avail = win.screen().availableGeometry()
    assert win.width() <= avail.width() and win.height() <= avail.height()
    assert win.width() >= 0.8 * avail.width()
    win.resize(int(avail.width() * 0.7), int(avail.height() * 0.7))
    size = win.size()
    win.close()
    again = MainWindow(Session(), settings=_settings(tmp_path))
    qtbot.addWidget(again)
    assert again.size() == size
    again.close()


# ---- bug 8: scripted runs have their own settings ------------------------------------------------------

@pytest.mark.slow
def test_bug8_a_scripted_run_leaves_the_users_settings_alone(tmp_path):
    cfg = tmp_path / "config"
    env = dict(os.environ, XDG_CONFIG_HOME=str(cfg), PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "app", "--scene", "rigid-torus", "--frames", "3", "--quit"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    written = [os.path.join(d, f) for d, _, fs in os.walk(cfg) for f in fs]
    assert written == [], written


# ---- bug 9: export with range, progress and cancel -----------------------------------------------------

def test_bug9_export_range_progress_and_cancel(make_window, qtbot, tmp_path):
    win = make_window(scene="rigid-torus")
    out = tmp_path / "frames"
    out.mkdir()
    exp = win.start_export(str(out), 5, 9)
    assert exp.progress.maximum() == 5
    qtbot.waitUntil(lambda: not exp.running, timeout=60000)
    assert sorted(os.listdir(out)) == [f"frame_{k:05d}.png" for k in range(5)]
    assert win.session.frame == 9
    out2 = tmp_path / "frames2"
    out2.mkdir()
    exp = win.start_export(str(out2), 0, 200)
    qtbot.waitUntil(lambda: exp.written >= 2, timeout=60000)
    cancel = [b for b in exp.progress.findChildren(QtWidgets.QPushButton) if b.text() == "Cancel"][0]
    cancel.click()  # the dialog's Cancel
    QtWidgets.QApplication.processEvents()
    assert not exp.running and exp.written < 201
    n = len(os.listdir(out2))
    qtbot.wait(100)
    assert len(os.listdir(out2)) == n == exp.written


# ---- bug 10: the camera frames the current pose ------------------------------------------------------

def test_bug10_default_camera_frames_the_bodies_at_this_frame(make_window):
    win = make_window(scene="rigid-torus")
    b = win.view3d.frame_bounds("pose")
    ext = win.view3d.view_extent(b)
    assert 0.6 < ext <= 1.0  # the tori fill the view (12 % of its width before)
    win.act_fit_motion.trigger()
    assert win.view3d.view_extent(win.view3d.frame_bounds("motion")) <= 1.0


# ---- bug 11: k-DOP exit histogram --------------------------------------------------------------------

def test_bug11_kdop_runs_label_exits_with_kdop_directions(qtbot):
    from app.widgets.timing_panel import TimingPanel, frame_axis_hist
    from cdcore.bv.kdop import KDOP_AXIS_NAMES
    s = Session()
    s.bv = "kdop18"
    s.load_scene("rigid-torus", frames=20)
    for _ in range(3):
        s.step()
    panel = TimingPanel(s)
    qtbot.addWidget(panel)
    panel.refresh()
    names = KDOP_AXIS_NAMES["kdop18"]
    assert len(panel.axis_hist) == len(names)
    assert np.array_equal(panel.axis_hist, frame_axis_hist(s.result, "kdop18"))
    assert names[0] in panel.axis_plot.toolTip() and "a0 x b0" not in panel.axis_plot.toolTip()


# ---- bug 12: realignment method in both docks -----------------------------------------------------------

def test_bug12_scene_dock_shows_every_realignment(qtbot):
    from app.widgets.scene_panel import ScenePanel
    s = Session()
    s.bv = "kdop18"
    s.load_scene("rigid-torus", frames=5)
    panel = ScenePanel(s)
    qtbot.addWidget(panel)
    s.set_realign("table_angle")
    assert panel.realign_box.currentText() == "table_angle"


# ---- bug 13: the insight dock's sections --------------------------------------------------------------

def test_bug13_insight_sections_have_the_docks_height(make_window, qtbot):
    win = make_window(size=(1366, 768), scene="hand-ball")
    dock = win.findChild(QtWidgets.QDockWidget, "Insight")
    dock.raise_()
    panel = win.insight_panel
    panel.tabs.setCurrentIndex(1)
    panel.check_refit()
    QtWidgets.QApplication.processEvents()
    rows = panel.refit_table.viewport().height() / max(panel.refit_table.rowHeight(0), 1)
    assert rows >= 3, rows  # half a row before
    panel.tabs.setCurrentIndex(2)
    QtWidgets.QApplication.processEvents()
    t = panel.heat_table
    vp = dock.widget().viewport()
    assert t.isVisible() and t.mapTo(vp, QtCore.QPoint(0, 0)).y() + 40 < vp.height()


# ---- bug 14: one frame rate everywhere ------------------------------------------------------------------

def test_bug14_status_overlay_and_timing_show_the_same_fps(make_window):
    win = make_window(scene="rigid-torus")
    win.session.playing = True
    win.session.reset_fps_clock()
    for _ in range(12):
        win.session.step()
        QtWidgets.QApplication.processEvents()
    win._readouts()  # one read-out tick while playing
    fps = win._fps()
    assert fps > 0
    shown = f"{fps:.0f} fps"
    assert shown in win.status.text()
    assert shown in win.hud.counters.GetInput()
    assert win.timing_panel.labels["fps"].text() == f"{fps:.1f}"
    win.session.set_playing(False)


# ---- bug 15: arrow keys belong to a focused slider ------------------------------------------------------

def test_bug15_arrows_move_a_focused_slider_not_the_frame(make_window, qtbot):
    win = make_window(scene="rigid-torus")
    win.session.goto(5)
    sl = win.hierarchy_panel.opacity
    sl.setValue(50)
    win.activateWindow()
    sl.setFocus()
    qtbot.waitUntil(sl.hasFocus, timeout=2000)
    qtbot.keyClick(sl, QtCore.Qt.Key.Key_Right)
    assert sl.value() == 51 and win.session.frame == 5
    win.plotter.interactor.setFocus()
    qtbot.keyClick(win.plotter.interactor, QtCore.Qt.Key.Key_Right)
    assert win.session.frame == 6  # elsewhere → still steps the frame


# ---- bug 16: the recording's files -------------------------------------------------------------------

def test_bug16_recording_columns_units_and_permissions(tmp_path):
    from app.model.recorder import COLUMNS
    s = Session()
    s.load_scene("rigid-torus", frames=10)
    path = tmp_path / "rec.csv"
    s.start_recording(str(path))
    s.playing = True
    for _ in range(4):
        s.step()
    sidecar = s.stop_recording()
    assert all(c == c.lower() and " " not in c for c in COLUMNS)
    assert not any(c.endswith("_ms") for c in COLUMNS) and "t_total_us" in COLUMNS
    assert stat.S_IMODE(os.stat(sidecar).st_mode) == stat.S_IMODE(os.stat(path).st_mode)
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    hist = list(s.history)[-len(rows):]
    assert float(rows[-1]["t_total_us"]) == pytest.approx(hist[-1].t_total * 1e6, rel=1e-4)
    assert json.load(open(sidecar))["columns"] == list(COLUMNS)


# ---- bug 17: Reset layout --------------------------------------------------------------------------

def test_bug17_reset_layout_is_the_default_layout(make_window, qtbot):
    win = make_window(scene="rigid-torus")
    default = {d.objectName(): d.isVisible() for d in win.findChildren(QtWidgets.QDockWidget)}
    assert not default["Robot_joints"]
    for d in win.findChildren(QtWidgets.QDockWidget):
        d.show()
    win.findChild(QtWidgets.QDockWidget, "Insight").raise_()
    win.findChild(QtWidgets.QDockWidget, "Timing").setFloating(True)
    win.reset_layout()
    QtWidgets.QApplication.processEvents()
    now = {d.objectName(): d.isVisible() for d in win.findChildren(QtWidgets.QDockWidget)}
    assert now == default
    step = win.findChild(QtWidgets.QDockWidget, "Traversal_stepper")
    assert not step.visibleRegion().isEmpty()  # raised, not behind the insight tab
    assert not win.findChild(QtWidgets.QDockWidget, "Timing").isFloating()


# ---- bug 18: VTK's letter keys, a reversed range --------------------------------------------------------

def test_bug18_w_key_keeps_surfaces_and_reversed_range_draws_both_levels(make_window):
    win = make_window(scene="rigid-torus")
    iren = win.plotter.iren.interactor
    iren.SetKeyCode("w")
    iren.SetKeySym("w")
    iren.InvokeEvent("CharEvent")
    iren.InvokeEvent("KeyPressEvent")
    rep = win.mesh_layers[0].actor.GetProperty().GetRepresentation()
    assert rep == 2  # VTK_SURFACE, not wireframe (1)
    hp = win.hierarchy_panel
    hp.mode.setCurrentText("range")
    hp.lo.setValue(3)
    hp.hi.setValue(1)
    assert hp.selection() == ("range", 1, 3)
    QtWidgets.QApplication.processEvents()
    assert win.resolved_depth == ("range", 1, 3)


# ---- what a demanding user expects ------------------------------------------------------------------

def test_help_lists_the_shortcuts(make_window):
    win = make_window(scene=None)
    dlg = win.show_shortcuts()
    table = dlg.findChild(QtWidgets.QTableWidget, "shortcutsTable")
    keys = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert {"Space", "F", "Home", "F1"} <= set(keys)
    dlg.close()


def test_recent_files_remember_opened_files(make_window, tmp_path):
    from app.model.robot import ROBOT_FRAMES  # noqa: F401 - the robot path is covered in test_app_robot
    import shutil
    win = make_window(scene=None)
    scene_file = str(tmp_path / "my-torus.json")
    shutil.copy(os.path.join(ROOT, "assets", "scenes", "rigid-torus.json"), scene_file)
    assert win.load_ref({"file": scene_file})
    assert win.recent()[0] == {"file": os.path.abspath(scene_file)}
    win._fill_recent()
    texts = [a.text() for a in win.recent_menu.actions()]
    assert any("my-torus.json" in t for t in texts)


def test_click_selects_the_node_in_the_stepper(make_window, qtbot):
    win = make_window(scene="rigid-torus")
    win.session.goto(29)
    QtWidgets.QApplication.processEvents()
    win.hierarchy_panel.show_mesh.setChecked(False)
    win.plotter.render()
    # a pixel on a drawn box line: project a corner of a drawn node of tree 0
    tl = win.tree_layers[0]
    pts = np.asarray(tl.polydata.points)
    ren = win.plotter.renderer
    found = None
    h = win.plotter.interactor.height()
    dpr = win.plotter.interactor.devicePixelRatioF()
    a_body = win.session.scene.pairs[0][0]
    for p in pts[::5]:
        ren.SetWorldPoint(*[float(x) for x in p], 1.0)
        ren.WorldToDisplay()
        x, y, _ = ren.GetDisplayPoint()
        hit = win.pick_at(x / dpr, h - y / dpr)
        st = win.stepper_panel.stepper.current() if hit is not None else None
        if st is not None:  # a node the traversal tested: the stepper is at its first pair
            body, node = hit
            assert node == (st.node_a if body == a_body else st.node_b)
            assert st.index == min(k for k in range(st.count)
                                   if int((win.stepper_panel.stepper.t.trace.node_a if body == a_body
                                           else win.stepper_panel.stepper.t.trace.node_b)[k]) == node)
            found = hit
            break
    assert found is not None
    assert win.view3d.picked.visible


def test_focus_looks_across_the_separating_axis(make_window):
    from app.__main__ import focus_first_separated_pair
    win = make_window(scene="rigid-torus")
    win.session.goto(29)
    QtWidgets.QApplication.processEvents()
    assert focus_first_separated_pair(win)
    step = win.view3d.step[0]
    cam = win.plotter.renderer.GetActiveCamera()
    d = np.array(cam.GetFocalPoint()) - np.array(cam.GetPosition())
    d /= np.linalg.norm(d)
    u = np.asarray(step.axis_dir) / np.linalg.norm(step.axis_dir)
    assert abs(float(d @ u)) < 1e-6  # the axis lies in the image plane
    assert win.view3d.view_extent(win.view3d.focus_bounds()) <= 1.0
