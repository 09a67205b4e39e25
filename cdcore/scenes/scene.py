"""Scenes: named, deterministic, parameterised worlds of bodies in motion, described by
JSON files (``assets/scenes/*.json``) and built from procedural meshes."""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

import numpy as np

from ..articulated import ArticulatedBody
from ..mesh import Mesh
from .builders import build_body, pose_from
from .frames import MAX_GATHER, FramePoses
from .motion import joint_motion_fn, keyframes, root_motion_fn
from .robots import robot_joint_motion, scene_available
from .spec import SceneError, check_numbers, get, read_json

SCENE_DIR = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "assets", "scenes"))
KINDS = ("articulated", "rigid", "deform", "proximity")
MAX_FRAMES = 2**31 - 1  # frames are computed lazily; the bound is the app's frame slider
MAX_BODIES = 64


@dataclass
class SceneBody:
    """A body of a scene and its motion.

    ``link_poses`` (F, L, 4, 4), array-like (``FramePoses``): world pose of every link at
    every frame, computed on demand in chunks (``link_poses[f]`` is frame f's (L, 4, 4)).
    ``deform``: for deforming bodies, the displacement parameters (see ``vertices``).
    """
    name: str
    body: ArticulatedBody
    link_poses: FramePoses
    deform: dict | None = None
    base_vertices: np.ndarray | None = field(default=None, repr=False)
    _normals: np.ndarray | None = field(default=None, repr=False)  # (2, V, 3): the wave's per-vertex parts

    @property
    def deforming(self) -> bool:
        return self.deform is not None

    def vertices(self, frame: int) -> np.ndarray | None:
        """Deforming bodies: the single link's vertices at ``frame`` (a travelling wave
        along the vertex normals: amplitude * sin(2 pi (x / wavelength - t / period)));
        ``None`` for rigid and articulated bodies."""
        if self.deform is None:
            return None
        base = self.base_vertices
        d = self.deform
        wave = self._normals
        if wave is None:
            # sin(k x - w t) = sin(k x) cos(w t) - cos(k x) sin(w t): the per-vertex parts once
            # (a frame is then two scaled adds, not a sine per vertex: 0.23 -> ~0.06 ms on
            # deform-wave's 10,201 vertices; the same shape to rounding)
            n = _vertex_normals(base, self.body.links[0].mesh.faces)
            kx = 2 * np.pi * base[:, 0] / d["wavelength"]
            a = float(d["amplitude"])
            wave = self._normals = np.stack([(a * np.sin(kx))[:, None] * n, (a * np.cos(kx))[:, None] * n])
        wt = 2 * np.pi * (frame * d["dt"]) / d["period"]
        out = wave[0] * np.cos(wt)
        out -= wave[1] * np.sin(wt)
        out += base
        return out


@dataclass
class Scene:
    """A scene: bodies, their motion over ``frames`` frames of ``dt`` seconds, and the
    body pairs to collide (``(i, i)``: self-collision of body i)."""
    name: str
    title: str
    kind: str
    description: str
    paper: str
    frames: int
    dt: float
    bodies: list[SceneBody]
    pairs: list[tuple[int, int]]
    source: str | None = None
    spec: dict = field(default_factory=dict, repr=False)

    def body_index(self, name: str) -> int:
        for i, b in enumerate(self.bodies):
            if b.name == name:
                return i
        raise KeyError(name)

    def link_poses(self, body: int, frame: int) -> np.ndarray:
        return self.bodies[body].link_poses[frame]

    @property
    def n_triangles(self) -> int:
        return int(sum(len(b.body.faces) for b in self.bodies))


def list_scenes(directory: str | None = None) -> list[str]:
    """Names of the scenes shipped in ``assets/scenes`` (or ``directory``)."""
    d = directory or SCENE_DIR
    return sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(d, "*.json"))
                  if scene_available(p))  # robot scenes only when their URDF is found


