"""``python -m app`` / ``bvh-debugger``: the visual debugger, or a scripted run of it.

Scripted/headless: ``python -m app --scene chains-6to1 --frames 300 --record out.csv
--screenshot out.png --quit`` runs the frames in the real window (under ``xvfb-run`` when
there is no screen) and exits.
"""
from __future__ import annotations

import argparse
import json
import os
import signal as _signal
import sys
import time

HEADLESS_HINT = ("no display found: the debugger needs a screen (X11 or Wayland).\n"
                 "On a machine without one, run the scripted mode under a virtual screen, e.g.\n"
                 "  xvfb-run -a -s '-screen 0 1600x1000x24' python -m app --scene chains-6to1 --frames 300 "
                 "--record out.csv --screenshot out.png --quit")


def build_parser() -> argparse.ArgumentParser:
    from cdcore import BV_TYPES
    from cdcore.articulated import UPDATE_METHODS
    p = argparse.ArgumentParser(prog="bvh-debugger", description="Interactive 3-D debugger for BVH collision "
                                "detection (cdcore): live hierarchies, traversal stepping, frame timings.")
    p.add_argument("file", nargs="?", help="a file to open: a saved query (.npz, opens the traversal stepper on "
                   "it), a robot (.urdf) or a scene (.json)")
    p.add_argument("--package-dir", action="append", default=[], metavar="DIR",
                   help="directory holding ROS packages for package:// URIs of a URDF (repeatable)")
    p.add_argument("--trajectory", metavar="FILE", help="joint trajectory (.csv/.npz) for the robot")
    p.add_argument("--scene", help="scene name (see --list) or a scene JSON file")
    p.add_argument("--mesh", nargs="+", metavar="FILE", help="one or two mesh files for a rigid pair scene")
    p.add_argument("--list", action="store_true", help="list the scenes and exit")
    p.add_argument("--bv", choices=list(BV_TYPES), help="bounding-volume type of the mesh hierarchies")
    p.add_argument("--method", choices=list(UPDATE_METHODS), help="articulation hierarchy update")
    p.add_argument("--test", help="overlap test (sat15, sat6, sphere, sphere5, sphere15; per BV type)")
    p.add_argument("--frames", type=int, metavar="N", help="run N frames from the start, then stay (or --quit)")
    p.add_argument("--depth", metavar="LO[:HI]", help="hierarchy levels to draw, e.g. 2 or 0:3, or 'all' "
                   "(default: auto, about 300 boxes at most)")
    p.add_argument("--leaves", action="store_true", help="draw leaves only")
    p.add_argument("--record", metavar="CSV", help="record frame timings to this CSV (+ JSON sidecar)")
    p.add_argument("--screenshot", metavar="PNG", help="save the 3-D view (with its overlay) after the run")
    p.add_argument("--audit", type=int, metavar="N", help="after the frames: audit the robot's self-collision over "
                   "N sampled configurations and show the matrix (Self-collision audit dock)")
    p.add_argument("--audit-pair", metavar="LINK_A:LINK_B", help="with --audit: click that pair's cell (the robot "
                   "posed at its witness configuration)")
    p.add_argument("--screenshot-window", metavar="PNG", help="save the whole window (docks included) after the run")
    p.add_argument("--focus-pair", action="store_true",
                   help="after the run, step the selected pair's traversal to its first separated node pair "
                        "and focus the view on it (with --screenshot: the stepper's view)")
    p.add_argument("--contacts", action="store_true",
                   help="after the run, raise the Contacts dock and select the deepest contact")
    p.add_argument("--verdict", action="store_true",
                   help="after the run, raise the Verdict dock and cross-check the selected pair")
    p.add_argument("--report-startup", action="store_true",
                   help="print 'window-shown <unix time>' once the window is mapped and painted and "
                        "'first-window <unix time>' once the scene's first frame is drawn (app.startup_bench)")
    p.add_argument("--quit", action="store_true", help="exit after the scripted run")
    p.add_argument("--size", default=None, help="window size WxH (default: the last session's size, or sized "
                   "to the screen)")
    return p


def has_display() -> bool:
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"))


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


