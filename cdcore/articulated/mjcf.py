"""MJCF (MuJoCo) robots as articulated bodies.

The file is compiled by MuJoCo itself (``mujoco.MjModel.from_xml_path``, imported lazily:
the ``mjcf`` extra) and everything is read from the compiled model, so ``<default>``
classes, ``childclass``, ``<frame>``, ``<include>``, ``fromto``, compiler angle units, mesh
scaling and MuJoCo's re-centring of meshes (``geom_pos``/``geom_quat`` already hold the
mesh's own frame; ``mesh_vert`` is in it) are exactly MuJoCo's.

Kinematics (``mj_kinematics``): a body's frame is its parent's times ``body_pos``/
``body_quat``; each of its joints then moves it in model order: a hinge rotates by
``q - qpos0`` about ``jnt_axis`` through ``jnt_pos``, a slide translates by ``q - qpos0``
along ``jnt_axis``. Hinge and slide joints are the robot's degrees of freedom (``q`` holds
their ``qpos`` values). Ball joints are held at their ``qpos0`` orientation and free joints
at their ``qpos0`` pose (a free joint is only accepted on a body attached to the world, as
MuJoCo places it in world coordinates); neither takes a ``q`` entry.

Collision geoms are those MuJoCo can collide: ``contype`` or ``conaffinity`` non-zero, or
named by an explicit ``<pair>``. Spheres, capsules, boxes, cylinders and ellipsoids are kept
as exact primitives (``robot.geoms``); meshes as their triangles (``meshes="exact"``) or
as their convex hull (``meshes="hull"``, what MuJoCo collides). Planes and height fields
(infinite or terrain geoms, not robot parts) are left out with a warning and listed in
``robot.skipped_geoms``; SDF geoms are refused.

Pair filter, as ``mj_collision`` applies it: two geoms may touch when they are in different
weld bodies (bodies joined without a joint are one), their weld bodies are not parent and
child (unless ``<flag filterparent="disable"/>``; the world is never a filtered parent),
``(contype1 & conaffinity2) | (contype2 & conaffinity1)`` is non-zero and their bodies are
not ``<exclude>``d; explicit ``<pair>``s are always checked. A link pair is checked when
one of its geom pairs is; ``parent_child_pairs()`` gives the weld-parent pairs and
``default_disabled`` the rest of the filter, which ``self_collision_pairs`` applies unless
``disabled`` is given.
"""
from __future__ import annotations

from typing import Any

import os
import re
import stat
import warnings

import numpy as np

from .. import shapes
from ..mesh import MAX_COORD, Mesh
from ..primitives import Primitive, tessellate
from ._robot_fk import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE
from .body import Link
from .primlinks import PRIMITIVE_BVS, PRIMITIVE_MODES, attach, link_mesh
from .urdf import JointInfo, RobotBody, robot_rest_poses

MESH_MODES = ("exact", "hull")
# mjtGeom codes
_PLANE, _HFIELD, _SPHERE, _CAPSULE, _ELLIPSOID, _CYLINDER, _BOX, _MESH, _SDF = range(9)
_PRIM_KIND = {_SPHERE: "sphere", _CAPSULE: "capsule", _ELLIPSOID: "ellipsoid", _CYLINDER: "cylinder", _BOX: "box"}
# mjtJoint codes
_FREE, _BALL, _SLIDE, _HINGE = range(4)
_JOINT_TYPE_NAMES = {_FREE: "free", _BALL: "ball", _SLIDE: "slide", _HINGE: "hinge"}


class MJCFError(ValueError):
    """The MJCF file is invalid or uses something not supported; the message names the file
    and the element."""


