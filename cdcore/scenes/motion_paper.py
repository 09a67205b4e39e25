"""Motions that reproduce the published experiments' contact densities (scene scripts).

CAB (Schmidl, Walker & Lin 2004, section 4) animated its chains by optimisation-based
animation (Milenkovic & Schmidl 2001): two chains "moving near each other and mostly
apart". What the paper reports of that motion is its outcome: Tables 1-3 have 214, 354 and
73 contacts in 10,000 frames (<= 0.035 per frame) while the AABB* boxes overlap on most
frames, Table 4 ("braided") 9,528 (0.95 per frame). ``near_pass`` reproduces that
outcome with a scripted motion: on top of their joint waves, one chain's root keeps a
lateral ``far`` offset from its contact position (near, but apart), and once per
``period`` seconds sweeps in to ``near`` and back along a raised-cosine pulse of ``pass``
seconds (a pass where the bulging links brush; ``near`` < 0 is the penetration of the
straight chains). The contact density follows from ``near`` and ``pass`` and is measured
(``cdcore-bench tables`` prints it beside the paper's).

Registered in ``scripts.SCRIPTS`` (``{"script": {"type": "near_pass", ...}}`` in a scene).
"""
from __future__ import annotations

import numpy as np

from .spec import SceneError, get


def pass_offsets(t, far: float, near: float, period: float, pass_time: float, start: float = 0.0):
    """(F,) the lateral offset at times ``t``: ``far``, except for a raised-cosine dip to
    ``near`` of ``pass_time`` seconds centred in every ``period`` (from ``start`` on)."""
    u = np.mod(np.asarray(t, float) - start, period)
    c = 0.5 * period
    x = (u - (c - 0.5 * pass_time)) / pass_time  # 0..1 inside the pass
    bump = np.where((x >= 0) & (x <= 1), 0.5 * (1.0 - np.cos(2.0 * np.pi * np.clip(x, 0, 1))), 0.0)
    bump = np.where(np.asarray(t) >= start, bump, 0.0)
    return far + (near - far) * bump


def near_pass(spec, bodies, where):
    """``{"type": "near_pass", "body": 1, "axis": [0, 1, 0], "far": 0.8, "near": -0.05,
    "period": 6.0, "pass": 1.0, "slide": [amplitude, period]}``: body ``body``'s link poses
    are translated by ``pass_offsets(...)`` along ``axis`` (world frame) and, with
    ``slide``, by ``amplitude sin(2 pi t / period)`` along the chain (x), so successive
    passes bring different links together."""
    k = get(spec, "body", where, int, 1)
    if not 0 <= k < len(bodies):
        raise SceneError(f"{where}.body: expected a body index < {len(bodies)}, got {k}")
    axis = np.asarray(get(spec, "axis", where, list, [0.0, 1.0, 0.0]), float)
    if axis.shape != (3,) or not np.all(np.isfinite(axis)) or np.linalg.norm(axis) == 0:
        raise SceneError(f"{where}.axis: expected a non-zero 3-vector")
    axis = axis / np.linalg.norm(axis)
    far = float(get(spec, "far", where, (int, float)))
    near = float(get(spec, "near", where, (int, float)))
    period = float(get(spec, "period", where, (int, float)))
    pass_time = float(get(spec, "pass", where, (int, float)))
    start = float(get(spec, "start", where, (int, float), 0.0))
    if not (period > 0 and 0 < pass_time <= period):
        raise SceneError(f"{where}: expected period > 0 and 0 < pass <= period")
    slide = spec.get("slide")
    if slide is not None:
        if not (isinstance(slide, list) and len(slide) == 2 and all(isinstance(x, (int, float)) for x in slide)
                and slide[1] > 0):
            raise SceneError(f"{where}.slide: expected [amplitude, period > 0]")
    b = bodies[k]
    base_roots = b.link_poses.root_fn

    def roots(f, t):
        # translating the root translates every link (the poses are computed lazily, per chunk)
        out = np.array(base_roots(f, t), dtype=np.float64)
        off = pass_offsets(t, far, near, period, pass_time, start)[:, None] * axis[None, :]
        if slide is not None:
            off[:, 0] += slide[0] * np.sin(2.0 * np.pi * np.asarray(t) / slide[1])
        out[:, :3, 3] += off
        return out

    b.link_poses = b.link_poses.with_motion(root_fn=roots)


PAPER_SCRIPTS = {"near_pass": near_pass}
