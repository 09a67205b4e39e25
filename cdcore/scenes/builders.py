"""Building scene bodies (chains, hands, rigid meshes) from their descriptions."""
from __future__ import annotations

import math
import os

import numpy as np

from .. import shapes
from ..articulated import ArticulatedBody, Link
from ..mesh import MAX_TRIANGLES, Mesh, load_mesh
from ..transforms import make_pose, rotation_about
from .spec import SceneError, get, vec

#: generators of ``cdcore.shapes`` a scene may name
SHAPES = ("torus", "capsule_link", "boat_hull_link", "ellipsoid", "icosphere", "box", "cylinder",
          "teapot_like", "slender_aircraft", "palm", "phalanx", "table", "uv_sphere", "perturbed_sphere",
          "jittered_icosphere",
          "wave_sheet")

AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def euler_deg(rx, ry, rz) -> np.ndarray:
    """Rotation from XYZ Euler angles in degrees (applied x, then y, then z)."""
    return (rotation_about((0, 0, 1), np.radians(rz)) @ rotation_about((0, 1, 0), np.radians(ry))
            @ rotation_about((1, 0, 0), np.radians(rx)))


def pose_from(d: dict | None, where: str) -> np.ndarray:
    """{"translation": [x, y, z], "rotation_deg": [rx, ry, rz]} -> (4, 4)."""
    if d is None:
        return np.eye(4)
    if not isinstance(d, dict):
        raise SceneError(f"{where}: expected an object with translation/rotation_deg")
    t = vec(d, "translation", where, 3, [0, 0, 0])
    r = vec(d, "rotation_deg", where, 3, [0, 0, 0])
    return make_pose(euler_deg(*r), t)


def build_mesh(spec, where: str, base_dir: str | None = None) -> Mesh:
    """A mesh from ``{"shape": name, "args": {...}}`` (a generator of ``cdcore.shapes``)
    or ``{"file": path}`` (anything trimesh reads; relative to the scene file), with
    optional ``"scale"`` and ``"pose"``."""
    if not isinstance(spec, dict):
        raise SceneError(f"{where}: expected a mesh object with 'shape' or 'file'")
    if "file" in spec:
        path = get(spec, "file", where, str)
        if base_dir and not os.path.isabs(path):
            path = os.path.join(base_dir, path)
        try:
            mesh = load_mesh(path)
        except (OSError, ValueError) as exc:
            raise SceneError(f"{where}.file: {exc}") from None
    else:
        name = get(spec, "shape", where, str)
        fn = getattr(shapes, name, None)
        if name not in SHAPES or not callable(fn):
            raise SceneError(f"{where}.shape: unknown shape {name!r}; known: {sorted(SHAPES)}")
        args = get(spec, "args", where, dict, {})
        try:
            mesh = fn(**args)
        except (TypeError, ValueError) as exc:
            raise SceneError(f"{where}.args: {exc}") from None
    scale = get(spec, "scale", where, (int, float), 1.0)
    if not scale > 0:
        raise SceneError(f"{where}.scale: must be positive, got {scale}")
    pose = pose_from(spec.get("pose"), f"{where}.pose")
    if scale != 1.0 or "pose" in spec:
        v = mesh.vertices * scale
        v = v @ pose[:3, :3].T + pose[:3, 3]
        try:
            mesh = Mesh(v, mesh.faces, name=mesh.name)
        except ValueError as exc:
            raise SceneError(f"{where}.scale: {exc}") from None
    return mesh


def build_body(spec: dict, where: str, base_dir: str | None, mesh_bv: str) -> ArticulatedBody:
    kind = get(spec, "type", where, str)
    name = get(spec, "name", where, str, kind)
    if kind == "chain":
        return _chain(spec, where, name, base_dir, mesh_bv)
    if kind == "hand":
        return _hand(spec, where, name, mesh_bv)
    if kind in ("urdf", "mjcf"):  # a robot (cdcore.scenes.robots)
        from .robots import build_robot_body
        return build_robot_body(spec, where, base_dir, mesh_bv)
    if kind in ("rigid", "deforming"):
        mesh = build_mesh(get(spec, "mesh", where, dict), f"{where}.mesh", base_dir)
        return ArticulatedBody([Link(name, mesh, -1)], name, mesh_bv)
    raise SceneError(f"{where}.type: expected chain, hand, urdf, mjcf, rigid or deforming, got {kind!r}")


