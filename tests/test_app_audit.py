"""The debugger's audit model (Qt-free) and dock: an audit of the scene's robot runs in a
worker thread, its matrix marks SRDF-disabled pairs, and a click on a pair poses the robot at
a configuration where that pair collides, with the stepper on the robot's self pair."""
import numpy as np
import pytest
from robotgen import write_twoarm

from app.model import Session
from app.model.audit import AuditModel
from app.model.robot import RobotModel, open_robot
from cdcore.articulated.selfcollision import brute_force_self_pairs


@pytest.fixture
def robot_session(tmp_path):
    root = str(tmp_path)
    urdf = write_twoarm(root)
    srdf = tmp_path / "twoarm.srdf"
    srdf.write_text('<robot name="twoarm"><disable_collisions link1="left_arm" link2="right_arm"/></robot>')
    s = Session()
    open_robot(s, urdf, [root], srdf=str(srdf), frames=3)
    return s


def test_audit_model_runs_and_poses_at_the_witness(robot_session):
    s = robot_session
    rm = RobotModel(s)
    m = AuditModel(rm)
    m.start(3000, seed=1)
    m.wait(300)
    assert m.state == "done", m.state
    r = m.result
    names = r.link_names
    frac = m.matrix()
    assert np.allclose(frac, frac.T, equal_nan=True)
    i, j = names.index("left_arm"), names.index("right_arm")
    assert m.disabled_mask()[i, j] and frac[i, j] > 0
    assert m.adjacent_mask()[names.index("base"), names.index("left_arm")]
    items = m.pose_at_witness(i, j)
    assert [it[1] for it in items] == [i, j]
    q = rm.q()
    assert ("left_arm", "right_arm") in brute_force_self_pairs(rm.body, q, skip_adjacent=False)
    k = rm.index
    assert tuple(s.scene.pairs[s.selected_pair]) == (k, k)
    never = [(a, b) for (a, b), c in r.counts.items() if c == 0]
    if never:
        a, b = never[0]
        assert m.pose_at_witness(names.index(a), names.index(b)) is None


def test_audit_model_cancel(robot_session):
    m = AuditModel(RobotModel(robot_session))
    m.start(200_000, seed=0)
    m.cancel()
    m.wait(300)
    assert m.state in ("cancelled", "done")


@pytest.mark.gui
def test_audit_panel_click(qtbot, robot_session):
    from app.widgets.audit_panel import AuditPanel
    rm = RobotModel(robot_session)
    panel = AuditPanel(AuditModel(rm))
    qtbot.addWidget(panel)
    panel.samples.setValue(2000)
    panel._run()
    panel.model.wait(300)
    panel._poll()
    names = panel.model.result.link_names
    i, j = names.index("left_arm"), names.index("right_arm")
    assert panel.table.item(i, j).text() == "×"
    with qtbot.waitSignal(panel.highlight_requested, timeout=5000) as sig:
        panel._clicked(i, j)
    assert [it[1] for it in sig.args[0]] == [i, j]
    assert "posed" in panel.detail.text()
