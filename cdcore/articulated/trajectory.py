"""Joint trajectories for robots: files users bring (CSV, NPZ), and generated motion (a
smooth seeded random walk within the limits, a grasp that closes a hand)."""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass

import numpy as np

TIME_COLUMN = "time"


@dataclass
class Trajectory:
    """``q`` (F, n_dofs) float64 indexed like ``body.joint_names``; ``times`` (F,) seconds
    or None (then frames are ``dt`` apart); ``columns``: the joint names the file gave."""
    q: np.ndarray
    times: np.ndarray | None
    columns: list

    @property
    def frames(self) -> int:
        return len(self.q)


def _joint_names(body) -> list:
    names = getattr(body, "joint_names", None)
    return list(names) if names is not None else [f"joint{i}" for i in range(body.n_dofs)]


def _assemble(body, columns, values, where) -> np.ndarray:
    names = _joint_names(body)
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise ValueError(f"{where}: unknown joints {unknown}; the robot's movable joints are {names}")
    dup = sorted({c for c in columns if columns.count(c) > 1})
    if dup:
        raise ValueError(f"{where}: joints given twice: {dup}")
    q = np.zeros((values.shape[0], len(names)))
    for k, c in enumerate(columns):
        q[:, names.index(c)] = values[:, k]
    return q


