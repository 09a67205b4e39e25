"""Procedural triangle meshes for tests, benchmarks and demo scenes (pure numpy).

Every generator is deterministic and returns a :class:`cdcore.Mesh`. Unless stated
otherwise a shape is a closed, consistently oriented 2-manifold (possibly made of several
closed components): every undirected edge lies on exactly two triangles, every directed
edge is used once, triangles are counter-clockwise seen from outside (outward normals),
the signed volume is positive and no two vertices coincide. :func:`wave_sheet` is the
one open surface.

Most shapes are built from two primitives:

* a *ring mesh*: ``R`` rings of ``N`` points swept along an axis and closed by a pole
  vertex at each end (spheres, ellipsoids, capsules, surfaces of revolution, tubes);
* a *box lattice*: the surface of a rectilinear ``nx x ny x nz`` lattice (boxes, rounded
  boxes).

Faces are built with numpy index arithmetic only; Python loops run over a handful of
components or control points, never over vertices.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from .mesh import MAX_TRIANGLES, Mesh

__all__ = [
    "torus", "capsule_link", "boat_hull_link", "ellipsoid", "uv_sphere", "icosphere", "box",
    "rounded_box", "cylinder", "teapot_like", "slender_aircraft", "palm", "phalanx", "table",
    "perturbed_sphere", "jittered_icosphere", "wave_sheet", "wave_displace", "wave_torus", "deform_torus", "merge",
    "transformed",
]

_TAU = 2.0 * np.pi

# Resolution arguments: the smallest value that still gives the documented closed surface
# (rings need 3 points, a sphere 2 latitude bands); absent names may be 0.
_MIN_RES = {"n_major": 3, "n_minor": 3, "n_around": 3, "n_lon": 3, "n_lat": 2, "n_round": 1, "n_bumps": 1}
_RES_PREFIX = "n"
MAX_RESOLUTION = 100_000  # per resolution argument
MAX_SUBDIVISIONS = 9      # icosphere: 20 * 4**9 = 5.2M triangles


# Upper bounds of the triangles a generator makes, from its resolution arguments (checked by
# tests/test_shape_bounds.py against the meshes at many resolutions); a generator not listed
# makes about two triangles per cell of the product of its resolutions. A lattice box is
# quadratic in its subdivisions, a sheet in its n, a capsule's caps in n_around.
_TRIANGLE_BOUND = {
    "box": lambda a: 12 * a["subdivisions"] ** 2,
    "rounded_box": lambda a: 12 * (2 * a["n_round"] + a["n_flat"]) ** 2,
    "palm": lambda a: 12 * (2 * a["n_round"] + a["n_flat"]) ** 2,
    "cylinder": lambda a: 2 * a["n_around"] * (a["n_height"] + 1),
    "capsule_link": lambda a: a["n_around"] * (2 * a["n_len"] + a["n_around"] + 6),
    "boat_hull_link": lambda a: a["n_around"] * (2 * a["n_len"] + a["n_around"] + 6),
    "phalanx": lambda a: a["n_around"] * (2 * a["n_len"] + a["n_around"] + 6),
    "teapot_like": lambda a: 2 * a["n_around"] * (a["n_profile"] + 16),
    "slender_aircraft": lambda a: 8 * a["n"] ** 2 + 1000,
    "table": lambda a: 16 * a["n_around"] + 64,
    "wave_sheet": lambda a: 2 * a["n"] ** 2,
}


def _checked(fn):
    """Validate a generator's arguments before anything is allocated: resolutions are
    integers in range (and together bounded by MAX_TRIANGLES), numbers finite. Bad
    arguments raise TypeError/ValueError naming the argument (n=0 used to divide by zero)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{fn.__name__}: {exc}") from None
        bound.apply_defaults()
        cells = 1
        for name, v in bound.arguments.items():
            where = f"{fn.__name__}({name}=...)"
            if name.startswith("n_") or name in ("n", "subdivisions", "seed"):
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise TypeError(f"{where}: expected an int, got {v!r}")
                lo = _MIN_RES.get(name, 0)
                hi = MAX_SUBDIVISIONS if name == "subdivisions" and fn.__name__ == "icosphere" else (
                    2**32 - 1 if name == "seed" else MAX_RESOLUTION)
                if not lo <= v <= hi:
                    raise ValueError(f"{where}: expected {lo}..{hi}, got {v}")
                if name != "seed":
                    cells *= 10 * 4 ** int(v) if fn.__name__ == "icosphere" else max(int(v), 1)
            elif name in ("vertices", "base_vertices", "mesh", "meshes", "pose", "name"):
                continue
            elif v is not None:
                try:
                    arr = np.asarray(v, dtype=float)
                except (TypeError, ValueError):
                    raise TypeError(f"{where}: expected numbers, got {v!r}") from None
                if not np.all(np.isfinite(arr)):
                    raise ValueError(f"{where}: expected finite numbers, got {v!r}")
        res = {k: int(v) for k, v in bound.arguments.items() if k.startswith("n_") or k in ("n", "subdivisions")}
        most = _TRIANGLE_BOUND.get(fn.__name__)
        triangles = 2 * cells if most is None else most(res)
        if triangles > MAX_TRIANGLES:
            raise ValueError(f"{fn.__name__}: the resolution asks for more than {MAX_TRIANGLES:,} triangles "
                             f"({', '.join(f'{k}={v}' for k, v in res.items())})")
        return fn(*args, **kwargs)
    return wrapper


