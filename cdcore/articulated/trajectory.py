"""Joint trajectories for robots: files users bring (CSV, NPZ), and generated motion (a
smooth seeded random walk within the limits, a grasp that closes a hand)."""
from __future__ import annotations

from collections import Counter
import csv
import io
import os
from dataclasses import dataclass, field

import numpy as np

TIME_COLUMN = "time"


#: The most frames a trajectory file may hold (4.6 hours at 60 Hz; 1e6 x 30 joints is 240 MB).
MAX_FRAMES = 1_000_000
#: The largest |joint value| accepted, in radians or metres: a continuous joint may wind up
#: ~1,600 turns, a prismatic joint reach 10 km. Beyond it link poses lose all precision
#: (a revolute joint at 1e200 rad has no meaningful angle) and the kernels' bounds overflow.
MAX_JOINT_VALUE = 1e4
#: |time| in seconds (about 31 years)
MAX_TIME = 1e9
#: the longest CSV line (characters) and the most bytes an .npz's arrays may declare
MAX_LINE_CHARS = 1 << 20
MAX_NPZ_BYTES = 1 << 30
#: how limits are treated by :func:`load_trajectory`
LIMIT_MODES = ("allow", "error", "clip")


@dataclass
class Trajectory:
    """``q`` (F, n_dofs) float64 indexed like ``body.joint_names``; ``times`` (F,) seconds
    or None (then frames are ``dt`` apart); ``columns``: the joint names the file gave;
    ``outside_limits``: {joint: (frames outside its limits, the most extreme value)} as the
    file gave them (empty when every value is within the limits)."""
    q: np.ndarray
    times: np.ndarray | None
    columns: list
    outside_limits: dict = field(default_factory=dict)

    @property
    def frames(self) -> int:
        return len(self.q)


def _joint_names(body) -> list:
    names = getattr(body, "joint_names", None)
    return list(names) if names is not None else [f"joint{i}" for i in range(body.n_dofs)]


def _check_columns(body, columns, where) -> list:
    names = _joint_names(body)
    known = set(names)
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise ValueError(f"{where}: unknown joints {unknown[:20]}; the robot's movable joints are {names}")
    dup = sorted(c for c, n in Counter(columns).items() if n > 1)  # (linear: a file may name 10^5 columns)
    if dup:
        raise ValueError(f"{where}: joints given twice: {dup}")
    return names


def _assemble(body, columns, values, where) -> np.ndarray:
    names = _check_columns(body, columns, where)
    q = np.zeros((values.shape[0], len(names)))
    for k, c in enumerate(columns):
        q[:, names.index(c)] = values[:, k]
    return q


def _read_npz(path, where):
    from ..npz_io import read_npz

    def check(members):
        for key in ("q", "joint_names"):
            if key not in members:
                raise ValueError(f"{where}: missing array {key!r} (has {sorted(members)})")
        q, names = members["q"], members["joint_names"]
        if q.dtype.kind not in "fiu":
            raise ValueError(f"{where}: q must be real numbers, got dtype {q.dtype}")
        if len(q.shape) == 2 and q.shape[0] > MAX_FRAMES:
            raise ValueError(f"{where}: q has {q.shape[0]:,} frames; at most {MAX_FRAMES:,} are accepted")
        if names.dtype.kind != "U" or len(names.shape) > 1:
            raise ValueError(f"{where}: joint_names must be strings (n,), got {names.dtype} of shape {names.shape}")
        t = members.get("times")
        if t is not None and t.dtype.kind not in "fiu":
            raise ValueError(f"{where}: times must be real numbers, got dtype {t.dtype}")

    data = read_npz(path, ("q", "joint_names", "times"), MAX_NPZ_BYTES, check=check, where=where)
    values = data["q"]
    columns = [str(c) for c in np.atleast_1d(data["joint_names"]).tolist()]
    if values.ndim != 2 or values.shape[1] != len(columns):
        raise ValueError(f"{where}: q must be (frames, {len(columns)}) for {len(columns)} joint_names, "
                         f"got {values.shape}")
    return values, columns, data.get("times")


