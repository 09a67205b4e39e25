"""The build lab: several configurations (BV type x test x split rule x leaf size) run over the
same scene and motion, frame by frame, with the tree-quality numbers that explain the
difference (``cdcore.quality``), and the full-vs-front-cache comparison (``cdcore.front``).

Every configuration builds its own hierarchy of every link mesh of the scene; a frame refits
the deforming ones, poses the links and queries (all contacts) every link pair of the scene's
body pairs whose root volumes' bounding spheres overlap in the world (the same cheap filter
for every configuration, standing in for the articulated broad phase: a link pair whose roots
are apart costs one node test in any configuration and would only dilute the comparison).
Configurations are stepped interleaved, frame by frame, so that timings share the machine's
state. Used by ``python -m cdcore.bench lab`` and the app's Compare dock.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import _layout as L
from .articulated import brute_force_pairs
from .bv import BV_TYPES
from ._kdop_traverse import DEFAULT_REALIGN, REALIGN_METHODS
from .bvh import build_bvh
from .collide import collide
from .front import FrontCache
from .quality import TreeQuality, expected_tests, fit_cost_model, tree_quality

SPLIT_NAMES = ("median", "mean", "sah", "volume")


@dataclass(frozen=True)
class LabConfig:
    """One configuration: ``bv``, ``test`` (None: the type's default), ``split``, ``leaf_size``
    and, for k-DOPs, ``realign`` (None: ``collide``'s default, the paper's "table" method)."""
    bv: str = "obb"
    test: str | None = None
    split: str = "median"
    leaf_size: int = 1
    realign: str | None = None

    def __post_init__(self):
        if self.bv not in BV_TYPES:
            raise ValueError(f"bv: expected one of {sorted(BV_TYPES)}, got {self.bv!r}")
        if self.test is not None and self.test not in BV_TYPES[self.bv].tests:
            raise ValueError(f"test: {self.test!r} is not available for bv={self.bv!r}; choose one of "
                             f"{BV_TYPES[self.bv].tests}")
        if self.split not in SPLIT_NAMES:
            raise ValueError(f"split: expected one of {SPLIT_NAMES}, got {self.split!r}")
        if isinstance(self.leaf_size, bool) or not isinstance(self.leaf_size, (int, np.integer)) \
                or not 1 <= self.leaf_size <= 64:
            raise ValueError(f"leaf_size: expected an integer 1..64, got {self.leaf_size!r}")
        if self.realign is not None:
            if not self.is_kdop:
                raise ValueError(f"realign: only k-DOP hierarchies are realigned, got bv={self.bv!r}")
            if self.realign not in REALIGN_METHODS:
                raise ValueError(f"realign: expected one of {sorted(REALIGN_METHODS)}, got {self.realign!r}")

    @property
    def is_kdop(self) -> bool:
        return self.bv.startswith("kdop")

    @property
    def label(self) -> str:
        base = f"{self.bv}/{self.test or BV_TYPES[self.bv].tests[0]}/{self.split}/leaf{self.leaf_size}"
        return f"{base}/{self.realign or DEFAULT_REALIGN}" if self.is_kdop else base

    @classmethod
    def parse(cls, text: str) -> "LabConfig":
        """From ``bv[:test[:split[:leaf[:realign]]]]`` (empty fields take the defaults), e.g.
        ``obb::sah:2`` or ``kdop18::sah:1:all``."""
        parts = text.split(":")
        if not 1 <= len(parts) <= 5 or not parts[0]:
            raise ValueError(f"configuration {text!r}: expected bv[:test[:split[:leaf[:realign]]]]")
        parts += [""] * (5 - len(parts))
        try:
            leaf = int(parts[3]) if parts[3] else 1
        except ValueError:
            raise ValueError(f"configuration {text!r}: leaf size {parts[3]!r} is not an integer") from None
        return cls(parts[0], parts[1] or None, parts[2] or "median", leaf, parts[4] or None)


@dataclass
class FrameLog:
    """Per-frame series of one run (arrays of length frames)."""
    n_v: list = field(default_factory=list)  # node (BV) tests
    n_p: list = field(default_factory=list)  # triangle tests
    seconds: list = field(default_factory=list)  # time inside the compiled queries
    queries: list = field(default_factory=list)  # link pairs queried
    contacts: list = field(default_factory=list)  # intersecting triangle pairs
    front: list = field(default_factory=list)  # front cache: front pairs summed over link pairs
    skipped: list = field(default_factory=list)  # front cache: front pairs kept by their certificates
    wall: list = field(default_factory=list)  # seconds of the frame's queries including Python's calls

    def arrays(self) -> dict:
        return {k: np.asarray(v) for k, v in self.__dict__.items()}


class MotionRun:
    """One configuration's hierarchies of a scene's link meshes and its frame loop.

    ``front``: query through a ``FrontCache`` per link pair (else full traversals).
    ``check``: also compare every query's pairs with a full ``collide`` (raises on a mismatch).
    """

    def __init__(self, scene, config: LabConfig, front: bool = False, check: bool = False):
        self.scene, self.config, self.use_front, self.check = scene, config, front, check
        t0 = time.perf_counter()
        self.trees = [[build_bvh(ln.mesh, config.bv, config.leaf_size, split=config.split) for ln in sb.body.links]
                      for sb in scene.bodies]
        self.build_seconds = time.perf_counter() - t0
        self.n_triangles = sum(t.mesh.n_faces for ts in self.trees for t in ts)
        self.pairs = []  # (body i, body j, link a, link b)
        for i, j in scene.pairs:
            for la, lb in brute_force_pairs(scene.bodies[i].body, scene.bodies[j].body, i == j).tolist():
                self.pairs.append((i, j, la, lb))
        self.fronts = {}
        self.log = FrameLog()
        self.queried = np.zeros(len(self.pairs), dtype=np.int64)  # queries whose roots overlapped
        self.pair_nv = np.zeros(len(self.pairs), dtype=np.int64)  # their node tests
        self.costliest = None  # (node tests, link pair index, pose a, pose b) of the costliest query
        self.mismatches = 0

    def _cache(self, k):
        fc = self.fronts.get(k)
        if fc is None:
            i, j, la, lb = self.pairs[k]
            fc = self.fronts[k] = FrontCache(self.trees[i][la], self.trees[j][lb], test=self.config.test,
                                             realign=self.config.realign)
        return fc

    def step(self, frame: int, repeat: int = 1) -> None:
        s = self.scene
        poses = []
        centres = []
        radii = []
        for sb, trees in zip(s.bodies, self.trees):
            if sb.deforming:
                trees[0].refit(sb.vertices(frame))
            lp = np.asarray(sb.link_poses[frame], dtype=np.float64)
            poses.append(lp)
            c = np.array([t.box_centers()[0] for t in trees])  # no copy of an AABB tree's rows
            centres.append(np.einsum("lij,lj->li", lp[:, :3, :3], c) + lp[:, :3, 3])
            radii.append(np.array([np.linalg.norm(t.box_extents()[0]) for t in trees]))
        active = [k for k, (i, j, la, lb) in enumerate(self.pairs)
                  if np.linalg.norm(centres[i][la] - centres[j][lb]) <= radii[i][la] + radii[j][lb]]
        test, realign = self.config.test, self.config.realign
        best = np.inf
        n_v = n_p = n_q = n_c = n_f = n_s = 0  # (the loop runs at least once)
        wall = np.inf
        # a stateless (full) run repeats the frame's queries and keeps the fastest pass: a loaded
        # machine's preemptions (10 ms spikes) would otherwise swamp the cost model
        for rep in range(1 if self.use_front else max(1, repeat)):
            n_v = n_p = n_q = n_c = n_f = n_s = 0
            secs = 0.0
            w = 0.0
            for k in active:
                i, j, la, lb = self.pairs[k]
                ta, tb = self.trees[i][la], self.trees[j][lb]
                pa, pb = poses[i][la], poses[j][lb]
                if self.use_front:
                    fc = self._cache(k)
                    t0 = time.perf_counter()
                    r = fc.collide(pa, pb)
                    w += time.perf_counter() - t0
                    n_f += fc.front_size
                    n_s += fc.last_skipped
                else:
                    t0 = time.perf_counter()
                    r = collide(ta, pa, tb, pb, test=test, contacts="all", realign=realign)
                    w += time.perf_counter() - t0
                if self.check:
                    ref = collide(ta, pa, tb, pb, test=test, contacts="all", realign=realign)
                    if not np.array_equal(ref.pairs, r.pairs):
                        self.mismatches += 1
                        raise AssertionError(f"{self.config.label} frame {frame} pair {self.pairs[k]}: "
                                             f"{len(r.pairs)} pairs, full traversal {len(ref.pairs)}")
                st = r.stats
                n_v += st.bv_tests
                n_p += st.prim_tests
                n_c += len(r.pairs)
                secs += r.t_total
                n_q += 1
                if rep == 0 and st.bv_tests > 1:  # the roots overlapped (the model's condition)
                    self.queried[k] += 1
                    self.pair_nv[k] += st.bv_tests
                    if self.costliest is None or st.bv_tests > self.costliest[0]:
                        self.costliest = (st.bv_tests, k, pa.copy(), pb.copy())
            best = min(best, secs)
            wall = min(wall, w)
        secs = best
        log = self.log
        log.n_v.append(n_v)
        log.n_p.append(n_p)
        log.seconds.append(secs)
        log.queries.append(n_q)
        log.contacts.append(n_c)
        log.front.append(n_f)
        log.skipped.append(n_s)
        log.wall.append(wall)

    def busiest_pair(self):
        """(tree a, tree b, measured node tests per query with overlapping roots) of the link pair
        that cost the most node tests over the run (the model's example pair)."""
        k = int(np.argmax(self.pair_nv)) if len(self.pairs) else 0
        i, j, la, lb = self.pairs[k]
        per = self.pair_nv[k] / self.queried[k] if self.queried[k] else 1.0
        return self.trees[i][la], self.trees[j][lb], float(per)

    def realign_slack(self) -> dict:
        """k-DOPs: ``realign_slack`` of B's tree at the costliest query of the run (empty for
        other types or when no roots overlapped)."""
        if not self.config.is_kdop or self.costliest is None:
            return {}
        _, k, pa, pb = self.costliest
        i, j, la, lb = self.pairs[k]
        return realign_slack(self.trees[j][lb], pa, pb)


def _top_nodes(bvh, levels: int) -> list[int]:
    """The nodes of the first ``levels`` levels (root = level 0), breadth first."""
    ni = bvh.nodes_i
    out, level = [], [0]
    for _ in range(levels):
        out += level
        level = [int(c) for n in level if ni[n, L.LEFT] >= 0 for c in (ni[n, L.LEFT], ni[n, L.RIGHT])]
    return out


def realign_slack(bvh_b, pose_a, pose_b, levels: int = 4) -> dict:
    """Why a k-DOP query descends: how much wider B's k-DOPs are in A's directions, under the
    relative motion of ``pose_a``/``pose_b``, over B's nodes of the first ``levels`` levels.

    * ``"moved"``: the volume of the exact k-DOP of a node's moved vertices over the volume of
      the node's own k-DOP (median over the nodes that are not flat): the price of testing only
      A's k/2 directions, which every realignment method pays (a box test with SAT also tries
      B's axes). Large for a flat or long B turned away from A's directions.
    * one entry per realignment method (``cdcore.realign``): the slack that method adds over
      the exact moved k-DOP, mean slab excess ``((hi' - lo') - (hi - lo)) / widest exact slab``
      (0: exact).
    * ``"angle"``: the relative rotation (degrees).
    """
    from .realign import METHODS, kdop_volume, looseness, realign_kdop, rotated_exact_kdop
    pa, pb = np.asarray(pose_a, dtype=np.float64), np.asarray(pose_b, dtype=np.float64)
    R = pa[:3, :3].T @ pb[:3, :3]
    t = pa[:3, :3].T @ (pb[:3, 3] - pa[:3, 3])
    nodes = _top_nodes(bvh_b, levels)
    exact = {n: rotated_exact_kdop(bvh_b, n, R, t) for n in nodes}
    k2 = bvh_b.kdop.k // 2
    growth = []
    for n in nodes:
        own = bvh_b.kdop.slabs[n]
        size = float((own[k2:] - own[:k2]).max())
        v_own = kdop_volume(own, bvh_b.bv)
        if v_own > 1e-9 * size ** 3:  # flat nodes (one face) have no volume ratio
            growth.append(kdop_volume(exact[n], bvh_b.bv) / v_own)
    out = {"moved": float(np.median(growth)) if growth else 1.0,
           "angle": float(np.degrees(np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0))))}
    for m in METHODS:
        out[m] = float(np.mean([np.mean(looseness(realign_kdop(bvh_b, n, R, t, m), exact[n], bvh_b.bv)["excess"])
                                for n in nodes]))
    return out


