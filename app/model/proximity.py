"""Minimum distance between the bodies of a scene pair at the current frame (Qt-free)."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np


@dataclass
class DistanceReport:
    """The closest link pair of a scene pair: ``distance`` (0 when touching), the links and
    triangles realising it, ``points`` (2, 3) the closest points in world coordinates,
    ``queries`` distance queries run, ``bv_tests``/``prim_tests`` summed, ``seconds``."""
    pair: tuple
    distance: float
    link_a: int
    link_b: int
    tri_a: int
    tri_b: int
    points: np.ndarray
    queries: int
    bv_tests: int
    prim_tests: int
    seconds: float


def min_distance(session, pair_index: int | None = None, abs_err: float = 0.0, rel_err: float = 0.0):
    """Branch-and-bound minimum distance (``cdcore.distance``) between the two bodies of a
    scene pair: over every link pair (adjacent links touching at their joints excluded for self-pairs), smallest
    first by the links' world bounding spheres so most pairs are skipped once a small
    distance is known."""
    from cdcore.distance import distance
    s = session.scene
    k = session.selected_pair if pair_index is None else pair_index
    i, j = s.pairs[k]
    A, B = s.bodies[i], s.bodies[j]
    Pa, Pb = A.link_poses[session.frame], B.link_poses[session.frame]
    adj = A.body.skipped_self_pairs() if i == j else set()
    cands = [(la, lb) for la in range(A.body.n_links) for lb in range(B.body.n_links)
             if not (i == j and (la >= lb or (la, lb) in adj))]
    # lower bounds from the links' root spheres (centre + radius of the root box)
    def sphere(body, link, P):
        f = body.bvhs[link].nodes_f[0]
        c = P[link, :3, :3] @ f[0:3] + P[link, :3, 3]
        return c, float(np.linalg.norm(f[3:6]))
    bounds = []
    for la, lb in cands:
        ca, ra = sphere(A.body, la, Pa)
        cb, rb = sphere(B.body, lb, Pb)
        bounds.append(max(0.0, float(np.linalg.norm(ca - cb)) - ra - rb))
    order = np.argsort(bounds, kind="stable")
    best = None
    t0 = time.perf_counter()
    queries = bv = prim = 0
    for idx in order:
        if best is not None and bounds[idx] >= best.distance:
            break
        la, lb = cands[idx]
        r = distance(A.body.bvhs[la], Pa[la], B.body.bvhs[lb], Pb[lb], abs_err=abs_err, rel_err=rel_err,
                     **({"realign": session.kdop_realign} if session.kdop_realign else {}))
        queries += 1
        bv += r.stats.bv_tests
        prim += r.stats.prim_tests
        if best is None or r.distance < best.distance:
            best = DistanceReport((i, j), r.distance, la, lb, r.pair[0], r.pair[1], r.points, 0, 0, 0, 0.0)
        if best.distance == 0.0:
            break
    if best is None:
        raise ValueError("this pair has no link pair to measure (a single body against itself)")
    best.queries, best.bv_tests, best.prim_tests = queries, bv, prim
    best.seconds = time.perf_counter() - t0
    return best
