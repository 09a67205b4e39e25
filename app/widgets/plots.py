"""Cheap-to-paint pyqtgraph plots: the live plots repaint up to 10 times a second while
playing, in the same pass as the 3-D view, so their paint cost is frame time.

Measured under Xvfb (software rendering, a 700x200 plot of 4 curves x 600 points): the
axis grid of ``showGrid(alpha=0.3)`` costs ~10 ms per paint (translucent lines across the
whole view, drawn by both axis items); a ``GridItem`` with the same colour, opaque, ~1 ms.
Curves 1 px wide (cosmetic) paint ~2x faster than 1.5 px (a stroked outline per line).
"""
from __future__ import annotations

import pyqtgraph as pg

GRID_SHARE = 0.3  # the grid's colour: 30 % foreground over the background (what showGrid(alpha=0.3) drew)
CURVE_WIDTH = 1


def grid_color() -> tuple:
    """The opaque colour of a 30 % foreground line on the plots' background."""
    bg = pg.mkColor(pg.getConfigOption("background"))
    fg = pg.mkColor(pg.getConfigOption("foreground"))
    mix = [round((1 - GRID_SHARE) * b + GRID_SHARE * f) for b, f in
           zip(bg.getRgb()[:3], fg.getRgb()[:3])]
    return tuple(mix)


def light_grid(plot_item) -> pg.GridItem:
    """An opaque grid behind the curves, as faint as ``showGrid(alpha=0.3)`` (instead of it)."""
    grid = pg.GridItem(pen=pg.mkPen(grid_color()), textPen=None)
    grid.setZValue(-100)
    plot_item.addItem(grid, ignoreBounds=True)
    return grid


def curve_pen(color) -> pg.QtGui.QPen:
    return pg.mkPen(color, width=CURVE_WIDTH)


def x_span(n: int, window: int, first: int = 50) -> int:
    """The frames the x axis shows for ``n`` frames of data: ``first`` doubled until it
    holds them, at most ``window``. The range (and the axis' ticks) changes only when the
    data outgrows it, not on every refresh."""
    span = first
    while span < n and span < window:
        span *= 2
    return max(min(span, window), 2)
