"""Shared helpers of the benchmark subcommands: procedural meshes, linked-tori poses,
timing statistics and text tables. numpy only (plus cdcore); no optional peers."""
from __future__ import annotations

import math
import time

import numpy as np

from ..transforms import make_pose, rotation_about

# The benchmark torus: major radius 1, minor (tube) radius 0.25.
MAJOR_R = 1.0
MINOR_R = 0.25


# ---- meshes -----------------------------------------------------------------------
def torus(n_major: int, n_minor: int, major_r: float = MAJOR_R, minor_r: float = MINOR_R):
    """A closed, consistently outward-oriented torus in the xy-plane centred at the origin.

    ``n_major`` sections around the ring, ``n_minor`` around the tube: ``n_major * n_minor``
    vertices and ``2 * n_major * n_minor`` triangles. Vertex ``(i, j)`` sits at
    ``u = 2 pi i / n_major`` (around the z axis) and ``w = 2 pi j / n_minor`` (around the tube,
    ``w = 0`` on the outer equator, ``w = pi`` on the inner one), so with both counts even the
    points (+-(R - r), 0, 0) and (+-(R + r), 0, 0) are vertices.

    Returns (vertices (n, 3) float64, faces (m, 3) int32).
    """
    if n_major < 3 or n_minor < 3:
        raise ValueError("torus: need at least 3 sections each way")
    u = 2.0 * np.pi * np.arange(n_major) / n_major
    w = 2.0 * np.pi * np.arange(n_minor) / n_minor
    uu, ww = np.meshgrid(u, w, indexing="ij")
    ring = major_r + minor_r * np.cos(ww)
    verts = np.stack([ring * np.cos(uu), ring * np.sin(uu), minor_r * np.sin(ww)], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(n_major), np.arange(n_minor), indexing="ij")
    i1, j1 = (i + 1) % n_major, (j + 1) % n_minor
    a = i * n_minor + j
    b = i1 * n_minor + j
    c = i1 * n_minor + j1
    d = i * n_minor + j1
    # (a, b, c) runs +u then +w: the normal d/du x d/dw points outward
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return np.ascontiguousarray(verts), faces.astype(np.int32)


def torus_mesh(n_major: int, n_minor: int, name: str | None = None):
    """``torus`` as a ``cdcore.Mesh``."""
    from ..mesh import Mesh
    v, f = torus(n_major, n_minor)
    return Mesh(v, f, name=name or f"torus {n_major}x{n_minor} ({len(f)} tris)")


def edge_face_counts(faces) -> np.ndarray:
    """For every undirected edge, the number of faces using it (a closed 2-manifold: all 2)."""
    f = np.asarray(faces)
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    e.sort(axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    return counts


def directed_edges_unique(faces) -> bool:
    """Every directed edge used once: consistent orientation of a closed mesh."""
    f = np.asarray(faces)
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    return len(np.unique(e, axis=0)) == len(e)


# ---- linked tori ------------------------------------------------------------------
def linked_offset(gap: float, major_r: float = MAJOR_R, minor_r: float = MINOR_R) -> float:
    """x offset of torus B (rotated 90 degrees about x, so that its ring lies in the
    xz-plane) for a tube-surface gap ``gap`` to torus A (ring in the xy-plane at the
    origin), B's ring passing through A's hole.

    B's centre line is the circle of radius R about (x, 0, 0) in the xz-plane; it crosses
    A's plane at (x - R, 0, 0), inside A's hole at distance R - |x - R| from A's centre line
    (the nearest pair of points of the two centre lines, which are symmetric about the
    xy- and xz-planes, for 0 < x < 2R). So the gap between the tube surfaces is
    ``R - |x - R| - 2 r`` and, for x >= R, ``x = 2 R - 2 r - gap``: with R = 1, r = 0.25,
    ``x = 1.5 - gap``. The closest points are A's inner equator at (R - r, 0, 0) and B's
    inner equator at (x - R + r, 0, 0): vertices of both meshes when their section counts
    are even, so the meshes' gap equals the smooth tori's there.
    """
    return 2.0 * major_r - 2.0 * minor_r - gap


def linked_pose(gap: float) -> np.ndarray:
    """Pose of B (4x4) for a given tube gap; A sits at the identity."""
    return make_pose(rotation_about((1.0, 0.0, 0.0), np.pi / 2), (linked_offset(gap), 0.0, 0.0))


def near_contact_poses(n: int, seed: int = 0, gap_range=(-0.03, 0.03), max_angle_deg: float = 4.0,
                       jitter: float = 0.02) -> np.ndarray:
    """(n, 4, 4) random poses of B around the linked configuration: gap uniform in
    ``gap_range``, a rotation by up to ``max_angle_deg`` about a random axis (applied about
    B's own centre) and a translation jitter of up to ``jitter`` in y and z (seeded)."""
    rng = np.random.default_rng(seed)
    poses = np.empty((n, 4, 4))
    for k in range(n):
        base = linked_pose(rng.uniform(*gap_range))
        axis = rng.normal(size=3)
        angle = math.radians(rng.uniform(-max_angle_deg, max_angle_deg))
        rot = rotation_about(axis, angle)
        pose = base.copy()
        pose[:3, :3] = rot @ base[:3, :3]
        pose[1:3, 3] += rng.uniform(-jitter, jitter, size=2)
        poses[k] = pose
    return poses


# ---- timing -----------------------------------------------------------------------
def summarize(samples) -> dict:
    """Median, interquartile range, min and count of a list of seconds."""
    s = np.asarray(samples, dtype=np.float64)
    q1, med, q3 = np.percentile(s, [25, 50, 75])
    return {"median": float(med), "iqr": float(q3 - q1), "min": float(s.min()), "n": int(s.size)}


def time_calls(fn, repeat: int):
    """``repeat`` calls of ``fn()``, each timed with ``perf_counter``: (seconds list, last result)."""
    out = []
    res = None
    pc = time.perf_counter
    for _ in range(repeat):
        t0 = pc()
        res = fn()
        out.append(pc() - t0)
    return out, res


def fmt_time(seconds: float | None) -> str:
    """Seconds in the most readable unit (ns, us, ms, s)."""
    if seconds is None or not np.isfinite(seconds):
        return "-"
    a = abs(seconds)
    if a < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if a < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if a < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(r: float | None) -> str:
    if r is None or not np.isfinite(r):
        return "-"
    return f"{r:.2f}x"


def table(headers, rows, align=None) -> str:
    """Aligned plain-text table. ``align``: one of '<' / '>' per column (default: first
    column left, the others right)."""
    rows = [[str(c) for c in r] for r in rows]
    ncol = len(headers)
    if align is None:
        align = "<" + ">" * (ncol - 1)
    widths = [max(len(str(headers[i])), *(len(r[i]) for r in rows)) if rows else len(str(headers[i]))
              for i in range(ncol)]

    def line(cells):
        return "  ".join(f"{c:{a}{w}}" for c, a, w in zip(cells, align, widths)).rstrip()

    out = [line([str(h) for h in headers]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)