class MJCFRobot(RobotBody):
    """A :class:`RobotBody` loaded from MJCF (see :func:`load_mjcf`).

    Extra attributes
    ----------------
    geoms : list of GeomInfo
        The collision geoms, by link (a geom's ``link`` indexes ``link_names``).
    geom_mask : (G, G) bool
        Geom pairs MuJoCo's filter lets through (symmetric, diagonal False).
    default_disabled : list of (str, str)
        Link pairs no geom pair of which passes the filter (weld-parent pairs excluded:
        see ``parent_child_pairs``); ``self_collision_pairs`` skips them by default.
    skipped_geoms : list of (str, str)
        (geom name, reason) of collision geoms left out (planes, height fields).
    meshes : {"exact", "hull"}
    """
    geoms: list
    geom_mask: np.ndarray
    default_disabled: list
    skipped_geoms: list
    meshes: str
    body_ids: np.ndarray
    _geom_link: np.ndarray
    _geom_local: np.ndarray
    _weld_parent_pairs: set
    _packed: Any

    def parent_child_pairs(self) -> set:
        """Link index pairs MuJoCo's parent filter removes (weld bodies that are parent and
        child); empty when the model disables ``filterparent``."""
        return set(self._weld_parent_pairs)

    def adjacent_pairs(self) -> set:
        out = super().adjacent_pairs()
        index = {n: i for i, n in enumerate(self.link_names)}
        for a, b in self.default_disabled:
            out.add((min(index[a], index[b]), max(index[a], index[b])))
        return out

    def geom_poses(self, q, root_pose=None) -> np.ndarray:
        """(G, 4, 4) world poses of the collision geoms at joint values ``q`` (n_dofs,)."""
        link_poses = self.fk(q, root_pose)
        return np.einsum("gij,gjk->gik", link_poses[self._geom_link], self._geom_local)

    def colliding_geoms(self, q, root_pose=None, filtered: bool = True) -> list:
        """(geom, geom) name pairs whose solids intersect at ``q`` (each pair in geom order).

        Exact shape tests (``cdcore._prim``: GJK on support functions, closed forms for
        spheres and capsules) on the geoms as solids: meshes as their convex hulls whatever
        ``meshes`` is (MuJoCo's semantics). ``filtered``: only the pairs MuJoCo's filter
        lets through (``geom_mask``), else every pair of geoms in different links."""
        from .._prim import pack_primitives, prim_pairs_intersect

        poses = self.geom_poses(q, root_pose)
        G = len(self.geoms)
        if filtered:
            ii, jj = np.nonzero(np.triu(self.geom_mask, 1))
        else:
            gl = self._geom_link
            ii, jj = np.nonzero(np.triu(gl[:, None] != gl[None, :], 1))
        if self._packed is None:
            self._packed = pack_primitives([g.hull for g in self.geoms])
        kind, size, vert_off, verts = self._packed
        pairs = np.stack([ii, jj], 1).astype(np.int64) if G else np.zeros((0, 2), np.int64)
        hit = prim_pairs_intersect(kind, size, vert_off, verts, np.ascontiguousarray(poses), pairs)
        names = [g.name for g in self.geoms]
        return [(names[i], names[j]) for (i, j), h in zip(pairs.tolist(), hit) if h]


class GeomInfo:
    """A collision geom: ``name`` (MuJoCo's, or ``geom<k>`` when unnamed, ``geom<k>_1``... when
    the model has that name too), ``id`` its MuJoCo
    index, ``body`` its body's name, ``link`` the link index, ``type`` (MuJoCo's type name),
    ``primitive`` the exact shape in the link frame (a ``convex`` one for hull-mode meshes,
    None for exact meshes), ``mesh`` the triangles in the link frame (tessellated
    primitives), ``hull`` the convex solid in the link frame (what ``colliding_geoms``
    tests), ``contype``/``conaffinity``."""
    __slots__ = ("name", "id", "body", "link", "type", "primitive", "mesh", "hull", "contype", "conaffinity")

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __repr__(self):
        return f"GeomInfo({self.name!r}, {self.type}, body={self.body!r})"


