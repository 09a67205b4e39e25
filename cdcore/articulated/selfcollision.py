"""Self-collision of one articulated body (a robot) and robot-versus-environment queries:
the articulation hierarchy's broad phase (any of the four update methods) over the link
pairs a user wants checked, then exact queries through the links' mesh hierarchies."""
from __future__ import annotations

import os
import time
from typing import NamedTuple

import numpy as np

from .._core import make_plan
from .._layout import KDOP_KINDS
from ..bv import BV_TYPES
from ..collide import TEST_CODES, CollisionStats
from ..mesh import MAX_COORD, Mesh
from ..transforms import as_pose, as_poses, writable_f64
from ._self_kernel import (BROAD_HIERARCHY, BROAD_PAIRS, N_DIMS, N_OFF, OUT_HEAD, OUT_PAIRS, ST_OK, ST_POSE_BAD,
                           ST_Q_NONFINITE, ST_Q_SHAPE, out_length, pack, self_check)
from .body import ArticulatedBody, Link
from .hierarchy import METHOD_OBB, UPDATE_METHODS, BodyHierarchy
from .primlinks import fused_prim_arrays
from .query import BODY_TESTS, _broad_phase, collide_bodies, run_exact_queries


class SelfCollisionResult:
    """One configuration's self-collision query.

    ``pairs``: colliding link name pairs (a, b) with a before b in ``body.link_names``
    order; ``link_pairs`` (k, 2) int32 the same as indices; ``candidates`` (c, 2) int32 the
    allowed pairs whose leaf volumes overlapped (the exact queries run); ``broad`` /
    ``exact`` the counters of the two phases. Times in seconds (the one-call path of URDF
    robots reports its whole time in ``t_test``). Index arrays, names and counters are made
    on first access from the kernel's one output array: a query's cost is the engine's, not
    its report's.
    """
    # class-level defaults, no __slots__: a kernel result sets three attributes
    # (``_kernel``), the per-call price of a query being the engine's, not its report's
    _link_pairs = _candidates = _broad = _exact = _counts = _out = None
    t_fk = t_update = t_query = 0.0

    @classmethod
    def _kernel(cls, names, out, t_test) -> "SelfCollisionResult":
        r = cls.__new__(cls)
        r._names, r._out, r.t_test = names, out, t_test
        return r

    def __init__(self, names, link_pairs, candidates, broad, exact, t_fk, t_update, t_test, t_query, counts=None,
                 out=None):
        self._names = names
        self._link_pairs = link_pairs
        self._candidates = candidates
        self._broad, self._exact, self._counts = broad, exact, counts
        self._out = out
        self.t_fk, self.t_update, self.t_test, self.t_query = t_fk, t_update, t_test, t_query

    @property
    def link_pairs(self) -> np.ndarray:
        if self._link_pairs is None:
            o = self._out
            assert o is not None  # results without a kernel row carry their pairs
            self._link_pairs = o[OUT_PAIRS:OUT_PAIRS + 2 * o[1]].reshape(-1, 2).astype(np.int32)
        return self._link_pairs

    @property
    def candidates(self) -> np.ndarray:
        if self._candidates is None:
            o = self._out
            assert o is not None
            s = OUT_PAIRS + 2 * o[1]
            self._candidates = o[s:s + 2 * o[2]].reshape(-1, 2).astype(np.int32)
        return self._candidates

    @property
    def hit(self) -> bool:
        """Whether any checked pair collides."""
        return bool(self._out[1]) if self._out is not None else len(self.link_pairs) > 0

    @property
    def pairs(self) -> list:
        n = self._names
        return [(n[i], n[j]) for i, j in self.link_pairs.tolist()]

    @property
    def broad(self) -> CollisionStats:
        if self._broad is None:
            assert self._out is not None
            self._broad = CollisionStats(bv_tests=int(self._out[OUT_HEAD]))
        return self._broad

    @property
    def exact(self) -> CollisionStats:
        if self._exact is None:
            assert self._out is not None
            self._exact = CollisionStats.from_counts(self._out[OUT_HEAD + 2:OUT_PAIRS], 0.0)
        return self._exact

    @property
    def t_total(self) -> float:
        return self.t_fk + self.t_update + self.t_test + self.t_query

    def __repr__(self) -> str:
        return f"SelfCollisionResult(pairs={self.pairs}, candidates={len(self.candidates)})"


