"""The 3-D view's heads-up display, drawn by VTK so screenshots and exported frames carry
it: what is shown (scene, frame, BV type, update method, test, depth), the frame's
counters, the colour key of the active colouring (node states, or a heat colour bar with
its scale), the k-DOP realignment view's key, and a centred busy message (compiling).

Text actors are created once and only get ``SetInput`` / visibility per frame (a few µs).
Positions are in pixels from the view's corners, so nothing scales with the window.
"""
from __future__ import annotations

import numpy as np
from vtkmodules.vtkCommonCore import vtkLookupTable
from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
from vtkmodules.vtkRenderingCore import vtkTextActor

from .colors import HEAT_CMAP, STATE_COLORS, STATE_LABELS, colormap_table, to_float

FONT = 13
PAD = 8


def _text_actor(size=FONT, color=(0.1, 0.1, 0.1), bold=False, background=0.75, justify="left",
                vertical="top"):
    a = vtkTextActor()
    p = a.GetTextProperty()
    p.SetFontSize(size)
    p.SetColor(*color)
    p.SetBold(bold)
    p.SetFontFamilyToArial()
    p.SetBackgroundColor(1.0, 1.0, 1.0)
    p.SetBackgroundOpacity(background)
    p.SetFrame(False)
    {"left": p.SetJustificationToLeft, "right": p.SetJustificationToRight,
     "center": p.SetJustificationToCentered}[justify]()
    {"top": p.SetVerticalJustificationToTop, "bottom": p.SetVerticalJustificationToBottom,
     "center": p.SetVerticalJustificationToCentered}[vertical]()
    a.GetPositionCoordinate().SetCoordinateSystemToDisplay()
    a.SetPickable(False)
    return a