def _chain(spec, where, name, base_dir, mesh_bv) -> ArticulatedBody:
    n = get(spec, "links", where, int)
    if not 1 <= n <= 256:
        raise SceneError(f"{where}.links: expected 1..256, got {n}")
    mesh = build_mesh(get(spec, "link", where, dict), f"{where}.link", base_dir)
    if n * mesh.n_faces > MAX_TRIANGLES:
        raise SceneError(f"{where}: {n} links x {mesh.n_faces:,} triangles exceed {MAX_TRIANGLES:,} triangles")
    # "joint_gap": free space between consecutive links, the joint (pivot) in its middle, so
    # links do not touch at their joints (CAB section 4: the brute row tests all C(16, 2)
    # link pairs and finds no more contacts than the hierarchies)
    gap = get(spec, "joint_gap", where, (int, float), 0.0)
    if not (math.isfinite(gap) and gap >= 0):
        raise SceneError(f"{where}.joint_gap: expected a finite non-negative number, got {gap!r}")
    if gap > 0:
        v = mesh.vertices + np.array([0.5 * gap, 0.0, 0.0])
        mesh = Mesh(v, mesh.faces, name=mesh.name)
    spacing = float(get(spec, "spacing", where, (int, float), float(np.ptp(mesh.vertices[:, 0])) + gap))
    axes = get(spec, "axes", where, list, ["z"])
    if not axes or any(a not in AXES for a in axes):
        raise SceneError(f"{where}.axes: expected a list of 'x'/'y'/'z', got {axes!r}")
    lim = np.radians(vec(spec, "limits_deg", where, 2, [-90, 90]))
    if not lim[0] <= lim[1]:
        raise SceneError(f"{where}.limits_deg: expected [lower, upper] with lower <= upper")
    links = []
    for i in range(n):
        origin = np.eye(4) if i == 0 else make_pose(None, (spacing, 0.0, 0.0))
        links.append(Link(f"{name}[{i}]", mesh, i - 1, origin, AXES[axes[i % len(axes)]], tuple(lim)))
    return ArticulatedBody(links, name, mesh_bv, joints_touch=gap == 0)


# hand proportions (palm length 1): finger x offsets on the palm's front edge, phalanx lengths
_FINGERS = (  # name, y on the palm edge, proximal/middle/distal lengths, radius
    ("index", 0.33, (0.45, 0.28, 0.22), 0.085),
    ("middle", 0.11, (0.50, 0.31, 0.24), 0.09),
    ("ring", -0.11, (0.46, 0.29, 0.23), 0.085),
    ("little", -0.32, (0.36, 0.22, 0.19), 0.075),
)
HAND_MAX_RESOLUTION = 256
HAND_LINKS = ["palm"] + [f"{f[0]}{k}" for f in _FINGERS for k in (1, 2, 3)] + ["thumb1", "thumb2", "thumb3"]


def _hand(spec, where, name, mesh_bv) -> ArticulatedBody:
    """Palm + 5 fingers x 3 phalanges (16 links, branching at the palm). Palm-down, fingers
    along +x, flexion about +y (positive angles curl the fingers towards -z)."""
    s = get(spec, "scale", where, (int, float), 1.0)
    if not s > 0:
        raise SceneError(f"{where}.scale: must be positive, got {s!r}")
    res = get(spec, "resolution", where, int, 12)
    # 16 links of ~res**2 triangles each: 256 is ~1.1 M triangles (1024 was 15.8 M and ~13 GB
    # while the hierarchies were built, from a 120-byte scene file)
    if not 3 <= res <= HAND_MAX_RESOLUTION:
        raise SceneError(f"{where}.resolution: expected 3..{HAND_MAX_RESOLUTION}, got {res!r}")
    palm = shapes.palm(width=0.9 * s, length=1.0 * s, thickness=0.28 * s)
    links = [Link("palm", palm, -1)]
    lim = (np.radians(-20), np.radians(100))
    for fname, y, lens, rad in _FINGERS:
        parent = 0
        origin = make_pose(None, (1.0 * s, y * s, 0.0))
        for k, ln in enumerate(lens):
            mesh = shapes.phalanx(length=ln * s, radius=rad * s * (1 - 0.08 * k), n_around=res)
            links.append(Link(f"{fname}{k + 1}", mesh, parent, origin, (0.0, 1.0, 0.0), lim))
            parent = len(links) - 1
            origin = make_pose(None, (ln * s, 0.0, 0.0))
    # thumb: on the side of the palm, pointing forward-out, flexing across the palm
    parent = 0
    origin = make_pose(euler_deg(-70, 0, 40), (0.25 * s, 0.45 * s, -0.05 * s))
    for k, ln in enumerate((0.42, 0.32, 0.26)):
        mesh = shapes.phalanx(length=ln * s, radius=0.1 * s * (1 - 0.08 * k), n_around=res)
        links.append(Link(f"thumb{k + 1}", mesh, parent, origin, (0.0, 1.0, 0.0), lim))
        parent = len(links) - 1
        origin = make_pose(None, (ln * s, 0.0, 0.0))
    return ArticulatedBody(links, name, mesh_bv)