def link_names(body) -> list:
    return list(getattr(body, "link_names", None) or [ln.name for ln in body.links])


def pair_mask(body, skip_adjacent: bool = True, disabled=None) -> np.ndarray:
    """(L, L) bool, symmetric: the link pairs a self-collision query checks. Never a link
    with itself or a link without geometry; parent-child pairs only if not
    ``skip_adjacent``; never a pair in ``disabled`` (iterable of (name, name) pairs; None:
    the body's ``default_disabled``, if any). Names
    of URDF links without geometry are accepted (they never collide); unknown names raise
    ``ValueError``."""
    names = link_names(body)
    L = len(names)
    m = ~np.eye(L, dtype=bool)
    geo = getattr(body, "has_geometry", None)
    if geo is not None:
        m &= geo[:, None] & geo[None, :]
    if skip_adjacent:
        for p, c in getattr(body, "parent_child_pairs", body.adjacent_pairs)():
            m[p, c] = m[c, p] = False
    if disabled is None:  # a robot's own filter (MJCF: MuJoCo's contype/conaffinity/exclude)
        disabled = getattr(body, "default_disabled", None)
    if disabled:
        index = {n: i for i, n in enumerate(names)}
        frames = set(getattr(body, "frame_names", names))
        for k, pair in enumerate(disabled):
            if isinstance(pair, str) or len(pair) != 2:
                raise ValueError(f"disabled[{k}]: expected a (link, link) pair, got {pair!r}")
            a, b = pair
            for n in (a, b):
                if n not in frames:
                    raise ValueError(f"disabled[{k}]: unknown link {n!r}; links: {', '.join(names)}")
            if a in index and b in index:
                m[index[a], index[b]] = m[index[b], index[a]] = False
    return m


