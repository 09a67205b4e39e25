"""Palettes of the 3D views.

State colours follow the Okabe-Ito palette (Okabe & Ito 2008), chosen to stay apart for
the common colour-vision deficiencies; they also differ in lightness (grey 75 %, sky
blue 49 %, orange 63 %, reddish purple 64 %, vermillion 48 %) so they remain tellable in
greyscale. Colours are uint8 RGB unless a name says ``_f`` (floats in 0..1).
"""
from __future__ import annotations

import numpy as np

from app.model.trees import STATE_NAMES

# node states, indexed like app.model.trees: NOT_VISITED, SEPARATED, OVERLAP, LEAF_FALSE, LEAF_HIT
STATE_COLORS = np.array([
    (190, 190, 190),  # not visited: light grey
    (0, 114, 178),    # visited & separated: blue
    (230, 159, 0),    # overlapping (descended): orange
    (204, 121, 167),  # leaf pair false alarm: reddish purple
    (213, 94, 0),     # leaf pair hit: vermillion (red)
], dtype=np.uint8)
STATE_COLORS.setflags(write=False)
STATE_COLORS_F = STATE_COLORS / 255.0
STATE_LABELS = STATE_NAMES

# the two nodes of the current stepper pair (A, B) and their projected intervals
# near-black and magenta: they stand out on white and against every state colour (the
# Okabe-Ito yellow / sky blue used before vanished on white and next to "separated" blue)
PAIR_COLORS = np.array([(20, 20, 20), (200, 0, 200)], dtype=np.uint8)
PAIR_COLORS.setflags(write=False)
AXIS_COLOR = (0, 158, 115)  # bluish green: the separating axis arrow
CONTACT_COLOR = (213, 94, 0)  # vermillion: contact points
TRIANGLE_HIGHLIGHT = (213, 94, 0)  # contact triangles on the meshes

# bodies: muted, light colours so that the node colours drawn over them stand out
BODY_COLORS = np.array([
    (176, 196, 222),  # light steel blue
    (222, 200, 160),  # sand
    (170, 210, 180),  # sage
    (215, 180, 200),  # mauve
    (200, 200, 150),  # khaki
    (160, 200, 210),  # teal grey
], dtype=np.uint8)
BODY_COLORS.setflags(write=False)

HEAT_CMAP = "viridis"  # perceptually uniform and colour-blind safe
HEAT_ZERO_COLOR = STATE_COLORS[0]  # nodes never tested in the heat window

# viridis at 9 stops, the fallback when matplotlib is absent
_VIRIDIS = np.array([(68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141),
                     (39, 173, 129), (92, 200, 99), (170, 220, 50), (253, 231, 37)], dtype=np.float64)


def body_color(index: int) -> np.ndarray:
    """uint8 RGB of body ``index`` (the palette cycles)."""
    return BODY_COLORS[index % len(BODY_COLORS)]


def to_float(rgb) -> tuple:
    """A uint8 RGB triple as floats in 0..1 (what pyvista's ``color=`` takes)."""
    return tuple(float(x) / 255.0 for x in rgb)


def colormap_table(name: str = HEAT_CMAP, n: int = 256) -> np.ndarray:
    """(n, 3) uint8 samples of colormap ``name`` (matplotlib's, if installed; otherwise a
    viridis ramp whatever the name)."""
    try:
        import matplotlib
        cmap = matplotlib.colormaps[name]
        return (np.asarray(cmap(np.linspace(0.0, 1.0, n)))[:, :3] * 255.0 + 0.5).astype(np.uint8)
    except (ImportError, KeyError):
        x = np.linspace(0.0, 1.0, n) * (len(_VIRIDIS) - 1)
        i = np.minimum(x.astype(int), len(_VIRIDIS) - 2)
        w = (x - i)[:, None]
        return ((1 - w) * _VIRIDIS[i] + w * _VIRIDIS[i + 1] + 0.5).astype(np.uint8)


_TABLES: dict = {}


def heat_colors(heat: np.ndarray, vmax: float | None = None, cmap: str = HEAT_CMAP) -> np.ndarray:
    """uint8 RGB (k, 3) of heat counts: linear in ``heat / vmax`` (``vmax`` defaults to
    the largest count); counts of zero get ``HEAT_ZERO_COLOR`` (never tested)."""
    table = _TABLES.get(cmap)
    if table is None:
        table = _TABLES[cmap] = colormap_table(cmap)
    h = np.asarray(heat, dtype=np.float64)
    top = float(vmax) if vmax is not None else (float(h.max()) if h.size else 1.0)
    idx = np.clip(h * ((len(table) - 1) / max(top, 1e-12)), 0, len(table) - 1).astype(np.intp)
    out = table[idx]
    out[h <= 0] = HEAT_ZERO_COLOR
    return out
