"""Timing, compare and insight panels (pytest-qt; under Xvfb, no OpenGL needed)."""
import numpy as np
import pytest

pytest.importorskip("pytestqt")
pg = pytest.importorskip("pyqtgraph")

from app.model.compare import CompareModel  # noqa: E402
from app.model.session import Session  # noqa: E402
from app.widgets.compare_panel import ComparePanel  # noqa: E402
from app.widgets.insight_panel import InsightPanel  # noqa: E402
from app.widgets.timing_panel import TimingPanel, axis_short_names, frame_axis_hist  # noqa: E402
from cdcore import AXIS_NAMES  # noqa: E402


@pytest.fixture
def session():
    # a first frame that loads kernels from numba's cache is marked cold and left out of the
    # plots: load them in this process first (else the test passed only after other tests)
    warm = Session()
    warm.load_scene("hand-ball")
    warm.step()
    s = Session()
    s.load_scene("hand-ball")
    return s


def test_xvfb_is_active(pytestconfig):
    assert pytestconfig.pluginmanager.hasplugin("xvfb")


def test_timing_panel_follows_frames(qtbot, session):
    panel = TimingPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    assert len(panel.series("t_total")) == len(session.history) == 1
    session.playing = True  # fps is measured during playback only
    for _ in range(7):
        session.step()
    # coalesced: the timer repaints once after the burst
    qtbot.waitUntil(lambda: len(panel.series("t_total")) == len(session.history) == 8, timeout=2000)
    rec = session.record
    hist = list(session.history)
    np.testing.assert_allclose(panel.series("t_update"), [r.t_update * 1e6 for r in hist])  # µs
    np.testing.assert_allclose(panel.series("t_total"), [r.t_total * 1e6 for r in hist])
    assert panel.labels["bv_tests"].text() == f"{rec.bv_tests:,}"
    assert panel.labels["prim_tests"].text() == f"{rec.prim_tests:,}"
    assert panel.labels["n_exact"].text() == str(rec.n_exact)
    assert panel.labels["n_false"].text() == str(rec.n_false)
    assert panel.labels["contacts"].text() == str(rec.contacts) and rec.contacts > 0
    assert panel.labels["fps"].text() != "–"
    # exit axes of the current frame
    h = frame_axis_hist(session.result)
    assert h.sum() > 0 and np.array_equal(panel.axis_hist, h)
    np.testing.assert_array_equal(panel.bars.opts["height"], h)
    assert len(axis_short_names()) == len(AXIS_NAMES) == 16
    # the plot items are reused, never added per frame
    items = len(panel.plot.getPlotItem().items)
    for _ in range(3):
        session.step()
    panel.refresh()
    assert len(panel.plot.getPlotItem().items) == items
    assert len(panel.series("t_query")) == len(session.history) == 11
    panel.window.setValue(10)
    assert len(panel.series("t_test")) == 10


def test_timing_panel_repaints_at_most_max_rate(qtbot, session):
    panel = TimingPanel(session, max_rate=30)
    qtbot.addWidget(panel)
    calls = []
    orig = panel.refresh
    panel.refresh = lambda: (calls.append(1), orig())[1]
    panel._timer.timeout.disconnect()
    panel._timer.timeout.connect(panel.refresh)
    for _ in range(20):  # a burst of frames faster than the repaint interval
        session.step()
    qtbot.waitUntil(lambda: len(calls) >= 1, timeout=2000)
    qtbot.wait(80)
    assert len(calls) <= 2


