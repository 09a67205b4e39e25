"""Recording frame timings: a CSV written row by row straight to the file (a killed app
leaves a valid file up to its last frame) and a JSON sidecar written atomically when
recording starts (``stop_reason`` ``RUNNING``; rewritten every few seconds) and when it
stops. On a write error (disk full, I/O error) the recorder truncates the
CSV back to its last complete row, closes it, writes the sidecar with the error and
raises ``RecorderError`` once; it is then stopped."""
from __future__ import annotations

import csv
import io
import json
import os
import platform
import tempfile
import time

# snake_case throughout; times in µs (what the window shows). The frame-time breakdown:
# t_engine (collision loop) + t_model (traces, snapshot) + t_draw (actors) + t_render (the
# 3-D view's render) + t_qt (widgets, events, painting) = t_frame (1 / fps). ``warm`` is 0
# for a frame that paid a first-use kernel compile (leave it out of statistics).
COLUMNS = ("frame", "scene", "body_pairs", "bv", "update_method", "test", "t_update_us", "t_test_us",
           "t_query_us", "t_total_us", "bv_tests", "prim_tests", "n_exact", "n_false", "contacts",
           "t_engine_us", "t_model_us", "t_draw_us", "t_render_us", "t_qt_us", "t_frame_us", "fps", "warm")


#: the sidecar's ``stop_reason`` while recording: left as is when the process ends without closing
RUNNING = "the app ended without closing the recording (killed, or its display went away)"
PROVISIONAL_EVERY = 2.0  # seconds between rewrites of the running sidecar (its row count)


class RecorderError(OSError):
    """The recording file cannot be opened or written (the message names the path)."""


class Recorder:
    """Writes one CSV row per recorded frame: the ``COLUMNS`` above (times in µs; ``fps``
    of the whole loop, rendering included)."""

    def __init__(self, path: str, settings: dict, opener=None):
        """``opener(path)`` returns the binary file to write (default: an unbuffered
        ``open(path, "wb", buffering=0)``; tests pass a fault-injecting one)."""
        self.path = os.path.abspath(path)
        self.settings = dict(settings)
        self.rows = 0
        self.started = time.time()
        self.error: str | None = None   # the write error that stopped the recording
        self.stop_reason: str | None = None  # e.g. "interrupted (Ctrl-C)"
        self._good = 0  # bytes of complete rows on disk
        # what every sidecar repeats, looked up once (package metadata: ~10-50 ms a lookup,
        # and a running recording rewrites its sidecar every PROVISIONAL_EVERY seconds)
        self._static = {"versions": versions(), "machine": machine()}
        try:
            self._fh = (opener or _open_raw)(self.path)
        except OSError as exc:
            raise RecorderError(f"cannot record to {self.path}: {exc.strerror or exc}") from None
        self._append(COLUMNS)
        self._provisional()  # a sidecar exists even if the process dies (Qt exits when its X server goes)

    @property
    def sidecar_path(self) -> str:
        return os.path.splitext(self.path)[0] + ".json"

    @property
    def closed(self) -> bool:
        return self._fh is None

    def write(self, row: dict) -> None:
        """Append one frame (keys: ``COLUMNS``), written through to the file. A write error
        stops the recording (see the module docstring) and raises ``RecorderError``."""
        self._append([_fmt(row.get(c, "")) for c in COLUMNS])
        self.rows += 1
        if time.monotonic() - self._sidecar_at > PROVISIONAL_EVERY:
            self._provisional()

    def _append(self, cells) -> None:
        if self._fh is None:
            raise RecorderError(f"recording to {self.path} has stopped" + (f": {self.error}" if self.error else ""))
        buf = io.StringIO()
        csv.writer(buf).writerow(cells)
        data = buf.getvalue().encode("utf-8")
        try:
            view = memoryview(data)
            while view:  # a raw write may be partial
                n = self._fh.write(view)
                if not n:
                    raise OSError(f"wrote 0 of {len(view)} bytes")
                view = view[n:]
            self._fh.flush()
        except OSError as exc:
            self._fail(f"cannot write to {self.path}: {exc.strerror or exc}")
        self._good += len(data)

    def _fail(self, message: str) -> None:
        """Keep the complete rows, drop the partial one, write the sidecar, raise once."""
        self.error = message
        try:
            self._fh.truncate(self._good)
        except (OSError, ValueError):
            try:
                os.truncate(self.path, self._good)
            except OSError as exc:
                self.error += f"; the last row may be partial (truncate failed: {exc.strerror or exc})"
        self._close_file()
        try:
            self._write_sidecar()
        except OSError as exc:
            self.error += f"; no sidecar written ({exc.strerror or exc})"
        raise RecorderError(self.error)

    def _close_file(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError:
                pass

    def close(self, reason: str | None = None) -> str:
        """Close the CSV and write the JSON sidecar (versions, machine, scene parameters,
        settings, and why it stopped early if it did) by rename, so it is never
        half-written. Returns the sidecar's path. After a write error the sidecar is
        already written: returns its path."""
        if reason:
            self.stop_reason = reason
        if self._fh is None and self.error is not None:
            return self.sidecar_path
        self._close_file()
        self._write_sidecar()
        return self.sidecar_path

    def _provisional(self) -> None:
        """The sidecar of a recording still running (``stop_reason`` = ``RUNNING``), rewritten
        every ``PROVISIONAL_EVERY`` seconds: what stays when the process ends without
        closing it (killed, or Qt exiting on a lost X connection, which runs no Python)."""
        self._sidecar_at = time.monotonic()
        try:
            self._write_sidecar(running=True)
        except OSError:
            pass  # the final sidecar reports errors; a provisional one is best effort

    def _write_sidecar(self, running: bool = False) -> None:
        meta = {"csv": os.path.basename(self.path), "rows": self.rows, "columns": list(COLUMNS),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.started)),
                "stopped": None if running else time.strftime("%Y-%m-%dT%H:%M:%S"),
                "complete": not running and self.error is None and not self.stop_reason,
                "error": self.error, "stop_reason": RUNNING if running else self.stop_reason,
                "settings": self.settings, **self._static}
        atomic_write_text(self.sidecar_path, json.dumps(meta, indent=1, default=str))


def _open_raw(path):
    return open(path, "wb", buffering=0)


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def _read_umask() -> int:
    # os.umask can only be read by setting it: do that once, at import (single-threaded),
    # never while other threads may be creating files
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write_text(path: str, text: str) -> None:
    """Write by rename (never half-written), with the permissions ``open`` would give
    (mkstemp makes 0600 files: the sidecar was private while its CSV was not)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def versions() -> dict:
    import importlib.metadata as md
    out = {"python": platform.python_version()}
    for pkg in ("numpy", "numba", "trimesh", "pyvista", "vtk", "PySide6-Essentials", "pyqtgraph", "bvh-debugger"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


def machine() -> dict:
    return {"platform": platform.platform(), "machine": platform.machine(), "processor": platform.processor(),
            "cpus": os.cpu_count(), "display": os.environ.get("DISPLAY", "")}