@dataclass
class LabResult:
    """What the lab measured for one configuration."""
    config: LabConfig
    log: dict  # FrameLog arrays
    quality: list[TreeQuality]  # per body: its largest link tree
    build_ns_per_tri: float
    c_v: float  # fitted seconds per node test
    c_p: float  # fitted seconds per triangle test
    c_0: float  # fitted seconds per query call
    r2: float
    predicted_seconds: np.ndarray
    expected_nv: float  # the random-placement model's N_v per query of the busiest pair
    measured_nv: float  # measured N_v per query of that pair (frames where its roots overlapped)
    realign_slack: dict = field(default_factory=dict)  # k-DOPs: ``realign_slack`` at the costliest query

    @property
    def mean_seconds(self) -> float:
        """Median seconds per frame (robust to a loaded machine's spikes; the counts are means)."""
        return float(np.median(self.log["seconds"]))

    @property
    def mean_nv(self) -> float:
        return float(np.mean(self.log["n_v"]))

    @property
    def mean_np(self) -> float:
        return float(np.mean(self.log["n_p"]))


class LabRun:
    """``run_lab`` one frame at a time (for a GUI's timer): ``step()`` runs the next frame of
    every configuration and returns False when all frames are done; ``results()`` then."""

    def __init__(self, scene, configs, frames: int | None = None, check: bool = False, repeat: int = 3):
        configs = list(configs)
        if not 1 <= len(configs) <= 8:
            raise ValueError(f"configs: the lab compares 1 to 8 configurations, got {len(configs)}")
        n = scene.frames if frames is None else frames
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= scene.frames:
            raise ValueError(f"frames: expected 1..{scene.frames}, got {frames!r}")
        self.frames, self.repeat, self.frame = int(n), int(repeat), 0
        self.runs = [MotionRun(scene, c, check=check) for c in configs]
        for r in self.runs:  # compile and warm outside the timed frames
            r.step(0)
            r.log = FrameLog()
            r.queried[:] = 0
            r.pair_nv[:] = 0

    def step(self) -> bool:
        if self.frame >= self.frames:
            return False
        for r in self.runs:
            r.step(self.frame, self.repeat)
        self.frame += 1
        return self.frame < self.frames

    def results(self) -> list[LabResult]:
        out = []
        for r in self.runs:
            log = r.log.arrays()
            if len(log["n_v"]) == 0:
                raise ValueError("no frames run yet")
            c_v, c_p, c_0, r2 = fit_cost_model(log["n_v"], log["n_p"], log["seconds"], log["queries"])
            ta, tb, measured = r.busiest_pair()
            exp_nv, _ = expected_tests(ta, tb)
            qual = [tree_quality(max(trees, key=lambda t: t.mesh.n_faces)) for trees in r.trees]
            out.append(LabResult(r.config, log, qual, 1e9 * r.build_seconds / max(1, r.n_triangles), c_v, c_p, c_0,
                                 r2, log["n_v"] * c_v + log["n_p"] * c_p + log["queries"] * c_0, exp_nv, measured,
                                 r.realign_slack()))
        return out