class SelfCollisionChecker:
    """Repeated self-collision queries of one body (the hierarchy and pair mask are kept).

    Parameters
    ----------
    body : ArticulatedBody (e.g. a RobotBody from ``load_urdf``)
    method : {"aabb_plus", "aabb_star", "obb", "cab"}
        Articulation-hierarchy update.
    skip_adjacent : bool
        Leave out parent-child link pairs (joined links usually touch at the joint).
    disabled : iterable of (str, str), optional
        Link pairs never checked (e.g. ``read_srdf_disabled(path)``).
    test : str
        Broad-phase overlap test (``BODY_TESTS``); ``exact_test`` the mesh-level one.
    broad : {"auto", "hierarchy", "pairs"}
        Broad phase of the one-call path (URDF/MJCF robots): the articulation hierarchy's
        self-traversal, or every checked link pair's leaf boxes (bounding spheres, then
        the 15-axis box test). Both report the same candidate pairs (the hierarchy's
        inner boxes enclose its leaves). "pairs" needs oriented leaf boxes (``method``
        "obb", "cab" or "cab_sum"); "auto" takes it for those methods when at most
        ``PAIRS_MAX`` pairs are checked: for a hand (21 links, 190 pairs) the sweep costs
        a quarter of updating and traversing the hierarchy, whose node pairs near the
        palm nearly all overlap.
    """

    def __init__(self, body: ArticulatedBody, method: str = "cab", skip_adjacent: bool = True, disabled=None,
                 test: str = "sat15", exact_test: str | None = None, broad: str = "auto"):
        if not isinstance(body, ArticulatedBody):
            raise TypeError(f"body: expected an ArticulatedBody, got {type(body).__name__}")
        if method not in UPDATE_METHODS:
            raise ValueError(f"method: expected one of {UPDATE_METHODS}, got {method!r}")
        if test not in BODY_TESTS:
            raise ValueError(f"test: expected one of {BODY_TESTS}, got {test!r}")
        self.body = body
        self.method = method
        self.test = test
        self.exact_test = exact_test
        self.names = link_names(body)
        self.mask = pair_mask(body, skip_adjacent, disabled)
        self.hierarchy = BodyHierarchy(body, method)  # its topology; queries never write it
        if broad not in BROAD_MODES:
            raise ValueError(f"broad: expected one of {BROAD_MODES}, got {broad!r}")
        oriented = self.hierarchy.method_id >= METHOD_OBB  # leaf boxes are the links' OBBs
        if broad == "pairs" and not oriented:
            raise ValueError(f"broad='pairs' needs oriented leaf boxes (method 'obb', 'cab' or 'cab_sum'), got "
                             f"method {method!r}")
        n_pairs = int(np.triu(self.mask, 1).sum())
        use_pairs = broad == "pairs" or (broad == "auto" and oriented and n_pairs <= PAIRS_MAX)
        self.broad = "pairs" if use_pairs else "hierarchy"
        self._fused = None
        if hasattr(body, "_kin") and body.bvhs[0].kind not in KDOP_KINDS:
            self._fused = _pack_fused(body, self.hierarchy, self.mask,
                                      TEST_CODES[exact_test or BV_TYPES[body.mesh_bv].tests[0]],
                                      BROAD_PAIRS if use_pairs else BROAD_HIERARCHY)

    def check(self, q, root_pose=None) -> SelfCollisionResult:
        """Self-collision at joint values ``q`` (n_dofs,) float64.

        URDF robots with non-k-DOP link hierarchies run as one compiled call (validation,
        FK, update, self-traversal, exact queries; its time is reported in ``t_test``);
        other bodies go through ``check_poses``. Every call has its own working memory: one
        checker may be shared by several threads.

        Raises ``ValueError`` for a ``q`` of the wrong shape, NaN/inf joint values, or joint
        values that put a link beyond ``cdcore.mesh.MAX_COORD`` (or make its pose
        non-finite, e.g. a huge mimic multiplier)."""
        fz = self._fused
        if fz is None:
            t0 = time.perf_counter()
            poses = self.body.fk(q, None if root_pose is None else as_pose(root_pose, "root_pose"))
            return self.check_poses(poses, time.perf_counter() - t0)
        root = _ROOT_IDENTITY if root_pose is None else _root_array(root_pose)
        out = _empty(fz.out_len, _I64)  # per call: the result keeps it
        # a contiguous, aligned, writeable float64 vector goes to the kernel as it is (its
        # length and values are checked there); numba refuses anything else with TypeError
        # (the kernel has one signature and never compiles another), and it is copied: the
        # common call pays no checks in Python
        t0 = _clock()
        try:
            status = self_check(q, root, fz.pbuf, out)
        except TypeError:
            q = self._as_q(q)
            t0 = _clock()
            status = self_check(q, root, fz.pbuf, out)
        dt = _clock() - t0
        if status != ST_OK:
            _raise_status(self.body, status, out[3], q)
        # ``SelfCollisionResult._kernel`` inlined (a classmethod call is a tenth of a
        # microsecond, ~1 % of a hand's query)
        r = _new_object(SelfCollisionResult)
        r._names, r._out, r.t_test = self.names, out, dt
        return r

    def _as_q(self, q) -> np.ndarray:
        shape = (self.body.n_dofs,)
        try:
            qa = np.array(q, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"q: expected {self.body.n_dofs} real joint values, got {type(q).__name__}") from None
        if qa.shape != shape:
            raise ValueError(f"q: expected shape {shape}, got {qa.shape}")
        return qa

    def check_poses(self, poses, t_fk: float = 0.0) -> SelfCollisionResult:
        """Self-collision with link ``poses`` (L, 4, 4) given directly (finite, translations
        within ``cdcore.mesh.MAX_COORD``)."""
        h = BodyHierarchy(self.body, self.method)  # per call: a checker is shared by threads
        poses = check_link_poses(poses, self.body.n_links, "poses")
        t_upd = h.update(poses)
        cand, _, broad = _broad_phase(h, h, self.test, False)
        keep = (cand[:, 0] < cand[:, 1]) & self.mask[cand[:, 0], cand[:, 1]]
        cand = cand[keep]
        cand = cand[np.lexsort((cand[:, 1], cand[:, 0]))]
        hits, exact, t_query = run_exact_queries(self.body, h.poses, self.body, h.poses, cand, self.exact_test)
        return SelfCollisionResult(self.names, cand[hits], cand, broad, exact, t_fk, t_upd, broad.t_total, t_query)