def load_trajectory(path, body) -> Trajectory:
    """Read a trajectory for ``body``.

    CSV: a header of joint names (radians / metres), an optional ``time`` column (seconds,
    increasing), one row per frame. NPZ: ``q`` (F, n) and ``joint_names`` (n,), optional
    ``times`` (F,). Joints the file leaves out stay 0; unknown names, non-numeric or
    non-finite values, ragged rows and empty files raise ``ValueError`` naming the file and
    the problem; a missing file ``FileNotFoundError``.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"trajectory file not found: {path}")
    where = os.path.basename(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npz":
        try:
            with np.load(path, allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        except Exception as exc:
            raise ValueError(f"{where}: not a readable .npz ({type(exc).__name__}: {exc})") from None
        for key in ("q", "joint_names"):
            if key not in data:
                raise ValueError(f"{where}: missing array {key!r} (has {sorted(data)})")
        values = data["q"]
        columns = [str(c) for c in np.atleast_1d(data["joint_names"]).tolist()]
        if values.dtype.kind not in "fiu":
            raise TypeError(f"{where}: q must be real numbers, got dtype {values.dtype}")
        if values.ndim != 2 or values.shape[1] != len(columns):
            raise ValueError(f"{where}: q must be (frames, {len(columns)}) for {len(columns)} joint_names, "
                             f"got {values.shape}")
        times = data.get("times")
    elif ext == ".csv":
        try:
            with open(path, newline="", encoding="utf-8") as fh:
                rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise ValueError(f"{where}: not a readable CSV ({exc})") from None
        if not rows:
            raise ValueError(f"{where}: empty file (expected a header of joint names)")
        header = [c.strip() for c in rows[0]]
        body_rows = rows[1:]
        for k, r in enumerate(body_rows):
            if len(r) != len(header):
                raise ValueError(f"{where}: row {k + 2} has {len(r)} values, the header {len(header)}")
        try:
            table = np.array([[float(c) for c in r] for r in body_rows], dtype=np.float64).reshape(-1, len(header))
        except ValueError as exc:
            raise ValueError(f"{where}: non-numeric value ({exc})") from None
        times = None
        if TIME_COLUMN in header:
            ti = header.index(TIME_COLUMN)
            times = table[:, ti]
            table = np.delete(table, ti, axis=1)
            header.pop(ti)
        values, columns = table, header
    else:
        raise ValueError(f"{where}: unknown trajectory format {ext!r}; use .csv or .npz")
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        raise ValueError(f"{where}: no frames")
    if not np.all(np.isfinite(values)):
        r = int(np.argwhere(~np.isfinite(values))[0, 0])
        raise ValueError(f"{where}: NaN or infinite joint value (frame {r})")
    q = _assemble(body, columns, values, where)
    if times is not None:
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        if times.shape != (len(q),) or not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
            raise ValueError(f"{where}: times must be {len(q)} finite, strictly increasing seconds")
    return Trajectory(q, times, columns)


def save_trajectory(path, body, q, times=None) -> None:
    """Write ``q`` (F, n_dofs) as CSV (header of joint names, optional ``time``) or NPZ."""
    path = os.fspath(path)
    q = np.asarray(q, dtype=np.float64)
    names = _joint_names(body)
    if q.ndim != 2 or q.shape[1] != len(names):
        raise ValueError(f"q: expected shape (frames, {len(names)}), got {q.shape}")
    if path.lower().endswith(".npz"):
        extra = {} if times is None else {"times": np.asarray(times, float)}
        np.savez(path, q=q, joint_names=np.array(names), **extra)
        return
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(([TIME_COLUMN] if times is not None else []) + names)
        for k, row in enumerate(q):
            w.writerow(([repr(float(times[k]))] if times is not None else []) + [repr(float(x)) for x in row])


def sampling_limits(body) -> np.ndarray:
    """(n_dofs, 2) finite ranges to sample in (continuous joints: [-pi, pi])."""
    lim = np.array(body.limits, dtype=np.float64).reshape(-1, 2)
    return np.clip(lim, -np.pi, np.pi) if not np.all(np.isfinite(lim)) else lim


def random_trajectory(body, frames: int, seed: int = 0, n_keys: int | None = None, margin: float = 0.05) -> np.ndarray:
    """A smooth random motion (frames, n_dofs): seeded keyframes uniform within the limits
    (shrunk by ``margin`` of the range), joined by C1 cosine blends, so every frame stays
    within the limits and the velocity is zero at each keyframe."""
    frames = int(frames)
    if frames < 1:
        raise ValueError(f"frames: expected a positive integer, got {frames}")
    lim = sampling_limits(body)
    lo = lim[:, 0] + margin * (lim[:, 1] - lim[:, 0])
    hi = lim[:, 1] - margin * (lim[:, 1] - lim[:, 0])
    rng = np.random.default_rng(seed)
    n_keys = max(2, n_keys or frames // 60 + 2)
    keys = rng.uniform(lo, hi, size=(n_keys, len(lo)))
    keys[0] = np.clip(0.0, lo, hi)  # start at rest (or the nearest allowed value)
    s = np.linspace(0.0, n_keys - 1, frames)
    k = np.minimum(s.astype(int), n_keys - 2)
    u = (1.0 - np.cos(np.pi * (s - k))) / 2.0
    return keys[k] + (keys[k + 1] - keys[k]) * u[:, None]


def grasp_pose(body, amount: float = 0.8) -> np.ndarray:
    """The "closed" configuration of a hand: every flexion joint (limits reaching further
    one way) ``amount`` of the way to its far limit; near-symmetric joints (abduction,
    spread) stay at rest."""
    lim = sampling_limits(body)
    lo, hi = lim[:, 0], lim[:, 1]
    rest = np.clip(0.0, lo, hi)
    closed = rest.copy()
    flex_up = hi > 1.5 * np.abs(lo)
    flex_down = np.abs(lo) > 1.5 * np.abs(hi)
    closed[flex_up] = rest[flex_up] + amount * (hi[flex_up] - rest[flex_up])
    closed[flex_down] = rest[flex_down] + amount * (lo[flex_down] - rest[flex_down])
    return closed


def grasp_trajectory(body, frames: int, cycles: float = 1.0, amount: float = 0.8) -> np.ndarray:
    """(frames, n_dofs): the hand opens-closes-opens ``cycles`` times (cosine ramp between
    rest and :func:`grasp_pose`)."""
    frames = int(frames)
    if frames < 1:
        raise ValueError(f"frames: expected a positive integer, got {frames}")
    lim = sampling_limits(body)
    rest = np.clip(0.0, lim[:, 0], lim[:, 1])
    closed = grasp_pose(body, amount)
    t = np.arange(frames) / max(frames - 1, 1)
    u = (1.0 - np.cos(2 * np.pi * cycles * t)) / 2.0
    return rest + (closed - rest) * u[:, None]


__all__ = ["Trajectory", "load_trajectory", "save_trajectory", "random_trajectory", "grasp_pose",
           "grasp_trajectory", "sampling_limits"]
