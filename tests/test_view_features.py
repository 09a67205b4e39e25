"""Readable defaults, camera framing and the 3-D overlay of the window (under Xvfb)."""
import numpy as np
import pytest

pytest.importorskip("pytestqt")
from PySide6 import QtCore  # noqa: E402

from app.model import Session  # noqa: E402
from app.model.framing import pair_bounds, scene_bounds  # noqa: E402
from app.model.trees import READABLE_BOXES, readable_selection  # noqa: E402
from cdcore.collide import Outcome  # noqa: E402


@pytest.fixture
def window(qtbot, tmp_path):
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


@pytest.mark.parametrize("scene", ["rigid-torus", "rigid-torus-20k", "deform-wave", "hand-ball", "chains-6to1"])
def test_auto_depth_is_readable(scene):
    s = Session()
    s.load_scene(scene, frames=3)
    mode, lo, hi = readable_selection(s.trees)
    drawn = sum(len(t.select(mode, lo, hi)) for t in s.trees)
    assert drawn <= READABLE_BOXES
    if mode == "cut":  # and as deep as the budget allows: the next cut would be too busy
        assert sum(len(t.select("cut", lo + 1)) for t in s.trees) > READABLE_BOXES
        for t in s.trees:  # a cut: every leaf under exactly one drawn node
            _assert_is_cut(t, t.select("cut", lo))
    else:
        assert sum(t.n_nodes for t in s.trees) <= READABLE_BOXES


def _assert_is_cut(t, nodes):
    """Every leaf of ``t`` has exactly one of ``nodes`` on its path to the root."""
    import cdcore._layout as L
    parent = np.full(t.n_nodes, -1)
    inner = np.flatnonzero(t.nodes_i[:, L.LEFT] >= 0)
    parent[t.nodes_i[inner, L.LEFT]] = inner
    parent[t.nodes_i[inner, L.RIGHT]] = inner
    chosen = np.zeros(t.n_nodes, bool)
    chosen[nodes] = True
    for leaf in np.flatnonzero(t.is_leaf):
        k, n = leaf, 0
        while k >= 0:
            n += chosen[k]
            k = parent[k]
        assert n == 1, (leaf, n)


def test_auto_depth_draws_every_body_of_trees_of_different_heights():
    """panda-reach: a 21-node robot tree (height 4) beside a 535-node table (height 12). The auto
    depth was the table's level 9: none of the robot's boxes was drawn. As a cut, every link
    box of the robot is drawn (its leaves are above the cut's level)."""
    s = Session()
    s.load_scene("panda-reach", frames=3)
    mode, lo, hi = readable_selection(s.trees)
    assert mode == "cut"
    robot = next(t for t, sb in zip(s.trees, s.scene.bodies) if sb.body.n_links > 1)
    drawn = robot.select(mode, lo, hi)
    assert set(np.flatnonzero(robot.is_leaf).tolist()) <= set(drawn.tolist())  # every link's box
    assert len(robot.select("level", lo)) == 0  # what a level drew
    assert sum(len(t.select(mode, lo, hi)) for t in s.trees) <= READABLE_BOXES


def test_window_defaults_to_the_readable_depth(window):
    window.load_ref({"scene": "rigid-torus"})
    assert window.hierarchy_panel.mode.currentText() == "auto"
    assert 0 < sum(t.n_nodes for t in window.tree_layers) <= READABLE_BOXES
    assert window.resolved_depth[0] == "cut"


