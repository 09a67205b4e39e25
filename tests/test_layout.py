"""The window's layout fits from a 1366x768 laptop to a 1920x1080 screen: with every dock
brought to the front in turn, no label, button or combo box is narrower than its size hint
(its text would be cut), no word-wrapped label is shorter than its text needs, no dock or
table needs a horizontal scrollbar, every tab title is shown in full, and the Timing plots
get at least 160 px. Under Xvfb (pytest-xvfb)."""
import os

import pytest

pytest.importorskip("pytestqt")
from PySide6 import QtCore, QtWidgets  # noqa: E402

from app.model import Session  # noqa: E402

SIZES = [(1366, 768), (1920, 1080)]


def _cut_widgets(root) -> list[str]:
    """Visible text widgets under ``root`` shown smaller than they ask to be."""
    bad = []
    for w in root.findChildren(QtWidgets.QWidget):
        if not w.isVisibleTo(root.window()) or not w.isVisible() or w.width() == 0:
            continue
        name = w.objectName() or (w.text() if hasattr(w, "text") else "") or type(w).__name__
        if isinstance(w, QtWidgets.QLabel):
            if not w.text():
                continue
            if w.wordWrap():
                need = w.heightForWidth(w.width())
                if need > w.height() + 1:
                    bad.append(f"label {name!r}: {w.height()} px high, its text needs {need}")
            elif w.width() < w.sizeHint().width():
                bad.append(f"label {name!r}: {w.width()} px wide < {w.sizeHint().width()}")
        elif isinstance(w, (QtWidgets.QAbstractButton, QtWidgets.QComboBox, QtWidgets.QAbstractSpinBox)):
            if w.width() < w.sizeHint().width():
                bad.append(f"{type(w).__name__} {name!r}: {w.width()} px wide < {w.sizeHint().width()}")
    return bad


def _scrolling(root) -> list[str]:
    """Scroll areas (docks, tables, lists) under ``root`` that scroll sideways or whose
    content is wider than they show."""
    bad = []
    for sa in root.findChildren(QtWidgets.QAbstractScrollArea):
        if not sa.isVisible() or isinstance(sa, QtWidgets.QGraphicsView):
            continue
        if sa.horizontalScrollBar().isVisible():
            bad.append(f"{sa.objectName() or type(sa).__name__}: horizontal scrollbar")
        if isinstance(sa, QtWidgets.QTableView) and sa.model().columnCount():
            cols = sa.horizontalHeader()
            last = cols.logicalIndex(cols.count() - 1)
            need = cols.length() - cols.sectionSize(last) + cols.sectionSizeHint(last)
            if need > sa.viewport().width() + 1:
                bad.append(f"{sa.objectName()}: columns need {need} px, {sa.viewport().width()} shown")
        if isinstance(sa, QtWidgets.QScrollArea) and sa.widget() is not None:
            inner = sa.widget()
            if inner.width() < inner.minimumSizeHint().width():
                bad.append(f"{sa.objectName()}: content {inner.width()} px < {inner.minimumSizeHint().width()}")
    return bad


def _cut_tabs(win) -> list[str]:
    bad = []
    for bar in win.findChildren(QtWidgets.QTabBar):
        if not bar.isVisible():
            continue
        fm = bar.fontMetrics()
        for i in range(bar.count()):
            r = bar.tabRect(i)
            text = bar.tabText(i)
            if r.width() < fm.horizontalAdvance(text) + 8 or r.right() > bar.width() or r.left() < 0:
                bad.append(f"tab {text!r}: {r.width()} px at {r.left()} in a {bar.width()} px bar")
            if "&" in text.replace("&&", ""):
                bad.append(f"tab {text!r}: '&' is drawn as a mnemonic")
    return bad