def _lines(fh, where):
    """The file's lines, each at most ``MAX_LINE_CHARS`` long."""
    while True:
        line = fh.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        if len(line) > MAX_LINE_CHARS:
            raise ValueError(f"{where}: a line longer than {MAX_LINE_CHARS:,} characters")
        yield line


def _read_csv(path, body, where):
    try:
        # utf-8-sig: spreadsheets write a byte-order mark before the first joint name
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = (r for r in csv.reader(_lines(fh, where)) if r and any(c.strip() for c in r))
            header = next(rows, None)
            if header is None:
                raise ValueError(f"{where}: empty file (expected a header of joint names)")
            header = [c.strip() for c in header]
            _check_columns(body, [c for c in header if c != TIME_COLUMN], where)  # before reading the rows
            table = np.empty((min(1024, MAX_FRAMES), len(header)))
            n = 0
            for r in rows:
                if len(r) != len(header):
                    raise ValueError(f"{where}: row {n + 2} has {len(r)} values, the header {len(header)}")
                if n == MAX_FRAMES:
                    raise ValueError(f"{where}: more than {MAX_FRAMES:,} frames")
                if n == len(table):
                    table = np.concatenate([table, np.empty_like(table)])[:MAX_FRAMES]
                try:
                    table[n] = [float(c) for c in r]
                except ValueError as exc:
                    raise ValueError(f"{where}: row {n + 2}: non-numeric value ({exc})") from None
                n += 1
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{where}: not a readable CSV ({exc})") from None
    table = table[:n]
    times = None
    if TIME_COLUMN in header:
        ti = header.index(TIME_COLUMN)
        times = table[:, ti]
        table = np.delete(table, ti, axis=1)
        header.pop(ti)
    return table, header, times


