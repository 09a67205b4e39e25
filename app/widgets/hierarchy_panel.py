"""What to draw: hierarchy depth (auto, level, range, leaves, all; shown in the main
toolbar, see ``toolbar_items``), colouring (overlap state or heat), meshes' visibility
and opacity, and the colour key of the active colouring."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from app.model.trees import READABLE_BOXES

DEPTH_MODES = ("auto", "level", "range", "leaves", "all")


class HierarchyPanel(QtWidgets.QWidget):
    changed = QtCore.Signal()

    def __init__(self, state_colors=None, parent=None):
        super().__init__(parent)
        # ---- depth: in the main toolbar
        self.mode = QtWidgets.QComboBox(objectName="depthMode", toolTip=(
            f"auto: every node if the trees have at most {READABLE_BOXES}, else the deepest level "
            f"that keeps about {READABLE_BOXES} boxes on screen; level: depth LO; range: LO..HI; "
            "leaves; all (can be a grey tangle, and slow to draw)"))
        self.mode.addItems(list(DEPTH_MODES))
        self.mode.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.lo = QtWidgets.QSpinBox(objectName="depthLo", minimum=0, maximum=64, value=0, toolTip="level LO")
        self.hi = QtWidgets.QSpinBox(objectName="depthHi", minimum=0, maximum=64, value=3, toolTip="level HI")
        self.levels = QtWidgets.QWidget(objectName="depthLevels")
        row = QtWidgets.QHBoxLayout(self.levels)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.lo)
        row.addWidget(QtWidgets.QLabel("to"))
        row.addWidget(self.hi)
        self.resolved = QtWidgets.QLabel("", objectName="depthResolved",
                                         toolTip="what the auto depth chose, and the boxes drawn")

        # ---- the dock's own content
        form = QtWidgets.QFormLayout(self)
        self.show_tree = QtWidgets.QCheckBox("draw hierarchies", checked=True, objectName="showTree")
        form.addRow(self.show_tree)
        self.color_by = QtWidgets.QComboBox(objectName="colorBy")
        self.color_by.addItems(["state", "heat"])
        form.addRow("Colour by", self.color_by)
        self.show_mesh = QtWidgets.QCheckBox("draw meshes", checked=True, objectName="showMesh")
        form.addRow(self.show_mesh)
        self.opacity = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal, objectName="meshOpacity",
                                         minimum=0, maximum=100, value=100,
                                         toolTip="below 100 the meshes are translucent: about 4x slower to draw "
                                                 "under software OpenGL")
        form.addRow("Mesh opacity", self.opacity)
        # the colour keys themselves are drawn in the 3-D view (and so in screenshots)
        self.heat_note = QtWidgets.QLabel("Heat: tests per node over the last frames, dark few, yellow many, "
                                          "grey never tested; the colour bar in the view has the scale.",
                                          wordWrap=True, objectName="heatNote")
        form.addRow(self.heat_note)
        for w in (self.show_tree, self.show_mesh):
            w.toggled.connect(self.changed)
        for w in (self.mode, self.color_by):
            w.currentIndexChanged.connect(self.changed)
        for w in (self.lo, self.hi, self.opacity):
            w.valueChanged.connect(self.changed)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.color_by.currentIndexChanged.connect(self._key_changed)
        self.mode.setCurrentText("auto")
        self._mode_changed()
        self._key_changed()

    def toolbar_items(self):
        return [("Depth", self.mode), (None, self.levels), (None, self.resolved)]

    def _mode_changed(self, *_):
        mode = self.mode.currentText()
        self.lo.setEnabled(mode in ("level", "range"))
        self.hi.setEnabled(mode == "range")

    def _key_changed(self, *_):
        """Show the key of the colouring in use, not the other one."""
        self.heat_note.setVisible(self.color_by.currentText() == "heat")

    def selection(self):
        """(mode, lo, hi) for ``Tree.select`` ("auto" is resolved by the caller: it needs
        the trees, see ``readable_selection``)."""
        lo, hi = self.lo.value(), self.hi.value()
        mode = self.mode.currentText()
        if mode == "level":
            return mode, lo, lo
        return mode, min(lo, hi), max(lo, hi)  # LO > HI is the same range (it drew LO only)

    def set_max_depth(self, depth: int):
        if self.lo.maximum() != depth:  # an unchanged maximum costs no repaint
            self.lo.setMaximum(depth)
            self.hi.setMaximum(depth)
