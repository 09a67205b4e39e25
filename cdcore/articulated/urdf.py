"""URDF robots as articulated bodies.

The URDF is parsed by yourdfpy (imported lazily); meshes are read by trimesh. Every URDF
link that carries geometry becomes one cdcore link (all its ``<collision>`` — or ``<visual>``
— elements merged into one mesh in the link frame); links without geometry keep the
kinematic chain but carry no triangles. Primitives: boxes are exact (12 triangles);
cylinders have 48 sides (radial error <= 0.22 % of the radius) and spheres are
icospheres of 1,280 triangles (error <= 0.4 % of the radius); all vertices lie on the
true surface, so the tessellation sits inside it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .. import mesh as _mesh_limits
from .. import shapes
from ..mesh import Mesh, load_mesh
from ..primitives import Primitive
from ..transforms import writable_f64
from ._robot_fk import JOINT_FIXED, JOINT_PRISMATIC, JOINT_REVOLUTE, robot_fk
from .body import ArticulatedBody, Link
from .primlinks import PRIMITIVE_BVS, PRIMITIVE_MODES, attach, link_mesh

CYLINDER_SIDES = 48
#: the largest primitive size or origin offset accepted, in metres (beyond it a link's
#: coordinates leave the range where the kernels are exact; see cdcore.mesh.MAX_COORD)
MAX_SIZE = 1e6
SPHERE_SUBDIVISIONS = 3
JOINT_TYPES = {"fixed": JOINT_FIXED, "revolute": JOINT_REVOLUTE, "continuous": JOINT_REVOLUTE,
               "prismatic": JOINT_PRISMATIC}
GEOMETRY_KINDS = ("collision", "visual")


class URDFError(ValueError):
    """The URDF is invalid; the message names the file and the offending element."""


class PackageNotFoundError(FileNotFoundError):
    """A ``package://NAME/...`` URI names a package found in no package directory.

    ``package`` is NAME, ``uri`` the URI, ``link`` the link that references it."""

    def __init__(self, msg, package, uri, link):
        super().__init__(msg)
        self.package, self.uri, self.link = package, uri, link


@dataclass(frozen=True)
class JointInfo:
    """One URDF joint: ``type`` as written, ``dof`` its index in ``q`` (-1: fixed or mimic),
    ``mimic`` the leader's name (or None) with ``multiplier``/``offset``."""
    name: str
    type: str
    parent: str
    child: str
    dof: int
    mimic: str | None = None
    multiplier: float = 1.0
    offset: float = 0.0


