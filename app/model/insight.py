"""Insight into the current frame, Qt-free: how loose the updated hierarchies are compared
with fresh fits (``refit_quality``), whether the BVH route finds exactly the contacts a
brute-force oracle finds (``ground_truth``), and where the traversals spend their tests
(``heat_summary``)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from cdcore import layout as L
from cdcore import build_bvh, collide
from cdcore._tritri_ref import tri_tri_overlap_numpy
from cdcore.articulated import METHOD_LABELS, BodyHierarchy
from cdcore.transforms import relative_transform, transform_points

# A level whose summed volume exceeds a fresh fit's by more than this factor is "loose".
# Why 1.5: the chance that a node pair overlaps grows with the nodes' volumes (the
# Minkowski sum of two boxes grows with each box), so the BV tests a traversal spends at a
# level -- and the node pairs it hands down to every level below -- grow roughly in
# proportion to that level's excess volume. Refitting keeps the old axes and partition, so
# this excess only grows while a deformation continues; at +50 % a traversal through that
# level does on the order of half as much work again, while a rebuild (O(n log n)) costs
# about as much as a few exact queries of the mesh. Below ~1.2 the difference is in the
# noise of the per-level sums (two different partitions are compared for mesh trees);
# above 2 the loss is already large. 1.5 flags the change early but not on noise.
REBUILD_THRESHOLD = 1.5

# levels whose fresh volume is below this fraction of the fresh root's are flat (planar
# patches, single triangles): their ratio is noise (0/0) and is left out (NaN)
FLAT_LEVEL_REL = 1e-9

# brute force: at most this many triangle-pair oracle tests per link pair (~2-3 M/s with
# the numpy oracle), and this many in all; beyond them a link pair is "skipped: too large"
MAX_PAIR_TESTS = 20_000_000
MAX_TOTAL_TESTS = 40_000_000
# triangle-box checks of the candidate sweep (~30 M/s) beyond which a link pair is skipped
MAX_BOX_CHECKS = 200_000_000
# box checks per chunk of the sweep (memory ~ 100 bytes per check)
_BOX_CHUNK = 1 << 20
_ORACLE_CHUNK = 1 << 17

# The brute-force prefilters (link boxes, triangle boxes) are grown by this fraction of the
# coordinate scale: the kernel counts triangles apart by less than its rounding slack
# (8 ulp of the coordinates, ~1e-15 relative, along its separating axes) as touching, so an
# unpadded box test could drop a pair the kernel counts. A pair the padded boxes drop is
# more than 2e-9 of the scale apart; for the kernel to call it touching, all of its axes
# would have to separate it by a millionth of that distance or less. So the prefilters
# change no answer in practice; tests check them against the plain all-pairs oracle.
PREFILTER_PAD_REL = 1e-9


# ---- refit quality ---------------------------------------------------------------------

def node_volumes(nodes_f: np.ndarray, family: str) -> np.ndarray:
    """Volume per node: boxes 8 ex ey ez, spheres 4/3 pi r^3. (k-DOP trees keep the AABB
    of their first three slabs in ``nodes_f``: its volume stands in for the polytope's.)"""
    if family == "sphere":
        return 4.0 / 3.0 * np.pi * nodes_f[:, L.SR] ** 3
    e = nodes_f[:, L.E0:L.E0 + 3]
    return 8.0 * e[:, 0] * e[:, 1] * e[:, 2]


def _level_sums(vol, depth, n_levels=None):
    return np.bincount(depth, weights=vol, minlength=n_levels or 0)


def _ratios(cur, ref, root_ref):
    n = min(len(cur), len(ref))
    out = np.full(max(len(cur), len(ref)), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cur[:n] / ref[:n]
    flat = ref[:n] <= FLAT_LEVEL_REL * max(root_ref, 0.0)
    r[flat | ~np.isfinite(r)] = np.nan
    out[:n] = r
    return out


@dataclass
class BodyRefit:
    """One body's hierarchy against a fresh fit of the same frame.

    ``tree``: "articulation" (the body's link hierarchy, node by node against a fresh
    covariance OBB update of the same topology) or "mesh" (a single link's triangle BVH
    against a fresh ``build_bvh`` of its current vertices: different topology, so only
    the per-level sums are compared). ``level_ratio[d]`` = sum of current volumes at depth
    d / sum of fresh ones (NaN: level missing in one tree, or flat); ``node_ratio``
    (articulation only) per node.
    """
    body: int
    name: str
    tree: str
    current: str
    reference: str
    level_ratio: np.ndarray
    level_volume: np.ndarray
    level_fresh: np.ndarray
    node_ratio: np.ndarray | None = None
    total_ratio: float = float("nan")

    @property
    def worst(self) -> float:
        r = self.level_ratio[np.isfinite(self.level_ratio)]
        return float(r.max()) if len(r) else float("nan")

    @property
    def worst_level(self) -> int:
        r = np.where(np.isfinite(self.level_ratio), self.level_ratio, -np.inf)
        return int(np.argmax(r)) if len(r) else -1


@dataclass
class RefitQuality:
    frame: int
    bodies: list[BodyRefit]
    threshold: float
    seconds: float
    reasons: list[str] = field(default_factory=list)

    @property
    def worst(self) -> float:
        w = [b.worst for b in self.bodies if np.isfinite(b.worst)]
        return max(w) if w else float("nan")

    @property
    def rebuild_recommended(self) -> bool:
        return bool(self.reasons)


def refit_quality(session, threshold: float = REBUILD_THRESHOLD) -> RefitQuality:
    """Per body and tree level, how much the current volumes exceed a fresh fit's."""
    if session.scene is None or session.runner is None:
        raise ValueError("no scene loaded")
    t0 = time.perf_counter()
    s, frame = session.scene, session.frame
    out = []
    for i, sb in enumerate(s.bodies):
        h = session.runner.hierarchies[i]
        if sb.body.n_links > 1:
            poses = h.poses if h.poses is not None else sb.link_poses[frame]
            if h.poses is None:
                h.update(poses)
            fresh = BodyHierarchy(sb.body, "obb")
            fresh.update(poses)
            depth = sb.body.tree.depth
            cur_v, ref_v = node_volumes(h.nodes_f, "box"), node_volumes(fresh.nodes_f, "box")
            with np.errstate(divide="ignore", invalid="ignore"):
                node_ratio = np.where(ref_v > 0, cur_v / ref_v, np.nan)
            cs, rs = _level_sums(cur_v, depth), _level_sums(ref_v, depth)
            out.append(BodyRefit(i, sb.name, "articulation", f"{METHOD_LABELS[h.method]} update",
                                 "fresh covariance OBB update", _ratios(cs, rs, rs[0]), cs, rs, node_ratio,
                                 float(cs.sum() / rs.sum()) if rs.sum() > 0 else float("nan")))
        else:
            bvh = sb.body.bvhs[0]
            fam = "sphere" if bvh.bv == "sphere" else "box"
            fresh = build_bvh(bvh.mesh, bvh.bv, bvh.leaf_size)
            cs = _level_sums(node_volumes(bvh.nodes_f, fam), bvh.depth)
            rs = _level_sums(node_volumes(fresh.nodes_f, fam), fresh.depth)
            mode = ("refit" if session.deform == "refit" else "rebuilt") if sb.deforming else "rigid"
            n = min(len(cs), len(rs))
            out.append(BodyRefit(i, sb.name, "mesh", f"{bvh.bv} BVH ({mode})", "fresh build_bvh",
                                 _ratios(cs, rs, rs[0]), cs, rs, None,
                                 float(cs[:n].sum() / rs[:n].sum()) if rs[:n].sum() > 0 else float("nan")))
    reasons = []
    for b in out:
        if np.isfinite(b.worst) and b.worst > threshold:
            what = ("rebuild its mesh hierarchy (deform mode 'rebuild')" if b.tree == "mesh" else
                    "its merged link boxes are loose: the covariance 'obb' update refits every node "
                    "from the geometry (the articulation tree's rebuild)")
            reasons.append(f"{b.name}: {b.tree} level {b.worst_level} holds {b.worst:.2f}x the volume of a fresh "
                           f"fit -> {what}")
    return RefitQuality(frame, out, threshold, time.perf_counter() - t0, reasons)


# ---- ground truth ----------------------------------------------------------------------

@dataclass
class GroundTruth:
    """Brute force against the BVH on one frame.

    Link pairs are (scene pair index, body_a, link_a, body_b, link_b); triangle pairs
    (scene pair index, body_a, link_a, tri_a, body_b, link_b, tri_b), triangle ids local to
    the link's mesh. ``missed_*``: in contact per brute force, not found by the BVH route
    (triangles: ``cdcore.collide`` with contacts="all"; links: the session runner's
    ``result.pairs[k].contacts``); ``spurious_*``: found by the BVH route only. ``skipped``:
    link pairs too large to brute-force (with their test counts), left out of both
    comparisons. ``ok``: nothing missed, nothing spurious.
    """
    frame: int
    pair_indices: list[int]
    n_link_pairs: int = 0          # link pairs considered (adjacent ones excluded)
    n_link_pairs_near: int = 0     # ... whose (padded) link boxes overlap
    n_tri_tests: int = 0           # oracle triangle-pair tests run
    n_brute_link_contacts: int = 0
    n_reported_link_contacts: int = 0
    n_brute_tri_contacts: int = 0
    n_bvh_tri_contacts: int = 0
    missed_links: list = field(default_factory=list)
    spurious_links: list = field(default_factory=list)
    missed_tris: list = field(default_factory=list)
    spurious_tris: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # (link pair..., n_tests, reason)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.missed_links or self.spurious_links or self.missed_tris or self.spurious_tris)

    @property
    def complete(self) -> bool:
        return not self.skipped

    def highlights(self) -> list[tuple[int, int, list[int]]]:
        """(body, link, triangle ids) to highlight: the triangles of missed and spurious
        triangle pairs, and (with no triangle ids: the whole link) links of link-level
        disagreements that have no triangle pair listed."""
        acc: dict[tuple[int, int], set] = {}
        for (_, ba, la, ta, bb, lb, tb) in self.missed_tris + self.spurious_tris:
            acc.setdefault((ba, la), set()).add(int(ta))
            acc.setdefault((bb, lb), set()).add(int(tb))
        for (_, ba, la, bb, lb) in self.missed_links + self.spurious_links:
            acc.setdefault((ba, la), set())
            acc.setdefault((bb, lb), set())
        return [(b, ln, sorted(t)) for (b, ln), t in sorted(acc.items())]

    def summary(self) -> str:
        head = (f"frame {self.frame}: {'OK' if self.ok else 'MISMATCH'} -- {self.n_brute_link_contacts} link pairs "
                f"in contact per brute force, {self.n_reported_link_contacts} reported; "
                f"{self.n_brute_tri_contacts} / {self.n_bvh_tri_contacts} triangle pairs (brute / BVH); "
                f"{self.n_tri_tests:,} triangle tests over {self.n_link_pairs_near} of {self.n_link_pairs} link "
                f"pairs in {self.seconds:.2f} s")
        lines = [head]
        for title, rows in (("missed link pairs", self.missed_links), ("spurious link pairs", self.spurious_links),
                            ("missed triangle pairs", self.missed_tris),
                            ("spurious triangle pairs", self.spurious_tris)):
            if rows:
                lines.append(f"{title} ({len(rows)}):")
                lines += ["  " + _fmt(r) for r in rows[:200]]
                if len(rows) > 200:
                    lines.append(f"  ... {len(rows) - 200} more")
        for r in self.skipped:
            lines.append(f"skipped: too large ({r[-2]:,} triangle tests): " + _fmt(r[:5]) + f" [{r[-1]}]")
        return "\n".join(lines)


def _fmt(r) -> str:
    if len(r) == 5:
        return f"pair {r[0]}: body {r[1]} link {r[2]} / body {r[3]} link {r[4]}"
    return f"pair {r[0]}: body {r[1]} link {r[2]} tri {r[3]} / body {r[4]} link {r[5]} tri {r[6]}"


def _link_vertices(sb, link, frame):
    if sb.deforming:  # the frame's own geometry, not the (maybe stale) hierarchy's copy
        return np.ascontiguousarray(sb.vertices(frame), dtype=np.float64)
    return sb.body.bvhs[link].mesh.vertices


def _world_box(verts, pose):
    w = verts @ pose[:3, :3].T + pose[:3, 3]
    lo, hi = w.min(axis=0), w.max(axis=0)
    return lo, hi


def _boxes(tris):
    return tris.min(axis=1), tris.max(axis=1)


def _candidates(lo_a, hi_a, lo_b, hi_b, max_checks):
    """Triangle pairs (ia, ib) whose boxes overlap: sweep along the longest axis (B sorted
    by its boxes' low end; every B box overlapping A's interval starts within
    [lo_a - widest B box, hi_a]), then the full box test on those. Returns (ia, ib, checks)
    or (None, None, checks) when more than ``max_checks`` box checks would be needed."""
    if len(lo_a) == 0 or len(lo_b) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    ax = int(np.argmax(np.maximum(hi_a.max(axis=0), hi_b.max(axis=0))
                       - np.minimum(lo_a.min(axis=0), lo_b.min(axis=0))))
    order = np.argsort(lo_b[:, ax], kind="stable")
    keys = lo_b[order, ax]
    w = float((hi_b[:, ax] - lo_b[:, ax]).max())
    w = w * (1.0 + 1e-9) + 1e-300  # never narrower than the widest box after rounding
    start = np.searchsorted(keys, lo_a[:, ax] - w, "left")
    cnt = np.maximum(np.searchsorted(keys, hi_a[:, ax], "right") - start, 0)
    total = int(cnt.sum())
    if total > max_checks:
        return None, None, total
    ends = np.cumsum(cnt)
    ia_out, ib_out = [], []
    s = 0
    while s < len(lo_a):
        base = ends[s - 1] if s else 0
        e = max(int(np.searchsorted(ends, base + _BOX_CHUNK, "right")), s + 1)
        c = cnt[s:e]
        n = int(c.sum())
        if n:
            ia = np.repeat(np.arange(s, e), c)
            offs = np.arange(n) - np.repeat(ends[s:e] - c - base, c) + np.repeat(start[s:e], c)
            ib = order[offs]
            ok = np.all((lo_a[ia] <= hi_b[ib]) & (lo_b[ib] <= hi_a[ia]), axis=1)
            ia_out.append(ia[ok])
            ib_out.append(ib[ok])
        s = e
    if not ia_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), total
    return np.concatenate(ia_out), np.concatenate(ib_out), total


def _brute_link_pair(tris_a, tris_b, budget):
    """Intersecting triangle pairs of two triangle sets in the same frame (the kernel's
    answer, via the numpy oracle), after exact-up-to-padding box prefilters. Returns
    (pairs (k, 2) int32 or None when over ``budget``, oracle tests needed)."""
    scale = max(float(np.abs(tris_a).max(initial=0.0)), float(np.abs(tris_b).max(initial=0.0)), 1e-300)
    pad = PREFILTER_PAD_REL * scale
    lo_a, hi_a = _boxes(tris_a)
    lo_b, hi_b = _boxes(tris_b)
    lo_a, hi_a, lo_b, hi_b = lo_a - pad, hi_a + pad, lo_b - pad, hi_b + pad
    # triangles outside the other link's box cannot touch it
    box_b_lo, box_b_hi = lo_b.min(axis=0), hi_b.max(axis=0)
    box_a_lo, box_a_hi = lo_a.min(axis=0), hi_a.max(axis=0)
    ka = np.flatnonzero(np.all((lo_a <= box_b_hi) & (box_b_lo <= hi_a), axis=1))
    kb = np.flatnonzero(np.all((lo_b <= box_a_hi) & (box_a_lo <= hi_b), axis=1))
    ia, ib, checks = _candidates(lo_a[ka], hi_a[ka], lo_b[kb], hi_b[kb], MAX_BOX_CHECKS)
    if ia is None:
        return None, checks
    n_tests = len(ia)
    if n_tests > budget:
        return None, n_tests
    ia, ib = ka[ia], kb[ib]
    hits = []
    for s in range(0, n_tests, _ORACLE_CHUNK):
        a, b = ia[s:s + _ORACLE_CHUNK], ib[s:s + _ORACLE_CHUNK]
        h = tri_tri_overlap_numpy(tris_a[a], tris_b[b])
        hits.append(np.stack([a[h], b[h]], axis=1))
    out = np.concatenate(hits).astype(np.int32) if hits else np.zeros((0, 2), np.int32)
    return out, n_tests


def ground_truth(session, pair_index: int | None = None, max_pair_tests: int = MAX_PAIR_TESTS,
                 max_total_tests: int = MAX_TOTAL_TESTS) -> GroundTruth:
    """Brute force vs the BVH on the session's current frame, for every scene pair (or the
    one ``pair_index``), at triangle and at link level (see ``GroundTruth``).

    Brute force: every triangle pair of every link pair (adjacent links of a self-collision
    pair excluded when they touch at their joints, as cdcore does) with B's triangles moved
    into A's frame exactly as the kernels move them (``relative_transform`` +
    ``transform_points``), tested with the numpy oracle ``tri_tri_overlap_numpy``; pairs are
    first pruned by padded boxes (links in world, then triangles in A's frame: exact, see
    ``PREFILTER_PAD_REL``). A link pair needing more than ``max_pair_tests`` oracle tests,
    or going over ``max_total_tests`` in all, is reported as skipped rather than freezing
    the app."""
    if session.scene is None or session.result is None:
        raise ValueError("no scene loaded")
    s, frame = session.scene, session.frame
    if pair_index is None:
        indices = list(range(len(s.pairs)))
    else:
        if not 0 <= pair_index < len(s.pairs):
            raise ValueError(f"no body pair {pair_index}")
        indices = [int(pair_index)]
    t0 = time.perf_counter()
    gt = GroundTruth(frame, indices)
    test = session.exact_test
    used = 0
    # vertices and world boxes per (body, link), computed once
    verts, wbox = {}, {}

    def link_geom(b, ln):
        if (b, ln) not in verts:
            sb = s.bodies[b]
            v = _link_vertices(sb, ln, frame)
            verts[b, ln] = v
            lo, hi = _world_box(v, sb.link_poses[frame][ln])
            pad = PREFILTER_PAD_REL * max(float(np.abs(lo).max()), float(np.abs(hi).max()), 1e-300)
            wbox[b, ln] = (lo - pad, hi + pad)
        return verts[b, ln], wbox[b, ln]

    for k in indices:
        i, j = s.pairs[k]
        A, B = s.bodies[i], s.bodies[j]
        if i == j:
            adj = A.body.skipped_self_pairs()  # adjacent links, when they touch at their joints
            lps = [(a, b) for a in range(A.body.n_links) for b in range(a + 1, A.body.n_links)
                   if (a, b) not in adj and (b, a) not in adj]
        else:
            lps = [(a, b) for a in range(A.body.n_links) for b in range(B.body.n_links)]
        reported = set(map(tuple, session.result.pairs[k].contacts.tolist()))
        brute_links, skipped = set(), set()
        for la, lb in lps:
            gt.n_link_pairs += 1
            pa, pb = A.link_poses[frame][la], B.link_poses[frame][lb]
            # the BVH route, on every link pair (independent of the prefilters)
            r = collide(A.body.bvhs[la], pa, B.body.bvhs[lb], pb, test=test, contacts="all")
            bvh_tris = set(map(tuple, r.pairs.tolist()))
            gt.n_bvh_tri_contacts += len(bvh_tris)
            va, (alo, ahi) = link_geom(i, la)
            vb, (blo, bhi) = link_geom(j, lb)
            if np.all(alo <= bhi) and np.all(blo <= ahi):
                gt.n_link_pairs_near += 1
                R, t = relative_transform(np.ascontiguousarray(pa), np.ascontiguousarray(pb))
                tris_a = va[A.body.bvhs[la].mesh.faces]
                tris_b = transform_points(R, t, vb)[B.body.bvhs[lb].mesh.faces]
                budget = min(max_pair_tests, max_total_tests - used)
                found, n_tests = _brute_link_pair(tris_a, tris_b, budget)
                if found is None:
                    reason = "pair cap" if n_tests > max_pair_tests else "total budget"
                    gt.skipped.append((k, i, la, j, lb, n_tests, reason))
                    skipped.add((la, lb))
                    gt.n_bvh_tri_contacts -= len(bvh_tris)
                    continue
                used += n_tests
                gt.n_tri_tests += n_tests
                brute_tris = set(map(tuple, found.tolist()))
            else:
                brute_tris = set()
            gt.n_brute_tri_contacts += len(brute_tris)
            if brute_tris:
                brute_links.add((la, lb))
            gt.missed_tris += [(k, i, la, ta, j, lb, tb) for ta, tb in sorted(brute_tris - bvh_tris)]
            gt.spurious_tris += [(k, i, la, ta, j, lb, tb) for ta, tb in sorted(bvh_tris - brute_tris)]
        reported -= skipped
        gt.n_brute_link_contacts += len(brute_links)
        gt.n_reported_link_contacts += len(reported)
        gt.missed_links += [(k, i, la, j, lb) for la, lb in sorted(brute_links - reported)]
        gt.spurious_links += [(k, i, la, j, lb) for la, lb in sorted(reported - brute_links)]
    gt.seconds = time.perf_counter() - t0
    return gt


# ---- heat --------------------------------------------------------------------------------

@dataclass
class LevelHeat:
    level: int
    nodes: int
    min: float
    mean: float
    max: float


def heat_summary(session, body: int) -> list[LevelHeat]:
    """Per level of body's drawn tree (``session.trees[body]``): min / mean / max of how
    often its nodes were tested over the session's heat window."""
    if not session.trees or not 0 <= body < len(session.trees):
        raise ValueError(f"no tree for body {body} (load a scene with visuals on)")
    tree = session.trees[body]
    heat = np.asarray(session.heat(body), dtype=np.float64)
    out = []
    for d in range(int(tree.depth.max()) + 1):
        h = heat[tree.depth == d]
        if len(h):
            out.append(LevelHeat(d, len(h), float(h.min()), float(h.mean()), float(h.max())))
    return out


__all__ = ["REBUILD_THRESHOLD", "MAX_PAIR_TESTS", "MAX_TOTAL_TESTS", "BodyRefit", "RefitQuality", "GroundTruth",
           "LevelHeat", "node_volumes", "refit_quality", "ground_truth", "heat_summary"]
