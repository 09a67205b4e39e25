"""The first start on an empty numba cache: a window at once, the kernels compiled behind it.

The query entry points (explicit signatures, ``cdcore.warmup.IMPORT_COMPILED``) load from
numba's on-disk cache at their first call, about half a second. When the cache does not hold
them (a fresh install without ``python -m cdcore.warmup``, or sources changed since) that load
compiles them and the traversal core they call: minutes on a 2-core machine, with the app's
window frozen. Here a small window shows what is being compiled while a worker thread loads
them (``cdcore.warmup.load_kernels``); Qt's event loop
keeps running meanwhile (numba's type inference holds the GIL in short slices, LLVM's passes
release it). The main window is made afterwards, on the GUI thread, as always.

``app.__main__`` decides with ``cdcore.warmup.kernels_cached`` (which reads the cache's index
files) before importing Qt: a warm cache takes ``app.warm_start`` (the window first, the
kernels loaded on a worker thread once it is on screen), a cold one this module.
"""
from __future__ import annotations

import threading
import time

from PySide6 import QtCore, QtWidgets

from .warm_start import KERNELS, preload  # noqa: F401 - preload: the warm start's (re-exported)


class CompileProgress:
    """Counts numba's compiles (the ``numba:compile`` event) and names the one under way."""

    def __init__(self):
        self.done = 0
        self.current = ""
        self._listener = None

    def install(self) -> None:
        from numba.core import event

        progress = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                d = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
                fn = getattr(d, "py_func", None)
                progress.current = getattr(fn, "__qualname__", "") or progress.current

            def on_end(self, ev):
                progress.done += 1

        self._listener = _Listener()
        event.register("numba:compile", self._listener)

    def uninstall(self) -> None:
        if self._listener is not None:
            from numba.core import event
            event.unregister("numba:compile", self._listener)
            self._listener = None


class FirstStartWindow(QtWidgets.QWidget):
    """'Compiling the collision kernels': a busy bar, the count so far and the kernel under way."""

    def __init__(self, progress: CompileProgress):
        super().__init__()
        self.progress = progress
        self.setWindowTitle("BVH debugger - first start")
        lay = QtWidgets.QVBoxLayout(self)
        title = QtWidgets.QLabel("<b>Compiling the collision kernels</b>")
        why = QtWidgets.QLabel("numba's cache does not hold them yet (a fresh install, or changed sources). "
                               "This happens once and takes a few minutes; <tt>python -m cdcore.warmup</tt> "
                               "does it ahead of time. The debugger opens when it is done.")
        why.setWordWrap(True)
        self.bar = QtWidgets.QProgressBar()
        self.bar.setRange(0, 0)  # busy: the number of kernels depends on what the scene needs
        self.detail = QtWidgets.QLabel("starting...")
        for w in (title, why, self.bar, self.detail):
            lay.addWidget(w)
        self.resize(560, 170)
        self._t0 = time.monotonic()

    def refresh(self) -> None:
        p = self.progress
        now = f" - now: {p.current}" if p.current else ""
        self.detail.setText(f"{p.done} compiled in {time.monotonic() - self._t0:.0f} s{now}")


def prepare_kernels(app, report: bool = False, work=None, poll_ms: int = 100) -> bool:
    """Make sure importing the app's engine modules is quick: when numba's cache lacks the
    import-compiled kernels (or ``work`` is given: tests), show ``FirstStartWindow`` and run the
    imports (or ``work()``) on a worker thread until done. Returns whether a window was shown;
    the worker's exception, if any, is raised here. ``report``: print ``window-shown <unix
    time>`` when the window is on screen (``app.startup_bench``)."""
    if work is None:
        from cdcore.warmup import kernels_cached
        if kernels_cached():
            return False

        def work():
            from cdcore.warmup import load_kernels
            load_kernels(KERNELS)

    quit_on_close = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # closing this window must not end the application
    try:
        return _run_window(app, work, report, poll_ms)
    finally:
        app.setQuitOnLastWindowClosed(quit_on_close)


def _run_window(app, work, report, poll_ms) -> bool:
    progress = CompileProgress()
    progress.install()
    win = FirstStartWindow(progress)
    screen = app.primaryScreen()
    if screen is not None:
        win.move(screen.availableGeometry().center() - win.rect().center())
    win.show()
    app.processEvents()
    if report:
        print(f"window-shown {time.time():.6f}", flush=True)
    errors = []

    def run():
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - handed to the GUI thread
            errors.append(exc)

    worker = threading.Thread(target=run, name="first-start-compile", daemon=True)
    worker.start()
    loop = QtCore.QEventLoop()
    timer = QtCore.QTimer()
    timer.setInterval(poll_ms)

    def tick():
        win.refresh()
        if not worker.is_alive():
            loop.quit()

    timer.timeout.connect(tick)
    timer.start()
    if worker.is_alive():
        loop.exec()
    timer.stop()
    worker.join()
    progress.uninstall()
    win.close()
    win.deleteLater()
    app.processEvents()
    if errors:
        raise errors[0]
    return True
