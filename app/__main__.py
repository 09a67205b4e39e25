"""``python -m app`` / ``bvh-debugger``: the visual debugger, or a scripted run of it.

Scripted/headless: ``python -m app --scene chains-6to1 --frames 300 --record out.csv
--screenshot out.png --quit`` runs the frames in the real window (under ``xvfb-run`` when
there is no screen) and exits.
"""
from __future__ import annotations

import argparse
import os
import sys

HEADLESS_HINT = ("no display found: the debugger needs a screen (X11 or Wayland).\n"
                 "On a machine without one, run the scripted mode under a virtual screen, e.g.\n"
                 "  xvfb-run -a -s '-screen 0 1600x1000x24' python -m app --scene chains-6to1 --frames 300 "
                 "--record out.csv --screenshot out.png --quit")


def build_parser() -> argparse.ArgumentParser:
    from cdcore import BV_TYPES
    from cdcore.articulated import UPDATE_METHODS
    p = argparse.ArgumentParser(prog="bvh-debugger", description="Interactive 3-D debugger for BVH collision "
                                "detection (cdcore): live hierarchies, traversal stepping, frame timings.")
    p.add_argument("--scene", help="scene name (see --list) or a scene JSON file")
    p.add_argument("--mesh", nargs="+", metavar="FILE", help="one or two mesh files for a rigid pair scene")
    p.add_argument("--list", action="store_true", help="list the scenes and exit")
    p.add_argument("--bv", choices=list(BV_TYPES), help="bounding-volume type of the mesh hierarchies")
    p.add_argument("--method", choices=list(UPDATE_METHODS), help="articulation hierarchy update")
    p.add_argument("--test", help="overlap test (sat15, sat6, sphere, sphere5, sphere15; per BV type)")
    p.add_argument("--frames", type=int, metavar="N", help="run N frames from the start, then stay (or --quit)")
    p.add_argument("--depth", metavar="LO[:HI]", help="hierarchy levels to draw, e.g. 2 or 0:3 (default: all)")
    p.add_argument("--leaves", action="store_true", help="draw leaves only")
    p.add_argument("--record", metavar="CSV", help="record frame timings to this CSV (+ JSON sidecar)")
    p.add_argument("--screenshot", metavar="PNG", help="save the 3-D view after the run")
    p.add_argument("--quit", action="store_true", help="exit after the scripted run")
    p.add_argument("--size", default="1600x1000", help="window size WxH")
    return p


def has_display() -> bool:
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"))


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.list:
        from cdcore.scenes import list_scenes
        print("\n".join(list_scenes()))
        return 0
    if args.frames is not None and args.frames < 1:
        print("error: --frames must be positive", file=sys.stderr)
        return 2
    if not has_display():
        print(HEADLESS_HINT, file=sys.stderr)
        return 1
    from PySide6 import QtCore, QtWidgets

    from .main_window import MainWindow
    from .model import Session

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("bvh-debugger")
    app.setOrganizationName("bvh-debugger")
    session = Session()
    try:
        if args.bv:
            session.bv = args.bv
        if args.method:
            session.set_method(args.method)
        if args.test:
            session.set_test(args.test)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    win = MainWindow(session)
    try:
        w, h = (int(x) for x in args.size.lower().split("x"))
        win.resize(w, h)
    except ValueError:
        print(f"error: --size expects WxH, got {args.size!r}", file=sys.stderr)
        return 2
    if args.depth:
        try:
            lo, _, hi = args.depth.partition(":")
            win.hierarchy_panel.mode.setCurrentText("range")
            win.hierarchy_panel.lo.setMaximum(64)
            win.hierarchy_panel.hi.setMaximum(64)
            win.hierarchy_panel.lo.setValue(int(lo))
            win.hierarchy_panel.hi.setValue(int(hi or lo))
        except ValueError:
            print(f"error: --depth expects LO or LO:HI, got {args.depth!r}", file=sys.stderr)
            return 2
    elif args.leaves:
        win.hierarchy_panel.mode.setCurrentText("leaves")
    else:
        win.hierarchy_panel.mode.setCurrentText("all")
    win.show()
    app.processEvents()
    scripted = args.quit or args.frames is not None or args.record or args.screenshot
    try:
        if args.mesh:
            session.load_meshes(args.mesh, frames=max(args.frames or 1000, 1))
        elif args.scene or scripted:
            session.load_scene(args.scene or DEFAULT_SCENE, frames=None)
        else:
            load_last_scene(session, win.settings)
    except (OSError, ValueError) as exc:
        if scripted:
            print(f"error: {exc}", file=sys.stderr)
            win.close()
            return 2
        from .widgets.errors import show_error
        show_error(win, "Load scene", exc)
    if scripted and session.scene is not None:
        code = run_script(app, win, session, args)
        if args.quit:
            win.close()
            app.processEvents()
            return code
    return app.exec()


DEFAULT_SCENE = "chains-6to1"


def load_last_scene(session, settings) -> None:
    """Open the scene of the last session, or the default one if that scene is gone or
    broken (a stale setting must never break a launch); the stale setting is dropped."""
    last = settings.value("last_scene")
    if last:
        try:
            session.load_scene(str(last), frames=None)
            return
        except Exception as exc:  # noqa: BLE001 - any failure of a remembered scene: fall back
            print(f"warning: last scene {last!r} cannot be opened ({exc}); opening {DEFAULT_SCENE}",
                  file=sys.stderr)
            settings.remove("last_scene")
    session.load_scene(DEFAULT_SCENE, frames=None)


def run_script(app, win, session, args) -> int:
    """Run the requested frames in the real window, recording and screenshotting.
    Ctrl-C stops the run between frames (the recording is closed, its sidecar says so)
    and returns 130; a recording write error stops the run and returns 1."""
    import signal
    if args.record:
        try:
            session.start_recording(args.record)
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    n = args.frames if args.frames is not None else 1
    interrupted = []
    # a flag, not KeyboardInterrupt: raised inside a Qt slot it would be printed and swallowed
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    session.playing = True  # panels behave as during playback; the window's own timer stays off
    try:
        done = 0
        for k in range(n):
            if interrupted or (args.record and session.recorder is None):
                break
            session.goto(k % session.n_frames)
            app.processEvents()
            done += 1
    finally:
        signal.signal(signal.SIGINT, previous)
        session.playing = False
    if args.record:
        if session.record_error is not None:
            print(f"error: recording stopped: {session.record_error}", file=sys.stderr)
            return 1
        sidecar = session.stop_recording("interrupted (Ctrl-C)" if interrupted else None)
        print(f"recorded {session_rows(sidecar)} frames to {args.record} (+ {os.path.basename(sidecar)})")
    if interrupted:
        print(f"interrupted after {done} of {n} frames", file=sys.stderr)
        return 130
    if args.screenshot:
        try:
            win.screenshot(args.screenshot)
        except (OSError, ValueError) as exc:
            print(f"error: cannot write screenshot: {exc}", file=sys.stderr)
            return 2
        print(f"screenshot written to {args.screenshot}")
    if session.history:
        fps = [r.fps for r in list(session.history)[1:] if r.fps > 0]
        if fps:
            import statistics
            print(f"{session.scene.name}: median {statistics.median(fps):.1f} fps over {len(fps)} frames "
                  f"(compute + draw), median t_total {statistics.median(r.t_total for r in session.history) * 1e3:.3f} ms")
    return 0


def session_rows(sidecar: str) -> int:
    import json
    with open(sidecar, encoding="utf-8") as fh:
        return int(json.load(fh)["rows"])


if __name__ == "__main__":
    sys.exit(main())
