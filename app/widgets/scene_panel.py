"""Scene & method panel: scene picker, BV type, update method, overlap test, deformation
mode and the body pair to inspect."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from cdcore import BV_TYPES
from cdcore.articulated import METHOD_LABELS, UPDATE_METHODS

from .errors import guarded


class ScenePanel(QtWidgets.QWidget):
    open_mesh_requested = QtCore.Signal()

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        form = QtWidgets.QFormLayout(self)
        self.scene_box = QtWidgets.QComboBox(objectName="sceneBox")
        self.scene_box.addItems(session.scene_names())
        self.open_btn = QtWidgets.QPushButton("Open mesh…", objectName="openMesh")
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.scene_box, 1)
        row.addWidget(self.open_btn)
        form.addRow("Scene", row)
        self.title = QtWidgets.QLabel(wordWrap=True, objectName="sceneTitle")
        form.addRow(self.title)
        self.bv_box = QtWidgets.QComboBox(objectName="bvBox")
        self.bv_box.addItems(list(BV_TYPES))
        form.addRow("BV type", self.bv_box)
        self.method_box = QtWidgets.QComboBox(objectName="methodBox")
        for m in UPDATE_METHODS:
            self.method_box.addItem(METHOD_LABELS[m], m)
        form.addRow("Update", self.method_box)
        self.test_box = QtWidgets.QComboBox(objectName="testBox")
        form.addRow("Overlap test", self.test_box)
        self.deform_box = QtWidgets.QComboBox(objectName="deformBox")
        self.deform_box.addItems(["refit", "rebuild"])
        form.addRow("Deforming meshes", self.deform_box)
        self.realign_box = QtWidgets.QComboBox(objectName="realignBox",
                                               toolTip="k-DOP hierarchies: how B's k-DOPs are realigned")
        self.realign_box.addItems(["table", "all", "major"])
        form.addRow("k-DOP realign", self.realign_box)
        self.pair_box = QtWidgets.QComboBox(objectName="pairBox")
        form.addRow("Body pair", self.pair_box)
        self.info = QtWidgets.QLabel(wordWrap=True, objectName="sceneInfo")
        form.addRow(self.info)

        self.scene_box.activated.connect(self._scene_chosen)
        self.open_btn.clicked.connect(self.open_mesh_requested)
        self.bv_box.activated.connect(lambda _i: guarded(self, "BV type", session.set_bv, self.bv_box.currentText()))
        self.method_box.activated.connect(
            lambda _i: guarded(self, "Update method", session.set_method, self.method_box.currentData()))
        self.test_box.activated.connect(lambda _i: guarded(self, "Overlap test", session.set_test,
                                                            self.test_box.currentText()))
        self.deform_box.activated.connect(lambda _i: guarded(self, "Deformation", session.set_deform,
                                                              self.deform_box.currentText()))
        self.pair_box.activated.connect(lambda i: guarded(self, "Body pair", session.select_pair, i))
        self.realign_box.activated.connect(lambda _i: guarded(self, "Realignment", session.set_realign,
                                                               self.realign_box.currentText()))
        session.scene_changed.connect(self.sync)
        session.settings_changed.connect(self.sync)
        self.sync()

    def _scene_chosen(self, _index):
        name = self.scene_box.currentText()
        guarded(self, "Load scene", self.session.load_scene, name)

    def sync(self):
        """Show the session's state (no signals are re-emitted)."""
        s = self.session
        for box in (self.scene_box, self.bv_box, self.method_box, self.test_box, self.deform_box, self.pair_box,
                    self.realign_box):
            box.blockSignals(True)
        try:
            if s.scene is not None:
                i = self.scene_box.findText(s.scene.name)
                if i < 0:
                    self.scene_box.addItem(s.scene.name)
                    i = self.scene_box.count() - 1
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
            self.bv_box.setCurrentText(s.bv)
            self.method_box.setCurrentIndex(UPDATE_METHODS.index(s.method))
            self.test_box.clear()
            self.test_box.addItems(list(s.tests))
            self.test_box.setCurrentText(s.test)
            self.deform_box.setCurrentText(s.deform)
            self.realign_box.setCurrentText(s.realign)
            self.realign_box.setEnabled(s.bv.startswith("kdop"))
        finally:
            for box in (self.scene_box, self.bv_box, self.method_box, self.test_box, self.deform_box,
                        self.pair_box, self.realign_box):
                box.blockSignals(False)
