"""Live timings: t_update, t_test, t_query, t_total per frame over the last frames, the
frame's counters, and the histogram of the axes that separated node pairs (SAT exits).

Plotting never dominates the frame loop: frames only mark the panel dirty, a single-shot
timer repaints at most ``max_rate`` times per second, the curves and the bar item are
created once and only get ``setData`` / ``setOpts``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from cdcore import AXIS_NAMES

from ..model.session import HISTORY

SERIES = (("t_update", "update", "#1f77b4"), ("t_test", "test", "#ff7f0e"), ("t_query", "query", "#2ca02c"),
          ("t_total", "total", "#d62728"))
COUNTERS = (("bv_tests", "BV tests"), ("prim_tests", "primitive tests"), ("n_exact", "#exact"),
            ("n_false", "#false"), ("contacts", "contacts"), ("fps", "loop fps"))


def axis_short_names() -> list[str]:
    """Tick labels for ``AXIS_NAMES``, two or three characters so that 16 fit under the
    bars: "a0" (A's face normal 0), "b2", "01" (a0 x b1), "sph" (the sphere test)."""
    out = []
    for n in AXIS_NAMES:
        short = n.split(" (")[0]
        if " x " in short:
            a, b = short.split(" x ")
            short = a[1:] + b[1:]
        out.append("sph" if short.startswith("sphere") else short)
    return out


def frame_axis_hist(result) -> np.ndarray:
    """(16,) exits of the frame: broad + exact ``axis_hist`` summed over the body pairs."""
    h = np.zeros(len(AXIS_NAMES), dtype=np.int64)
    if result is not None:
        for p in result.pairs:
            h += p.broad.axis_hist
            h += p.exact.axis_hist
    return h


class TimingPanel(QtWidgets.QWidget):
    def __init__(self, session, parent=None, max_rate: float = 30.0):
        super().__init__(parent)
        self.session = session
        # side by side: a bottom dock is wide and short
        lay = QtWidgets.QHBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)

        # ---- times per frame -------------------------------------------------------
        left = QtWidgets.QVBoxLayout()
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("last"))
        self.window = QtWidgets.QSpinBox(objectName="timingWindow", minimum=10, maximum=HISTORY, value=HISTORY,
                                         suffix=" frames", toolTip="Frames shown in the plot")
        self.window.valueChanged.connect(lambda _v: self.refresh())
        top.addWidget(self.window)
        top.addStretch(1)
        left.addLayout(top)
        self.plot = pg.PlotWidget(objectName="timingPlot")
        pi = self.plot.getPlotItem()
        pi.addLegend(offset=(5, 5), colCount=4)
        pi.setDownsampling(auto=True, mode="peak")
        pi.setClipToView(True)
        pi.showGrid(x=True, y=True, alpha=0.3)
        pi.setLabel("left", "µs per frame")
        pi.getAxis("left").enableAutoSIPrefix(False)  # never "µs (x1000)": the unit is in the label
        pi.setLabel("bottom", "frames ago (0: newest)")
        self.curves = {key: pi.plot([], [], pen=pg.mkPen(color, width=1.5), name=label)
                       for key, label, color in SERIES}
        left.addWidget(self.plot, 1)
        lay.addLayout(left, 3)

        # ---- counters of the current frame ------------------------------------------
        grid = QtWidgets.QGridLayout()
        self.labels: dict[str, QtWidgets.QLabel] = {}
        for k, (key, text) in enumerate(COUNTERS):
            grid.addWidget(QtWidgets.QLabel(text + ":"), k, 0)
            lab = QtWidgets.QLabel("–", objectName=f"counter_{key}")
            lab.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
            lab.setMinimumWidth(lab.fontMetrics().horizontalAdvance("0,000,000") + 6)
            grid.addWidget(lab, k, 1)
            self.labels[key] = lab
        grid.setRowStretch(len(COUNTERS), 1)
        lay.addLayout(grid)

        # ---- SAT exit axes of the current frame ----------------------------------------
        right = QtWidgets.QVBoxLayout()
        self.axis_plot = pg.PlotWidget(objectName="axisPlot")
        ap = self.axis_plot.getPlotItem()
        ap.setLabel("left", "separated pairs")
        ap.setTitle("exit axis (current frame; ij: a<sub>i</sub> × b<sub>j</sub>)")
        ap.setMouseEnabled(x=False, y=False)
        self._axis_x = np.arange(len(AXIS_NAMES), dtype=float)
        self.bars = pg.BarGraphItem(x=self._axis_x, height=np.zeros(len(AXIS_NAMES)), width=0.8, brush="#4c72b0")
        ap.addItem(self.bars)
        ap.getAxis("bottom").setTicks([list(zip(self._axis_x, axis_short_names()))])
        ap.setXRange(-0.6, len(AXIS_NAMES) - 0.4, padding=0)
        self.axis_plot.setToolTip("\n".join(f"{s}: {n}" for s, n in zip(axis_short_names(), AXIS_NAMES)))
        right.addWidget(self.axis_plot, 1)
        # no word wrap: the scroll area would size the panel by its preferred height
        self.axis_label = QtWidgets.QLabel("", objectName="axisTop")
        right.addWidget(self.axis_label)
        lay.addLayout(right, 2)
        self.axis_hist = np.zeros(len(AXIS_NAMES), dtype=np.int64)
        self.setMinimumHeight(160)

        # ---- coalesced repaint -----------------------------------------------------------
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(max(1, int(round(1000.0 / max_rate))))
        self._timer.timeout.connect(self.refresh)
        session.frame_changed.connect(self._on_frame)
        session.scene_changed.connect(self._on_scene)
        self.refresh()

    # ---- slots -------------------------------------------------------------------------
    def _on_frame(self, _record=None):
        try:
            if not self._timer.isActive():
                self._timer.start()
        except RuntimeError:  # the widget was deleted while the session lives on
            self.session.frame_changed.disconnect(self._on_frame)
            self.session.scene_changed.disconnect(self._on_scene)

    def _on_scene(self):
        self._on_frame()

    def series(self, key: str) -> np.ndarray:
        """The y data of one curve (µs), as last set."""
        y = self.curves[key].yData
        return np.zeros(0) if y is None else np.asarray(y)

    def refresh(self) -> None:
        """Repaint now from the session (history, current record and result)."""
        self._timer.stop()
        s = self.session
        hist = s.history
        n = min(len(hist), self.window.value())
        rows = list(itertools.islice(hist, len(hist) - n, None))
        x = np.arange(-n + 1, 1, dtype=float)
        if n:
            us = np.array([(r.t_update, r.t_test, r.t_query, r.t_total) for r in rows], dtype=float) * 1e6
        else:
            us = np.zeros((0, 4))
        for k, (key, _label, _color) in enumerate(SERIES):
            self.curves[key].setData(x, us[:, k])
        rec = s.record if s.record is not None else (rows[-1] if rows else None)
        if rec is None:
            for lab in self.labels.values():
                lab.setText("–")
        else:
            for key, lab in self.labels.items():
                if key == "fps":
                    fps = [r.fps for r in rows[-10:] if r.fps > 0]
                    lab.setText(f"{np.mean(fps):.1f}" if fps else "–")
                else:
                    lab.setText(f"{getattr(rec, key):,}")
        self.axis_hist = frame_axis_hist(s.result)
        self.bars.setOpts(height=self.axis_hist.astype(float))
        tot = int(self.axis_hist.sum())
        if tot:
            top = int(np.argmax(self.axis_hist))
            self.axis_label.setText(f"{tot:,} separated node pairs; most by {AXIS_NAMES[top]} "
                                    f"({100.0 * self.axis_hist[top] / tot:.0f} %)")
        else:
            self.axis_label.setText("no separated node pairs")
