"""The window under a real (virtual) X server: pytest-xvfb starts Xvfb for the run."""
import csv
import os

import numpy as np
import pytest

pytest.importorskip("pytestqt")
from PySide6 import QtCore, QtWidgets  # noqa: E402

from app.model import COLUMNS, Session  # noqa: E402


@pytest.fixture
def window(qtbot, tmp_path):
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    win.hierarchy_panel.mode.setCurrentText("all")
    win.session.load_scene("chains-6to1", frames=200)
    yield win
    win.close()


def test_window_opens_and_draws(window):
    assert window.session.scene.name == "chains-6to1"
    assert len(window.tree_layers) == 2 and window.tree_layers[0].n_cells > 0


def test_every_scene_loads(window):
    for name in window.session.scene_names():
        window.session.load_scene(name, frames=5)
        window.session.goto(3)
        assert len(window.mesh_layers) == len(window.session.scene.bodies)
        assert sum(t.n_cells for t in window.tree_layers) > 0, name


def test_depth_and_bv_type_change_what_is_drawn(window):
    s, hp = window.session, window.hierarchy_panel
    s.goto(120)
    all_cells = window.tree_layers[0].n_cells
    hp.mode.setCurrentText("level")
    hp.lo.setValue(0)
    root_cells = window.tree_layers[0].n_cells
    assert root_cells < all_cells
    hp.mode.setCurrentText("leaves")
    assert window.tree_layers[0].n_cells not in (0, root_cells)
    # a rigid scene draws mesh hierarchies: box and sphere types draw different cells
    s.load_scene("rigid-torus", frames=5)
    hp.mode.setCurrentText("level")
    hp.lo.setValue(4)
    boxes = window.tree_layers[0].n_cells
    s.set_bv("sphere")
    spheres = window.tree_layers[0].n_cells
    assert boxes > 0 and spheres > 0 and boxes != spheres


def test_play_pause_and_step(window, qtbot):
    s = window.session
    s.goto(10)
    window.playback.fwd_btn.click()
    assert s.frame == 11
    window.playback.back_btn.click()
    assert s.frame == 10
    window.playback.play_btn.click()
    assert s.playing
    qtbot.waitUntil(lambda: s.frame >= 15, timeout=10000)
    window.playback.play_btn.click()
    assert not s.playing
    f = s.frame
    qtbot.wait(100)
    assert s.frame == f
    window.playback.slider.setValue(42)
    assert s.frame == 42


def test_stepper_walks_to_the_end(window):
    s = window.session
    s.goto(150)
    panel = window.stepper_panel
    n = panel.stepper.count
    assert n == s.traversals[s.selected_pair].bv_tests
    steps = 0
    while not panel.stepper.at_end:
        panel.next_btn.click()
        steps += 1
    assert steps == n
    panel.reset_btn.click()
    panel.end_btn.click()
    assert panel.stepper.index == n - 1


def test_recording_writes_header_and_rows(window, tmp_path):
    path = tmp_path / "timings.csv"
    window.start_recording(str(path))
    for f in range(30):
        window.session.goto(f)
    window.stop_recording()
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == COLUMNS
    assert len(rows) == 31
    assert os.path.exists(tmp_path / "timings.json")


def test_bad_mesh_file_shows_a_dialog_and_the_app_keeps_running(window, qtbot, tmp_path):
    bad = tmp_path / "bad.obj"
    bad.write_text("v 1 2\nf 1 2 3 4 5\nthis is not a mesh\n")
    window.open_meshes([str(bad)])  # read on a worker thread: the dialog comes when it fails
    qtbot.waitUntil(lambda: window.findChild(QtWidgets.QMessageBox, "errorDialog") is not None, timeout=60_000)
    box = window.findChild(QtWidgets.QMessageBox, "errorDialog")
    assert box is not None and "bad.obj" in box.text()
    box.close()
    window.session.goto(5)  # still alive
    assert window.session.scene.name == "chains-6to1"


def test_screenshot_is_not_blank(window, tmp_path):
    window.session.goto(100)
    img = window.screenshot(str(tmp_path / "shot.png"))
    assert img.ndim == 3 and img.std() > 5
    assert os.path.getsize(tmp_path / "shot.png") > 1000


def test_kdop_realignment_view(window):
    s = window.session
    s.load_scene("rigid-torus", frames=20)
    s.set_bv("kdop14")
    dock = window.findChild(QtWidgets.QDockWidget, "k-DOP_realignment")
    dock.show()
    dock.raise_()
    panel = window.stepper_panel
    for f in range(20):
        s.goto(f)
        panel.reload()
        if panel.stepper.count > 3:
            break
    panel.next_btn.click()
    panel.next_btn.click()
    rep = window.realign_panel.report
    assert rep is not None and set(rep["methods"]) == {"table", "table_angle", "all", "major"}
    assert window.realign_panel.table.rowCount() == 5
    assert len(window._realign_actors) >= 3
    # every realigned k-DOP contains the exact one
    k2 = len(rep["exact"]) // 2
    for m in rep["methods"].values():
        assert np.all(m["kdop"][:k2] <= rep["exact"][:k2] + 1e-9)
        assert np.all(m["kdop"][k2:] >= rep["exact"][k2:] - 1e-9)
    assert window.tree_layers[0].n_cells > 0


def test_distance_panel_measures_and_draws_closest_points(window):
    s = window.session
    s.load_scene("proximity-point", frames=260)
    s.goto(250)
    window.distance_panel.btn.click()
    rep = window.distance_panel.report
    assert rep is not None and 0 < rep.distance < 0.5
    assert "closest-points" in window.plotter.actors and "closest-segment" in window.plotter.actors
    assert np.linalg.norm(rep.points[0] - rep.points[1]) == pytest.approx(rep.distance, rel=1e-9)


def test_the_3d_view_is_a_native_window_and_nothing_composes_the_window_through_gl(window):
    """A QOpenGLWidget anywhere in the window (pyvistaqt 0.13's QtInteractor) makes Qt
    compose the *whole* window through OpenGL on every update: under software GL 60-110 ms
    per frame at 1600x1000. The view is a native child window VTK draws into itself."""
    from PySide6.QtOpenGLWidgets import QOpenGLWidget

    from app.render.native_view import NativePlotter, use_native
    assert QtWidgets.QApplication.platformName() == "xcb"
    assert isinstance(window.plotter, NativePlotter) and window.plotter.interactor is window.plotter
    assert window.findChildren(QOpenGLWidget) == []
    assert window.plotter.testAttribute(QtCore.Qt.WidgetAttribute.WA_NativeWindow)
    window.session.load_scene("rigid-torus", frames=20)
    window.session.goto(3)
    img = window.screenshot()
    assert img.shape[0] == window.plotter.height() and img.std() > 5  # drawn, not blank
    # where a native window cannot be rendered into (Wayland) or on request: pyvistaqt's widget
    assert use_native("xcb") and use_native("windows") and use_native("cocoa", "native")
    assert not use_native("wayland") and not use_native("xcb", "fbo") and not use_native("offscreen")
    # closing releases the render window while the X server is up (at interpreter exit,
    # with pytest-xvfb's server gone, its destructor made Xlib exit the process with 1)
    window.close()
    assert window.plotter.ren_win is None and window.plotter._RenderWindow is None
