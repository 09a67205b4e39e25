"""k-DOP realignment view: for the stepper's current node pair of a k-DOP traversal, B's
node k-DOP in its own frame, the exact k-DOP of its moved geometry, and the k-DOP each
realignment method (major, all, table, table_angle) hands to the slab test, with how much looser each
is (Fünzig & Fellner, sections 3-4)."""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from .errors import guarded
from .tables import fit_columns

#: what is drawn, in the order of the table rows: (key, label, RGB)
LAYERS = (("kdop", "B's node k-DOP (its own frame)", (120, 120, 120)),
          ("exact", "exact k-DOP of the moved geometry", (0, 0, 0)),
          ("major", "realigned: major axes", (0, 158, 115)),
          ("all", "realigned: all directions (Zachmann)", (86, 180, 233)),
          ("table", "realigned: table lookup, derived entries", (213, 94, 0)),
          ("table_angle", "realigned: table lookup, the paper's entries on angle rings (Fünzig)", (204, 121, 167)))


IDLE_TEXT = ("Step through a k-DOP traversal (BV type kdop6…kdop26) to see how B's node k-DOP is realigned "
             "to A's directions.")


class RealignPanel(QtWidgets.QWidget):
    """Emits ``draw_requested(list of (label, directions (k/2, 3), slabs (k,), pose (4, 4),
    rgb))``: the k-DOPs to draw, as slabs; the 3-D view turns them into polytopes (widgets
    do no geometry)."""
    draw_requested = QtCore.Signal(object)

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        lay = QtWidgets.QVBoxLayout(self)
        self.label = QtWidgets.QLabel(IDLE_TEXT, wordWrap=True, objectName="realignLabel")
        lay.addWidget(self.label)
        self.method = QtWidgets.QComboBox(objectName="realignMethod")
        self.method.addItems(["table", "table_angle", "all", "major"])
        row = QtWidgets.QHBoxLayout()
        row.addWidget(QtWidgets.QLabel("traversal uses"))
        row.addWidget(self.method, 1)
        lay.addLayout(row)
        self.table = QtWidgets.QTableWidget(0, 4, objectName="realignTable")
        self.table.setHorizontalHeaderLabels(["k-DOP", "slab width ×", "volume ×", "looser"])
        self.table.setToolTip("mean slab width and volume relative to the exact k-DOP of the moved geometry")
        self.table.verticalHeader().setVisible(False)
        fit_columns(self.table)
        lay.addWidget(self.table, 1)
        self.draw = QtWidgets.QCheckBox("draw them in the 3-D view", checked=True, objectName="realignDraw")
        lay.addWidget(self.draw)
        self.method.activated.connect(lambda _i: guarded(self, "Realignment", session.set_realign,
                                                         self.method.currentText()))
        self.draw.toggled.connect(lambda _on: self.show_step(*self._last))
        self._last = (None, None)
        self.report = None
        # a pair shown for a k-DOP tree is stale once the BV type or the scene changes
        session.settings_changed.connect(self._session_changed)
        session.scene_changed.connect(self._session_changed)

    def _session_changed(self):
        if not self.session.bv.startswith("kdop") and (self.report is not None or self.label.text() != IDLE_TEXT):
            self.show_step(None, None)

    def show_step(self, step, traversal):
        self._last = (step, traversal)
        self.method.setCurrentText(self.session.realign)
        if (step is None or traversal is None or traversal.tree_a.kdop is None
                or traversal.tree_b.bvh is None):
            self.report = None
            self.label.setText(IDLE_TEXT)
            self.table.setRowCount(0)
            self.draw_requested.emit([])
            return
        self.report = guarded(self, "Realignment", self._compute, step, traversal)
        if self.report is None:
            return
        rep = self.report
        self.label.setText(f"node {rep['node']} of B ({rep['bv']}), realigned into A's frame for the pair "
                           f"({step.node_a}, {step.node_b})")
        rows = [("exact (moved geometry)", 1.0, 1.0)] + [
            (m, rep["methods"][m]["mean_width_ratio"], rep["methods"][m]["volume_ratio"])
            for m in ("major", "all", "table", "table_angle")]
        self.table.setRowCount(len(rows))
        for r, (name, w, v) in enumerate(rows):
            loose = "—" if r == 0 else ("flat" if not np.isfinite(v) else f"{(v - 1.0) * 100:.1f} %")
            for c, text in enumerate([name, f"{w:.3f}", "inf" if not np.isfinite(v) else f"{v:.3f}", loose]):
                self.table.setItem(r, c, QtWidgets.QTableWidgetItem(text))
        self.draw_requested.emit(self._wires(rep, traversal) if self.draw.isChecked() else [])

    def _compute(self, step, traversal):
        from cdcore.realign import realignment_report
        from cdcore.transforms import relative_transform
        A, B = traversal.tree_a, traversal.tree_b
        R, t = relative_transform(A.pose, B.pose)
        return realignment_report(B.bvh, step.node_b, R, t)

    def _wires(self, rep, traversal):
        A, B = traversal.tree_a, traversal.tree_b
        dirs = A.kdop.dirs
        out = []
        for key, label, rgb in LAYERS:
            slabs = rep["kdop"] if key == "kdop" else rep["exact"] if key == "exact" else rep["methods"][key]["kdop"]
            pose = B.pose if key == "kdop" else A.pose  # realigned k-DOPs live in A's frame
            out.append((label, dirs, np.asarray(slabs), pose, rgb))
        return out