def _pose(pos, quat) -> np.ndarray:
    w, x, y, z = (float(v) for v in quat)
    n = np.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    T = np.eye(4)
    T[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                 [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                 [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    T[:3, 3] = pos
    return T


def _translate(p) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T


# Files a model names: every attribute file, fileright, fileleft... (<include>, <model>,
# <mesh>, <texture>, <hfield>, <skin>, <flexcomp>...), and the compiler's directories.
# Matched anywhere in the raw text, overlapping (a zero-width look-ahead at every position),
# so neither malformed XML nor a stray quote in a comment can hide one.
_FILE_ATTR = re.compile(r"""(?=(?<![\w.:-])(file\w*|meshdir|texturedir|assetdir|strippath)"""
                        r"""\s*=\s*(?:"([^"]*)"|'([^']*)'))""")
_XML_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]+|#[xX][0-9a-fA-F]+);")
_ENTITY_CHARS = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_MAX_INCLUDE_DEPTH = 16
_MAX_DIRS = 64
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"))


def _unescape(v):
    def one(mt):
        e = mt.group(1)
        if e[0] != "#":
            return _ENTITY_CHARS[e]
        try:
            return chr(int(e[2:], 16) if e[1] in "xX" else int(e[1:]))
        except (ValueError, OverflowError):
            return mt.group(0)
    return _XML_ENTITY.sub(one, v)


def _spellings(v, strip):
    """The paths an attribute value may name: as written and with its XML entities decoded
    (cut at a NUL, as a C string is), trimmed, with normalised whitespace, and its file name
    alone under ``<compiler strippath="true">``."""
    out = set()
    for x in (v, _unescape(v)):
        x = x.split("\0", 1)[0]
        for y in (x, x.strip(), re.sub(r"[\t\n\r]", " ", x), re.sub(r"\s+", " ", x).strip()):
            out.add(y)
            if strip:
                out.add(os.path.basename(y.replace("\\", "/")))
    out.discard("")
    return out


class _NotRegular(Exception):
    def __init__(self, path, st):
        super().__init__(path)
        self.path = path
        self.kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")


def _read_regular(path, limit=-1):
    """(stat, up to ``limit`` bytes (all: -1)) of ``path`` if it is a regular file, None when it is
    missing or unreadable; raises ``_NotRegular`` for anything else (os.stat, then opened
    without blocking and checked again on the descriptor: a FIFO never stalls it)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _NotRegular(path, st)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _NotRegular(path, st)
        with os.fdopen(os.dup(fd), "rb") as f:
            return st, f.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _check_files(path, fname):
    """Refuse a model that names (itself or in the files it includes, recursively) a path
    that exists but is not a regular file: MuJoCo would open a FIFO and block for ever, or
    read a device. Every path MuJoCo may try is checked: the name relative to the model's
    directory and to every included file's, alone or under any ``meshdir``/``texturedir``/
    ``assetdir``. A missing file is left to MuJoCo's own error. Included files (``<include>``,
    ``<model>``) are found the same way: any named regular file whose text starts with ``<``
    is scanned too, down to ``_MAX_INCLUDE_DEPTH``."""
    refs = []  # (value as written, depth of the file naming it); all checked again (cheaply:
    # ``checked``) after each round of included files, which may bring new bases and dirs
    bases = {os.path.dirname(path)}
    dirs = {""}
    strip = False
    seen_files: set = set()
    checked: set = set()
    pending = [(path, 0)]
    while pending:
        for fpath, depth in pending:
            got = _read_regular(fpath)
            if got is None:
                continue
            st, data = got
            if (st.st_dev, st.st_ino) in seen_files:
                continue
            seen_files.add((st.st_dev, st.st_ino))
            bases.add(os.path.dirname(fpath))
            for mt in _FILE_ATTR.finditer(data.decode("utf-8", "surrogateescape")):
                attr, v = mt.group(1), mt.group(2) if mt.group(2) is not None else mt.group(3)
                if attr == "strippath":
                    strip = strip or _unescape(v).strip().lower() == "true"
                elif attr.startswith("file"):
                    refs.append((v, depth))
                else:
                    dirs |= _spellings(v, False)
            if len(dirs) > _MAX_DIRS or len(bases) > _MAX_DIRS:
                raise MJCFError(f"{fname}: more than {_MAX_DIRS} different included-file directories or "
                                f"meshdir/texturedir/assetdir values: refused")
        pending = []
        for v, depth in refs:
            for name in _spellings(v, strip):
                for cand in {os.path.join(b, d, name) for b in bases for d in dirs}:
                    if cand in checked:
                        continue
                    checked.add(cand)
                    try:
                        got = _read_regular(cand, 512)
                    except _NotRegular as exc:
                        raise MJCFError(f"{fname}: the model names file {v!r}, and {exc.path} is {exc.kind}, not "
                                        f"a regular file: refused (MuJoCo would block or fail reading it)") from None
                    if got is not None and got[1].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):
                        if depth + 1 > _MAX_INCLUDE_DEPTH:
                            raise MJCFError(f"{fname}: included files nested deeper than {_MAX_INCLUDE_DEPTH} "
                                            f"(at {cand}): refused")
                        pending.append((cand, depth + 1))


def _compile(path):
    try:
        import mujoco  # pyright: ignore[reportMissingModuleSource]
        mujoco: Any = mujoco  # compiled, no type stubs
    except ImportError:
        raise ImportError("load_mjcf needs the mujoco package: pip install 'cdcore[mjcf]'") from None
    fname = os.path.basename(path)
    try:
        return mujoco.MjModel.from_xml_path(path)
    except Exception as exc:  # mujoco raises ValueError with its compiler's message
        msg = str(exc).strip().replace("\n", " ")
        raise MJCFError(f"{fname}: MuJoCo cannot compile it: {msg}") from None


def _unique(name, used):
    """``name``, or ``name_1``, ``name_2``... the first not in ``used`` (which it joins)."""
    out, k = name, 0
    while out in used:
        k += 1
        out = f"{name}_{k}"
    used.add(out)
    return out


def _names(m, objtype, count, prefix):
    """The names of MuJoCo's objects ``0..count-1``: the model's own, and ``<prefix><id>`` for
    unnamed ones, made unique (a suffix ``_1``, ``_2``... when the model or an earlier invented
    name already has it: an unnamed body 2 beside a body named "body2" must not share its
    name, the kinematic frames are looked up by name)."""
    import mujoco  # pyright: ignore[reportMissingModuleSource]
    mujoco: Any = mujoco  # compiled, no type stubs
    names = [mujoco.mj_id2name(m, objtype, i) or None for i in range(count)]
    used = {n for n in names if n}
    return [n if n else _unique(f"{prefix}{i}", used) for i, n in enumerate(names)]


def load_mjcf(path, meshes: str = "exact", mesh_bv: str = "obb", primitives: str = "exact") -> MJCFRobot:
    """Load an MJCF robot (a MuJoCo model file) as an articulated body.

    Parameters
    ----------
    path : str or os.PathLike
        The model file (a scene or a robot file MuJoCo compiles on its own).
    meshes : {"exact", "hull"}
        Mesh geoms as their triangles, or as their convex hulls (what MuJoCo collides:
        reproduces its contacts).
    mesh_bv : str
        Bounding-volume type of the links' mesh hierarchies.
    primitives : {"exact", "tessellate"}
        Spheres, capsules, boxes, cylinders, ellipsoids (and hull-mode meshes) as exact
        solids (``articulated.primlinks``; needs a box ``mesh_bv``), or as triangle
        tessellations (every vertex on the surface, 48 around, 24 latitude bands).

    Returns
    -------
    MJCFRobot
        ``joint_names``: hinge and slide joints in model order (ball joints held at
        ``qpos0``, free joints at their ``qpos0`` pose); ``limits`` (m, 2): ``jnt_range``,
        unlimited hinges [-pi, pi] (``continuous``), unlimited slides +-``stat.extent``;
        ``link_names``: bodies with collision geoms (MuJoCo's names; the world body as a
        geometry-less root when needed to join several trees, as a fixed root link with its
        geoms when ``<worldbody>`` holds collision geoms); ``fk(q)`` their poses as
        MuJoCo's ``xpos``/``xmat`` with the other joints at ``qpos0``. Unnamed bodies,
        joints and geoms are ``body<id>``, ``joint<id>``, ``geom<id>``, and a joint's
        kinematic frame (in ``frame_names``) ``<body>/<joint>``; an invented name the model
        already uses gets a suffix ``_1``, ``_2``... (names are unique).

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    MJCFError (ValueError)
        MuJoCo cannot compile the file (its message), an SDF geom, a free joint below a
        moving body, or no collision geom at all; the model or a file it includes names a
        file (``<include>``, a mesh, texture, height field, skin...) that exists but is not a
        regular file (a FIFO would block MuJoCo for ever, a device would be read): checked
        before MuJoCo opens anything, on every path MuJoCo may try.
    ImportError
        ``mujoco`` is not installed.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"MJCF file not found: {path}")
    if meshes not in MESH_MODES:
        raise ValueError(f"meshes: expected one of {MESH_MODES}, got {meshes!r}")
    if primitives not in PRIMITIVE_MODES:
        raise ValueError(f"primitives: expected one of {PRIMITIVE_MODES}, got {primitives!r}")
    exact_prims = primitives == "exact" and mesh_bv in PRIMITIVE_BVS  # other hierarchies: tessellated
    import mujoco  # pyright: ignore[reportMissingModuleSource]
    mujoco: Any = mujoco  # compiled, no type stubs

    fname = os.path.basename(path)
    _check_files(path, fname)
    m = _compile(path)
    OBJ = mujoco.mjtObj
    body_names = _names(m, OBJ.mjOBJ_BODY, m.nbody, "body")
    if body_names[0] == "body0":  # MuJoCo names it "world"
        body_names[0] = _unique("world", set(body_names))
    geom_names = _names(m, OBJ.mjOBJ_GEOM, m.ngeom, "geom")
    kin, joint_names, limits, continuous, joints, body_frame = _kinematics(m, body_names, fname)

    # collision geoms
    in_pair = set(m.pair_geom1.tolist()) | set(m.pair_geom2.tolist()) if m.npair else set()
    by_body: dict[int, list] = {}
    skipped = []
    for g in range(m.ngeom):
        if not (m.geom_contype[g] or m.geom_conaffinity[g] or g in in_pair):
            continue
        t = int(m.geom_type[g])
        gname = geom_names[g]
        where = f"{fname}: <geom name={gname!r}>"
        if t in (_PLANE, _HFIELD):
            reason = "plane (infinite)" if t == _PLANE else "height field"
            skipped.append((gname, reason))
            continue
        if t not in _PRIM_KIND and t != _MESH:
            raise MJCFError(f"{where}: geom type {t} (SDF or unknown) is not supported; supported: "
                            f"sphere, capsule, box, cylinder, ellipsoid, mesh")
        by_body.setdefault(int(m.geom_bodyid[g]), []).append((g, gname, t))
    if skipped:
        warnings.warn(f"{fname}: collision geoms left out: " + ", ".join(f"{n} ({r})" for n, r in skipped),
                      stacklevel=2)
    if not by_body:
        raise MJCFError(f"{fname}: the model has no collision geom (sphere, capsule, box, cylinder, ellipsoid or "
                        f"mesh with contype/conaffinity set)")

    # links: bodies with geoms, each attached to its nearest ancestor with geoms
    geo_bodies = sorted(by_body)
    parent_body = m.body_parentid
    anc = {}
    for b in geo_bodies:
        p = b
        while p != 0:
            p = int(parent_body[p])
            if p in by_body:
                break
        # the world's own geoms (a table in <worldbody>) make it a fixed root link: the
        # world has no ancestor, every other tree hangs from it
        anc[b] = p if b != 0 and p in by_body else -1
    roots = [b for b in geo_bodies if anc[b] < 0]
    keep = geo_bodies if len(roots) == 1 and roots[0] == geo_bodies[0] else [0] + [b for b in geo_bodies if b != 0]
    index = {b: n for n, b in enumerate(keep)}
    rest = robot_rest_poses(kin)
    # a body placed beyond the kernels' range (or at NaN): said here, with its name, not as a
    # joint value out of range at the first check
    far = np.flatnonzero(~(np.abs(rest[:, :3, 3]) <= MAX_COORD).all(axis=1))
    if len(far):
        raise MJCFError(f"{fname}: body {kin['names'][int(far[0])]!r}: its position in the model's rest pose "
                        f"{rest[int(far[0]), :3, 3].tolist()} is not finite or beyond {MAX_COORD:g} (the range where "
                        f"the kernels are exact): check its pos and its parents'")
    link_objs, has_geo, geoms, link_prims, real_meshes = [], [], [], [], []
    for li, b in enumerate(keep):
        parts, prims, real = [], [], []
        for g, gname, t in by_body.get(b, []):
            try:
                info = _geom(m, g, gname, t, meshes, li, body_names[b])
            except MJCFError:
                raise
            except ValueError as exc:  # the mesh's checks (coordinates, sizes): say which geom
                raise MJCFError(f"{fname}: <geom name={gname!r}> of body {body_names[b]!r}: {exc}") from exc
            geoms.append(info)
            parts.append(info.mesh)
            if info.primitive is not None:
                prims.append(info.primitive)
            else:
                real.append(info.mesh)
        real_mesh = shapes.merge(real, name=body_names[b]) if len(real) > 1 else (real[0] if real else None)
        link_prims.append(prims if exact_prims else [])
        real_meshes.append(real_mesh)
        if exact_prims and prims:
            mesh, hg = link_mesh(prims, real_mesh), True
        elif parts:
            mesh, hg = (shapes.merge(parts, name=body_names[b]) if len(parts) > 1
                        else Mesh(parts[0].vertices, parts[0].faces, body_names[b])), True
        else:  # the world joining several trees: one degenerate triangle
            mesh, hg = Mesh(np.zeros((3, 3)), np.array([[0, 1, 2]]), body_names[b]), False
        mesh = Mesh(mesh.vertices, mesh.faces, body_names[b])
        if exact_prims and not prims:
            real_meshes[-1] = mesh if hg else None
        p = anc.get(b, -1)
        if p < 0 and b != keep[0]:
            p = keep[0]
        pi = index[p] if p >= 0 else -1
        fb, fp = body_frame[b], body_frame[p] if p >= 0 else -1
        origin = np.linalg.solve(rest[fp], rest[fb]) if p >= 0 else rest[fb]
        link_objs.append(Link(body_names[b], mesh, pi, origin))
        has_geo.append(hg)
    kin["select_bodies"] = keep
    robot = MJCFRobot(link_objs, kin, joint_names, limits, continuous, joints, has_geo,
                      _model_name(m, fname), mesh_bv, source=os.path.abspath(path))
    # the select array must point at body frames (RobotBody looks names up in frame_names)
    robot.meshes = meshes
    robot.primitives = "exact" if exact_prims else "tessellate"
    if exact_prims:
        attach(robot, link_prims, real_meshes)
    robot.geoms = geoms
    robot.skipped_geoms = skipped
    robot.body_ids = np.array(keep, dtype=np.int32)
    robot._geom_link = np.array([gi.link for gi in geoms], dtype=np.int64)
    robot._geom_local = np.array([gi.hull.pose for gi in geoms]).reshape(-1, 4, 4)
    robot._packed = None
    _pair_filter(robot, m, keep)
    return robot