def run_lab(scene, configs, frames: int | None = None, check: bool = False, progress=None,
            repeat: int = 3) -> list[LabResult]:
    """Run every configuration over ``frames`` frames of ``scene`` (interleaved frame by frame;
    each frame's queries ``repeat`` times, the fastest pass timed)."""
    job = LabRun(scene, configs, frames, check, repeat)
    while job.step():
        if progress is not None:
            progress(job.frame, job.frames)
    return job.results()


def verdict(results: list[LabResult]) -> str:
    """Which configuration wins, by how much, and why in terms of the metrics (words)."""
    if not results:
        return "no configurations"
    ranked = sorted(results, key=lambda r: r.mean_seconds)
    w = ranked[0]
    lines = [f"Fastest: {w.config.label} at {w.mean_seconds * 1e3:.3f} ms per frame "
             f"({w.mean_nv:.0f} node tests, {w.mean_np:.0f} triangle tests)."]
    for o in ranked[1:]:
        ratio = o.mean_seconds / w.mean_seconds if w.mean_seconds > 0 else float("inf")
        nv = o.mean_nv / w.mean_nv if w.mean_nv else float("inf")
        # per-test costs compare only where the fitted model explains the frames
        cv = o.c_v / w.c_v if w.c_v > 0 and o.r2 > 0.5 and w.r2 > 0.5 else float("nan")
        qo, qw = o.quality[0], w.quality[0]
        why = []
        if nv > 1.05:
            why.append(f"{nv:.2f}x the node tests")
        elif nv < 0.95:
            why.append(f"only {nv:.2f}x the node tests")
        if np.isfinite(cv) and abs(cv - 1) > 0.1:
            why.append(f"{cv:.2f}x the cost per node test (fitted C_v {o.c_v * 1e9:.0f} vs {w.c_v * 1e9:.0f} ns)")
        if o.mean_np > 1.05 * w.mean_np:
            why.append(f"{o.mean_np / max(w.mean_np, 1):.2f}x the triangle tests")
        metric = []
        same_tree = (o.config.bv, o.config.split, o.config.leaf_size) == (w.config.bv, w.config.split,
                                                                           w.config.leaf_size)
        same_quality = (o.config.bv, o.config.split) == (w.config.bv, w.config.split)
        if same_tree:
            metric.append("the same trees, only the node test differs")
        elif same_quality:
            pass  # leaf size only: the same split planes, nearly the same quality numbers
        elif BV_TYPES[o.config.bv].geometry == BV_TYPES[w.config.bv].geometry or qo.bv == qw.bv:
            # quality numbers compare within one volume family
            metric.append(f"SAH cost {qo.sah_cost:.1f} vs {qw.sah_cost:.1f}")
            metric.append(f"sibling overlap {qo.sibling_overlap:.2f} vs {qw.sibling_overlap:.2f}")
            if np.isfinite(qo.epo) and np.isfinite(qw.epo):
                metric.append(f"EPO {qo.epo:.1f} vs {qw.epo:.1f}")
        elif abs(qo.volume_cost / max(qw.volume_cost, 1e-12) - 1) > 0.05:
            tighter = "looser" if qo.volume_cost > qw.volume_cost else "tighter"
            metric.append(f"volume cost {qo.volume_cost:.1f} vs {qw.volume_cost:.1f} ({tighter} volumes)")
        slack = _realign_words(o)
        if slack and nv > 1.05:
            metric.insert(0, slack)
        if o.config.leaf_size != w.config.leaf_size:
            metric.append(f"leaves of up to {o.config.leaf_size} vs {w.config.leaf_size} triangles trade node "
                          f"tests for triangle tests")
        lines.append(f"- {o.config.label}: {ratio:.2f}x slower; " + (", ".join(why) or "similar counts")
                     + ("; " + "; ".join(metric) if metric else "") + ".")
    return "\n".join(lines)