class RobotBody(ArticulatedBody):
    """An articulated body loaded from a URDF (see :func:`load_urdf`).

    Attributes
    ----------
    joint_names : list of str
        Movable, non-mimic joints in URDF document order; ``q`` vectors are indexed like it.
    limits : (n_dofs, 2) float64
        From the URDF; continuous joints get [-pi, pi] (for sampling; FK does not clip).
    continuous : (n_dofs,) bool
    link_names : list of str
        The cdcore links: URDF links that carry geometry (parents before children); a
        geometry-less root is kept as a link without triangles (``has_geometry`` False) when
        the geometry links would otherwise form several trees.
    frame_names : list of str
        Every URDF link (kinematic frames), parents before children.
    joints : dict of str -> JointInfo
    """

    def __init__(self, links, kin, joint_names, limits, continuous, joints, has_geometry, name, mesh_bv,
                 source=None):
        super().__init__(links, name=name, mesh_bv=mesh_bv)
        self.joint_names = list(joint_names)
        self.limits = np.asarray(limits, dtype=np.float64).reshape(-1, 2)
        self.continuous = np.asarray(continuous, dtype=bool)
        self.joints = joints
        self.has_geometry = np.asarray(has_geometry, dtype=bool)
        self.link_names = [ln.name for ln in links]
        self.frame_names = kin["names"]
        self.source = source
        self.primitives = "tessellate"  # load_urdf sets "exact" when primitives stay solids
        self.disabled_pairs: list = []  # (name, name) pairs never checked (scenes set them from an SRDF)
        self._kin = kin
        self._select = np.array([self.frame_names.index(n) for n in self.link_names], dtype=np.int32)

    @property
    def n_dofs(self) -> int:
        return len(self.joint_names)

    def parent_child_pairs(self) -> set:
        """Parent-child link index pairs (nearest geometry ancestor)."""
        return super().adjacent_pairs()

    def adjacent_pairs(self) -> set:
        """Pairs the articulation's own self-collision (``collide_bodies(h, h)``) skips:
        parent-child pairs and ``disabled_pairs`` (link names, e.g. from an SRDF)."""
        out = self.parent_child_pairs()
        index = {n: i for i, n in enumerate(self.link_names)}
        for a, b in self.disabled_pairs:
            if a in index and b in index:
                out.add((min(index[a], index[b]), max(index[a], index[b])))
        return out

    def link_index(self, name: str) -> int:
        try:
            return self.link_names.index(name)
        except ValueError:
            raise ValueError(f"unknown link {name!r}; links with geometry: {', '.join(self.link_names)}") from None

    def q_from_dict(self, values: dict) -> np.ndarray:
        """A ``q`` (n_dofs,) from {joint name: value}; missing joints are 0, unknown names
        (or mimic/fixed joints) raise ``ValueError`` naming them."""
        q = np.zeros(self.n_dofs)
        bad = [k for k in values if k not in self.joint_names]
        if bad:
            raise ValueError(f"unknown joints {bad}; the movable joints are {self.joint_names}")
        for k, v in values.items():
            q[self.joint_names.index(k)] = float(v)
        return q

    def fk_frames(self, q, root_poses=None, select=None) -> np.ndarray:
        """``q`` (F, n_dofs), ``root_poses`` (F, 4, 4) or None -> (F, L, 4, 4) link poses
        (``select``: kinematic frame indices to return instead of the cdcore links)."""
        q = writable_f64(q)
        if q.ndim != 2 or q.shape[1] != self.n_dofs:
            raise ValueError(f"q: expected shape (frames, {self.n_dofs}), got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise ValueError("q: contains NaN or infinite joint values")
        if root_poses is None:  # (writable, as every caller's: one compiled signature of robot_fk)
            root_poses = np.tile(np.eye(4), (len(q), 1, 1))
        root_poses = writable_f64(root_poses)
        if root_poses.shape != (len(q), 4, 4):
            raise ValueError(f"root_poses: expected shape ({len(q)}, 4, 4), got {root_poses.shape}")
        sel = self._select if select is None else np.array(select, dtype=np.int32)
        k = self._kin
        out = np.empty((len(q), len(sel), 4, 4))
        robot_fk(k["parents"], k["origins"], k["jtype"], k["axes"], k["src"], k["mult"], k["offset"], q,
                 root_poses, sel, np.empty((len(k["names"]), 4, 4)), out)
        return out

    def fk_all(self, q, root_pose=None) -> dict:
        """{URDF link name: (4, 4) world pose} for every link, geometry or not."""
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (self.n_dofs,):
            raise ValueError(f"q: expected shape ({self.n_dofs},), got {q.shape}")
        poses = self.fk_frames(q[None], None if root_pose is None else np.asarray(root_pose)[None],
                               select=np.arange(len(self.frame_names)))[0]
        return dict(zip(self.frame_names, poses))

    def joint_values(self, q) -> dict:
        """{joint name: value} of every non-fixed joint, mimic joints included."""
        q = np.asarray(q, dtype=np.float64)
        k = self._kin
        frame = {jn: i for i, jn in enumerate(k["joint"]) if jn is not None}
        # a mimic joint follows its chain (a mimic of a mimic) to the independent joint: the
        # resolved source dof, multiplier and offset FK uses, not its direct leader's dof
        # (-1 for a mimic leader, which read the last joint)
        return {j.name: (q[j.dof] if j.dof >= 0 else
                         k["mult"][frame[j.name]] * q[k["src"][frame[j.name]]] + k["offset"][frame[j.name]])
                for j in self.joints.values() if j.type != "fixed" and (j.dof >= 0 or j.mimic)}

    def __repr__(self) -> str:
        return (f"RobotBody({self.name!r}, dofs={self.n_dofs}, links={self.n_links}, "
                f"triangles={int(self.faces.shape[0])})")


# ---- loading --------------------------------------------------------------------------

def load_urdf(path, package_dirs=None, geometry: str = "collision", mesh_bv: str = "obb",
              primitives: str = "exact") -> RobotBody:
    """Load a URDF robot as an articulated body.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.urdf`` file.
    package_dirs : str or list of str, optional
        Directories holding ROS packages: ``package://NAME/rest`` resolves to
        ``DIR/NAME/rest`` (or ``DIR/rest`` when DIR itself is named NAME), then relative to
        the URDF's directory and its parents.
    geometry : {"collision", "visual"}
        Which elements make the link meshes.
    mesh_bv : str
        Bounding-volume type of the links' mesh hierarchies.
    primitives : {"exact", "tessellate"}
        ``<box>``, ``<cylinder>``, ``<sphere>`` as exact solids (``articulated.primlinks``:
        primitive leaves, GJK / closed forms; with box hierarchies, ``mesh_bv`` "aabb", "obb"
        or "obb_sphere" — other hierarchy types tessellate), or as the tessellations below.

    Returns
    -------
    RobotBody

    Raises
    ------
    FileNotFoundError
        The URDF or a mesh file is missing (``PackageNotFoundError`` when a
        ``package://`` package is found nowhere).
    URDFError (ValueError)
        Unreadable XML, unknown joint type, a joint naming a missing link, a cycle, an empty
        robot, a bad mimic, limit or axis, a primitive too small for the kernels, more than
        ``cdcore.mesh.MAX_TRIANGLES`` triangles in all (each mesh file counted once per element
        naming it, but read once); the message names the element.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"URDF file not found: {path}")
    if geometry not in GEOMETRY_KINDS:
        raise ValueError(f"geometry: expected one of {GEOMETRY_KINDS}, got {geometry!r}")
    if primitives not in PRIMITIVE_MODES:
        raise ValueError(f"primitives: expected one of {PRIMITIVE_MODES}, got {primitives!r}")
    if package_dirs is None:
        package_dirs = []
    elif isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    package_dirs = [os.fspath(d) for d in package_dirs]
    fname = os.path.basename(path)
    robot = _parse(path)
    links = {ln.name: ln for ln in robot.links}
    if not links:
        raise URDFError(f"{fname}: the robot has no <link>")
    if len(links) != len(robot.links):
        dup = sorted({ln.name for ln in robot.links if sum(x.name == ln.name for x in robot.links) > 1})
        raise URDFError(f"{fname}: duplicate link names {dup}")
    kin, joint_names, limits, continuous, joints = _kinematics(robot, links, fname)
    # link meshes
    urdf_dir = os.path.dirname(os.path.abspath(path))
    meshes, link_prims, real_meshes = {}, {}, {}
    exact = primitives == "exact" and mesh_bv in PRIMITIVE_BVS
    # every element's mesh first (each file read once, the robot's triangles counted and
    # refused past the limit), then the placed copies: nothing is copied for a refused robot
    reads = _MeshReads()
    sources = {name: [_element_source(e, name, k, geometry, urdf_dir, package_dirs, fname, reads)
                      for k, e in enumerate(getattr(links[name], "collisions" if geometry == "collision"
                                                    else "visuals") or [])]
               for name in kin["names"]}
    for name in kin["names"]:
        both = [_place(*src) for src in sources[name]]
        parts = [m for m, _ in both]
        if not parts:
            continue
        prims = [p for _, p in both if p is not None] if exact else []
        real = [m for m, p in both if p is None] if exact else parts
        real_meshes[name] = (shapes.merge(real, name=name) if len(real) > 1 else
                             Mesh(real[0].vertices, real[0].faces, name)) if real else None
        link_prims[name] = prims
        meshes[name] = (Mesh(*_verts_faces(link_mesh(prims, real_meshes[name])), name) if prims
                        else real_meshes[name])
    if not meshes:
        raise URDFError(f"{fname}: the robot is empty: no link carries <{geometry}> geometry")
    # cdcore links: the geometry links, each attached to its nearest geometry ancestor
    names, parents = kin["names"], kin["parents"]
    geo = [i for i, n in enumerate(names) if n in meshes]
    anc = {}
    for i in geo:
        p = parents[i]
        while p >= 0 and names[p] not in meshes:
            p = parents[p]
        anc[i] = p
    roots = [i for i in geo if anc[i] < 0]
    keep = geo if len(roots) == 1 and roots[0] == geo[0] else [0] + [i for i in geo if i != 0]
    index = {k: n for n, k in enumerate(keep)}
    link_objs, has_geo = [], []
    rest = robot_rest_poses(kin)
    for k in keep:
        if names[k] in meshes:
            mesh, hg = meshes[names[k]], True
        else:  # geometry-less root joining several geometry trees: one degenerate triangle
            mesh, hg = Mesh(np.zeros((3, 3)), np.array([[0, 1, 2]]), names[k]), False
        p = anc.get(k, -1)
        if p < 0 and k != keep[0]:
            p = keep[0]
        pi = index[p] if p >= 0 else -1
        origin = np.linalg.solve(rest[p], rest[k]) if p >= 0 else rest[k]
        link_objs.append(Link(names[k], mesh, pi, origin))
        has_geo.append(hg)
    body = RobotBody(link_objs, kin, joint_names, limits, continuous, joints, has_geo, robot.name or fname,
                     mesh_bv, source=os.path.abspath(path))
    body.primitives = "exact" if exact else "tessellate"
    if exact and any(link_prims.values()):
        attach(body, [link_prims.get(names[k], []) for k in keep],
               [real_meshes.get(names[k]) if names[k] in meshes else None for k in keep])
    return body


def _verts_faces(m):
    return m.vertices, m.faces


def robot_rest_poses(kin) -> np.ndarray:
    """Poses of every kinematic frame at q = 0 (all joint values 0 except mimic offsets)."""
    K = len(kin["names"])
    out = np.empty((1, K, 4, 4))
    n_dofs = int(max(kin["src"].max() + 1, 1))
    robot_fk(kin["parents"], kin["origins"], kin["jtype"], kin["axes"], kin["src"], kin["mult"], kin["offset"],
             np.zeros((1, n_dofs)), np.eye(4)[None], np.arange(K, dtype=np.int32), np.empty((K, 4, 4)), out)
    return out[0]


def _parse(path):
    import yourdfpy  # lazy: only URDF loading needs it

    fname = os.path.basename(path)
    try:
        from lxml import etree  # pyright: ignore[reportAttributeAccessIssue]  (a C extension, no stubs)
        etree.parse(path)  # yourdfpy silently "recovers" broken XML; refuse it instead
    except Exception as exc:
        raise URDFError(f"{fname}: not readable XML ({exc})") from None
    try:
        u = yourdfpy.URDF.load(path, build_scene_graph=False, build_collision_scene_graph=False,
                               load_meshes=False, load_collision_meshes=False, filename_handler=lambda f: f)
    except Exception as exc:  # missing attributes and the like surface as KeyError/AttributeError
        raise URDFError(f"{fname}: not a valid URDF ({type(exc).__name__}: {exc})") from None
    if u.robot is None:
        raise URDFError(f"{fname}: no <robot> element")
    return u.robot


def _kinematics(robot, links, fname):
    """Kinematic tree arrays over all links (parents before children, document order)."""
    child_joint = {}
    children = {n: [] for n in links}
    seen_joints: set = set()
    dup = sorted({j.name for j in robot.joints if j.name in seen_joints or seen_joints.add(j.name)})
    if dup:
        raise URDFError(f"{fname}: duplicate joint names {dup} (a q vector could not say which is which)")
    for j in robot.joints:
        jw = f"{fname}: <joint name={j.name!r}>"
        if j.type not in JOINT_TYPES:
            raise URDFError(f"{jw}: unsupported joint type {j.type!r}; supported: {sorted(JOINT_TYPES)}")
        for role, ln in (("parent", j.parent), ("child", j.child)):
            if ln not in links:
                raise URDFError(f"{jw}: {role} link {ln!r} does not exist")
        if j.child in child_joint:
            raise URDFError(f"{jw}: link {j.child!r} is already the child of joint {child_joint[j.child].name!r} "
                            f"(a URDF is a tree: a cycle or a second parent)")
        child_joint[j.child] = j
        children[j.parent].append(j.child)
    roots = [n for n in links if n not in child_joint]
    if not roots:
        raise URDFError(f"{fname}: the joints form a cycle (every link has a parent)")
    if len(roots) > 1:
        raise URDFError(f"{fname}: several root links {roots}: links not connected by joints")
    order = []
    stack = [roots[0]]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(reversed(children[n]))
    if len(order) != len(links):
        lost = sorted(set(links) - set(order))
        raise URDFError(f"{fname}: links {lost} are on a cycle of joints")
    # dofs: movable non-mimic joints in document order
    joint_names, limits, continuous, joints = [], [], [], {}
    for j in robot.joints:
        jw = f"{fname}: <joint name={j.name!r}>"
        dof = -1
        if j.type != "fixed" and j.mimic is None:
            dof = len(joint_names)
            joint_names.append(j.name)
            continuous.append(j.type == "continuous")
            if j.type == "continuous":
                limits.append((-np.pi, np.pi))
            else:
                if j.limit is None:
                    raise URDFError(f"{jw}: a {j.type} joint needs a <limit lower=.. upper=..>")
                lo = 0.0 if j.limit.lower is None else float(j.limit.lower)
                hi = 0.0 if j.limit.upper is None else float(j.limit.upper)
                if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
                    raise URDFError(f"{jw}: <limit> lower {lo} must not exceed upper {hi}")
                limits.append((lo, hi))
        m = j.mimic
        mult = 1.0 if m is None or m.multiplier is None else float(m.multiplier)
        off = 0.0 if m is None or m.offset is None else float(m.offset)
        if not (np.isfinite(mult) and np.isfinite(off)):  # NaN rest poses and FK otherwise
            raise URDFError(f"{jw}: <mimic> multiplier and offset must be finite numbers, got "
                            f"{m.multiplier!r}, {m.offset!r}")
        joints[j.name] = JointInfo(j.name, j.type, j.parent, j.child, dof, None if m is None else m.joint,
                                   mult, off)
    K = len(order)
    kin = {"names": order, "parents": np.full(K, -1, np.int32), "origins": np.tile(np.eye(4), (K, 1, 1)),
           "jtype": np.zeros(K, np.int32), "axes": np.tile([0.0, 0.0, 1.0], (K, 1)),
           "src": np.full(K, -1, np.int32), "mult": np.ones(K), "offset": np.zeros(K), "joint": [None] * K}
    pos = {n: i for i, n in enumerate(order)}
    for n, i in pos.items():
        j = child_joint.get(n)
        if j is None:
            continue
        jw = f"{fname}: <joint name={j.name!r}>"
        kin["joint"][i] = j.name
        kin["parents"][i] = pos[j.parent]
        if j.origin is not None:
            kin["origins"][i] = _origin(j.origin, f"{jw} <origin>")
        kin["jtype"][i] = JOINT_TYPES[j.type]
        if j.type == "fixed":
            continue
        ax = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=np.float64)
        if ax.shape != (3,) or not np.all(np.isfinite(ax)) or np.linalg.norm(ax) < 1e-12:
            raise URDFError(f"{jw}: <axis> must be a finite non-zero 3-vector, got {j.axis!r}")
        kin["axes"][i] = ax / np.linalg.norm(ax)
        info = joints[j.name]
        mult, off, lead, seen = 1.0, 0.0, info, {j.name}
        while lead.mimic is not None:  # follow mimic chains to an independent joint
            nxt = joints.get(lead.mimic)
            if nxt is None:
                raise URDFError(f"{jw}: <mimic joint={lead.mimic!r}> names no joint")
            if nxt.name in seen:
                raise URDFError(f"{jw}: <mimic> joints form a loop through {nxt.name!r}")
            if nxt.type == "fixed":
                raise URDFError(f"{jw}: <mimic joint={lead.mimic!r}> follows a fixed joint")
            seen.add(nxt.name)
            mult, off = mult * lead.multiplier, off + mult * lead.offset
            lead = nxt
        if not (np.isfinite(mult) and np.isfinite(off)):  # a chain of huge multipliers overflowed
            raise URDFError(f"{jw}: its <mimic> chain's multiplier {mult} and offset {off} overflow")
        kin["src"][i], kin["mult"][i], kin["offset"][i] = lead.dof, mult, off
    return kin, joint_names, np.array(limits, float).reshape(-1, 2), np.array(continuous, bool), joints


class _MeshReads:
    """One load's mesh files, each read once (many ``<collision>`` elements may name the
    same file; the scale is applied with the pose, so the path alone is the key), and the
    robot's running triangle total, refused past ``cdcore.mesh.MAX_TRIANGLES`` before any
    copy is placed or merged."""

    def __init__(self):
        self.meshes: dict = {}
        self.triangles = 0

    def read(self, file):
        key = os.path.abspath(file)  # (an alias is read again, still within the triangle budget)
        m = self.meshes.get(key)
        if m is None:
            m = self.meshes[key] = load_mesh(file)
        return m

    def add(self, n, where, what):
        self.triangles += n
        limit = _mesh_limits.MAX_TRIANGLES
        if self.triangles > limit:
            raise URDFError(f"{where}: {what} brings the robot to {self.triangles:,} triangles; at most "
                            f"{limit:,} are supported")


def _element_source(elem, link, k, kind, urdf_dir, package_dirs, fname, reads):
    """An element's unplaced mesh (shared by every element naming the same file), its pose
    (scale included) and primitive, counted in ``reads``'s triangle total."""
    where = f"{fname}: <link name={link!r}> <{kind}> #{k}"
    g = elem.geometry
    if g is None:
        raise URDFError(f"{where}: no <geometry>")
    pose = np.eye(4) if elem.origin is None else _origin(elem.origin, f"{where} <origin>")
    prim, what = None, "its primitive"
    if g.box is not None:
        size = _floats(g.box.size, f"{where} <box size>")
        if size.shape != (3,) or not np.all((size > 0) & (size <= MAX_SIZE)):
            raise URDFError(f"{where}: <box size> must be 3 positive numbers up to {MAX_SIZE:g}, got {g.box.size!r}")
        m = _shape(where, shapes.box, size)
        prim = ("box", np.asarray(size / 2, dtype=np.float64))
    elif g.cylinder is not None:
        r = _floats(g.cylinder.radius or 0, f"{where} <cylinder radius>")
        h = _floats(g.cylinder.length or 0, f"{where} <cylinder length>")
        if not (r.shape == h.shape == () and 0 < r <= MAX_SIZE and 0 < h <= MAX_SIZE):
            raise URDFError(f"{where}: <cylinder> needs a positive radius and length up to {MAX_SIZE:g}, "
                            f"got {g.cylinder.radius!r}, {g.cylinder.length!r}")
        m = _shape(where, shapes.cylinder, float(r), float(h), n_around=CYLINDER_SIDES)
        prim = ("cylinder", np.array([float(r), float(h) / 2]))
    elif g.sphere is not None:
        r = _floats(g.sphere.radius or 0, f"{where} <sphere radius>")
        if not (r.shape == () and 0 < r <= MAX_SIZE):
            raise URDFError(f"{where}: <sphere> needs a positive radius up to {MAX_SIZE:g}, got {g.sphere.radius!r}")
        m = _shape(where, shapes.icosphere, float(r), SPHERE_SUBDIVISIONS)
        prim = ("sphere", np.array([float(r)]))
    elif g.mesh is not None:
        file = resolve_uri(g.mesh.filename, urdf_dir, package_dirs, where, link)
        what = f"mesh {file}"
        try:
            m = reads.read(file)
        except FileNotFoundError:
            raise FileNotFoundError(f"{where}: mesh file not found: {file} (from {g.mesh.filename!r})") from None
        except ValueError as exc:
            raise URDFError(f"{where}: {exc}") from None
        if g.mesh.scale is not None:
            s = _floats(g.mesh.scale, f"{where} <mesh scale>")
            if s.shape not in ((), (1,), (3,)) or not np.all(np.isfinite(s)) or np.any(s == 0):
                raise URDFError(f"{where}: <mesh scale> must be 1 or 3 finite non-zero numbers, got {g.mesh.scale!r}")
            pose = pose @ np.diag([*np.broadcast_to(s, (3,)), 1.0])
    else:
        raise URDFError(f"{where}: empty <geometry>")
    reads.add(m.n_faces, where, what)
    return m, pose, prim, where, link, k


