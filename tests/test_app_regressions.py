"""Regression tests for the bugs of issue 9 (each failed before its fix). GUI parts run
under Xvfb (pytest-xvfb); command-line runs go through a subprocess with a private
settings directory."""
import csv
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pytestqt")
from PySide6 import QtCore, QtWidgets  # noqa: E402

from app.model import Session  # noqa: E402
from cdcore.collide import Outcome  # noqa: E402
from tests.meshgen import torus, uv_sphere  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _obj(path, v, f):
    with open(path, "w") as fh:
        fh.writelines(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in v)
        fh.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in f)
    return str(path)


@pytest.fixture
def meshes(tmp_path):
    return [_obj(tmp_path / "ball.obj", *uv_sphere(0.5)), _obj(tmp_path / "ring.obj", *torus()),
            _obj(tmp_path / "ball2.obj", *uv_sphere(0.4))]


def _dialogs(widget):
    return [b for b in widget.findChildren(QtWidgets.QMessageBox) if b.isVisible()]


# ---- 1: re-picking an opened mesh scene from the Scene combo ---------------------------
def test_bug1_repick_opened_meshes_from_the_scene_combo(qtbot, meshes):
    from app.widgets.scene_panel import ScenePanel
    s = Session()
    panel = ScenePanel(s)
    qtbot.addWidget(panel)
    s.load_meshes(meshes[:2], frames=20)
    user = s.scene.name
    s.load_scene("rigid-torus", frames=10)
    i = panel.scene_box.findText(user)
    assert i >= 0
    panel.scene_box.setCurrentIndex(i)
    panel.scene_box.activated.emit(i)
    assert not _dialogs(panel), [b.text() for b in _dialogs(panel)]
    assert s.scene.name == user and s.source_meshes == meshes[:2]


def test_bug1_a_failed_pick_shows_the_scene_still_loaded(qtbot, tmp_path):
    from app.widgets.scene_panel import ScenePanel
    s = Session()
    panel = ScenePanel(s)
    qtbot.addWidget(panel)
    scene_file = tmp_path / "mine.json"
    with open(os.path.join(ROOT, "assets", "scenes", "rigid-torus.json")) as fh:
        spec = json.load(fh)
    spec["name"] = "mine"
    scene_file.write_text(json.dumps(spec))
    s.load_scene(str(scene_file), frames=5)
    s.load_scene("chains-3to1", frames=5)
    scene_file.unlink()  # the file is gone: picking it fails, and the combo must say so
    i = panel.scene_box.findText("mine")
    panel.scene_box.setCurrentIndex(i)
    panel.scene_box.activated.emit(i)
    assert _dialogs(panel) and "not found" in _dialogs(panel)[0].text()
    assert s.scene.name == "chains-3to1" and panel.scene_box.currentText() == "chains-3to1"


# ---- 2: the last scene restored by a display name ---------------------------------------
@pytest.mark.parametrize("saved", [{"last_scene": "user: ico.stl"},
                                   {"last_scene_ref": json.dumps({"meshes": ["/nonexistent/ico.stl"]})}])
def test_bug2_a_stale_last_scene_starts_the_default_scene_without_a_dialog(qtbot, tmp_path, monkeypatch, saved):
    from app import __main__ as cli
    QtCore.QSettings.setPath(QtCore.QSettings.Format.NativeFormat, QtCore.QSettings.Scope.UserScope, str(tmp_path))
    QtCore.QSettings.setPath(QtCore.QSettings.Format.IniFormat, QtCore.QSettings.Scope.UserScope, str(tmp_path))
    st = QtCore.QSettings("bvh-debugger", "app")
    for k, v in saved.items():
        st.setValue(k, v)
    st.sync()
    seen = {}

    def fake_exec(*_):
        """Where main() would block in the event loop: look at what the launch shows."""
        wins = [w for w in QtWidgets.QApplication.topLevelWidgets() if type(w).__name__ == "MainWindow"
                and w.isVisible()]
        seen["scene"] = wins[0].session.scene.name if wins and wins[0].session.scene else None
        seen["dialogs"] = [b.text() for w in wins for b in _dialogs(w)]
        for w in wins:
            w.close()
        return 0

    monkeypatch.setattr(QtWidgets.QApplication, "exec", fake_exec)
    assert cli.main(["--size", "1024x700"]) == 0
    assert seen.get("scene") == "chains-6to1" and not seen.get("dialogs"), seen


