"""The app's part of issue 20's attack catalogue: arguments checked before any frame,
readable messages and non-zero exits instead of tracebacks, a signal in any phase -> 128 + signal,
a recording's sidecar present even when the process dies without closing it."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _args(*argv):
    from app.__main__ import build_parser
    return build_parser().parse_args(list(argv))


@pytest.mark.parametrize("argv, words", [
    (["--scene", "chains-6to1", "--screenshot", "/proc/shot.png"], "--screenshot"),
    (["--scene", "chains-6to1", "--screenshot-window", "/nonexistent-dir/w.png"], "directory does not exist"),
    (["--scene", "chains-6to1", "--record", ""], "empty string"),
    (["--scene", "chains-6to1", "--record", "/proc/r.csv"], "--record"),
    (["--scene", "chains-6to1", "--size", "99999x99999"], "exceeds the largest window"),
])
def test_app_arguments_refused_before_any_frame(argv, words):
    from app.__main__ import check_args
    with pytest.raises(ValueError) as err:
        check_args(_args(*argv))
    assert words in str(err.value), str(err.value)


def test_size_bounded_by_the_screen():
    from app.__main__ import parse_size
    assert parse_size("1920x1080", (1920, 1080)) == (1920, 1080)
    with pytest.raises(ValueError, match=r"exceeds the screen \(1920x1080\)"):
        parse_size("1921x1080", (1920, 1080))


def _env(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + HERE, XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               OMP_WAIT_POLICY="PASSIVE")
    return env


def test_sidecar_exists_when_the_process_dies_while_recording(tmp_path):
    """Qt exits (C exit, no Python clean-up) when its X server goes away; the recorder's
    running sidecar is what then stays, and says the recording was not closed."""
    code = f"""
import os
from app.model.recorder import Recorder
r = Recorder({str(tmp_path / 'rec.csv')!r}, {{"scene": "x"}})
for k in range(5):
    r.write({{"frame": k}})