# a realigned volume wider than the exact one by this share of the node's size, on average,
# is called out: beyond it the traversal descends where the exact volumes are well apart
SLACK_NOTABLE = 0.25
MOVED_NOTABLE = 1.5  # the same for the volume growth of the exact moved k-DOPs


def _realign_words(r: LabResult) -> str:
    """The verdict's words on why a k-DOP configuration descends (or "")."""
    sl = r.realign_slack
    if not sl:
        return ""
    used = r.config.realign or DEFAULT_REALIGN
    words = []
    if sl["moved"] >= MOVED_NOTABLE:
        words.append(f"B's k-DOPs moved into A's directions have {sl['moved']:.1f}x their own volume even when "
                     f"exact (relative rotation {sl['angle']:.0f} deg at the costliest query: a k-DOP test has "
                     f"only A's directions, SAT also B's axes)")
    if sl[used] >= SLACK_NOTABLE:
        text = f"the '{used}' realignment adds {sl[used]:.2f} of their size on top"
        best = min((m for m in REALIGN_METHODS), key=lambda m: sl[m])
        if best != used and sl[best] < 0.5 * sl[used]:
            text += f" (realign='{best}' adds {sl[best]:.2f}: try it)"
        words.append(text)
    return "; ".join(words)


# ---- the front cache against full traversals ---------------------------------------------
@dataclass
class FrontComparison:
    scene: str
    config: LabConfig
    full: dict
    front: dict

    @property
    def test_ratio(self) -> float:
        return float(np.sum(self.front["n_v"]) / max(1, np.sum(self.full["n_v"])))

    @property
    def time_ratio(self) -> float:
        """Median over frames of front time / full time inside the compiled calls (both measured
        in the same frame, so a loaded machine's spikes cancel)."""
        return self._median_ratio("seconds")

    @property
    def wall_ratio(self) -> float:
        """``time_ratio`` of the calls' wall-clock time, Python's part of each call included."""
        return self._median_ratio("wall")

    def _median_ratio(self, key) -> float:
        full = np.asarray(self.full[key])
        ok = full > 0
        if not np.any(ok):
            return float("nan")
        return float(np.median(np.asarray(self.front[key])[ok] / full[ok]))