# ---- 3: a missing scene file ------------------------------------------------------------
def test_bug3_missing_scene_file_says_file_not_found(tmp_path):
    s = Session()
    missing = str(tmp_path / "x.json")
    with pytest.raises(FileNotFoundError) as err:
        s.load_scene(missing)
    assert "not found" in str(err.value) and "x.json" in str(err.value)
    assert "unknown scene" not in str(err.value)
    with pytest.raises(FileNotFoundError, match="unknown scene"):  # a bad name still lists the names
        s.load_scene("no-such-scene")


# ---- 4: the link-pair combo after "step into" --------------------------------------------
def test_bug4_step_into_keeps_the_chosen_link_pair(qtbot):
    from app.widgets.stepper_panel import StepperPanel
    s = Session()
    s.load_scene("chains-6to1", frames=200)
    panel = StepperPanel(s)
    qtbot.addWidget(panel)
    panel.show()
    for f in range(0, 200, 3):
        s.goto(f)
        if panel.drill_box.count() >= 2:
            break
    assert panel.drill_box.count() >= 2
    panel.drill_box.setCurrentIndex(1)
    chosen = tuple(panel.drill_box.itemData(1))
    panel.drill_btn.click()
    assert panel.stepper is not None and panel.stepper.t.link_pair == chosen
    assert panel.drill_box.currentIndex() == 1 and tuple(panel.drill_box.currentData()) == chosen


def test_an_empty_link_pair_list_says_why(qtbot):
    """hand-ball's hand / ball at a frame where no link pair's volumes overlap: the link-pair
    box says so (it was blank, with 'step into' disabled and no reason)."""
    from app.widgets.stepper_panel import StepperPanel
    s = Session()
    s.load_scene("hand-ball", frames=60)
    panel = StepperPanel(s)
    qtbot.addWidget(panel)
    panel.show()
    s.goto(39)
    i = next(k for k, (a, b) in enumerate(s.scene.pairs)
             if {s.scene.bodies[a].name, s.scene.bodies[b].name} == {"hand", "ball"})
    s.selected_pair = i
    panel.reload()
    assert len(s.result.pairs[i].link_pairs) == 0 and panel.drill_box.count() == 0
    assert not panel.drill_btn.isEnabled() and "no link pair" in panel.drill_box.placeholderText()
    for f in range(0, 60, 3):  # a frame with candidates: the list, its first pair selected
        s.goto(f)
        panel.reload()
        if panel.drill_box.count():
            break
    assert panel.drill_box.count() and panel.drill_box.currentIndex() == 0 and panel.drill_btn.isEnabled()


# ---- 5: the realignment view after leaving k-DOPs ----------------------------------------
def test_bug5_realignment_view_resets_when_the_bv_type_is_no_kdop(qtbot):
    from app.widgets.realign_panel import IDLE_TEXT, RealignPanel
    s = Session()
    s.bv = "kdop18"
    s.load_scene("rigid-torus", frames=30)
    panel = RealignPanel(s)
    qtbot.addWidget(panel)
    shown = False
    for f in range(30):
        s.goto(f)
        st = s.stepper()
        while not st.at_end:
            step = st.next()
            if step.outcome == Outcome.SEPARATED:
                panel.show_step(step, st.t)
                shown = panel.report is not None
                break
        if shown:
            break
    assert shown and panel.label.text() != IDLE_TEXT and panel.table.rowCount() == 5  # exact + 4 methods
    s.set_bv("obb")
    assert panel.label.text() == IDLE_TEXT and panel.table.rowCount() == 0 and panel.report is None