def _in_view(win, bounds) -> float:
    b = bounds
    corners = np.array([[b[i], b[2 + j], b[4 + k]] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
    return win._view_extent(corners)


def test_fit_keeps_every_frame_in_view_and_fills_it(window):
    window.load_ref({"scene": "rigid-torus"})
    s = window.session
    assert 0.6 < _in_view(window, scene_bounds(s.scene, frames=[s.frame])) <= 1.0  # default: this frame's pose
    window.act_fit_motion.trigger()  # one click away: the whole motion
    ext = [_in_view(window, scene_bounds(s.scene, frames=[f])) for f in range(0, s.n_frames, 25)]
    assert max(ext) <= 1.0  # no body leaves the view on any frame
    assert _in_view(window, window._scene_box) > 0.6  # and the motion fills most of it


def test_follow_reframes_a_body_that_left_the_view(window):
    window.load_ref({"scene": "rigid-torus"})
    window.plotter.camera.Zoom(8.0)  # far too close: the bodies are out of view
    s = window.session
    assert _in_view(window, scene_bounds(s.scene, frames=[s.frame])) > 1.0
    window.act_follow.setChecked(True)
    s.goto(s.frame + 1)
    assert _in_view(window, scene_bounds(s.scene, frames=[s.frame])) <= 1.0


def test_focus_on_pair_zooms_to_the_highlighted_pair_and_axis(window, qtbot):
    window.load_ref({"scene": "rigid-torus"})
    from app.__main__ import focus_first_separated_pair
    panel = window.stepper_panel
    window.hierarchy_panel.opacity.setValue(100)
    assert focus_first_separated_pair(window)  # what --focus-pair does: a pair a third into the traversal
    st = panel.stepper
    step = st.current()
    assert step.outcome == Outcome.SEPARATED
    window.act_fit_motion.trigger()  # back to the whole scene, then focus again with the button
    assert window.tree_layers[0]._highlight.visible and window.axis_overlay.visible
    hl = window.tree_layers[0]._highlight
    assert hl.fill_actor is not None and hl.fill_actor.GetVisibility() and hl.fill_polydata.n_cells >= 12
    assert hl.actor.GetProperty().GetLineWidth() >= 5
    g = window.axis_overlay.geometry
    shown = pair_bounds(step, st.t, pad=0.0, extra_points=np.vstack([g["start"], g["end"], g["ends"]]))
    before = _in_view(window, pair_bounds(step, st.t, pad=0.0))
    panel.focus_btn.click()
    after = _in_view(window, pair_bounds(step, st.t, pad=0.0))
    assert 0.2 < after <= 1.0, (before, after)  # the pair itself is in view and not a speck
    assert window.hierarchy_panel.opacity.value() <= 40  # the meshes are see-through around the pair
    g = window.axis_overlay.geometry  # redrawn for the new camera (intervals above the pair on screen)
    shown = pair_bounds(step, st.t, pad=0.0, extra_points=np.vstack([g["start"], g["end"], g["ends"]]))
    assert 0.5 < _in_view(window, shown) <= 1.0  # the pair and its axis fill the view
    # the separating axis arrow is long next to the pair: longer than the two intervals together
    (a0, a1), (b0, b1) = step.interval_a, step.interval_b
    assert np.linalg.norm(g["end"] - g["start"]) > 1.5 * (max(a1, b1) - min(a0, b0))


def test_overlay_is_in_screenshots_and_follows_the_colouring(window, tmp_path):
    window.load_ref({"scene": "chains-6to1"})
    hud = window.hud
    assert "chains-6to1" in hud.info.GetInput() and "BV obb" in hud.info.GetInput()
    assert "BV tests" in hud.counters.GetInput()
    assert hud.key_mode == "state" and all(a.GetVisibility() for row in hud.state_rows for a in row)
    img = window.screenshot()
    h, w = img.shape[:2]
    corner = img[: h // 12, : w // 5, :3]
    assert (corner.min(axis=2) < 80).mean() > 0.01  # dark text in the top-left corner
    window.hierarchy_panel.color_by.setCurrentText("heat")
    for f in range(1, 6):
        window.session.goto(f)
    assert hud.key_mode == "heat" and all(a.GetVisibility() for row in hud.heat_rows for a in row)
    assert not any(a.GetVisibility() for row in hud.state_rows for a in row)
    assert hud.heat_max >= 1
    key = window.screenshot()[-h // 3:, : w // 8, :3].astype(int)
    assert (np.abs(key[..., 0] - key[..., 1]) + np.abs(key[..., 1] - key[..., 2])).max() > 100  # coloured swatches
