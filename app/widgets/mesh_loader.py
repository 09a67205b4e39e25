"""Opening meshes off the GUI thread: reading the files and building their hierarchies
(seconds for millions of triangles) run on a worker thread behind a progress dialog with
a Cancel button; the GUI keeps drawing. Cancelling closes the dialog at once and drops
the result when the worker's current step ends (a running build kernel cannot be
interrupted)."""
from __future__ import annotations

import threading

from PySide6 import QtCore, QtWidgets

from ..model.session import LoadCancelled
from .errors import show_error


class MeshLoader(QtCore.QObject):
    """One load: ``start()``; emits ``finished(scene)`` (installed into the session),
    ``failed(message)`` (shown in a dialog) or ``cancelled()``."""

    progressed = QtCore.Signal(int, int, str)
    _done = QtCore.Signal(object, object)  # (scene, error) from the worker, queued to the GUI thread
    finished = QtCore.Signal()
    failed = QtCore.Signal(str)
    cancelled = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget, session, paths, frames: int = 1000):
        super().__init__(parent)
        self.session = session
        self.paths = list(paths)
        self.frames = frames
        self._cancel = threading.Event()
        self.dialog = QtWidgets.QProgressDialog("Opening meshes…", "Cancel", 0, 0, parent)
        self.dialog.setObjectName("meshLoadProgress")
        self.dialog.setWindowTitle("Open mesh")
        self.dialog.setWindowModality(QtCore.Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(0)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.canceled.connect(self.cancel)
        self.progressed.connect(self._on_progress)
        self._done.connect(self._on_done)
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.BusyCursor)
        self.dialog.show()
        self.thread = threading.Thread(target=self._work, name="mesh-loader", daemon=True)
        self.thread.start()

    def cancel(self) -> None:
        if self._cancel.is_set():
            return
        self._cancel.set()
        self._close()
        self.cancelled.emit()

    @property
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def _work(self):  # worker thread: no widget calls here, only queued signals
        try:
            scene = self.session.prepare_meshes(self.paths, self.frames, progress=self._progress,
                                                cancelled=self._cancel.is_set)
            result = (scene, None)
        except LoadCancelled:
            result = (None, None)
        except Exception as exc:  # noqa: BLE001 - reported in a dialog on the GUI thread
            result = (None, exc)
        try:
            self._done.emit(*result)
        except RuntimeError:  # the window (and this loader) closed meanwhile: nothing to show
            pass

    def _progress(self, step, steps, text):
        try:
            self.progressed.emit(step, steps, text)
        except RuntimeError:  # closed meanwhile
            self._cancel.set()

    def _on_progress(self, step: int, steps: int, text: str):
        if self._cancel.is_set():
            return
        self.dialog.setMaximum(steps)
        self.dialog.setValue(step)
        self.dialog.setLabelText(text[:1].upper() + text[1:] + "…")

    def _on_done(self, scene, error):
        if self._cancel.is_set():
            return  # already closed; the result is dropped
        self._close()
        if error is not None:
            show_error(self.parent(), "Open mesh", error)
            self.failed.emit(str(error))
            return
        if scene is None:
            return
        try:
            self.session.install_mesh_scene(scene, self.paths)
        except Exception as exc:  # noqa: BLE001
            show_error(self.parent(), "Open mesh", exc)
            self.failed.emit(str(exc))
            return
        self.finished.emit()

    def _close(self):
        if QtWidgets.QApplication.overrideCursor() is not None:
            QtWidgets.QApplication.restoreOverrideCursor()
        self.dialog.hide()
