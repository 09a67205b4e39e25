"""Deterministic, smooth motions for scene bodies: joint trajectories and root paths.

Every motion is a pure function of time, so a scene is reproducible frame by frame and
can be scrubbed backwards in the app.
"""
from __future__ import annotations

import numpy as np

from ..transforms import make_pose, rotations_from_uniform
from .builders import euler_deg
from .spec import SceneError, get, key_times, numeric_array, positive, vec


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
    """Joint angles (F, n_dofs) in radians at times ``t`` (see ``joint_motion_fn``)."""
    t = np.asarray(t, float)
    return joint_motion_fn(spec, n_dofs, where)(np.arange(len(t)), t)


def joint_motion_fn(spec: dict | None, n_dofs: int, where: str):
    """The joint trajectory as ``fn(frames, t) -> (n, n_dofs)`` radians, its parameters
    validated now (a scene is checked at load time; its frames are computed lazily).

    ``{"type": "wave", "amplitude_deg", "period", "wavelength", "phase_deg", "offset_deg",
    "ramp"}``: a travelling wave q_i = offset + a(t) sin(2 pi (t / period - i / wavelength)
    + phase) whose amplitude ramps in over ``ramp`` seconds (the chain starts straight).
    ``{"type": "keyframes", "times": [...], "q_deg": [[...], ...]}`` (rows of n_dofs).
    ``{"type": "static"}`` or absent: zeros.
    """
    if spec is None:
        return lambda f, t: np.zeros((len(t), n_dofs))
    if not isinstance(spec, dict):
        raise SceneError(f"{where}: expected an object with a 'type'")
    kind = get(spec, "type", where, str)
    if kind == "static":
        return lambda f, t: np.zeros((len(t), n_dofs))
    if kind == "wave":
        amp = np.radians(get(spec, "amplitude_deg", where, (int, float)))
        period = positive(spec, "period", where)
        wl = get(spec, "wavelength", where, (int, float), 8.0)
        phase = np.radians(get(spec, "phase_deg", where, (int, float), 0.0))
        offset = np.radians(get(spec, "offset_deg", where, (int, float), 0.0))
        ramp = get(spec, "ramp", where, (int, float), 0.0)
        if wl == 0:
            raise SceneError(f"{where}.wavelength: must be non-zero")
        if ramp < 0:
            raise SceneError(f"{where}.ramp: must be >= 0, got {ramp!r}")
        move_root = get(spec, "move_root_joint", where, bool, False)
        i = np.arange(n_dofs)[None, :]

        def wave(f, t):
            a = amp * (smoothstep(t / ramp) if ramp > 0 else np.ones_like(t))[:, None]
            q = offset + a * np.sin(2 * np.pi * (t[:, None] / period - i / wl) + phase)
            if not move_root:
                q[:, 0] = 0.0
            return q
        return wave
    if kind == "keyframes":
        times = key_times(get(spec, "times", where, list), f"{where}.times")
        q = np.radians(numeric_array(get(spec, "q_deg", where, list), f"{where}.q_deg"))
        if q.ndim != 2 or q.shape != (len(times), n_dofs):
            raise SceneError(f"{where}.q_deg: expected {len(times)} rows of {n_dofs} angles")
        return lambda f, t: keyframes(times, q, t)
    raise SceneError(f"{where}.type: expected wave, keyframes or static, got {kind!r}")


def root_motion(spec: dict | None, base: np.ndarray, t: np.ndarray, where: str, rng=None) -> np.ndarray:
    """Root poses (F, 4, 4) at times ``t`` (frames 0..F-1; see ``root_motion_fn``)."""
    t = np.asarray(t, float)
    return root_motion_fn(spec, base, len(t), where)(np.arange(len(t)), t)


