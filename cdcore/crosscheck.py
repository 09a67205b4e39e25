"""One query through several collision libraries and an exact reference, and why they differ.

``crosscheck(mesh_a, pose_a, mesh_b, pose_b)`` runs the query through

* ``"cdcore"``: ``collide(..., geometry=True)`` (and ``distance`` when separated), one entry
  per requested BV type (the first is ``"cdcore"``, the others ``"cdcore:<bv>"``);
* ``"brute"``: every triangle pair through the numpy reference (``cdcore.contacts``,
  ``cdcore.witness``): the exact answer, from the two meshes alone;
* ``"fcl"`` (python-fcl) and ``"coal"``, when installed (optional extras, never required),
  with every contact requested (``num_max_contacts`` = m n) and, when separated, the
  distance with nearest points. Peer options reproduce a user's set-up:
  ``peers={"coal": {"security_margin": 0.01, "convex_hull": "a"}}`` (coal only: python-fcl
  exposes neither).

Each ``Verdict``: hit, number of contacts (intersecting triangle pairs; for peers the
contacts they report), minimum distance (separated) or deepest penetration (hit), witness
points, the query's time. Every engine is compared with the exact answer; each
``Disagreement`` carries a ``reason`` a user can act on and the triangle pair responsible:

``touching``
    the meshes touch or nearly touch: the exact gap (or every missed contact's depth) is
    within ``tolerance``; libraries decide such contacts differently (closed sets here,
    coal's own tolerance, fcl's coplanar handling). The gap is given.
``security_margin``
    the engine used a security margin and the exact gap is below it.
``convex_hull``
    the engine tested the convex hull of a mesh (coal ``buildConvexHull`` / ``Convex``) and
    the hull reaches the other body where the mesh does not.
``missed_pair`` / ``extra_pair``
    a triangle pair that intersects (exactly) and the engine does not report, or one it
    reports that does not intersect (with that pair's exact distance).
``distance``
    both separated, but the engine's distance differs from the exact minimum (or its
    witness points are not |p_a - p_b| = distance apart).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .mesh import Mesh
from .transforms import as_pose

REASONS = ("touching", "security_margin", "convex_hull", "missed_pair", "extra_pair", "distance")
PEERS = ("fcl", "coal")
#: the brute-force reference is skipped above this many triangle pairs (m n): it is O(m n)
BRUTE_MAX_PAIRS = 4_000_000


@dataclass
class Verdict:
    """One engine's answer. ``distance``: minimum distance when separated (0 on a hit);
    ``depth``: deepest penetration when hit (the engine's own measure; cdcore and brute:
    the translational depth of ``cdcore.contacts``), else 0. ``points`` (2, 3): closest
    points (separated) or the deepest contact's two points (hit; peers report one
    position, repeated). ``pairs`` (k, 2): triangle pairs reported (hit), ``pair`` the
    pair of the distance or deepest contact. ``time`` seconds of the query alone."""
    engine: str
    hit: bool
    n_contacts: int
    distance: float
    depth: float
    points: np.ndarray | None
    pairs: np.ndarray | None
    pair: tuple | None
    time: float
    note: str = ""
    margin: float = 0.0
    hull: str = ""


@dataclass
class Disagreement:
    engine: str
    reason: str  # one of REASONS
    message: str
    pair: tuple | None = None
    gap: float | None = None


@dataclass
class CrossCheck:
    """``verdicts`` engine -> Verdict (``"brute"`` when the meshes are small enough);
    ``exact`` the name of the verdict taken as exact; ``disagreements`` every difference
    with the exact answer; ``tolerance`` the touching tolerance used."""
    verdicts: dict
    disagreements: list
    exact: str
    tolerance: float
    skipped: dict = field(default_factory=dict)  # engine -> why it did not run

    @property
    def ok(self) -> bool:
        return not self.disagreements

    def table(self) -> str:
        rows = [("engine", "hit", "contacts", "distance", "depth", "pair", "witness points", "time", "note")]
        for name, v in self.verdicts.items():
            pts = "-" if v.points is None else " / ".join(
                "(" + ", ".join(f"{x:.4g}" for x in p) + ")" for p in np.asarray(v.points))
            rows.append((name, "yes" if v.hit else "no", str(v.n_contacts),
                         "-" if v.hit else f"{v.distance:.6g}", f"{v.depth:.4g}" if v.hit else "-",
                         "-" if v.pair is None else f"{v.pair[0]},{v.pair[1]}", pts, _fmt_time(v.time), v.note))
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        for name, why in self.skipped.items():
            lines.append(f"({name}: not run: {why})")
        if self.disagreements:
            lines.append("")
            lines.append(f"{len(self.disagreements)} disagreement(s) with the exact answer ({self.exact}):")
            for d in self.disagreements:
                where = "" if d.pair is None else f" [triangle pair {d.pair[0]} of A, {d.pair[1]} of B]"
                lines.append(f"  {d.engine}: {d.reason}: {d.message}{where}")
        else:
            lines.append("")
            lines.append(f"all engines agree with the exact answer ({self.exact}; touching tolerance "
                         f"{self.tolerance:.3g})")
        return "\n".join(lines)

    def responsible_pair(self) -> tuple | None:
        """The triangle pair of the first disagreement that names one (the app's stepper)."""
        for d in self.disagreements:
            if d.pair is not None:
                return d.pair
        return None


def _fmt_time(s):
    return f"{s * 1e6:.0f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


# ---- engines ------------------------------------------------------------------------------
def _world(mesh, pose):
    return mesh.vertices[mesh.faces] @ pose[:3, :3].T + pose[:3, 3]


def _cdcore_verdict(name, bv, ma, pa, mb, pb):
    from .bvh import build_bvh
    from .collide import collide
    from .contacts import summarize
    from .distance import distance
    ba, bb = build_bvh(ma, bv), build_bvh(mb, bv)
    t0 = time.perf_counter()
    res = collide(ba, pa, bb, pb, geometry=True)
    if res.hit:
        t = time.perf_counter() - t0
        s = summarize(res)
        assert res.points is not None  # geometry=True
        return Verdict(name, True, s.count, 0.0, s.depth, res.points[s.deepest].copy(), res.pairs.copy(),
                       s.pair, t, note=f"bv={bv}")
    try:
        d = distance(ba, pa, bb, pb)
    except NotImplementedError:
        return Verdict(name, False, 0, math.nan, 0.0, None, res.pairs, None, time.perf_counter() - t0,
                       note=f"bv={bv} (no distance)")
    t = time.perf_counter() - t0
    return Verdict(name, False, 0, d.distance, 0.0, d.points.copy(), res.pairs, tuple(d.pair), t, note=f"bv={bv}")


def _brute_verdict(ma, pa, mb, pb, distance_ok=True):
    """The exact answer from the meshes alone; None when the meshes are apart and too large
    for the O(m n) brute-force distance (``distance_ok`` False)."""
    from .contacts import reference_contacts
    from .witness import brute_distance
    t0 = time.perf_counter()
    ref = reference_contacts(ma, pa, mb, pb)
    if ref.hit:
        r = int(np.argmax(ref.depths))
        return Verdict("brute", True, len(ref.pairs), 0.0, float(ref.depths[r]), ref.points[r].copy(), ref.pairs,
                       tuple(int(x) for x in ref.pairs[r]), time.perf_counter() - t0, note="exact, all pairs")
    if not distance_ok:
        return None
    d, pair, pts = brute_distance(ma, pa, mb, pb)
    return Verdict("brute", False, 0, d, 0.0, pts, ref.pairs, pair, time.perf_counter() - t0,
                   note="exact, all pairs")


def _fcl_verdict(fcl, ma, pa, mb, pb, opts):
    if opts:
        raise ValueError(f"peers['fcl']: python-fcl takes no options (no security margin, no convex hull "
                         f"flag in its API), got {sorted(opts)}")

    def obj(mesh, pose):
        m = fcl.BVHModel()
        m.beginModel(mesh.n_faces, mesh.n_vertices)  # (num_tris, num_vertices): that order
        m.addSubModel(mesh.vertices, mesh.faces)
        m.endModel()
        return fcl.CollisionObject(m, fcl.Transform(np.ascontiguousarray(pose[:3, :3]),
                                                    np.ascontiguousarray(pose[:3, 3])))
    oa, ob = obj(ma, pa), obj(mb, pb)
    req = fcl.CollisionRequest(num_max_contacts=max(1, ma.n_faces * mb.n_faces), enable_contact=True)
    res = fcl.CollisionResult()
    t0 = time.perf_counter()
    fcl.collide(oa, ob, req, res)
    t = time.perf_counter() - t0
    if res.is_collision:
        cs = res.contacts
        pairs = np.unique(np.array([(c.b1, c.b2) for c in cs], dtype=np.int64).reshape(-1, 2), axis=0)
        deep = max(cs, key=lambda c: c.penetration_depth)
        pos = np.asarray(deep.pos, dtype=np.float64)
        return Verdict("fcl", True, len(pairs), 0.0, float(deep.penetration_depth), np.stack([pos, pos]), pairs,
                       (int(deep.b1), int(deep.b2)), t, note=f"OBBRSS, {len(cs)} contact points")
    dreq = fcl.DistanceRequest(enable_nearest_points=True)
    dres = fcl.DistanceResult()
    t0 = time.perf_counter()
    fcl.distance(oa, ob, dreq, dres)
    t += time.perf_counter() - t0
    pts = np.array([np.asarray(p, dtype=np.float64) for p in dres.nearest_points])
    return Verdict("fcl", False, 0, float(dres.min_distance), 0.0, pts, np.zeros((0, 2), np.int64),
                   (int(dres.b1), int(dres.b2)), t, note="OBBRSS")


def _coal_verdict(coal, ma, pa, mb, pb, opts):
    unknown = set(opts) - {"security_margin", "convex_hull"}
    if unknown:
        raise ValueError(f"peers['coal']: unknown options {sorted(unknown)} (security_margin, convex_hull)")
    margin = float(opts.get("security_margin", 0.0))
    hull = str(opts.get("convex_hull", "") or "")
    if hull not in ("", "a", "b", "ab"):
        raise ValueError(f"peers['coal']['convex_hull']: expected 'a', 'b' or 'ab', got {hull!r}")

    def geom(mesh, side):
        m = coal.BVHModelOBBRSS()
        m.beginModel(mesh.n_faces, mesh.n_vertices)
        m.addVertices(np.ascontiguousarray(mesh.vertices))
        m.addTriangles(np.ascontiguousarray(mesh.faces, dtype=np.int64))
        m.endModel()
        if side in hull:  # what a user gets from coal.Convex or buildConvexHull (coal#609)
            m.buildConvexHull(True, "Qt")
            return m.convex
        return m

    ga, gb = geom(ma, "a"), geom(mb, "b")
    ta = coal.Transform3s(np.ascontiguousarray(pa[:3, :3]), np.ascontiguousarray(pa[:3, 3]))
    tb = coal.Transform3s(np.ascontiguousarray(pb[:3, :3]), np.ascontiguousarray(pb[:3, 3]))
    req = coal.CollisionRequest()
    req.num_max_contacts = max(1, ma.n_faces * mb.n_faces)
    req.enable_contact = True
    req.security_margin = margin
    res = coal.CollisionResult()
    note = "OBBRSS" + (f", security margin {margin:g}" if margin else "") + (f", convex hull of {hull.upper()}"
                                                                            if hull else "")
    t0 = time.perf_counter()
    coal.collide(ga, ta, gb, tb, req, res)
    t = time.perf_counter() - t0
    if res.isCollision():
        cs = [res.getContact(i) for i in range(res.numContacts())]
        pairs = np.unique(np.array([(c.b1, c.b2) for c in cs], dtype=np.int64).reshape(-1, 2), axis=0)
        if hull:  # hull contacts name no triangle pair of the mesh
            pairs = None
        # coal's penetration_depth is a signed distance (negative when penetrating): report -it
        deep = min(cs, key=lambda c: c.penetration_depth)
        pos = np.asarray(deep.pos, dtype=np.float64)
        return Verdict("coal", True, len(cs), 0.0, -float(deep.penetration_depth), np.stack([pos, pos]), pairs,
                       None if hull else (int(deep.b1), int(deep.b2)), t, note=note, margin=margin, hull=hull)
    dreq = coal.DistanceRequest()  # (coal 3 always computes the nearest points)
    dres = coal.DistanceResult()
    t0 = time.perf_counter()
    coal.distance(ga, ta, gb, tb, dreq, dres)
    t += time.perf_counter() - t0
    pts = np.stack([np.asarray(dres.getNearestPoint1(), float), np.asarray(dres.getNearestPoint2(), float)])
    return Verdict("coal", False, 0, float(dres.min_distance), 0.0, pts, np.zeros((0, 2), np.int64),
                   None if hull else (int(dres.b1), int(dres.b2)), t, note=note, margin=margin, hull=hull)


def _import_peer(name):
    try:
        if name == "fcl":
            import fcl
            return fcl, None
        import coal  # pyright: ignore[reportMissingImports]  (optional peer)
        return coal, None
    except Exception as exc:  # ImportError or a broken shared library
        return None, f"{'python-fcl' if name == 'fcl' else 'coal'} is not importable ({type(exc).__name__})"


# ---- comparison ---------------------------------------------------------------------------
class _Exact:
    """Exact facts about the query, computed once and on demand (pair distances)."""

    def __init__(self, verdict: Verdict, ma, pa, mb, pb):
        self.v = verdict
        self.TA, self.TB = _world(ma, pa), _world(mb, pb)
        self.pairs = set() if verdict.pairs is None else {tuple(int(x) for x in p) for p in verdict.pairs}
        self._depth = None
        self.args = (ma, pa, mb, pb)

    def pair_distance(self, i, j) -> float:
        from ._tridist import tri_tri_distance
        d, _, _ = tri_tri_distance(*(np.ascontiguousarray(x) for x in (*self.TA[i], *self.TB[j])))
        return float(d)

    def depths(self) -> dict:
        if self._depth is None:
            from .contacts import geometry_arrays
            pairs = np.array(sorted(self.pairs), dtype=np.int32).reshape(-1, 2)
            _, _, dep = geometry_arrays(*self.args, pairs)
            self._depth = {tuple(p): float(d) for p, d in zip(pairs.tolist(), dep)}
        return self._depth


def _compare(v: Verdict, ex: _Exact, tol: float) -> list[Disagreement]:
    X = ex.v
    out = []
    gap = 0.0 if X.hit else X.distance
    if v.hit and not X.hit:
        if gap <= tol:
            out.append(Disagreement(v.engine, "touching", f"reports a hit; the meshes are {gap:.3g} apart, within "
                                    f"the touching tolerance {tol:.3g}", X.pair, gap))
        elif v.margin > 0 and gap <= v.margin + tol:
            out.append(Disagreement(v.engine, "security_margin", f"reports a hit with security margin {v.margin:g}; "
                                    f"the meshes are {gap:.6g} apart (no contact)", X.pair, gap))
        elif v.hull:
            which = {"a": "A", "b": "B", "ab": "A and B"}[v.hull]
            out.append(Disagreement(v.engine, "convex_hull", f"tested the convex hull of {which}, which reaches the "
                                    f"other body; the meshes themselves are {gap:.6g} apart", X.pair, gap))
        else:
            pair = v.pair if v.pair is not None else X.pair
            assert pair is not None  # the exact reference names the closest pair
            d = ex.pair_distance(*pair) if v.pair is not None else gap
            out.append(Disagreement(v.engine, "extra_pair", f"reports a contact at a triangle pair {d:.6g} apart; "
                                    f"the meshes are {gap:.6g} apart", tuple(pair), d))
        return out
    if X.hit and not v.hit:
        deps = ex.depths()
        deepest = max(deps, key=lambda p: deps[p])
        if deps[deepest] <= tol:
            out.append(Disagreement(v.engine, "touching", f"reports no hit; the {len(deps)} exact contact(s) are "
                                    f"touching only (deepest penetration {deps[deepest]:.3g} <= {tol:.3g}; "
                                    f"reported distance {v.distance:.3g})", deepest, 0.0))
        else:
            out.append(Disagreement(v.engine, "missed_pair", f"reports no hit (distance {v.distance:.6g}); "
                                    f"{len(deps)} triangle pair(s) intersect, the deepest by {deps[deepest]:.6g}",
                                    deepest, 0.0))
        return out
    if X.hit and v.hit:
        if v.pairs is None or v.hull:
            return out
        got = {tuple(int(x) for x in p) for p in v.pairs}
        missed, extra = ex.pairs - got, got - ex.pairs
        if missed:
            deps = ex.depths()
            deep = sorted(missed, key=lambda p: -deps[p])
            touching = [p for p in deep if deps[p] <= tol]
            real = [p for p in deep if deps[p] > tol]
            if real:
                out.append(Disagreement(v.engine, "missed_pair", f"misses {len(real)} intersecting triangle pair(s), "
                                        f"the deepest by {deps[real[0]]:.6g}", real[0], 0.0))
            if touching:
                out.append(Disagreement(v.engine, "touching", f"misses {len(touching)} touching triangle pair(s) "
                                        f"(depth <= {tol:.3g}: touching or coplanar)", touching[0], 0.0))
        if extra:
            dist = {p: ex.pair_distance(*p) for p in extra}
            far = sorted(extra, key=lambda p: -dist[p])
            worst = far[0]
            if dist[worst] <= tol:
                out.append(Disagreement(v.engine, "touching", f"reports {len(extra)} extra triangle pair(s) at most "
                                        f"{dist[worst]:.3g} apart (touching tolerance {tol:.3g})", worst, dist[worst]))
            elif v.margin > 0 and dist[worst] <= v.margin + tol:
                out.append(Disagreement(v.engine, "security_margin", f"reports {len(extra)} triangle pair(s) within "
                                        f"its security margin {v.margin:g} (up to {dist[worst]:.6g} apart)", worst,
                                        dist[worst]))
            else:
                out.append(Disagreement(v.engine, "extra_pair", f"reports {len(extra)} triangle pair(s) that do not "
                                        f"intersect, up to {dist[worst]:.6g} apart", worst, dist[worst]))
        return out
    # both separated: the distance and its witness points
    if math.isnan(v.distance):
        return out
    dtol = tol + 1e-9 * max(1.0, gap)
    if abs(v.distance - gap) > dtol:
        why = (f"tested the convex hull of {v.hull.upper()}" if v.hull else "")
        out.append(Disagreement(v.engine, "convex_hull" if v.hull else "distance",
                                f"distance {v.distance:.9g}, the exact minimum is {gap:.9g}" + (f" ({why})" if why
                                                                                                 else ""),
                                X.pair, gap))
    elif v.points is not None and abs(float(np.linalg.norm(v.points[1] - v.points[0])) - v.distance) > dtol:
        out.append(Disagreement(v.engine, "distance", f"witness points are "
                                f"{float(np.linalg.norm(v.points[1] - v.points[0])):.9g} apart, not the reported "
                                f"distance {v.distance:.9g}", v.pair, gap))
    return out


def _scale(ma, pa, mb, pb) -> float:
    pts = np.concatenate([_world(ma, pa).reshape(-1, 3), _world(mb, pb).reshape(-1, 3)])
    return float(np.linalg.norm(pts.max(axis=0) - pts.min(axis=0))) or 1.0


def crosscheck(mesh_a: Mesh, pose_a, mesh_b: Mesh, pose_b, *, bvs=("obb",), engines=None, peers=None,
               tolerance: float | None = None, brute: bool | None = None) -> CrossCheck:
    """Run one query through cdcore, the brute-force reference, python-fcl and coal.

    Parameters
    ----------
    mesh_a, mesh_b : Mesh
    pose_a, pose_b : (4, 4) float64
        Rigid model-to-world transforms (``None``: identity).
    bvs : sequence of str
        cdcore BV types to run (``"cdcore"`` is the first, ``"cdcore:<bv>"`` the others).
    engines : sequence of str, optional
        Subset of ``("cdcore", "brute", "fcl", "coal")``; default: all that are available.
        Extra engines can be passed as ``{name: callable(mesh_a, pose_a, mesh_b, pose_b) ->
        Verdict}`` inside ``peers`` under the key ``"custom"``.
    peers : dict, optional
        Per peer options: ``{"coal": {"security_margin": float, "convex_hull": "a"|"b"|"ab"}}``.
    tolerance : float, optional
        Touching tolerance (world units): gaps and depths at most this are "touching".
        Default 1e-7 times the scene's size.
    brute : bool, optional
        Allow the brute-force minimum distance (default: when m n <= ``BRUTE_MAX_PAIRS``).
        The brute-force contacts always run (with a triangle-box prefilter on large meshes);
        when the meshes are apart and the distance is not allowed, cdcore's first BV type is
        taken as exact (it is tested equal to the reference).

    Returns
    -------
    CrossCheck
    """
    for name, m in (("mesh_a", mesh_a), ("mesh_b", mesh_b)):
        if not isinstance(m, Mesh):
            raise TypeError(f"{name}: expected cdcore.Mesh, got {type(m).__name__}")
    pa = np.eye(4) if pose_a is None else as_pose(pose_a, "pose_a")
    pb = np.eye(4) if pose_b is None else as_pose(pose_b, "pose_b")
    peers = dict(peers or {})
    custom = peers.pop("custom", {}) or {}
    unknown = set(peers) - set(PEERS)
    if unknown:
        raise ValueError(f"peers: unknown engines {sorted(unknown)}; options exist for {PEERS}")
    wanted = ("cdcore", "brute") + PEERS if engines is None else tuple(engines)
    bad = set(wanted) - {"cdcore", "brute", *PEERS}
    if bad:
        raise ValueError(f"engines: unknown {sorted(bad)}; choose from cdcore, brute, fcl, coal")
    if not bvs:
        raise ValueError("bvs: give at least one BV type")
    from .bv import BV_TYPES
    for bv in bvs:
        if bv not in BV_TYPES:
            raise ValueError(f"bvs: unknown BV type {bv!r}; choose from {sorted(BV_TYPES)}")
    tol = _scale(mesh_a, pa, mesh_b, pb) * 1e-7 if tolerance is None else float(tolerance)
    if not (tol >= 0 and math.isfinite(tol)):
        raise ValueError(f"tolerance: expected a finite value >= 0, got {tolerance!r}")
    if brute is None:
        brute = mesh_a.n_faces * mesh_b.n_faces <= BRUTE_MAX_PAIRS
    verdicts, skipped = {}, {}
    if "cdcore" in wanted or "brute" not in wanted or not brute:  # (cdcore may be needed as the exact answer)
        for k, bv in enumerate(bvs):
            name = "cdcore" if k == 0 else f"cdcore:{bv}"
            verdicts[name] = _cdcore_verdict(name, bv, mesh_a, pa, mesh_b, pb)
    if "brute" in wanted:
        # contacts by brute force are affordable at any size (a box prefilter); the brute
        # minimum distance is O(m n) exact distances: only up to BRUTE_MAX_PAIRS
        v = _brute_verdict(mesh_a, pa, mesh_b, pb, distance_ok=brute)
        if v is not None:
            verdicts["brute"] = v
        else:
            skipped["brute"] = (f"no contact, and the brute-force distance over {mesh_a.n_faces * mesh_b.n_faces:,} "
                                f"triangle pairs (> {BRUTE_MAX_PAIRS:,}) was skipped: cdcore taken as exact")
    for name in PEERS:
        if name not in wanted:
            continue
        mod, why = _import_peer(name)
        if mod is None:
            skipped[name] = why
            continue
        run = _fcl_verdict if name == "fcl" else _coal_verdict
        verdicts[name] = run(mod, mesh_a, pa, mesh_b, pb, peers.get(name, {}))
    for name, fn in custom.items():
        v = fn(mesh_a, pa, mesh_b, pb)
        v.engine = name
        verdicts[name] = v
    exact = "brute" if "brute" in verdicts else "cdcore"
    ex = _Exact(verdicts[exact], mesh_a, pa, mesh_b, pb)
    disagreements = []
    for name, v in verdicts.items():
        if name != exact:
            disagreements += _compare(v, ex, tol)
    return CrossCheck(verdicts, disagreements, exact, tol, skipped)




# ---- regression export ----------------------------------------------------------------------
def export_regression_test(path, mesh_a: Mesh, pose_a, mesh_b: Mesh, pose_b, check: CrossCheck | None = None,
                           bv: str = "obb", note: str = "") -> str:
    """Write a self-contained pytest file (the query embedded as a base64 ``.npz``, see
    ``cdcore.save_query``) asserting cdcore's answer equals the exact one recorded now (hit,
    the set of intersecting triangle pairs, or the minimum distance). Written atomically.
    Returns the path."""
    import base64
    import datetime
    import os
    import tempfile

    from .bvh import build_bvh
    from .query_io import save_query
    check = check or crosscheck(mesh_a, pose_a, mesh_b, pose_b, bvs=(bv,), engines=("cdcore", "brute"))
    X = check.verdicts[check.exact]
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "q.npz")
        save_query(f, build_bvh(mesh_a, bv), pose_a, build_bvh(mesh_b, bv), pose_b, note=note, expected=X.hit)
        blob = base64.b64encode(open(f, "rb").read()).decode("ascii")
    pairs = [] if X.pairs is None else [[int(a), int(b)] for a, b in np.asarray(X.pairs).tolist()]
    lines = [blob[k:k + 96] for k in range(0, len(blob), 96)]
    when = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"
    exact = f"hit={X.hit}, {len(pairs)} intersecting triangle pair(s), distance={X.distance!r}"
    src = f'''"""Regression test exported by cdcore-crosscheck ({when} UTC).

{note or "A query whose answer was checked against the exact brute-force reference."}
Exact answer at export ({check.exact}): {exact}.
Engines then: {", ".join(f"{n}: {'hit' if v.hit else 'no hit'}" for n, v in check.verdicts.items())}.
"""
import base64

import numpy as np

import cdcore

QUERY_NPZ = (
{chr(10).join(f'    "{l}"' for l in lines)}
)
EXACT_HIT = {X.hit!r}
EXACT_PAIRS = {pairs!r}
EXACT_DISTANCE = {X.distance!r}


def _query(tmp_path):
    f = tmp_path / "query.npz"
    f.write_bytes(base64.b64decode(QUERY_NPZ))
    return cdcore.load_query(f)


def test_cdcore_gives_the_exact_answer(tmp_path):
    q = _query(tmp_path)
    res = q.run()
    assert res.hit == EXACT_HIT
    assert sorted(map(tuple, res.pairs.tolist())) == sorted(map(tuple, EXACT_PAIRS))
    if not EXACT_HIT:
        d = cdcore.distance(q.bvh_a, q.pose_a, q.bvh_b, q.pose_b)
        assert abs(d.distance - EXACT_DISTANCE) <= 1e-12 * max(1.0, EXACT_DISTANCE)


def test_crosscheck_finds_no_disagreement_of_cdcore(tmp_path):
    q = _query(tmp_path)
    check = cdcore.crosscheck(q.bvh_a.mesh, q.pose_a, q.bvh_b.mesh, q.pose_b, bvs=(q.bvh_a.bv,),
                              engines=("cdcore", "brute"))
    assert check.ok, check.table()
'''
    from .bench.output import atomic_write
    atomic_write(os.fspath(path), lambda fh: fh.write(src))
    return os.fspath(path)


