"""Scene numbers are validated at load time (errors name the JSON path), and frames are
computed lazily: a 10-million-frame scene opens at once and any frame can be asked for."""
import copy
import json
import math
import os

import numpy as np
import pytest

from cdcore.scenes import SCENE_DIR, SceneError, SceneRunner, load_scene, rigid_scene
from cdcore.scenes import frames as frames_mod
from cdcore.scenes.scene import scene_from_spec
from cdcore import shapes
from cdcore.transforms import random_rotations


def _spec(name):
    with open(os.path.join(SCENE_DIR, f"{name}.json")) as fh:
        return json.load(fh)


def _set(spec, path, value):
    spec = copy.deepcopy(spec)
    node = spec
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return spec


ROOT = ("bodies", 1, "motion", "root")
JOINTS = ("bodies", 0, "motion", "joints")


@pytest.mark.parametrize("path, value, message", [
    (ROOT + ("axis",), [0, 0, 0], r"bodies\[1\]\.motion\.root\.axis: zero vector"),
    (ROOT + ("period",), 0, r"bodies\[1\]\.motion\.root\.period: must be positive"),
    (ROOT + ("period",), -1.0, r"bodies\[1\]\.motion\.root\.period: must be positive"),
    (ROOT + ("approach",), [1.0, 1.06, 0], r"bodies\[1\]\.motion\.root\.approach\[2\]: the approach time"),
    (ROOT + ("axis",), [0, math.nan, 1], r"bodies\[1\]\.motion\.root\.axis\[1\]: not a finite number"),
    (ROOT + ("amplitude",), math.inf, r"bodies\[1\]\.motion\.root\.amplitude: not a finite number"),
    (ROOT + ("amplitude",), 1e200, r"bodies\[1\]\.motion\.root\.amplitude: 1e\+200 is out of range"),
    (JOINTS + ("period",), 0, r"bodies\[0\]\.motion\.joints\.period: must be positive"),
    (JOINTS + ("wavelength",), 0, r"bodies\[0\]\.motion\.joints\.wavelength: must be non-zero"),
    (JOINTS + ("ramp",), -2, r"bodies\[0\]\.motion\.joints\.ramp: must be >= 0"),
    (("bodies", 0, "link", "args", "n_around"), 0, r"bodies\[0\]\.link\.args: capsule_link\(n_around=...\)"),
    (("bodies", 0, "link", "scale"), 1e200, r"bodies\[0\]\.link\.scale: 1e\+200 is out of range"),
    (("bodies", 0, "link", "args", "length"), 1e-300, None),  # a degenerate link is valid: it runs
    (("bodies", 0, "limits_deg"), [60, -60], r"bodies\[0\]\.limits_deg: expected \[lower, upper\]"),
    (("frames",), 0, r"chains-6to1\.json\.frames: expected an integer"),
    (("frames",), 2**40, r"chains-6to1\.json\.frames: 1099511627776 is out of range"),
])
def test_bad_numbers_name_the_json_path(path, value, message):
    # the chains' oscillating root lives in the braided scene (the others pass by a script)
    name = "chains-braided" if path[:len(ROOT)] == ROOT else "chains-6to1"
    spec = _set(_spec(name), path, value)
    if message is None:
        sc = scene_from_spec({**spec, "frames": 5}, f"{name}.json")
        SceneRunner(sc).step(4)
        return
    with pytest.raises(SceneError, match=rf"^{name}\.json\." + message.split("chains-6to1\\.json\\.")[-1]):
        scene_from_spec(spec, f"{name}.json")


def test_keyframe_times_must_increase():
    spec = _spec("proximity-parallel")
    keys = spec["bodies"][1]["motion"]["root"]["keys"]
    bad = _set(spec, ("bodies", 1, "motion", "root", "keys"), [keys[0], keys[0]])
    with pytest.raises(SceneError, match=r"motion\.root\.keys\[\*\]\[0\]: times must be strictly increasing"):
        scene_from_spec(bad, "p.json")


