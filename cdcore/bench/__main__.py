"""``python -m cdcore.bench`` / ``cdcore-bench``: benchmark subcommands.

Every subcommand lives in its own module with ``add_parser(subparsers)`` (which registers
its parser and ``set_defaults(run=run)``) and ``run(args) -> int`` (the exit code). Add a
module to ``SUBCOMMANDS`` to add a subcommand.
"""
from __future__ import annotations

import argparse
import sys

from . import axes_bench, contacts_bench, distance_bench, fcl_bench, kdop_bench, lab, robots_bench, soak, tables

SUBCOMMANDS = (fcl_bench, tables, axes_bench, kdop_bench, distance_bench, robots_bench, soak, lab, contacts_bench)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdcore-bench", description="Benchmarks of cdcore's collision queries against peer libraries.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


def main(argv=None) -> int:
    """Console-script entry: parse ``argv`` (default ``sys.argv[1:]``), run the subcommand and
    return its exit code (2 on bad arguments, with argparse's message; output paths are
    checked while parsing: ``bench.output.output_file``; Ctrl-C returns 130)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a bad argument (2, message printed): a code, as documented
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:  # Ctrl-C anywhere in a subcommand: no traceback, the shell's code
        print(f"\ncdcore-bench {args.command}: interrupted", file=sys.stderr)
        return 130


def _entry() -> None:
    """``python -m cdcore.bench``: Ctrl-C while the modules import also exits 130."""
    try:
        code = main()
    except KeyboardInterrupt:
        print("\ncdcore-bench: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    _entry()