def load_scene(name_or_path: str, frames: int | None = None, mesh_bv: str = "obb",
               overrides: dict | None = None) -> Scene:
    """Load a scene by name (``list_scenes()``) or from a JSON file path.

    ``frames`` overrides the scene's frame count; ``mesh_bv`` is the bounding-volume type of
    the links' own mesh hierarchies (exact queries); ``overrides`` replaces top-level fields
    of the description (e.g. ``{"bodies": [...]}`` for a user mesh). Raises
    ``FileNotFoundError`` for an unknown scene and ``SceneError`` (a ``ValueError``) naming
    the file and field for an invalid description.
    """
    path = name_or_path
    if not os.path.isfile(path):
        if name_or_path.lower().endswith(".json") or os.sep in name_or_path or "/" in name_or_path:
            # a path, not a name: say which file is missing, not "unknown scene"
            what = "a directory, not a scene file" if os.path.isdir(path) else "file not found"
            raise FileNotFoundError(f"scene {what}: {os.path.abspath(path)}")
        path = os.path.join(SCENE_DIR, f"{name_or_path}.json")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"unknown scene {name_or_path!r}; known: {', '.join(list_scenes())}")
    spec = read_json(path)
    if overrides:
        spec = {**spec, **overrides}
    return scene_from_spec(spec, os.path.basename(path), os.path.dirname(os.path.abspath(path)), frames, mesh_bv,
                           source=path)


def scene_from_spec(spec: dict, where: str = "scene", base_dir: str | None = None, frames: int | None = None,
                    mesh_bv: str = "obb", source: str | None = None) -> Scene:
    """Build a scene from its description, validating every field (a ``SceneError`` names
    the JSON path of the first bad one). Poses are computed lazily (``FramePoses``)."""
    if not isinstance(spec, dict):
        raise SceneError(f"{where}: a scene must be a JSON object")
    check_numbers(spec, where)
    name = get(spec, "name", where, str)
    kind = get(spec, "kind", where, str)
    if kind not in KINDS:
        raise SceneError(f"{where}.kind: expected one of {KINDS}, got {kind!r}")
    n_frames = frames if frames is not None else get(spec, "frames", where, int)
    if (not isinstance(n_frames, (int, np.integer)) or isinstance(n_frames, bool)
            or not 1 <= n_frames <= MAX_FRAMES):
        raise SceneError(f"{where}.frames: expected an integer 1..{MAX_FRAMES}, got {n_frames!r}")
    n_frames = int(n_frames)
    dt = float(get(spec, "dt", where, (int, float), 1.0 / 30.0))
    if not dt > 0:
        raise SceneError(f"{where}.dt: must be positive")
    body_specs = get(spec, "bodies", where, list)
    if not body_specs:
        raise SceneError(f"{where}.bodies: a scene needs at least one body")
    if len(body_specs) > MAX_BODIES:
        raise SceneError(f"{where}.bodies: at most {MAX_BODIES} bodies, got {len(body_specs)}")
    bodies = []
    for k, bs in enumerate(body_specs):
        bw = f"{where}.bodies[{k}]"
        if not isinstance(bs, dict):
            raise SceneError(f"{bw}: expected an object")
        body = build_body(bs, bw, base_dir, mesh_bv)
        base = pose_from(bs.get("root"), f"{bw}.root")
        motion = get(bs, "motion", bw, dict, {})
        if bs["type"] in ("urdf", "mjcf"):  # robots: joint values as data (trajectory file, random or grasp)
            if n_frames * body.n_dofs > MAX_GATHER:
                raise SceneError(f"{bw}: {n_frames:,} frames x {body.n_dofs} joints of robot trajectory is too "
                                 f"large; use fewer frames")
            q_all = robot_joint_motion(body, motion.get("joints"), np.arange(n_frames) * dt,
                                       f"{bw}.motion.joints", base_dir)
            body.scene_q = q_all  # the joint values per frame (the app's joint panel edits them)

            def q_fn(f, t, q_all=q_all):
                return q_all[f]
        else:
            q_fn = joint_motion_fn(motion.get("joints"), body.n_dofs, f"{bw}.motion.joints")
        root_fn = root_motion_fn(motion.get("root"), base, n_frames, f"{bw}.motion.root")
        deform = None
        if bs["type"] == "deforming":
            deform = _deform_spec(get(bs, "deform", bw, dict), f"{bw}.deform", dt)
        poses = FramePoses(body, q_fn, root_fn, n_frames, dt, f"{bw}.motion")
        bodies.append(SceneBody(body.name, body, poses, deform, body.links[0].mesh.vertices if deform else None))
    script = spec.get("script")
    if script is not None:
        from .scripts import SCRIPTS
        if not isinstance(script, dict):
            raise SceneError(f"{where}.script: expected an object with a 'type'")
        sname = get(script, "type", f"{where}.script", str)
        if sname not in SCRIPTS:
            raise SceneError(f"{where}.script.type: unknown script {sname!r}; known: {sorted(SCRIPTS)}")
        SCRIPTS[sname](script, bodies, f"{where}.script")
    pairs = []
    for k, p in enumerate(get(spec, "pairs", where, list, [[0, 1]] if len(bodies) > 1 else [[0, 0]])):
        if (not isinstance(p, list) or len(p) != 2
                or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(bodies) for i in p)):
            raise SceneError(f"{where}.pairs[{k}]: expected [i, j] body indices < {len(bodies)}, got {p!r}")
        pairs.append((p[0], p[1]))
    for k, sb in enumerate(bodies):
        sb.link_poses[0]  # evaluate (and cache) the first frames now: bad motions fail at load time
        if sb.deforming and not np.all(np.isfinite(sb.vertices(0))):
            raise SceneError(f"{where}.bodies[{k}].deform: non-finite vertices")
    return Scene(name=name, title=get(spec, "title", where, str, name), kind=kind,
                 description=get(spec, "description", where, str, ""), paper=get(spec, "paper", where, str, ""),
                 frames=n_frames, dt=dt, bodies=bodies, pairs=pairs, source=source, spec=spec)