def _place(m, pose, prim, where, link, k):
    """The element's mesh in the link frame and its primitive (or None)."""
    try:
        mesh = shapes.transformed(m, pose)
        return mesh, (None if prim is None else Primitive(prim[0], prim[1], pose, None, f"{link}#{k}"))
    except (TypeError, ValueError) as exc:  # coordinates beyond the kernels' range after scaling
        raise URDFError(f"{where}: {exc}") from None


def _shape(where, make, *args, **kw):
    """A primitive's tessellation; a size the kernels refuse (e.g. a 1e-80 box, below
    cdcore.mesh.MIN_SCALE) is a URDFError naming the element."""
    try:
        return make(*args, **kw)
    except (TypeError, ValueError) as exc:
        raise URDFError(f"{where}: {exc}") from None


def _floats(value, where) -> np.ndarray:
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise URDFError(f"{where}: expected numbers, got {value!r} ({exc})") from None


def _origin(value, where) -> np.ndarray:
    """A (4, 4) rigid transform from an ``<origin xyz rpy>`` (yourdfpy's matrix)."""
    T = _floats(value, where)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise URDFError(f"{where}: xyz and rpy must be finite numbers (3 each), got {_origin_text(T)}")
    if np.abs(T[:3, 3]).max() > MAX_SIZE:
        raise URDFError(f"{where}: xyz beyond +-{MAX_SIZE:g} m, got {T[:3, 3].tolist()}")
    return T