def _model_name(m, fname):
    import mujoco  # pyright: ignore[reportMissingModuleSource]
    mujoco: Any = mujoco  # compiled, no type stubs
    n = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_MODEL, 0) if hasattr(mujoco.mjtObj, "mjOBJ_MODEL") else None
    return n or os.path.splitext(fname)[0]


def _geom(m, g, gname, t, meshes, li, body):
    local = _pose(m.geom_pos[g], m.geom_quat[g])
    common = dict(name=gname, id=g, body=body, link=li, contype=int(m.geom_contype[g]),
                  conaffinity=int(m.geom_conaffinity[g]))
    if t == _MESH:
        k = int(m.geom_dataid[g])
        va, vn = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
        fa, fn = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
        verts = np.array(m.mesh_vert[va:va + vn], dtype=np.float64)
        hull = Primitive("convex", np.zeros(0), local, verts, gname)
        if meshes == "hull":
            mesh = tessellate(hull)
            prim = hull
        else:
            faces = np.array(m.mesh_face[fa:fa + fn], dtype=np.int64)
            mesh = shapes.transformed(Mesh(verts, faces, gname), local)
            prim = None
        return GeomInfo(type="mesh", primitive=prim, mesh=Mesh(mesh.vertices, mesh.faces, gname), hull=hull, **common)
    size = np.array(m.geom_size[g], dtype=np.float64)
    prim = Primitive(_PRIM_KIND[t], size[:{_SPHERE: 1, _CAPSULE: 2, _CYLINDER: 2}.get(t, 3)], local, None, gname)
    return GeomInfo(type=_PRIM_KIND[t], primitive=prim, mesh=tessellate(prim), hull=prim, **common)


