"""Self-collision audit of a robot: which link pairs can ever collide, which never do, which
always do, and is an allowed-collision matrix (SRDF ``<disable_collisions>``) right?

Configurations are sampled uniformly within the joint limits (plus the default pose and any
user poses), every link pair with geometry is checked in every configuration (adjacent pairs
included), and the pairs are classified as MoveIt's Setup Assistant does, in its order:

``adjacent``  parent and child links (joined at a joint);
``default``   colliding at the default pose (each joint at 0, or mid-range if 0 is outside);
``always``    colliding in at least ``always_fraction`` of the configurations;
``never``     colliding in none of the n configurations. Zero hits in n samples is not a
              proof: the report gives the one-sided Clopper-Pearson upper bound on the
              pair's collision probability at ``confidence``, 1 - (1 - confidence)^(1/n)
              (about 3/n at 95 %, the "rule of three");
``sometimes`` the rest: pairs a collision checker must keep.

What a user must act on (``AuditResult.actions``): pairs an existing SRDF disables that do
collide in some configurations (not adjacent, not always; with a witness configuration),
pairs it leaves enabled that never collide (wasted checks) and enabled pairs that always
collide (every query reports them). ``default`` pairs that are not ``always`` are flagged
too: MoveIt disables them, yet they collide only near the default pose.

The counting kernel (``_self_kernel._count_chunk``) runs a chunk of configurations per
compiled call, chunks on Python threads (it releases the GIL), and sums the per-pair counts
inside the kernel; ``client`` runs the
chunks on dask.distributed (``cdcore.sweep``) with identical counts: configurations are
generated per chunk from (seed, chunk index), independently of where the chunk runs.
"""
from __future__ import annotations

import csv
import io
import json
import os
import time
import xml.sax.saxutils as sx
from dataclasses import dataclass, field

import numpy as np

from ..transforms import writable_f64
from .selfcollision import SelfCollisionChecker, link_names, pair_mask

#: configurations per chunk (the unit of work of a thread batch or a dask task); part of the
#: sampling definition: the i-th sampled configuration is row i % CHUNK of chunk i // CHUNK
CHUNK = 20_000
ALWAYS_FRACTION = 0.95
CONFIDENCE = 0.95
CLASSES = ("adjacent", "default", "always", "never", "sometimes")


class AuditCancelled(Exception):
    """Raised when the audit's ``cancel`` callback returns True."""