def image_path(path: str) -> str:
    """The file a screenshot goes to: ``x`` becomes ``x.png`` (what the writer does), and
    an unknown image type is an error, not a silent surprise."""
    ext = os.path.splitext(path)[1]
    if not ext:
        return path + ".png"
    if ext.lower() not in IMAGE_SUFFIXES:
        raise ValueError(f"cannot write a {ext} image ({path}); use one of {', '.join(IMAGE_SUFFIXES)}")
    return path


def parse_depth(text: str) -> tuple[str, int, int]:
    """``--depth``: "all", "leaves", "auto", "LO" or "LO:HI" (LO <= HI) -> (mode, lo, hi)."""
    t = text.strip().lower()
    if t in ("all", "leaves", "auto"):
        return t, 0, 0
    lo_s, sep, hi_s = t.partition(":")
    try:
        lo, hi = int(lo_s), int(hi_s if sep else lo_s)
    except ValueError:
        raise ValueError(f"--depth expects LO, LO:HI, auto, leaves or all, got {text!r}") from None
    if lo < 0 or hi < 0:
        raise ValueError(f"--depth levels are >= 0, got {text!r}")
    if lo > hi:
        raise ValueError(f"--depth {text}: LO must not exceed HI (did you mean {hi}:{lo}?)")
    return ("level", lo, lo) if lo == hi else ("range", lo, hi)


def check_args(args) -> None:
    """Reject what the run could only misread (``ValueError`` with the message)."""
    if args.frames is not None and args.frames < 1:
        raise ValueError("--frames must be positive")
    if args.mesh and len(args.mesh) > 2:
        raise ValueError(f"--mesh takes one mesh (collided with itself) or two (A and B), got {len(args.mesh)}")
    if args.scene and args.mesh:
        raise ValueError("give --scene or --mesh, not both")
    if args.depth:
        parse_depth(args.depth)
    from cdcore.bench.output import output_path_problem
    for opt in ("screenshot", "screenshot_window"):
        if getattr(args, opt) is not None:
            setattr(args, opt, image_path(getattr(args, opt)))
    for opt in ("screenshot", "screenshot_window", "record"):  # before any frame is run
        path = getattr(args, opt)
        if path is not None:
            problem = output_path_problem(path) if path.strip() else "expected a file path, got an empty string"
            if problem:
                raise ValueError(f"--{opt.replace('_', '-')}: {problem}")
    if args.size is not None:
        parse_size(args.size)


#: the largest window side accepted before the screen is known (a 99999x99999 window made
#: the X server allocate gigabytes and crash); ``main`` then bounds it by the screen
MAX_SIDE = 16384


def parse_size(text: str, screen: tuple[int, int] | None = None) -> tuple[int, int]:
    """``--size WxH`` -> (w, h), at least 200x150, at most ``MAX_SIDE`` and the screen."""
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size expects WxH, got {text!r}") from None
    if w < 200 or h < 150:
        raise ValueError(f"--size {text} is too small")
    limit = (MAX_SIDE, MAX_SIDE) if screen is None else screen
    if w > limit[0] or h > limit[1]:
        where = "the largest window" if screen is None else "the screen"
        raise ValueError(f"--size {text} exceeds {where} ({limit[0]}x{limit[1]})")
    return w, h


def configure_session(session, args) -> None:
    """BV type, update method and test from the command line, through the session's
    setters (so the test follows the BV type: kdop18 runs ``slab``)."""
    if args.bv:
        session.set_bv(args.bv)
    if args.method:
        session.set_method(args.method)
    if args.test:
        session.set_test(args.test)


def startup_ref(args, settings, scripted: bool) -> dict:
    """What to load first: --mesh / --scene, else (interactive) the last scene if it can
    still be loaded, else the default scene. A scripted run never restores: it must be
    reproducible from its command line."""
    if args.mesh:
        return {"meshes": list(args.mesh)}
    if args.scene:
        return {"scene": args.scene}
    if not scripted:
        ref = restorable(settings.value("last_scene_ref"), settings.value("last_scene"))
        if ref is not None:
            return ref
    from .main_window import DEFAULT_SCENE
    return {"scene": DEFAULT_SCENE}