def _kinematics(m, body_names, fname):
    """Kinematic frames: the world, then per body one frame per hinge/slide joint (about its
    anchor) and the body frame itself (merged with its last joint frame when that joint's
    anchor is the body origin)."""
    names, parents, origins, jtype, axes, src, mult, offset, jn = [], [], [], [], [], [], [], [], []

    def add(name, parent, origin, t=JOINT_FIXED, axis=(0.0, 0.0, 1.0), dof=-1, off=0.0, joint=None):
        names.append(name)
        parents.append(parent)
        origins.append(origin)
        jtype.append(t)
        axes.append(axis)
        src.append(dof)
        mult.append(1.0)
        offset.append(off)
        jn.append(joint)
        return len(names) - 1

    body_frame = {0: add(body_names[0], -1, np.eye(4))}
    joint_names, limits, continuous, joints = [], [], [], {}
    dof_of = {}
    jnt_names = _names(m, mujoco_obj("joint"), m.njnt, "joint")
    # a joint frame's name "<body>/<joint>" is invented too: unique among the bodies' names
    # (a body may be named "a/ja") and the other frames'
    used = set(body_names)
    for j in range(m.njnt):
        if m.jnt_type[j] in (_HINGE, _SLIDE):
            dof_of[j] = len(joint_names)
            joint_names.append(None)
    extent = float(m.stat.extent) if m.stat.extent > 0 else 1.0
    for b in range(1, m.nbody):
        parent = int(m.body_parentid[b])
        acc = _pose(m.body_pos[b], m.body_quat[b])
        frame = body_frame[parent]
        last_is_body = False
        for j in range(int(m.body_jntadr[b]), int(m.body_jntadr[b]) + int(m.body_jntnum[b])):
            t = int(m.jnt_type[j])
            jname = jnt_names[j]
            qa = int(m.jnt_qposadr[j])
            anchor = np.array(m.jnt_pos[j], dtype=np.float64)
            if t == _FREE:
                if parent != 0:
                    raise MJCFError(f"{fname}: <freejoint name={jname!r}> on body {body_names[b]!r}, which is not "
                                    f"attached to the world: not supported")
                acc = _pose(m.qpos0[qa:qa + 3], m.qpos0[qa + 3:qa + 7])
                joints[jname] = JointInfo(jname, "free", body_names[parent], body_names[b], -1)
                last_is_body = False
                continue
            if t == _BALL:
                acc = acc @ _translate(anchor) @ _pose((0, 0, 0), m.qpos0[qa:qa + 4]) @ _translate(-anchor)
                joints[jname] = JointInfo(jname, "ball", body_names[parent], body_names[b], -1)
                last_is_body = False
                continue
            dof = dof_of[j]
            joint_names[dof] = jname
            axis = np.array(m.jnt_axis[j], dtype=np.float64)
            axis /= np.linalg.norm(axis)
            frame = add(_unique(f"{body_names[b]}/{jname}", used), frame, acc @ _translate(anchor),
                        JOINT_REVOLUTE if t == _HINGE else JOINT_PRISMATIC, axis, dof, -float(m.qpos0[qa]), jname)
            acc = _translate(-anchor)
            last_is_body = not anchor.any()
            if m.jnt_limited[j]:
                lo, hi = (float(v) for v in m.jnt_range[j])
                cont = False
            elif t == _HINGE:
                lo, hi, cont = -np.pi, np.pi, True
            else:
                lo, hi, cont = -extent, extent, False
            limits.append((lo, hi))
            continuous.append(cont)
            joints[jname] = JointInfo(jname, _JOINT_TYPE_NAMES[t], body_names[parent], body_names[b], dof)
        if last_is_body:  # the last joint turns about the body origin: its frame is the body's
            names[frame] = body_names[b]
            body_frame[b] = frame
        else:
            body_frame[b] = add(body_names[b], frame, acc)
    # limits were appended in body order; joints are numbered in model order (the same
    # order: MuJoCo numbers joints body by body)
    K = len(names)
    kin = {"names": names, "parents": np.array(parents, np.int32), "origins": np.array(origins).reshape(K, 4, 4),
           "jtype": np.array(jtype, np.int32), "axes": np.array(axes, float).reshape(K, 3),
           "src": np.array(src, np.int32), "mult": np.array(mult, float), "offset": np.array(offset, float),
           "joint": jn}
    return (kin, joint_names, np.array(limits, float).reshape(-1, 2), np.array(continuous, bool), joints,
            body_frame)


