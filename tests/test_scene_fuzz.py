"""Fuzzing the shipped scene files: one mutation (wrong type, sign, zero, NaN, inf, huge,
tiny, missing key) anywhere in the JSON either gives a SceneError naming the file and the
JSON path, or a scene that runs with contacts equal to brute force on every link pair."""
import copy
import json
import math
import os
import random

import numpy as np
import pytest

from cdcore.scenes import SCENE_DIR, SceneError, SceneRunner, list_scenes
from cdcore.scenes.runner import contact_pairs
from cdcore.scenes.scene import scene_from_spec

SCENES = {n: json.load(open(os.path.join(SCENE_DIR, f"{n}.json"))) for n in list_scenes()}
# scenes cheap enough to check against brute force a few frames at a time
FUZZED = [n for n in SCENES if not n.endswith("20k")]


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            if k not in ("description", "title", "paper"):
                yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for k, v in enumerate(node):
            yield from _paths(v, path + (k,))


def _mutate(spec, rng: random.Random):
    spec = copy.deepcopy(spec)
    path = rng.choice([p for p in _paths(spec) if p])
    parent = spec
    for k in path[:-1]:
        parent = parent[k]
    key, old = path[-1], parent[path[-1]]
    kind = rng.choice(["type", "sign", "zero", "nan", "inf", "huge", "tiny", "missing", "scale"])
    if kind == "missing" and isinstance(parent, dict):
        del parent[key]
    elif kind == "type":
        parent[key] = rng.choice(["x", None, [], {}, True, [1, 2], 1.5])
    elif kind == "sign" and isinstance(old, (int, float)) and not isinstance(old, bool):
        parent[key] = -old
    elif kind == "scale" and isinstance(old, (int, float)) and not isinstance(old, bool):
        parent[key] = old * rng.choice([3, 0.01, 100])
    else:
        parent[key] = {"zero": 0, "nan": math.nan, "inf": -math.inf, "huge": 1e200, "tiny": 1e-300,
                       "sign": 0, "scale": 0, "missing": None}[kind]
    return spec, f"{path} {kind}"


def _check_run(spec, name):
    f = spec.get("frames")
    if isinstance(f, int) and not isinstance(f, bool) and f > 60:
        spec = {**spec, "frames": 60}  # keep the run short; other values are the mutation's
    sc = scene_from_spec(spec, f"{name}.json", SCENE_DIR)
    runner = SceneRunner(sc, "cab")
    for f in sorted({0, sc.frames // 2, sc.frames - 1}):
        for sb in sc.bodies:
            assert np.all(np.isfinite(sb.link_poses[f]))
        assert contact_pairs(runner.step(f)) == contact_pairs(runner.brute(f)), f


@pytest.mark.parametrize("seed", range(120))
def test_mutated_scene_errors_name_the_path_or_runs_match_brute_force(seed):
    rng = random.Random(seed)
    name = FUZZED[seed % len(FUZZED)]
    spec, what = _mutate(SCENES[name], rng)
    try:
        _check_run(spec, name)
    except SceneError as exc:
        msg = str(exc)
        # "<file>.json.bodies[1].motion.root.axis: zero vector" and the like
        assert msg.startswith(f"{name}.json"), (what, msg)
        assert ":" in msg, (what, msg)


@pytest.mark.parametrize("name", FUZZED)
def test_unmutated_scenes_match_brute_force(name):
    _check_run(SCENES[name], name)