_ROOT_IDENTITY = np.eye(4)[None].copy()  # read by the kernel, never written
_F64 = np.dtype(np.float64)  # native float64 arrays carry this very dtype object
# the per-query path's callables and dtype bound once (attribute look-ups and a keyword
# argument are measurable next to a 10 us query)
_I64 = np.dtype(np.int64)
_empty = np.empty
_clock = time.perf_counter
_new_object = object.__new__
_FLAGS_PASS = 0x0001 | 0x0100 | 0x0400  # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE
BROAD_MODES = ("auto", "hierarchy", "pairs")
# "auto" sweeps the pairs up to this many: ~5 ns per pair whose spheres are apart, so 1024
# pairs cost about what refitting a hierarchy of ~20 links costs
PAIRS_MAX = 1024


def _root_array(root_pose) -> np.ndarray:
    return np.array(as_pose(root_pose, "root_pose"), dtype=np.float64)[None]


def check_link_poses(poses, n_links: int, name: str = "poses") -> np.ndarray:
    """(n_links, 4, 4) float64 link poses, finite, translations within ``MAX_COORD``."""
    poses = writable_f64(poses)
    if poses.shape != (n_links, 4, 4):
        raise ValueError(f"{name}: expected shape ({n_links}, 4, 4), got {poses.shape}")
    ok = np.abs(poses[:, :3, :]) <= MAX_COORD  # False for NaN
    if not ok.all():
        i = int(np.argwhere(~ok)[0][0])
        raise ValueError(f"{name}[{i}]: link pose is non-finite or translated beyond {MAX_COORD:g} "
                         "(joint values or mimic multipliers too large)")
    return poses


def _raise_status(body, status, where, q):
    if status == ST_Q_SHAPE:
        raise ValueError(f"q: expected shape ({body.n_dofs},), got {np.shape(q)}")
    if status == ST_Q_NONFINITE:
        raise ValueError(f"q: contains NaN or infinite joint values (q[{int(where)}] = {q.ravel()[int(where)]})")
    if status == ST_POSE_BAD:
        names = link_names(body)
        raise ValueError(f"q: link {names[int(where)]!r} gets a non-finite pose or one translated beyond "
                         f"{MAX_COORD:g} (joint values or mimic multipliers too large)")
    raise RuntimeError(f"self-collision kernel: unknown status {int(status)}")


class _Fused(NamedTuple):
    """The static arrays of a URDF body packed for ``self_check`` / ``_count_chunk``
    (``pbuf``: the three buffers in one array, ``_self_kernel.pack``)."""
    fbuf: np.ndarray
    ibuf: np.ndarray
    lbuf: np.ndarray
    pbuf: np.ndarray
    stack_rows: int
    qshape: tuple
    out_len: int  # of ``self_check``'s output array


