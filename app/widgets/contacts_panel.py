"""Contacts of the current frame: one row per intersecting triangle pair (link pair,
triangles, depth, segment), deepest first. Selecting a row marks that contact in the 3-D
view and focuses the camera on it; the panel draws nothing itself (it emits signals)."""
from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets


READOUT_PERIOD = 0.1  # s: at most 10 refreshes a second while playing
SIZE_ROWS = 64  # columns are sized to fit the first rows (Qt's default measured all: O(rows))


class ContactsModel(QtCore.QAbstractTableModel):
    """The rows of a ``FrameContacts``, formatted on demand (only the visible rows cost)."""
    HEADERS = ("links", "triangles", "depth", "midpoint", "length")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.c = None

    def set_contacts(self, c):
        self.beginResetModel()
        self.c = c if c is not None and len(c) else None
        self.endResetModel()

    def rowCount(self, parent=QtCore.QModelIndex()):
        return 0 if self.c is None or parent.isValid() else len(self.c)

    def columnCount(self, parent=QtCore.QModelIndex()):
        return len(self.HEADERS)

    def headerData(self, section, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole):
        if role == QtCore.Qt.ItemDataRole.DisplayRole and orientation == QtCore.Qt.Orientation.Horizontal:
            return self.HEADERS[section]
        return None

    def data(self, index, role=QtCore.Qt.ItemDataRole.DisplayRole):
        c, r, col = self.c, index.row(), index.column()
        if c is None:
            return None
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and col in (2, 4):
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role != QtCore.Qt.ItemDataRole.DisplayRole:
            return None
        if col == 0:
            return c.names[r]
        if col == 1:
            return f"{c.tris[r, 0]} / {c.tris[r, 1]}"
        if col == 2:
            return f"{c.depths[r]:.4g}"
        if col == 3:
            return "(" + ", ".join(f"{x:.3g}" for x in c.points[r].mean(axis=0)) + ")"
        return f"{float(((c.points[r, 1] - c.points[r, 0]) ** 2).sum() ** 0.5):.3g}"


class ContactsPanel(QtWidgets.QWidget):
    """``contact_selected(row or None)``; ``shown_changed(bool)``: draw/compute contacts."""
    contact_selected = QtCore.Signal(object)
    shown_changed = QtCore.Signal(bool)

    def __init__(self, session, parent=None, driven: bool = False):
        """``driven``: while playing, the table follows only ``refresh()`` calls (the window's
        read-out pass, so its repaint shares that frame's composition of the window)."""
        super().__init__(parent)
        self.session = session
        self.driven = bool(driven)
        self.contacts = None
        self._last = 0.0
        self._pending = None  # the last frame not shown while playing hidden
        self._sized = 0
        lay = QtWidgets.QVBoxLayout(self)
        self.show_box = QtWidgets.QCheckBox("Show contacts (segments, normals, depth)", objectName="contactsShow",
                                            checked=True, toolTip="Compute and draw every intersecting triangle "
                                            "pair's segment and normal (one query per link pair in contact)")
        lay.addWidget(self.show_box)
        self.summary = QtWidgets.QLabel("—", objectName="contactsSummary", wordWrap=True)
        self.summary.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay.addWidget(self.summary)
        self.model = ContactsModel(self)
        self.table = QtWidgets.QTableView(objectName="contactsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setResizeContentsPrecision(SIZE_ROWS)  # rows measured per column
        # (no fit_columns: a wide table would force the right docks, and the window, wider than 1366 px)
        self.table.setHorizontalScrollMode(QtWidgets.QAbstractItemView.ScrollMode.ScrollPerPixel)
        lay.addWidget(self.table, 1)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self.show_box.toggled.connect(self.shown_changed)
        session.frame_changed.connect(self._on_frame)
        session.scene_changed.connect(self.clear)

    def clear(self):
        self._sized = 0  # length of the longest name the columns were sized for (a new scene: again)
        self.contacts = None
        self.model.set_contacts(None)
        self.summary.setText("—")

    def _on_frame(self, view):
        now = time.perf_counter()
        if view.playing and (self.driven or now - self._last < READOUT_PERIOD or not self.isVisible()):
            self._pending = view  # a hidden table (a tab behind Timing) is filled when shown
            return
        self._last = now
        self._pending = None
        self.show_contacts(view.contacts)

    def refresh(self) -> None:
        """Show the last frame held back while playing (a driven panel's read-out)."""
        if self._pending is not None and self.isVisible():
            self._last = time.perf_counter()
            self._pending = None
            self.show_contacts(self.session.view.contacts if self.session.view is not None else None)

    def showEvent(self, event):
        super().showEvent(event)
        pending, self._pending = self._pending, None
        view = self.session.view
        if pending is not None and view is not None:
            self.show_contacts(view.contacts)

    def show_contacts(self, c):
        keep = self.selected_row()
        self.contacts = c
        self.table.selectionModel().blockSignals(True)
        self.model.set_contacts(c)
        # lay the rows out now: a model reset leaves Qt a delayed layout (a zero timer) that
        # ran after this frame's paint and repainted the window once more, a frame later
        self.table.doItemsLayout()
        if c is not None and len(c) and keep is not None and keep < len(c):
            self.table.selectRow(keep)
        self.table.selectionModel().blockSignals(False)
        if c is None:
            self.summary.setText("contacts are not computed (tick <i>Show contacts</i>)")
            return
        if len(c) == 0:
            self.summary.setText("no contact in this frame")
            self.contact_selected.emit(None)
            return
        more = f" (+{c.dropped} not kept)" if c.dropped else ""
        d = c.deepest
        self.summary.setText(
            f"<b>{len(c)}</b> intersecting triangle pair(s){more}; deepest <b>{c.depths[d]:.4g}</b> at "
            f"{c.names[d]}, triangles {c.tris[d, 0]} / {c.tris[d, 1]}")
        longest = max(c.names, key=len)
        if len(longest) > self._sized:
            # only when a longer link name appears (``a != n > 0`` chained into "always" and
            # measured every row of every refresh: ~190 ms each on hand-ball): the columns
            # from the first SIZE_ROWS rows, the names' column from the longest name
            self.table.resizeColumnsToContents()
            need = self.table.fontMetrics().horizontalAdvance(longest) + 16
            if self.table.columnWidth(0) < need:
                self.table.setColumnWidth(0, need)
            self._sized = len(longest)

    def selected_row(self):
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return rows[0].row() if rows else None

    def select(self, row: int) -> None:
        """Select a contact (as a click on its row does)."""
        self.table.selectRow(row)

    def _selected(self, *_):
        self.contact_selected.emit(self.selected_row())
