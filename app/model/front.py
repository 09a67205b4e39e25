"""The front cache of the scene's link pairs, Qt-free: per frame, every link pair whose root
spheres overlap is queried through its own ``cdcore.FrontCache`` (all contacts), and the link
pair with the largest front is reported for drawing (its front nodes in each tree), with the
frame's node tests, the front sizes and what a full traversal would have cost (per frame
series for the plots)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cdcore import FrontCache, collide
from cdcore import layout as L
from cdcore.articulated import brute_force_pairs


@dataclass(frozen=True)
class FrontFrame:
    """One frame: the drawn link pair ((body, link), (body, link)) or None, its front nodes in
    each tree, and the frame's totals over all queried link pairs."""
    pair: tuple | None
    nodes_a: np.ndarray
    nodes_b: np.ndarray
    front_size: int
    tests_front: int
    tests_full: int


class FrontTracker:
    """Per scene: one ``FrontCache`` per link pair (created on first use), on the links' own
    mesh hierarchies (refitted in place by the session's runner, which the front follows)."""

    def __init__(self, scene, compare_full: bool = True):
        self.scene = scene
        self.compare_full = compare_full
        self.pairs = []
        for i, j in scene.pairs:
            for la, lb in brute_force_pairs(scene.bodies[i].body, scene.bodies[j].body, i == j).tolist():
                self.pairs.append((i, j, la, lb))
        self.caches: dict = {}
        self.history: list[tuple[int, int, int]] = []  # (front size, tests with front, tests full)

    def update(self, link_poses) -> FrontFrame:
        """``link_poses``: per body, (n_links, 4, 4) world poses of this frame."""
        s = self.scene
        best = None
        size = tf = tfull = 0
        for k, (i, j, la, lb) in enumerate(self.pairs):
            ta, tb = s.bodies[i].body.bvhs[la], s.bodies[j].body.bvhs[lb]
            pa, pb = np.asarray(link_poses[i][la], float), np.asarray(link_poses[j][lb], float)
            ca = pa[:3, :3] @ ta.nodes_f[0, L.C0:L.C0 + 3] + pa[:3, 3]
            cb = pb[:3, :3] @ tb.nodes_f[0, L.C0:L.C0 + 3] + pb[:3, 3]
            if np.linalg.norm(ca - cb) > (np.linalg.norm(ta.nodes_f[0, L.E0:L.E0 + 3])
                                          + np.linalg.norm(tb.nodes_f[0, L.E0:L.E0 + 3])):
                continue
            fc = self.caches.get(k)
            if fc is None:
                fc = self.caches[k] = FrontCache(ta, tb)
            r = fc.collide(pa, pb)
            tf += r.stats.bv_tests
            size += fc.front_size
            if self.compare_full:
                tfull += collide(ta, pa, tb, pb).stats.bv_tests
            if best is None or fc.front_size > best[1].front_size:
                best = (k, fc)
        self.history.append((size, tf, tfull))
        if best is None:
            return FrontFrame(None, np.zeros(0, int), np.zeros(0, int), 0, tf, tfull)
        i, j, la, lb = self.pairs[best[0]]
        na, nb = best[1].front_nodes()
        return FrontFrame(((i, la), (j, lb)), na, nb, size, tf, tfull)