def _deform_spec(d, where, dt):
    out = {"dt": dt}
    for key, default in (("amplitude", ...), ("wavelength", 1.0), ("period", 1.0)):
        v = get(d, key, where, (int, float), default)
        out[key] = float(v)
    if out["wavelength"] == 0:
        raise SceneError(f"{where}.wavelength: must be non-zero")
    if out["period"] <= 0:
        raise SceneError(f"{where}.period: must be positive, got {out['period']!r}")
    return out


def _vertex_normals(v, f):
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    acc = np.zeros_like(v)
    for k in range(3):
        np.add.at(acc, f[:, k], n)
    norm = np.linalg.norm(acc, axis=1, keepdims=True)
    return np.divide(acc, norm, out=np.zeros_like(acc), where=norm > 0)


def rigid_scene(mesh_a: Mesh, mesh_b: Mesh, frames: int = 1000, cube_size: float = 2.0, seed: int = 0,
                name: str = "rigid-custom", mesh_bv: str = "obb") -> Scene:
    """A rigid pair under random placements from two meshes (e.g. the user's own files)."""
    from .builders import ArticulatedBody, Link
    if not 1 <= frames <= MAX_FRAMES:
        raise ValueError(f"frames: expected 1..{MAX_FRAMES}, got {frames}")
    bodies = []
    for k, m in enumerate((mesh_a, mesh_b)):
        body = ArticulatedBody([Link(m.name, m, -1)], m.name if k == 0 else f"{m.name} (B)", mesh_bv)
        root_fn = root_motion_fn(None if k == 0 else {"type": "random", "cube_size": cube_size, "seed": seed},
                                 np.eye(4), frames, "random")
        poses = FramePoses(body, lambda f, t: np.zeros((len(t), 1)), root_fn, frames, 1.0, body.name)
        bodies.append(SceneBody(body.name, body, poses))
    return Scene(name, name, "rigid", "user meshes under random placements", "", frames, 1.0, bodies, [(0, 1)])


__all__ = ["Scene", "SceneBody", "SceneError", "list_scenes", "load_scene", "rigid_scene", "keyframes"]
