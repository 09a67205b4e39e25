"""Poses read at scattered frames (what ``app.model.framing.scene_bounds`` samples): a random
root path read at any set of frames gives the numbers of the whole motion's array at those
frames (it draws the span holding them, or frame by frame), and the bounds of a scene over its
motion equal a plain reference over every link's box corners."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.model.framing import scene_bounds
from cdcore.scenes import load_scene
from cdcore.scenes.motion import SPAN_PER_FRAME, root_motion_fn

N = 600
FN = root_motion_fn({"type": "random", "cube_size": 2.0, "seed": 7}, np.eye(4), N, "test")
WHOLE = FN(np.arange(N), np.arange(N) / 30.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, N - 1), min_size=1, max_size=12))
def test_a_random_root_path_at_scattered_frames_is_the_whole_motion_there(frames):
    f = np.array(frames, dtype=np.int64)
    assert np.array_equal(FN(f, f / 30.0), WHOLE[f])


def test_frames_too_far_apart_for_one_span_are_drawn_one_by_one_and_agree():
    n = SPAN_PER_FRAME * 2 + 10
    fn = root_motion_fn({"type": "random", "cube_size": 2.0, "seed": 7}, np.eye(4), n, "test")
    f = np.array([n - 1, 0], dtype=np.int64)  # a span longer than SPAN_PER_FRAME per frame asked
    whole = fn(np.arange(n), np.zeros(n))
    assert np.array_equal(fn(f, np.zeros(2)), whole[f])


def _reference_bounds(scene, frames, pad=0.03):
    pts = []
    for sb in scene.bodies:
        poses = np.asarray(sb.link_poses)  # the whole motion
        for li, link in enumerate(sb.body.links):
            v = np.asarray(link.mesh.vertices)
            lo, hi = v.min(axis=0), v.max(axis=0)
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            for f in frames:
                p = poses[f, li]
                pts.append(corners @ p[:3, :3].T + p[:3, 3])
    p = np.concatenate(pts)
    lo, hi = p.min(axis=0), p.max(axis=0)
    g = pad * max((hi - lo).max(), 1e-9)
    return np.column_stack([lo - g, hi + g]).ravel()


def test_scene_bounds_match_a_reference_on_a_robot_and_a_random_scene():
    for name in ("hand-ball", "rigid-torus"):
        sc = load_scene(name)
        frames = np.unique(np.linspace(0, sc.frames - 1, min(sc.frames, 64)).round().astype(int))
        assert np.allclose(scene_bounds(sc), _reference_bounds(sc, frames), rtol=0, atol=1e-12), name
        assert np.allclose(scene_bounds(sc, frames=[3]), _reference_bounds(sc, [3]), rtol=0, atol=1e-12), name