@dataclass
class AuditResult:
    """Per-pair collision counts of an audit and their classification.

    ``counts`` {(link_a, link_b): int}: configurations (of ``n``) in which the pair collides,
    every pair with geometry, link_a before link_b in ``link_names`` order. ``witness``
    {(link_a, link_b): (n_dofs,) q}: the first colliding configuration of each pair that
    collides. ``disabled``: the pairs an existing SRDF disables (empty without one).
    """
    robot: str
    link_names: list
    joint_names: list
    n: int
    counts: dict
    witness: dict
    witness_index: dict
    adjacent: set
    default_hits: set
    default_q: np.ndarray
    disabled: set = field(default_factory=set)
    always_fraction: float = ALWAYS_FRACTION
    confidence: float = CONFIDENCE
    seed: int | None = None
    seconds: float = 0.0
    srdf_given: bool = False

    def never_bound(self) -> float:
        """Upper bound on the collision probability of a pair seen 0 times in n
        configurations (one-sided Clopper-Pearson at ``confidence``)."""
        if self.n <= 0:
            return 1.0
        return 1.0 - (1.0 - self.confidence) ** (1.0 / self.n)

    def classify(self) -> dict:
        """{pair: class}, MoveIt's order: adjacent, default, always, never, sometimes (adjacent
        pairs left out of ``counts`` by ``check_adjacent=False`` are classified too)."""
        out = {p: "adjacent" for p in self.adjacent}
        for p, c in self.counts.items():
            if p in self.adjacent:
                out[p] = "adjacent"
            elif p in self.default_hits:
                out[p] = "default"
            elif self.n and c >= self.always_fraction * self.n:
                out[p] = "always"
            elif c == 0:
                out[p] = "never"
            else:
                out[p] = "sometimes"
        return out

    def matrix(self) -> np.ndarray:
        """(L, L) float64 symmetric: each pair's collision fraction (diagonal NaN)."""
        L = len(self.link_names)
        idx = {n: i for i, n in enumerate(self.link_names)}
        m = np.full((L, L), np.nan)
        for (a, b), c in self.counts.items():
            m[idx[a], idx[b]] = m[idx[b], idx[a]] = c / self.n if self.n else 0.0
        return m

    def actions(self) -> list:
        """What to act on: dicts with ``kind``, ``pair``, ``count``, ``fraction`` and, for
        colliding pairs, ``witness`` (q as a list)."""
        cls = self.classify()
        out = []
        for p, c in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0])):
            k = cls[p]
            dis = p in self.disabled
            row = {"pair": list(p), "count": int(c), "fraction": c / self.n if self.n else 0.0, "class": k}
            if c:
                row["witness"] = self.witness[p].tolist()
            if dis and c and k in ("never", "sometimes", "default"):
                out.append({"kind": "disabled_but_collides", **row,
                            "why": "the SRDF disables this pair, yet it collides (see the witness)"})
            elif not dis and self.disabled_known and k == "never":
                out.append({"kind": "enabled_never_collides", **row, "bound": self.never_bound(),
                            "why": "checked on every query but never collided: could be disabled"})
            elif not dis and k == "always":
                out.append({"kind": "enabled_always_collides", **row,
                            "why": "collides in (almost) every configuration: every query reports it"})
            elif k == "default" and c < self.always_fraction * self.n:
                out.append({"kind": "default_not_always", **row,
                            "why": "collides at the default pose, but not always: disabling it "
                                   "(as MoveIt does) hides real collisions"})
        return out

    @property
    def disabled_known(self) -> bool:
        return self.srdf_given

    # ---- reports ---------------------------------------------------------------------
    def rows(self) -> list:
        cls = self.classify()
        bound = self.never_bound()
        out = []
        for p in sorted(cls, key=lambda p: (self.link_names.index(p[0]), self.link_names.index(p[1]))):
            c = self.counts.get(p)  # None: an adjacent pair not checked (check_adjacent=False)
            out.append({"link_a": p[0], "link_b": p[1], "count": c, "n": self.n,
                        "fraction": None if c is None else (c / self.n if self.n else 0.0), "class": cls[p],
                        "srdf_disabled": (p in self.disabled) if self.disabled_known else None,
                        "probability_upper_bound": bound if c == 0 else None,
                        "witness_index": self.witness_index.get(p, -1),
                        "witness_q": self.witness[p].tolist() if p in self.witness else None})
        return out

    def to_json(self) -> str:
        meta = {"robot": self.robot, "n": self.n, "seed": self.seed, "always_fraction": self.always_fraction,
                "confidence": self.confidence, "never_probability_upper_bound": self.never_bound(),
                "seconds": self.seconds, "link_names": self.link_names, "joint_names": self.joint_names,
                "default_q": self.default_q.tolist(), "srdf_given": self.disabled_known}
        counts = {c: 0 for c in CLASSES}
        for k in self.classify().values():
            counts[k] += 1
        return json.dumps({"meta": meta, "classes": counts, "actions": self.actions(), "pairs": self.rows()},
                          indent=1)

    def to_csv(self) -> str:
        buf = io.StringIO()
        cols = ["link_a", "link_b", "count", "n", "fraction", "class", "srdf_disabled", "probability_upper_bound",
                "witness_index", "witness_q"]
        w = csv.DictWriter(buf, cols, lineterminator="\n")
        w.writeheader()
        for r in self.rows():
            r = dict(r)
            r["witness_q"] = "" if r["witness_q"] is None else " ".join(f"{x:.17g}" for x in r["witness_q"])
            r["count"] = "" if r["count"] is None else r["count"]
            r["fraction"] = "" if r["fraction"] is None else r["fraction"]
            r["srdf_disabled"] = "" if r["srdf_disabled"] is None else ("yes" if r["srdf_disabled"] else "no")
            r["probability_upper_bound"] = "" if r["probability_upper_bound"] is None else \
                f"{r['probability_upper_bound']:.6g}"
            w.writerow(r)
        return buf.getvalue()

    def to_srdf(self) -> str:
        """An SRDF with MoveIt's ``<disable_collisions>`` for adjacent, default, always and
        never pairs (reason as MoveIt writes it)."""
        reason = {"adjacent": "Adjacent", "default": "Default", "always": "Always", "never": "Never"}
        lines = ['<?xml version="1.0" encoding="utf-8"?>',
                 f'<!-- cdcore.audit: {self.n} configurations, seed {self.seed}; "Never" means 0 collisions in '
                 f'{self.n} samples (collision probability below {self.never_bound():.3g} at '
                 f'{self.confidence:.0%} confidence) -->',
                 f'<robot name={sx.quoteattr(self.robot)}>']
        cls = self.classify()
        for p in sorted(cls, key=lambda p: (self.link_names.index(p[0]), self.link_names.index(p[1]))):
            if cls[p] in reason:
                lines.append(f'  <disable_collisions link1={sx.quoteattr(p[0])} link2={sx.quoteattr(p[1])} '
                             f'reason="{reason[cls[p]]}"/>')
        lines.append("</robot>")
        return "\n".join(lines) + "\n"

    def write(self, prefix) -> list:
        """Write ``prefix.srdf``, ``prefix.csv`` and ``prefix.json`` (each atomically);
        returns the paths."""
        from ..bench.output import atomic_write
        prefix = os.fspath(prefix)
        paths = []
        for ext, text in (("srdf", self.to_srdf()), ("csv", self.to_csv()), ("json", self.to_json())):
            path = f"{prefix}.{ext}"
            atomic_write(path, lambda fh, t=text: fh.write(t), newline="")
            paths.append(path)
        return paths

    def summary(self) -> str:
        counts = {c: 0 for c in CLASSES}
        for k in self.classify().values():
            counts[k] += 1
        acts = self.actions()
        kinds = {}
        for a in acts:
            kinds[a["kind"]] = kinds.get(a["kind"], 0) + 1
        s = (f"{self.robot}: {len(self.counts)} link pairs over {self.n} configurations: "
             + ", ".join(f"{v} {k}" for k, v in counts.items())
             + f"; never = 0 hits, collision probability < {self.never_bound():.2g} at {self.confidence:.0%}")
        if acts:
            s += "\nto act on: " + ", ".join(f"{v} {k}" for k, v in kinds.items())
        return s


