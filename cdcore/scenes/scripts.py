"""Scripted multi-body motions that depend on the bodies' geometry (computed by FK)."""
from __future__ import annotations

import numpy as np

from ..transforms import make_pose, rotation_about
from .builders import HAND_LINKS
from .motion import keyframes, smoothstep
from .spec import SceneError, get, positive


def hand_flick(spec, bodies, where):
    """The hand flicks a ball over a table (CAB Table 5, Fig. 4), periodically.

    Per cycle: the fingers curl (index tucked under the thumb), hold, the index finger
    flicks straight in ~0.15 s, the others relax. The ball sits where the extended index
    fingertip reaches (penetrating it by ``contact_depth``), is struck as the finger
    straightens, rolls away along the finger direction with exponentially decaying speed,
    and rolls back to its rest position before the next flick. The table is raised so its
    top touches the ball's bottom; curled fingers come close to it, as in the paper.
    """
    def body(key, default=...):
        i = get(spec, key, where, int, default)
        if not 0 <= i < len(bodies):
            raise SceneError(f"{where}.{key}: expected a body index < {len(bodies)}, got {i!r}")
        return bodies[i]
    hand, ball = body("hand"), body("ball")
    table = body("table") if "table" in spec else None
    if hand.body.n_links != len(HAND_LINKS):
        raise SceneError(f"{where}.hand: body {hand.name!r} is not a hand")
    if ball.body.n_links != 1 or table is not None and table.body.n_links != 1:
        raise SceneError(f"{where}: the ball and the table must be single-link bodies")
    cycle = positive(spec, "cycle", where, 2.5)
    if cycle < 0.5:
        raise SceneError(f"{where}.cycle: at least 0.5 s (the flick itself takes 0.15 s), got {cycle!r}")
    depth = float(get(spec, "contact_depth", where, (int, float), 0.03))
    roll = float(get(spec, "roll_distance", where, (int, float), 2.0))
    idx = {n: i for i, n in enumerate(HAND_LINKS)}
    deg = np.radians
    straight = np.zeros(hand.body.n_dofs)
    curled = straight.copy()
    for f in ("middle", "ring", "little"):
        curled[[idx[f + "1"], idx[f + "2"], idx[f + "3"]]] = deg([55, 70, 40])
    curled[[idx["index1"], idx["index2"], idx["index3"]]] = deg([50, 75, 45])
    curled[[idx["thumb1"], idx["thumb2"], idx["thumb3"]]] = deg([25, 35, 20])
    flicked = curled.copy()
    flicked[[idx["index1"], idx["index2"], idx["index3"]]] = deg([-8, 0, 0])
    relaxed = flicked.copy()
    for f in ("middle", "ring", "little"):
        relaxed[[idx[f + "1"], idx[f + "2"], idx[f + "3"]]] = deg([15, 20, 10])
    relaxed[[idx["thumb1"], idx["thumb2"], idx["thumb3"]]] = deg([5, 10, 5])
    # keys within a cycle (seconds): straight, curl, hold, flick, relax, straighten
    t_hit = 0.45 * cycle + 0.13
    keys_t = [0.0, 0.3 * cycle, 0.45 * cycle, 0.45 * cycle + 0.15, 0.7 * cycle, 0.95 * cycle, cycle]
    keys_q = [straight, curled, curled, flicked, relaxed, straight, straight]
    keys_q = np.array(keys_q)
    hand.link_poses = hand.link_poses.with_motion(q_fn=lambda f, t: keyframes(keys_t, keys_q, np.mod(t, cycle)))
    root0 = hand.link_poses.root_fn(np.zeros(1, np.int64), np.zeros(1))[0]  # the first frame's root pose

    # where the flicked index fingertip ends up (at the first frame's root pose)
    tip_link = idx["index3"]
    p = hand.body.fk(flicked, root0)[tip_link]
    tip_len = float(np.ptp(hand.body.link_vertices(tip_link)[:, 0]))
    tip = p[:3, :3] @ np.array([tip_len, 0.0, 0.0]) + p[:3, 3]
    direction = p[:3, 0] / np.linalg.norm(p[:3, 0])
    direction = np.array([direction[0], direction[1], 0.0])
    direction /= np.linalg.norm(direction)
    r = 0.5 * float(np.ptp(ball.body.link_vertices(0)[:, 0]))
    rest = tip + direction * (r - depth)
    if not r > 0:
        raise SceneError(f"{where}.ball: the ball has no extent")
    axis = np.cross([0.0, 0.0, 1.0], direction)

    # ball: rest, struck at t_hit, rolls out and back (rolling without slipping)
    def ball_roots(f, t):
        tc = np.mod(t, cycle)
        s = np.where(tc < t_hit, 0.0, 1.0 - np.exp(-(tc - t_hit) / (0.12 * cycle)))
        back = smoothstep((tc - 0.8 * cycle) / (0.18 * cycle))
        dist = roll * s * (1.0 - back)
        out = np.empty((len(t), 4, 4))
        for k in range(len(t)):
            out[k] = make_pose(rotation_about(axis, dist[k] / r), rest + direction * dist[k])
        return out
    ball.link_poses = ball.link_poses.with_motion(root_fn=ball_roots)
    if table is not None:
        top = float(table.body.link_vertices(0)[:, 2].max())
        lift = make_pose(None, (rest[0] + 0.5 * roll * direction[0], rest[1] + 0.5 * roll * direction[1],
                                rest[2] - r - top - 1e-3))
        table.link_poses = table.link_poses.with_motion(
            root_fn=lambda f, t: np.broadcast_to(lift, (len(t), 4, 4)).copy())


SCRIPTS = {"hand_flick": hand_flick}

# the paper-motion generators live in their own module (CAB's contact densities)
from .motion_paper import PAPER_SCRIPTS  # noqa: E402

SCRIPTS.update(PAPER_SCRIPTS)
