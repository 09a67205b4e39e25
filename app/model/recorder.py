"""Recording frame timings: a CSV flushed row by row (a killed app leaves a valid file up
to its last frame) and a JSON sidecar written atomically when recording stops."""
from __future__ import annotations

import csv
import json
import os
import platform
import tempfile
import time

COLUMNS = ("frame", "scene", "body pair", "bv", "update method", "test", "t_update_ms", "t_test_ms",
           "t_query_ms", "t_total_ms", "bv_tests", "prim_tests", "n_exact", "n_false", "contacts",
           "t_render_ms", "fps")


class RecorderError(OSError):
    """The recording file cannot be opened or written (the message names the path)."""


class Recorder:
    """Writes one CSV row per recorded frame: the ``COLUMNS`` above (times in ms; ``fps``
    of the whole loop, rendering included; ``t_render_ms`` the drawing time)."""

    def __init__(self, path: str, settings: dict):
        self.path = os.path.abspath(path)
        self.settings = dict(settings)
        self.rows = 0
        self.started = time.time()
        try:
            self._fh = open(self.path, "w", newline="", encoding="utf-8")
        except OSError as exc:
            raise RecorderError(f"cannot record to {self.path}: {exc.strerror or exc}") from None
        self._writer = csv.writer(self._fh)
        self._writer.writerow(COLUMNS)
        self._fh.flush()

    @property
    def sidecar_path(self) -> str:
        return os.path.splitext(self.path)[0] + ".json"

    def write(self, row: dict) -> None:
        """Append one frame (keys: ``COLUMNS``) and flush it to disk."""
        try:
            self._writer.writerow([_fmt(row.get(c, "")) for c in COLUMNS])
            self._fh.flush()
        except OSError as exc:
            raise RecorderError(f"cannot write to {self.path}: {exc.strerror or exc}") from None
        self.rows += 1

    def close(self) -> str:
        """Close the CSV and write the JSON sidecar (versions, machine, scene parameters,
        settings) by rename, so it is never half-written. Returns the sidecar's path."""
        if not self._fh.closed:
            self._fh.close()
        meta = {"csv": os.path.basename(self.path), "rows": self.rows, "columns": list(COLUMNS),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.started)),
                "stopped": time.strftime("%Y-%m-%dT%H:%M:%S"), "settings": self.settings,
                "versions": versions(), "machine": machine()}
        atomic_write_text(self.sidecar_path, json.dumps(meta, indent=1, default=str))
        return self.sidecar_path


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def atomic_write_text(path: str, text: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
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
