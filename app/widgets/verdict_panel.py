"""Verdict: the current frame's pair through cdcore, the exact brute-force reference,
python-fcl and coal (when installed), side by side, and why they disagree
(``cdcore.crosscheck``). A disagreement opens the traversal stepper on the responsible link
pair and highlights its triangle pair (``open_in_stepper``)."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from app.model.contacts import run_verdict, verdict_target

from .errors import guarded

DISAGREE_BG = QtGui.QColor(255, 228, 200)


class VerdictPanel(QtWidgets.QWidget):
    """``open_in_stepper(VerdictTarget, (tri_a, tri_b) or None)`` asks the window to drill
    the stepper into the responsible link pair."""
    open_in_stepper = QtCore.Signal(object, object)

    def __init__(self, session, contacts_row=lambda: None, contacts=lambda: None, parent=None):
        super().__init__(parent)
        self.session = session
        self._row, self._contacts = contacts_row, contacts
        self.check = None
        self.target = None
        lay = QtWidgets.QVBoxLayout(self)
        row = QtWidgets.QHBoxLayout()
        self.run_btn = QtWidgets.QPushButton("Check this frame", objectName="verdictRun",
                                             toolTip="Run the pair through every library and the exact reference")
        self.auto = QtWidgets.QCheckBox("when paused", objectName="verdictAuto", checked=False,
                                        toolTip="Check every frame you stop on")
        self.follow = QtWidgets.QCheckBox("open stepper on disagreement", objectName="verdictFollow", checked=True)
        row.addWidget(self.run_btn)
        row.addWidget(self.auto)
        row.addStretch(1)
        lay.addLayout(row)
        lay.addWidget(self.follow)
        self.target_label = QtWidgets.QLabel("—", objectName="verdictTarget", wordWrap=True)
        self.target_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay.addWidget(self.target_label)
        self.table = QtWidgets.QTableWidget(0, 6, objectName="verdictTable")
        self.table.setHorizontalHeaderLabels(["engine", "hit", "contacts", "distance / depth", "time", "note"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        # (no fit_columns: a wide table would force the right docks, and the window, wider than 1366 px)
        self.table.setHorizontalScrollMode(QtWidgets.QAbstractItemView.ScrollMode.ScrollPerPixel)
        lay.addWidget(self.table)
        self.reasons = QtWidgets.QLabel("", objectName="verdictReasons", wordWrap=True)
        self.reasons.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay.addWidget(self.reasons)
        self.stepper_btn = QtWidgets.QPushButton("Open the responsible pair in the stepper", objectName="verdictStep",
                                                 enabled=False)
        lay.addWidget(self.stepper_btn)
        lay.addStretch(1)
        self.run_btn.clicked.connect(self.run)
        self.stepper_btn.clicked.connect(self._open)
        session.frame_changed.connect(self._on_frame)
        session.scene_changed.connect(self.clear)

    def clear(self):
        self.check = self.target = None
        self.table.setRowCount(0)
        self.reasons.setText("")
        self.target_label.setText("—")
        self.stepper_btn.setEnabled(False)

    def _on_frame(self, view):
        if self.check is not None:
            self.target_label.setText(self.target_label.text().split(" <i>(")[0] + " <i>(frame changed: check "
                                      "again)</i>")
        if self.auto.isChecked() and not view.playing and self.isVisible():
            self.run()

    def run(self):
        s = self.session
        if s.scene is None or s.result is None or not s.scene.pairs:
            return None
        target = verdict_target(s.scene, s.result, s.selected_pair, self._contacts(), self._row())
        if target is None:
            self.clear()
            self.target_label.setText("no link pair of this body pair was tested exactly in this frame")
            return None
        check = guarded(self, "Verdict", run_verdict, s.scene, s.frame, target, s.bv)
        if check is None:
            return None
        self.check, self.target = check, target
        self._show(check, target)
        if check.disagreements and self.follow.isChecked():
            self._open()
        return check

    def _show(self, check, target):
        bad = {d.engine for d in check.disagreements}
        self.target_label.setText(f"frame {self.session.frame}: <b>{target.label}</b> — exact: {check.exact}")
        self.table.setRowCount(len(check.verdicts))
        for r, (name, v) in enumerate(check.verdicts.items()):
            value = f"depth {v.depth:.4g}" if v.hit else f"distance {v.distance:.6g}"
            t = f"{v.time * 1e6:.0f} µs" if v.time < 1e-3 else f"{v.time * 1e3:.1f} ms"
            for c, text in enumerate((name, "yes" if v.hit else "no", str(v.n_contacts), value, t, v.note)):
                item = QtWidgets.QTableWidgetItem(text)
                if name in bad:
                    item.setBackground(DISAGREE_BG)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        if check.disagreements:
            lines = [f"<b>{d.engine}</b>: <i>{d.reason.replace('_', ' ')}</i> — {d.message}"
                     + (f" [triangles {d.pair[0]} / {d.pair[1]}]" if d.pair is not None else "")
                     for d in check.disagreements]
            self.reasons.setText("<br>".join(lines))
        else:
            skipped = "".join(f"<br>({k}: {v})" for k, v in check.skipped.items())
            self.reasons.setText(f"every engine agrees with the exact answer (touching tolerance "
                                 f"{check.tolerance:.2g}){skipped}")
        self.stepper_btn.setEnabled(bool(check.disagreements))

    def _open(self):
        if self.check is None or self.target is None:
            return
        self.open_in_stepper.emit(self.target, self.check.responsible_pair())
