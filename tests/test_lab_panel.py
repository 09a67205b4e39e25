"""The Build lab panel: runs configurations over the session's scene, plots per frame, fills the
table and the verdict; bad input is a dialog (pytest-qt under Xvfb)."""
import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("pyqtgraph")

from PySide6 import QtWidgets  # noqa: E402

from app.model.session import Session  # noqa: E402
from app.widgets.lab_panel import LabPanel  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def session():
    s = Session()
    s.load_scene("chains-6to1")
    return s


def test_lab_panel_runs_and_gives_a_verdict(qtbot, session):
    panel = LabPanel(session)
    qtbot.addWidget(panel)
    panel.configs.setText("aabb::median obb::sah")
    panel.frames.setValue(4)
    panel.run_btn.click()
    assert panel.job is not None and panel.run_btn.text() == "Stop"
    qtbot.waitUntil(lambda: panel.job is None, timeout=120_000)
    assert panel.table.rowCount() == 2
    assert {panel.table.item(r, 0).text()[2:] for r in range(2)} == {"aabb/sat15/median/leaf1",
                                                                       "obb/sat15/sah/leaf1"}
    assert panel.verdict.toPlainText().startswith("Fastest: ")
    assert all(len(cn.yData) == 4 for cn, _ in panel.curves)
    assert panel.status.text().startswith("done")


def test_bad_configurations_open_a_dialog(qtbot, session, monkeypatch):
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: shown.append(a[2]))
    panel = LabPanel(session)
    qtbot.addWidget(panel)
    for text in ("obb::sha", "obb", "obb:slab aabb"):
        panel.configs.setText(text)
        panel.run_btn.click()
        assert panel.job is None
    assert len(shown) == 3 and "split" in shown[0] and "2 to 8" in shown[1] and "slab" in shown[2]


def test_front_cache_run(qtbot, session):
    panel = LabPanel(session)
    qtbot.addWidget(panel)
    panel.configs.setText("obb::sah")
    panel.frames.setValue(5)
    panel.front_btn.click()
    assert not panel.run_btn.isEnabled()
    qtbot.waitUntil(lambda: panel.job is None, timeout=120_000)
    assert panel.table.rowCount() == 2 and "front cache" in panel.table.item(1, 0).text()
    assert "node tests of full traversals" in panel.verdict.toPlainText()
    assert len(panel.curves[2][0].yData) == 5  # the front size per frame


def test_front_tracker_matches_full_traversals():
    """The app's front model (what the 3-D view draws): per frame, the same contacts as full
    traversals, fewer node tests once the front has settled, nodes that exist in the trees."""
    import numpy as np

    from app.model.front import FrontTracker
    from cdcore import collide
    from cdcore.scenes import load_scene
    scene = load_scene("deform-wave", frames=8)
    tr = FrontTracker(scene)
    for f in range(8):
        sb = scene.bodies[0]
        sb.body.set_link_vertices(0, sb.vertices(f))
        poses = [np.asarray(b.link_poses[f]) for b in scene.bodies]
        ff = tr.update(poses)
        (i, la), (j, lb) = ff.pair
        ta, tb = scene.bodies[i].body.bvhs[la], scene.bodies[j].body.bvhs[lb]
        fc = tr.caches[0]
        assert np.array_equal(fc.collide(poses[i][la], poses[j][lb]).pairs,
                              collide(ta, poses[i][la], tb, poses[j][lb]).pairs)
        assert ff.nodes_a.max() < ta.n_nodes and ff.nodes_b.max() < tb.n_nodes
    assert tr.history[-1][1] < tr.history[-1][2]
