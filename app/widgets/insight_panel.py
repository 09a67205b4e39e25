"""Insight: ground truth (brute force vs the BVH on the current frame), refit quality
(current volumes vs a fresh fit, per body and level) and the heat map (how often nodes are
tested: a toggle for the 3D view, the window in frames, and per-level statistics)."""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from ..model.insight import ground_truth, heat_summary, refit_quality
from .errors import guarded
from .tables import fit_columns as _fit_columns

_OK_STYLE = "color: #1a7f37; font-weight: bold;"
_BAD_STYLE = "color: #c62828; font-weight: bold;"


def _item(text, right=False):
    it = QtWidgets.QTableWidgetItem(text)
    if right:
        it.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
    return it


class InsightPanel(QtWidgets.QWidget):
    #: [(body, link, [triangle ids])] of a ground-truth mismatch (empty: clear highlights);
    #: an empty triangle list means the whole link
    highlight_requested = QtCore.Signal(list)
    #: show / hide the heat map in the 3D view
    heat_toggled = QtCore.Signal(bool)

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.last_ground_truth = None
        self.last_refit = None
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(2, 2, 2, 2)
        # three tabs, each with the dock's whole height: stacked, the refit table showed half a
        # row and the heat section sat below the fold at 1366x768
        self.tabs = QtWidgets.QTabWidget(objectName="insightTabs")
        self.tabs.setDocumentMode(True)
        outer.addWidget(self.tabs)

        # ---- ground truth --------------------------------------------------------------
        gt_box = QtWidgets.QGroupBox("Ground truth (current frame)")
        gl = QtWidgets.QVBoxLayout(gt_box)
        row = QtWidgets.QHBoxLayout()
        self.gt_btn = QtWidgets.QPushButton("Check ground truth", objectName="groundTruthButton",
                                            toolTip="Brute force every triangle pair against the BVH's contacts")
        self.gt_pair = QtWidgets.QComboBox(objectName="groundTruthPair")
        self.gt_status = QtWidgets.QLabel("", objectName="groundTruthStatus")
        self.gt_status.setWordWrap(True)
        row.addWidget(self.gt_btn)
        row.addWidget(self.gt_pair, 1)
        gl.addLayout(row)
        gl.addWidget(self.gt_status)  # its own line: "MISMATCH: … (frame, time)" is long
        self.gt_text = QtWidgets.QPlainTextEdit(objectName="groundTruthText", readOnly=True)
        self.gt_text.setLineWrapMode(QtWidgets.QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.gt_text.setMaximumBlockCount(2000)
        gl.addWidget(self.gt_text, 1)
        self.tabs.addTab(gt_box, "Ground truth")

        # ---- refit quality ---------------------------------------------------------------
        rq_box = QtWidgets.QGroupBox("Refit quality (current volume / fresh fit)")
        rl = QtWidgets.QVBoxLayout(rq_box)
        row = QtWidgets.QHBoxLayout()
        self.refit_btn = QtWidgets.QPushButton("Refit quality", objectName="refitButton")
        self.refit_summary = QtWidgets.QLabel("", objectName="refitSummary")
        self.refit_summary.setWordWrap(True)
        row.addWidget(self.refit_btn)
        row.addStretch(1)
        rl.addLayout(row)
        rl.addWidget(self.refit_summary)
        self.rebuild_label = QtWidgets.QLabel("REBUILD RECOMMENDED", objectName="rebuildLabel")
        self.rebuild_label.setStyleSheet("color: white; background: #c62828; font-weight: bold; font-size: 14px; "
                                         "padding: 4px;")
        self.rebuild_label.setWordWrap(True)
        self.rebuild_label.setVisible(False)
        rl.addWidget(self.rebuild_label)
        self.refit_table = QtWidgets.QTableWidget(0, 6, objectName="refitTable")
        self.refit_table.setHorizontalHeaderLabels(["body", "tree", "level", "ratio", "current", "fresh"])
        self.refit_table.setToolTip("ratio: current volume / volume of a fresh fit, per level")
        self.refit_table.verticalHeader().setVisible(False)
        self.refit_table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.refit_table.horizontalHeader().setSectionResizeMode(
            QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        _fit_columns(self.refit_table)
        rl.addWidget(self.refit_table, 1)  # the table takes the tab's height
        self.tabs.addTab(rq_box, "Refit quality")

        # ---- heat map ----------------------------------------------------------------------
        heat_box = QtWidgets.QGroupBox("Heat map (node tests)")
        hl = QtWidgets.QVBoxLayout(heat_box)
        row = QtWidgets.QHBoxLayout()
        self.heat_check = QtWidgets.QCheckBox("Show heat map", objectName="heatToggle")
        self.heat_frames = QtWidgets.QSpinBox(objectName="heatFrames", minimum=1, maximum=10000,
                                              value=int(getattr(session, "heat_frames", 60)), suffix=" frames",
                                              toolTip="Frames the heat map sums over")
        self.heat_body = QtWidgets.QComboBox(objectName="heatBody")
        row.addWidget(self.heat_check)
        row.addWidget(QtWidgets.QLabel("over"))
        row.addWidget(self.heat_frames)
        row.addStretch(1)
        hl.addLayout(row)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("body"))
        row.addWidget(self.heat_body, 1)
        hl.addLayout(row)
        self.heat_table = QtWidgets.QTableWidget(0, 5, objectName="heatTable")
        self.heat_table.setHorizontalHeaderLabels(["level", "nodes", "min", "mean", "max"])
        self.heat_table.verticalHeader().setVisible(False)
        self.heat_table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        _fit_columns(self.heat_table)
        hl.addWidget(self.heat_table, 1)
        self.tabs.addTab(heat_box, "Heat map")

        self.gt_btn.clicked.connect(self.check_ground_truth)
        self.refit_btn.clicked.connect(self.check_refit)
        self.heat_check.toggled.connect(self._heat_toggled)
        self.heat_frames.valueChanged.connect(self.set_heat_frames)
        self.heat_body.currentIndexChanged.connect(lambda _i: self.refresh_heat())
        self._heat_timer = QtCore.QTimer(self)
        self._heat_timer.setSingleShot(True)
        self._heat_timer.setInterval(200)  # the heat table is a slow-moving read-out
        self._heat_timer.timeout.connect(self.refresh_heat)
        session.scene_changed.connect(self._scene_slot)
        session.frame_changed.connect(self._on_frame)
        self._on_scene()

    # ---- session --------------------------------------------------------------------------
    def _scene_slot(self):
        try:
            self._on_scene()
        except RuntimeError:  # the widget was deleted while the session lives on
            self._stop_listening()

    def _stop_listening(self):
        self.session.frame_changed.disconnect(self._on_frame)
        self.session.scene_changed.disconnect(self._scene_slot)

    def _on_scene(self):
        s = self.session
        for combo in (self.gt_pair, self.heat_body):
            combo.blockSignals(True)
            combo.clear()
        if s.scene is not None:
            self.gt_pair.addItem("all body pairs", None)
            for k, (i, j) in enumerate(s.scene.pairs):
                name = (f"{s.scene.bodies[i].name} (self)" if i == j
                        else f"{s.scene.bodies[i].name} / {s.scene.bodies[j].name}")
                self.gt_pair.addItem(name, k)
            for i, b in enumerate(s.scene.bodies):
                self.heat_body.addItem(b.name, i)
        for combo in (self.gt_pair, self.heat_body):
            combo.blockSignals(False)
        self.gt_status.setText("")
        self.gt_status.setStyleSheet("")
        self.gt_text.clear()
        self.rebuild_label.setVisible(False)
        self.refit_table.setRowCount(0)
        self.refit_summary.setText("")
        self.refresh_heat()

    def _on_frame(self, _record=None):
        try:
            if self.heat_check.isChecked() and not self._heat_timer.isActive():
                self._heat_timer.start()
        except RuntimeError:  # the widget was deleted while the session lives on
            self._stop_listening()

    # ---- ground truth ---------------------------------------------------------------------
    def check_ground_truth(self):
        """Run ``ground_truth`` on the current frame, show OK or the mismatches, and emit
        ``highlight_requested`` (empty on OK)."""
        if self.session.scene is None:
            self.gt_status.setText("load a scene first")
            return None
        pair = self.gt_pair.currentData()
        QtWidgets.QApplication.setOverrideCursor(QtGui.QCursor(QtCore.Qt.CursorShape.WaitCursor))
        try:
            gt = guarded(self, "Ground truth", ground_truth, self.session, pair)
        finally:
            QtWidgets.QApplication.restoreOverrideCursor()
        if gt is None:
            return None
        self.last_ground_truth = gt
        if gt.ok:
            text = "OK" + ("" if gt.complete else f" ({len(gt.skipped)} link pairs skipped: too large)")
            self.gt_status.setStyleSheet(_OK_STYLE)
        else:
            n = len(gt.missed_links) + len(gt.spurious_links) + len(gt.missed_tris) + len(gt.spurious_tris)
            text = f"MISMATCH: {n} disagreements"
            self.gt_status.setStyleSheet(_BAD_STYLE)
        self.gt_status.setText(f"{text} (frame {gt.frame}, {gt.seconds:.2f} s)")
        self.gt_text.setPlainText(gt.summary())
        self.highlight_requested.emit(gt.highlights())
        return gt

    # ---- refit quality ---------------------------------------------------------------------
    def check_refit(self):
        if self.session.scene is None:
            self.refit_summary.setText("load a scene first")
            return None
        rq = guarded(self, "Refit quality", refit_quality, self.session)
        if rq is None:
            return None
        self.last_refit = rq
        rows = [(b, d) for b in rq.bodies for d in range(len(b.level_ratio))]
        self.refit_table.setRowCount(len(rows))
        for r, (b, d) in enumerate(rows):
            ratio = b.level_ratio[d]
            cur = b.level_volume[d] if d < len(b.level_volume) else np.nan
            ref = b.level_fresh[d] if d < len(b.level_fresh) else np.nan
            cells = (_item(b.name), _item(f"{b.tree}: {b.current}"), _item(str(d), True),
                     _item("–" if not np.isfinite(ratio) else f"{ratio:.3f}", True),
                     _item(f"{cur:.4g}", True), _item(f"{ref:.4g}", True))
            if np.isfinite(ratio) and ratio > rq.threshold:
                cells[3].setForeground(QtGui.QColor("#c62828"))
            for c, it in enumerate(cells):
                self.refit_table.setItem(r, c, it)
        worst = rq.worst
        self.refit_summary.setText(f"frame {rq.frame}: worst level ratio "
                                   f"{'–' if not np.isfinite(worst) else f'{worst:.2f}'} "
                                   f"(threshold {rq.threshold:g}) in {rq.seconds * 1e3:.0f} ms")
        self.rebuild_label.setText("REBUILD RECOMMENDED\n" + "\n".join(rq.reasons))
        self.rebuild_label.setVisible(rq.rebuild_recommended)
        return rq

    # ---- heat -----------------------------------------------------------------------------
    def _heat_toggled(self, on: bool):
        self.heat_toggled.emit(bool(on))
        self.refresh_heat()

    def set_heat_frames(self, n: int) -> None:
        """How many frames the heat map sums over (keeps the most recent ones)."""
        self.session.set_heat_frames(int(n))
        self.refresh_heat()

    def refresh_heat(self):
        s = self.session
        body = self.heat_body.currentData()
        if body is None or not s.trees or body >= len(s.trees):
            self.heat_table.setRowCount(0)
            return
        levels = heat_summary(s, body)
        self.heat_table.setRowCount(len(levels))
        for r, lv in enumerate(levels):
            for c, text in enumerate((str(lv.level), str(lv.nodes), f"{lv.min:g}", f"{lv.mean:.1f}",
                                      f"{lv.max:g}")):
                self.heat_table.setItem(r, c, _item(text, True))
