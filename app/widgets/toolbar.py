"""The main toolbar: what a user changes all the time (scene, BV type, update method,
overlap test, play / pause / step, depth, camera), so the docks hold only their panels.

The pickers belong to their panels (they keep them in sync with the session); the
toolbar only lays them out, each group with its label, in the panels' order."""
from __future__ import annotations

from PySide6 import QtWidgets


class MainToolBar(QtWidgets.QToolBar):
    def __init__(self, parent=None):
        super().__init__("Main toolbar", parent)
        self.setObjectName("mainToolBar")
        self.setMovable(False)
        self.setFloatable(False)

    def add_group(self, items) -> None:
        """``items``: (label or None, widget) pairs, e.g. a panel's ``toolbar_items()``;
        groups are separated by a line."""
        if self.actions():
            self.addSeparator()
        for label, widget in items:
            if label:
                lab = QtWidgets.QLabel(f" {label} ")
                lab.setBuddy(widget)
                self.addWidget(lab)
            self.addWidget(widget)
