"""Exact primitive shapes: spheres, capsules, boxes, cylinders, ellipsoids and convex
vertex sets (convex hulls), each a solid in its own frame.

Conventions (MuJoCo's ``geom_size``, so MJCF geoms map one to one; URDF sizes convert):

==========  =========  =============================================================
kind        code       ``size`` (3,)
==========  =========  =============================================================
sphere      SPHERE     (radius, -, -)
capsule     CAPSULE    (radius, half length of the axis segment, -); axis along z
box         BOX        (half x, half y, half z)
cylinder    CYLINDER   (radius, half height, -); axis along z
ellipsoid   ELLIPSOID  (semi-axis x, y, z)
convex      CONVEX     unused; ``vertices`` (n, 3) whose hull is the solid
==========  =========  =============================================================

The kernels (``cdcore._prim``) take a primitive as (kind, size, pose, vertex slice);
:func:`tessellate` gives the triangle surface the mesh engine would otherwise use.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import shapes
from .mesh import Mesh

SPHERE, CAPSULE, BOX, CYLINDER, ELLIPSOID, CONVEX = 0, 1, 2, 3, 4, 5
KIND_NAMES = ("sphere", "capsule", "box", "cylinder", "ellipsoid", "convex")
KIND_CODES = {n: k for k, n in enumerate(KIND_NAMES)}
# how many size entries each kind uses (the rest must be 0 or are ignored)
SIZE_COUNT = (1, 2, 3, 2, 3, 0)

# Tessellation resolutions: every vertex lies on the true surface, so the triangles sit
# inside the solid; the largest gap between a triangle and the surface is the sagitta
# r (1 - cos(pi / n)) of the finest ring step (0.2 % of r for 48 sides).
N_AROUND = 48
N_LAT = 24


@dataclass(frozen=True, eq=False)
class Primitive:
    """One primitive solid.

    Parameters
    ----------
    kind : str
        One of ``KIND_NAMES``.
    size : (3,) float64
        See the module table; used entries must be positive and finite.
    pose : (4, 4) float64
        The shape's frame (rigid) in its owner's frame (a link).
    vertices : (n, 3) float64, optional
        ``convex`` only: points whose convex hull is the solid (n >= 1).
    name : str
    """

    kind: str
    size: np.ndarray
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))
    vertices: np.ndarray | None = None
    name: str = "primitive"

    def __post_init__(self):
        if self.kind not in KIND_CODES:
            raise ValueError(f"kind: expected one of {KIND_NAMES}, got {self.kind!r}")
        s = np.zeros(3)
        given = np.asarray(self.size, dtype=np.float64).ravel()
        if given.size > 3:
            raise ValueError(f"{self.name}: size has {given.size} entries, at most 3")
        s[:given.size] = given
        k = KIND_CODES[self.kind]
        used = s[:SIZE_COUNT[k]]
        if given.size < SIZE_COUNT[k] or not np.all(np.isfinite(used)) or not np.all(used > 0):
            raise ValueError(f"{self.name}: a {self.kind} needs {SIZE_COUNT[k]} positive finite size values, "
                             f"got {self.size!r}")
        if k in (SPHERE,):
            s[1:] = 0.0
        p = np.asarray(self.pose, dtype=np.float64)
        if p.shape != (4, 4) or not np.all(np.isfinite(p)):
            raise ValueError(f"{self.name}: pose must be a finite (4, 4) matrix, got shape {p.shape}")
        R = p[:3, :3]
        if np.abs(R @ R.T - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0:
            raise ValueError(f"{self.name}: pose must be rigid (a rotation and a translation)")
        v = None
        if k == CONVEX:
            if self.vertices is None:
                raise ValueError(f"{self.name}: a convex primitive needs vertices")
            v = np.ascontiguousarray(self.vertices, dtype=np.float64)
            if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0 or not np.all(np.isfinite(v)):
                raise ValueError(f"{self.name}: vertices must be a non-empty finite (n, 3) array")
            v.flags.writeable = False
        s.flags.writeable = False
        p = p.copy()
        p.flags.writeable = False
        object.__setattr__(self, "size", s)
        object.__setattr__(self, "pose", p)
        object.__setattr__(self, "vertices", v)

    @property
    def code(self) -> int:
        return KIND_CODES[self.kind]

    def transformed(self, pose) -> "Primitive":
        """The same shape with ``pose @ self.pose`` (``pose`` rigid)."""
        return Primitive(self.kind, self.size, np.asarray(pose, float) @ self.pose, self.vertices, self.name)

    def bounding_radius(self) -> float:
        """Radius of a ball about the shape's origin that holds it."""
        r, h, c = self.size
        k = self.code
        if k == SPHERE:
            return float(r)
        if k == CAPSULE:
            return float(r + h)
        if k == BOX or k == ELLIPSOID:
            size = np.asarray(self.size, dtype=np.float64)
            return float(np.linalg.norm(size)) if k == BOX else float(size.max())
        if k == CYLINDER:
            return float(np.hypot(r, h))
        return float(np.linalg.norm(np.asarray(self.vertices, dtype=np.float64), axis=1).max())


