"""Stepping through one traversal node pair by node pair.

The trace lists every tested pair in order and, for each overlap, which node the kernel
descended (``Trace.split``); the stack of pending pairs is rebuilt by replaying those
descents (the kernel pushes right, then left), and every replayed pop is checked against
the trace. The descend rule itself lives only in cdcore's traversal core.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cdcore import AXIS_NAMES
from cdcore import layout as L
from cdcore.collide import Outcome

from .trees import Traversal


@dataclass
class Step:
    """The traversal at one tested pair. ``axis_dir`` (3,) world unit axis and the two
    projected ``interval_a``/``interval_b`` when the pair was separated; ``stack`` the
    pairs still pending *after* this step, top last."""
    index: int
    count: int
    node_a: int
    node_b: int
    outcome: Outcome
    axis: int
    axis_name: str
    axis_dir: np.ndarray | None = None
    interval_a: tuple | None = None
    interval_b: tuple | None = None
    stack: list = field(default_factory=list)


class Stepper:
    """Cursor over a :class:`Traversal`: ``index`` is -1 before the first pair."""

    def __init__(self, traversal: Traversal):
        self.t = traversal
        tr = traversal.trace
        self.count = len(tr)
        self.index = -1
        self._stacks = self._replay()

    def _replay(self) -> list:
        tr, A, B = self.t.trace, self.t.tree_a, self.t.tree_b
        stack = [(0, 0)]
        out = []
        for k in range(len(tr)):
            a, b = int(tr.node_a[k]), int(tr.node_b[k])
            top = stack.pop() if stack else None
            if top != (a, b):
                raise RuntimeError(f"trace step {k}: expected pair {top}, trace has {(a, b)}")
            split = int(tr.split[k])
            if split == L.SPLIT_A:
                stack += [(int(A.nodes_i[a, L.RIGHT]), b), (int(A.nodes_i[a, L.LEFT]), b)]
            elif split == L.SPLIT_B:
                stack += [(a, int(B.nodes_i[b, L.RIGHT])), (a, int(B.nodes_i[b, L.LEFT]))]
            out.append(list(stack))
        return out

    # ---- movement ---------------------------------------------------------------
    def goto(self, index: int) -> Step | None:
        self.index = max(-1, min(index, self.count - 1))
        return self.current()

    def next(self) -> Step | None:
        return self.goto(self.index + 1)

    def prev(self) -> Step | None:
        return self.goto(self.index - 1)

    def run_to_next_hit(self) -> Step | None:
        """Advance to the next leaf pair that hit (stay at the end if there is none)."""
        hits = np.flatnonzero(self.t.trace.outcome[self.index + 1:] == Outcome.LEAF_HIT)
        return self.goto(self.index + 1 + int(hits[0]) if len(hits) else self.count - 1)

    def run_to_end(self) -> Step | None:
        return self.goto(self.count - 1)

    def find_node(self, tree, node: int) -> Step | None:
        """Go to the first tested pair that involves ``node`` of ``tree`` (the traversal's
        tree A or B, matched by identity or by body and level); None (and no move) when the
        traversal never tested it."""
        tr = self.t.trace
        hits = np.zeros(0, dtype=np.int64)
        for side, t in (("a", self.t.tree_a), ("b", self.t.tree_b)):
            same = t is tree or (t.body == tree.body and t.level == tree.level and t.link == tree.link)
            if same:
                col = tr.node_a if side == "a" else tr.node_b
                hits = np.union1d(hits, np.flatnonzero(np.asarray(col) == int(node)))
        if not len(hits):
            return None
        return self.goto(int(hits[0]))

    @property
    def at_end(self) -> bool:
        return self.index >= self.count - 1

    # ---- what is shown ------------------------------------------------------------
    def current(self) -> Step | None:
        if self.index < 0:
            return None
        k = self.index
        tr = self.t.trace
        a, b, axis = int(tr.node_a[k]), int(tr.node_b[k]), int(tr.axis[k])
        step = Step(k, self.count, a, b, Outcome(int(tr.outcome[k])), axis,
                    AXIS_NAMES[axis] if 0 <= axis < len(AXIS_NAMES) else "", stack=self._stacks[k])
        if step.outcome == Outcome.SEPARATED and axis >= 0 and self.t.tree_a.kdop is not None:
            self._kdop_axis(step)
        elif step.outcome == Outcome.SEPARATED and axis >= 0:
            u = self.axis_direction(a, b, axis)
            if u is not None:
                sphere = axis == L.AXIS_SPHERE
                step.axis_dir = u
                step.interval_a = self.t.tree_a.interval(a, u, sphere)
                step.interval_b = self.t.tree_b.interval(b, u, sphere)
        return step

    def _kdop_axis(self, step: Step) -> None:
        """k-DOP traversals separate along A's slab direction ``axis``: A's own slab against
        B's node realigned into A's frame (the interval the test compared)."""
        from cdcore.realign import realign_kdop
        from cdcore.transforms import relative_transform
        A, B = self.t.tree_a, self.t.tree_b
        d = A.kdop.dirs[step.axis]
        u = A.pose[:3, :3] @ d
        shift = float(A.pose[:3, 3] @ u)
        k2 = len(A.kdop.dirs)
        sa = A.kdop.slabs[step.node_a]
        R, t = relative_transform(A.pose, B.pose)
        sb = realign_kdop(B.bvh, step.node_b, R, t, self.t.realign or "table")
        step.axis_dir = u / np.linalg.norm(u)
        n = float(np.linalg.norm(u))
        step.interval_a = ((sa[step.axis] + shift) / n, (sa[k2 + step.axis] + shift) / n)
        step.interval_b = ((sb[step.axis] + shift) / n, (sb[k2 + step.axis] + shift) / n)
        step.axis_name = f"slab {step.axis} ({', '.join(f'{x:g}' for x in d)})"

    def axis_direction(self, a: int, b: int, axis: int) -> np.ndarray | None:
        """World unit vector of separating axis id ``axis`` for the pair (a, b)."""
        A, B = self.t.tree_a, self.t.tree_b
        if axis == L.AXIS_SPHERE:
            ca, _ = A.world_spheres([a])
            cb, _ = B.world_spheres([b])
            d = cb[0] - ca[0]
        else:
            _, axa, _ = A.world_boxes([a])
            _, axb, _ = B.world_boxes([b])
            if axis < 3:
                d = axa[0][:, axis]
            elif axis < 6:
                d = axb[0][:, axis - 3]
            else:
                i, j = divmod(axis - 6, 3)
                d = np.cross(axa[0][:, i], axb[0][:, j])
        n = np.linalg.norm(d)
        return d / n if n > 1e-12 else None
