"""Running a scene frame by frame: update every body's hierarchy, collide every pair,
time each phase (the loop behind the bench tables and the app)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field


from ..articulated import BodyHierarchy, BodyCollision, brute_force_pairs, collide_bodies, run_exact_queries
from ..articulated.hierarchy import UPDATE_METHODS
from ..collide import CollisionStats
from .scene import Scene


@dataclass
class FrameResult:
    """One frame: times in seconds summed over bodies/pairs; ``pairs`` the per-pair
    results in ``scene.pairs`` order; ``t_deform`` the mesh refit/rebuild of deforming bodies
    (part of ``t_update``)."""
    frame: int
    t_update: float
    t_test: float
    t_query: float
    t_deform: float
    bv_tests: int
    prim_tests: int
    n_exact: int
    n_false: int
    contacts: int
    pairs: list[BodyCollision] = field(default_factory=list)

    @property
    def t_total(self) -> float:
        return self.t_update + self.t_test + self.t_query


class SceneRunner:
    """Per-frame update + test + query of a scene with one update method and one test.

    method : {"aabb_plus", "aabb_star", "obb", "cab", "cab_sum"}
        Articulation-hierarchy update (for single-link bodies the leaf box).
    test : str
        Overlap test of the broad phase (``BODY_TESTS``).
    deform : {"refit", "rebuild"}
        What deforming meshes do every frame.
    exact_test : str, optional
        Overlap test inside the exact (mesh-level) queries; default: the mesh BV type's.
    realign : {"table", "table_angle", "all", "major"}, optional
        k-DOP link hierarchies: the realignment of the exact queries (default "table").
    """

    def __init__(self, scene: Scene, method: str = "cab", test: str = "sat15", deform: str = "refit",
                 trace: bool = False, exact_test: str | None = None, realign: str | None = None):
        if method not in UPDATE_METHODS:
            raise ValueError(f"method: expected one of {UPDATE_METHODS}, got {method!r}")
        if deform not in ("refit", "rebuild"):
            raise ValueError(f"deform: expected 'refit' or 'rebuild', got {deform!r}")
        self.scene = scene
        self.method = method
        self.test = test
        self.deform = deform
        self.trace = trace
        self.exact_test = exact_test
        self.realign = realign
        self.hierarchies = [BodyHierarchy(b.body, method) for b in scene.bodies]
        self.frame = -1

    def step(self, frame: int) -> FrameResult:
        """Bring every body to ``frame`` and collide every pair."""
        s = self.scene
        if not 0 <= frame < s.frames:
            raise ValueError(f"frame: expected 0..{s.frames - 1}, got {frame}")
        t_def = 0.0
        t_upd = 0.0
        for sb, h in zip(s.bodies, self.hierarchies):
            if sb.deforming:
                v = sb.vertices(frame)
                t0 = time.perf_counter()
                sb.body.set_link_vertices(0, v, rebuild=self.deform == "rebuild")
                t_def += time.perf_counter() - t0
            t_upd += h.update(sb.link_poses[frame])
        out = FrameResult(frame, t_upd + t_def, 0.0, 0.0, t_def, 0, 0, 0, 0, 0)
        for i, j in s.pairs:
            r = collide_bodies(self.hierarchies[i], self.hierarchies[j], self.test, trace=self.trace,
                               exact_test=self.exact_test, realign=self.realign)
            out.pairs.append(r)
            out.t_test += r.t_test
            out.t_query += r.t_query
            out.bv_tests += r.broad.bv_tests + r.exact.bv_tests
            out.prim_tests += r.exact.prim_tests
            out.n_exact += r.n_exact
            out.n_false += r.n_false
            out.contacts += int(r.hits.sum())
        self.frame = frame
        return out

    def brute(self, frame: int) -> FrameResult:
        """The paper's "brute" row: an exact query for every link pair, no hierarchy."""
        s = self.scene
        out = FrameResult(frame, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0)
        for sb in s.bodies:
            if sb.deforming:
                sb.body.set_link_vertices(0, sb.vertices(frame))
        for i, j in s.pairs:
            a, b = s.bodies[i], s.bodies[j]
            pairs = brute_force_pairs(a.body, b.body, self_collision=i == j)
            hits, stats, dt = run_exact_queries(a.body, a.link_poses[frame], b.body, b.link_poses[frame], pairs,
                                                self.exact_test, self.realign)
            out.pairs.append(BodyCollision(pairs, hits, CollisionStats(), stats, 0.0, dt))
            out.t_query += dt
            out.bv_tests += stats.bv_tests
            out.prim_tests += stats.prim_tests
            out.n_exact += len(pairs)
            out.n_false += int(len(hits) - hits.sum())
            out.contacts += int(hits.sum())
        return out


def contact_pairs(result: FrameResult) -> list[set]:
    """Per scene pair, the set of link pairs in contact (for comparisons)."""
    return [set(map(tuple, r.contacts.tolist())) for r in result.pairs]


__all__ = ["FrameResult", "SceneRunner", "contact_pairs"]
