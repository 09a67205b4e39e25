"""Robots, trajectories and saved queries in the debugger (Qt-free).

``open_robot`` / ``open_trajectory`` / ``open_query`` turn a robot (URDF or MJCF), a joint
trajectory or a saved query into a scene the session runs like any other (so the stepper, compare,
insight and recording work on them); :class:`RobotModel` is the joint panel's state: the
robot's joint values at the current frame, set one joint at a time, and the link pairs
in contact.
"""
from __future__ import annotations

import os

import numpy as np

from cdcore.articulated import ArticulatedBody, Link, RobotBody
from cdcore.scenes import Scene, SceneBody
from cdcore.scenes.scene import scene_from_spec

from .signals import Signal

ROBOT_FRAMES = 600
SCENE_DT = 1.0 / 30.0  # a robot scene's clock (trajectories with times are resampled on it)


ROBOT_FORMATS = ("urdf", "mjcf")


def robot_format(path: str) -> str:
    """"urdf" or "mjcf", from the file's root element (``<robot>`` / ``<mujoco>``): both
    formats come as ``.xml`` files. ``FileNotFoundError``; ``ValueError`` naming the file
    when it is not XML or neither format."""
    import xml.etree.ElementTree as ET
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"robot file not found: {path}")
    tag = None
    try:
        with open(path, "rb") as fh:
            for _, el in ET.iterparse(fh, events=("start",)):  # the root element only
                tag = el.tag
                break
    except ET.ParseError as exc:
        raise ValueError(f"{name}: not readable XML ({exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{name}: not readable XML") from None
    if tag == "robot":
        return "urdf"
    if tag == "mujoco":
        return "mjcf"
    raise ValueError(f"{name}: neither a URDF (<robot>) nor an MJCF (<mujoco>) robot: the root element is <{tag}>")


def load_robot(path: str, package_dirs=(), fmt: str | None = None):
    """The robot body of a URDF (``load_urdf`` with ``package_dirs``) or an MJCF file
    (``load_mjcf``; the planes a MuJoCo scene carries are left out without a warning)."""
    fmt = fmt or robot_format(path)
    if fmt == "mjcf":
        import warnings

        from cdcore.articulated import load_mjcf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_mjcf(path)
    from cdcore.articulated import load_urdf
    return load_urdf(path, list(package_dirs))


def robot_spec(urdf: str, package_dirs=(), trajectory: str | None = None, frames: int = ROBOT_FRAMES,
               geometry: str = "collision", srdf: str | None = None, fmt: str = "urdf") -> dict:
    """A one-robot scene description: the trajectory file if given, else a grasp for hands
    (>= 12 joints) or a seeded random motion; self-collision as the body pair. ``urdf`` is
    the robot file, an MJCF model when ``fmt`` is "mjcf"."""
    if fmt == "mjcf":
        body = {"name": os.path.splitext(os.path.basename(urdf))[0], "type": "mjcf", "mjcf": os.path.abspath(urdf)}
    else:
        body = {"name": os.path.splitext(os.path.basename(urdf))[0], "type": "urdf", "urdf": os.path.abspath(urdf),
                "package_dirs": [os.path.abspath(d) for d in package_dirs], "geometry": geometry}
    if srdf:
        body["srdf"] = os.path.abspath(srdf)
    if trajectory:
        body["motion"] = {"joints": {"type": "trajectory", "file": os.path.abspath(trajectory)}}
    return {"name": f"robot: {os.path.basename(urdf)}", "kind": "articulated", "frames": int(frames),
            "dt": SCENE_DT, "description": f"{urdf}" + (f" with {trajectory}" if trajectory else ""),
            "bodies": [body], "pairs": [[0, 0]]}


def _default_motion(spec):
    """Hands grasp, other robots move randomly (decided once the URDF is read)."""
    def build(mesh_bv, frames):
        s = dict(spec)
        b = dict(s["bodies"][0])
        if "motion" not in b:
            if b["type"] == "mjcf":
                n = load_robot(b["mjcf"], fmt="mjcf").n_dofs
            else:
                from cdcore.articulated import load_urdf
                n = load_urdf(b["urdf"], b["package_dirs"], geometry=b.get("geometry", "collision")).n_dofs
            b["motion"] = default_motion(n)
        s["bodies"] = [b] + s["bodies"][1:]
        return scene_from_spec(s, s["name"], None, frames, mesh_bv)
    return build


