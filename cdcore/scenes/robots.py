"""Robot bodies in scenes: a URDF (with package directories) or an MJCF model (``"type":
"mjcf"``, ``"mjcf": path``, ``"meshes": "exact" | "hull"``), its joint motion (a trajectory
file, a seeded random trajectory or a grasp) and whether the scene's data is present.

Scene fields of a ``{"type": "urdf"}`` body::

    "urdf": "robots:example-robot-data/.../robot.urdf"   (or a path relative to the scene)
    "package_dirs": ["robots:"],  "geometry": "collision",  "srdf": "robots:...srdf"
    "motion": {"joints": {"type": "trajectory", "file": "traj.csv"}
                       | {"type": "random", "seed": 0, "keys_per_second": 0.5}
                       | {"type": "grasp", "cycles": 1, "amount": 0.8}}

``robots:`` stands for the shared robots directory (``CDCORE_ROBOTS_DIR``, see
``cdcore.articulated.shared_robots``); scenes whose files are absent are not listed.
"""
from __future__ import annotations

import json
import os

import numpy as np

from .spec import SceneError, get

ROBOTS_PREFIX = "robots:"


def resolve_path(p: str, base_dir: str | None) -> str:
    from ..articulated.shared_robots import robots_dir
    if p.startswith(ROBOTS_PREFIX):
        return os.path.join(robots_dir(), p[len(ROBOTS_PREFIX):])
    if base_dir and not os.path.isabs(p):
        return os.path.join(base_dir, p)
    return p


def build_mjcf_body(spec: dict, where: str, base_dir: str | None, mesh_bv: str):
    """A ``{"type": "mjcf", "mjcf": "robots:mjcf/.../scene.xml", "meshes": "exact" | "hull"}``
    body (``cdcore.articulated.load_mjcf``; planes and height fields are left out)."""
    import warnings

    from ..articulated.mjcf import MESH_MODES, load_mjcf
    path = resolve_path(get(spec, "mjcf", where, str), base_dir)
    meshes = get(spec, "meshes", where, str, "exact")
    if meshes not in MESH_MODES:
        raise SceneError(f"{where}.meshes: expected one of {MESH_MODES}, got {meshes!r}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the floor plane a scene file carries
            body = load_mjcf(path, meshes=meshes, mesh_bv=mesh_bv)
    except (OSError, ValueError, ImportError) as exc:
        raise SceneError(f"{where}: {exc}") from None
    if "name" in spec:
        body.name = get(spec, "name", where, str)
    return body


def build_robot_body(spec: dict, where: str, base_dir: str | None, mesh_bv: str):
    from ..articulated.selfcollision import read_srdf_disabled
    from ..articulated.urdf import load_urdf
    if spec.get("type") == "mjcf":
        return build_mjcf_body(spec, where, base_dir, mesh_bv)
    urdf = resolve_path(get(spec, "urdf", where, str), base_dir)
    dirs = get(spec, "package_dirs", where, list, [])
    if not all(isinstance(d, str) for d in dirs):
        raise SceneError(f"{where}.package_dirs: expected a list of directory names")
    dirs = [resolve_path(d, base_dir) for d in dirs]
    geometry = get(spec, "geometry", where, str, "collision")
    srdf = get(spec, "srdf", where, str, None)
    try:
        body = load_urdf(urdf, dirs, geometry=geometry, mesh_bv=mesh_bv)
        body.disabled_pairs = read_srdf_disabled(resolve_path(srdf, base_dir)) if srdf else []
    except (OSError, ValueError) as exc:
        raise SceneError(f"{where}: {exc}") from None
    if "name" in spec:
        body.name = get(spec, "name", where, str)
    return body


def robot_joint_motion(body, spec: dict | None, t: np.ndarray, where: str, base_dir: str | None) -> np.ndarray:
    """Joint values (F, n_dofs) of a robot body at times ``t``."""
    from ..articulated.trajectory import (
        grasp_trajectory,
        load_trajectory,
        random_trajectory,
    )
    from .motion import joint_motion
    F = len(t)
    if spec is None:
        return random_trajectory(body, F, 0)
    if not isinstance(spec, dict):
        raise SceneError(f"{where}: expected an object with a 'type'")
    kind = get(spec, "type", where, str)
    if kind == "random":
        seed = get(spec, "seed", where, int, 0)
        if seed < 0:
            raise SceneError(f"{where}.seed: must be >= 0, got {seed!r}")
        rate = float(get(spec, "keys_per_second", where, (int, float), 0.5))
        if not 0 < rate < 1e6:
            raise SceneError(f"{where}.keys_per_second: must be positive, got {rate!r}")
        duration = float(t[-1] - t[0]) if F > 1 else 0.0
        return random_trajectory(body, F, seed, n_keys=max(2, int(duration * rate) + 2))
    if kind == "grasp":
        cycles = float(get(spec, "cycles", where, (int, float), 1.0))
        amount = float(get(spec, "amount", where, (int, float), 0.8))
        if not 0 < cycles < 1e6:
            raise SceneError(f"{where}.cycles: must be positive, got {cycles!r}")
        if not 0 <= amount <= 1:
            raise SceneError(f"{where}.amount: expected 0..1, got {amount!r}")
        return grasp_trajectory(body, F, cycles, amount)
    if kind == "trajectory":
        path = resolve_path(get(spec, "file", where, str), base_dir)
        try:
            tr = load_trajectory(path, body)
        except (OSError, ValueError) as exc:
            raise SceneError(f"{where}.file: {exc}") from None
        if tr.times is not None:  # resample on the scene's clock, holding the ends
            rel = t - t[0] + tr.times[0]
            return np.stack([np.interp(rel, tr.times, tr.q[:, j]) for j in range(body.n_dofs)], axis=1)
        return tr.q[np.arange(F) % tr.frames]  # frame by frame, looping
    return joint_motion(spec, body.n_dofs, t, where)


def scene_available(path: str) -> bool:
    """False when the scene references URDF files that are absent (e.g. the shared robots)."""
    try:
        with open(path, encoding="utf-8") as fh:
            spec = json.load(fh)
    except (OSError, ValueError):
        return True  # unreadable scenes are listed; loading them reports the problem
    base = os.path.dirname(os.path.abspath(path))
    for b in spec.get("bodies", []) if isinstance(spec, dict) else []:
        key = b.get("type") if isinstance(b, dict) else None
        if key in ("urdf", "mjcf") and isinstance(b.get(key), str):
            if not os.path.isfile(resolve_path(b[key], base)):
                return False
    return True
