"""``cdcore-bench soak``: resident memory over a long run, to catch leaks and unbounded
caches. Plays ``--frames`` frames of a scene of ``--scene-frames`` frames (default ten
million: frames are computed lazily, so memory must not depend on it) in runs of
consecutive frames spread over the whole scene, then ``--queries`` mixed queries (collide
of every BV type, collide_batch, distance). Reports RSS after warm-up and at the end of each phase; exits 1
if either grows by ``--max-growth`` (default 5%) or more after warm-up.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import numpy as np

from .output import atomic_write, output_file, output_path_problem

NAME = "soak"
SEGMENTS = 10


def rss_bytes() -> int:
    """Current resident set size (Linux /proc; elsewhere the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _positive(value):
    try:
        v = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return v


def _fraction(value):
    try:
        v = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction >= 0, got {value!r}") from None
    if not 0 <= v < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite fraction >= 0, got {value}")
    return v


def add_parser(subparsers):
    p = subparsers.add_parser(NAME, help="resident memory over 10,000 frames and 100,000 queries (leak check)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scene", default="chains-6to1", help="scene name or JSON file (default chains-6to1)")
    p.add_argument("--scene-frames", type=_positive, default=10_000_000, metavar="N",
                   help="the scene's frame count (default 10,000,000)")
    p.add_argument("--frames", type=_positive, default=10_000, metavar="N", help="frames to play (default 10,000)")
    p.add_argument("--queries", type=_positive, default=100_000, metavar="N", help="queries to run (default 100,000)")
    p.add_argument("--warmup", type=_fraction, default=0.1, metavar="FRACTION",
                   help="share of each phase before the baseline sample (default 0.1)")
    p.add_argument("--max-growth", type=_fraction, default=0.05, metavar="FRACTION",
                   help="allowed RSS growth after warm-up (default 0.05)")
    p.add_argument("--json", type=output_file, metavar="PATH", help="also write the samples to PATH as JSON")
    p.set_defaults(run=run)
    return p


class Phase:
    """RSS samples of one phase: ``baseline`` after the warm-up share, ``peak`` after it."""

    def __init__(self, name: str, n: int, warmup: float):
        self.name, self.n = name, n
        self.warm = max(1, int(n * warmup))
        self.samples: list[tuple[int, int]] = []
        self.every = max(1, n // 50)
        self.t0 = time.perf_counter()
        self.seconds = 0.0

    def sample(self, k: int) -> None:
        if k == self.warm or k % self.every == 0 or k == self.n:
            gc.collect()
            self.samples.append((k, rss_bytes()))
        if k == self.n:
            self.seconds = time.perf_counter() - self.t0

    @property
    def baseline(self) -> int:
        return next(r for k, r in self.samples if k >= self.warm)

    @property
    def end(self) -> int:
        return self.samples[-1][1]

    @property
    def peak(self) -> int:
        return max(r for k, r in self.samples if k >= self.warm)

    @property
    def growth(self) -> float:
        return (self.peak - self.baseline) / self.baseline

    def line(self) -> str:
        mib = 2.0 ** 20
        return (f"{self.name}: {self.n:,} in {self.seconds:.1f} s; RSS after warm-up ({self.warm:,}) "
                f"{self.baseline / mib:.1f} MiB, end {self.end / mib:.1f} MiB, peak {self.peak / mib:.1f} MiB, "
                f"growth {100 * self.growth:+.2f}%")


def play_frames(scene_name: str, scene_frames: int, n: int, warmup: float) -> tuple[Phase, str]:
    from ..scenes import SceneRunner, load_scene
    sc = load_scene(scene_name, frames=scene_frames)
    runner = SceneRunner(sc, "cab")
    # played as playback is: runs of consecutive frames, SEGMENTS of them spread over the scene
    run = max(1, n // SEGMENTS)
    starts = np.linspace(0, max(scene_frames - run, 0), SEGMENTS).astype(np.int64)
    phase = Phase("frames", n, warmup)
    contacts = 0
    for k in range(1, n + 1):
        seg, off = divmod(k - 1, run)
        contacts += runner.step(int(starts[seg % SEGMENTS] + off) % scene_frames).contacts
        phase.sample(k)
    return phase, (f"{sc.name}, {sc.frames:,} frames; {SEGMENTS} runs of {run:,} consecutive frames from "
                   f"frame 0 to {int(starts[-1]) + run - 1:,}; {contacts:,} contacts")


def run_queries(n: int, warmup: float) -> tuple[Phase, str]:
    from .. import build_bvh, collide, collide_batch, distance, shapes
    from ..transforms import make_pose, random_rotations
    rng = np.random.default_rng(5)
    a, b = shapes.torus(1.0, 0.25, 48, 12), shapes.torus(1.0, 0.25, 32, 10)
    kinds = [("obb", "sat15"), ("aabb", "sat6"), ("obb_sphere", "sphere5"), ("sphere", "sphere"), ("kdop18", None)]
    trees = [(build_bvh(a, bv), build_bvh(b, bv), test) for bv, test in kinds]
    # random placements in a cube: about half of them overlap
    poses = np.stack([make_pose(random_rotations(1, rng)[0], (rng.random(3) - 0.5) * 4.0) for _ in range(64)])
    phase = Phase("queries", n, warmup)
    hits = 0
    for k in range(1, n + 1):
        ta, tb, test = trees[k % len(trees)]
        if k % 50 == 0:
            hits += int(collide_batch(ta, tb, poses[:8], test=test).hits.sum())
        elif k % 20 == 0:
            hits += distance(ta, None, tb, poses[k % 64]).distance == 0.0
        else:
            hits += collide(ta, None, tb, poses[k % 64], test=test, contacts="all" if k % 10 == 1 else "first",
                            trace=k % 7 == 0).hit
        phase.sample(k)
    return phase, (f"collide (5 BV types; first contact, every 10th all contacts, every 7th traced), every 20th "
                   f"a distance, every 50th a batch of 8; {hits:,} hits")


def run(args) -> int:
    problem = args.json and output_path_problem(args.json)
    if problem:
        print(f"cdcore-bench soak: --json: {problem}", file=sys.stderr)
        return 2
    if not 0 <= args.warmup < 1:
        print("cdcore-bench soak: --warmup: expected a fraction in [0, 1)", file=sys.stderr)
        return 2
    print(f"cdcore-bench soak: RSS at start {rss_bytes() / 2**20:.1f} MiB")
    try:
        frames, what_f = play_frames(args.scene, args.scene_frames, args.frames, args.warmup)
        print(f"{frames.line()}\n   ({what_f})", flush=True)
        queries, what_q = run_queries(args.queries, args.warmup)
        print(f"{queries.line()}\n   ({what_q})", flush=True)
    except KeyboardInterrupt:
        print("\ncdcore-bench soak: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:
        print(f"cdcore-bench soak: {exc}", file=sys.stderr)
        return 2
    bad = [p for p in (frames, queries) if p.growth >= args.max_growth]
    verdict = ("OK: growth below " if not bad else "FAIL: growth at or above ") + f"{100 * args.max_growth:g}%"
    print(verdict + (f" ({', '.join(p.name for p in bad)})" if bad else ""))
    if args.json:
        atomic_write(args.json, lambda fh: json.dump({p.name: {"n": p.n, "warmup": p.warm, "samples": p.samples,
                                                               "growth": p.growth, "seconds": p.seconds}
                                                      for p in (frames, queries)}, fh, indent=1))
    return 1 if bad else 0
