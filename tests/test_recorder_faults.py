"""Durable recordings under faults: a write error (disk full, file too large) stops the
recorder, keeps every complete row, leaves no partial last row and writes the sidecar
with the error; the session announces it once (the window: one dialog)."""
import csv
import errno
import functools
import json
import os
import subprocess
import sys
import textwrap

import pytest

from app.model import COLUMNS, Session
from app.model import session as session_mod
from app.model.recorder import Recorder, RecorderError


class FullDisk:
    """A raw binary file that accepts ``capacity`` bytes, then writes part of the next
    chunk (as a filling disk does) and raises ENOSPC."""

    def __init__(self, path, capacity):
        self._fh = open(path, "wb", buffering=0)
        self.capacity = capacity
        self.written = 0
        self.failures = 0

    def write(self, data):
        room = self.capacity - self.written
        if len(data) > room:
            self.failures += 1
            if room > 0:
                self._fh.write(bytes(data[:room]))
                self.written += room
                return room  # a partial write: the caller must come back for the rest
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = self._fh.write(data)
        self.written += n
        return n

    def flush(self):
        self._fh.flush()

    def truncate(self, size):
        return self._fh.truncate(size)

    def close(self):
        self._fh.close()


def _row(k):
    return {c: (k if c == "frame" else 1.25 * k if c.endswith("_us") else "x y") for c in COLUMNS}


def _assert_complete(path, rows):
    raw = open(path, "rb").read()
    assert raw.endswith(b"\r\n"), raw[-40:]  # no partial last row
    table = list(csv.reader(open(path, newline="", encoding="utf-8")))
    assert table[0] == list(COLUMNS)
    assert len(table) - 1 == rows
    assert all(len(r) == len(COLUMNS) for r in table)
    frames = [int(r[0]) for r in table[1:]]
    assert frames == list(range(frames[0], frames[0] + rows)) if rows else True  # consecutive frames


@pytest.mark.parametrize("capacity", [300, 1000, 1001, 4096])
def test_disk_full_keeps_complete_rows_and_writes_the_sidecar(tmp_path, capacity):
    path = tmp_path / "rec.csv"
    disk = []
    rec = Recorder(str(path), {"scene": "s"}, opener=lambda p: disk.append(FullDisk(p, capacity)) or disk[0])
    written = 0
    with pytest.raises(RecorderError, match="cannot write to .*rec.csv: No space left on device"):
        for k in range(10_000):
            rec.write(_row(k))
            written += 1
    assert disk[0].failures <= 2 and rec.rows == written and rec.closed  # a partial write, then ENOSPC
    _assert_complete(path, written)
    meta = json.loads((tmp_path / "rec.json").read_text())
    assert meta["rows"] == written and not meta["complete"]
    assert "No space left on device" in meta["error"]
    with pytest.raises(RecorderError, match="has stopped"):
        rec.write(_row(written))  # stopped: nothing more is written
    _assert_complete(path, written)
    assert rec.close() == str(tmp_path / "rec.json")  # closing a failed recorder is harmless