def _pack_fused(body, h, mask, plan, broad=BROAD_HIERARCHY) -> _Fused:
    """The static arrays of a URDF body packed for the kernels (a snapshot: a checker does
    not follow later ``set_link_vertices`` calls). ``broad``: ``BROAD_HIERARCHY`` or
    ``BROAD_PAIRS`` (see ``broad_phase_kind``)."""
    k, tr = body._kin, body.tree
    code, program = plan
    qplan = make_plan(body.bvhs[0].kind, code, program, first=True)
    floats = [k["origins"], k["axes"], k["mult"], k["offset"], body.leaf_c, body.leaf_R, body.leaf_e, body.moments,
              body.nodes_f, body.vertices]
    ints = [k["parents"], k["jtype"], k["src"], body._select, tr.nodes_i, tr.link_order, tr.joint_link,
            tr.leaf_of_link, body.nodes_i, body.prim_order, body.faces, body.node_off, body.prim_off, body.vert_off]
    prim_floats, prim_ints, prim_dims = fused_prim_arrays(body)  # exact primitive links (primlinks)
    ii, jj = np.nonzero(np.triu(mask, 1))  # the checked pairs (i < j), sorted
    pairs = np.stack([ii, jj], 1).astype(np.int32).reshape(-1, 2)
    floats, ints = floats + prim_floats, ints + prim_ints + [pairs]
    off_f, pos = [], 0
    for a in floats:
        off_f.append(pos)
        pos += a.size
    fbuf = np.concatenate([np.ascontiguousarray(a, dtype=np.float64).ravel() for a in floats])
    off_i, pos = [], 0
    for a in ints:
        off_i.append(pos)
        pos += a.size
    off = off_f[:10] + off_i[:14] + off_f[10:] + off_i[14:]
    if max(int(np.max(np.abs(a))) if a.size else 0 for a in ints) >= 2 ** 31:
        raise ValueError("body too large for the packed self-collision kernel")
    ibuf = np.concatenate([np.asarray(a).astype(np.int32).ravel() for a in ints])
    L, K = body.n_links, len(body.frame_names)
    H, N = tr.n_nodes, len(body.nodes_f)
    dims = [K, L, H, N, len(body.vertices), len(body.faces), h.method_id, body.bvhs[0].kind, code, program,
            max(bv.leaf_size for bv in body.bvhs) ** 2] + prim_dims + [broad, len(pairs)]
    stack_rows = 2 * max(body.max_height, prim_dims[-1]) + 2
    dims += [stack_rows, body.n_dofs]
    bits, reach = link_bit_sets(tr, mask)
    lbuf = np.concatenate([np.array(off + dims, dtype=np.int64), bits, reach,
                           np.asarray(mask, dtype=np.int64).ravel(), qplan])
    assert len(off) == N_OFF and len(dims) == N_DIMS
    return _Fused(fbuf, ibuf, lbuf, pack(fbuf, ibuf, lbuf), stack_rows, (body.n_dofs,), out_length(lbuf))


def link_bit_sets(tr, mask):
    """Per hierarchy node: the links under it as a bit set (``bits``) and the links some
    link under it is checked against (``reach``), for pruning node pairs that hold no
    checked pair; all ones (no pruning) beyond 63 links. Linear in the tree size."""
    H, L = tr.n_nodes, len(tr.link_order)
    if L > 63:
        return np.full(H, -1, dtype=np.int64), np.full(H, -1, dtype=np.int64)
    link_bits = np.array([1 << i for i in range(L)], dtype=np.int64)
    allow = np.zeros(L, dtype=np.int64)
    for i in range(L):
        for j in np.flatnonzero(mask[i]):
            allow[i] |= link_bits[j]
    bits = np.zeros(H, dtype=np.int64)
    reach = np.zeros(H, dtype=np.int64)
    for n in range(H):
        s, c = tr.nodes_i[n, 2], tr.nodes_i[n, 3]
        for li in tr.link_order[s:s + c]:
            bits[n] |= link_bits[li]
            reach[n] |= allow[li]
    return bits, reach


def self_collision_pairs(body, q, method: str = "cab", skip_adjacent: bool = True, disabled=None,
                         root_pose=None) -> list:
    """Link name pairs whose meshes intersect at joint values ``q`` (n_dofs,) float64.

    Through the articulation hierarchy (``method``: any of ``UPDATE_METHODS``) and the links'
    mesh hierarchies; every method gives the same answer. See :class:`SelfCollisionChecker`
    for ``skip_adjacent``/``disabled`` and for repeated queries."""
    return SelfCollisionChecker(body, method, skip_adjacent, disabled).check(q, root_pose).pairs