def default_motion(n_dofs: int) -> dict:
    """Hands (>= 12 joints) grasp twice, other robots move randomly."""
    return {"joints": {"type": "grasp", "cycles": 2} if n_dofs >= 12 else {"type": "random", "seed": 0}}


def open_robot(session, urdf: str, package_dirs=(), trajectory: str | None = None, srdf: str | None = None,
               frames: int | None = None) -> None:
    """Load a robot file, URDF or MJCF (told apart by ``robot_format``), and optionally a
    trajectory, as the session's scene.

    Raises ``FileNotFoundError`` (``cdcore.articulated.PackageNotFoundError`` when a
    ``package://`` package is not found: ask the user for its directory and retry),
    ``SceneError`` / ``ValueError`` naming the problem (``MJCFError`` for a model MuJoCo
    cannot compile), ``ImportError`` for an MJCF file without the ``mujoco`` package.
    """
    from cdcore.articulated.trajectory import load_trajectory
    fmt = robot_format(urdf)
    body = load_robot(urdf, package_dirs, fmt)  # raises the typed errors before any scene is made
    n = frames
    if trajectory and n is None:
        tr = load_trajectory(trajectory, body)
        n = tr.frames
        if tr.times is not None:  # played on the scene's clock: as many frames as its duration needs
            n = int(np.floor((float(tr.times[-1]) - float(tr.times[0])) / SCENE_DT + 1e-9)) + 1
    spec = robot_spec(urdf, package_dirs, trajectory, n or ROBOT_FRAMES, srdf=srdf, fmt=fmt)
    if not trajectory:  # decided here: the robot is loaded already
        spec["bodies"][0]["motion"] = default_motion(body.n_dofs)
    # set before the scene is announced: listeners of scene_changed (the recent-files list)
    # read it; put back if the scene cannot be built
    previous = getattr(session, "robot_source", None)
    session.robot_source = {"urdf": urdf, "package_dirs": list(package_dirs), "srdf": srdf, "format": fmt}
    try:
        session.load_built_scene(_default_motion(spec))
    except BaseException:
        session.robot_source = previous
        raise


def open_trajectory(session, path: str) -> None:
    """Play a trajectory file on the robot that is open."""
    src = getattr(session, "robot_source", None)
    if src is None or session.scene is None or not any(isinstance(b.body, RobotBody) for b in session.scene.bodies):
        raise ValueError("open a robot (File → Open robot) before a trajectory")
    open_robot(session, src["urdf"], src["package_dirs"], path, src.get("srdf"))


# ---- saved queries ------------------------------------------------------------------------

def _query_body(name, bvh, pose, mesh_bv):
    body = ArticulatedBody([Link(name, bvh.mesh, -1)], name, mesh_bv, bvh.leaf_size)
    if bvh.bv == mesh_bv:  # keep the saved tree exactly (a refitted one differs from a rebuild)
        body.use_hierarchy(0, bvh)
    return SceneBody(name, body, np.asarray(pose, dtype=np.float64)[None, None].copy())


def query_scene(q, mesh_bv: str) -> Scene:
    """A one-frame rigid scene holding a saved query's two posed meshes."""
    name = os.path.basename(q.path or "query.npz")
    bodies = [_query_body(f"A: {q.bvh_a.mesh.name}", q.bvh_a, q.pose_a, mesh_bv),
              _query_body(f"B: {q.bvh_b.mesh.name}", q.bvh_b, q.pose_b, mesh_bv)]
    seen = "hit" if q.answer.get("hit") else "no hit"
    desc = f"saved query ({seen} when saved" + (f", expected {'hit' if q.expected else 'no hit'}"
                                                if q.expected is not None else "") + ")"
    if q.note:
        desc += f": {q.note}"
    return Scene(f"query: {name}", f"query: {name}", "rigid", desc, "", 1, 1.0, bodies, [(0, 1)],
                 source=None, spec={})


def open_query(session, path: str):
    """Open a saved query (``cdcore.save_query``) with its BV type and test; returns it."""
    from cdcore import load_query
    q = load_query(path)
    session.bv = q.bvh_a.bv
    if q.test and q.test in session.tests:
        session.test = q.test
    elif session.test not in session.tests:
        session.test = session.tests[0]
    session.load_built_scene(lambda mesh_bv, frames: query_scene(q, mesh_bv))
    session.robot_source = None
    session.settings_changed.emit()
    return q


