"""Issue 16, "first window <= 2.0 s warm": what the start path imports, and in which order.

A warm start (numba's cache holds the kernels) imports the 3-D view's Qt-free libraries
(pyvista, VTK, matplotlib) before PySide6: PySide6 replaces ``__import__`` and reads the
source of every module imported after it (0.4-0.6 s of CPU for those ~1,000 modules). It
never imports pyvistaqt / qtpy (qtpy's star imports materialise every Qt class, ~0.5 s;
the view is ``app.render.native_view``), nor the robots' self-collision kernel for a scene
without a robot."""
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
    late = [m for m in mods[qt:] if m.split(".")[0] in ("pyvista", "matplotlib", "numba", "scipy", "llvmlite")]
    assert not late, late[:20]


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
    assert all(k in marks for k in order + ["engine-loaded"]), marks
    assert [marks[k] for k in order] == sorted(marks[k] for k in order), marks
    assert marks["started"] <= marks["engine-loaded"] <= marks["first-window"]