# ----------------------------------------------------------------------------- primitives

def _grid_quads(idx: np.ndarray, wrap_rows: bool = False, wrap_cols: bool = False) -> np.ndarray:
    """Two triangles per cell of a grid of vertex indices.

    Parameters
    ----------
    idx : (r, c) int
        Vertex index of every grid node.
    wrap_rows, wrap_cols : bool
        Close the grid cyclically along rows / columns.

    Returns
    -------
    (2 * cells, 3) int64
        Triangles whose normals point along ``d(row) x d(col)``.
    """
    if wrap_rows:
        idx = np.concatenate([idx, idx[:1]], axis=0)
    if wrap_cols:
        idx = np.concatenate([idx, idx[:, :1]], axis=1)
    a, b = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel()
    c, d = idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def _ring_mesh(rings: np.ndarray, p0, p1, name: str) -> Mesh:
    """Close ``R`` rings of points with a pole vertex at each end.

    Parameters
    ----------
    rings : (R, N, 3) float
        Ring ``0`` is next to ``p0`` and ring ``R-1`` next to ``p1``; within a ring the
        points run counter-clockwise about the axis ``p1 - p0`` (right-hand rule).
    p0, p1 : (3,) float
        Pole vertices (start and end of the axis).

    Returns
    -------
    Mesh
        ``R*N + 2`` vertices and ``2*N*R`` outward-oriented triangles.
    """
    rings = np.asarray(rings, dtype=np.float64)
    n_r, n = rings.shape[:2]
    verts = np.concatenate([np.asarray(p0, float)[None], rings.reshape(-1, 3), np.asarray(p1, float)[None]])
    idx = 1 + np.arange(n_r * n).reshape(n_r, n)
    side = _grid_quads(idx, wrap_cols=True)[:, ::-1]  # d(axis) x d(angle) points inwards
    j = np.arange(n)
    jn = (j + 1) % n
    last = verts.shape[0] - 1
    bottom = np.stack([np.zeros(n, int), idx[0, jn], idx[0, j]], 1)
    top = np.stack([np.full(n, last), idx[-1, j], idx[-1, jn]], 1)
    return Mesh(verts, np.concatenate([bottom, side, top]), name=name)


def _circle(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) of ``n`` angles evenly spaced counter-clockwise from 0, each (n,)."""
    th = np.arange(n) * (_TAU / n)
    return np.cos(th), np.sin(th)


def _frames(centers: np.ndarray, up) -> tuple[np.ndarray, np.ndarray]:
    """Normal/binormal ``(N, B)`` along a polyline, each (k, 3), with ``N x B = T``.

    ``up`` must never be parallel to the tangent ``T`` (for a planar curve: the plane
    normal).
    """
    t = np.gradient(centers, axis=0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    nrm = np.cross(np.asarray(up, float), t)
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    return nrm, np.cross(t, nrm)


def _sweep(centers, radii, n_around: int, up, name: str) -> Mesh:
    """A closed tube with flat end caps swept along a polyline.

    Parameters
    ----------
    centers : (k, 3) float
        Centre line, ``k >= 2``.
    radii : (k,) float or float
        Tube radius at every centre (> 0).
    up : (3,) float
        A direction never parallel to the centre line (see :func:`_frames`).
    """
    centers = np.asarray(centers, dtype=np.float64)
    radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), centers.shape[:1])
    nrm, bin_ = _frames(centers, up)
    c, s = _circle(n_around)
    spokes = c[None, :, None] * nrm[:, None] + s[None, :, None] * bin_[:, None]  # (k, n, 3)
    rings = centers[:, None] + radii[:, None, None] * spokes
    return _ring_mesh(rings, centers[0], centers[-1], name)


def _lathe_z(r, z, n_around: int, z0: float, z1: float, name: str) -> Mesh:
    """Surface of revolution about +z of a profile ``(r, z)`` (each (k,), ``r > 0``), poles at z0 and z1."""
    c, s = _circle(n_around)
    r = np.asarray(r, float)[:, None]
    zz = np.broadcast_to(np.asarray(z, float)[:, None], r.shape[:1] + c.shape)
    rings = np.stack([r * c, r * s, zz], -1)
    return _ring_mesh(rings, (0.0, 0.0, z0), (0.0, 0.0, z1), name)


def _stadium_profile(length: float, radius: float, n_cap: int, n_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Stations of a capsule along its axis, poles excluded.

    The caps are quarter ellipses with radial semi-axis ``radius`` and axial semi-axis
    ``c = min(radius, length / 2)`` (hemispheres when ``length >= 2 radius``), joined by a
    cylinder cut into ``n_len`` segments.

    Returns
    -------
    s : (k,) float
        Axial positions in ``(0, length)``, increasing.
    scale : (k,) float
        Radius of each station as a fraction of ``radius``, in ``(0, 1]``.
    """
    c = min(radius, length / 2.0)
    a = np.arange(1, n_cap + 1) * (np.pi / 2 / n_cap)
    s_cap, r_cap = c * (1.0 - np.cos(a)), np.sin(a)
    mid = length - 2.0 * c
    s_mid = np.linspace(c, length - c, n_len + 1)[1:-1] if mid > 1e-12 * length else np.zeros(0)
    s_end = length - s_cap[::-1]
    r_end = r_cap[::-1]
    if mid <= 1e-12 * length:  # ellipsoid: the two equators coincide
        s_end, r_end = s_end[1:], r_end[1:]
    s = np.concatenate([s_cap, s_mid, s_end])
    scale = np.concatenate([r_cap, np.ones(s_mid.size), r_end])
    return s, scale