# ---- the joint panel's model ------------------------------------------------------------------

class RobotModel:
    """The first robot body of the session's scene: its joints, their values at the current
    frame, and the link pairs in contact. ``changed`` fires when the robot or the frame
    changes (the joint panel re-reads everything)."""

    def __init__(self, session):
        self.session = session
        self.changed = Signal()
        session.scene_changed.connect(self._on_scene)
        session.frame_changed.connect(self._on_frame)
        self.index = None
        self._on_scene()

    def _on_scene(self, *_):
        s = self.session.scene
        self.index = None
        if s is not None:
            for i, sb in enumerate(s.bodies):
                if isinstance(sb.body, RobotBody):
                    self.index = i
                    break
        self.changed.emit()

    def _on_frame(self, *_):
        # while playing, the joint panel is a read-out: the window refreshes it at <= 10 Hz
        # (``refresh``); every frame it repainted the dock's sliders and list
        if not self.session.playing:
            self.changed.emit()

    def refresh(self) -> None:
        """Announce the current frame's joints and contacts (the window's read-out tick)."""
        self.changed.emit()

    @property
    def body(self) -> RobotBody | None:
        return None if self.index is None else self.session.scene.bodies[self.index].body

    @property
    def joint_names(self) -> list:
        return [] if self.body is None else list(self.body.joint_names)

    @property
    def limits(self) -> np.ndarray:
        """The sliders' ranges: the joint limits, with "unbounded" ones (inf, +-1e308,
        whose range overflows) replaced as for sampling (``sampling_limits``)."""
        from cdcore.articulated.trajectory import sampling_limits
        return np.zeros((0, 2)) if self.body is None else sampling_limits(self.body)

    def q(self) -> np.ndarray:
        """Joint values (n_dofs,) at the current frame."""
        b = self.body
        if b is None:
            return np.zeros(0)
        return np.asarray(b.scene_q[self.session.frame], dtype=np.float64).copy()

    def set_q(self, q) -> None:
        """Pose the robot at ``q`` (clipped to the limits) at the current frame and recompute it."""
        b = self.body
        if b is None:
            raise ValueError("no robot in this scene")
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (b.n_dofs,):
            raise ValueError(f"q: expected {b.n_dofs} joint values, got shape {q.shape}")
        q = np.clip(q, b.limits[:, 0], b.limits[:, 1]) if not np.any(b.continuous) else np.where(
            b.continuous, q, np.clip(q, b.limits[:, 0], b.limits[:, 1]))
        f = self.session.frame
        sb = self.session.scene.bodies[self.index]
        b.scene_q[f] = q
        sb.link_poses.invalidate(f)  # the scene's poses are computed from scene_q on demand
        self.session.goto(f)

    def set_joint(self, k: int, value: float) -> None:
        q = self.q()
        if not 0 <= k < len(q):
            raise ValueError(f"joint index {k} out of range (0..{len(q) - 1})")
        q[k] = float(value)
        self.set_q(q)

    def contacts(self) -> list:
        """(kind, a, b) of the current frame: kind "self" for link pairs of the robot,
        else the other body's name; a and b name links (or bodies)."""
        s, res = self.session.scene, self.session.result
        if self.index is None or res is None or len(res.pairs) != len(s.pairs):
            return []
        out = []
        r = self.index
        for (i, j), pr in zip(s.pairs, res.pairs):
            if r not in (i, j):
                continue
            bi, bj = s.bodies[i], s.bodies[j]
            for li, lj in pr.contacts.tolist():
                na = bi.body.links[li].name
                nb = bj.body.links[lj].name if bj.body.n_links > 1 else bj.name
                if i == j:
                    out.append(("self", na, nb))
                elif i == r:
                    out.append((bj.name, na, nb))
                else:
                    out.append((bi.name, nb, na))
        return out

    def contact_links(self) -> dict:
        """{body index: sorted link indices in contact} for highlighting."""
        s, res = self.session.scene, self.session.result
        out = {}
        if self.index is None or res is None:
            return out
        for (i, j), pr in zip(s.pairs, res.pairs):
            if self.index not in (i, j):
                continue
            for li, lj in pr.contacts.tolist():
                out.setdefault(i, set()).add(li)
                out.setdefault(j, set()).add(lj)
        return {k: sorted(v) for k, v in out.items()}
