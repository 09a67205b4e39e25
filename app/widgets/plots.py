"""Cheap-to-paint pyqtgraph plots: the live plots repaint up to 10 times a second while
playing, in the same pass as the 3-D view, so their paint cost is frame time.

Measured under Xvfb (software rendering, a 700x200 plot of 4 curves x 600 points): the
axis grid of ``showGrid(alpha=0.3)`` costs ~10 ms per paint (translucent lines across the
whole view, drawn by both axis items); a ``GridItem`` with an opaque light pen ~1 ms.
Curves 1 px wide (cosmetic) paint ~2x faster than 1.5 px (a stroked outline per line).
"""
from __future__ import annotations

import pyqtgraph as pg

GRID_RGB = (225, 225, 225)
CURVE_WIDTH = 1


def light_grid(plot_item) -> pg.GridItem:
    """An opaque light-grey grid behind the curves (instead of ``showGrid``)."""
    grid = pg.GridItem(pen=pg.mkPen(GRID_RGB), textPen=None)
    grid.setZValue(-100)
    plot_item.addItem(grid, ignoreBounds=True)
    return grid


def curve_pen(color) -> pg.QtGui.QPen:
    return pg.mkPen(color, width=CURVE_WIDTH)