def restorable(ref_json, legacy_name=None) -> dict | None:
    """The saved scene reference if what it names still exists (a built-in scene, an
    existing scene file, existing mesh files), else None. ``legacy_name``: what older
    versions saved (a scene name or file; "user: a.stl" display names are not loadable)."""
    from cdcore.scenes import list_scenes
    ref = None
    if ref_json:
        try:
            ref = json.loads(ref_json)
        except (TypeError, ValueError):
            ref = None
    elif legacy_name:
        ref = {"file": legacy_name} if os.path.isfile(str(legacy_name)) else {"scene": str(legacy_name)}
    if not isinstance(ref, dict) or len(ref) != 1:
        return None
    (kind, value), = ref.items()
    if kind == "scene" and value in list_scenes():
        return ref
    if kind == "file" and isinstance(value, str) and os.path.isfile(value):
        return ref
    if kind == "meshes" and isinstance(value, list) and 1 <= len(value) <= 2 and all(
            isinstance(p, str) and os.path.isfile(p) for p in value):
        return ref
    return None


class Stop:
    """Ctrl-C (SIGINT), SIGTERM (``timeout``, ``kill``) and SIGHUP (the terminal closed) while
    the app runs. The handler only records the signal: a ``KeyboardInterrupt`` raised
    wherever Python happens to run would land inside a Qt virtual, a VTK observer or a
    ``__del__`` called from C++, where it is printed and swallowed (the run went on: a hang)
    or leaves a half-built widget or import behind (an ImportError traceback, a segfault
    in the first paint). ``_main`` polls the flag at points where stopping is safe and
    shuts down in order: the frame loop ends, the recording is closed (its sidecar says
    why), the window and its render window are closed, then the exit code is 128 + signal.

    A second signal while a scene builds on the worker thread quits at once (nothing is
    being written then; a normal exit would tear the interpreter and LLVM's statics down
    under a thread still compiling)."""

    NAMES = {"SIGINT": "interrupted", "SIGTERM": "terminated", "SIGHUP": "hung up"}

    def __init__(self) -> None:
        self.signum: int | None = None
        self.on_signal = None  # called (from the Python-level handler) after each signal
        self.hard_exit = False  # a second signal exits at once (set while a scene builds)
        self.cleanup = []  # run before such an exit
        self.workers = []  # threads that may be loading or compiling kernels: joined before the exit
        self._previous: dict[int, object] = {}

    def install(self) -> Stop:
        for name in self.NAMES:
            sig = getattr(_signal, name, None)
            if sig is not None:
                self._previous[sig] = _signal.signal(sig, self._handle)
        return self

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            _signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum, _frame) -> None:
        second = self.signum is not None
        if not second:
            self.signum = signum
        if second and self.hard_exit:
            for fn in self.cleanup:
                fn()
            _say(f"\n{self.message} (while building the scene: quit at once)")
            os._exit(self.code)
        if not second and self.hard_exit:
            _say(f"\n{self.message}: stopping once the scene is built (press Ctrl-C again to quit at once)")
        if self.on_signal is not None:
            self.on_signal()

    def __bool__(self) -> bool:
        return self.signum is not None

    @property
    def code(self) -> int:
        return 128 + int(self.signum or _signal.SIGINT)

    @property
    def message(self) -> str:
        name = _signal.Signals(self.signum or _signal.SIGINT).name
        return self.NAMES.get(name, name.lower())

    @property
    def reason(self) -> str:
        """The recording sidecar's ``stop_reason``."""
        name = _signal.Signals(self.signum or _signal.SIGINT).name
        return f"{self.message} ({'Ctrl-C' if name == 'SIGINT' else name})"


