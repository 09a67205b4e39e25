"""The self-collision audit of the session's robot, for the debugger (Qt-free): runs
``cdcore.articulated.audit`` in a worker thread (the kernel releases the GIL; cancellable),
keeps the result, and turns a click on a link pair into a pose: the robot at the pair's
witness configuration, the stepper on the robot's self-collision pair, the two links to
highlight."""
from __future__ import annotations

import threading

import numpy as np

from .signals import Signal


class AuditModel:
    """``finished`` fires (from the worker thread: poll ``state`` from the GUI) when a run
    ends; ``state`` is "idle", "running", "done", "cancelled" or "failed: ..."."""

    def __init__(self, robot_model):
        self.robot_model = robot_model
        self.session = robot_model.session
        self.result = None
        self.state = "idle"
        self.done = 0
        self.total = 0
        self._cancel = threading.Event()
        self._thread = None
        self.finished = Signal()
        robot_model.changed.connect(self._on_robot)
        self._body = robot_model.body

    def _on_robot(self, *_):
        if self.robot_model.body is not self._body:  # another robot: the old audit does not apply
            self.cancel()
            self._body = self.robot_model.body
            self.result = None
            self.state = "idle"

    @property
    def body(self):
        return self.robot_model.body

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, samples: int, seed: int = 0) -> None:
        """Audit ``samples`` configurations of the robot in a worker thread."""
        b = self.body
        if b is None:
            raise ValueError("no robot in this scene")
        if self.running:
            raise RuntimeError("an audit is already running")
        if int(samples) < 1:
            raise ValueError("samples: at least 1")
        self._cancel.clear()
        self.done, self.total, self.state = 0, 0, "running"
        disabled = list(getattr(b, "disabled_pairs", []) or [])

        def run():
            from cdcore.articulated import AuditCancelled, audit
            try:
                # adjacent pairs are not counted: links sharing a joint face cost ~30x the
                # other pairs, and MoveIt disables them whatever they do
                res = audit(b, samples=int(samples), seed=int(seed), disabled=disabled if disabled else None,
                            progress=self._progress, cancel=self._cancel.is_set, check_adjacent=False)
                self.result, self.state = res, "done"
            except AuditCancelled:
                self.state = "cancelled"
            except Exception as exc:  # shown by the panel, never raised into Qt
                self.state = f"failed: {type(exc).__name__}: {exc}"
            self.finished.emit(self.state)

        self._thread = threading.Thread(target=run, name="cdcore-audit", daemon=True)
        self._thread.start()

    def _progress(self, done, total):
        self.done, self.total = done, total

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout=None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    # ---- reading the result -----------------------------------------------------------
    def matrix(self) -> np.ndarray:
        """(L, L) collision fraction per link pair (NaN: not a pair with geometry)."""
        return self.result.matrix()

    def disabled_mask(self) -> np.ndarray:
        """(L, L) bool: pairs the robot's SRDF disables."""
        names = self.result.link_names
        idx = {n: i for i, n in enumerate(names)}
        m = np.zeros((len(names), len(names)), dtype=bool)
        for a, b in self.result.disabled:
            m[idx[a], idx[b]] = m[idx[b], idx[a]] = True
        return m

    def adjacent_mask(self) -> np.ndarray:
        """(L, L) bool: parent-child pairs (classified adjacent, not counted)."""
        names = self.result.link_names
        idx = {n: i for i, n in enumerate(names)}
        m = np.zeros((len(names), len(names)), dtype=bool)
        for a, b in self.result.adjacent:
            m[idx[a], idx[b]] = m[idx[b], idx[a]] = True
        return m

    def describe(self, i: int, j: int) -> str:
        r = self.result
        names = r.link_names
        a, b = (names[i], names[j]) if i < j else (names[j], names[i])
        c = r.counts.get((a, b))
        cls = r.classify().get((a, b), "-")
        dis = " (SRDF-disabled)" if (a, b) in r.disabled else ""
        if c is None:
            return f"{a} – {b}: {cls}{dis}"
        return f"{a} – {b}: {c} of {r.n} configurations ({c / r.n:.2%}), {cls}{dis}"

    def pose_at_witness(self, i: int, j: int):
        """Pose the robot at link pair (i, j)'s witness configuration at the current frame
        and put the stepper on the robot's self-collision pair. Returns the highlight items
        [(body, link, triangle ids)] of the two links, or None when the pair never
        collided."""
        r = self.result
        names = r.link_names
        a, b = (names[i], names[j]) if i < j else (names[j], names[i])
        q = r.witness.get((a, b))
        if q is None:
            return None
        rm = self.robot_model
        rm.set_q(q)
        s = self.session
        k = rm.index
        for n, pr in enumerate(s.scene.pairs):
            if tuple(pr) == (k, k):
                s.select_pair(n)
                break
        body = self.body
        items = []
        for li in (i, j):
            nt = int(body.prim_off[li + 1] - body.prim_off[li])
            items.append((k, li, np.arange(nt)))
        return items
