"""Tables that show all their columns: as wide as their content, never scrolled sideways."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class _ColumnFitter(QtCore.QObject):
    """Child of the table: its connections die with the table (a bare lambda would still
    be called while the table is being destroyed)."""

    def __init__(self, table):
        super().__init__(table)
        self.table = table
        self._timer = QtCore.QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.refit)
        header = table.horizontalHeader()
        header.sectionResized.connect(self.schedule)
        header.geometriesChanged.connect(self.schedule)
        model = table.model()
        for sig in (model.rowsInserted, model.modelReset, model.dataChanged, model.headerDataChanged):
            sig.connect(self.schedule)

    @QtCore.Slot()
    def schedule(self, *_):
        self._timer.start()

    @QtCore.Slot()
    def refit(self):
        t = self.table
        vh = t.verticalHeader()
        width = t.horizontalHeader().length() + (vh.width() if vh.isVisible() else 0) + 2 * t.frameWidth() \
            + t.verticalScrollBar().sizeHint().width()
        if width != t.minimumWidth():
            t.setMinimumWidth(width)


def fit_columns(table: QtWidgets.QTableView) -> None:
    """Size every column to its content and keep the table's minimum width at the sum of
    the columns, so the layout (and the dock around it) makes room instead of cutting
    columns off."""
    header = table.horizontalHeader()
    header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(False)  # a stretched column would feed its width back into the minimum
    table._column_fitter = _ColumnFitter(table)
    table._column_fitter.refit()
