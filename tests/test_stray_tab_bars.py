"""No stale dock tab bar over the 3-D view: Qt 6.11 leaves the bar of a tabified dock group as
it was while the docks were being added ("Timing | Compare", "Stepper | Realignment") painted
at its pre-layout place, in the middle of the view, beside the group's real bar under its
docks. ``QWidget.grab`` does not show it; the X screen does. Checked in a scripted run at
1366x768 (the default layout), on the bars themselves: every visible tab bar of the window
sits under the docks it names."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import sys
from PySide6 import QtCore, QtWidgets
from app import main_window
_orig = main_window.MainWindow.window_screenshot
def shot(self, path):
    _orig(self, path)
    QtWidgets.QApplication.instance().processEvents()
    docks = {d.windowTitle(): d for d in self.findChildren(QtWidgets.QDockWidget)}
    direct = QtCore.Qt.FindChildOption.FindDirectChildrenOnly
    for bar in self.findChildren(QtWidgets.QTabBar, options=direct):
        if not bar.isVisible():
            continue
        titles = [bar.tabText(i) for i in range(bar.count())]
        rects = [docks[t].geometry() for t in titles if t in docks and docks[t].isVisible()]
        bottom = max(r.bottom() for r in rects) if rects else -1
        print("BAR", "|".join(titles), bar.geometry().top(), bottom, sep="\t", flush=True)
main_window.MainWindow.window_screenshot = shot
from app.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.gui
def test_every_visible_dock_tab_bar_sits_under_its_docks(tmp_path):
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-c", PROBE, "--scene", "hand-ball", "--frames", "3", "--size", "1366x768",
                          "--screenshot-window", str(tmp_path / "w.png"), "--quit"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    bars = [line.split("\t")[1:] for line in out.stdout.splitlines() if line.startswith("BAR\t")]
    assert bars, out.stdout
    for titles, top, bottom in bars:
        assert abs(int(top) - int(bottom)) <= 8, f"tab bar {titles!r} at y={top}, its docks end at y={bottom}"
