"""What the views draw and step through: hierarchies in world coordinates with per-node
overlap states, and traversals (a trace plus the two trees it ran on)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cdcore import layout as L
from cdcore.collide import Outcome

# node states, in increasing precedence when several traversals touch a node
NOT_VISITED, SEPARATED, OVERLAP, LEAF_FALSE, LEAF_HIT = range(5)
STATE_NAMES = ("not visited", "visited & separated", "overlapping (descended)", "leaf pair false alarm",
               "leaf pair hit")
# trace outcome -> node state (indexed by the Outcome value)
_OUTCOME_STATE = np.zeros(4, dtype=np.int8)
_OUTCOME_STATE[[Outcome.SEPARATED, Outcome.OVERLAP, Outcome.LEAF_HIT, Outcome.LEAF_MISS]] = (
    SEPARATED, OVERLAP, LEAF_HIT, LEAF_FALSE)


@dataclass
class Tree:
    """One hierarchy: ``nodes_f`` (n, 20) in the frame given by ``pose`` (4, 4);
    ``family``: "aabb", "obb" or "sphere" (what to draw); ``level``: "articulation" (the
    body's link hierarchy) or "mesh" (a link's triangle hierarchy)."""
    body: int
    level: str
    family: str
    nodes_f: np.ndarray
    nodes_i: np.ndarray
    depth: np.ndarray
    pose: np.ndarray
    link: int = 0
    bvh: object = None  # the mesh hierarchy (mesh-level trees)
    kdop: object = None  # its k-DOP slabs (cdcore.bv.kdop.KdopData) for k-DOP trees

    @property
    def n_nodes(self) -> int:
        return len(self.nodes_i)

    @property
    def is_leaf(self) -> np.ndarray:
        return self.nodes_i[:, L.LEFT] < 0

    @property
    def height(self) -> int:
        return int(self.depth.max())

    def select(self, mode: str, lo: int = 0, hi: int = 0) -> np.ndarray:
        """Node ids to draw: ``"level"`` (depth == lo), ``"cut"`` (the cut of the tree at
        depth lo: its nodes at depth lo and the leaves above it, so that every triangle is
        under exactly one drawn node, also in a tree less deep than lo), ``"range"`` (lo <=
        depth <= hi), ``"leaves"`` or ``"all"``."""
        if mode == "level":
            return np.flatnonzero(self.depth == lo)
        if mode == "cut":
            return np.flatnonzero((self.depth == lo) | ((self.depth < lo) & self.is_leaf))
        if mode == "range":
            return np.flatnonzero((self.depth >= lo) & (self.depth <= hi))
        if mode == "leaves":
            return np.flatnonzero(self.is_leaf)
        if mode == "all":
            return np.arange(self.n_nodes)
        raise ValueError(f"mode: expected level, cut, range, leaves or all, got {mode!r}")

    def world_boxes(self, nodes=None):
        """Centres (k, 3), axes (k, 3, 3) (columns) and half-extents (k, 3) in world."""
        idx = np.arange(self.n_nodes) if nodes is None else np.asarray(nodes)
        R, t = self.pose[:3, :3], self.pose[:3, 3]
        c = self.nodes_f[idx, L.C0:L.C0 + 3] @ R.T + t
        ax = np.einsum("ij,njk->nik", R, self.nodes_f[idx, L.R0:L.R0 + 9].reshape(-1, 3, 3))
        return c, ax, self.nodes_f[idx, L.E0:L.E0 + 3]

    def world_spheres(self, nodes=None):
        idx = np.arange(self.n_nodes) if nodes is None else np.asarray(nodes)
        R, t = self.pose[:3, :3], self.pose[:3, 3]
        return self.nodes_f[idx, L.S0:L.S0 + 3] @ R.T + t, self.nodes_f[idx, L.SR]

    def interval(self, node: int, u: np.ndarray, sphere: bool = False):
        """The node's volume projected on the world unit axis ``u``: (lo, hi)."""
        if self.kdop is not None and not sphere:
            # exact support of the k-DOP polytope along u: a small LP over the slabs is
            # overkill here; its vertices give it exactly
            from cdcore.realign import kdop_polytope
            v, _ = kdop_polytope(self.kdop.slabs[node], self.kdop.bv)
            p = (np.asarray(v) @ self.pose[:3, :3].T + self.pose[:3, 3]) @ u
            return float(p.min()), float(p.max())
        if sphere or self.family == "sphere":
            c, r = self.world_spheres([node])
            m = float(c[0] @ u)
            return m - float(r[0]), m + float(r[0])
        c, ax, e = self.world_boxes([node])
        m = float(c[0] @ u)
        r = float(np.sum(e[0] * np.abs(ax[0].T @ u)))
        return m - r, m + r


READABLE_BOXES = 300  # about as many boxes as one can still tell apart on screen


def readable_selection(trees, budget: int = READABLE_BOXES) -> tuple[str, int, int]:
    """The ``(mode, lo, hi)`` of the "auto" depth: every node when all the trees together
    have at most ``budget``, else the deepest cut (``Tree.select("cut", level)``) whose nodes,
    summed over the trees, are at most ``budget`` (at least the roots). A cut, not a level:
    trees of different heights share the view (a 21-node robot beside a 535-node table), and
    at a level deeper than a tree that tree drew nothing (panda-reach: the table's level 9,
    none of the robot's link boxes)."""
    trees = list(trees)
    if not trees or sum(t.n_nodes for t in trees) <= budget:
        return "all", 0, 0
    height = max(t.height for t in trees)
    # cut size at level L = nodes at depth L + leaves above L, per tree, summed
    counts = np.zeros(height + 1, dtype=np.int64)
    for t in trees:
        at = np.bincount(t.depth, minlength=height + 1)[:height + 1]
        leaves = np.bincount(t.depth[t.is_leaf], minlength=height + 1)[:height + 1]
        counts += at + np.concatenate([[0], np.cumsum(leaves)[:-1]])
    fit = np.flatnonzero(counts <= budget)
    level = int(fit.max()) if len(fit) else 0  # cut sizes grow with the level
    return "cut", level, level


def apply_trace_states(state_a, state_b, trace) -> None:
    """Raise node states from one trace (A side nodes into ``state_a``, B into ``state_b``;
    either may be None: that side is not drawn from this trace)."""
    if trace is None or len(trace) == 0:
        return
    s = _OUTCOME_STATE[trace.outcome]
    if state_a is not None:
        np.maximum.at(state_a, trace.node_a, s)
    if state_b is not None:
        np.maximum.at(state_b, trace.node_b, s)


@dataclass
class Traversal:
    """A recorded traversal and the trees it ran on (``tree_a``/``tree_b``), for the
    stepper: ``label`` names it (bodies or links), ``test`` the overlap test."""
    label: str
    trace: object
    tree_a: Tree
    tree_b: Tree
    test: str
    bv_tests: int
    link_pair: tuple | None = None
    realign: str | None = None  # k-DOP traversals: the realignment method