class ViewHud:
    """``plotter``: a pyvista ``Plotter`` / ``QtInteractor``. Call ``layout()`` when the
    view is resized (anchors the corner blocks), ``set_info`` per frame, ``set_key`` when
    the colouring changes. Never renders."""

    def __init__(self, plotter, name: str = "hud"):
        self.plotter = plotter
        self.name = name
        self.info = _text_actor()
        self.counters = _text_actor(justify="right")
        self.busy = _text_actor(size=20, bold=True, background=0.9, justify="center", vertical="center")
        self.busy.SetVisibility(False)
        self.state_title = _text_actor(bold=True, vertical="bottom")
        self.state_title.SetInput("Node state")
        self.state_rows = []
        for label, rgb in zip(STATE_LABELS, STATE_COLORS):
            a = _text_actor(color=to_float(rgb), bold=True, vertical="bottom")
            a.SetInput(f"\u25a0 {label}")
            self.state_rows.append(a)
        self.heat_bar = self._make_heat_bar()
        self.realign_rows: list = []
        self._mode = "state"
        self.heat_max = 0.0
        for k, a in enumerate([self.info, self.counters, self.busy, self.state_title, *self.state_rows,
                               self.heat_bar]):
            plotter.add_actor(a, reset_camera=False, name=f"{name}-{k}", pickable=False, render=False)
        self.set_key("state")
        self.layout()

    # ---- content ---------------------------------------------------------------------
    def set_info(self, text: str, counters: str = "") -> None:
        self.info.SetInput(text)
        self.counters.SetInput(counters)
        self.counters.SetVisibility(bool(counters))

    def set_busy(self, text: str | None) -> None:
        """A centred message (e.g. "compiling…"), or None to hide it."""
        self.busy.SetVisibility(bool(text))
        if text:
            self.busy.SetInput(text)
            self.layout()

    def set_key(self, mode: str, heat_max: float = 0.0, heat_frames: int = 0) -> None:
        """The colour key: ``"state"`` (the five node states), ``"heat"`` (a colour bar from
        0 to ``heat_max`` tests over ``heat_frames`` frames) or ``"none"``."""
        self._mode = mode
        for a in (self.state_title, *self.state_rows):
            a.SetVisibility(mode == "state")
        self.heat_bar.SetVisibility(mode == "heat")
        if mode == "heat":
            self.heat_max = float(max(heat_max, 1.0))
            self.heat_bar.GetLookupTable().SetTableRange(0.0, self.heat_max)
            self.heat_bar.SetTitle(f"node tests\n(last {heat_frames} frames)" if heat_frames else "node tests")
        self.layout()

    def set_realign_key(self, entries) -> None:
        """``entries``: [(label, uint8 RGB)] of the realignment wires drawn ([]: none)."""
        for a in self.realign_rows:
            self.plotter.remove_actor(a, render=False)
        self.realign_rows = []
        if entries:
            title = _text_actor(bold=True, vertical="bottom")
            title.SetInput("k-DOP realignment")
            self.realign_rows.append(title)
            for label, rgb in entries:
                a = _text_actor(color=to_float(rgb), bold=True, vertical="bottom")
                a.SetInput(f"\u2014 {label}")
                self.realign_rows.append(a)
            for k, a in enumerate(self.realign_rows):
                self.plotter.add_actor(a, reset_camera=False, name=f"{self.name}-realign-{k}", pickable=False,
                                       render=False)
        self.layout()

    # ---- placement -------------------------------------------------------------------
    def layout(self) -> None:
        w, h = self._size()
        line = int(FONT * 1.45)
        self.info.SetPosition(PAD, h - PAD)
        self.counters.SetPosition(w - PAD, h - PAD)
        self.busy.SetPosition(w // 2, h // 2)
        # bottom-left: the colour key, stacked upwards
        y = PAD
        for a in reversed(self.state_rows):
            a.SetPosition(PAD, y)
            y += line
        self.state_title.SetPosition(PAD, y)
        bar = self.heat_bar
        bar.GetPositionCoordinate().SetValue(PAD, PAD)
        bar.SetWidth(70)
        bar.SetHeight(min(220, max(120, h // 3)))
        # bottom-right: the realignment key
        y = PAD
        for a in reversed(self.realign_rows):
            a.GetTextProperty().SetJustificationToRight()
            a.SetPosition(w - PAD, y)
            y += line

    def _size(self):
        try:
            w, h = self.plotter.ren_win.GetSize()
        except AttributeError:
            w, h = self.plotter.window_size
        return max(int(w), 200), max(int(h), 150)

    def _make_heat_bar(self):
        table = colormap_table(HEAT_CMAP).astype(np.float64) / 255.0
        lut = vtkLookupTable()
        lut.SetNumberOfTableValues(len(table))
        for i, (r, g, b) in enumerate(table):
            lut.SetTableValue(i, r, g, b, 1.0)
        lut.SetTableRange(0.0, 1.0)
        lut.Build()
        bar = vtkScalarBarActor()
        bar.SetLookupTable(lut)
        bar.GetPositionCoordinate().SetCoordinateSystemToDisplay()
        bar.GetPosition2Coordinate().SetCoordinateSystemToDisplay()
        bar.SetNumberOfLabels(5)
        bar.SetLabelFormat("%.0f")
        bar.SetMaximumWidthInPixels(90)
        bar.SetDrawBackground(True)
        bar.GetBackgroundProperty().SetColor(1.0, 1.0, 1.0)
        bar.GetBackgroundProperty().SetOpacity(0.75)
        for tp in (bar.GetTitleTextProperty(), bar.GetLabelTextProperty()):
            tp.SetColor(0.1, 0.1, 0.1)
            tp.SetFontSize(FONT)
            tp.SetShadow(False)
            tp.SetItalic(False)
        bar.SetUnconstrainedFontSize(True)
        bar.SetPickable(False)
        return bar

    @property
    def key_mode(self) -> str:
        return self._mode

    def clear(self) -> None:
        self.set_realign_key([])
        for k in range(5 + len(self.state_rows)):
            self.plotter.remove_actor(f"{self.name}-{k}", render=False)
