"""``python -m cdcore.audit robot.urdf|robot.xml --samples N [--srdf existing.srdf] --out report``

Self-collision audit of a robot (``cdcore.articulated.audit``): samples N configurations
within the joint limits (plus the default pose), checks every link pair with geometry in
each, classifies the pairs as MoveIt's Setup Assistant does (adjacent, default, always,
never, with the statistical bound behind "never") and lists what to act on. Writes
``report.srdf`` (MoveIt's ``<disable_collisions>``), ``report.csv`` and ``report.json``,
each atomically. ``--client local`` runs on a LocalCluster of worker processes,
``--client tcp://host:8786`` on a dask.distributed cluster: the counts are identical.

Exit codes: 0 done, 1 the audit found pairs to act on (with ``--strict``), 2 bad input,
130 interrupted (no file written).
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def _positive_int(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return v


def _nonneg_int(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError("must be a non-negative integer")
    return v


def _fraction(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not 0.0 < v < 1.0 + 1e-12:
        raise argparse.ArgumentTypeError("must be in (0, 1]")
    return v


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m cdcore.audit", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("robot", help="URDF (.urdf) or MJCF (.xml) file")
    p.add_argument("--samples", type=_positive_int, required=True, metavar="N", help="random configurations")
    p.add_argument("--srdf", metavar="PATH", help="an existing SRDF to audit (its disabled pairs)")
    p.add_argument("--out", required=True, metavar="PREFIX", help="writes PREFIX.srdf, PREFIX.csv, PREFIX.json")
    p.add_argument("--seed", type=_nonneg_int, default=0)
    p.add_argument("--package-dir", action="append", default=[], metavar="DIR",
                   help="where package:// URIs resolve (repeatable; default: above the URDF)")
    p.add_argument("--always", type=_fraction, default=0.95, metavar="F",
                   help="'always' when colliding in at least this fraction (default 0.95)")
    p.add_argument("--confidence", type=_fraction, default=0.95, metavar="C",
                   help="confidence of the 'never' probability bound (default 0.95)")
    p.add_argument("--client", metavar="local|ADDRESS",
                   help="run on dask.distributed: 'local' (worker processes here) or a scheduler address")
    p.add_argument("--skip-adjacent", action="store_true",
                   help="do not check parent-child pairs (MoveIt's way; they are the costliest to check)")
    p.add_argument("--strict", action="store_true", help="exit 1 when there are pairs to act on")
    p.add_argument("--quiet", action="store_true", help="no progress")
    return p


def _load(path, package_dirs):
    from .articulated import load_urdf
    if path.lower().endswith(".xml"):
        try:
            from .articulated import load_mjcf
        except ImportError:
            raise ValueError("MJCF robots need cdcore.articulated.load_mjcf (not in this version)") from None
        return load_mjcf(path)
    return load_urdf(path, package_dirs or None)


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    from .bench.output import output_path_problem
    if not os.path.isfile(args.robot):
        print(f"cdcore.audit: robot file not found: {args.robot}", file=sys.stderr)
        return 2
    for ext in ("srdf", "csv", "json"):
        problem = output_path_problem(f"{args.out}.{ext}")
        if problem:
            print(f"cdcore.audit: --out: {problem}", file=sys.stderr)
            return 2
    try:
        from .articulated import read_srdf_disabled
        from .articulated.audit import audit
        robot = _load(args.robot, args.package_dir)
        disabled = read_srdf_disabled(args.srdf) if args.srdf else None
    except KeyboardInterrupt:
        print("cdcore.audit: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError, TypeError) as exc:
        print(f"cdcore.audit: {exc}", file=sys.stderr)
        return 2
    last = [0.0]

    def progress(done, total):
        now = time.perf_counter()
        if not args.quiet and (now - last[0] > 0.5 or done == total):
            last[0] = now
            print(f"\r  {done}/{total} chunks", end="" if done < total else "\n", file=sys.stderr, flush=True)

    try:
        t0 = time.perf_counter()
        res = audit(robot, samples=args.samples, seed=args.seed, disabled=disabled, always_fraction=args.always,
                    confidence=args.confidence, client=args.client, progress=progress,
                    check_adjacent=not args.skip_adjacent)
        dt = time.perf_counter() - t0
    except KeyboardInterrupt:
        print("\ncdcore.audit: interrupted; nothing written", file=sys.stderr)
        return 130
    except (ValueError, TypeError, ImportError, OSError) as exc:
        print(f"cdcore.audit: {exc}", file=sys.stderr)
        return 2
    try:
        paths = res.write(args.out)
    except KeyboardInterrupt:
        print("cdcore.audit: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"cdcore.audit: cannot write the report: {exc}", file=sys.stderr)
        return 2
    print(f"audited {res.n} configurations of {robot.name} ({len(res.counts)} link pairs) in {dt:.2f} s "
          f"({res.n / dt:,.0f} configurations/s)")
    print(res.summary())
    for a in res.actions()[:20]:
        w = f"  witness q = [{', '.join(f'{x:.4g}' for x in a['witness'])}]" if "witness" in a else ""
        print(f"  {a['kind']}: {a['pair'][0]} - {a['pair'][1]}: {a['count']} of {res.n}{w}")
    print("wrote " + ", ".join(paths))
    return 1 if args.strict and res.actions() else 0


if __name__ == "__main__":
    sys.exit(main())