def default_configuration(robot) -> np.ndarray:
    """Each joint at 0, or at the middle of its range when 0 is outside it."""
    lo, hi = robot.limits[:, 0], robot.limits[:, 1]
    return np.where((lo <= 0) & (0 <= hi), 0.0, 0.5 * (lo + hi))


def sample_chunk(robot_limits, seed, k, n_rows) -> np.ndarray:
    """Rows of sampled chunk ``k`` (uniform within the limits; the same on any machine)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(k)]))
    lo, hi = robot_limits[:, 0], robot_limits[:, 1]
    return np.ascontiguousarray(lo + (hi - lo) * rng.random((n_rows, len(lo))))


@dataclass(frozen=True)
class AuditPlan:
    """What a chunk task needs (picklable, small): the packed kernel arrays, the fixed
    configurations, the sampling definition."""
    pbuf: np.ndarray  # the packed body (``_self_kernel.pack``)
    mask: np.ndarray
    stack_rows: int
    limits: np.ndarray
    fixed: np.ndarray  # (m, n_dofs) configurations before the samples
    samples: int
    seed: int

    @property
    def n(self) -> int:
        return len(self.fixed) + self.samples

    def _fixed_chunks(self) -> int:
        return -(-len(self.fixed) // CHUNK)

    def n_chunks(self) -> int:
        return self._fixed_chunks() + -(-self.samples // CHUNK)

    def chunk(self, c) -> tuple:
        """(configurations, index of the first) of chunk ``c``: the fixed configurations
        first, then the samples, CHUNK per chunk."""
        nf = self._fixed_chunks()
        if c < nf:
            return self.fixed[c * CHUNK:(c + 1) * CHUNK], c * CHUNK
        c -= nf
        lo = c * CHUNK
        rows = min(CHUNK, self.samples - lo)
        return sample_chunk(self.limits, self.seed, c, rows), len(self.fixed) + lo

    def configuration(self, index) -> np.ndarray:
        if index < len(self.fixed):
            return self.fixed[index].copy()
        i = index - len(self.fixed)
        return sample_chunk(self.limits, self.seed, i // CHUNK, min(CHUNK, self.samples - (i // CHUNK) * CHUNK))[
            i % CHUNK].copy()


def run_chunk(plan: AuditPlan, c: int, threads: bool = True):
    """Counts of chunk ``c``: (counts (L, L), witness (L, L), status (3,)) int64."""
    qs, base = plan.chunk(c)
    return count_configurations(plan, qs, base, threads)


def count_configurations(plan, qs, base, threads=True):
    """Counts of the configuration rows ``qs`` (F, n_dofs) (row r is configuration
    ``base + r``): (counts (L, L): configurations in which link pair (i < j) collides, upper
    triangle; witness (L, L): the first such configuration, -1 if none; status (3,): the first
    failing row's status, configuration and joint/link, status 0 if none), int64.

    The rows are cut into contiguous chunks (a few per thread) counted by the compiled
    ``_self_kernel._count_chunk``, which releases the GIL: on Python threads (numba's parallel
    layer would compile a wrapper that re-optimises the whole self-collision pipeline, ~35 s of
    the cold compile, and spins its workers). Chunks are summed in chunk order, so the result
    does not depend on the number of threads or chunks."""
    from concurrent.futures import ThreadPoolExecutor

    from ..collide import n_chunks
    from ._self_kernel import LB_DIMS, _count_chunk, unpack
    qs = writable_f64(qs)
    root = np.eye(4)[None].copy()
    pbuf = plan.pbuf if plan.pbuf.flags.writeable else plan.pbuf.copy()  # a worker's received buffer
    fbuf, ibuf, lbuf = unpack.py_func(pbuf)
    F = len(qs)
    n = n_chunks(F, threads)
    L = int(lbuf[LB_DIMS + 1])  # links
    counts = np.zeros((n, L, L), dtype=np.int64)
    witness = np.full((n, L, L), -1, dtype=np.int64)
    status = np.zeros((n, 3), dtype=np.int64)

    def run(c):
        _count_chunk(qs, root, fbuf, ibuf, lbuf, c * F // n, (c + 1) * F // n, np.int64(base), counts[c],
                     witness[c], status[c])

    if n == 1:
        run(0)
    else:
        import numba
        with ThreadPoolExecutor(max_workers=min(n, numba.get_num_threads())) as pool:
            list(pool.map(run, range(n)))  # (re-raises a chunk's error)
    w = witness[0].copy()
    for c in range(1, n):  # the first witness in chunk order, i.e. the lowest configuration
        w = np.where(w < 0, witness[c], w)
    failed = np.flatnonzero(status[:, 0])
    return counts.sum(axis=0), w, (status[failed[0]].copy() if len(failed) else np.zeros(3, dtype=np.int64))


def make_plan(robot, samples=None, configurations=None, seed=0, poses=None, include_default=True,
              method="cab", check_adjacent=True) -> tuple:
    """(AuditPlan, checker) for ``audit``; validates the inputs."""
    if not hasattr(robot, "_kin"):
        raise TypeError(f"robot: expected a robot from load_urdf / load_mjcf, got {type(robot).__name__}")
    if (samples is None) == (configurations is None):
        raise ValueError("give exactly one of samples=N and configurations=Q")
    chk = SelfCollisionChecker(robot, method, skip_adjacent=not check_adjacent, disabled=())
    if chk._fused is None:
        raise ValueError("audit needs a robot whose links use a non-k-DOP hierarchy")
    fixed = []
    if configurations is not None:
        q = np.asarray(configurations, dtype=np.float64)
        if q.ndim != 2 or q.shape[1] != robot.n_dofs:
            raise ValueError(f"configurations: expected shape (n, {robot.n_dofs}), got {q.shape}")
        if len(q) == 0:
            raise ValueError("configurations: empty")
        if not np.all(np.isfinite(q)):
            raise ValueError("configurations: contain NaN or infinite joint values")
        fixed = q
        n_samples = 0
    else:
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ValueError(f"samples: expected a positive integer, got {samples!r}")
        n_samples = int(samples)
        rows = [default_configuration(robot)] if include_default else []
        if poses is not None:
            p = np.asarray(poses, dtype=np.float64).reshape(-1, robot.n_dofs) if np.size(poses) else \
                np.zeros((0, robot.n_dofs))
            if not np.all(np.isfinite(p)):
                raise ValueError("poses: contain NaN or infinite joint values")
            rows += list(p)
        fixed = np.array(rows, dtype=np.float64).reshape(-1, robot.n_dofs)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")
    fz = chk._fused
    plan = AuditPlan(fz.pbuf, chk.mask, fz.stack_rows, np.asarray(robot.limits, float),
                     np.ascontiguousarray(fixed), n_samples, int(seed))
    return plan, chk


def merge_chunk(total, part):
    """Add one chunk's (counts, witness, status) into ``total`` (chunk order: the first
    witness and the first failure win)."""
    counts, witness, status = part
    tc, tw, ts = total
    tc += counts
    np.copyto(tw, witness, where=(tw < 0))
    if ts[0] == 0 and status[0] != 0:
        ts[:] = status
    return total


def audit(robot, samples=None, configurations=None, seed=0, client=None, disabled=None, poses=None,
          include_default=True, always_fraction=ALWAYS_FRACTION, confidence=CONFIDENCE, method="cab",
          progress=None, cancel=None, threads=True, check_adjacent=True) -> AuditResult:
    """Self-collision audit of ``robot`` (from ``load_urdf``).

    Parameters
    ----------
    samples : int
        Configurations sampled uniformly within the joint limits (seeded by ``seed``); the
        default pose (unless ``include_default`` is False) and ``poses`` (m, n_dofs) come
        first. Or ``configurations`` (n, n_dofs): exactly these, nothing sampled.
    client : None, "local", str or dask.distributed.Client
        None: this process (numba's threads). "local": a LocalCluster of worker processes;
        an address: that scheduler; a Client: its cluster (``cdcore.sweep``). The counts
        are identical in every case.
    disabled : iterable of (str, str), optional
        An existing SRDF's disabled pairs (``read_srdf_disabled``), to audit it.
    always_fraction, confidence : float
        The ``always`` threshold; the confidence of the ``never`` bound.
    progress : callable(done, total), optional; cancel : callable() -> bool, optional
        Called between chunks; ``cancel`` returning True raises ``AuditCancelled``.
    check_adjacent : bool
        Count parent-child pairs too (default). They are ``adjacent`` whatever their count,
        and links sharing a joint face are the costliest pairs to check (their mesh
        hierarchies overlap all along the joint without touching: ~0.5 ms per Panda
        configuration, 30x the other pairs); False leaves them out of ``counts``, as MoveIt
        does.
    """
    if not 0.0 < always_fraction <= 1.0:
        raise ValueError(f"always_fraction: expected in (0, 1], got {always_fraction!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence: expected in (0, 1), got {confidence!r}")
    names = link_names(robot)
    dis = set()
    if disabled is not None:
        disabled = list(disabled)
        pair_mask(robot, False, disabled or ())  # validates the names
        idx = {n: i for i, n in enumerate(names)}
        for a, b in disabled:
            if a in idx and b in idx and a != b:
                dis.add((a, b) if idx[a] < idx[b] else (b, a))
    t0 = time.perf_counter()
    plan, chk = make_plan(robot, samples, configurations, seed, poses, include_default, method, check_adjacent)
    n_chunks = plan.n_chunks()
    if client is None:
        L = len(names)
        total = (np.zeros((L, L), np.int64), np.full((L, L), -1, np.int64), np.zeros(3, np.int64))
        for c in range(n_chunks):
            if cancel is not None and cancel():
                raise AuditCancelled(f"audit cancelled after {c} of {n_chunks} chunks")
            merge_chunk(total, run_chunk(plan, c, threads))
            if progress is not None:
                progress(c + 1, n_chunks)
    else:
        from ..sweep import run_chunks
        total = run_chunks(client, plan, n_chunks, progress=progress, cancel=cancel)
    counts, witness, status = total
    if status[0]:
        q = plan.configuration(int(status[1]))
        chk.check(q)  # raises the checker's ValueError naming the joint or link
        raise ValueError(f"configuration {int(status[1])}: rejected by the kernel (status {int(status[0])})")
    mask = chk.mask
    cmap, wmap, widx = {}, {}, {}
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if not mask[i, j]:
                continue
            p = (names[i], names[j])
            cmap[p] = int(counts[i, j])
            if witness[i, j] >= 0:
                widx[p] = int(witness[i, j])
                wmap[p] = plan.configuration(int(witness[i, j]))
    adj_idx = {(min(a, b), max(a, b)) for a, b in robot.parent_child_pairs()}
    geo = getattr(robot, "has_geometry", np.ones(len(names), bool))
    adjacent = {(names[a], names[b]) for a, b in adj_idx if geo[a] and geo[b]}
    dq = default_configuration(robot)
    default_hits = set(chk.check(dq).pairs)
    res = AuditResult(getattr(robot, "name", "robot"), names, list(getattr(robot, "joint_names", [])), plan.n, cmap,
                      wmap, widx, adjacent, default_hits, dq, dis, always_fraction, confidence,
                      None if configurations is not None else int(seed), time.perf_counter() - t0,
                      disabled is not None)
    return res


def brute_force_counts(robot, configurations) -> dict:
    """Reference: every pair's exact query in every configuration, no hierarchy."""
    from .selfcollision import brute_force_self_pairs
    names = link_names(robot)
    mask = pair_mask(robot, False, ())
    out = {(names[i], names[j]): 0 for i in range(len(names)) for j in range(i + 1, len(names)) if mask[i, j]}
    for q in configurations:
        for p in brute_force_self_pairs(robot, q, skip_adjacent=False, disabled=()):
            out[p] += 1
    return out


__all__ = ["audit", "AuditResult", "AuditCancelled", "brute_force_counts", "default_configuration", "CHUNK",
           "ALWAYS_FRACTION", "CONFIDENCE", "CLASSES"]
