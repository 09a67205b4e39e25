"""``cdcore-bench contacts``: what contact geometry costs.

Linked tori (``common.linked_pose``, overlap 0.05, so every query reports contacts), per
mesh size: ``collide(..., contacts="all")`` with ``geometry=False`` and ``geometry=True``
timed in alternating blocks of calls in one run; the difference divided by the number of
contacts is the cost of the geometry per contact (the post-pass ``cdcore._contact``).
With ``--before PATH`` the plain query of another checkout's ``cdcore/collide.py`` (loaded
over this checkout's kernels) is timed in the same blocks: the plain query before/after.
"""
from __future__ import annotations

import importlib.util
import os
import sys


from .common import fmt_time, linked_pose, summarize, table, time_calls, torus_mesh

NAME = "contacts"
MESHES = (("2K", 64, 16), ("16K", 128, 64))
BLOCK = 20


def add_parser(subparsers):
    p = subparsers.add_parser(NAME, help="cost of contact geometry per contact; plain query unchanged",
                              description=__doc__)
    p.add_argument("--repeat", type=int, default=400, help="timed calls per variant (default 400)")
    p.add_argument("--before", metavar="COLLIDE_PY", help="a previous cdcore/collide.py to time the plain query of")
    p.add_argument("--bv", default="obb")
    p.set_defaults(run=run)
    return p


def _load_before(path):
    """``collide`` of another collide.py, its relative imports bound to this cdcore."""
    spec = importlib.util.spec_from_file_location("cdcore._collide_before", path)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "cdcore"
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.collide


def run(args) -> int:
    import cdcore
    if args.repeat < BLOCK:
        print(f"cdcore-bench contacts: --repeat must be >= {BLOCK}", file=sys.stderr)
        return 2
    before = None
    if args.before:
        if not os.path.isfile(args.before):
            print(f"cdcore-bench contacts: --before: no such file {args.before}", file=sys.stderr)
            return 2
        before = _load_before(args.before)
    rows = []
    for label, n_major, n_minor in MESHES:
        mesh = torus_mesh(n_major, n_minor)
        b = cdcore.build_bvh(mesh, args.bv)
        pose = linked_pose(-0.05)
        variants = {"plain": lambda: cdcore.collide(b, None, b, pose),
                    "geometry": lambda: cdcore.collide(b, None, b, pose, geometry=True)}
        if before is not None:
            variants["plain (before)"] = lambda: before(b, None, b, pose)
        for fn in variants.values():  # compile / warm
            fn()
        k = len(cdcore.collide(b, None, b, pose).pairs)
        samples = {name: [] for name in variants}
        for _ in range(args.repeat // BLOCK):
            for name, fn in variants.items():
                samples[name] += time_calls(fn, BLOCK)[0]
        med = {name: summarize(s)["median"] for name, s in samples.items()}
        row = [label, f"{mesh.n_faces:,}", k, fmt_time(med["plain"]), fmt_time(med["geometry"]),
               fmt_time((med["geometry"] - med["plain"]) / max(k, 1))]
        if before is not None:
            row += [fmt_time(med["plain (before)"]), f"{med['plain'] / med['plain (before)']:.3f}"]
        rows.append(row)
    headers = ["mesh", "triangles", "contacts", "plain", "geometry=True", "per contact"]
    if before is not None:
        headers += ["plain before", "after/before"]
    print(f"collide(contacts='all'), bv={args.bv}, linked tori overlapping by 0.05; medians of "
          f"{args.repeat} calls in blocks of {BLOCK}")
    print(table(headers, rows))
    return 0
