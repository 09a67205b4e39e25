"""Scene panel: the scene's title and size, the body pair to inspect, deformation and
k-DOP realignment modes. The scene / BV type / update method / overlap test pickers are
created and kept in sync here too, but the window shows them in its main toolbar
(``toolbar_items``)."""
from __future__ import annotations

import json

from PySide6 import QtCore, QtWidgets

from cdcore import BV_TYPES
from cdcore.articulated import METHOD_LABELS, UPDATE_METHODS

from .errors import guarded

_ADJUST = QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents


def _combo(name, tip):
    box = QtWidgets.QComboBox(objectName=name, toolTip=tip)
    box.setSizeAdjustPolicy(_ADJUST)  # as wide as its longest item: never a cut name
    # and never squeezed below that by a layout
    box.setSizePolicy(QtWidgets.QSizePolicy.Policy.Minimum, QtWidgets.QSizePolicy.Policy.Fixed)
    return box


class ScenePanel(QtWidgets.QWidget):
    open_mesh_requested = QtCore.Signal()

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.loader = None  # the window's loader (progress while compiling); else Session.load_ref
        # ---- the toolbar's pickers (items carry how to load them: see Session.scene_ref)
        self.scene_box = _combo("sceneBox", "Scene (built in, or a scene file / meshes you opened)")
        for name in session.scene_names():
            self.scene_box.addItem(name, json.dumps({"scene": name}))
        self.open_btn = QtWidgets.QPushButton("Open mesh…", objectName="openMesh",
                                              toolTip="Open one or two mesh files as a rigid pair scene")
        self.bv_box = _combo("bvBox", "Bounding-volume type of the mesh hierarchies")
        self.bv_box.addItems(list(BV_TYPES))
        self.method_box = _combo("methodBox", "Update method of the articulated bodies' link hierarchies")
        for m in UPDATE_METHODS:
            self.method_box.addItem(METHOD_LABELS[m], m)
        self.test_box = _combo("testBox", "Overlap test of node pairs")

        # ---- the dock's own content
        form = QtWidgets.QFormLayout(self)
        form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.title = QtWidgets.QLabel(wordWrap=True, objectName="sceneTitle")
        form.addRow(self.title)
        self.pair_box = _combo("pairBox", "The body pair the stepper and distance panels inspect")
        form.addRow("Body pair", self.pair_box)
        self.deform_box = _combo("deformBox", "Deforming meshes: refit the hierarchy or rebuild it every frame")
        self.deform_box.addItems(["refit", "rebuild"])
        form.addRow("Deforming", self.deform_box)
        self.realign_box = _combo("realignBox", "k-DOP hierarchies: how B's k-DOPs are realigned")
        from cdcore.realign import METHODS as REALIGN_METHODS
        self.realign_box.addItems(list(REALIGN_METHODS))  # every method the engine has (table_angle was missing)
        form.addRow("k-DOP realign", self.realign_box)
        self.info = QtWidgets.QLabel(wordWrap=True, objectName="sceneInfo")
        form.addRow(self.info)

        self.scene_box.activated.connect(self._scene_chosen)
        self.open_btn.clicked.connect(self.open_mesh_requested)
        self.bv_box.activated.connect(lambda _i: self._guard("BV type", session.set_bv, self.bv_box.currentText()))
        self.method_box.activated.connect(
            lambda _i: self._guard("Update method", session.set_method, self.method_box.currentData()))
        self.test_box.activated.connect(lambda _i: self._guard("Overlap test", session.set_test,
                                                               self.test_box.currentText()))
        self.deform_box.activated.connect(lambda _i: self._guard("Deformation", session.set_deform,
                                                                 self.deform_box.currentText()))
        self.pair_box.activated.connect(lambda i: self._guard("Body pair", session.select_pair, i))
        self.realign_box.activated.connect(lambda _i: self._guard("Realignment", session.set_realign,
                                                                  self.realign_box.currentText()))
        session.scene_changed.connect(self.sync)
        session.settings_changed.connect(self.sync)
        self.sync()

    def toolbar_items(self):
        """(label or None, widget) for the main toolbar."""
        return [("Scene", self.scene_box), (None, self.open_btn), ("BV", self.bv_box),
                ("Update", self.method_box), ("Test", self.test_box)]

    def _guard(self, title, fn, *args):
        """Run a user action; on failure the dialog explains it and the pickers show the
        session's state again (not the choice that failed)."""
        out = guarded(self, title, fn, *args)
        self.sync()
        return out

    def _scene_chosen(self, index):
        ref = self.scene_box.itemData(index)
        try:
            ref = json.loads(ref) if ref else {"scene": self.scene_box.itemText(index)}
        except ValueError:
            ref = {"scene": self.scene_box.itemText(index)}
        if self.loader is not None:
            self.loader(ref)  # shows its own dialog on failure
            self.sync()
        else:
            self._guard("Load scene", self.session.load_ref, ref)

    def show_pending(self, ref: dict) -> None:
        """The Scene picker shows the built-in scene ``ref`` names while it loads (the first
        window is up before its scene is built; it showed the list's first entry). No signal:
        nothing is loaded by this; ``sync`` shows the session's scene once it is in."""
        name = ref.get("scene")
        i = self.scene_box.findText(name) if name else -1
        if i >= 0:
            self.scene_box.blockSignals(True)
            self.scene_box.setCurrentIndex(i)
            self.scene_box.blockSignals(False)

    def sync(self):
        """Show the session's state (no signals are re-emitted)."""
        s = self.session
        boxes = (self.scene_box, self.bv_box, self.method_box, self.test_box, self.deform_box, self.pair_box,
                 self.realign_box)
        for box in boxes:
            box.blockSignals(True)
        try:
            if s.scene is not None:
                ref = json.dumps(s.scene_ref())
                i = self.scene_box.findData(ref)
                if i < 0:
                    self.scene_box.addItem(s.scene.name, ref)
                    i = self.scene_box.count() - 1
                    self.scene_box.setItemData(i, ref, QtCore.Qt.ItemDataRole.ToolTipRole)
                self.scene_box.setCurrentIndex(i)
                self.title.setText(f"<b>{s.scene.title}</b><br><i>{s.scene.paper}</i>")
                self.title.setToolTip(s.scene.description)
                self.pair_box.clear()
                for i, j in s.scene.pairs:
                    a, b = s.scene.bodies[i].name, s.scene.bodies[j].name
                    self.pair_box.addItem(f"{a} / {b}" if i != j else f"{a} (self)")
                self.pair_box.setCurrentIndex(s.selected_pair)
                tris = s.scene.n_triangles
                self.info.setText(f"{len(s.scene.bodies)} bodies, {tris:,} triangles, {s.scene.frames} frames")
            deforming = s.scene is not None and any(b.deforming for b in s.scene.bodies)
            self.deform_box.setEnabled(deforming)
            self.deform_box.setToolTip("Deforming meshes: refit the hierarchy or rebuild it every frame"
                                       if deforming else "no deforming mesh in this scene")
            self.bv_box.setCurrentText(s.bv)
            self.method_box.setCurrentIndex(UPDATE_METHODS.index(s.method))
            self.test_box.clear()
            self.test_box.addItems(list(s.tests))
            self.test_box.setCurrentText(s.test)
            self.deform_box.setCurrentText(s.deform)
            self.realign_box.setCurrentText(s.realign)
            self.realign_box.setEnabled(s.bv.startswith("kdop"))
        finally:
            for box in boxes:
                box.blockSignals(False)
