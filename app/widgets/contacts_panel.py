"""Contacts of the current frame: one row per intersecting triangle pair (link pair,
triangles, depth, segment), deepest first. Selecting a row marks that contact in the 3-D
view and focuses the camera on it; the panel draws nothing itself (it emits signals)."""
from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets

from .tables import fit_columns

READOUT_PERIOD = 0.1  # s: at most 10 refreshes a second while playing
MAX_ROWS = 500  # rows listed (the deepest); the layer draws every contact


class ContactsPanel(QtWidgets.QWidget):
    """``contact_selected(row or None)``; ``shown_changed(bool)``: draw/compute contacts."""
    contact_selected = QtCore.Signal(object)
    shown_changed = QtCore.Signal(bool)

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.contacts = None
        self._last = 0.0
        lay = QtWidgets.QVBoxLayout(self)
        self.show_box = QtWidgets.QCheckBox("Show contacts (segments, normals, depth)", objectName="contactsShow",
                                            checked=True, toolTip="Compute and draw every intersecting triangle "
                                            "pair's segment and normal (one query per link pair in contact)")
        lay.addWidget(self.show_box)
        self.summary = QtWidgets.QLabel("—", objectName="contactsSummary", wordWrap=True)
        self.summary.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay.addWidget(self.summary)
        self.table = QtWidgets.QTableWidget(0, 5, objectName="contactsTable")
        self.table.setHorizontalHeaderLabels(["links", "triangles", "depth", "segment midpoint", "length"])
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        fit_columns(self.table)
        lay.addWidget(self.table, 1)
        self.table.itemSelectionChanged.connect(self._selected)
        self.show_box.toggled.connect(self.shown_changed)
        session.frame_changed.connect(self._on_frame)
        session.scene_changed.connect(self.clear)

    def clear(self):
        self.contacts = None
        self.table.setRowCount(0)
        self.summary.setText("—")

    def _on_frame(self, view):
        now = time.perf_counter()
        if view.playing and now - self._last < READOUT_PERIOD:
            return
        self._last = now
        self.show_contacts(view.contacts)

    def show_contacts(self, c):
        keep = self.selected_row()
        self.contacts = c
        if c is None:
            self.table.setRowCount(0)
            self.summary.setText("contacts are not computed (tick <i>Show contacts</i>)")
            return
        if len(c) == 0:
            self.table.setRowCount(0)
            self.summary.setText("no contact in this frame")
            self.contact_selected.emit(None)
            return
        more = f" (+{c.dropped} not kept)" if c.dropped else ""
        d = c.deepest
        self.summary.setText(
            f"<b>{len(c)}</b> intersecting triangle pair(s){more}; deepest <b>{c.depths[d]:.4g}</b> at "
            f"{c.names[d]}, triangles {c.tris[d, 0]} / {c.tris[d, 1]}")
        n = min(len(c), MAX_ROWS)
        self.table.blockSignals(True)
        self.table.setRowCount(n)
        for r in range(n):
            mid = c.points[r].mean(axis=0)
            length = float(((c.points[r, 1] - c.points[r, 0]) ** 2).sum() ** 0.5)
            cells = (c.names[r], f"{c.tris[r, 0]} / {c.tris[r, 1]}", f"{c.depths[r]:.4g}",
                     "(" + ", ".join(f"{x:.4g}" for x in mid) + ")", f"{length:.3g}")
            for col, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                if col == 2:
                    item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, col, item)
        if keep is not None and keep < n:
            self.table.selectRow(keep)
        self.table.blockSignals(False)
        self.table.resizeColumnsToContents()

    def selected_row(self):
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return rows[0].row() if rows else None

    def select(self, row: int) -> None:
        """Select a contact (as a click on its row does)."""
        self.table.selectRow(row)

    def _selected(self):
        self.contact_selected.emit(self.selected_row())
