"""The joint panel: one slider per robot joint (drag one and the hierarchy follows live)
and the robot's link pairs in contact at this frame, which it can highlight."""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from .errors import guarded

STEPS = 1000  # slider resolution over a joint's range


class JointPanel(QtWidgets.QWidget):
    """Thin binding of ``app.model.robot.RobotModel``. ``highlight_changed`` carries
    {robot body index: [link indices]} of the robot's links in contact (empty when off)."""

    highlight_changed = QtCore.Signal(object)

    def __init__(self, model, parent=None):
        super().__init__(parent)
        self.model = model
        lay = QtWidgets.QVBoxLayout(self)
        self.title = QtWidgets.QLabel("Open a robot (File → Open robot) to pose its joints.")
        self.title.setWordWrap(True)
        lay.addWidget(self.title)
        # the sliders first (what a robot user reaches for), then the contacts, which take
        # whatever height the dock has left
        self.grid_host = QtWidgets.QWidget()
        self.grid = QtWidgets.QGridLayout(self.grid_host)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setColumnStretch(1, 1)
        lay.addWidget(self.grid_host)
        row = QtWidgets.QHBoxLayout()
        self.reset_btn = QtWidgets.QPushButton("Rest pose")
        self.reset_btn.setToolTip("All joints to 0 (clipped to their limits) at this frame")
        self.reset_btn.clicked.connect(self._rest)
        self.highlight = QtWidgets.QCheckBox("Highlight links in contact")
        self.highlight.setChecked(True)
        self.highlight.toggled.connect(lambda _: self._emit_highlight())
        row.addWidget(self.reset_btn)
        row.addWidget(self.highlight)
        row.addStretch(1)
        lay.addLayout(row)
        self.contacts_label = QtWidgets.QLabel("Link pairs in contact")
        lay.addWidget(self.contacts_label)
        self.contacts = QtWidgets.QListWidget(objectName="robotContacts")
        self.contacts.setMinimumHeight(60)
        lay.addWidget(self.contacts, 1)
        self.sliders: list[QtWidgets.QSlider] = []
        self.values: list[QtWidgets.QLabel] = []
        self._names: list = []
        self._updating = False
        model.changed.connect(self._refresh)
        self._refresh()

    # ---- building -------------------------------------------------------------------
    def _rebuild(self):
        while self.grid.count():
            w = self.grid.takeAt(0).widget()
            if w is not None:
                w.deleteLater()
        self.sliders, self.values = [], []
        m = self.model
        for k, (name, (lo, hi)) in enumerate(zip(m.joint_names, m.limits)):
            lab = QtWidgets.QLabel(name)
            lab.setToolTip(f"{name}: [{lo:.3f}, {hi:.3f}]")
            s = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
            s.setRange(0, STEPS)
            s.setObjectName(f"joint_{k}")
            s.valueChanged.connect(lambda v, k=k: self._moved(k, v))
            val = QtWidgets.QLabel("0")
            val.setMinimumWidth(52)
            val.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
            self.grid.addWidget(lab, k, 0)
            self.grid.addWidget(s, k, 1)
            self.grid.addWidget(val, k, 2)
            self.sliders.append(s)
            self.values.append(val)
        self._names = list(m.joint_names)

    def _refresh(self, *_):
        m = self.model
        if m.joint_names != self._names:
            self._rebuild()
        b = m.body
        self.title.setText("Open a robot (File → Open robot) to pose its joints." if b is None else
                           f"{b.name}: {b.n_dofs} joints, {b.n_links} links — drag a joint to pose frame "
                           f"{m.session.frame}")
        self.reset_btn.setEnabled(b is not None)
        if b is not None:
            self._updating = True
            try:
                for k, (v, (lo, hi)) in enumerate(zip(m.q(), m.limits)):
                    pos = (v - lo) / (hi - lo) * STEPS if hi > lo else 0.0
                    # a value far outside the range (a trajectory at 1e308) pins the slider
                    self.sliders[k].setValue(int(round(min(max(pos, 0.0), STEPS))) if np.isfinite(pos) else 0)
                    self.values[k].setText(f"{v:+.3f}")
            finally:
                self._updating = False
        self.contacts.clear()
        rows = m.contacts()
        for kind, a, bname in rows:
            other = bname if kind == "self" else kind if bname == kind else f"{kind}: {bname}"
            self.contacts.addItem(f"{a}  ×  {other}")
        self.contacts_label.setText(f"Link pairs in contact: {len(rows)}" if b is not None else "Link pairs in contact")
        self._emit_highlight()

    def _emit_highlight(self):
        links = self.model.contact_links() if self.highlight.isChecked() else {}
        self.highlight_changed.emit({k: v for k, v in links.items() if k == self.model.index})  # the robot's own

    # ---- editing -----------------------------------------------------------------------
    def _moved(self, k, v):
        if self._updating:
            return
        lo, hi = self.model.limits[k]
        guarded(self, "Set joint", self.model.set_joint, k, lo + (hi - lo) * v / STEPS)

    def _rest(self):
        b = self.model.body
        if b is not None:
            guarded(self, "Rest pose", self.model.set_q, np.clip(0.0, b.limits[:, 0], b.limits[:, 1]))