os._exit(1)
"""
    p = subprocess.run([sys.executable, "-c", code], env=_env(tmp_path), cwd=ROOT, timeout=120)
    assert p.returncode == 1
    meta = json.loads((tmp_path / "rec.json").read_text())
    from app.model.recorder import RUNNING
    assert meta["stop_reason"] == RUNNING and meta["complete"] is False and meta["csv"] == "rec.csv"
    assert (tmp_path / "rec.csv").read_text().count("\n") == 6  # header + 5 complete rows


def _app(tmp_path, *argv, **kw):
    # SIGINT at its default in the child (a background test run passes it on ignored)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([sys.executable, "-m", "app", *argv], stdout=subprocess.PIPE,
                            text=True, env=_env(tmp_path), cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


@pytest.mark.gui
@pytest.mark.slow
def test_app_size_beyond_screen_and_bad_trajectory_exit_2(tmp_path):
    from robotgen import write_twoarm
    p = _app(tmp_path, "--scene", "chains-6to1", "--size", "16000x12000", "--quit")
    out, err = p.communicate(timeout=300)
    assert p.returncode == 2 and "exceeds the screen" in err and "Traceback" not in err, err[-600:]
    root = str(tmp_path / "robots")
    os.makedirs(root)
    urdf = write_twoarm(root)
    np.savez(tmp_path / "s.npz", q=np.array([["a", "b"]]), joint_names=np.array(["left_turn", "left_slide"]))
    np.savez(tmp_path / "far.npz", q=np.array([[0.0, 1e308]]), joint_names=np.array(["left_turn", "left_slide"]))
    # issue 20's repro: a saved query whose child index is 2e9 (was exit 139 in load_query)
    from cdcore import build_bvh, save_query, shapes
    a = build_bvh(shapes.torus(1.0, 0.25, 12, 6), "obb")
    a.refit(a.mesh.vertices * 1.01)
    save_query(tmp_path / "q.npz", a, None, a, None)
    d = dict(np.load(tmp_path / "q.npz"))
    d["a_nodes_i"][0, 0] = 2_000_000_000
    np.savez(tmp_path / "q.npz", **d)
    p = _app(tmp_path, str(tmp_path / "q.npz"), "--quit")
    out, err = p.communicate(timeout=300)
    assert p.returncode == 2 and "child id out of range" in err and "Traceback" not in err, err[-600:]
    for traj, words in (("s.npz", "q must be real numbers"), ("far.npz", "beyond")):
        p = _app(tmp_path, urdf, "--package-dir", root, "--trajectory", str(tmp_path / traj), "--frames", "2",
                 "--quit")
        out, err = p.communicate(timeout=300)
        assert p.returncode == 2 and words in err and "Traceback" not in err, (traj, err[-600:])


def _read_until(p, lines, marker, timeout):
    """Read the child's stdout (lines appended to ``lines``) until a line starts with ``marker``."""
    import queue
    import threading
    q = getattr(p, "_lines", None)
    if q is None:
        q = p._lines = queue.Queue()
        threading.Thread(target=lambda: [q.put(x) for x in iter(p.stdout.readline, "")] + [q.put(None)],
                         daemon=True).start()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            line = q.get(timeout=max(0.01, end - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            return False
        lines.append(line)
        if line.startswith(marker):
            return True
    return False


# when the signal comes: the line the app prints (--report-startup) just before that phase,
# and how long after it. "started": the Qt/VTK/pyvista imports; "window-shown": the scene
# builds on its worker thread; "frames-started": the frames play (--record: and are recorded;
# "first-window", the first frame, comes ~0.5-1 s earlier: the Timing dock is built between them);
# "screenshot": the scripted frames are done and the event loop runs (no --quit)
SIGNAL_CASES = [
    ("import", "INT", "started", 0.2, ()),
    ("build", "INT", "window-shown", 0.0, ()),
    ("build", "TERM", "window-shown", 0.0, ()),
    ("play", "INT", "frames-started", 1.0, ()),
    ("record", "INT", "frames-started", 1.0, ("--record", "rec.csv")),
    ("record", "TERM", "frames-started", 1.0, ("--record", "rec.csv")),
    ("record", "HUP", "frames-started", 1.0, ("--record", "rec.csv")),
    ("loop", "INT", "screenshot written", 1.0, ("--screenshot", "shot.png")),
]


@pytest.mark.gui
@pytest.mark.slow
@pytest.mark.parametrize("phase, sig, marker, after, extra", SIGNAL_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in SIGNAL_CASES])
def test_app_signal_in_every_phase_exits_cleanly(tmp_path, phase, sig, marker, after, extra):
    """Ctrl-C, SIGTERM (``timeout``, ``kill``) and SIGHUP (terminal closed) at any point of a
    scripted run: exit 128 + signal with one line naming it, no traceback, no crash, no hang;
    a recording closed with its sidecar saying why. (Before: a KeyboardInterrupt raised inside
    Qt/VTK callbacks was swallowed (the run went on), broke the pyvista import (traceback,
    exit 1) or crashed the first paint (SIGSEGV); SIGTERM left the sidecar 'running'.)"""
    extra = [str(tmp_path / x) if x.endswith((".csv", ".png")) else x for x in extra]
    frames = "3" if phase == "loop" else "100000"
    argv = ["--scene", "hand-ball", "--frames", frames, "--report-startup", *extra]
    with open(tmp_path / "stderr.txt", "w") as err_file:  # a file: a hung child cannot block the reads
        p = _app(tmp_path, *argv, *(() if phase == "loop" else ("--quit",)), stderr=err_file)
    lines = []
    try:
        assert _read_until(p, lines, marker, 300), ("never reached", marker, lines, p.poll())
        time.sleep(after)
        p.send_signal(getattr(signal, "SIG" + sig))
        code = p.wait(timeout=120)  # a child that ignores the signal fails here (hang)
        _read_until(p, lines, "\0", 10)  # the rest of stdout
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = (tmp_path / "stderr.txt").read_text()
    out = "".join(lines)
    word = {"INT": "interrupted", "TERM": "terminated", "HUP": "hung up"}[sig]
    assert code == 128 + getattr(signal, "SIG" + sig), (code, err[-1500:])
    assert word in err and "Traceback" not in err and "Exception ignored" not in err, err[-1500:]
    if phase in ("import", "build"):
        assert "first-window" not in out, out  # it stopped in that phase, before any frame
    if phase in ("play", "record"):
        assert f"{word} after " in err and " of 100000 frames" in err, err[-600:]
    if phase == "record":
        meta = json.loads((tmp_path / "rec.json").read_text())
        reason = {"INT": "interrupted (Ctrl-C)", "TERM": "terminated (SIGTERM)", "HUP": "hung up (SIGHUP)"}[sig]
        assert meta["stop_reason"] == reason and meta["error"] is None and meta["complete"] is False, meta
        text = (tmp_path / "rec.csv").read_text()
        assert text.endswith("\n") and text.count("\n") == meta["rows"] + 1 and meta["rows"] >= 1, meta
        assert f"recorded {meta['rows']} frames" in out, out
