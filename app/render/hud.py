"""The 3-D view's heads-up display, drawn by VTK so screenshots and exported frames carry
it: what is shown (scene, frame, BV type, update method, test, depth), the frame's
counters, the colour key of the active colouring (node states, or heat levels with their
counts), a legend of the view's other colours, the k-DOP realignment view's key, and a centred busy message (compiling).

Text actors are created once and only get ``SetInput`` / visibility per frame (a few µs).
Positions are in pixels from the view's corners, so nothing scales with the window.
"""
from __future__ import annotations

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
    the colouring changes, ``set_legend`` for the other colours in the view (stepper pair,
    links in contact, separating axis, closest points). Never renders.

    Every key row is a coloured swatch and a dark label: text drawn in a
    light colour (yellow heat, light grey) is unreadable on the white background."""

    HEAT_ROWS = 5

    def __init__(self, plotter, name: str = "hud"):
        self.plotter = plotter
        self.name = name
        self.info = _text_actor()
        self.counters = _text_actor(justify="right")
        self.busy = _text_actor(size=20, bold=True, background=0.9, justify="center", vertical="center")
        self.busy.SetVisibility(False)
        self.state_title = _text_actor(bold=True, vertical="bottom")
        self.state_title.SetInput("Node state")
        self.state_rows = [self._row(label, rgb) for label, rgb in zip(STATE_LABELS, STATE_COLORS)]
        self.heat_title = _text_actor(bold=True, vertical="bottom")
        table = colormap_table(HEAT_CMAP)
        self._heat_table = table
        self.heat_rows = [self._row("", table[int(round(k / (self.HEAT_ROWS - 1) * (len(table) - 1)))])
                          for k in range(self.HEAT_ROWS)]
        self.heat_rows.append(self._row("never tested", STATE_COLORS[0]))
        self.legend_rows: list = []  # the shown rows of the pool: (swatch, label, rgb, entry names)
        self._legend_pool: list = []
        self.realign_rows: list = []
        self._mode = "state"
        self.heat_max = 0.0
        self.heat_labels: list[str] = []
        actors = [self.info, self.counters, self.busy, self.state_title, self.heat_title]
        for sw, lab in self.state_rows + self.heat_rows:
            actors += [sw, lab]
        for k, a in enumerate(actors):
            plotter.add_actor(a, reset_camera=False, name=f"{name}-{k}", pickable=False, render=False)
        self._n_fixed = len(actors)
        self.set_key("state")
        self.layout()

    @staticmethod
    def _row(label, rgb):
        # the swatch: a glyph drawn in its colour on a background of the same colour (VTK's
        # built-in fonts have no U+25A0 square: the old "\u25a0 label" drew the label only)
        sw = _text_actor(color=to_float(rgb), bold=True, vertical="bottom", background=1.0)
        sw.GetTextProperty().SetBackgroundColor(*to_float(rgb))
        sw.SetInput("MM")
        lab = _text_actor(vertical="bottom", background=0.0)
        lab.SetInput(label)
        return sw, lab

    # ---- content ---------------------------------------------------------------------
    def set_info(self, text: str, counters: str = "") -> None:
        if self.info.GetInput() != text:  # an unchanged text costs no new texture
            self.info.SetInput(text)
        if self.counters.GetInput() != counters:
            self.counters.SetInput(counters)
        self.counters.SetVisibility(bool(counters))

    def set_busy(self, text: str | None) -> None:
        """A centred message (e.g. "compiling…"), or None to hide it."""
        self.busy.SetVisibility(bool(text))
        if text:
            self.busy.SetInput(text)
            self.layout()

    def set_key(self, mode: str, heat_max: float = 0.0, heat_frames: int = 0) -> None:
        """The colour key: ``"state"`` (the five node states), ``"heat"`` (node tests from 0
        to ``heat_max`` over ``heat_frames`` frames, five levels) or ``"none"``."""
        changed = mode != self._mode
        self._mode = mode
        for a in (self.state_title, *(x for row in self.state_rows for x in row)):
            a.SetVisibility(mode == "state")
        for a in (self.heat_title, *(x for row in self.heat_rows for x in row)):
            a.SetVisibility(mode == "heat")
        if mode == "heat":
            self.heat_max = float(max(heat_max, 1.0))
            title = f"Node tests (last {heat_frames} frames)" if heat_frames else "Node tests"
            if self.heat_title.GetInput() != title:
                self.heat_title.SetInput(title)
            self.heat_labels = []
            for k in range(self.HEAT_ROWS):
                v = self.heat_max * k / (self.HEAT_ROWS - 1)
                text = f"{v:,.0f}" if k else "1"
                self.heat_labels.append(text)
                if self.heat_rows[k][1].GetInput() != text:
                    self.heat_rows[k][1].SetInput(text)
        if changed:
            self.layout()

    def set_legend(self, entries) -> None:
        """The other colours in the view: [(label, uint8 RGB)] (drawn above the key).
        Entries of one colour share a row ("links in contact · contact segment": the same
        colour means the same thing, a hit; three identical swatches read as three
        meanings). Rows are a pool: a changed legend rewrites the rows' text and colours in
        place and hides the rows left over (adding and removing actors through pyvista cost
        ~1 ms per row, and legends change whenever contacts come and go)."""
        merged: dict = {}
        for label, rgb in entries:
            merged.setdefault(tuple(int(c) for c in rgb), []).append(str(label))
        want = [(" \u00b7 ".join(names), rgb, tuple(names)) for rgb, names in merged.items()]
        if [(r[1].GetInput(), r[2]) for r in self.legend_rows] == [w[:2] for w in want]:
            return
        while len(self._legend_pool) < len(want):
            k = len(self._legend_pool)
            sw, lab = self._row("", (0, 0, 0))
            self.plotter.add_actor(sw, reset_camera=False, name=f"{self.name}-legend-s{k}", pickable=False,
                                   render=False)
            self.plotter.add_actor(lab, reset_camera=False, name=f"{self.name}-legend-l{k}", pickable=False,
                                   render=False)
            self._legend_pool.append((sw, lab))
        self.legend_rows = []
        for k, (sw, lab) in enumerate(self._legend_pool):
            on = k < len(want)
            sw.SetVisibility(on)
            lab.SetVisibility(on)
            if on:
                label, rgb, names = want[k]
                if lab.GetInput() != label:
                    lab.SetInput(label)
                c = to_float(rgb)
                sw.GetTextProperty().SetColor(*c)
                sw.GetTextProperty().SetBackgroundColor(*c)
                self.legend_rows.append((sw, lab, rgb, names))
        self.layout()

    def legend_labels(self) -> list[str]:
        """Every entry's label, rows of one colour split into their entries."""
        return [name for *_, names in self.legend_rows for name in names]

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
        line = int(FONT * 1.5)
        self.info.SetPosition(PAD, h - PAD)
        self.counters.SetPosition(w - PAD, h - PAD)
        self.busy.SetPosition(w // 2, h // 2)
        # bottom-left, stacked upwards: the colour key (states or heat), then the legend; when
        # the two would climb over ~45 % of the view's height (a 1366x768 screen: ~13 rows
        # over a ~440 px view) the legend stands in a second column beside the key instead
        swatch = 2 * FONT + 8
        rows = self.state_rows if self._mode == "state" else self.heat_rows if self._mode == "heat" else []
        n_key = len(rows) + (1 if rows else 0)
        stacked = n_key * line + 4 + len(self.legend_rows) * line
        beside = bool(rows) and bool(self.legend_rows) and stacked > 0.45 * h
        y = PAD
        for sw, lab in reversed(rows):
            sw.SetPosition(PAD, y)
            lab.SetPosition(PAD + swatch, y)
            y += line
        if rows:
            (self.state_title if self._mode == "state" else self.heat_title).SetPosition(PAD, y)
            y += line + 4
        x = PAD
        if beside:
            y = PAD
            titles = [self.state_title.GetInput() if self._mode == "state" else self.heat_title.GetInput()]
            widest = max(len(t) for t in [*(lab.GetInput() for _, lab in rows), *titles])
            x = PAD + swatch + int(widest * FONT * 0.62) + 3 * PAD  # Arial's mean advance ~0.6 em
        for sw, lab, *_ in reversed(self.legend_rows):
            sw.SetPosition(x, y)
            lab.SetPosition(x + swatch, y)
            y += line
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

    @property
    def key_mode(self) -> str:
        return self._mode

    def clear(self) -> None:
        self.set_realign_key([])
        self.set_legend([])
        for sw, lab in self._legend_pool:
            self.plotter.remove_actor(sw, render=False)
            self.plotter.remove_actor(lab, render=False)
        self._legend_pool = []
        for k in range(self._n_fixed):
            self.plotter.remove_actor(f"{self.name}-{k}", render=False)