def _rings_along_x(s, sections) -> np.ndarray:
    """Rings ``(k, N, 3)`` at x = ``s`` from (y, z) sections ``(k, N, 2)`` (counter-clockwise about +x)."""
    s = np.asarray(s, float)
    sections = np.asarray(sections, float)
    return np.concatenate([np.broadcast_to(s[:, None, None], sections.shape[:2] + (1,)), sections], -1)


def _rotation(axis, angle: float) -> np.ndarray:
    """(3, 3) rotation matrix about ``axis`` by ``angle`` radians (Rodrigues)."""
    k = np.asarray(axis, float)
    k = k / np.linalg.norm(k)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * (kx @ kx)


def _pose(rot=None, trans=(0.0, 0.0, 0.0)) -> np.ndarray:
    """(4, 4) rigid transform from a (3, 3) rotation and a translation."""
    p = np.eye(4)
    if rot is not None:
        p[:3, :3] = rot
    p[:3, 3] = trans
    return p


def _box_lattice(xs, ys, zs, name: str) -> Mesh:
    """Surface of the rectilinear lattice ``xs x ys x zs`` (each strictly increasing, >= 2 values).

    Returns
    -------
    Mesh
        Every boundary lattice point once; two outward triangles per boundary cell.
    """
    axes = [np.asarray(a, float) for a in (xs, ys, zs)]
    shape = tuple(a.size for a in axes)
    ii = np.indices(shape)
    on_surface = np.zeros(shape, bool)
    for k in range(3):
        on_surface |= (ii[k] == 0) | (ii[k] == shape[k] - 1)
    idx = np.full(shape, -1, np.int64)
    idx[on_surface] = np.arange(int(on_surface.sum()))
    verts = np.stack([axes[k][ii[k][on_surface]] for k in range(3)], 1)
    faces = []
    for ax in range(3):  # grid over the two cyclically following axes: d(row) x d(col) = +e_ax
        for side, flip in ((0, True), (shape[ax] - 1, False)):
            sl = np.take(idx, side, axis=ax)  # remaining axes in increasing order
            grid = sl.T if ax == 1 else sl
            f = _grid_quads(grid)
            faces.append(f[:, ::-1] if flip else f)
    return Mesh(verts, np.concatenate(faces), name=name)


# ----------------------------------------------------------------------------- basic solids

@_checked
def torus(major: float = 1.0, minor: float = 0.25, n_major: int = 64, n_minor: int = 16) -> Mesh:
    """A ring torus about +z, centred at the origin.

    Parameters
    ----------
    major, minor : float
        Distance from the centre to the tube axis, and tube radius (``0 < minor < major``).
    n_major, n_minor : int
        Segments around the ring and around the tube (>= 3).

    Returns
    -------
    Mesh
        ``n_major * n_minor`` vertices, ``2 * n_major * n_minor`` triangles.
    """
    cu, su = _circle(n_major)
    cw, sw = _circle(n_minor)
    rr = np.broadcast_to(major + minor * cw, (n_major, n_minor))
    v = np.stack([rr * cu[:, None], rr * su[:, None], np.broadcast_to(minor * sw, rr.shape)], -1)
    idx = np.arange(n_major * n_minor).reshape(n_major, n_minor)
    return Mesh(v.reshape(-1, 3), _grid_quads(idx, True, True), name="torus")


@_checked
def ellipsoid(radii=(1.0, 1.0, 1.0), n_lat: int = 16, n_lon: int = 32, center=(0.0, 0.0, 0.0)) -> Mesh:
    """A latitude/longitude ellipsoid with poles on the z axis.

    Parameters
    ----------
    radii : (3,) float
        Semi-axes along x, y, z.
    n_lat : int
        Latitude bands pole to pole (>= 2); ``n_lat - 1`` rings.
    n_lon : int
        Points per ring (>= 3).
    center : (3,) float

    Returns
    -------
    Mesh
        ``n_lon * (n_lat - 1) + 2`` vertices, ``2 * n_lon * (n_lat - 1)`` triangles.
    """
    a, b, c = (float(r) for r in radii)
    phi = np.arange(1, n_lat) * (np.pi / n_lat)
    co, si = _circle(n_lon)
    rho = np.sin(phi)[:, None]
    zz = np.broadcast_to(-c * np.cos(phi)[:, None], rho.shape[:1] + co.shape)
    rings = np.stack([a * rho * co, b * rho * si, zz], -1)
    ctr = np.asarray(center, float)
    return _ring_mesh(rings + ctr, ctr - (0, 0, c), ctr + (0, 0, c), "ellipsoid")


