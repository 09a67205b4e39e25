"""The start on a warm numba cache, before Qt is imported (``app.__main__``).

Two things make the first window of a warm start slow besides the work itself:

- the engine's entry points load from numba's cache for about half a second; they load at
  their first call, not at import (``cdcore._pairjit.entry_njit``), so the window is built
  without them and ``preload`` loads them on a worker thread once it is on screen (loaded
  beside the view's imports they took as long: both hold the GIL most of the time);
- PySide6 replaces ``builtins.__import__`` when it is first imported: from then on every newly
  imported module has its whole source read (``inspect.getsource``) to find out whether it
  uses PySide's ``__feature__`` switches (shiboken's ``feature_imported``). For the ~900
  modules of pyvista, VTK's Python side and matplotlib (which ``pyvista.plotting.colors``
  imports unconditionally) that was 0.4-0.6 s of CPU. ``import_view`` imports them first.

This module imports neither Qt nor the kernels itself.
"""
from __future__ import annotations

import importlib
import threading

from cdcore.warmup import IMPORT_COMPILED

#: the entry points a first start compiles behind its window (``first_start``): all of them;
#: everything else compiles or loads on first use, on the scene loader's thread
KERNELS = IMPORT_COMPILED

#: what a warm start preloads: the entry points every scene's first frame loads anyway (the
#: query entry points, the AABB refit); the robots' self-collision kernel loads with the first
#: robot scene, on the scene loader's thread (a chain or rigid scene never uses it: ~0.1-0.2 s
#: of CPU saved on their start)
ROBOT_ONLY = ("articulated._self_kernel.self_check",)
WARM_KERNELS = tuple(k for k in KERNELS if k not in ROBOT_ONLY)

#: what the 3-D view needs that does not import Qt: pyvista (its ``plotting`` package imports
#: VTK's rendering modules and matplotlib), in the order the view's modules import them
VIEW_IMPORTS = ("numpy", "pyvista", "pyvista.plotting", "pyvista.plotting.plotter",
                "pyvista.plotting.render_window_interactor", "vtkmodules.vtkRenderingCore",
                "vtkmodules.util.numpy_support")


def preload(kernels=None, done=None) -> threading.Thread:
    """Load the engine's entry points (``WARM_KERNELS``, ``cdcore.warmup.load_kernels``) on a
    worker thread (a warm cache: ~0.5 s); a query's first call on another thread meanwhile
    waits for it (each entry point's lock). An error is left for that first call to raise.
    ``done()`` is called on the worker when they are loaded (``--report-startup``'s phase
    line)."""
    names = WARM_KERNELS if kernels is None else tuple(kernels)

    def run():
        try:
            from cdcore.warmup import load_kernels
            load_kernels(names)
        except BaseException:  # noqa: BLE001 - the first call raises it again
            pass
        finally:
            if done is not None:
                done()

    worker = threading.Thread(target=run, name="engine-preload", daemon=True)
    worker.start()
    return worker


def import_view(imports=VIEW_IMPORTS) -> None:
    """Import the 3-D view's Qt-free dependencies (call before the first Qt import: see the
    module docstring). An ImportError propagates: the view cannot work without them."""
    for name in imports:
        importlib.import_module(name)


class Prebuild:
    """The scene named on the command line, built on a worker thread (``start``) as soon as
    the main window has painted: the window first (its imports and construction do not share
    the GIL with the build), the scene while the window is on screen. ``make()`` returns a
    ``Session`` holding the scene (``app.model``, Qt-free). ``result()`` (from any thread but
    the worker) waits for it: the session, or None when the build failed, so that the
    window's own load runs and reports the error as it always does."""

    def __init__(self, ref: dict, make):
        self.ref = ref
        self._make = make
        self._done = threading.Event()
        self._session = None
        self._thread = None

    def start(self) -> threading.Thread:
        """Run the build on a worker thread of its own (once; later calls return that
        thread)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="scene-prebuild", daemon=True)
            self._thread.start()
        return self._thread

    def run(self) -> None:
        try:
            self._session = self._make()
        except BaseException:  # noqa: BLE001 - the window's load raises it again, with its message
            self._session = None
        finally:
            self._done.set()

    def result(self):
        self.start()  # (started already, unless the window never painted)
        self._done.wait()
        session, self._session = self._session, None  # adopted once
        return session