def _origin_text(T) -> str:
    return "NaN or infinite values" if T.shape == (4, 4) else f"shape {T.shape}"


def resolve_uri(uri, urdf_dir, package_dirs=(), where="", link=None) -> str:
    """The file a URDF mesh ``filename`` names (see :func:`load_urdf` for the search order).

    Raises ``PackageNotFoundError`` when a ``package://`` package is found nowhere."""
    if not uri:
        raise URDFError(f"{where}: <mesh> without a filename")
    if uri.startswith("file://"):
        p = uri[len("file://"):]
        return p if os.path.isabs(p) else os.path.join(urdf_dir, p)
    if not uri.startswith("package://"):
        return uri if os.path.isabs(uri) else os.path.join(urdf_dir, uri)
    pkg, _, rest = uri[len("package://"):].partition("/")
    inner = os.path.normpath(rest) if rest else ""
    if (not pkg or pkg in (".", "..") or os.sep in pkg or os.path.isabs(rest) or inner == ".."
            or inner.startswith(".." + os.sep)):
        raise URDFError(f"{where}: {uri!r} leaves its package directory (a package:// path must stay inside "
                        f"package {pkg!r})")
    roots = []
    for d in package_dirs:
        roots += [os.path.join(d, pkg), d] if os.path.basename(os.path.normpath(d)) == pkg else [os.path.join(d, pkg)]
    d = urdf_dir
    while True:  # the URDF's own package: an ancestor named pkg, or holding pkg/
        roots += [os.path.join(d, pkg)] + ([d] if os.path.basename(d) == pkg else [])
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    found = [r for r in roots if os.path.isdir(r)]
    for r in found:
        if os.path.isfile(os.path.join(r, inner)):
            return os.path.join(r, inner)
    if found:
        return os.path.join(found[0], inner)  # the package exists but the file does not
    raise PackageNotFoundError(f"{where}: package {pkg!r} of {uri!r} not found in package_dirs {list(package_dirs)} "
                               f"nor above the URDF's directory; pass the directory that holds {pkg}/",
                               pkg, uri, link)


__all__ = ["RobotBody", "JointInfo", "URDFError", "PackageNotFoundError", "load_urdf", "resolve_uri"]
