"""Deterministic, smooth motions for scene bodies: joint trajectories and root paths.

Every motion is a pure function of time, so a scene is reproducible frame by frame and
can be scrubbed backwards in the app.
"""
from __future__ import annotations

import numpy as np

from ..transforms import make_pose, random_rotations
from .builders import euler_deg
from .spec import SceneError, get


def smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def keyframes(times, values, t):
    """Piecewise smoothstep interpolation of ``values`` (K, D) at keys ``times`` (K,)
    sampled at ``t`` (F,) -> (F, D); constant outside the keys. Zero velocity at every
    key: a scripted animation, smooth and without overshoot."""
    times = np.asarray(times, float)
    values = np.asarray(values, float)
    idx = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(times) - 1)
    nxt = np.minimum(idx + 1, len(times) - 1)
    span = np.where(nxt > idx, times[nxt] - times[idx], 1.0)
    u = smoothstep((t - times[idx]) / span)[:, None]
    return values[idx] * (1 - u) + values[nxt] * u


def joint_motion(spec: dict | None, n_dofs: int, t: np.ndarray, where: str) -> np.ndarray:
    """Joint angles (F, n_dofs) in radians.

    ``{"type": "wave", "amplitude_deg", "period", "wavelength", "phase_deg", "offset_deg",
    "ramp"}``: a travelling wave q_i = offset + a(t) sin(2 pi (t / period - i / wavelength)
    + phase) whose amplitude ramps in over ``ramp`` seconds (the chain starts straight).
    ``{"type": "keyframes", "times": [...], "q_deg": [[...], ...]}`` (rows of n_dofs).
    ``{"type": "static"}`` or absent: zeros.
    """
    F = len(t)
    if spec is None:
        return np.zeros((F, n_dofs))
    kind = get(spec, "type", where, str)
    if kind == "static":
        return np.zeros((F, n_dofs))
    if kind == "wave":
        amp = np.radians(get(spec, "amplitude_deg", where, (int, float)))
        period = get(spec, "period", where, (int, float))
        wl = get(spec, "wavelength", where, (int, float), 8.0)
        phase = np.radians(get(spec, "phase_deg", where, (int, float), 0.0))
        offset = np.radians(get(spec, "offset_deg", where, (int, float), 0.0))
        ramp = get(spec, "ramp", where, (int, float), 0.0)
        if period <= 0 or wl == 0:
            raise SceneError(f"{where}: period must be > 0 and wavelength non-zero")
        i = np.arange(n_dofs)[None, :]
        a = amp * (smoothstep(t / ramp) if ramp > 0 else np.ones_like(t))[:, None]
        q = offset + a * np.sin(2 * np.pi * (t[:, None] / period - i / wl) + phase)
        q[:, 0] = 0.0 if not spec.get("move_root_joint", False) else q[:, 0]
        return q
    if kind == "keyframes":
        times = get(spec, "times", where, list)
        q = np.radians(np.asarray(get(spec, "q_deg", where, list), float))
        if q.ndim != 2 or q.shape != (len(times), n_dofs):
            raise SceneError(f"{where}.q_deg: expected {len(times)} rows of {n_dofs} angles")
        return keyframes(times, q, t)
    raise SceneError(f"{where}.type: expected wave, keyframes or static, got {kind!r}")


def root_motion(spec: dict | None, base: np.ndarray, t: np.ndarray, where: str, rng=None) -> np.ndarray:
    """Root poses (F, 4, 4).

    ``{"type": "path", "keys": [[t, x, y, z, rx, ry, rz], ...]}``: keyframed translation
    and XYZ Euler angles (degrees), composed after the body's base pose;
    ``{"type": "oscillate", "axis": [..], "amplitude", "period", "approach": [from, to, seconds]}``:
    translation approaching along ``axis`` then oscillating about the end point;
    ``{"type": "random", "cube_size": s, "seed": k}``: an independent uniformly random
    rotation (Shoemake) and a position uniform in a cube per frame (van den Bergen §5);
    absent: the base pose at every frame.
    """
    F = len(t)
    out = np.broadcast_to(base, (F, 4, 4)).copy()
    if spec is None:
        return out
    kind = get(spec, "type", where, str)
    if kind == "path":
        keys = np.asarray(get(spec, "keys", where, list), float)
        if keys.ndim != 2 or keys.shape[1] != 7 or len(keys) < 1:
            raise SceneError(f"{where}.keys: expected rows [t, x, y, z, rx, ry, rz]")
        vals = keyframes(keys[:, 0], keys[:, 1:], t)
        for f in range(F):
            out[f] = base @ make_pose(euler_deg(*vals[f, 3:]), vals[f, :3])
        return out
    if kind == "oscillate":
        axis = np.asarray(get(spec, "axis", where, list), float)
        axis = axis / np.linalg.norm(axis)
        amp = get(spec, "amplitude", where, (int, float), 0.0)
        period = get(spec, "period", where, (int, float), 1.0)
        a0, a1, secs = get(spec, "approach", where, list, [0.0, 0.0, 1.0])
        d = a0 + (a1 - a0) * smoothstep(t / secs) + amp * smoothstep(t / secs) * np.sin(2 * np.pi * t / period)
        out[:, :3, 3] += d[:, None] * axis[None, :]
        return out
    if kind == "random":
        cube = get(spec, "cube_size", where, (int, float))
        seed = get(spec, "seed", where, int, 0)
        rng = np.random.default_rng(seed)
        out[:] = np.eye(4)
        out[:, :3, :3] = random_rotations(F, rng)
        out[:, :3, 3] = (rng.random((F, 3)) - 0.5) * cube
        return base[None] @ out
    raise SceneError(f"{where}.type: expected path, oscillate or random, got {kind!r}")