@pytest.fixture
def make_window(qtbot, tmp_path):
    from app.main_window import MainWindow

    def make(size):
        settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
        win = MainWindow(Session(), settings=settings)
        qtbot.addWidget(win)
        win.resize(*size)
        win.show()
        qtbot.waitExposed(win)
        win.load_ref({"scene": "hand-ball"})  # long body and link names
        qtbot.wait(100)
        return win
    return make


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_nothing_is_cut_at_common_screen_sizes(make_window, qtbot, size):
    win = make_window(size)
    assert win.session.scene is not None
    win.compare_panel.enable.setChecked(True)  # the compare table with its rows
    for _ in range(3):
        win.session.step()
    win.compare_panel.refresh()
    problems = []
    for bar in (win.toolbar, win.timeline):
        problems += [f"{bar.objectName()}: {p}" for p in _cut_widgets(bar)]
        hidden = [a.text() or a.objectName() for a in bar.actions() if bar.widgetForAction(a) is not None
                  and not bar.widgetForAction(a).isVisible() and not a.isSeparator()]
        problems += [f"{bar.objectName()}: {h!r} pushed into the overflow menu" for h in hidden]
    docks = win.findChildren(QtWidgets.QDockWidget)
    assert len(docks) >= 8
    assert not win.joint_dock.isVisible()  # shown only when the scene has a robot ...
    win.joint_dock.show()  # ... and then it must fit too
    QtWidgets.QApplication.processEvents()
    for dock in docks:
        assert not dock.isFloating() and dock.isVisible() or win.tabifiedDockWidgets(dock), dock.objectName()
        dock.raise_()
        qtbot.wait(30)
        QtWidgets.QApplication.processEvents()
        problems += [f"{dock.windowTitle()}: {p}" for p in _cut_widgets(dock) + _scrolling(dock)]
    problems += _cut_tabs(win)
    timing = win.findChild(QtWidgets.QDockWidget, "Timing")
    timing.raise_()
    QtWidgets.QApplication.processEvents()
    if timing.widget().viewport().height() < 160:
        problems.append(f"Timing: {timing.widget().viewport().height()} px high (< 160)")
    view = win.plotter.interactor
    if view.width() < 0.4 * size[0] or view.height() < 0.35 * size[1]:
        problems.append(f"3-D view only {view.width()}x{view.height()}")
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_cut_label(qtbot):
    """The layout check itself: a button squeezed below its size hint is reported."""
    w = QtWidgets.QWidget()
    qtbot.addWidget(w)
    lay = QtWidgets.QHBoxLayout(w)
    btn = QtWidgets.QPushButton("a rather long button caption")
    btn.setMaximumWidth(40)
    lay.addWidget(btn)
    w.show()
    qtbot.waitExposed(w)
    assert any("a rather long button caption" in p for p in _cut_widgets(w))
    sa = QtWidgets.QScrollArea(w)
    inner = QtWidgets.QLabel("x" * 400)
    sa.setWidget(inner)
    sa.resize(100, 60)
    sa.show()
    QtWidgets.QApplication.processEvents()
    assert any("horizontal scrollbar" in p for p in _scrolling(w))


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_robot_layout_fits_with_its_sliders(qtbot, tmp_path, size, monkeypatch):
    """A robot loaded: the joint sliders all in view (robot-first layout), nothing cut in
    the toolbars or the docks, the 3-D view still the largest part."""
    robots = os.environ.get("CDCORE_ROBOTS_DIR") or "/work/shared/robots"
    if not os.path.isdir(os.path.join(robots, "example-robot-data")):
        pytest.skip("the shared robots are not on this machine")
    monkeypatch.setenv("CDCORE_ROBOTS_DIR", robots)
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    win.load_ref({"scene": "panda-reach"})
    qtbot.wait(100)
    QtWidgets.QApplication.processEvents()
    problems = []
    for bar in (win.toolbar, win.timeline):
        problems += [f"{bar.objectName()}: {p}" for p in _cut_widgets(bar)]
    assert win.joint_dock.isVisible() and not win.joint_dock.visibleRegion().isEmpty()
    vp = win.joint_dock.widget().viewport()
    for sl in win.joint_panel.sliders:
        top = sl.mapTo(vp, QtCore.QPoint(0, 0)).y()
        if not (0 <= top and top + sl.height() <= vp.height()):
            problems.append(f"slider {sl.objectName()} below the fold ({top} of {vp.height()} px)")
    for name in ("Scene_and_method", "Robot_joints", "Traversal_stepper", "Timing"):
        dock = win.findChild(QtWidgets.QDockWidget, name)
        problems += [f"{dock.windowTitle()}: {p}" for p in _cut_widgets(dock)]
    if win.width() > size[0] + 1:
        problems.append(f"window widened to {win.width()} px by its docks")
    view = win.plotter.interactor
    if view.width() < 0.4 * size[0] or view.height() < 0.35 * size[1]:
        problems.append(f"3-D view only {view.width()}x{view.height()}")
    win.close()
    assert not problems, "\n".join(problems)