def test_deform_period_zero_is_rejected():
    spec = _set(_spec("deform-wave"), ("bodies", 0, "deform", "period"), 0)
    with pytest.raises(SceneError, match=r"bodies\[0\]\.deform\.period: must be positive"):
        scene_from_spec(spec, "d.json")


def test_hand_script_cycle_zero_is_rejected():
    spec = _set(_spec("hand-ball"), ("script", "cycle"), 0)
    with pytest.raises(SceneError, match=r"script\.cycle: must be positive"):
        scene_from_spec(spec, "h.json")


def test_ten_million_frames_open_lazily_with_bounded_cache():
    sc = load_scene("chains-6to1", frames=10_000_000)
    assert sc.frames == 10_000_000
    lp = sc.bodies[1].link_poses
    assert lp.shape == (10_000_000, 8, 4, 4)  # chain B: 8 links (16 in the scene, CAB section 4)
    runner = SceneRunner(sc)
    for f in (0, 5_000_000, 9_999_999, 1234, 8_888_888, 42, 7_777_777):
        runner.step(f)
        assert len(lp._cache) <= frames_mod.CACHED
    # the same numbers as evaluating the motion at that time directly
    f = 9_999_999
    direct = lp.compute([f])[0]
    assert np.array_equal(lp[f], direct)
    with pytest.raises(MemoryError, match="frames"):
        np.asarray(lp)  # materialising 10M frames is refused, not attempted


def test_lazy_poses_equal_eager_evaluation_across_chunks():
    """Chunked, cached, out-of-order access gives the numbers of one whole-scene evaluation
    (random motion: the generator is jumped, not re-seeded, per chunk)."""
    sc = rigid_scene(shapes.torus(1.0, 0.3, 12, 6), shapes.icosphere(0.5, 1), frames=3 * frames_mod.CHUNK + 17)
    lp = sc.bodies[1].link_poses
    whole = lp.compute(np.arange(sc.frames))
    order = np.random.default_rng(0).permutation(sc.frames)
    for f in order[:200]:
        assert np.array_equal(lp[int(f)], whole[f])
    assert np.array_equal(lp[10:600:7, 0], whole[10:600:7, 0])
    # the draw order of one eager rng.random((3, F)), rng.random((F, 3)) is kept
    rng = np.random.default_rng(0)
    R = random_rotations(sc.frames, rng)
    t = (rng.random((sc.frames, 3)) - 0.5) * 2.0  # rigid_scene's cube_size
    assert np.array_equal(whole[:, 0, :3, :3], R) and np.array_equal(whole[:, 0, :3, 3], t)


def test_non_finite_motion_output_is_caught_when_computed():
    sc = load_scene("chains-3to1", frames=10)
    lp = sc.bodies[0].link_poses
    bad = lp.with_motion(q_fn=lambda f, t: np.full((len(t), sc.bodies[0].body.n_dofs), np.nan))
    with pytest.raises(SceneError, match=r"bodies\[0\]\.motion: the motion gives non-finite poses at frame \d"):
        bad[3]


def test_lazy_pose_indexing_matches_numpy_semantics():
    sc = load_scene("chains-3to1", frames=700)
    lp = sc.bodies[1].link_poses
    whole = np.asarray(lp)
    for key in (5, -1, np.int64(3), slice(None, None, 97), slice(650, 10, -60), np.array([0, 699, -2, 256]),
                (slice(0, 600, 50), 3), (np.array([1, 2]), 0, 2), (Ellipsis, 0, 3), whole[:, 0, 0, 0] > 0):
        assert np.array_equal(lp[key], whole[key]), key
    for bad in (700, -701, np.array([700])):
        with pytest.raises(IndexError):
            lp[bad]
    with pytest.raises(IndexError):
        lp[np.array([0.5])]