def brute_force_self_pairs(body, q, skip_adjacent: bool = True, disabled=None, root_pose=None) -> list:
    """Reference: an exact query for every checked link pair, no articulation hierarchy."""
    mask = pair_mask(body, skip_adjacent, disabled)
    ii, jj = np.nonzero(np.triu(mask, 1))
    pairs = np.stack([ii, jj], axis=1).astype(np.int32)
    poses = body.fk(q, root_pose)
    hits, _, _ = run_exact_queries(body, poses, body, poses, pairs)
    names = link_names(body)
    return [(names[i], names[j]) for i, j in pairs[hits].tolist()]


def environment_body(env, mesh_bv: str = "obb", name: str | None = None) -> ArticulatedBody:
    """A one-link body from a Mesh (an environment obstacle); bodies pass through."""
    if isinstance(env, ArticulatedBody):
        return env
    if not isinstance(env, Mesh):
        raise TypeError(f"env: expected a cdcore.Mesh or an ArticulatedBody, got {type(env).__name__}")
    return ArticulatedBody([Link(name or env.name, env, -1)], name or env.name, mesh_bv)


def environment_pairs(body, q, env, env_poses=None, method: str = "cab", root_pose=None) -> list:
    """(robot link, environment link) name pairs in contact at joint values ``q``, sorted by
    link order.

    ``env``: a Mesh (posed by ``env_poses`` (4, 4), default identity) or an ArticulatedBody
    (``env_poses`` (L_env, 4, 4) its link poses, default its FK at zero). Mesh environments
    are wrapped once per call; for repeated queries build ``environment_body`` once and pass
    it."""
    eb = env if isinstance(env, ArticulatedBody) else environment_body(env, body.mesh_bv)
    if env_poses is None:
        env_poses = eb.fk(np.zeros(eb.n_dofs))
    env_poses = np.asarray(env_poses)
    if env_poses.shape == (4, 4):
        env_poses = env_poses[None]
    if env_poses.shape != (eb.n_links, 4, 4):
        raise ValueError(f"env_poses: expected shape ({eb.n_links}, 4, 4), got {env_poses.shape}")
    env_poses = check_link_poses(as_poses(env_poses, "env_poses"), eb.n_links, "env_poses")
    root = None if root_pose is None else as_pose(root_pose, "root_pose")
    poses = check_link_poses(body.fk(q, root), body.n_links, "link poses")
    ha, hb = BodyHierarchy(body, method), BodyHierarchy(eb, method)
    ha.update(poses)
    hb.update(env_poses)
    r = collide_bodies(ha, hb)
    na, nb = link_names(body), link_names(eb)
    geo = getattr(body, "has_geometry", None)
    return [(na[i], nb[j]) for i, j in sorted(map(tuple, r.contacts.tolist())) if geo is None or geo[i]]


def read_srdf_disabled(path) -> list:
    """The ``<disable_collisions link1=.. link2=..>`` pairs of an SRDF file."""
    import xml.etree.ElementTree as ET

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"SRDF file not found: {path}")
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, LookupError, UnicodeError) as exc:  # (an unknown or wrong declared encoding)
        raise ValueError(f"{os.path.basename(path)}: not readable XML ({type(exc).__name__}: {exc})") from None
    out = []
    for k, el in enumerate(root.iter("disable_collisions")):
        a, b = el.get("link1"), el.get("link2")
        if not a or not b:
            raise ValueError(f"{os.path.basename(path)}: <disable_collisions> #{k} needs link1 and link2")
        out.append((a, b))
    return out


__all__ = ["SelfCollisionChecker", "SelfCollisionResult", "self_collision_pairs", "brute_force_self_pairs",
           "environment_body", "environment_pairs", "pair_mask", "read_srdf_disabled"]