class FrontRun:
    """``compare_front`` one frame at a time (for a GUI's timer): ``step()`` runs the next frame
    with full traversals and with the front cache; False when all frames are done."""

    def __init__(self, scene, config: LabConfig, frames: int | None = None, check: bool = True,
                 warm_frames: int = 1):
        n = scene.frames if frames is None else frames
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= scene.frames:
            raise ValueError(f"frames: expected 2..{scene.frames}, got {frames!r}")
        self.scene, self.config, self.frames, self.frame = scene, config, int(n), 0
        self.warm_frames = min(warm_frames, self.frames - 1)
        self.full = MotionRun(scene, config)
        self.front = MotionRun(scene, config, front=True, check=check)

    def step(self) -> bool:
        if self.frame >= self.frames:
            return False
        self.full.step(self.frame)
        self.front.step(self.frame)
        self.frame += 1
        return self.frame < self.frames

    def result(self) -> FrontComparison:
        cut = min(self.warm_frames, self.frame - 1)
        fa = {k: v[cut:] for k, v in self.full.log.arrays().items()}
        fr = {k: v[cut:] for k, v in self.front.log.arrays().items()}
        return FrontComparison(self.scene.name, self.config, fa, fr)


def compare_front(scene, config: LabConfig, frames: int | None = None, check: bool = True,
                  warm_frames: int = 1) -> FrontComparison:
    """Full traversals and front-cached ones over the same frames, interleaved; ``check``
    compares every front query's pairs with a full traversal's. The first ``warm_frames``
    frames (compilation; the front's first frame is a full traversal) are not counted."""
    job = FrontRun(scene, config, frames, check, warm_frames)
    while job.step():
        pass
    return job.result()


__all__ = ["LabConfig", "MotionRun", "realign_slack", "LabResult", "LabRun", "run_lab", "verdict",
           "FrontComparison", "FrontRun", "compare_front"]
