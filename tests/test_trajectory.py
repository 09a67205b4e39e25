"""Trajectories: CSV / NPZ files with validation, seeded smooth random motion, grasps."""
import numpy as np
import pytest
from robotgen import write_twoarm

from cdcore.articulated import load_urdf
from cdcore.articulated.trajectory import (
    grasp_pose,
    grasp_trajectory,
    load_trajectory,
    random_trajectory,
    save_trajectory,
)


@pytest.fixture(scope="module")
def body(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("robots"))
    return load_urdf(write_twoarm(root), root)


@pytest.mark.parametrize("ext", [".csv", ".npz"])
def test_roundtrip(body, tmp_path, ext):
    q = random_trajectory(body, 50, seed=3)
    times = np.arange(50) * 0.02
    p = tmp_path / f"t{ext}"
    save_trajectory(p, body, q, times)
    t = load_trajectory(p, body)
    np.testing.assert_array_equal(t.q, q)
    np.testing.assert_array_equal(t.times, times)
    assert t.columns == body.joint_names


def test_csv_subset_and_order(body, tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("left_slide,time,left_turn\n0.01,0.0,0.5\n0.02,0.1,0.6\n")
    t = load_trajectory(p, body)
    np.testing.assert_array_equal(t.q, [[0.5, 0.0, 0.01], [0.6, 0.0, 0.02]])  # right_turn missing: 0
    np.testing.assert_array_equal(t.times, [0.0, 0.1])


@pytest.mark.parametrize("text, words", [
    ("left_turn,elbow\n0,0\n", ["unknown joints", "elbow"]),
    ("left_turn,right_slide\n0,0\n", ["right_slide"]),  # a mimic joint is not a dof
    ("left_turn\nabc\n", ["non-numeric"]),
    ("left_turn,left_slide\n0\n", ["row 2"]),
    ("left_turn\nnan\n", ["NaN"]),
    ("left_turn\n", ["no frames"]),
    ("", ["empty"]),
    ("time,left_turn\n0.1,0\n0.1,0\n", ["increasing"]),
    ("left_turn,left_turn\n0,0\n", ["twice"]),
])
def test_bad_csv(body, tmp_path, text, words):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(ValueError) as err:
        load_trajectory(p, body)
    for w in words:
        assert w in str(err.value)
    assert "bad.csv" in str(err.value)


def test_bad_npz_and_paths(body, tmp_path):
    p = tmp_path / "t.npz"
    np.savez(p, q=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="joint_names"):
        load_trajectory(p, body)
    np.savez(p, q=np.zeros((3, 2)), joint_names=np.array(["left_turn", "left_slide", "right_turn"]))
    with pytest.raises(ValueError, match="frames, 3"):
        load_trajectory(p, body)
    np.savez(p, q=np.array([["a"]]), joint_names=np.array(["left_turn"]))
    with pytest.raises(ValueError, match="dtype"):
        load_trajectory(p, body)
    with pytest.raises(FileNotFoundError):
        load_trajectory(tmp_path / "none.csv", body)
    (tmp_path / "t.txt").write_text("x")
    with pytest.raises(ValueError, match="format"):
        load_trajectory(tmp_path / "t.txt", body)


def test_random_trajectory_smooth_within_limits(body):
    q = random_trajectory(body, 600, seed=1)
    lo, hi = body.limits[:, 0], body.limits[:, 1]
    assert q.shape == (600, 3)
    assert np.all(q >= lo) and np.all(q <= hi)
    np.testing.assert_array_equal(q, random_trajectory(body, 600, seed=1))
    assert not np.array_equal(q, random_trajectory(body, 600, seed=2))
    # smooth: no frame-to-frame step above a few percent of the range, and it does move
    step = np.abs(np.diff(q, axis=0)).max(axis=0) / (hi - lo)
    assert np.all(step < 0.05) and np.all(np.ptp(q, axis=0) > 0.1 * (hi - lo))
    with pytest.raises(ValueError):
        random_trajectory(body, 0)


def test_grasp(body):
    g = grasp_trajectory(body, 101)
    lo, hi = body.limits[:, 0], body.limits[:, 1]
    assert np.all(g >= lo - 1e-12) and np.all(g <= hi + 1e-12)
    np.testing.assert_allclose(g[50], grasp_pose(body))  # closed mid-way
    np.testing.assert_allclose(g[0], np.clip(0, lo, hi))
    # left_slide [0, 0.1] flexes up; symmetric joints stay at rest
    assert grasp_pose(body)[2] == pytest.approx(0.08) and grasp_pose(body)[0] == 0.0
