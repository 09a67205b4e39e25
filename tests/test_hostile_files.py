"""Small hostile files that used to escape as the wrong error, a hang-like cost or a traceback
(a loader audit's findings; each test fails on the code before its fix):

- an SRDF declaring an unknown encoding raised ``LookupError`` (now ``ValueError`` naming it);
- a scene's ``"srdf": 5`` raised ``AttributeError`` (now ``SceneError`` naming the field);
- a scene nested ~1,000 levels deep raised ``RecursionError``, and a 5,000-digit integer a
  bare ``ValueError`` (now ``SceneError``);
- a trajectory naming one joint 40,000 times took ~28 s to be refused (quadratic check);
- a robot scene's random joint motion with a negative seed gave numpy's bare message.
"""
import json
import os
import time

import numpy as np
import pytest

from cdcore.articulated import load_trajectory, read_srdf_disabled
from cdcore.scenes import load_scene
from cdcore.scenes.scene import SceneError


def test_an_srdf_with_an_unknown_encoding_is_a_value_error(tmp_path):
    p = tmp_path / "bad.srdf"
    p.write_text('<?xml version="1.0" encoding="bogus"?>\n<robot name="r"/>\n')
    with pytest.raises(ValueError, match="bad.srdf: not readable XML"):
        read_srdf_disabled(str(p))


def _robot_scene(tmp_path, urdf, root, **extra):
    body = {"name": "arm", "type": "urdf", "urdf": urdf, "package_dirs": [root]}
    body.update(extra)
    spec = {"name": "s", "kind": "articulated", "frames": 3, "bodies": [body]}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(spec))
    return str(p)


def test_a_scene_srdf_that_is_not_a_path_names_the_field(tmp_path, twoarm):
    _, urdf, root = twoarm
    with pytest.raises(SceneError, match=r"bodies\[0\]\.srdf: expected str"):
        load_scene(_robot_scene(tmp_path, urdf, root, srdf=5))


def test_a_negative_seed_of_a_robot_motion_names_the_field(tmp_path, twoarm):
    _, urdf, root = twoarm
    with pytest.raises(SceneError, match=r"seed: must be >= 0"):
        load_scene(_robot_scene(tmp_path, urdf, root, motion={"joints": {"type": "random", "seed": -1}}))


@pytest.mark.parametrize("depth", [80, 5000])
def test_a_scene_nested_deep_is_a_scene_error(tmp_path, depth):
    p = tmp_path / "deep.json"
    p.write_text('{"name": "d", "kind": "rigid", "frames": 2, "bodies": [], "x": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(SceneError, match="nested"):
        load_scene(str(p))


def test_a_scene_with_a_huge_integer_literal_is_a_scene_error(tmp_path):
    p = tmp_path / "huge.json"
    p.write_text('{"name": "h", "kind": "rigid", "frames": ' + "9" * 5000 + ', "bodies": []}')
    with pytest.raises(SceneError, match="not a readable JSON scene"):
        load_scene(str(p))


def test_a_trajectory_naming_one_joint_many_times_is_refused_quickly(tmp_path, twoarm):
    body, _, _ = twoarm
    n = 40_000
    p = os.path.join(tmp_path, "dup.npz")
    np.savez_compressed(p, q=np.zeros((1, n)), joint_names=np.array([body.joint_names[0]] * n))
    t = time.perf_counter()
    with pytest.raises(ValueError, match="joints given twice"):
        load_trajectory(p, body)
    assert time.perf_counter() - t < 5.0  # ~28 s with the quadratic check
