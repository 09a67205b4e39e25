"""Live timings: t_update, t_test, t_query, t_total per frame over the last frames (or the
frame-time breakdown: engine, model, draw, render, Qt), the frame's counters, and the
histogram of the axes that separated node pairs (SAT axes, or k-DOP slab directions).

Frames that paid a first-use kernel compile (``FrameRecord.warm`` False) are left out of
the plot and the medians (they are 10-100x the others and flattened every curve); the
y range is clipped to the 98th percentile of what is shown (or log scale).

Plotting never dominates the frame loop: frames only mark the panel dirty, a single-shot
timer repaints at most ``max_rate`` times per second (or the window drives ``refresh``
from its own read-out tick: ``driven=True``), the curves and the bar item are created
once and only get ``setData`` / ``setOpts``.
"""
from __future__ import annotations

import itertools
import time

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from cdcore import AXIS_NAMES
from cdcore.bv.kdop import KDOP_AXIS_NAMES

from .plots import curve_pen, light_grid, x_span
from ..model.readout import fps_readout
from ..model.session import HISTORY

SERIES = (("t_update", "update", "#1f77b4"), ("t_test", "test", "#ff7f0e"), ("t_query", "query", "#2ca02c"),
          ("t_total", "total", "#d62728"))
# the frame-time breakdown (ms): the collision loop, the app's model work, updating the
# actors, the 3-D render, and Qt (events, widgets, painting)
BREAKDOWN = (("t_engine", "engine", "#d62728"), ("t_model", "model", "#9467bd"), ("t_draw", "draw", "#8c564b"),
             ("t_render", "3-D render", "#1f77b4"), ("t_qt", "Qt", "#7f7f7f"))
PLOT_PERIOD = 0.25  # s between plot refreshes while playing (the numbers refresh at the window's read-out rate)
COUNTERS = (("bv_tests", "BV tests"), ("prim_tests", "primitive tests"), ("n_exact", "#exact"),
            ("n_false", "#false"), ("contacts", "contacts"), ("fps", "loop fps"))


AXIS_TITLE_SIZE = "9pt"  # the histogram's title fits its plot at 1366x768


def _small_font():
    f = QtGui.QFont()
    f.setPointSize(7)
    return f


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


def frame_axis_hist(result, bv: str | None = None) -> np.ndarray:
    """(16,) exits of the frame: broad + exact ``axis_hist`` summed over the body pairs;
    for k-DOP mesh hierarchies (``bv`` "kdopN") the exact queries' slab exits only, (k/2,)
    (their ids are A's slab directions, not SAT axes)."""
    if bv in KDOP_AXIS_NAMES:
        names = KDOP_AXIS_NAMES[bv]
        h = np.zeros(len(names), dtype=np.int64)
        if result is not None:
            for p in result.pairs:
                h += p.exact.axis_hist[:len(names)]
        return h
    h = np.zeros(len(AXIS_NAMES), dtype=np.int64)
    if result is not None:
        for p in result.pairs:
            h += p.broad.axis_hist
            h += p.exact.axis_hist
    return h


def axis_labels(bv: str | None) -> tuple[list[str], list[str], str]:
    """(tick labels, full names, title) of the exit histogram for mesh BV type ``bv``."""
    if bv in KDOP_AXIS_NAMES:
        names = list(KDOP_AXIS_NAMES[bv])
        return [n.split(" ")[0] for n in names], names, f"exit slab ({bv}, exact queries)"
    return axis_short_names(), list(AXIS_NAMES), "exit axis (ij: a<sub>i</sub>×b<sub>j</sub>)"