def test_compare_panel_toggles_compare_mode(qtbot, session):
    panel = ComparePanel(session)
    qtbot.addWidget(panel)
    assert session.compare is None
    panel.enable.setChecked(True)
    assert isinstance(session.compare, CompareModel)
    assert session.compare.methods == panel.selected_methods() == ["aabb_star", "obb", "cab"]
    for _ in range(5):
        session.step()
    panel.refresh()
    assert panel.table.rowCount() == 3
    assert [panel.table.item(r, 0).text() for r in range(3)] == ["AABB*", "OBB", "CAB"]
    tot = session.compare.totals()
    assert panel.table.item(1, 1).text() == f"{tot['obb'].n_coll:,}"
    assert panel.table.item(2, 7).text() == f"{tot['cab'].n_v:,}"
    for m in ("aabb_star", "obb", "cab"):
        assert len(panel.curves[m].yData) == len(session.compare.histories[m]) == 6
        assert panel.curves[m].isVisible()
    assert not panel.curves["aabb_plus"].isVisible()
    # a fourth method: a new model with four curves
    panel.checks["aabb_plus"].setChecked(True)
    assert session.compare.methods == ["aabb_plus", "aabb_star", "obb", "cab"]
    # too few methods: the running model stays
    for m in ("aabb_plus", "aabb_star", "obb"):
        panel.checks[m].setChecked(False)
    assert session.compare is not None and "choose 2 to 4" in panel.status.text()
    panel.enable.setChecked(False)
    assert session.compare is None
    assert panel.table.rowCount() == 0
    # enabling with one method refuses
    panel.enable.setChecked(True)
    assert session.compare is None and not panel.enable.isChecked()


def test_insight_panel_ground_truth_and_refit(qtbot, session):
    session.goto(8)
    panel = InsightPanel(session)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.highlight_requested, timeout=5000) as blocker:
        qtbot.mouseClick(panel.gt_btn, pg.QtCore.Qt.MouseButton.LeftButton)
    assert blocker.args == [[]]
    assert panel.gt_status.text().startswith("OK")
    assert "OK" in panel.gt_text.toPlainText()
    # a sabotaged result shows the mismatch and asks for highlights
    import dataclasses
    k = next(k for k, p in enumerate(session.result.pairs) if len(p.contacts))
    p = session.result.pairs[k]
    session.result.pairs[k] = dataclasses.replace(p, hits=np.zeros_like(p.hits))
    with qtbot.waitSignal(panel.highlight_requested, timeout=5000) as blocker:
        panel.check_ground_truth()
    assert panel.gt_status.text().startswith("MISMATCH")
    assert blocker.args[0] and all(len(h) == 3 for h in blocker.args[0])
    assert "missed link pairs" in panel.gt_text.toPlainText()

    rq = panel.check_refit()
    assert panel.refit_table.rowCount() == sum(len(b.level_ratio) for b in rq.bodies) > 0
    assert panel.rebuild_label.isHidden() != rq.rebuild_recommended


def test_insight_panel_heat_controls(qtbot, session):
    panel = InsightPanel(session)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.heat_toggled, timeout=1000) as blocker:
        panel.heat_check.setChecked(True)
    assert blocker.args == [True]
    assert panel.heat_table.rowCount() == session.trees[0].height + 1
    for _ in range(5):
        session.step()
    panel.heat_frames.setValue(3)
    assert session.heat_frames == 3 and session._heat.maxlen == 3 and len(session._heat) == 3
    with qtbot.waitSignal(panel.heat_toggled, timeout=1000) as blocker:
        panel.heat_check.setChecked(False)
    assert blocker.args == [False]


def test_deleted_panels_stop_listening(qtbot, session):
    import shiboken6
    panels = [TimingPanel(session), ComparePanel(session), InsightPanel(session)]
    panels[2].heat_check.setChecked(True)
    for p in panels:
        shiboken6.delete(p)  # C++ side gone, Python wrappers still referenced
    session.load_scene("rigid-torus")  # must not raise
    session.step()


def test_plot_ranges_step_instead_of_following_every_frame():
    """The x range holds the data in steps (50, 100, 200 ... up to the window): a range
    that followed the data re-ticked the axes on every refresh; the grid is as faint as
    showGrid(alpha=0.3) but opaque (translucent grid lines cost ~10 ms a paint)."""
    import pyqtgraph as pg

    from app.widgets.plots import GRID_SHARE, grid_color, x_span
    for window in (10, 64, 600):
        prev = 0
        for n in range(0, 800):
            span = x_span(n, window)
            assert span >= min(n, window) and span <= window and span >= prev
            prev = span
        assert len({x_span(n, window) for n in range(800)}) <= 6  # few steps, not one per frame
    bg = pg.mkColor(pg.getConfigOption("background")).getRgb()[:3]
    fg = pg.mkColor(pg.getConfigOption("foreground")).getRgb()[:3]
    assert grid_color() == tuple(round(b + GRID_SHARE * (f - b)) for b, f in zip(bg, fg))