def local_box(prim: Primitive) -> tuple:
    """(centre, half extents) (3,) float64 of the primitive's bounding box in its own frame."""
    r, h, c = prim.size
    k = prim.code
    if k == SPHERE:
        e = (r, r, r)
    elif k == CAPSULE:
        e = (r, r, h + r)
    elif k == CYLINDER:
        e = (r, r, h)
    elif k in (BOX, ELLIPSOID):
        e = prim.size
    else:
        v = np.asarray(prim.vertices, dtype=np.float64)  # a convex primitive always has them
        lo, hi = v.min(0), v.max(0)
        return (lo + hi) / 2, (hi - lo) / 2
    return np.zeros(3), np.array(e, dtype=np.float64)


def _capsule_mesh(r: float, h: float, n_around: int, n_lat: int) -> Mesh:
    """Two hemispheres joined by a tube; ``n_lat`` (even) latitude bands over the two caps."""
    half = max(1, n_lat // 2)
    phi = np.arange(1, half + 1) * (np.pi / 2 / half)  # 0 at the pole .. pi/2 at the equator
    th = np.arange(n_around) * (2 * np.pi / n_around)
    co, si = np.cos(th), np.sin(th)
    rho, z = np.sin(phi), np.cos(phi)
    low = np.stack([r * rho[:, None] * co, r * rho[:, None] * si,
                    np.broadcast_to((-h - r * z)[:, None], (half, n_around))], -1)
    high = low[::-1].copy()
    high[..., 2] = -high[..., 2]
    rings = np.concatenate([low, high])
    return shapes._ring_mesh(rings, (0, 0, -h - r), (0, 0, h + r), "capsule")


def tessellate(prim: Primitive, n_around: int = N_AROUND, n_lat: int = N_LAT) -> Mesh:
    """The primitive's surface as triangles in its owner's frame (``prim.pose`` applied).

    Every vertex lies on the true surface (the triangles are inside the solid); convex
    primitives give their convex hull."""
    r, h, c = prim.size
    k = prim.code
    if k == SPHERE:
        m = shapes.ellipsoid((r, r, r), n_lat, n_around)
    elif k == ELLIPSOID:
        m = shapes.ellipsoid((r, h, c), n_lat, n_around)
    elif k == CAPSULE:
        m = _capsule_mesh(r, h, n_around, n_lat)
    elif k == CYLINDER:
        m = shapes.cylinder(r, 2 * h, n_around)
    elif k == BOX:
        m = shapes.box(2 * prim.size)
    else:
        m = convex_hull_mesh(prim.vertices)
    return Mesh(shapes.transformed(m, prim.pose).vertices,
                m.faces if np.linalg.det(prim.pose[:3, :3]) > 0 else m.faces[:, ::-1], prim.name)


def convex_hull_mesh(points) -> Mesh:
    """The convex hull of ``points`` (n, 3) as an outward-wound triangle mesh (a flat or
    degenerate point set gives the hull of its affine span, possibly degenerate
    triangles)."""
    p = np.asarray(points, dtype=np.float64)
    import trimesh  # lazy, as in mesh I/O

    try:
        hull = trimesh.convex.convex_hull(p, qhull_options="QbB Pp Qt")
        v, f = np.asarray(hull.vertices, float), np.asarray(hull.faces)
    except Exception:  # noqa: BLE001 - qhull refuses flat/degenerate sets: fall back below
        v, f = np.zeros((0, 3)), np.zeros((0, 3), int)
    if len(f) == 0:
        if len(p) < 3:
            p = np.vstack([p, p[-1:], p[-1:]])[:max(3, len(p))]
        v, f = p, np.array([[0, k, k + 1] for k in range(1, len(p) - 1)])
    return Mesh(v, f, "convex")


__all__ = ["Primitive", "tessellate", "convex_hull_mesh", "KIND_NAMES", "KIND_CODES", "SPHERE", "CAPSULE", "BOX",
           "CYLINDER", "ELLIPSOID", "CONVEX"]