# ---- 6: the recorded test of a k-DOP run --------------------------------------------------
def test_bug6_kdop_recording_names_the_test_that_ran(tmp_path):
    s = Session()
    s.bv = "kdop18"  # what the command line's --bv did
    assert s.test == "slab"
    s.load_scene("rigid-torus", frames=5)
    s.start_recording(str(tmp_path / "k.csv"))
    for f in range(3):
        s.goto(f)
    side = s.stop_recording()
    with open(tmp_path / "k.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["test"] for r in rows} == {"slab"}
    with open(side) as fh:
        meta = json.load(fh)
    assert meta["settings"]["test"] == meta["settings"]["exact_test"] == "slab"


# ---- 7: fps outliers -----------------------------------------------------------------------
def test_bug7_fps_only_between_frames_of_playback(tmp_path):
    s = Session()
    s.load_scene("chains-3to1", frames=20)
    s.start_recording(str(tmp_path / "f.csv"))
    s.goto(1)
    s.goto(2)  # stepping while paused: no loop rate
    assert s.record.fps == 0
    s.set_playing(True)
    for f in range(3, 8):
        s.goto(f)
    s.set_playing(False)
    s.stop_recording()
    with open(tmp_path / "f.csv", newline="") as fh:
        fps = [r["fps"] for r in csv.DictReader(fh)]
    # the paused frames and the first frame of playback carry no fps, the others do
    assert fps[:3] == ["", "", ""] and all(float(x) > 0 for x in fps[3:])


def _cli(args, tmp_path, timeout=240):
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=str(tmp_path),
                          env=env, timeout=timeout, check=False)


def test_bug7_and_8_command_line(tmp_path, meshes):
    # one frame: no frame rate to report; the screenshot's real name is printed
    r = _cli(["--scene", "chains-3to1", "--frames", "1", "--screenshot", "shot", "--quit"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "screenshot written to shot.png" in r.stdout and (tmp_path / "shot.png").exists()
    assert "fps over 1 frames" not in r.stdout and "needs 2 or more" in r.stdout
    # reversed depth range, three meshes, an unknown image type: refused with a message
    for args, needle in ((["--depth", "5:2"], "LO must not exceed HI"),
                         (["--mesh", *meshes], "one mesh"),
                         (["--screenshot", "x.gif"], "cannot write a .gif")):
        r = _cli([*args, "--frames", "1", "--quit"], tmp_path)
        assert r.returncode == 2 and needle in r.stderr, (args, r.stderr)


def test_bug6_command_line_kdop_records_slab(tmp_path):
    r = _cli(["--bv", "kdop18", "--scene", "rigid-torus", "--frames", "3", "--record", "k.csv", "--quit"], tmp_path)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "k.csv", newline="") as fh:
        assert {row["test"] for row in csv.DictReader(fh)} == {"slab"}


# ---- 8: the deformation control on rigid scenes; three meshes in the window ---------------
def test_bug8_deform_control_only_for_deforming_scenes(qtbot):
    from app.widgets.scene_panel import ScenePanel
    s = Session()
    panel = ScenePanel(s)
    qtbot.addWidget(panel)
    s.load_scene("rigid-torus", frames=5)
    assert not panel.deform_box.isEnabled()
    s.load_scene("deform-wave", frames=5)
    assert panel.deform_box.isEnabled()


def test_bug8_three_meshes_in_the_window_are_refused(qtbot, tmp_path, meshes):
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.load_ref({"scene": "chains-3to1"})
    win.open_meshes(meshes)
    boxes = _dialogs(win)
    assert boxes and "two meshes" in boxes[0].text()
    assert win.session.scene.name == "chains-3to1"
    win.close()
