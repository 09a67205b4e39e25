"""Collision queries between two hierarchies: the typed public API over ``_core``.

Each query is one compiled call (``_core.query_entry_w``; ``query_entry`` with a trace; more
only when a buffer fills up): the poses are checked, the relative transform computed, the
hierarchies traversed and the pairs sorted inside it, in one int64 workspace the call
allocates (``_layout.W_*``: counters, state, scratch, stack, then the pairs). The options of
a query reach the kernels as one prepared int64 ``plan`` array (``_layout.P_*``), looked up
once per call (``_PLANS``). The common case (no k-DOP, trace or contact geometry) runs inline
in ``collide`` and returns a ``CollisionResult`` whose ``pairs``, ``counts`` and ``t_total``
are read from the workspace on first access.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property

import numpy as np

from . import _layout as L
from ._core import (POSE_A_BAD, POSE_B_BAD, POSE_SHAPE, RESUME, STATUS, batch_entry, batch_serial_entry, make_plan,
                    query_entry, query_entry_w, query_kdop_entry, resume_entry, resume_kdop_entry, workspace_len)
from ._cycles import seconds_per_cycle
from ._kdop_traverse import REALIGN_METHODS, REALIGN_TABLE, check_realign, kdop_query_arrays, no_kdop_arrays
from ._overlap import PROGRAM_SAT6, PROGRAM_SAT15, PROGRAM_SPHERE5
from .bv import BV_TYPES
from .bvh import BVH
from .transforms import _POSE_PROBLEMS, as_pose, as_poses

TESTS = ("sat15", "sat6", "sphere", "sphere5", "sphere15", "slab")  # "slab": k-DOPs (cdcore.bv.kdop)

AXIS_NAMES = (
    ["a0 (A long)", "a1 (A mid)", "a2 (A short)", "b0 (B long)", "b1 (B mid)", "b2 (B short)"]
    + [f"a{i} x b{j}" for i in range(3) for j in range(3)] + ["sphere"])

# test name -> (test code, axis program) for the node-pair test of ``_core.traverse``
TEST_CODES = {
    "sat15": (L.TEST_SAT15, PROGRAM_SAT15),
    "sat6": (L.TEST_SAT6, PROGRAM_SAT6),
    "sphere": (L.TEST_SPHERE, PROGRAM_SAT6),
    "sphere5": (L.TEST_SPHERE5, PROGRAM_SPHERE5),
    "sphere15": (L.TEST_SPHERE15, PROGRAM_SAT15),
    "slab": (L.TEST_SLAB, 0),
}


class Outcome(IntEnum):
    """What happened to a tested node pair (trace rows)."""
    SEPARATED = L.OUT_SEPARATED
    OVERLAP = L.OUT_OVERLAP  # volumes overlap, one node was descended
    LEAF_HIT = L.OUT_LEAF_HIT  # leaf pair with at least one intersecting triangle pair
    LEAF_MISS = L.OUT_LEAF_MISS  # leaf pair whose volumes overlap but no triangles do


@dataclass
class CollisionStats:
    """Counters and timings of one query (or summed over a batch).

    ``t_bv`` is the traversal time outside primitive tests (BV tests and bookkeeping,
    van den Bergen's T_b); ``t_prim`` the time in exact triangle tests (T_p).
    ``axis_hist`` (16,) counts rejected node pairs by the axis that separated them
    (ids in ``AXIS_NAMES``; 15 is the sphere test; k-DOP trees: A's slab ids).
    """
    bv_tests: int = 0
    prim_tests: int = 0
    leaf_pairs: int = 0
    false_alarms: int = 0
    max_stack: int = 0
    t_total: float = 0.0
    prim_cycles: int = 0  # cycle-counter ticks inside exact triangle tests
    axis_hist: np.ndarray = field(default_factory=lambda: np.zeros(L.N_AXES, dtype=np.int64))

    @classmethod
    def from_counts(cls, counts: np.ndarray, t_total: float) -> "CollisionStats":
        """From a kernel's counter array (``_layout``: N_COUNTERS counters, then the histogram)."""
        c = counts[:L.N_COUNTERS].tolist()
        return cls(c[L.CNT_BV_TESTS], c[L.CNT_PRIM_TESTS], c[L.CNT_LEAF_PAIRS], c[L.CNT_FALSE],
                   c[L.CNT_MAX_STACK], t_total, c[L.CNT_PRIM_CYCLES], counts[L.N_COUNTERS:L.N_STATS].copy())

    @property
    def t_prim(self) -> float:
        return min(self.prim_cycles * seconds_per_cycle(), self.t_total)

    @property
    def t_bv(self) -> float:
        return self.t_total - self.t_prim

    @property
    def separated(self) -> int:
        return int(self.axis_hist.sum())


@dataclass
class Trace:
    """Every tested node pair in traversal order. All arrays (k,) int32. ``split``: which
    node the kernel descended after an overlap (0: A's, 1: B's, -1: none), so that the
    pending pairs can be replayed without re-implementing the descend rule."""
    node_a: np.ndarray
    node_b: np.ndarray
    outcome: np.ndarray  # Outcome values
    axis: np.ndarray  # separating axis id for SEPARATED rows, else -1
    split: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.node_a)

    @classmethod
    def from_rows(cls, rows: np.ndarray) -> "Trace":
        """From the kernel's (k, TRACE_COLS) rows."""
        return cls(*(np.ascontiguousarray(rows[:, c]) for c in range(L.TRACE_COLS)))


@dataclass
class CollisionResult:
    """``hit``: any intersecting triangle pair; ``pairs`` (k, 2) int32 (triangle of A,
    triangle of B), sorted, all of them for ``contacts="all"``, one for ``"first"``;
    ``counts`` (N_STATS + 1,) int64 the kernel's raw counters, histogram and status
    (``cdcore._layout``; ``stats`` reads them);
    ``t_total`` seconds in the compiled query.

    With ``geometry=True`` (``cdcore._contact`` defines them; all world coordinates, row r
    belongs to ``pairs[r]``; ``None`` otherwise):

    points : (k, 2, 3) float64
        End points of the intersection segment of the two triangles (equal for a point
        contact; the diameter of the overlap polygon for coplanar pairs).
    normals : (k, 3) float64
        Unit axis of the minimum translational penetration, oriented from A to B (moving B
        along it by ``depths`` separates the pair). Coplanar pairs: A's face normal.
    depths : (k,) float64
        Translational penetration depth: the shortest translation of B that separates the
        two triangles, the minimum overlap over the pair's 11 candidate axes (2 face normals,
        9 edge cross products). 0 for coplanar and touching pairs.
    ``cdcore.contacts.summarize`` gives the deepest contact and the count."""
    hit: bool
    pairs: np.ndarray
    counts: np.ndarray
    t_total: float = 0.0
    trace: Trace | None = None
    points: np.ndarray | None = None
    normals: np.ndarray | None = None
    depths: np.ndarray | None = None

    @cached_property
    def stats(self) -> CollisionStats:
        return CollisionStats.from_counts(self.counts, self.t_total)


@dataclass
class BatchResult:
    """``hits`` (N,) bool, one per pose; ``stats`` summed over all poses."""
    hits: np.ndarray
    stats: CollisionStats


@dataclass(frozen=True)
class _Plan:
    kdop: bool
    kind: int
    test: int
    program: int
    method: int  # k-DOP realignment method (REALIGN_*), 0 otherwise
    # the kernels' plan arrays by (first, trace) (``_core.make_plan``): built once, never written
    arrays: dict = field(default_factory=dict, compare=False, hash=False)
    p_first: np.ndarray = field(init=False, compare=False, hash=False, repr=False)
    p_all: np.ndarray = field(init=False, compare=False, hash=False, repr=False)

    def plan(self, first: bool, trace: bool = False) -> np.ndarray:
        return self.arrays[(first, trace)]

    def __post_init__(self):
        # ``plan(True)`` and ``plan(False)`` as attributes: read per query instead of a lookup
        object.__setattr__(self, "p_first", self.arrays.get((True, False)))
        object.__setattr__(self, "p_all", self.arrays.get((False, False)))


def _make_plans() -> dict:
    """Every valid (bv, test, realign) of a query -> its plan. Built once at import and never
    changed (a read-only lookup: one dict access validates the options of a query)."""
    plans = {}
    for bv, t in BV_TYPES.items():
        kdop = t.kind in L.KDOP_KINDS
        for test in (None,) + tuple(t.tests):
            name = test or t.tests[0]
            code, program = TEST_CODES[name]
            for realign in ((None,) + tuple(REALIGN_METHODS)) if kdop else (None,):
                method = REALIGN_METHODS[check_realign(realign, True)] if kdop else 0
                arrays = {(f, tr): make_plan(t.kind, code, program, method, f, tr)
                          for f in (False, True) for tr in (False, True)}
                plans[(bv, test, realign)] = _Plan(kdop, t.kind, code, program, method, arrays)
    return plans


_PLANS = _make_plans()
# ``collide``'s common case: (bv, test, realign, contacts) -> (the ``_Plan``, the kernel's plan
# array, first contact) for every valid option set of a type that is not a k-DOP (read-only)
_FAST = {key + (contacts,): (plan, plan.plan(contacts == "first"), contacts == "first")
         for key, plan in _PLANS.items() if not plan.kdop for contacts in ("all", "first")}


def _plan(bvh_a, bvh_b, test, realign) -> _Plan:
    if type(bvh_a) is BVH and type(bvh_b) is BVH and bvh_a.bv == bvh_b.bv:
        try:
            return _PLANS[(bvh_a.bv, test, realign)]
        except (KeyError, TypeError):  # TypeError: an unhashable option
            pass
    _check_pair(bvh_a, bvh_b, test)
    check_realign(realign, bvh_a.kind in L.KDOP_KINDS)
    raise ValueError(f"invalid options test={test!r}, realign={realign!r} for bv={bvh_a.bv!r}")


def _check_pair(bvh_a, bvh_b, test):
    """Validate two hierarchies and a test name; returns the test (the type's default for None)."""
    for name, b in (("bvh_a", bvh_a), ("bvh_b", bvh_b)):
        if not isinstance(b, BVH):
            raise TypeError(f"{name}: expected cdcore.BVH, got {type(b).__name__}")
    if bvh_a.bv != bvh_b.bv:
        raise ValueError(f"both hierarchies must have the same bounding-volume type, got {bvh_a.bv!r} "
                         f"and {bvh_b.bv!r}")
    allowed = BV_TYPES[bvh_a.bv].tests
    if test is None:
        test = allowed[0]
    if test not in allowed:
        raise ValueError(f"test: {test!r} is not available for bv={bvh_a.bv!r}; choose one of {allowed}")
    return test


_EYE = np.eye(4)  # the identity pose of ``None`` (never written)
_F8 = np.dtype(np.float64)


def pose_arg(pose, name):
    """A pose ready for a kernel: float64 C-contiguous writable (4, 4) arrays pass as they are
    (the kernel checks them: ``_core.pose_status``), others are converted and checked here
    (``flags.carray``: C-contiguous, aligned and writable; a read-only pose would compile the
    kernels again)."""
    if pose is None:
        return _EYE
    if type(pose) is np.ndarray and pose.dtype == _F8 and pose.shape == (4, 4) and pose.flags.carray:
        return pose
    return as_pose(pose, name)


_PROBLEMS = {**_POSE_PROBLEMS, POSE_SHAPE: "expected shape (4, 4)"}


def raise_pose_status(status: int, name_a="pose_a", name_b="pose_b"):
    if status >= POSE_B_BAD:
        raise ValueError(f"{name_b}: {_PROBLEMS[status - POSE_B_BAD]}")
    raise ValueError(f"{name_a}: {_PROBLEMS[status - POSE_A_BAD]}")


_NOT_RIGID = 3  # transforms._pose_problem: rotation part not orthonormal


def split_scale(pose):
    """(rigid pose (4, 4), scale (3,)) of a pose ``[R diag(s) | t]`` with R a rotation and
    s > 0 (van den Bergen 1998, section 6: VRML's non-uniform scaling), or None when it is
    not of that form (shear, reflection, zero scale)."""
    try:
        M = np.asarray(pose, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if M.shape != (4, 4) or not np.all(np.isfinite(M)):
        return None
    s = np.sqrt((M[:3, :3] ** 2).sum(axis=0))
    if not np.all(s > 0):
        return None
    rigid = M.copy()
    rigid[:3, :3] = M[:3, :3] / s
    try:
        as_pose(rigid)
    except ValueError:
        return None
    return rigid, s


def _scaled_query(bvh_a, pose_a, bvh_b, pose_b):
    """A query whose poses may carry per-axis scale: (bvh_a, rigid pose_a, bvh_b, rigid
    pose_b) with the scaled AABB trees (``BVH.scaled``). A pose that is not
    ``[R diag(s) | t]`` raises the rigid-pose error; a scale on a non-AABB tree says so."""
    out = []
    for name, bvh, pose in (("pose_a", bvh_a, pose_a), ("pose_b", bvh_b, pose_b)):
        if pose is None:
            out += [bvh, _EYE]
            continue
        # not a real array (strings, complex, bool, objects, ragged): the rigid-pose check says so
        try:
            real = np.asarray(pose).dtype.kind in "fiu"
        except (TypeError, ValueError):
            real = False
        if not real:
            out += [bvh, as_pose(pose, name)]
            continue
        split = split_scale(pose)
        if split is None:
            out += [bvh, as_pose(pose, name)]  # raises what is wrong with it
            continue
        rigid, s = split
        if np.all(np.abs(s - 1.0) <= 1e-9):
            out += [bvh, rigid]
        elif bvh.kind != L.KIND_AABB:
            raise ValueError(f"{name}: not a rigid transform: it has per-axis scale {np.round(s, 6).tolist()}; "
                             f"scaled poses are supported for 'aabb' hierarchies only (van den Bergen 1998, "
                             f"section 6), not bv={bvh.bv!r}")
        else:
            out += [bvh.scaled(s), rigid]
    return out


def collide(bvh_a: BVH, pose_a, bvh_b: BVH, pose_b, test: str | None = None,
            contacts: str = "all", trace: bool = False, realign: str | None = None,
            geometry: bool = False) -> CollisionResult:
    """Intersect two posed meshes through their hierarchies.

    Parameters
    ----------
    bvh_a, bvh_b : BVH
        Hierarchies of the same bounding-volume type.
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms (``None``: identity). AABB hierarchies also take
        poses with per-axis scale, ``[R diag(s) | t]`` (van den Bergen 1998, section 6: the
        boxes are scaled, ``BVH.scaled``, never refitted); other types raise ``ValueError``.
    test : {"sat15", "sat6", "sphere", "sphere5", "sphere15"}, optional
        Overlap test: all 15 separating axes, SAT lite (6 face normals), spheres only,
        the dual OBB-sphere test (sphere then 5 axes) or sphere then 15 axes. Defaults to
        the first test of the BV type (``BV_TYPES[bv].tests``).
    contacts : {"all", "first"}
        Report every intersecting triangle pair, or stop at the first.
    trace : bool
        Record every tested node pair (``CollisionResult.trace``).
    realign : {"table", "table_angle", "all", "major"}, optional
        k-DOP hierarchies only (default "table"; must be None for other types): how B's
        k-DOPs are realigned to A's directions (``cdcore._kdop_traverse``). For k-DOPs the
        test is "slab" and trace/histogram axis ids are A's slab directions
        (``cdcore.bv.kdop.KDOP_AXIS_NAMES``).
    geometry : bool
        Also compute each reported pair's contact geometry (``CollisionResult.points``,
        ``normals``, ``depths``): a post-pass over the pairs (``cdcore.contacts``), so the
        traversal is unchanged and ``False`` costs nothing.

    Thread safety: any number of threads may query the same hierarchies at once; a
    hierarchy must not be refitted or rebuilt while another thread queries it.
    """
    # the common case (no k-DOP, trace or contact geometry) inline (each Python call level
    # costs ~0.1 us): one dict lookup validates the options and gives the kernel's plan
    # (``_FAST``); the poses go to the kernel as they are (one of another type than a writable
    # C-ordered float64 array makes the compiled entry raise TypeError: ``_run`` converts it);
    # one array for this call: the workspace with the pairs buffer at its end
    # (``_core._workspace``; a positional dtype object and no ``max`` call: ~0.6 K fewer
    # instructions per call)
    fast = None
    if type(bvh_a) is BVH and type(bvh_b) is BVH and bvh_a.bv == bvh_b.bv and not (trace or geometry):
        try:
            fast = _FAST.get((bvh_a.bv, test, realign, contacts))
        except TypeError:  # an unhashable option: ``_plan`` says so below
            pass
    if fast is not None:
        plan, p, first = fast
        pa = _EYE if pose_a is None else pose_a
        pb = _EYE if pose_b is None else pose_b
        cap = bvh_a._leaf_cap * bvh_b._leaf_cap
        o = _W_LEN + bvh_a._stack_h + bvh_b._stack_h
        W = _empty(o + (cap if first or cap > 64 else 64), _I8)
        try:
            n = query_entry_w(bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I, pa, pb, p, W)
        except TypeError:
            return _run(plan, bvh_a, pa, bvh_b, pb, first, False, pose_a, pose_b, False)
        if n < 0:
            return _finish(plan, bvh_a, pa, bvh_b, pb, first, False, pose_a, pose_b, False, None, W, _tail(W, o),
                           _NO_TRACE, n)
        res = _new(_Result)
        res.hit = n > 0
        res._W = W
        res._n = n
        res._o = o
        return res
    # the options validated (``_plan`` and the checks below say what is wrong)
    plan = None
    if type(bvh_a) is BVH and type(bvh_b) is BVH and bvh_a.bv == bvh_b.bv:
        try:
            plan = _PLANS.get((bvh_a.bv, test, realign))
        except TypeError:  # an unhashable option
            pass
    if plan is None:
        plan = _plan(bvh_a, bvh_b, test, realign)
    if contacts == "all":
        first = False
    elif contacts == "first":
        first = True
    else:
        raise ValueError(f"contacts: expected 'all' or 'first', got {contacts!r}")
    pa = _EYE if pose_a is None else pose_a
    pb = _EYE if pose_b is None else pose_b
    return _run(plan, bvh_a, pa, bvh_b, pb, first, trace, pose_a, pose_b, geometry)


_W_LEN = workspace_len(0, 0)  # a workspace's length without the trees' heights
_empty = np.empty
_I8 = np.dtype(np.int64)
_new = object.__new__
_NO_PAIRS = np.empty((0, 2), dtype=np.int32)  # never written: the pairs are at the workspace's end
_NO_TRACE = np.empty((1, L.TRACE_COLS), dtype=np.int32)  # never written: traces are off


def _tail(W, o):
    """The pairs buffer at the end of a workspace (from slot ``o``), as (rows, 2) int32."""
    return W[o:].view(np.int32).reshape(-1, 2)


class _Result(CollisionResult):
    """A ``CollisionResult`` of ``collide``'s common case, built without the dataclass's
    ``__init__`` (a Python call level per query): ``pairs`` and ``counts`` are views into the
    call's workspace ``_W``, made on first access. What a call sets lives in slots: the
    instance's ``__dict__`` (the other fields' values, the cached properties) is only made
    when something is written there, so a query that reads ``hit`` makes no dict (~1.5 K
    instructions of the call)."""
    __slots__ = ("hit", "_W", "_n", "_o")
    _W: np.ndarray  # the call's workspace (``_core._workspace``)
    _o: int  # where the pairs buffer starts in it
    _n: int  # pairs found

    @cached_property
    def pairs(self) -> np.ndarray:  # pyright: ignore[reportIncompatibleVariableOverride]
        return _tail(self._W, self._o)[:self._n]

    @cached_property
    def counts(self) -> np.ndarray:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self._W[:STATUS + 1]

    @cached_property
    def t_total(self) -> float:  # pyright: ignore[reportIncompatibleVariableOverride]
        return _seconds(self._W)


def _seconds(W) -> float:
    """Seconds in the compiled query: the cycle counter's ticks the kernel wrote at
    ``W[W_CYC]`` (``_cycles``; 0.0 on a platform without a usable counter)."""
    return float(W[L.W_CYC]) * seconds_per_cycle()


def _result(hit, pairs, counts, t_total, trace=None) -> CollisionResult:
    """``CollisionResult(hit, pairs, counts, t_total, trace)`` without running the dataclass's
    ``__init__``: the same attributes, set at once."""
    res = _new(CollisionResult)
    res.__dict__ = {"hit": hit, "pairs": pairs, "counts": counts, "t_total": t_total, "trace": trace,
                    "points": None, "normals": None, "depths": None}
    return res


def _kernel_pose(pose, name):
    """A pose the compiled entries take (float64, C-ordered, writable), converted and checked
    (``as_pose``; a pose with per-axis scale is left to the kernel's status)."""
    arr = None
    try:
        arr = np.asarray(pose)
        real = arr.dtype.kind in "fiu"
    except (TypeError, ValueError):
        real = False
    if not real or arr is None or arr.ndim != 2:
        return as_pose(pose, name)  # raises what is wrong with it
    if arr.shape != (4, 4):
        raise ValueError(f"{name}: expected shape (4, 4), got {arr.shape}")
    return np.array(arr, dtype=np.float64, order="C")  # a writable copy


def _run(plan, bvh_a, pa, bvh_b, pb, first, trace, pose_a, pose_b, geometry, converted=False) -> CollisionResult:
    """One query (``collide``'s general path: k-DOP trees, traces, contact geometry, converted
    poses): buffers for this call, one compiled call (more when a buffer fills up)."""
    trace = bool(trace)
    p = plan.plan(first, trace)
    kd = kdop_query_arrays(bvh_a, bvh_b, plan.method) if plan.kdop else None
    k2, rings = (0, 0) if kd is None else (kd.dirs.shape[0], kd.T.shape[0])
    o = workspace_len(bvh_a._stack_h, bvh_b._stack_h, k2, rings)
    cap = bvh_a._leaf_cap * bvh_b._leaf_cap
    W = np.empty(o + (cap if first else max(64, cap)), dtype=np.int64)
    pairs = _tail(W, o)  # the workspace's end, as the kernel sees it
    rows = np.empty((4096, L.TRACE_COLS), dtype=np.int32) if trace else _NO_TRACE
    FA, IA, FB, IB = bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I
    try:
        if kd is None:
            n = query_entry(FA, IA, FB, IB, pa, pb, p, W, pairs, rows)
        else:
            n = query_kdop_entry(FA, IA, FB, IB, pa, pb, p, W, pairs, rows, kd)
    except TypeError:  # a pose the entries do not take as it is
        if converted:
            raise
        pa2 = pa if pa is _EYE else _kernel_pose(pa, "pose_a")
        pb2 = pb if pb is _EYE else _kernel_pose(pb, "pose_b")
        return _run(plan, bvh_a, pa2, bvh_b, pb2, first, trace, pose_a, pose_b, geometry, True)
    return _finish(plan, bvh_a, pa, bvh_b, pb, first, trace, pose_a, pose_b, geometry, kd, W, pairs, rows, n)


def _finish(plan, bvh_a, pa, bvh_b, pb, first, trace, pose_a, pose_b, geometry, kd, W, pairs, rows, n):
    """After the first compiled call (``n``): resumes while a buffer is
    full, handles a pose the kernel refused (``counts[STATUS]``: a pose with per-axis scale,
    AABB trees: run on the scaled trees, once; or an error), builds the result."""
    FA, IA, FB, IB = bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I
    p = plan.plan(first, trace)
    cap = bvh_a._leaf_cap * bvh_b._leaf_cap
    while n == RESUME:  # a full buffer: grow it, keep what is written, resume
        n_pairs, n_rows = int(W[L.W_STATE + L.ST_PAIRS]), int(W[L.W_STATE + L.ST_TRACE])
        if n_pairs + cap > len(pairs):
            pairs = _grown(pairs, n_pairs, n_pairs + cap)
        if trace and n_rows >= len(rows):
            rows = _grown(rows, n_rows, n_rows + 1)
        if kd is None:
            n = resume_entry(FA, IA, FB, IB, p, W, pairs, rows)
        else:
            n = resume_kdop_entry(FA, IA, FB, IB, p, W, pairs, rows, kd)
    if n < 0:
        if pose_a is None and pose_b is None:
            raise_pose_status(-n)
        # a pose with per-axis scale (AABB: the scaled trees), or an error raised here
        sa, ra, sb, rb = _scaled_query(bvh_a, pose_a, bvh_b, pose_b)
        if sa is bvh_a and sb is bvh_b:
            raise_pose_status(-n)
        return _run(plan, sa, ra, sb, rb, first, trace, None, None, geometry)
    res = _result(n > 0, pairs[:n], W[:STATUS + 1], _seconds(W),
                  Trace.from_rows(rows[:int(W[L.W_STATE + L.ST_TRACE])]) if trace else None)
    if geometry:  # contact geometry: a post-pass over the pairs (cdcore.contacts), only when asked
        from .contacts import add_geometry
        add_geometry(res, bvh_a, pa, bvh_b, pb)
    return res


def _grown(buf, n, need):
    """A buffer of at least ``need`` rows (twice as many as ``buf``'s at least) holding its
    first ``n`` rows."""
    out = np.empty((max(need, 2 * len(buf)), buf.shape[1]), dtype=buf.dtype)
    out[:n] = buf[:n]
    return out


# Concurrent parallel regions from several Python threads are safe with the OpenMP/TBB
# threading layers but abort with numba's fallback "workqueue" layer: batches take turns.
# (A lock, not state: it guards no data.)
_PARALLEL = threading.Lock()
_MIN_PARALLEL = 64  # fewer poses run in one chunk: thread start-up would dominate


def n_chunks(n: int, parallel: bool) -> int:
    """Chunks of a parallel batch of n items: a few per thread, for load balance."""
    if not parallel or n < _MIN_PARALLEL:
        return 1
    import numba
    return int(min(n, 4 * numba.get_num_threads()))


def collide_batch(bvh_a: BVH, bvh_b: BVH, poses_b, pose_a=None, test: str | None = None,
                  realign: str | None = None, parallel: bool = True) -> BatchResult:
    """First-contact queries for N placements of B in one compiled call (the van den
    Bergen benchmark: many random placements), spread over numba's threads.

    Parameters
    ----------
    poses_b : (N, 4, 4) float64
        Placements of B.
    pose_a : (4, 4) float64, optional
        Placement of A (identity by default).
    realign : {"table", "table_angle", "all", "major"}, optional
        As for ``collide`` (k-DOP hierarchies only).
    parallel : bool
        Use all of numba's threads (``numba.set_num_threads``); the hits are identical to
        a serial run, the counters too (``max_stack`` is the maximum over chunks).
    """
    plan = _plan(bvh_a, bvh_b, test, realign)
    pa = as_pose(pose_a, "pose_a")
    pbs = as_poses(poses_b, "poses_b")
    kd = kdop_query_arrays(bvh_a, bvh_b, plan.method) if plan.kdop else no_kdop_arrays()
    chunks = n_chunks(len(pbs), parallel)
    p = plan.plan(True)
    t0 = time.perf_counter()
    if chunks == 1:  # small or serial: never wakes numba's thread pool
        hits, counts = batch_serial_entry(bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I, pa, pbs, p, kd)
    else:
        with _PARALLEL:
            hits, counts = batch_entry(bvh_a._F, bvh_a._I, bvh_b._F, bvh_b._I, pa, pbs, p, kd, chunks)
    return BatchResult(hits, CollisionStats.from_counts(counts, time.perf_counter() - t0))


__all__ = ["AXIS_NAMES", "TESTS", "TEST_CODES", "Outcome", "CollisionStats", "Trace", "CollisionResult",
           "BatchResult", "collide", "collide_batch", "REALIGN_TABLE"]
