"""Issue 16, "first window <= 2.0 s warm": what the start path imports, and in which order.

A warm start (numba's cache holds the kernels) imports the 3-D view's Qt-free libraries
(pyvista, VTK, matplotlib) before PySide6: PySide6 replaces ``__import__`` and reads the
source of every module imported after it (0.4-0.6 s of CPU for those ~1,000 modules). It
never imports pyvistaqt / qtpy (qtpy's star imports materialise every Qt class, ~0.5 s;
the view is ``app.render.native_view``), nor the robots' self-collision kernel for a scene
without a robot.

Window first: the main window is mapped and painted (``MainWindow.first_painted``) before the
engine's entry points load (``cdcore._pairjit.entry_njit``: at their first call, not at import)
and before the scene starts building; the Timing dock's pyqtgraph plots are built after the first frame; a
scene that fails to build still ends in its message (scripted) or a dialog (interactive)."""
import json
import os
import subprocess
import sys

import pytest

from cdcore import warmup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PROBE = """
import json, sys
from app.__main__ import main
code = main(["--scene", "chains-6to1", "--frames", "1", "--quit"])
mods = list(sys.modules)  # insertion order: the order of first import
print("PROBE " + json.dumps({"code": code, "mods": mods}))
"""


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """The modules a warm scripted start of chains-6to1 imported, in import order."""
    if not warmup.kernels_cached():
        pytest.skip("numba's cache does not hold the kernels (run python -m cdcore.warmup): a cold start")
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path_factory.mktemp("cfg")))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    lines = [x for x in out.stdout.splitlines() if x.startswith("PROBE ")]
    assert out.returncode == 0 and lines, out.stderr[-2000:]
    got = json.loads(lines[-1][len("PROBE "):])
    assert got["code"] == 0
    return got["mods"]


@pytest.mark.gui
def test_warm_start_imports_the_view_libraries_before_qt(started):
    mods = started
    qt = mods.index("PySide6")
    for name in ("pyvista", "pyvista.plotting", "matplotlib.pyplot", "vtkmodules.vtkRenderingOpenGL2"):
        assert name in mods and mods.index(name) < qt, name
    late = [m for m in mods[qt:] if m.split(".")[0] in ("pyvista", "matplotlib", "llvmlite")]
    assert not late, late[:20]
    # numba and scipy themselves before Qt too (``kernels_cached`` reads numba's cache stamps);
    # what loads with the first kernel (numba's CPU target: its lowering modules, scipy.linalg's
    # BLAS) comes after the window, on the preload worker
    for name in ("numba", "scipy"):
        assert name in mods and mods.index(name) < qt, name


@pytest.mark.gui
def test_warm_start_never_imports_pyvistaqt_or_qtpy(started):
    assert "pyvistaqt" not in started and "qtpy" not in started


@pytest.mark.gui
def test_a_scene_without_a_robot_never_loads_the_robot_kernel(started):
    assert "cdcore._core" in started and "cdcore.articulated._self_kernel" not in started


@pytest.mark.gui
def test_the_start_reports_its_phases_in_order(tmp_path):
    """``--report-startup``: ``started``, the ``phase`` lines and ``first-window`` in the order
    the start runs them (``app.startup_bench`` prints their medians)."""
    if not warmup.kernels_cached():
        pytest.skip("a cold cache: the first-start window comes first")
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-m", "app", "--scene", "chains-6to1", "--frames", "1", "--quit",
                          "--report-startup"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    marks = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in ("started", "window-shown", "first-window"):
            marks[parts[0]] = float(parts[1])
        elif parts and parts[0] == "phase":
            marks[parts[1]] = float(parts[2])
    order = ["started", "view-imported", "qt-started", "modules-imported", "window-built", "window-shown",
             "scene-built", "first-window"]
    assert all(k in marks for k in order + ["engine-loaded", "scene-prebuilt"]), marks
    assert [marks[k] for k in order] == sorted(marks[k] for k in order), marks
    # the window first: the engine's entry points load, and the scene of --scene is built, on
    # workers started once it has painted, before the window adopts the scene
    assert marks["window-shown"] <= marks["engine-loaded"] <= marks["scene-built"]
    assert marks["window-shown"] <= marks["scene-prebuilt"] <= marks["scene-built"]