# ---- command line ---------------------------------------------------------------------------
def _parse_pose(text: str, name: str) -> np.ndarray:
    """"x,y,z", "x,y,z,rx,ry,rz" (degrees, rotations about fixed x, y, z in that order), 16
    numbers (row-major 4x4) or a .npy/.txt file holding a 4x4 matrix."""
    import os
    if os.path.isfile(text):
        try:
            M = np.load(text) if text.endswith(".npy") else np.loadtxt(text)
        except Exception as exc:
            raise ValueError(f"{name}: cannot read {text} ({type(exc).__name__}: {exc})") from None
        return as_pose(np.asarray(M, dtype=np.float64).reshape(4, 4) if np.size(M) == 16 else M, name)
    try:
        vals = [float(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise ValueError(f"{name}: expected 'x,y,z', 'x,y,z,rx,ry,rz' (degrees), 16 numbers or a file, "
                         f"got {text!r}") from None
    if len(vals) == 16:
        return as_pose(np.array(vals).reshape(4, 4), name)
    if len(vals) not in (3, 6) or not all(math.isfinite(v) for v in vals):
        raise ValueError(f"{name}: expected 3, 6 or 16 finite numbers, got {text!r}")
    M = np.eye(4)
    M[:3, 3] = vals[:3]
    if len(vals) == 6:
        rx, ry, rz = np.radians(vals[3:])
        cx, sx, cy, sy, cz, sz = math.cos(rx), math.sin(rx), math.cos(ry), math.sin(ry), math.cos(rz), math.sin(rz)
        Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
        Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
        Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
        M[:3, :3] = Rz @ Ry @ Rx
    return M


def main(argv=None) -> int:
    """``cdcore-crosscheck``: exit 0 when every engine agrees with the exact answer, 1 on a
    disagreement, 2 on bad input."""
    import argparse
    import json
    import sys
    p = argparse.ArgumentParser(
        prog="cdcore-crosscheck", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run one collision query through cdcore, an exact brute-force reference, python-fcl and "
                    "coal (when installed); print a table and say why they disagree.\n\n"
                    + (__doc__ or "\n\n").split("\n\n", 1)[1],
        epilog="examples:\n  cdcore-crosscheck a.stl b.stl --pose-b 0.5,0,0,0,0,30\n"
               "  cdcore-crosscheck query.npz --margin 0.01 --export-test tests/test_my_regression.py")
    p.add_argument("inputs", nargs="+", metavar="FILE", help="two mesh files (STL, OBJ, PLY, ...) or one saved "
                   "query .npz (cdcore.save_query / the debugger's File > Save query)")
    p.add_argument("--pose-a", default=None, metavar="POSE", help="A's pose: x,y,z[,rx,ry,rz degrees], 16 numbers "
                   "or a .npy/.txt 4x4 file (default identity; a query file has its own)")
    p.add_argument("--pose-b", default=None, metavar="POSE", help="B's pose, as --pose-a")
    p.add_argument("--bv", action="append", default=None, help="cdcore BV type(s) to run (default: obb, or the "
                   "query's); repeat for several")
    p.add_argument("--engines", default=None, help="comma-separated subset of cdcore,brute,fcl,coal")
    p.add_argument("--margin", type=float, default=0.0, help="coal's security margin (reproduce a set-up)")
    p.add_argument("--hull", choices=("a", "b", "ab"), default=None, help="coal tests the convex hull of A, B or both")
    p.add_argument("--tol", type=float, default=None, help="touching tolerance (default 1e-7 x scene size)")
    p.add_argument("--no-brute", action="store_true", help="skip the O(m n) brute-force reference")
    p.add_argument("--json", metavar="PATH", help="also write the verdicts and disagreements as JSON")
    p.add_argument("--export-test", metavar="PATH.py", help="write a ready pytest regression file of this query")
    args = p.parse_args(argv)

    def fail(msg):
        print(f"cdcore-crosscheck: {msg}", file=sys.stderr)
        return 2
    try:
        if len(args.inputs) == 1:
            if not args.inputs[0].endswith(".npz"):
                return fail("one input must be a saved query .npz; give two mesh files otherwise")
            from .query_io import load_query
            q = load_query(args.inputs[0])
            ma, mb, pa, pb = q.bvh_a.mesh, q.bvh_b.mesh, q.pose_a, q.pose_b
            bvs = tuple(args.bv or (q.bvh_a.bv,))
            if args.pose_a or args.pose_b:
                pa = _parse_pose(args.pose_a, "--pose-a") if args.pose_a else pa
                pb = _parse_pose(args.pose_b, "--pose-b") if args.pose_b else pb
            note = q.note
        elif len(args.inputs) == 2:
            from .mesh import load_mesh
            ma, mb = load_mesh(args.inputs[0]), load_mesh(args.inputs[1])
            pa = _parse_pose(args.pose_a, "--pose-a") if args.pose_a else np.eye(4)
            pb = _parse_pose(args.pose_b, "--pose-b") if args.pose_b else np.eye(4)
            bvs = tuple(args.bv or ("obb",))
            note = f"{args.inputs[0]} vs {args.inputs[1]}"
        else:
            return fail(f"expected two mesh files or one query .npz, got {len(args.inputs)} inputs")
        engines = None if args.engines is None else tuple(e.strip() for e in args.engines.split(",") if e.strip())
        coal_opts = {}
        if args.margin:
            coal_opts["security_margin"] = args.margin
        if args.hull:
            coal_opts["convex_hull"] = args.hull
        check = crosscheck(ma, pa, mb, pb, bvs=bvs, engines=engines, peers={"coal": coal_opts} if coal_opts else None,
                           tolerance=args.tol, brute=False if args.no_brute else None)
    except (OSError, TypeError, ValueError) as exc:
        return fail(str(exc))
    print(check.table())
    if args.json:
        from .bench.output import atomic_write

        def row(v):
            return {"engine": v.engine, "hit": v.hit, "n_contacts": v.n_contacts, "distance": v.distance,
                    "depth": v.depth, "pair": v.pair, "time": v.time, "note": v.note,
                    "points": None if v.points is None else np.asarray(v.points).tolist()}
        data = {"exact": check.exact, "tolerance": check.tolerance,
                "verdicts": [row(v) for v in check.verdicts.values()],
                "disagreements": [d.__dict__ for d in check.disagreements], "skipped": check.skipped}
        try:
            atomic_write(args.json, lambda fh: json.dump(data, fh, indent=1, default=float))
        except OSError as exc:
            return fail(f"--json: {exc}")
    if args.export_test:
        try:
            export_regression_test(args.export_test, ma, pa, mb, pb, note=note, bv=bvs[0])
        except OSError as exc:
            return fail(f"--export-test: {exc}")
        print(f"wrote {args.export_test}")
    return 0 if check.ok else 1


__all__ = ["CrossCheck", "Disagreement", "REASONS", "Verdict", "crosscheck", "export_regression_test", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