def _say(text: str) -> None:
    """A message on stderr that never fails (the terminal may be gone after SIGHUP)."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError, RuntimeError):  # closed or reentrant stream
        pass


def main(argv=None) -> int:
    """Parse ``argv`` and run; Ctrl-C / SIGTERM / SIGHUP end the run in order (see ``Stop``)
    and exit 128 + the signal (130 for Ctrl-C) with one line on stderr, no traceback."""
    # installed first: a KeyboardInterrupt during cdcore's import (numba, llvmlite), caught
    # below, still let the process die by SIGINT at exit (exit -2 instead of 130, 1 run in 12)
    stop = Stop().install()
    try:
        return _main(argv, stop)
    except KeyboardInterrupt:  # raised by code of its own (the handler never raises)
        stop.signum = stop.signum or _signal.SIGINT
        _say("\ninterrupted")
        return 130
    finally:
        for worker in stop.workers:  # no exit under a thread in LLVM (its statics go at exit)
            worker.join()
        stop.restore()


def _stopped(stop: Stop, win=None, app=None, say: bool = True) -> int:
    """Leave in order after a signal: the window (its frame timer, recording, render window)
    closed, pending Qt events run, then 128 + signal."""
    if win is not None:
        win.close()
        if app is not None:
            app.processEvents()
    if say:
        _say(stop.message)
    return stop.code


def _phase(args, name: str) -> None:
    """``--report-startup``: ``phase NAME <unix time>`` (``app.startup_bench``'s breakdown)."""
    if args.report_startup:
        _mark(f"phase {name} {time.time():.6f}")


def _mark(line: str) -> None:
    """One ``--report-startup`` line, written at once: the scene's worker prints its phase
    while the GUI thread prints its own (``print`` writes the newline apart: two lines ran
    into one)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _prebuild(args, kind):
    """A scene named on the command line (``--scene``, ``--mesh``) is built on the engine's
    preload worker while the window is made (``warm_start.Prebuild``); the window then
    adopts it. None for the others (a file, the last session's scene: read from settings)."""
    if args.file or not (args.scene or args.mesh):
        return None
    ref = {"meshes": list(args.mesh)} if args.mesh else {"scene": args.scene}
    frames = max(args.frames or 1000, 1) if args.mesh else None

    def make():
        from .model import Session
        tmp = Session()
        configure_session(tmp, args)
        tmp.load_ref(ref, frames)
        _phase(args, "scene-prebuilt")
        return tmp
    return kind(ref, make)


def _main(argv=None, stop: Stop | None = None) -> int:
    stop = stop if stop is not None else Stop()
    args = build_parser().parse_args(argv)
    if args.list:
        from cdcore.scenes import list_scenes
        print("\n".join(list_scenes()))
        return 0
    try:
        check_args(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not has_display():
        print(HEADLESS_HINT, file=sys.stderr)
        return 1
    # a signal only sets the flag (see Stop), also while Qt, VTK and pyvista import
    # (interrupted half-way they leave a broken module state and an unrelated traceback)
    if stop:
        return _stopped(stop)
    if args.report_startup:
        _mark(f"started {time.time():.6f}")
    # a warm numba cache (the index files say so; no kernel is loaded to find out): this thread
    # imports the 3-D view's libraries before Qt (``warm_start``: PySide6 reads the source of
    # every module imported after it); the engine's entry points load on a worker thread once
    # the window is on screen (the window first: both loads hold the GIL most of the time)
    from cdcore.warmup import kernels_cached
    warm = kernels_cached()
    prebuild = None
    if warm:
        from .warm_start import Prebuild, import_view
        prebuild = _prebuild(args, Prebuild)  # started once the window is on screen (window first)
        import_view()
        _phase(args, "view-imported")
        if stop:
            return _stopped(stop)
    from PySide6 import QtWidgets
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    app.setApplicationName("bvh-debugger")
    app.setOrganizationName("bvh-debugger")
    _phase(args, "qt-started")
    if not warm:
        # an empty numba cache: a window at once, the engine's kernels compiled behind it
        # (``first_start``; a signal meanwhile ends the run once they are compiled)
        from .first_start import prepare_kernels
        stop.hard_exit = True
        try:
            prepare_kernels(app, report=args.report_startup)
        except Exception as exc:  # noqa: BLE001 - a broken install or cache: a message, never a traceback
            print(f"error: the collision kernels could not be compiled: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return 1
        finally:
            stop.hard_exit = False
    if stop:
        return _stopped(stop)
    # the view's Qt side, here with the signals held, not half-way in MainWindow
    from .render import native_view, scene_view  # noqa: F401

    from .main_window import MainWindow
    from .model import Session
    _phase(args, "modules-imported")
    if stop:
        return _stopped(stop)

    session = Session()
    try:
        configure_session(session, args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    scripted = bool(args.quit or args.frames is not None or args.record or args.screenshot
                    or args.screenshot_window)
    if args.size is not None:
        geo = app.primaryScreen().geometry() if app.primaryScreen() is not None else None
        try:
            size = parse_size(args.size, None if geo is None else (geo.width(), geo.height()))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    settings = script_settings(stop) if scripted else None
    win = MainWindow(session, settings=settings)
    _phase(args, "window-built")
    if args.size is not None:
        win.resize(*size)
    hp = win.hierarchy_panel
    if args.depth:
        mode, lo, hi = parse_depth(args.depth)
        hp.mode.setCurrentText(mode)
        hp.lo.setMaximum(64)
        hp.hi.setMaximum(64)
        hp.lo.setValue(lo)
        hp.hi.setValue(hi)
    elif args.leaves:
        hp.mode.setCurrentText("leaves")
    if stop:
        return _stopped(stop, win, app)
    opens_file = bool(args.file and args.file.lower().endswith((".npz", ".urdf", ".xml")))
    ref = startup_ref(args, win.settings, scripted)
    if args.file and not (args.scene or args.mesh) and not opens_file:
        ref = {"file": args.file}  # a scene file given as the positional argument
    if not opens_file:
        win.announce_loading(ref)  # the first window says what it is loading
    win.hold_panels = True  # the Timing plots after the first frame: they would delay it (~0.5-1 s)
    started = []

    def after_paint():
        # the engine's entry points and the scene on workers once the window has painted: the
        # window first, then the scene (the window's status line and view say what is loading)
        if started:
            return
        started.append(True)
        if warm:
            from .warm_start import preload
            stop.workers.append(preload(done=lambda: _phase(args, "engine-loaded")))  # joined at exit
        if prebuild is not None:
            stop.workers.append(prebuild.start())
    win.first_painted.connect(lambda _t: after_paint())
    win.show()
    painted = win.wait_painted()
    after_paint()  # (a no-op when the first paint did it)
    if args.report_startup:  # mapped and painted (with an empty numba cache: after the compile window)
        _mark(f"window-shown {win.painted_at if painted else time.time():.6f}")
    if stop:
        return _stopped(stop, win, app)
    # the scene builds on a worker thread (the window keeps painting); a signal is acted on
    # once it is built: exiting under a thread that may be compiling is not safe
    stop.hard_exit = True
    try:
        if opens_file:
            _open_file(win, session, args)
        else:
            restored = not (scripted or args.file or args.scene or args.mesh)
            try:
                ready = prebuild.result if prebuild is not None and prebuild.ref == ref else None
                win.load_in_background(ref, frames=max(args.frames or 1000, 1) if args.mesh else None,
                                       prebuilt=ready)
            except Exception as exc:  # noqa: BLE001 - a remembered scene must never break a launch
                if not restored or stop:
                    raise
                print(f"warning: the last scene cannot be opened ({exc}); opening {DEFAULT_SCENE}",
                      file=sys.stderr)
                win.settings.remove("last_scene")
                win.settings.remove("last_scene_ref")
                win.load_in_background({"scene": DEFAULT_SCENE})
    except Exception as exc:  # noqa: BLE001 - any failure to load: a message, never a traceback
        stop.hard_exit = False
        if stop:
            return _stopped(stop, win, app)
        if scripted:
            kind = "" if isinstance(exc, (OSError, ValueError)) else f"{type(exc).__name__}: "
            print(f"error: {kind}{exc}", file=sys.stderr)
            win.close()
            return 2
        from .widgets.errors import show_error
        show_error(win, "Load scene", exc)
    stop.hard_exit = False
    _phase(args, "scene-built")
    if stop:
        return _stopped(stop, win, app)
    if args.report_startup:
        win.plotter.render()
    app.processEvents()  # the first frame on screen
    if args.report_startup:
        _mark(f"first-window {time.time():.6f}")
    win.release_panels()  # the scene is drawn: the docks held back (Timing's plots) now
    if args.report_startup:  # (the frames play from here: the Timing dock took ~0.5-1 s)
        _mark(f"frames-started {time.time():.6f}")
    if scripted and session.scene is not None:
        code = run_script(app, win, session, args, stop)
        if stop:  # when it returns the signal's code, run_script said where it stopped
            return _stopped(stop, win, app, say=code != stop.code)
        if args.quit:
            win.close()
            app.processEvents()
            return code
    return _exec(app, win, stop)


def _exec(app, win, stop: Stop) -> int:
    """The event loop; a signal closes the window (settings saved, recording closed) from
    the loop itself, not from inside whatever callback the handler interrupted. Qt's loop
    runs no Python while idle, so the C-level handler wakes it through a socket."""
    import socket

    from PySide6 import QtCore
    rsock, wsock = socket.socketpair()
    rsock.setblocking(False)
    wsock.setblocking(False)
    old_fd = _signal.set_wakeup_fd(wsock.fileno(), warn_on_full_buffer=False)

    def drain():
        try:
            while rsock.recv(64):
                pass
        except OSError:
            pass

    notifier = QtCore.QSocketNotifier(rsock.fileno(), QtCore.QSocketNotifier.Type.Read)
    notifier.activated.connect(drain)  # Python runs: the handler (queued by the signal) runs first
    stop.on_signal = lambda: QtCore.QTimer.singleShot(0, win.close)
    try:
        code = app.exec()
    finally:
        stop.on_signal = None
        notifier.setEnabled(False)
        _signal.set_wakeup_fd(old_fd)
        rsock.close()
        wsock.close()
    if stop:
        _say(stop.message)
        return stop.code
    return code


def script_settings(stop: Stop | None = None):
    """A scripted run's own, empty settings file (removed at exit): it must neither read
    the user's last scene, geometry and docks (reproducible from its command line) nor
    leave its own for the next interactive launch."""
    import atexit
    import shutil
    import tempfile

    from PySide6 import QtCore
    d = tempfile.mkdtemp(prefix="bvh-debugger-script-")
    atexit.register(shutil.rmtree, d, True)
    if stop is not None:  # also on an exit at once (os._exit skips atexit)
        stop.cleanup.append(lambda: shutil.rmtree(d, True))
    return QtCore.QSettings(os.path.join(d, "settings.ini"), QtCore.QSettings.Format.IniFormat)


def _open_file(win, session, args) -> None:
    """A saved query (stepper brought forward) or a URDF robot given on the command line."""
    from .model.robot import open_query, open_robot
    if args.file.lower().endswith(".npz"):
        open_query(session, args.file)
        from .widgets.robot_actions import show_stepper
        show_stepper(win)
    else:
        open_robot(session, args.file, args.package_dir, args.trajectory,
                   frames=args.frames if args.trajectory is None and args.frames else None)


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


def _scripted_audit(app, win, args, stop: Stop | None = None) -> int:
    """``--audit N [--audit-pair A:B]``: run the audit, show the matrix, click a cell."""
    m, panel = win.audit_model, win.audit_panel
    if m.body is None:
        print("error: --audit needs a scene with a robot", file=sys.stderr)
        return 2
    if args.audit < 1:
        print("error: --audit: at least 1 configuration", file=sys.stderr)
        return 2
    win.audit_dock.setVisible(True)
    win.audit_dock.raise_()
    panel.samples.setValue(args.audit)
    panel._run()
    while m.running:
        if stop:
            m.cancel()
        m.wait(0.05)
        app.processEvents()
    if stop:
        _say(f"{stop.message} during the audit")
        return stop.code
    panel._poll()
    if m.state != "done":
        print(f"error: audit {m.state}", file=sys.stderr)
        return 1
    print(m.result.summary())
    if args.audit_pair:
        names = m.result.link_names
        a, _, b = args.audit_pair.partition(":")
        if a not in names or b not in names:
            print(f"error: --audit-pair: unknown links {args.audit_pair!r}; links: {', '.join(names)}",
                  file=sys.stderr)
            return 2
        i, j = names.index(a), names.index(b)
        panel.table.setCurrentCell(i, j)
        panel._clicked(i, j)
        app.processEvents()
        win.plotter.render()
    return 0


def run_script(app, win, session, args, stop: Stop | None = None) -> int:
    """Run the requested frames in the real window, recording and screenshotting.
    A signal (``stop``, see ``Stop``) ends the run between frames (the recording is closed,
    its sidecar says why) and returns 128 + signal; a recording write error stops the run
    and returns 1."""
    if stop is None:  # called on its own (tests): signals set the flag for the run's length
        stop = Stop().install()
        try:
            return run_script(app, win, session, args, stop)
        finally:
            stop.restore()
    if args.record:
        try:
            session.start_recording(args.record)
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    n = args.frames if args.frames is not None else 1
    session.playing = True  # panels behave as during playback; the window's own timer stays off
    session.reset_fps_clock()
    first = len(session.history)
    try:
        done = 0
        for k in range(n):
            if stop or (args.record and session.recorder is None):
                break
            session.goto(k % session.n_frames)
            app.processEvents()
            done += 1
    finally:
        session.set_playing(False)  # the stepper and the status bar show the paused frame
    app.processEvents()
    if args.record:
        if session.record_error is not None:
            print(f"error: recording stopped: {session.record_error}", file=sys.stderr)
            return 1
        sidecar = session.stop_recording(stop.reason if stop else None)
        print(f"recorded {session_rows(sidecar)} frames to {args.record} (+ {os.path.basename(sidecar)})")
    if stop:
        _say(f"{stop.message} after {done} of {n} frames")
        return stop.code
    if args.focus_pair:
        focus_first_separated_pair(win)
    if args.audit:
        code = _scripted_audit(app, win, args, stop)
        if code or stop:
            return code
    if getattr(args, "contacts", False) or getattr(args, "verdict", False):
        from PySide6 import QtWidgets
        for flag, name in (("contacts", "Contacts"), ("verdict", "Verdict")):
            dock = win.findChild(QtWidgets.QDockWidget, name)
            if getattr(args, flag) and dock is not None:
                dock.show()
                dock.raise_()
        app.processEvents()
        if args.contacts and win.contacts_panel.contacts is not None and len(win.contacts_panel.contacts):
            win.contacts_panel.select(0)
        if args.verdict:
            win.verdict_panel.run()
        app.processEvents()
        win.redraw()
        app.processEvents()
    for opt, fn in (("screenshot", win.screenshot), ("screenshot_window", win.window_screenshot)):
        path = getattr(args, opt)
        if path:
            try:
                fn(path)
            except (OSError, ValueError) as exc:
                print(f"error: cannot write screenshot: {exc}", file=sys.stderr)
                return 2
            print(f"screenshot written to {path}")
    rows = list(session.history)[first:]
    print_summary(session.scene.name, rows)
    return 0


def print_summary(name: str, rows) -> None:
    """The run's median frame rate and frame-time breakdown (frames that paid a kernel
    compile left out), on one line each."""
    import statistics
    played = [r for r in rows if r.fps > 0 and r.warm]
    if not played:
        if rows:
            print(f"{name}: no frame rate from {len(rows)} frame(s) (it needs 2 or more)")
        return
    med = {k: statistics.median(getattr(r, k) for r in played) * 1e3
           for k in ("t_frame", "t_engine", "t_model", "t_draw", "t_render", "t_qt", "t_total")}
    app_ms = statistics.median((r.t_frame - r.t_render) * 1e3 for r in played)
    cold = sum(1 for r in rows if not r.warm)
    print(f"{name}: median {statistics.median(r.fps for r in played):.1f} fps over {len(played)} frames "
          f"(compute + draw), median t_total {med['t_total']:.3f} ms"
          + (f" ({cold} compile frame{'s' * (cold != 1)} left out)" if cold else ""))
    print(f"{name}: frame {med['t_frame']:.1f} ms = engine {med['t_engine']:.2f} + model {med['t_model']:.2f} + "
          f"draw {med['t_draw']:.2f} + 3-D render {med['t_render']:.1f} + Qt {med['t_qt']:.1f} (medians); "
          f"app work (frame - render) {app_ms:.1f} ms")


def session_rows(sidecar: str) -> int:
    import json
    with open(sidecar, encoding="utf-8") as fh:
        return int(json.load(fh)["rows"])


def focus_first_separated_pair(win) -> bool:
    """Step the stepper to the first node pair separated by an axis a third of the way
    into the traversal (or later), then focus the view on it."""
    from cdcore.collide import Outcome
    panel = win.stepper_panel
    panel.reload()
    st = panel.stepper
    if st is None:
        return False
    st.goto(-1)
    first_deep = st.count // 3  # past the big nodes near the roots: a pair worth zooming to
    while not st.at_end:
        step = st.next()
        if step.outcome == Outcome.SEPARATED and step.axis_dir is not None and step.index >= first_deep:
            break
    panel._show()
    return win.focus_on_pair()


if __name__ == "__main__":
    sys.exit(main())