def test_reading_the_arguments_imports_no_compiler():
    """The parser and its checks read constants only (``cdcore.articulated.methods``): a bad
    option is refused in ~0.1 s, not after numba's ~0.5 s import (fails when a constant the
    parser reads lives in a module that imports numba)."""
    code = ("import sys\n"
            "from app.__main__ import build_parser, check_args\n"
            "args = build_parser().parse_args(['--scene', 'chains-6to1', '--method', 'cab', '--frames', '3'])\n"
            "check_args(args)\n"
            "print(sorted(m for m in ('numba', 'llvmlite', 'PySide6', 'pyvista') if m in sys.modules))\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", out.stdout


@pytest.fixture
def window(qtbot, tmp_path):
    pytest.importorskip("pytestqt")
    from PySide6 import QtCore

    from app.main_window import MainWindow
    from app.model import Session
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    assert win.wait_painted()  # as ``app.__main__`` does: the Timing plots are built then
    win.load_ref({"scene": "chains-6to1"})
    qtbot.wait(50)
    return win


@pytest.mark.gui
def test_docks_behind_timing_are_built_when_first_shown(window, qtbot):
    """Compare and Build lab (tabs behind Timing) are not built for the first window; showing
    the tab builds the panel into the dock, working (the Compare panel compares the scene's
    frames) and laid out like an eagerly built one (no horizontal scrolling, nothing cut)."""
    from PySide6 import QtWidgets

    from app.widgets.compare_panel import ComparePanel
    from app.widgets.lab_panel import LabPanel
    win = window
    assert sorted(win._lazy_factories) == ["compare_panel", "lab_panel"]  # nothing built yet
    dock = win.findChild(QtWidgets.QDockWidget, "Compare_methods")
    tabs = [b for b in win.findChildren(QtWidgets.QTabBar) if b.isVisible()
            and "Compare" in [b.tabText(i) for i in range(b.count())]]
    assert tabs, "the Compare tab is listed behind Timing"
    dock.raise_()
    qtbot.waitUntil(lambda: "compare_panel" not in win._lazy_factories, timeout=5000)
    panel = win._panels["compare_panel"]
    assert isinstance(panel, ComparePanel) and dock.widget().widget() is panel and panel.isVisible()
    assert "lab_panel" in win._lazy_factories  # still not built: not shown
    assert win.compare_panel is panel  # the attribute is the built panel, built once
    panel.enable.setChecked(True)
    for _ in range(3):
        win.session.step()
    panel.refresh()
    assert panel.table.rowCount() >= 1
    scroll = dock.widget()
    assert not scroll.horizontalScrollBar().isVisible()
    assert scroll.minimumWidth() >= panel.minimumSizeHint().width()  # the scroll area fits its new panel
    lab = win.lab_panel  # read before it is shown: built on demand, into its dock
    assert isinstance(lab, LabPanel) and win.findChild(QtWidgets.QDockWidget, "Build_lab").widget().widget() is lab
    assert not win._lazy_factories


@pytest.mark.gui
def test_a_tab_behind_others_does_not_count_as_shown(window):
    """Qt reports a dock tabbed behind another as visible (placed off screen): that must not
    build it (it would undo the saving)."""
    from PySide6 import QtWidgets
    dock = window.findChild(QtWidgets.QDockWidget, "Compare_methods")
    assert dock.isVisible() and not window._shown_now(dock)
    assert window._shown_now(window.findChild(QtWidgets.QDockWidget, "Timing"))


def test_prebuild_hands_over_its_session_once_and_none_on_failure():
    from app.warm_start import Prebuild
    made = object()
    ok = Prebuild({"scene": "x"}, lambda: made)
    ok.run()
    assert ok.result() is made and ok.result() is None  # adopted once

    def boom():
        raise ValueError("no such scene")
    bad = Prebuild({"scene": "x"}, boom)
    bad.run()
    assert bad.result() is None  # the window's own load raises the error, with its message


@pytest.mark.gui
def test_the_window_adopts_a_prebuilt_scene_built_with_its_settings(window, qtbot):
    """``load_in_background(prebuilt=...)`` adopts the prebuilt session when it was built with
    the window session's settings, and builds the scene itself when they differ."""
    from app.model import Session
    win = window
    pre = Session()
    pre.load_ref({"scene": "hand-ball"})
    win.load_in_background({"scene": "hand-ball"}, prebuilt=lambda: pre)
    assert win.session.scene is pre.scene  # adopted, not rebuilt
    other = Session()
    other.set_bv("aabb")
    other.load_ref({"scene": "chains-6to1"})
    assert win.session.bv != "aabb"
    win.load_in_background({"scene": "chains-6to1"}, prebuilt=lambda: other)
    assert win.session.scene is not other.scene and win.session.scene.name == other.scene.name
    assert win.session.bv != "aabb"


# ---- the window first: mapped and painted before the scene builds -------------------------------

_ORDER_PROBE = """
import sys, time
from app import warm_start
_run = warm_start.Prebuild.run
def run(self):
    sys.stdout.write(f"prebuild-started {time.time():.6f}\\n"); sys.stdout.flush()
    _run(self)
warm_start.Prebuild.run = run
from app import main_window
_painted = main_window.MainWindow._painted
def painted(self, when):
    sys.stdout.write(f"AT-PAINT busy={self.hud.busy.GetVisibility()} status={self.statusBar().currentMessage()!r} "
                     f"scene={self.session.scene is not None} combo={self.scene_panel.scene_box.currentText()!r}\\n")
    sys.stdout.flush()
    _painted(self, when)
main_window.MainWindow._painted = painted
_lazy = main_window.MainWindow._lazy_panel
def lazy(self, attr):
    if attr == "timing_panel" and attr in self._lazy_factories:
        sys.stdout.write(f"timing-built {time.time():.6f}\\n"); sys.stdout.flush()
    return _lazy(self, attr)
main_window.MainWindow._lazy_panel = lazy
from app.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def _probe(tmp_path, code, *args, timeout=300):
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def _marks(stdout):
    marks = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("started", "window-shown", "first-window", "prebuild-started",
                                            "timing-built"):
            marks.setdefault(parts[0], float(parts[1]))
        elif len(parts) >= 3 and parts[0] == "phase":
            marks.setdefault(parts[1], float(parts[2]))
    return marks


@pytest.mark.gui
def test_the_scene_builds_once_the_window_has_painted(tmp_path):
    """Window first: the scene of --scene starts building (on a worker) only when the main
    window has been painted, so its kernels' loading and the hierarchies' build do not share
    the GIL with the window's construction; the scene is drawn after that (first-window)."""
    if not warmup.kernels_cached():
        pytest.skip("a cold cache: the first-start window comes first")
    out = _probe(tmp_path, _ORDER_PROBE, "--scene", "chains-6to1", "--frames", "1", "--quit", "--report-startup")
    assert out.returncode == 0, out.stderr[-2000:]
    m = _marks(out.stdout)
    assert m["window-built"] <= m["window-shown"] <= m["prebuild-started"] <= m["scene-prebuilt"], m
    # the first window says what it loads, in the view and in the status bar
    assert "AT-PAINT busy=1 status='Loading chains-6to1 …'" in out.stdout, out.stdout
    assert "scene=False" in out.stdout
    # and its Scene picker shows the scene loading (it showed the list's first entry)
    assert "combo='chains-6to1'" in out.stdout, out.stdout
    assert m["scene-prebuilt"] <= m["scene-built"] <= m["first-window"], m
    # the Timing plots (pyqtgraph) are built after the first frame: they would delay it
    assert m["first-window"] <= m["timing-built"], m


@pytest.mark.gui
def test_a_scene_that_fails_to_build_still_reports_its_error_after_the_window(tmp_path):
    """The prebuild fails on the worker; the window, on screen by then, loads it again and
    the scripted run exits 2 with the scene's own message (no traceback)."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"bodies": 3}')
    out = _probe(tmp_path, _ORDER_PROBE, "--scene", str(bad), "--frames", "1", "--quit", "--report-startup")
    m = _marks(out.stdout)
    assert out.returncode == 2 and "error: bad.json: missing field 'name'" in out.stderr, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    assert "window-shown" in m and "first-window" not in m


_DIALOG_PROBE = """
import sys
from app.widgets import errors
import app.__main__ as am
errors.show_error = lambda parent, title, exc: print(f"DIALOG {title}: {exc}", flush=True)
def _exec(app, win, stop):  # the event loop: the user closes the window
    print(f"EXEC window visible {win.isVisible()}", flush=True)
    win.close()
    return 0
am._exec = _exec
sys.exit(am.main(sys.argv[1:]))
"""


@pytest.mark.gui
def test_an_interactive_start_with_a_broken_scene_shows_a_dialog(tmp_path):
    """Interactive (not scripted): the window is up, the failed load is a dialog over it."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"bodies": 3}')
    out = _probe(tmp_path, _DIALOG_PROBE, "--scene", str(bad), "--report-startup", timeout=120)
    m = _marks(out.stdout)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "DIALOG Load scene: bad.json: missing field 'name'" in out.stdout, out.stdout[-2000:]
    assert "EXEC window visible True" in out.stdout  # the window stays up, usable
    assert "window-shown" in m and "Traceback" not in out.stderr


@pytest.mark.gui
def test_the_first_paint_comes_before_the_timing_plots(qtbot, tmp_path):
    """The Timing dock is in the first window (its place, title and height), its pyqtgraph
    panel is built right after the window's first paint; ``first_painted`` fires before it,
    and ``win.timing_panel`` is the panel in the dock."""
    from PySide6 import QtCore, QtWidgets

    from app.main_window import TIMING_MIN_HEIGHT, MainWindow
    from app.model import Session
    from app.widgets.timing_panel import TimingPanel
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    dock = win.findChild(QtWidgets.QDockWidget, "Timing")
    assert dock is not None and "timing_panel" in win._lazy_factories
    assert not win.wait_painted(timeout=0.2) and win.painted_at is None  # not shown: never painted
    at_paint = []
    win.first_painted.connect(lambda t: at_paint.append((t, "timing_panel" in win._panels, dock.isVisible())))
    win.show()
    assert win.wait_painted()
    assert len(at_paint) == 1 and at_paint[0] == (win.painted_at, False, True), at_paint
    qtbot.waitUntil(lambda: "timing_panel" in win._panels, timeout=5000)
    panel = win._panels["timing_panel"]
    assert isinstance(panel, TimingPanel) and dock.widget().widget() is panel and win.timing_panel is panel
    assert dock.widget().minimumHeight() == TIMING_MIN_HEIGHT == panel.minimumHeight()
    held = MainWindow(Session(), settings=settings)  # app.__main__: held back until the first frame
    qtbot.addWidget(held)
    held.hold_panels = True
    held.show()
    assert held.wait_painted()
    qtbot.wait(100)
    assert "timing_panel" in held._lazy_factories
    held.release_panels()
    assert isinstance(held._panels.get("timing_panel"), TimingPanel)
    win.load_ref({"scene": "chains-6to1"})
    win.session.step()
    win._readouts()
    assert panel.labels["bv_tests"].text() not in ("", "–")
