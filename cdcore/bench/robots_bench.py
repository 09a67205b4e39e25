"""Self-collision of real robots: cdcore vs pinocchio + coal.

For each shared robot (the Allegro hand; the Panda with its SRDF's disabled pairs; the
Shadow hand from its MJCF scene with MuJoCo's pair filter, which pinocchio reads from a
normalised copy: ``pin_reference.normalised_mjcf``) and a
set of seeded random configurations within the joint limits (half of them on a closing
grasp for the hand), both engines check the same link pairs: pinocchio's collision pairs
are set to exactly the pairs cdcore checks. Per configuration the calls alternate
(cdcore, pinocchio, cdcore, ...) so machine noise hits both alike; the table gives the
median of each and their ratio (cdcore / pinocchio: below 1 is faster), and counts the
configurations where the two answers differ beyond touching contacts.

cdcore's time is a whole query from joint values: FK, hierarchy update, broad phase and
exact tests (``SelfCollisionChecker.check``); pinocchio's is ``computeCollisions`` (FK,
geometry placements and every pair's coal query).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from .common import fmt_ratio, fmt_time, table
from .output import atomic_write, output_file

NAME = "robots"
TOUCH_TOL = 1e-5  # metres: pairs closer than this may be reported by either engine


ROBOTS = ("allegro", "panda", "shadow")


def _positive_int(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return v


def _seed(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {s!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0 (numpy seeds are non-negative), got {v}")
    return v


def _robot_list(s):
    names = list(dict.fromkeys(r.strip() for r in s.split(",") if r.strip()))
    if not names:
        raise argparse.ArgumentTypeError(f"no robot named; choose from {', '.join(ROBOTS)}")
    unknown = [n for n in names if n not in ROBOTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown robot {', '.join(map(repr, unknown))}; choose from "
                                         f"{', '.join(ROBOTS)}")
    return names


def add_parser(subparsers):
    p = subparsers.add_parser(NAME, help="robot self-collision (URDF, MJCF) vs pinocchio + coal (shared robots)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer configurations and repeats")
    p.add_argument("--configs", type=_positive_int, metavar="N", help="configurations per robot (default 40)")
    p.add_argument("--repeat", type=_positive_int, metavar="N", help="timed calls per configuration and engine "
                   "(default 200, --quick 40)")
    p.add_argument("--method", default="cab", choices=("aabb_plus", "aabb_star", "obb", "cab"),
                   help="articulation-hierarchy update (default cab)")
    p.add_argument("--robots", type=_robot_list, default=list(ROBOTS), help="comma-separated: allegro, panda, shadow")
    p.add_argument("--seed", type=_seed, default=0, help="configuration sampling seed (>= 0, default 0)")
    p.add_argument("--verbose", action="store_true", help="print every configuration")
    p.add_argument("--json", type=output_file, metavar="PATH", help="also write the per-configuration rows as JSON")
    p.set_defaults(run=run)
    return p


def config_kinds(body, n) -> list:
    """What each of ``bench_configs``' configurations is: "grasp" (a point of the hand's
    open-close-open grasp) or "random"."""
    return ["random" if body.n_dofs < 12 or k % 2 else "grasp" for k in range(n)]


def bench_configs(body, n, seed):
    """n configurations: random within limits, and (hands) points along a closing grasp."""
    from ..articulated.trajectory import grasp_trajectory
    rng = np.random.default_rng(seed)
    lo, hi = body.limits[:, 0], body.limits[:, 1]
    qs = [rng.uniform(lo, hi) for _ in range(n)]
    if body.n_dofs >= 12:  # a hand: half the configurations on a grasp
        g = grasp_trajectory(body, n)
        qs = [q if k % 2 else g[k] for k, q in enumerate(qs)]
    return qs


def run(args) -> int:
    try:
        import pinocchio  # noqa: F401
    except Exception as exc:
        print(f"cdcore-bench robots: pinocchio is not importable ({type(exc).__name__}: {exc}).\n"
              "Install it with `pip install pin` (the project's [test] extra) and run again.", file=sys.stderr)
        return 2
    from ..articulated.selfcollision import SelfCollisionChecker, read_srdf_disabled
    from ..articulated.shared_robots import shared_robot
    from .pin_reference import PinocchioRobot

    n_cfg = args.configs or (10 if args.quick else 40)
    reps = args.repeat or (40 if args.quick else 200)
    rows_out = []
    status = 0
    for name in args.robots:
        try:
            sr = shared_robot(name)
        except (FileNotFoundError, ValueError) as exc:
            print(f"cdcore-bench robots: {exc}", file=sys.stderr)
            status = 2
            continue
        try:
            body = sr.load()
        except ImportError as exc:  # mujoco for an MJCF robot
            print(f"cdcore-bench robots: {name}: {exc}", file=sys.stderr)
            status = 2
            continue
        disabled = read_srdf_disabled(sr.srdf) if sr.srdf else None
        chk = SelfCollisionChecker(body, args.method, disabled=disabled)
        if sr.kind == "mjcf":
            ref = PinocchioRobot.from_mjcf(body, sr.urdf, chk.mask)
        else:
            ref = PinocchioRobot(body, sr.urdf, sr.package_dir, chk.mask)
        qs = bench_configs(body, n_cfg, args.seed)
        chk.check(qs[0])  # compile
        rows, ratios, t_ours, t_pin, differ = [], [], [], [], 0
        for k, q in enumerate(qs):
            pq = ref.q(q)
            ours = set(chk.check(q).pairs)
            theirs = ref.colliding_pairs(q)
            bad = [p for p in ours ^ theirs if abs(ref.link_distance(q, *p)) > TOUCH_TOL]
            differ += bool(bad)
            a, b = np.empty(reps), np.empty(reps)
            pc = time.perf_counter
            for r in range(reps):  # interleaved
                t0 = pc()
                chk.check(q)
                t1 = pc()
                ref.collide(pq)
                t2 = pc()
                a[r], b[r] = t1 - t0, t2 - t1
            ma, mb = float(np.median(a)), float(np.median(b))
            ratios.append(ma / mb)
            t_ours.append(ma)
            t_pin.append(mb)
            rows.append([k, len(ours), len(chk.check(q).candidates), fmt_time(ma), fmt_time(mb), fmt_ratio(ma / mb),
                         "yes" if not bad else f"NO {sorted(bad)}"])
            rows_out.append({"robot": name, "config": k, "kind": config_kinds(body, len(qs))[k],
                             "q": np.asarray(q).tolist(), "contacts": len(ours),
                             "t_cdcore": ma, "t_pinocchio_coal": mb, "ratio": ma / mb, "agree": not bad})
        print(f"\n{name}: {body.n_dofs} dofs, {body.n_links} links, {len(body.faces)} triangles, "
              f"{int(chk.mask.sum()) // 2} checked link pairs, update {args.method}, {reps} interleaved calls "
              f"per configuration")
        if args.verbose:
            print(table(["config", "contacts", "exact", "cdcore", "pin+coal", "ratio", "agree"], rows))
        print(f"{name}: median per configuration  cdcore {fmt_time(float(np.median(t_ours)))}  "
              f"pinocchio+coal {fmt_time(float(np.median(t_pin)))}  ratio {fmt_ratio(float(np.median(ratios)))} "
              f"(min {fmt_ratio(min(ratios))}, max {fmt_ratio(max(ratios))}); "
              f"answers differ on {differ}/{len(qs)} configurations")
        kinds = config_kinds(body, len(qs))
        if "grasp" in kinds:  # a hand: the grasp's configurations (open to closed) and the random ones apart
            for kind in ("grasp", "random"):
                sel = [k for k, c in enumerate(kinds) if c == kind]
                print(f"{name}:   {kind:6s} ({len(sel)} configurations)  cdcore "
                      f"{fmt_time(float(np.median([t_ours[k] for k in sel])))}  pinocchio+coal "
                      f"{fmt_time(float(np.median([t_pin[k] for k in sel])))}  ratio "
                      f"{fmt_ratio(float(np.median([ratios[k] for k in sel])))}  contacts "
                      f"{sum(rows[k][1] for k in sel)}")
        if differ:
            status = 1
    if args.json:
        atomic_write(args.json, lambda fh: json.dump(rows_out, fh, indent=1))
    return status
