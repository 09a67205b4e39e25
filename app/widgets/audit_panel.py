"""The self-collision audit panel: run an audit of the robot (samples, seed; progress and
cancel), then a link x link matrix coloured by collision frequency, SRDF-disabled pairs
marked with x. Clicking a cell poses the robot at that pair's witness configuration with the
two links highlighted and the stepper on the robot's self-collision pair."""
from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from .errors import guarded

CELL = 20  # pixels per matrix cell
NEVER = QtGui.QColor(245, 245, 245)      # 0 collisions
NOT_A_PAIR = QtGui.QColor(90, 90, 90)    # the diagonal, links without geometry
ADJACENT = QtGui.QColor(173, 216, 230)   # parent-child pairs: adjacent, not counted
# viridis-like ramp, light to dark: a pair's fraction on a log scale (1e-6 .. 1)
RAMP = [(253, 231, 37), (122, 209, 81), (34, 168, 132), (42, 120, 142), (65, 68, 135), (68, 1, 84)]


def fraction_color(f: float) -> QtGui.QColor:
    if f is None or math.isnan(f):
        return NOT_A_PAIR
    if f <= 0.0:
        return NEVER
    x = min(1.0, max(0.0, (math.log10(max(f, 1e-6)) + 6.0) / 6.0)) * (len(RAMP) - 1)
    k = min(int(x), len(RAMP) - 2)
    u = x - k
    c = [round(RAMP[k][d] + u * (RAMP[k + 1][d] - RAMP[k][d])) for d in range(3)]
    return QtGui.QColor(*c)


class AuditPanel(QtWidgets.QWidget):
    """Thin binding of ``app.model.audit.AuditModel``; ``highlight_requested`` carries
    [(body, link, triangle ids)] for the window's triangle highlight."""

    highlight_requested = QtCore.Signal(list)

    def __init__(self, model, parent=None):
        super().__init__(parent)
        self.model = model
        lay = QtWidgets.QVBoxLayout(self)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Samples"))
        self.samples = QtWidgets.QSpinBox(objectName="auditSamples")
        self.samples.setRange(1, 100_000_000)
        self.samples.setSingleStep(10_000)
        self.samples.setValue(20_000)
        self.samples.setMaximumWidth(110)
        row.addWidget(self.samples)
        row.addStretch(1)
        lay.addLayout(row)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("Seed"))
        self.seed = QtWidgets.QSpinBox(objectName="auditSeed")
        self.seed.setRange(0, 2_000_000_000)
        self.seed.setMinimumWidth(self.seed.sizeHint().width())  # ten digits, never cut
        row.addWidget(self.seed)
        row.addStretch(1)
        lay.addLayout(row)
        self.run_btn = QtWidgets.QPushButton("Run audit", objectName="auditRun")
        self.run_btn.clicked.connect(self._run)
        self.cancel_btn = QtWidgets.QPushButton("Cancel", objectName="auditCancel")
        self.cancel_btn.clicked.connect(self.model.cancel)
        self.cancel_btn.setEnabled(False)
        row2 = QtWidgets.QHBoxLayout()
        row2.addWidget(self.run_btn)
        row2.addWidget(self.cancel_btn)
        row2.addStretch(1)
        lay.addLayout(row2)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setVisible(False)
        lay.addWidget(self.progress)
        self.summary = QtWidgets.QLabel("Open a robot, then run an audit: which link pairs can collide.")
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.table = QtWidgets.QTableWidget(objectName="auditMatrix")
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setDefaultSectionSize(CELL)
        self.table.horizontalHeader().setMinimumSectionSize(CELL)
        self.table.verticalHeader().setDefaultSectionSize(CELL)
        self.table.verticalHeader().setMinimumSectionSize(CELL)
        self.table.cellClicked.connect(self._clicked)
        self.table.setMinimumHeight(200)
        self.table.setMinimumWidth(120)  # the dock scrolls a large robot's matrix, never widens the window
        lay.addWidget(self.table, 1)
        self.legend = QtWidgets.QLabel("colour: collision frequency (log, light 1e-6 → dark 1); "
                                       "white: never; light blue: adjacent (not counted); × SRDF-disabled; "
                                       "click a cell: pose the robot at its first colliding configuration")
        self.legend.setWordWrap(True)
        lay.addWidget(self.legend)
        self.detail = QtWidgets.QLabel("")
        self.detail.setWordWrap(True)
        lay.addWidget(self.detail)
        for lab in (self.summary, self.legend, self.detail):
            lab.setMinimumWidth(100)  # wrapped text: never what sets the dock's (and window's) width
        self._timer = QtCore.QTimer(self, interval=200)
        self._timer.timeout.connect(self._poll)

    def sizeHint(self):
        # the matrix scrolls inside the dock: asking for its full width made the window
        # wider than the screen at 1366x768
        h = super().sizeHint()
        return QtCore.QSize(min(h.width(), 420), h.height())

    def _run(self):
        if guarded(self, "Self-collision audit", self.model.start, self.samples.value(), self.seed.value()) \
                is None and not self.model.running:
            return
        self.run_btn.setEnabled(False)
        self.cancel_btn.setEnabled(True)
        self.progress.setVisible(True)
        self.progress.setRange(0, 0)
        self.summary.setText(f"auditing {self.samples.value():,} configurations ...")
        self._timer.start()

    def _poll(self):
        m = self.model
        if m.total:
            self.progress.setRange(0, m.total)
            self.progress.setValue(m.done)
        if m.running:
            return
        self._timer.stop()
        self.run_btn.setEnabled(True)
        self.cancel_btn.setEnabled(False)
        self.progress.setVisible(False)
        if m.state == "done":
            self.show_result()
        else:
            self.summary.setText(f"audit {m.state}")

    def show_result(self):
        r = self.model.result
        if r is None:
            return
        self.summary.setText(f"{r.summary()}  ({r.seconds:.1f} s)")
        frac = self.model.matrix()
        dis = self.model.disabled_mask()
        adj = self.model.adjacent_mask()
        names = r.link_names
        L = len(names)
        t = self.table
        t.clear()
        t.setRowCount(L)
        t.setColumnCount(L)
        t.setVerticalHeaderLabels([f"{k} {n}" for k, n in enumerate(names)])
        t.setHorizontalHeaderLabels([str(k) for k in range(L)])
        for i in range(L):
            t.horizontalHeaderItem(i).setToolTip(names[i])
            for j in range(L):
                it = QtWidgets.QTableWidgetItem("×" if dis[i, j] else "")
                col = ADJACENT if adj[i, j] else fraction_color(frac[i, j])
                it.setBackground(col)
                it.setForeground(QtGui.QColor("white") if col.lightness() < 128 else QtGui.QColor("black"))
                it.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
                if i != j and (adj[i, j] or not np.isnan(frac[i, j])):
                    it.setToolTip(self.model.describe(i, j))
                t.setItem(i, j, it)

    def _clicked(self, i, j):
        if self.model.result is None or i == j:
            return
        self.detail.setText(self.model.describe(i, j))
        items = guarded(self, "Pose at the witness", self.model.pose_at_witness, i, j)
        if items is None:
            self.detail.setText(self.detail.text() + " — never collided: no witness to show")
            return
        self.detail.setText(self.detail.text() + " — posed at its first colliding configuration")
        self.highlight_requested.emit(items)