class TimingPanel(QtWidgets.QWidget):
    def __init__(self, session, parent=None, max_rate: float = 30.0, driven: bool = False):
        super().__init__(parent)
        self.session = session
        self.driven = driven
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
        self.mode = QtWidgets.QComboBox(objectName="timingMode", toolTip="What the plot shows")
        self.mode.addItems(["query times", "frame breakdown"])
        self.mode.currentIndexChanged.connect(self._mode_changed)
        top.addWidget(self.mode)
        self.log = QtWidgets.QCheckBox("log", objectName="timingLog", toolTip="Logarithmic time axis")
        self.log.toggled.connect(lambda on: (self.plot.getPlotItem().setLogMode(y=on), self.refresh()))
        top.addWidget(self.log)
        top.addStretch(1)
        left.addLayout(top)
        self.plot = pg.PlotWidget(objectName="timingPlot")
        pi = self.plot.getPlotItem()
        pi.addLegend(offset=(5, 5), colCount=4)
        pi.setDownsampling(auto=True, mode="peak")
        pi.setClipToView(True)
        light_grid(pi)
        pi.setLabel("left", "µs per frame")
        pi.getAxis("left").enableAutoSIPrefix(False)  # never "µs (x1000)": the unit is in the label
        pi.setLabel("bottom", "frames ago (0: newest)")
        self.curves = {key: pi.plot([], [], pen=curve_pen(color), name=label)
                       for key, label, color in SERIES + BREAKDOWN}
        for key, _l, _c in BREAKDOWN:
            self.curves[key].setVisible(False)
        self._legend = pi.legend
        left.addWidget(self.plot, 1)
        # the medians of the frame-time breakdown, always shown (no wrap: see axis_label)
        self.breakdown = QtWidgets.QLabel("", objectName="timingBreakdown")
        self.breakdown.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        _no_width_hint(self.breakdown)
        f = self.breakdown.font()
        f.setPointSizeF(f.pointSizeF() * 0.9)  # the longest breakdowns fit the column at 1366x768
        self.breakdown.setFont(f)
        self.breakdown.setFixedHeight(self.breakdown.fontMetrics().height() + 4)
        left.addWidget(self.breakdown)
        lay.addLayout(left, 3)

        # ---- counters of the current frame ------------------------------------------
        grid = QtWidgets.QGridLayout()
        self.labels: dict[str, QtWidgets.QLabel] = {}
        for k, (key, text) in enumerate(COUNTERS):
            grid.addWidget(QtWidgets.QLabel(text + ":"), k, 0)
            lab = QtWidgets.QLabel("–", objectName=f"counter_{key}")
            lab.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
            # fixed size: a new number repaints the label, no layout pass (see playback.py)
            lab.setFixedSize(lab.fontMetrics().horizontalAdvance("0,000,000") + 6, lab.sizeHint().height())
            grid.addWidget(lab, k, 1)
            self.labels[key] = lab
        grid.setRowStretch(len(COUNTERS), 1)
        lay.addLayout(grid)

        # ---- SAT exit axes of the current frame ----------------------------------------
        right = QtWidgets.QVBoxLayout()
        self.axis_plot = pg.PlotWidget(objectName="axisPlot")
        ap = self.axis_plot.getPlotItem()
        ap.setLabel("left", "separated pairs")
        ap.setTitle(axis_labels(None)[2], size=AXIS_TITLE_SIZE)
        # 16 tick labels under a plot ~330 px wide at 1366x768: a small font keeps them apart
        ap.getAxis("bottom").setStyle(tickFont=_small_font())
        ap.setMouseEnabled(x=False, y=False)
        self._axis_x = np.arange(len(AXIS_NAMES), dtype=float)
        self.bars = pg.BarGraphItem(x=self._axis_x, height=np.zeros(len(AXIS_NAMES)), width=0.8, brush="#4c72b0")
        ap.addItem(self.bars)
        ap.getAxis("bottom").setTicks([list(zip(self._axis_x, axis_short_names()))])
        ap.setXRange(-0.6, len(AXIS_NAMES) - 0.1, padding=0)  # room for the last tick label
        self.axis_plot.setToolTip("\n".join(f"{s}: {n}" for s, n in zip(axis_short_names(), AXIS_NAMES)))
        right.addWidget(self.axis_plot, 1)
        # no word wrap: the scroll area would size the panel by its preferred height
        self.axis_label = QtWidgets.QLabel("", objectName="axisTop")
        _no_width_hint(self.axis_label)
        right.addWidget(self.axis_label)
        lay.addLayout(right, 2)
        self.axis_hist = np.zeros(len(AXIS_NAMES), dtype=np.int64)
        self.setMinimumHeight(160)

        # ---- coalesced repaint -----------------------------------------------------------
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(max(1, int(round(1000.0 / max_rate))))
        self._timer.timeout.connect(self.refresh)
        if not driven:
            session.frame_changed.connect(self._on_frame)
            session.scene_changed.connect(self._on_scene)
        self._axis_bv = None
        self._y_top = None  # the clipped y range's top, once set
        self._plotted = float("-inf")  # when the plots were last refreshed
        self._x_window = None  # the frames the x range shows
        self._bar_top = 0.0  # the exit histogram's y range top
        self._mode_changed()

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
        """The y data of one curve (µs; ms for the breakdown), as last set."""
        y = self.curves[key].yData
        return np.zeros(0) if y is None else np.asarray(y)

    def _mode_changed(self, *_):
        breakdown = self.mode.currentIndex() == 1
        pi = self.plot.getPlotItem()
        self._legend.clear()
        for keys, on in ((SERIES, not breakdown), (BREAKDOWN, breakdown)):
            for key, label, _c in keys:
                self.curves[key].setVisible(on)
                if on:
                    self._legend.addItem(self.curves[key], label)
        pi.setLabel("left", "ms per frame" if breakdown else "µs per frame")
        self.refresh()

    def refresh(self, plot_period: float = 0.0) -> None:
        """Repaint now from the session (history, current record and result). While the
        session plays, the plots follow at most every ``plot_period`` s (the window's
        read-out passes ``PLOT_PERIOD``; the counters and the breakdown follow every call):
        a plot refresh paints both plots 3-4 times (pyqtgraph re-ticks its axes during the
        paint), the dearest read-out of a frame."""
        self._timer.stop()
        s = self.session
        hist = s.history
        n = min(len(hist), self.window.value())
        rows = list(itertools.islice(hist, len(hist) - n, None))
        warm = [r for r in rows if r.warm]
        now = time.perf_counter()
        plots = not s.playing or now - self._plotted >= plot_period
        if plots:
            self._plotted = now
            x = np.arange(-len(warm) + 1, 1, dtype=float)
            breakdown = self.mode.currentIndex() == 1
            keys, scale = (BREAKDOWN, 1e3) if breakdown else (SERIES, 1e6)
            y = np.array([[getattr(r, k) for k, _l, _c in keys] for r in warm],
                         dtype=float).reshape(-1, len(keys)) * scale
            for k, (key, _label, _color) in enumerate(keys):
                self.curves[key].setData(x, y[:, k])
            self._clip(y)
            # an x range that steps (50, 100, 200 ... frames, up to the window): a range
            # following the data re-ticked the axis on every refresh (~10 ms a refresh)
            span = x_span(len(warm), self.window.value())
            if self._x_window != span:
                self._x_window = span
                self.plot.getPlotItem().setXRange(-span + 1, 0, padding=0.01)
        cold = len(rows) - len(warm)
        text = self.breakdown_text(warm) + (f" · {cold} compile frame{'s' * (cold != 1)} out" if cold else "")
        if self.breakdown.text() != text:
            self.breakdown.setText(text)
            self.breakdown.setToolTip(text + "\n\nMedians over the frames shown, played frames only: the collision "
                                      "loop "
                                      "(engine), the app's model work, updating the actors (draw), the 3-D "
                                      "view's render, and Qt (events, widgets, composing the window). Frames that "
                                      "paid a kernel compile are left out of the plot and the medians.")
        rec = s.record if s.record is not None else (rows[-1] if rows else None)
        if rec is None:
            for lab in self.labels.values():
                lab.setText("–")
        else:
            for key, lab in self.labels.items():
                if key == "fps":
                    fps = fps_readout(hist)
                    lab.setText(f"{fps:.1f}" if fps > 0 else "–")
                else:
                    lab.setText(f"{getattr(rec, key):,}")
        bv = s.bv
        if bv != self._axis_bv:  # the histogram's axes follow the BV type
            self._axis_bv = bv
            ticks, names, title = axis_labels(bv)
            self._axis_x = np.arange(len(names), dtype=float)
            self._axis_names = names
            ap = self.axis_plot.getPlotItem()
            ap.setTitle(title, size=AXIS_TITLE_SIZE)
            ap.getAxis("bottom").setTicks([list(zip(self._axis_x, ticks))])
            ap.setXRange(-0.6, len(names) - 0.1, padding=0)
            self.axis_plot.setToolTip("\n".join(f"{t}: {n}" for t, n in zip(ticks, names)))
        self.axis_hist = frame_axis_hist(s.result, bv)
        if plots:
            self.bars.setOpts(x=self._axis_x, height=self.axis_hist.astype(float))
            # the bars' y range only grows past its top or halves (no re-ticking per refresh)
            top = float(self.axis_hist.max()) if self.axis_hist.size else 0.0
            if top > self._bar_top or top < 0.5 * self._bar_top:
                self._bar_top = max(top * 1.15, 1.0)
                self.axis_plot.getPlotItem().setYRange(0, self._bar_top, padding=0)
        tot = int(self.axis_hist.sum())
        if tot:
            top = int(np.argmax(self.axis_hist))
            self._set_axis_text(f"{tot:,} separated node pairs; most by {self._axis_names[top]} "
                                f"({100.0 * self.axis_hist[top] / tot:.0f} %)")
        else:
            self._set_axis_text("no separated node pairs")

    def _set_axis_text(self, text: str) -> None:
        if self.axis_label.text() != text:
            self.axis_label.setText(text)
            self.axis_label.setToolTip(text)

    def _clip(self, y: np.ndarray) -> None:
        """Clip the y range to the 98th percentile (x 1.3) of what is shown: one slow frame
        no longer flattens every curve. Log scale: automatic."""
        pi = self.plot.getPlotItem()
        if self.log.isChecked() or not y.size:
            pi.enableAutoRange(axis="y")
            self._y_top = None
            return
        top = float(np.percentile(y, 98)) * 1.3
        if top <= 0:
            return
        # a new range re-ticks both axes and lays the plot out again (~3 ms a refresh):
        # only when the clipped top leaves [75 %, 100 %] of the shown range, with 10 % room
        vb = pi.getViewBox()
        shown = vb.viewRange()[1][1]
        if self._y_top is None or vb.autoRangeEnabled()[1] or not 0.75 * shown <= top <= shown:
            pi.setYRange(0.0, top * 1.1, padding=0)
            self._y_top = top

    @staticmethod
    def breakdown_text(rows) -> str:
        """"frame 33.1 ms = engine 0.3 + model 1.2 + …" (medians over ``rows`` of playback)."""
        played = [r for r in rows if r.t_frame > 0]
        if not played:
            return "frame breakdown: play to measure"
        med = {k: float(np.median([getattr(r, k) for r in played])) * 1e3
               for k in ("t_frame", "t_engine", "t_model", "t_draw", "t_render", "t_qt")}
        return (f"frame {med['t_frame']:.0f} ms = engine {med['t_engine']:.1f} + model {med['t_model']:.1f}"
                f" + draw {med['t_draw']:.1f} + render {med['t_render']:.0f} + Qt {med['t_qt']:.0f}")


def _no_width_hint(label: QtWidgets.QLabel) -> None:
    """A one-line read-out label whose text never sizes the panel: its width is the column's
    (the plot above it) and its height one line. A label's minimum width follows its text, so
    a longer number made the Timing dock's scroll area wider, which re-laid out and repainted
    the *whole window* (every ~8 frames on hand-ball, ~28 ms each under software GL). A text
    longer than the column is cut at its end; the tooltip has it whole."""
    label.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Fixed)
    label.setFixedHeight(label.fontMetrics().height() + 2 * label.margin() + 2)