def load_trajectory(path, body, limits: str = "allow") -> Trajectory:
    """Read a trajectory for ``body``.

    CSV: a header of joint names (radians / metres), an optional ``time`` column (seconds,
    increasing), one row per frame (a UTF-8 byte-order mark is skipped). NPZ: ``q`` (F, n)
    and ``joint_names`` (n,), optional ``times`` (F,). Joints the file leaves out stay 0.

    Bounds (documented constants of this module): at most ``MAX_FRAMES`` frames (an
    ``.npz`` is refused from its headers, before decompression), |value| at most
    ``MAX_JOINT_VALUE``, |time| at most ``MAX_TIME``, CSV lines at most ``MAX_LINE_CHARS``.

    limits : {"allow", "error", "clip"}
        Values outside the body's joint limits: kept and reported in
        ``Trajectory.outside_limits`` (a debugger shows what the file says), refused, or
        clipped to the limits.

    Unknown names, non-numeric or non-finite values, values beyond the bounds, ragged rows
    and empty files raise ``ValueError`` naming the file, the joint and the frame; a missing
    file ``FileNotFoundError``.
    """
    if limits not in LIMIT_MODES:
        raise ValueError(f"limits: expected one of {LIMIT_MODES}, got {limits!r}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"trajectory file not found: {path}")
    where = os.path.basename(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npz":
        values, columns, times = _read_npz(path, where)
    elif ext == ".csv":
        values, columns, times = _read_csv(path, body, where)
    else:
        raise ValueError(f"{where}: unknown trajectory format {ext!r}; use .csv or .npz")
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        raise ValueError(f"{where}: no frames")
    if len(values) > MAX_FRAMES:
        raise ValueError(f"{where}: {len(values):,} frames; at most {MAX_FRAMES:,} are accepted")
    if not np.all(np.isfinite(values)):
        r, c = (int(x) for x in np.argwhere(~np.isfinite(values))[0])
        raise ValueError(f"{where}: NaN or infinite joint value (frame {r}, joint {columns[c]!r})")
    big = np.abs(values) > MAX_JOINT_VALUE
    if big.any():
        r, c = (int(x) for x in np.argwhere(big)[0])
        raise ValueError(f"{where}: joint {columns[c]!r} at frame {r} is {values[r, c]:.6g}, beyond "
                         f"+-{MAX_JOINT_VALUE:g} (radians / metres)")
    q = _assemble(body, columns, values, where)
    outside = _outside_limits(body, q, [c for c in columns])
    if outside and limits == "error":
        name, (count, worst) = next(iter(outside.items()))
        raise ValueError(f"{where}: joint {name!r} leaves its limits in {count} frames (reaching {worst:.6g}); "
                         f"{len(outside)} joints do")
    if outside and limits == "clip":
        lim = np.asarray(body.limits, dtype=np.float64).reshape(-1, 2)
        q = np.clip(q, lim[:, 0], lim[:, 1])
    if times is not None:
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        if times.shape != (len(q),) or not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
            raise ValueError(f"{where}: times must be {len(q)} finite, strictly increasing seconds")
        if np.abs(times).max() > MAX_TIME:
            raise ValueError(f"{where}: times beyond +-{MAX_TIME:g} s")
    return Trajectory(q, times, columns, outside)


def _outside_limits(body, q, columns) -> dict:
    """{joint: (frames outside, most extreme value)} for the joints the file gave."""
    lim = getattr(body, "limits", None)
    if lim is None:
        return {}
    lim = np.asarray(lim, dtype=np.float64).reshape(-1, 2)
    if lim.shape[0] != q.shape[1]:
        return {}
    names = _joint_names(body)
    cont = np.asarray(getattr(body, "continuous", np.zeros(len(names), bool)), dtype=bool)
    out = {}
    for c in columns:
        j = names.index(c)
        if cont.shape == (len(names),) and cont[j]:
            continue  # a continuous joint's [-pi, pi] is for sampling only
        lo, hi = lim[j]
        bad = (q[:, j] < lo) | (q[:, j] > hi)
        if bad.any():
            v = q[bad, j]
            out[c] = (int(bad.sum()), float(v[np.argmax(np.maximum(lo - v, v - hi))]))
    return out


def save_trajectory(path, body, q, times=None) -> None:
    """Write ``q`` (F, n_dofs) as CSV (header of joint names, optional ``time``) or NPZ."""
    path = os.fspath(path)
    q = np.asarray(q, dtype=np.float64)
    names = _joint_names(body)
    if q.ndim != 2 or q.shape[1] != len(names):
        raise ValueError(f"q: expected shape (frames, {len(names)}), got {q.shape}")
    from ..npz_io import atomic_write_bytes as _atomic_write_bytes  # never half-written
    if path.lower().endswith(".npz"):
        if times is None:
            _atomic_write_bytes(path, lambda fh: np.savez(fh, q=q, joint_names=np.array(names)))
        else:
            t = np.asarray(times, float)
            _atomic_write_bytes(path, lambda fh: np.savez(fh, q=q, joint_names=np.array(names), times=t))
        return

    def write_csv(fh):
        text = io.TextIOWrapper(fh, encoding="utf-8", newline="")
        w = csv.writer(text)
        w.writerow(([TIME_COLUMN] if times is not None else []) + names)
        for k, row in enumerate(q):
            w.writerow(([repr(float(times[k]))] if times is not None else []) + [repr(float(x)) for x in row])
        text.flush()
        text.detach()
    _atomic_write_bytes(path, write_csv)


def sampling_limits(body) -> np.ndarray:
    """(n_dofs, 2) finite ranges to sample in: the limits, except that a bound that is
    infinite or beyond ``MAX_JOINT_VALUE`` (a URDF's way of saying "unbounded", e.g.
    +-1e308, whose range overflows) becomes +-pi, or the other bound -+2 pi when that one
    lies beyond +-pi."""
    lim = np.array(body.limits, dtype=np.float64).reshape(-1, 2)
    lo, hi = lim[:, 0].copy(), lim[:, 1].copy()
    free_lo = ~(np.abs(lo) <= MAX_JOINT_VALUE)
    free_hi = ~(np.abs(hi) <= MAX_JOINT_VALUE)
    lo[free_lo] = np.where(free_hi[free_lo], -np.pi, np.minimum(-np.pi, hi[free_lo] - 2 * np.pi))
    hi[free_hi] = np.maximum(np.pi, lo[free_hi] + 2 * np.pi)  # both free: lo is -pi now, so hi = pi
    return np.stack([lo, hi], axis=1)


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


__all__ = ["MAX_FRAMES", "MAX_JOINT_VALUE", "Trajectory", "load_trajectory", "save_trajectory", "random_trajectory",
           "grasp_pose",
           "grasp_trajectory", "sampling_limits"]
