"""What to draw: hierarchy depth (level, range, leaves, all), colouring (overlap state or
heat), meshes' visibility and opacity, and the state legend."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from app.model.trees import STATE_NAMES


class HierarchyPanel(QtWidgets.QWidget):
    changed = QtCore.Signal()

    def __init__(self, state_colors, parent=None):
        super().__init__(parent)
        form = QtWidgets.QFormLayout(self)
        self.show_tree = QtWidgets.QCheckBox("draw hierarchies", checked=True, objectName="showTree")
        form.addRow(self.show_tree)
        self.mode = QtWidgets.QComboBox(objectName="depthMode")
        self.mode.addItems(["level", "range", "leaves", "all"])
        form.addRow("Depth", self.mode)
        self.lo = QtWidgets.QSpinBox(objectName="depthLo", minimum=0, maximum=64, value=0)
        self.hi = QtWidgets.QSpinBox(objectName="depthHi", minimum=0, maximum=64, value=3)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.lo)
        row.addWidget(QtWidgets.QLabel("to"))
        row.addWidget(self.hi)
        form.addRow("Levels", row)
        self.color_by = QtWidgets.QComboBox(objectName="colorBy")
        self.color_by.addItems(["state", "heat"])
        form.addRow("Colour by", self.color_by)
        self.show_mesh = QtWidgets.QCheckBox("draw meshes", checked=True, objectName="showMesh")
        form.addRow(self.show_mesh)
        self.opacity = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal, objectName="meshOpacity",
                                         minimum=0, maximum=100, value=100,
                                         toolTip="below 100 the meshes are translucent: about 4x slower to draw under software OpenGL")
        form.addRow("Mesh opacity", self.opacity)
        legend = QtWidgets.QGroupBox("Node state")
        ll = QtWidgets.QVBoxLayout(legend)
        for name, rgb in zip(STATE_NAMES, state_colors):
            lab = QtWidgets.QLabel(f"■ {name}")
            c = QtGui.QColor.fromRgbF(*[float(x) for x in rgb[:3]]) if max(rgb[:3]) <= 1 else QtGui.QColor(*rgb[:3])
            lab.setStyleSheet(f"color: {c.name()}; font-weight: bold")
            ll.addWidget(lab)
        form.addRow(legend)
        for w in (self.show_tree, self.show_mesh):
            w.toggled.connect(self.changed)
        for w in (self.mode, self.color_by):
            w.currentIndexChanged.connect(self.changed)
        for w in (self.lo, self.hi, self.opacity):
            w.valueChanged.connect(self.changed)

    def selection(self):
        """(mode, lo, hi) for ``Tree.select``."""
        lo, hi = self.lo.value(), self.hi.value()
        return self.mode.currentText(), lo, max(lo, hi)

    def set_max_depth(self, depth: int):
        self.lo.setMaximum(depth)
        self.hi.setMaximum(depth)