def test_real_file_size_limit_in_a_subprocess(tmp_path):
    """A real OS fault: RLIMIT_FSIZE makes write() fail with EFBIG part-way through a row."""
    script = textwrap.dedent(f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
        from app.model.recorder import Recorder, RecorderError
        from app.model import COLUMNS
        rec = Recorder({str(tmp_path / 'big.csv')!r}, {{}})
        try:
            for k in range(10_000):
                rec.write({{c: (k if c == "frame" else "abcdefgh") for c in COLUMNS}})
        except RecorderError as exc:
            print(rec.rows, exc)
            sys.exit(0)
        sys.exit(3)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    rows = int(out.stdout.split()[0])
    assert "File too large" in out.stdout and rows > 0
    assert os.path.getsize(tmp_path / "big.csv") <= 2000
    _assert_complete(tmp_path / "big.csv", rows)
    assert "File too large" in json.loads((tmp_path / "big.json").read_text())["error"]


@pytest.fixture
def full_disk(monkeypatch):
    """Sessions record to a disk with room for the header and a few rows."""
    monkeypatch.setattr(session_mod, "Recorder",
                        functools.partial(Recorder, opener=lambda p: FullDisk(p, 1200)))


def test_session_stops_recording_and_announces_it_once(tmp_path, full_disk):
    s = Session()
    s.load_scene("rigid-torus", frames=50)
    failed, changed = [], []
    s.recording_failed.connect(lambda m: failed.append(m))
    s.recording_changed.connect(lambda on: changed.append(on))
    s.start_recording(str(tmp_path / "r.csv"))
    for k in range(40):
        s.goto(k)  # the frame loop carries on
    assert len(failed) == 1 and "No space left on device" in failed[0]
    assert changed == [True, False] and s.recorder is None and s.record_error == failed[0]
    meta = json.loads((tmp_path / "r.json").read_text())
    _assert_complete(tmp_path / "r.csv", meta["rows"])
    assert 0 < meta["rows"] < 40


def test_window_shows_one_dialog_for_a_failed_recording(qtbot, tmp_path, full_disk):
    from PySide6 import QtCore, QtWidgets
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.show()
    win.session.load_scene("rigid-torus", frames=100)
    win.start_recording(str(tmp_path / "w.csv"))
    win.session.set_playing(True)  # the window's own frame loop
    qtbot.waitUntil(lambda: win.session.frame >= 60, timeout=60_000)
    win.session.set_playing(False)
    dialogs = [w for w in win.findChildren(QtWidgets.QMessageBox) if w.objectName() == "errorDialog"]
    assert len(dialogs) == 1 and "No space left on device" in dialogs[0].text()
    assert win.act_record.isEnabled() and not win.act_stop.isEnabled()
    _assert_complete(tmp_path / "w.csv", json.loads((tmp_path / "w.json").read_text())["rows"])
    win.close()


def _args(**kw):
    from app.__main__ import build_parser
    argv = []
    for k, v in kw.items():
        argv += [f"--{k}"] + ([] if v is True else [str(v)])
    return build_parser().parse_args(argv)


def test_ctrl_c_stops_a_scripted_run_keeping_the_file_valid(qtbot, tmp_path):
    import signal
    from PySide6 import QtCore, QtWidgets
    from app.__main__ import run_script
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.show()
    s = win.session
    s.load_scene("rigid-torus", frames=10_000)
    # Ctrl-C arrives while a frame is being drawn (inside a slot)
    s.frame_changed.connect(lambda rec: rec.frame == 7 and os.kill(os.getpid(), signal.SIGINT))
    before = signal.getsignal(signal.SIGINT)
    code = run_script(QtWidgets.QApplication.instance(), win, s, _args(frames=5000, record=tmp_path / "c.csv",
                                                                         quit=True))
    assert code == 130
    assert signal.getsignal(signal.SIGINT) is before  # the handler is restored
    meta = json.loads((tmp_path / "c.json").read_text())
    assert meta["stop_reason"] == "interrupted (Ctrl-C)" and meta["error"] is None
    assert 8 <= meta["rows"] <= 10  # it stopped at the next frame boundary
    _assert_complete(tmp_path / "c.csv", meta["rows"])
    win.close()


def test_scripted_run_reports_a_recording_error(qtbot, tmp_path, full_disk, capsys):
    from PySide6 import QtCore, QtWidgets
    from app.__main__ import run_script
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    s = win.session
    s.load_scene("rigid-torus", frames=500)
    code = run_script(QtWidgets.QApplication.instance(), win, s, _args(frames=500, record=tmp_path / "e.csv",
                                                                         quit=True))
    assert code == 1
    assert "error: recording stopped: cannot write to" in capsys.readouterr().err
    assert s.frame < 100  # the run stopped with the recording
    win.close()


@pytest.mark.parametrize("stale", ["/nonexistent/scene.json", "no-such-scene", "BROKEN"])
def test_a_stale_last_scene_setting_falls_back_to_the_default(tmp_path, stale, capsys):
    from PySide6 import QtCore
    from app.__main__ import DEFAULT_SCENE, load_last_scene
    if stale == "BROKEN":
        stale = str(tmp_path / "broken.json")
        open(stale, "w").write('{"name": "x", "kind": "rigid", "frames": 5, "bodies": [{"type": "chain"')
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    settings.setValue("last_scene", stale)
    s = Session()
    load_last_scene(s, settings)
    assert s.scene.name == DEFAULT_SCENE
    assert settings.value("last_scene") is None
    assert "cannot be opened" in capsys.readouterr().err


def test_sidecar_rewrites_look_up_package_versions_once(tmp_path, monkeypatch):
    """A running recording rewrites its sidecar every PROVISIONAL_EVERY seconds; the package
    versions (importlib.metadata: tens of ms) are looked up once per recording, not per
    rewrite (they were: a default argument of ``getattr`` evaluated every time)."""
    from app.model import recorder as rec_mod
    calls = []
    real = rec_mod.versions
    monkeypatch.setattr(rec_mod, "versions", lambda: calls.append(1) or real())
    monkeypatch.setattr(rec_mod, "PROVISIONAL_EVERY", -1.0)  # every write rewrites the sidecar
    r = Recorder(str(tmp_path / "run.csv"), {"scene": "x"})
    for _ in range(5):
        r.write({c: 1 for c in COLUMNS})
    r.close()
    assert len(calls) == 1
    meta = json.loads((tmp_path / "run.json").read_text())
    assert meta["versions"]["numpy"] and meta["rows"] == 5 and meta["complete"]