@_checked
def uv_sphere(radius: float = 1.0, n_lat: int = 16, n_lon: int = 32, center=(0.0, 0.0, 0.0)) -> Mesh:
    """A latitude/longitude sphere; see :func:`ellipsoid` for counts (``2 n_lon (n_lat-1)`` triangles)."""
    m = ellipsoid((radius,) * 3, n_lat, n_lon, center)
    return Mesh(m.vertices, m.faces, name="uv_sphere")


@_checked
def icosphere(radius: float = 1.0, subdivisions: int = 3, center=(0.0, 0.0, 0.0)) -> Mesh:
    """A geodesic sphere: an icosahedron split ``subdivisions`` times (``20 * 4**s`` triangles)."""
    t = (1.0 + 5 ** 0.5) / 2.0
    v = np.array([(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t),
                  (0, -1, -t), (0, 1, -t), (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)], float)
    f = np.array([(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4),
                  (11, 10, 2), (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8),
                  (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)], np.int64)
    tri = v[f]
    inward = np.einsum("ij,ij->i", np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), tri.sum(1)) < 0
    f[inward] = f[inward, ::-1]
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    for _ in range(int(subdivisions)):
        edges = np.sort(f[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
        uniq, inv = np.unique(edges, axis=0, return_inverse=True)
        mid = v[uniq].sum(1)
        v = np.concatenate([v, mid / np.linalg.norm(mid, axis=1, keepdims=True)])
        m = v.shape[0] - uniq.shape[0] + inv.reshape(-1, 3)
        ab, bc, ca = m[:, 0], m[:, 1], m[:, 2]
        a, b, c = f[:, 0], f[:, 1], f[:, 2]
        f = np.concatenate([np.stack(x, 1) for x in ((a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca))])
    return Mesh(v * radius + np.asarray(center, float), f, name="icosphere")


@_checked
def box(extents=(1.0, 1.0, 1.0), center=(0.0, 0.0, 0.0), subdivisions: int = 1) -> Mesh:
    """An axis-aligned box; each face a ``subdivisions x subdivisions`` grid.

    Returns
    -------
    Mesh
        ``12 * subdivisions**2`` triangles (12 for the default).
    """
    k = int(subdivisions)
    if k < 1:
        raise ValueError(f"subdivisions must be >= 1, got {subdivisions}")
    ext, ctr = np.asarray(extents, float), np.asarray(center, float)
    ax = [c + e * np.linspace(-0.5, 0.5, k + 1) for e, c in zip(ext, ctr)]
    return _box_lattice(*ax, name="box")


@_checked
def rounded_box(extents=(1.0, 1.0, 1.0), rounding: float = 0.1, center=(0.0, 0.0, 0.0),
                n_round: int = 4, n_flat: int = 4) -> Mesh:
    """A box whose edges and corners are rounded with radius ``rounding``.

    A lattice box with ``n_round`` cells across every rounding zone and ``n_flat`` across
    every flat part is projected onto the rounded surface: ``p -> q + r (p - q)/|p - q|``
    with ``q`` the nearest point of the inner box shrunk by ``r``.

    Parameters
    ----------
    extents : (3,) float
        Full size; ``0 < rounding < min(extents) / 2``.
    """
    ext = np.asarray(extents, float)
    h = ext / 2.0
    r = float(rounding)
    if not 0.0 < r < h.min():
        raise ValueError(f"rounding must be in (0, {h.min()}), got {rounding}")
    zone = np.linspace(0.0, r, n_round + 1)
    axes = [np.concatenate([-hk + zone, np.linspace(-hk + r, hk - r, n_flat + 1)[1:-1], hk - r + zone])
            for hk in h]
    m = _box_lattice(*axes, name="rounded_box")
    p = m.vertices
    q = np.clip(p, -(h - r), h - r)
    d = p - q
    v = q + r * d / np.linalg.norm(d, axis=1, keepdims=True)
    return Mesh(v + np.asarray(center, float), m.faces, name="rounded_box")


@_checked
def cylinder(radius: float = 0.5, height: float = 1.0, n_around: int = 32, n_height: int = 1,
             center=(0.0, 0.0, 0.0)) -> Mesh:
    """A closed cylinder along +z, centred, with flat caps (fans to a centre vertex).

    Returns
    -------
    Mesh
        ``2 * n_around * (n_height + 1)`` triangles.
    """
    z = np.linspace(-height / 2.0, height / 2.0, n_height + 1)
    m = _lathe_z(np.full(z.size, float(radius)), z, n_around, -height / 2.0, height / 2.0, "cylinder")
    return Mesh(m.vertices + np.asarray(center, float), m.faces, name="cylinder")


# ----------------------------------------------------------------------------- chain links

@_checked
def capsule_link(length: float = 3.0, thickness: float = 1.0, n_around: int = 16, n_len: int = 8) -> Mesh:
    """A convex chain link: a capsule along +x from x=0 (joint end) to x=``length``.

    Hemispherical caps of diameter ``thickness`` (quarter-ellipse caps when
    ``length < thickness``) joined by a cylinder; the length:thickness ratio is
    ``length / thickness``.

    Parameters
    ----------
    n_around : int
        Points per ring (a multiple of 4 puts vertices at the full thickness in y and z).
    n_len : int
        Segments along the cylindrical part; each cap has ``max(2, n_around // 4)`` rings.

    Returns
    -------
    Mesh
        ``2 * n_around * (2 * max(2, n_around // 4) + n_len - 1)`` triangles for
        ``length > thickness`` (480 for the defaults).
    """
    r = thickness / 2.0
    s, scale = _stadium_profile(length, r, max(2, n_around // 4), n_len)
    c, si = _circle(n_around)
    sections = r * scale[:, None, None] * np.stack([c, si], -1)[None]
    return _ring_mesh(_rings_along_x(s, sections), (0.0, 0.0, 0.0), (length, 0.0, 0.0), "capsule_link")


def _keel_section(n_around: int, dent: float) -> np.ndarray:
    """Unit cross-section (n, 2) in the (y, z) plane with a concave groove along -z.

    The lower half of the unit circle is squashed vertically by ``1 - 2 dent g(y)`` with
    ``g(y) = (1 - (|y|/0.75)^4)^2`` (zero for ``|y| >= 0.75``): the keel line moves from
    z=-1 up to z=-1+2*dent while the width stays 2. Each vertical line meets the section in
    one interval, so the curve stays simple for ``dent < 0.5``.
    """
    y, z = _circle(n_around)
    g = np.clip(1.0 - (np.abs(y) / 0.75) ** 4, 0.0, None) ** 2
    z = np.where(z < 0.0, z * (1.0 - 2.0 * dent * g), z)
    return np.stack([y, z], -1)


@_checked
def boat_hull_link(length: float = 6.0, thickness: float = 1.0, dent: float = 0.35, n_around: int = 24,
                   n_len: int = 24) -> Mesh:
    """A non-convex chain link: :func:`capsule_link` with a concave keel groove along -z.

    Every cross-section is a scaled copy of a circle whose underside is pushed in by
    ``dent * thickness`` at the keel line (see :func:`_keel_section`), so the groove runs the
    full length. Maximum thickness (the y extent) is ``thickness``; the length:maximum
    thickness ratio is ``length / thickness``. At the defaults the convex hull is ~15%
    larger than the body.

    Parameters
    ----------
    dent : float
        Groove depth as a fraction of the thickness, ``0 <= dent < 0.5``.

    Returns
    -------
    Mesh
        ``2 * n_around * (2 * max(2, n_around // 4) + n_len - 1)`` triangles (1680 for the defaults).
    """
    if not 0.0 <= dent < 0.5:
        raise ValueError(f"dent must be in [0, 0.5), got {dent}")
    r = thickness / 2.0
    s, scale = _stadium_profile(length, r, max(2, n_around // 4), n_len)
    sections = r * scale[:, None, None] * _keel_section(n_around, dent)[None]
    return _ring_mesh(_rings_along_x(s, sections), (0.0, 0.0, 0.0), (length, 0.0, 0.0), "boat_hull_link")


# ----------------------------------------------------------------------------- authored objects

def _catmull_rom(points: np.ndarray, per_segment: int) -> np.ndarray:
    """Dense uniform Catmull-Rom curve (k, d) through control ``points`` (p, d), end points included."""
    p = np.concatenate([2 * points[:1] - points[1:2], points, 2 * points[-1:] - points[-2:-1]])
    t = np.linspace(0.0, 1.0, per_segment, endpoint=False)[:, None, None]
    p0, p1, p2, p3 = p[:-3][None], p[1:-2][None], p[2:-1][None], p[3:][None]
    c = 0.5 * ((2 * p1) + (-p0 + p2) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t ** 2
               + (-p0 + 3 * p1 - 3 * p2 + p3) * t ** 3)
    return np.concatenate([c.transpose(1, 0, 2).reshape(-1, points.shape[1]), points[-1:]])


def _resample(curve: np.ndarray, n: int) -> np.ndarray:
    """``n`` points (n, d) evenly spaced by arc length along a polyline (k, d), ends excluded."""
    seg = np.linalg.norm(np.diff(curve, axis=0), axis=1)
    arc = np.concatenate([[0.0], np.cumsum(seg)])
    at = np.linspace(0.0, arc[-1], n + 2)[1:-1]
    return np.stack([np.interp(at, arc, curve[:, k]) for k in range(curve.shape[1])], 1)


# (r, z) profile of the teapot body, bottom pole to lid-knob pole: flat foot, belly,
# shoulder, a small lid rim, a domed lid, a thin knob neck and a round knob.
_TEAPOT_PROFILE = np.array([
    (0.00, 0.00), (0.30, 0.00), (0.58, 0.00), (0.70, 0.04), (0.88, 0.16), (0.99, 0.36),
    (1.00, 0.50), (0.95, 0.68), (0.83, 0.85), (0.68, 0.96), (0.62, 1.00), (0.64, 1.03),
    (0.56, 1.06), (0.40, 1.12), (0.22, 1.17), (0.08, 1.21), (0.07, 1.25), (0.12, 1.30),
    (0.12, 1.36), (0.06, 1.41), (0.00, 1.43)])


@_checked
def teapot_like(n_around: int = 48, n_profile: int = 40) -> Mesh:
    """A teapot-like object: a lathed body plus a spout and a handle (three closed components).

    The body revolves a hand-written profile (:data:`_TEAPOT_PROFILE`: foot, belly,
    shoulder, lid, knob) about +z, the bottom at z=0 and the knob top at z~1.43, belly
    radius 1. The spout is a tapered tube along a bent (quadratic Bezier) centre line on the
    +x side, yawed 8 degrees about z so the object has no mirror symmetry; the handle is a
    tube along a circular arc on the -x side. Both start inside the body (they
    interpenetrate it).

    Parameters
    ----------
    n_around : int
        Points per body ring; the spout uses ``n_around // 3`` and the handle ``n_around // 4``.
    n_profile : int
        Resolution along the profile: ``7 n_profile // 10`` body rings, ``n_profile // 2``
        spout rings and ``2 n_profile // 5`` handle rings.

    Returns
    -------
    Mesh
        3,712 triangles for the defaults.
    """
    n_body = max(4, 7 * n_profile // 10)
    rz = _resample(_catmull_rom(_TEAPOT_PROFILE, 16), n_body)
    rz[:, 1] = np.maximum(rz[:, 1], 0.0)  # the spline dips slightly below the flat foot
    body = _lathe_z(rz[:, 0], rz[:, 1], n_around, _TEAPOT_PROFILE[0, 1], _TEAPOT_PROFILE[-1, 1], "body")

    t = np.linspace(0.0, 1.0, max(3, n_profile // 2))[:, None]
    p0, p1, p2 = np.array([0.55, 0.0, 0.30]), np.array([1.30, 0.0, 0.40]), np.array([1.58, 0.0, 1.02])
    centers = (1 - t) ** 2 * p0 + 2 * (1 - t) * t * p1 + t ** 2 * p2
    spout = _sweep(centers, 0.17 - 0.11 * t[:, 0], max(3, n_around // 3), (0.0, 1.0, 0.0), "spout")
    spout = transformed(spout, _pose(_rotation((0, 0, 1), np.radians(8.0))))

    a = np.radians(np.linspace(-125.0, 125.0, max(3, 2 * n_profile // 5)))
    centers = np.stack([-0.92 - 0.40 * np.cos(a), np.zeros_like(a), 0.55 + 0.40 * np.sin(a)], 1)
    handle = _sweep(centers, 0.075, max(3, n_around // 4), (0.0, 1.0, 0.0), "handle")
    return merge([body, spout, handle], name="teapot_like")


@_checked
def slender_aircraft(n: int = 32) -> Mesh:
    """An aircraft-like model along +x: slender fuselage, swept wing, tail, two engine pods.

    The fuselage (x from 0 to 10, radius 0.5: 10:1) is a surface of revolution with an
    elliptic nose and a long elliptic tail cone. The wing, the horizontal tail and the
    vertical fin are thin ellipsoids, swept back by a shear ``x += k |y|``; two capsule
    engine pods hang under the wing. Six closed components, interpenetrating.

    Parameters
    ----------
    n : int
        Resolution (>= 8): fuselage ``n`` around and ``3 n / 2 - 2`` rings; wing ``2 n``
        around and ``n / 4 + 4`` bands; tail surfaces ``n`` around, ``n / 8 + 4`` bands;
        pods ``n / 2`` around.

    Returns
    -------
    Mesh
        5,952 triangles for the default ``n = 32``.
    """
    n = max(8, int(n))
    length, radius, nose, tail = 10.0, 0.5, 0.2, 0.6  # nose/tail: fractions of the length
    k = n // 2
    a = np.arange(1, k + 1) * (np.pi / 2 / k)
    u = np.concatenate([nose * (1 - np.cos(a)), np.linspace(nose, tail, k + 1)[1:-1],
                        tail + (1 - tail) * np.sin(a[:-1])])
    r = radius * np.concatenate([np.sin(a), np.ones(k - 1), np.cos(a[:-1])])
    c, s = _circle(n)
    sections = r[:, None, None] * np.stack([c, s], -1)[None]
    fuselage = _ring_mesh(_rings_along_x(length * u, sections), (0, 0, 0), (length, 0, 0), "fuselage")

    def surface(radii, center, n_lon, n_lat, sweep, dihedral=0.0):
        m = ellipsoid(radii, n_lat, n_lon)
        v = m.vertices.copy()
        v[:, 0] += sweep * np.abs(v[:, 1])
        v[:, 2] += dihedral * np.abs(v[:, 1])
        return Mesh(v + np.asarray(center, float), m.faces)

    wing = surface((1.1, 4.6, 0.09), (5.0, 0.0, -0.15), 2 * n, n // 4 + 4, sweep=0.35, dihedral=0.06)
    htail = surface((0.55, 1.8, 0.05), (9.2, 0.0, 0.05), n, n // 8 + 4, sweep=0.35)
    fin = ellipsoid((0.7, 0.05, 0.9), n // 8 + 4, n)
    fv = fin.vertices.copy()
    fv[:, 0] += 0.5 * fv[:, 2]  # linear shear: swept fin
    fin = Mesh(fv + (9.0, 0.0, 0.55), fin.faces)
    pods = [transformed(capsule_link(1.8, 0.36, max(4, n // 2), 4), _pose(trans=(4.4 + 0.35 * 1.9, y, -0.42)))
            for y in (-1.9, 1.9)]
    return merge([fuselage, wing, htail, fin, *pods], name="slender_aircraft")


# ----------------------------------------------------------------------------- hand, table

@_checked
def palm(width: float = 0.9, length: float = 1.0, thickness: float = 0.3, rounding: float | None = None,
         n_round: int = 4, n_flat: int = 4) -> Mesh:
    """A rounded-box palm: x from 0 (wrist joint) to ``length``, centred in y and z.

    ``width`` is the size along y and ``thickness`` along z.

    Parameters
    ----------
    rounding : float, optional
        Edge radius; default ``0.4 * thickness``.

    Returns
    -------
    Mesh
        See :func:`rounded_box` (``12 (2 n_round + n_flat)**2`` triangles: 1,728 by default).
    """
    r = 0.4 * thickness if rounding is None else rounding
    m = rounded_box((length, width, thickness), r, (length / 2.0, 0.0, 0.0), n_round, n_flat)
    return Mesh(m.vertices, m.faces, name="palm")


@_checked
def phalanx(length: float = 0.4, radius: float = 0.09, n_around: int = 16, n_len: int = 4) -> Mesh:
    """A finger bone: a capsule of radius ``radius`` along +x from x=0 (joint) to ``length``."""
    m = capsule_link(length, 2.0 * radius, n_around, n_len)
    return Mesh(m.vertices, m.faces, name="phalanx")


@_checked
def table(width: float = 1.6, depth: float = 0.9, height: float = 0.75, top_thickness: float = 0.05,
          leg_radius: float = 0.04, n_around: int = 16) -> Mesh:
    """A table: a box top with its upper face at z=``height`` and four cylinder legs (five components).

    The top is centred at x=y=0; the legs stand on z=0, are inset by ``2 leg_radius`` from
    the top's edges and reach half-way into the top (they interpenetrate it).

    Returns
    -------
    Mesh
        ``12 + 4 * 4 * n_around`` triangles (268 by default).
    """
    top = box((width, depth, top_thickness), (0.0, 0.0, height - top_thickness / 2.0))
    leg_h = height - top_thickness / 2.0
    inset = 2.0 * leg_radius
    legs = [cylinder(leg_radius, leg_h, n_around, 1,
                     (sx * (width / 2 - inset), sy * (depth / 2 - inset), leg_h / 2))
            for sx in (-1, 1) for sy in (-1, 1)]
    return merge([top, *legs], name="table")


# ----------------------------------------------------------------------------- bumpy, waves

def _bump_field(dirs: np.ndarray, seed: int, n_bumps: int) -> np.ndarray:
    """Smooth deterministic field on unit directions (k, 3) -> (k,) with values in [-1, 1].

    A normalised sum of ``n_bumps`` cosine lobes ``w cos(f d.a + phase)`` with random unit
    axes ``a``, frequencies ``f`` in {pi, 2 pi, 3 pi} and weights drawn from ``seed``; its
    gradient is bounded by ``3 pi`` (radians of direction).
    """
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(n_bumps, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    freq = rng.integers(1, 4, n_bumps) * np.pi
    phase = rng.uniform(0.0, _TAU, n_bumps)
    w = rng.uniform(0.5, 1.0, n_bumps)
    return np.cos(dirs @ axes.T * freq + phase) @ w / w.sum()


@_checked
def perturbed_sphere(radius: float = 1.0, amplitude: float = 0.05, n_lat: int = 50, n_lon: int = 50,
                     seed: int = 0, n_bumps: int = 6, center=(0.0, 0.0, 0.0)) -> Mesh:
    """A bumpy sphere: :func:`uv_sphere` directions scaled to ``radius + amplitude * f(direction)``.

    ``f`` is a smooth function in [-1, 1] (see :func:`_bump_field`), so every vertex lies at
    a distance in ``[radius - amplitude, radius + amplitude]`` from ``center``.
    Requires ``amplitude < radius``.

    Returns
    -------
    Mesh
        ``2 n_lon (n_lat - 1)`` triangles (4,900 by default).
    """
    if not 0.0 <= amplitude < radius:
        raise ValueError(f"amplitude must be in [0, radius), got {amplitude}")
    unit = ellipsoid((1.0, 1.0, 1.0), n_lat, n_lon).vertices
    r = radius + amplitude * _bump_field(unit, seed, n_bumps)
    return Mesh(unit * r[:, None] + np.asarray(center, float), uv_sphere(1.0, n_lat, n_lon).faces,
                name="perturbed_sphere")


def jittered_icosphere(radius: float = 1.0, amplitude: float = 0.01, subdivisions: int = 4, seed: int = 0,
                       center=(0.0, 0.0, 0.0)) -> Mesh:
    """An :func:`icosphere` whose vertex coordinates are randomly perturbed (Fünzig &
    Fellner's parallel-close scene: "randomly perturbing the inner sphere coordinates"):
    every coordinate moves by a seeded uniform offset in ``[-amplitude, amplitude]``, so
    every vertex lies within ``sqrt(3) amplitude`` of the sphere. ``20 * 4**s`` triangles
    (5,120 for s = 4, the paper's spheres have 5,140). Requires ``amplitude < radius / 4``
    (the triangles keep their orientation)."""
    if not 0.0 <= amplitude < 0.25 * radius:
        raise ValueError(f"amplitude must be in [0, radius / 4), got {amplitude}")
    m = icosphere(radius, subdivisions)
    rng = np.random.default_rng(seed)
    v = m.vertices + rng.uniform(-amplitude, amplitude, m.vertices.shape) + np.asarray(center, float)
    return Mesh(v, m.faces, name="jittered_icosphere")


@_checked
def wave_sheet(size: float = 2.0, n: int = 64) -> Mesh:
    """An open flat square grid in the xy-plane (z=0), centred, normals +z.

    Returns
    -------
    Mesh
        ``(n + 1)**2`` vertices and ``2 n**2`` triangles; vertex ``i * (n + 1) + j`` sits at
        grid position (x_i, y_j).
    """
    xs = np.linspace(-size / 2.0, size / 2.0, n + 1)
    xx, yy = np.meshgrid(xs, xs, indexing="ij")
    v = np.stack([xx.ravel(), yy.ravel(), np.zeros(xx.size)], 1)
    return Mesh(v, _grid_quads(np.arange((n + 1) ** 2).reshape(n + 1, n + 1)), name="wave_sheet")


def wave_displace(vertices, t: float, amplitude: float = 0.1, wavelength: float = 0.7, direction=(1.0, 0.0),
                  speed: float = 0.5) -> np.ndarray:
    """A travelling sine wave in z: ``z + amplitude * sin(2 pi (d . (x, y) - speed t) / wavelength)``.

    Parameters
    ----------
    vertices : (n, 3) float
        Rest positions (e.g. ``wave_sheet().vertices``).
    t : float
        Time; the crests move along the unit vector ``direction`` at ``speed``.

    Returns
    -------
    (n, 3) float64
        A new array; x and y are copied unchanged.
    """
    v = np.array(vertices, dtype=np.float64)
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    v[:, 2] += amplitude * np.sin(_TAU * (v[:, :2] @ d - speed * t) / wavelength)
    return v


def deform_torus(base_vertices, t: float, amplitude: float = 0.3, major: float = 1.0, n_waves: int = 3,
                 speed: float = 1.0) -> np.ndarray:
    """Pulse the tube of a torus (about +z, ring radius ``major``) with a travelling wave.

    Each vertex moves along its offset from the tube axis, scaled by
    ``1 + amplitude * sin(n_waves * u - 2 pi speed t)`` with ``u`` its angle about z. For
    ``0 <= amplitude < 1`` and ``minor * (1 + amplitude) < major`` the result stays a valid
    embedded torus (same topology).

    Returns
    -------
    (n, 3) float64
        New vertex positions.
    """
    v = np.asarray(base_vertices, dtype=np.float64)
    u = np.arctan2(v[:, 1], v[:, 0])
    axis = np.stack([major * np.cos(u), major * np.sin(u), np.zeros_like(u)], 1)
    f = 1.0 + amplitude * np.sin(n_waves * u - _TAU * speed * t)
    return axis + (v - axis) * f[:, None]


@_checked
def wave_torus(major: float = 1.0, minor: float = 0.25, n_major: int = 64, n_minor: int = 16, t: float = 0.0,
               amplitude: float = 0.3, n_waves: int = 3, speed: float = 1.0) -> Mesh:
    """:func:`torus` deformed by :func:`deform_torus` at time ``t`` (same faces as ``torus``)."""
    base = torus(major, minor, n_major, n_minor)
    v = deform_torus(base.vertices, t, amplitude, major, n_waves, speed)
    return Mesh(v, base.faces, name="wave_torus")


# ----------------------------------------------------------------------------- combinators

def merge(meshes, name: str = "merged") -> Mesh:
    """Concatenate meshes into one (faces re-indexed); components are kept as they are."""
    meshes = list(meshes)
    if not meshes:
        raise ValueError("merge: no meshes given")
    offsets = np.cumsum([0] + [m.n_vertices for m in meshes[:-1]])
    v = np.concatenate([m.vertices for m in meshes])
    f = np.concatenate([m.faces.astype(np.int64) + o for m, o in zip(meshes, offsets)])
    return Mesh(v, f, name=name)


def transformed(mesh: Mesh, pose) -> Mesh:
    """``mesh`` with vertices mapped by a (4, 4) affine ``pose`` (``v -> A v + b``).

    If ``det(A) < 0`` (a reflection) the triangles are re-wound so they stay
    counter-clockwise seen from outside.
    """
    p = np.asarray(pose, dtype=np.float64)
    if p.shape != (4, 4):
        raise ValueError(f"pose: expected shape (4, 4), got {p.shape}")
    a, b = p[:3, :3], p[:3, 3]
    faces = mesh.faces[:, ::-1] if np.linalg.det(a) < 0 else mesh.faces
    return Mesh(mesh.vertices @ a.T + b, faces, name=mesh.name)
