"""Minimum distance of the selected body pair, with the closest points drawn."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from app.model.proximity import min_distance

from .errors import guarded


class DistancePanel(QtWidgets.QWidget):
    """Emits ``points_changed(points (2, 3) or None)`` for the 3-D view."""
    points_changed = QtCore.Signal(object)

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        lay = QtWidgets.QFormLayout(self)
        self.btn = QtWidgets.QPushButton("Measure minimum distance", objectName="distanceBtn")
        self.live = QtWidgets.QCheckBox("every frame", objectName="distanceLive")
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.btn)
        row.addWidget(self.live)
        lay.addRow(row)
        self.rel = QtWidgets.QDoubleSpinBox(objectName="distanceRelErr", minimum=0.0, maximum=1.0, decimals=3,
                                            singleStep=0.01, value=0.0, toolTip="allowed relative error (§5)")
        lay.addRow("relative error", self.rel)
        self.result = QtWidgets.QLabel("—", objectName="distanceResult", wordWrap=True)
        self.result.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay.addRow(self.result)
        self.report = None
        self.btn.clicked.connect(self.measure)
        session.frame_changed.connect(lambda _r: self.live.isChecked() and self.measure())
        session.scene_changed.connect(self.clear)

    def clear(self):
        self.report = None
        self.result.setText("—")
        self.points_changed.emit(None)

    def measure(self):
        if self.session.scene is None:
            return
        rep = guarded(self, "Distance", min_distance, self.session, None, 0.0, self.rel.value())
        self.report = rep
        if rep is None:
            self.points_changed.emit(None)
            return
        s = self.session.scene
        i, j = rep.pair
        na = s.bodies[i].body.links[rep.link_a].name
        nb = s.bodies[j].body.links[rep.link_b].name
        self.result.setText(
            f"<b>{rep.distance:.6g}</b> between {na} (triangle {rep.tri_a}) and {nb} (triangle {rep.tri_b})"
            f"<br>{rep.queries} link queries, {rep.bv_tests} bound tests, {rep.prim_tests} triangle pairs, "
            f"{rep.seconds * 1e3:.2f} ms")
        self.points_changed.emit(rep.points)
