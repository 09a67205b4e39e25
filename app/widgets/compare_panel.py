"""Compare mode: 2-4 update methods run side by side on the session's frames; their
t_total per frame overlaid, and the CAB tables' cumulative totals with the cost breakdown
T = N_v C_v + N_p C_p, updated live (coalesced like the timing panel)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from cdcore.articulated import METHOD_LABELS, UPDATE_METHODS

from .tables import fit_columns
from .plots import curve_pen, light_grid
from ..model.compare import MAX_METHODS, MIN_METHODS, CompareModel

COLORS = {"aabb_plus": "#9467bd", "aabb_star": "#ff7f0e", "obb": "#1f77b4", "cab": "#d62728", "cab_sum": "#2ca02c"}
DEFAULT_METHODS = ("aabb_star", "obb", "cab")
COLUMNS = ("method", "#coll", "#false", "t_upd (ms)", "t_test (ms)", "t_query (ms)", "t_total (ms)", "N_v",
           "C_v (µs)", "N_p", "C_p (µs)")  # cumulative totals: ms; per test: µs


class ComparePanel(QtWidgets.QWidget):
    def __init__(self, session, parent=None, max_rate: float = 30.0):
        super().__init__(parent)
        self.session = session
        self._model = None  # the CompareModel whose ``changed`` we listen to
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)

        row = QtWidgets.QHBoxLayout()
        self.enable = QtWidgets.QCheckBox("Compare", objectName="compareEnable",
                                          toolTip="Run the checked update methods side by side on every frame")
        row.addWidget(self.enable)
        self.checks: dict[str, QtWidgets.QCheckBox] = {}
        for m in UPDATE_METHODS:
            cb = QtWidgets.QCheckBox(METHOD_LABELS[m], objectName=f"compare_{m}")
            cb.setChecked(m in DEFAULT_METHODS)
            cb.toggled.connect(self._methods_changed)
            self.checks[m] = cb
            row.addWidget(cb)
        self.reset_btn = QtWidgets.QPushButton("Reset totals", objectName="compareReset")
        self.reset_btn.setSizePolicy(QtWidgets.QSizePolicy.Policy.Minimum, QtWidgets.QSizePolicy.Policy.Fixed)
        self.reset_btn.clicked.connect(self.reset)
        row.addStretch(1)
        row.addWidget(self.reset_btn)
        lay.addLayout(row)
        self.status = QtWidgets.QLabel("", objectName="compareStatus")
        lay.addWidget(self.status)

        self.plot = pg.PlotWidget(objectName="comparePlot")
        pi = self.plot.getPlotItem()
        self.legend = pi.addLegend(offset=(5, 5))
        pi.setDownsampling(auto=True, mode="peak")
        pi.setClipToView(True)
        light_grid(pi)
        pi.setLabel("left", "t_total, µs per frame")
        pi.getAxis("left").enableAutoSIPrefix(False)  # never "ms (x0.001)": the unit is in the label
        pi.setLabel("bottom", "frames ago (0: newest)")
        # one curve per method, created once; the inactive ones are hidden and empty
        self.curves = {m: pg.PlotDataItem([], [], pen=curve_pen(COLORS[m]), name=METHOD_LABELS[m])
                       for m in UPDATE_METHODS}
        for c in self.curves.values():
            pi.addItem(c)
            c.setVisible(False)
        self.legend.clear()
        body = QtWidgets.QHBoxLayout()  # side by side: a bottom dock is wide and short
        body.addWidget(self.plot, 2)
        lay.addLayout(body, 1)

        self.table = QtWidgets.QTableWidget(0, len(COLUMNS), objectName="compareTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        fit_columns(self.table)
        self.table.setToolTip("Cumulative since compare mode was (re)started. N_v: BV tests, C_v: time per BV test "
                              "((t_test + exact BV time) / N_v); N_p: triangle tests, C_p: time per triangle test; "
                              "N_v C_v + N_p C_p = t_test + t_query")
        self.table.setSizeAdjustPolicy(QtWidgets.QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents)
        body.addWidget(self.table, 3)

        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(max(1, int(round(1000.0 / max_rate))))
        self._timer.timeout.connect(self.refresh)
        self.enable.toggled.connect(self.set_enabled)
        session.frame_changed.connect(self._schedule)
        session.scene_changed.connect(self._schedule)
        self.refresh()

    # ---- state -----------------------------------------------------------------------
    def selected_methods(self) -> list[str]:
        return [m for m in UPDATE_METHODS if self.checks[m].isChecked()]

    def set_enabled(self, on: bool) -> None:
        """Turn compare mode on (a new ``CompareModel`` of the checked methods, rebuilt on
        the session's scene and run on its current frame) or off (``session.compare = None``)."""
        s = self.session
        if on:
            try:
                model = CompareModel(self.selected_methods())
            except ValueError as exc:
                self.status.setText(f"choose {MIN_METHODS} to {MAX_METHODS} methods ({exc})")
                self._sync_enable(s.compare is not None)
                return
            s.compare = model
            model.rebuild(s)
            if s.scene is not None:
                model.step(s.frame)
            self.status.setText("")
        else:
            s.compare = None
        self.refresh()

    def _methods_changed(self, _checked=None):
        if self.session.compare is not None:
            methods = self.selected_methods()
            if MIN_METHODS <= len(methods) <= MAX_METHODS:
                self.set_enabled(True)
            else:
                self.status.setText(f"choose {MIN_METHODS} to {MAX_METHODS} methods; still comparing "
                                    + ", ".join(METHOD_LABELS[m] for m in self.session.compare.methods))

    def reset(self) -> None:
        if self.session.compare is not None:
            self.session.compare.reset()
        self.refresh()

    def _sync_enable(self, on: bool):
        self.enable.blockSignals(True)
        self.enable.setChecked(on)
        self.enable.blockSignals(False)

    def _watch(self, model):
        if model is self._model:
            return
        if self._model is not None:
            self._model.changed.disconnect(self._schedule)
        self._model = model
        if model is not None:
            model.changed.connect(self._schedule)
        # legend: the compared methods only (changes with the mode, not per frame)
        self.legend.clear()
        for m in UPDATE_METHODS:
            active = model is not None and m in model.methods
            self.curves[m].setVisible(active)
            if active:
                self.legend.addItem(self.curves[m], METHOD_LABELS[m])
            else:
                self.curves[m].setData([], [])

    def _schedule(self, *_args):
        try:
            if not self._timer.isActive():
                self._timer.start()
        except RuntimeError:  # the widget was deleted while the session lives on
            self.session.frame_changed.disconnect(self._schedule)
            self.session.scene_changed.disconnect(self._schedule)
            if self._model is not None:
                self._model.changed.disconnect(self._schedule)

    # ---- view ------------------------------------------------------------------------
    def refresh(self) -> None:
        """Repaint now: curves and the totals table of ``session.compare``."""
        self._timer.stop()
        model = self.session.compare
        self._sync_enable(model is not None)
        self._watch(model)
        if model is None:
            self.table.setRowCount(0)
            return
        for m in model.methods:
            y = np.asarray(model.series(m, "t_total"), dtype=float) * 1e6  # µs
            self.curves[m].setData(np.arange(-len(y) + 1, 1, dtype=float), y)
        totals = model.totals()
        self.table.setRowCount(len(totals))
        for r, t in enumerate(totals.values()):
            cells = (t.label, f"{t.n_coll:,}", f"{t.n_false:,}", f"{t.t_update * 1e3:.2f}", f"{t.t_test * 1e3:.2f}",
                     f"{t.t_query * 1e3:.2f}", f"{t.t_total * 1e3:.2f}", f"{t.n_v:,}", f"{t.c_v * 1e6:.3f}",
                     f"{t.n_p:,}", f"{t.c_p * 1e6:.3f}")
            for c, text in enumerate(cells):
                item = self.table.item(r, c)
                if item is None:
                    item = QtWidgets.QTableWidgetItem()
                    if c:
                        item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(r, c, item)
                item.setText(text)