def root_motion_fn(spec: dict | None, base: np.ndarray, n_frames: int, where: str):
    """The root path as ``fn(frames, t) -> (n, 4, 4)`` for a scene of ``n_frames`` frames,
    its parameters validated now.

    ``{"type": "path", "keys": [[t, x, y, z, rx, ry, rz], ...]}``: keyframed translation
    and XYZ Euler angles (degrees), composed after the body's base pose;
    ``{"type": "oscillate", "axis": [..], "amplitude", "period", "approach": [from, to, seconds]}``:
    translation approaching along ``axis`` then oscillating about the end point;
    ``{"type": "random", "cube_size": s, "seed": k}``: an independent uniformly random
    rotation (Shoemake) and a position uniform in a cube per frame (van den Bergen §5);
    absent: the base pose at every frame.
    """
    F = int(n_frames)
    base = np.array(base, float)

    def still(f, t):
        return np.broadcast_to(base, (len(t), 4, 4)).copy()
    if spec is None:
        return still
    if not isinstance(spec, dict):
        raise SceneError(f"{where}: expected an object with a 'type'")
    kind = get(spec, "type", where, str)
    if kind == "path":
        keys = numeric_array(get(spec, "keys", where, list), f"{where}.keys")
        if keys.ndim != 2 or keys.shape[1] != 7 or len(keys) < 1:
            raise SceneError(f"{where}.keys: expected rows [t, x, y, z, rx, ry, rz]")
        key_times(keys[:, 0].tolist(), f"{where}.keys[*][0]")

        def path(f, t):
            vals = keyframes(keys[:, 0], keys[:, 1:], t)
            out = np.empty((len(t), 4, 4))
            for k in range(len(t)):
                out[k] = base @ make_pose(euler_deg(*vals[k, 3:]), vals[k, :3])
            return out
        return path
    if kind == "oscillate":
        axis = vec(spec, "axis", where)
        norm = float(np.linalg.norm(axis))
        if not norm > 0:
            raise SceneError(f"{where}.axis: zero vector")
        axis = axis / norm
        amp = get(spec, "amplitude", where, (int, float), 0.0)
        period = positive(spec, "period", where, 1.0)
        a0, a1, secs = vec(spec, "approach", where, 3, [0.0, 0.0, 1.0])
        if not secs > 0:
            raise SceneError(f"{where}.approach[2]: the approach time must be positive, got {secs!r}")

        def oscillate(f, t):
            out = still(f, t)
            s = smoothstep(t / secs)
            d = a0 + (a1 - a0) * s + amp * s * np.sin(2 * np.pi * t / period)
            out[:, :3, 3] += d[:, None] * axis[None, :]
            return out
        return oscillate
    if kind == "random":
        cube = get(spec, "cube_size", where, (int, float))
        if not cube >= 0:
            raise SceneError(f"{where}.cube_size: must be >= 0, got {cube!r}")
        seed = get(spec, "seed", where, int, 0)
        if seed < 0:
            raise SceneError(f"{where}.seed: must be >= 0, got {seed!r}")

        def random(f, t):
            # The same numbers as one draw of rng.random((3, F)) then rng.random((F, 3)) for
            # the whole scene, read at frames f0..f1 by jumping the generator: any frame
            # range in O(its length), identical whatever the chunking.
            f = np.asarray(f, np.int64)
            f0, n = (int(f[0]), len(f)) if len(f) else (0, 0)
            if n and not np.array_equal(f, np.arange(f0, f0 + n)):
                lo, hi = int(f.min()), int(f.max())
                if hi - lo < SPAN_PER_FRAME * n:  # scattered frames (a sample of the motion)
                    span = np.arange(lo, hi + 1, dtype=np.int64)
                    return random(span, span * 0.0)[f - lo]
                return np.concatenate([random(f[k:k + 1], t[k:k + 1]) for k in range(n)])
            u = np.stack([_draws(seed, k * F + f0, (n,)) for k in range(3)])
            out = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
            out[:, :3, :3] = rotations_from_uniform(u)
            out[:, :3, 3] = (_draws(seed, 3 * F + 3 * f0, (n, 3)) - 0.5) * cube
            return base[None] @ out
        return random
    raise SceneError(f"{where}.type: expected path, oscillate or random, got {kind!r}")


# a random root path read at scattered frames draws the contiguous span holding them when it is
# shorter than this many frames per frame asked for: a frame on its own costs four generators
# (~0.6 ms), one frame of a span ~1.3 us (64 frames spread over 2,000: 40 -> 3 ms)
SPAN_PER_FRAME = 256


def _draws(seed: int, skip: int, shape) -> np.ndarray:
    """``rng.random(shape)`` of ``default_rng(seed)`` after ``skip`` doubles (one 64-bit
    draw each)."""
    bg = np.random.PCG64(seed)
    bg.advance(skip)
    return np.random.Generator(bg).random(shape)