def mujoco_obj(kind):
    import mujoco  # pyright: ignore[reportMissingModuleSource]
    mujoco: Any = mujoco  # compiled, no type stubs
    return {"joint": mujoco.mjtObj.mjOBJ_JOINT, "body": mujoco.mjtObj.mjOBJ_BODY}[kind]


def _pair_filter(robot, m, keep):
    """``geom_mask``, ``default_disabled`` and the weld-parent pairs (see the module doc)."""
    import mujoco  # pyright: ignore[reportMissingModuleSource]
    mujoco: Any = mujoco  # compiled, no type stubs

    dsbl = mujoco.mjtDisableBit
    geoms = robot.geoms
    G = len(geoms)
    gid = np.array([g.id for g in geoms], dtype=np.int64)
    body = m.geom_bodyid[gid].astype(np.int64)
    weld = m.body_weldid[body].astype(np.int64)
    weld_parent = m.body_weldid[m.body_parentid[weld]].astype(np.int64)
    # (contype and conaffinity are 32-bit masks: the G x G products in uint32, not int64)
    ct = m.geom_contype[gid].astype(np.uint32)
    ca = m.geom_conaffinity[gid].astype(np.uint32)
    filterparent = not (m.opt.disableflags & int(dsbl.mjDSBL_FILTERPARENT))
    same_weld = weld[:, None] == weld[None, :]
    parent = (weld[:, None] != 0) & (weld[None, :] != 0) & (
        (weld[:, None] == weld_parent[None, :]) | (weld[None, :] == weld_parent[:, None]))
    bits = ((ct[:, None] & ca[None, :]) | (ct[None, :] & ca[:, None])) != 0
    excluded = np.zeros((G, G), dtype=bool)
    if m.nexclude:
        # MuJoCo's exclude signature of a body pair: (smaller id << 16) + larger id
        keys = (np.minimum(body[:, None], body[None, :]) << 16) + np.maximum(body[:, None], body[None, :])
        excluded = np.isin(keys, np.asarray(m.exclude_signature, dtype=np.int64))
    dynamic = ~same_weld & bits & ~excluded & ~(parent if filterparent else False)
    explicit = np.zeros((G, G), dtype=bool)
    pos = {int(g): n for n, g in enumerate(gid)}
    for g1, g2 in zip(m.pair_geom1.tolist(), m.pair_geom2.tolist()):
        if g1 in pos and g2 in pos:
            explicit[pos[g1], pos[g2]] = explicit[pos[g2], pos[g1]] = True
    mask = (dynamic | explicit) & (robot._geom_link[:, None] != robot._geom_link[None, :])
    if m.opt.disableflags & int(dsbl.mjDSBL_CONTACT):
        mask[:] = False
    np.fill_diagonal(mask, False)
    robot.geom_mask = mask
    L = robot.n_links
    gl = robot._geom_link
    link_ok = np.zeros((L, L), dtype=bool)
    link_parent = np.zeros((L, L), dtype=bool)
    # a link pair is a weld-parent pair when every geom pair between the two links is
    # removed by the parent filter and nothing else (MuJoCo filters whole bodies)
    pf = parent & ~same_weld & ~explicit if filterparent else np.zeros((G, G), bool)
    # a link pair is allowed when any geom pair between the links is (OR over the pairs); the
    # pairs as index arrays, not a Python loop over G x G (a 145-byte <replicate> of 6,000
    # bodies spent a minute there)
    other = gl[:, None] != gl[None, :]
    i, k = np.nonzero(mask & other)
    link_ok[gl[i], gl[k]] = True
    i, k = np.nonzero(pf & other)
    link_parent[gl[i], gl[k]] = True
    upper = np.triu(np.ones((L, L), dtype=bool), 1)
    a, b = np.nonzero(upper & link_parent & ~link_ok)
    robot._weld_parent_pairs = set(zip(a.tolist(), b.tolist()))
    names = robot.link_names
    geo = np.asarray(robot.has_geometry, dtype=bool)
    off = upper & geo[:, None] & geo[None, :] & ~link_ok & ~(link_parent & ~link_ok)
    a, b = np.nonzero(off)
    robot.default_disabled = [(names[x], names[y]) for x, y in zip(a.tolist(), b.tolist())]
    robot.link_mask = link_ok


__all__ = ["load_mjcf", "MJCFRobot", "MJCFError", "GeomInfo", "MESH_MODES"]
