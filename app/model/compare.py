"""Compare mode, Qt-free: 2..4 articulation-hierarchy update methods run side by side on
the session's scene and frames, so the CAB tables (#coll, #false, t[upd], t[test],
t[query], t[total], cumulative over the frames run) can be watched forming, together with
the cost breakdown behind them, T = N_v C_v + N_p C_p (van den Bergen's cost function):

    N_v  BV overlap tests (broad phase over the articulation hierarchies + exact queries)
    C_v  seconds per BV test: (t_test + exact.t_bv) / N_v
    N_p  triangle-triangle tests (exact queries)
    C_p  seconds per triangle test: exact.t_prim / N_p

so that N_v C_v + N_p C_p = t_test + t_query (t_total minus the update).

The session owns one ``CompareModel`` in ``session.compare`` and calls ``rebuild(session)``
whenever it makes its runner (scene or settings change) and ``step(frame)`` after every
frame it computes. Every method gets its own ``SceneRunner`` on the *same* scene object
with the session's broad-phase test, exact test and deform mode. Deforming bodies are
shared: each runner refits (or rebuilds) their mesh hierarchy to the same frame's vertices,
which is idempotent, and each method's t_update includes that deform time (as it would in
its own run).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, fields

from cdcore.articulated import METHOD_LABELS, UPDATE_METHODS
from cdcore.scenes import SceneRunner

from .signals import Signal

COMPARE_HISTORY = 600  # frames kept per method for the overlaid plots
MIN_METHODS, MAX_METHODS = 2, 4


@dataclass
class CompareRow:
    """One frame of one method (times in s)."""
    frame: int
    t_update: float
    t_test: float
    t_query: float
    t_total: float
    bv_tests: int     # N_v of the frame: broad + exact BV tests
    prim_tests: int   # N_p of the frame
    n_exact: int      # #coll of the frame
    n_false: int
    contacts: int
    t_bv_exact: float  # exact queries outside triangle tests
    t_prim: float      # exact queries inside triangle tests


@dataclass
class MethodTotals:
    """Cumulative over every frame stepped since the last rebuild/reset (times in s,
    C_v and C_p in s per test; 0.0 when nothing was tested yet)."""
    method: str
    label: str
    frames: int = 0
    n_coll: int = 0
    n_false: int = 0
    contacts: int = 0
    t_update: float = 0.0
    t_test: float = 0.0
    t_query: float = 0.0
    t_total: float = 0.0
    n_v: int = 0
    n_p: int = 0
    t_v: float = 0.0  # N_v C_v: t_test + exact.t_bv
    t_p: float = 0.0  # N_p C_p: exact.t_prim

    @property
    def c_v(self) -> float:
        return self.t_v / self.n_v if self.n_v else 0.0

    @property
    def c_p(self) -> float:
        return self.t_p / self.n_p if self.n_p else 0.0

    def as_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["c_v"], d["c_p"] = self.c_v, self.c_p
        return d


def validate_methods(methods) -> list[str]:
    """The methods as a list, or ``ValueError`` (unknown, duplicated, fewer than 2 or
    more than 4)."""
    if isinstance(methods, str):
        methods = [methods]
    methods = list(methods)
    unknown = [m for m in methods if m not in UPDATE_METHODS]
    if unknown:
        raise ValueError(f"unknown update method(s) {unknown}; choose from {list(UPDATE_METHODS)}")
    if not MIN_METHODS <= len(methods) <= MAX_METHODS:
        raise ValueError(f"compare {MIN_METHODS} to {MAX_METHODS} update methods, got {len(methods)}")
    if len(set(methods)) != len(methods):
        raise ValueError(f"each update method can be compared once, got {methods}")
    return methods


class CompareModel:
    """Side-by-side runs of several update methods.

    ``histories[m]``: deque (maxlen ``COMPARE_HISTORY``) of ``CompareRow``;
    ``results[m]``: the last ``FrameResult`` of method m; ``changed``: emitted after
    ``rebuild``, ``step`` and ``reset``.
    """

    def __init__(self, methods):
        self.methods: list[str] = validate_methods(methods)
        self.changed = Signal()
        self.runners: dict[str, SceneRunner] = {}
        self.histories: dict[str, deque] = {m: deque(maxlen=COMPARE_HISTORY) for m in self.methods}
        self.results: dict = {m: None for m in self.methods}
        self._totals: dict[str, MethodTotals] = {}
        self.scene = None
        self.frame = -1
        self._reset_totals()

    @property
    def labels(self) -> dict[str, str]:
        return {m: METHOD_LABELS[m] for m in self.methods}

    # ---- life cycle -------------------------------------------------------------
    def rebuild(self, session) -> None:
        """One runner per method on the session's scene with its test, exact test and
        deform mode; clears histories and totals."""
        self.scene = session.scene
        self.runners = {}
        if self.scene is not None:
            ref = session.runner
            if ref is not None:
                test, deform, exact = ref.test, ref.deform, ref.exact_test
            else:
                from cdcore.articulated import BODY_TESTS
                test = session.test if session.test in BODY_TESTS else "sat15"
                deform, exact = session.deform, session.exact_test
            self.runners = {m: SceneRunner(self.scene, m, test, deform, exact_test=exact) for m in self.methods}
        self._clear()
        self.changed.emit()

    def reset(self) -> None:
        """Forget the histories and the cumulative totals (runners kept)."""
        self._clear()
        self.changed.emit()

    def _clear(self):
        for h in self.histories.values():
            h.clear()
        self.results = {m: None for m in self.methods}
        self.frame = -1
        self._reset_totals()

    def _reset_totals(self):
        self._totals = {m: MethodTotals(m, METHOD_LABELS[m]) for m in self.methods}

    # ---- frames -----------------------------------------------------------------
    def step(self, frame: int) -> None:
        """Run every method on ``frame`` and accumulate (a no-op without a scene)."""
        if not self.runners:
            return
        from .compile_watch import compile_count
        for m, runner in self.runners.items():
            before = compile_count()
            res = runner.step(frame)
            if compile_count() != before:  # it paid a first-use kernel compile: time it again, warm
                res = runner.step(frame)   # (a compile frame biased the totals by 10-40 ms)
            t_bv_exact = sum(p.exact.t_bv for p in res.pairs)
            t_prim = sum(p.exact.t_prim for p in res.pairs)
            row = CompareRow(frame, res.t_update, res.t_test, res.t_query, res.t_total, res.bv_tests,
                             res.prim_tests, res.n_exact, res.n_false, res.contacts, t_bv_exact, t_prim)
            self.results[m] = res
            self.histories[m].append(row)
            t = self._totals[m]
            t.frames += 1
            t.n_coll += row.n_exact
            t.n_false += row.n_false
            t.contacts += row.contacts
            t.t_update += row.t_update
            t.t_test += row.t_test
            t.t_query += row.t_query
            t.t_total += row.t_total
            t.n_v += row.bv_tests
            t.n_p += row.prim_tests
            t.t_v += row.t_test + t_bv_exact
            t.t_p += t_prim
        self.frame = frame
        self.changed.emit()

    # ---- read-outs --------------------------------------------------------------
    def totals(self) -> dict[str, MethodTotals]:
        """Per method (in ``methods`` order) the cumulative totals (copies)."""
        return {m: MethodTotals(**{f.name: getattr(t, f.name) for f in fields(t)})
                for m, t in self._totals.items()}

    def series(self, method: str, key: str = "t_total"):
        """One ``CompareRow`` field of a method's history, oldest first (a list)."""
        return [getattr(r, key) for r in self.histories[method]]

    def __repr__(self) -> str:
        return f"CompareModel({self.methods}, frames={self._totals[self.methods[0]].frames})"


__all__ = ["COMPARE_HISTORY", "CompareModel", "CompareRow", "MethodTotals", "validate_methods"]
