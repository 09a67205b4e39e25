"""Scenes with URDF robots: own robot + trajectory file + environment mesh; the shared-robot
scenes are listed only when their data is found."""
import json

import numpy as np
import pytest
from robotgen import write_twoarm

from cdcore.articulated import RobotBody
from cdcore.articulated.shared_robots import ENV_VAR, available_robots
from cdcore.articulated.trajectory import save_trajectory
from cdcore.scenes import SceneError, SceneRunner, list_scenes, load_scene
from cdcore.scenes.runner import contact_pairs


def _scene(tmp_path, joints):
    root = tmp_path / "ws"
    urdf = write_twoarm(str(root))
    spec = {"name": "twoarm-test", "kind": "articulated", "frames": 30, "dt": 0.1,
            "bodies": [{"name": "robot", "type": "urdf", "urdf": urdf, "package_dirs": [str(root)],
                        "motion": {"joints": joints}},
                       {"name": "plate", "type": "rigid", "mesh": {"shape": "box", "args": {"extents": [0.2, 0.2, 0.02]}},
                        "root": {"translation": [0.2, 0.15, 0.08]}}],
            "pairs": [[0, 1], [0, 0]]}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(spec))
    return p


def test_scene_with_trajectory_file(tmp_path):
    from cdcore.articulated import load_urdf
    body = load_urdf(write_twoarm(str(tmp_path / "tmp")), str(tmp_path / "tmp"))
    q = np.zeros((11, 3))
    q[:, 0] = np.linspace(0, 2.0, 11)
    save_trajectory(tmp_path / "t.csv", body, q, times=np.linspace(0, 1.0, 11))
    s = load_scene(str(_scene(tmp_path, {"type": "trajectory", "file": str(tmp_path / "t.csv")})))
    sb = s.bodies[0]
    assert isinstance(sb.body, RobotBody) and sb.link_poses.shape == (30, 6, 4, 4)
    # resampled on the scene clock (dt 0.1 = the file's), then held at the end
    np.testing.assert_allclose(sb.link_poses[5], sb.body.fk(np.array([1.0, 0, 0])), atol=1e-12)
    np.testing.assert_allclose(sb.link_poses[29], sb.body.fk(np.array([2.0, 0, 0])), atol=1e-12)
    r = SceneRunner(s)
    for f in range(0, 30, 3):
        assert contact_pairs(r.step(f)) == contact_pairs(r.brute(f))


@pytest.mark.parametrize("joints", [{"type": "random", "seed": 2}, {"type": "grasp"}, None])
def test_generated_motion_within_limits(tmp_path, joints):
    s = load_scene(str(_scene(tmp_path, joints)))
    assert s.bodies[0].link_poses.shape[0] == 30


def test_bad_robot_scene(tmp_path):
    p = _scene(tmp_path, {"type": "trajectory", "file": str(tmp_path / "missing.csv")})
    with pytest.raises(SceneError, match="missing.csv"):
        load_scene(str(p))
    spec = json.loads(p.read_text())
    spec["bodies"][0]["urdf"] = str(tmp_path / "none.urdf")
    p.write_text(json.dumps(spec))
    with pytest.raises(SceneError, match="none.urdf"):
        load_scene(str(p))


def test_shared_scenes_listed_only_with_data(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path))  # no robots there
    names = list_scenes()
    assert "allegro-grasp" not in names and "panda-reach" not in names and "hand-ball" in names
    with pytest.raises(SceneError):
        load_scene("allegro-grasp")


@pytest.mark.parametrize("name, robot", [("allegro-grasp", "allegro"), ("panda-reach", "panda")])
def test_shared_scenes_run(name, robot):
    if robot not in available_robots():
        pytest.skip("shared robots not found")
    assert name in list_scenes()
    s = load_scene(name, frames=60)
    r = SceneRunner(s)
    contacts = 0
    for f in range(0, 60, 6):
        res = r.step(f)
        assert contact_pairs(res) == contact_pairs(r.brute(f))
        contacts += res.contacts
    if name == "allegro-grasp":
        assert contacts > 0
