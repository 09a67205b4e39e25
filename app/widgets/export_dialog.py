"""File → Export frames: choose the range and the directory, then the frames are rendered
one per turn of the event loop (the window stays responsive) with a progress dialog and
Cancel; frames already written stay."""
from __future__ import annotations

import os

from PySide6 import QtCore, QtWidgets


class ExportDialog(QtWidgets.QDialog):
    """First / last frame (inclusive) and the output directory."""

    def __init__(self, parent, n_frames: int, current: int, directory: str):
        super().__init__(parent, objectName="exportDialog")
        self.setWindowTitle("Export frames as PNG")
        form = QtWidgets.QFormLayout(self)
        last = max(0, n_frames - 1)
        self.first = QtWidgets.QSpinBox(objectName="exportFirst", minimum=0, maximum=last, value=min(current, last))
        self.last = QtWidgets.QSpinBox(objectName="exportLast", minimum=0, maximum=last, value=last)
        self.first.valueChanged.connect(lambda v: self.last.setMinimum(v))  # LO <= HI: never a silent swap
        self.last.setMinimum(self.first.value())
        form.addRow("First frame", self.first)
        form.addRow("Last frame", self.last)
        row = QtWidgets.QHBoxLayout()
        self.dir = QtWidgets.QLineEdit(directory, objectName="exportDir")
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row.addWidget(self.dir, 1)
        row.addWidget(browse)
        form.addRow("Directory", row)
        self.count = QtWidgets.QLabel(objectName="exportCount")
        form.addRow(self.count)
        for w in (self.first, self.last):
            w.valueChanged.connect(self._count)
        self._count()
        box = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                         | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        box.accepted.connect(self._accept)
        box.rejected.connect(self.reject)
        form.addRow(box)

    def _count(self, *_):
        n = self.last.value() - self.first.value() + 1
        self.count.setText(f"{n:,} frames → frame_00000.png … frame_{n - 1:05d}.png")

    def _browse(self):
        d = QtWidgets.QFileDialog.getExistingDirectory(self, "Export frames to", self.dir.text())
        if d:
            self.dir.setText(d)

    def _accept(self):
        if not os.path.isdir(self.dir.text()):
            QtWidgets.QMessageBox.warning(self, "Export frames", f"no such directory: {self.dir.text()}")
            return
        self.accept()

    def values(self) -> tuple[int, int, str]:
        return self.first.value(), self.last.value(), self.dir.text()


class FrameExporter(QtCore.QObject):
    """Renders frames ``first..last`` of ``win``'s session to ``directory``, one per timer
    turn, with a ``QProgressDialog`` (Cancel stops after the frame being written)."""

    finished = QtCore.Signal(int)  # frames written

    def __init__(self, win, directory: str, first: int, last: int):
        super().__init__(win)
        if first > last:
            raise ValueError(f"export range {first}..{last}: the first frame is after the last")
        if not os.path.isdir(directory):
            raise FileNotFoundError(f"no such directory: {directory}")
        self.win, self.directory = win, directory
        self.frames = list(range(first, last + 1))
        self.written = 0
        self.running = False
        self.error = None
        self.progress = QtWidgets.QProgressDialog(f"Exporting {len(self.frames):,} frames to {directory}",
                                                  "Cancel", 0, len(self.frames), win)
        self.progress.setObjectName("exportProgress")
        self.progress.setWindowTitle("Export frames")
        self.progress.setMinimumDuration(0)
        self.progress.setAutoClose(True)
        self.progress.canceled.connect(self.cancel)
        self._timer = QtCore.QTimer(self, interval=0)
        self._timer.timeout.connect(self._one)

    def start(self):
        self.running = True
        self.progress.setValue(0)
        self._timer.start()

    def cancel(self):
        if self.running:
            self._stop()

    def _one(self):
        if not self.running:
            return
        if self.progress.wasCanceled():
            self._stop()
            return
        k = self.written
        if k >= len(self.frames):
            self._stop()
            return
        try:
            self.win.export_one(self.directory, k, self.frames[k])
        except OSError as exc:
            self.error = str(exc)
            self._stop()
            from .errors import show_error
            show_error(self.win, "Export frames", exc)
            return
        self.written += 1
        self.progress.setValue(self.written)
        self.progress.setLabelText(f"Exporting frame {self.frames[k]} ({self.written:,} / {len(self.frames):,}) "
                                   f"to {self.directory}")
        if self.written >= len(self.frames):
            self._stop()

    def _stop(self):
        self.running = False
        self._timer.stop()
        self.progress.reset()
        self.win.statusBar().showMessage(f"exported {self.written:,} of {len(self.frames):,} frames to "
                                         f"{self.directory}", 10000)
        self.finished.emit(self.written)
