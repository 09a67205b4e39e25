"""The 3-D view's legend (``app.render.hud.ViewHud``): entries of one colour share a row, and
on a short view the legend stands beside the colour key instead of climbing over the scene."""
import pytest

pytest.importorskip("vtkmodules")

from app.render.hud import PAD, ViewHud  # noqa: E402

HIT = (213, 94, 0)


class _Window:
    def __init__(self, w, h):
        self.size = (w, h)

    def GetSize(self):
        return self.size


class _Plotter:
    """What the HUD uses of a pyvista plotter: add/remove actors and the window's size."""

    def __init__(self, w, h):
        self.ren_win = _Window(w, h)
        self.actors = {}

    def add_actor(self, actor, name=None, **kw):
        self.actors[name] = actor

    def remove_actor(self, actor, **kw):
        key = actor if isinstance(actor, str) else next((k for k, a in self.actors.items() if a is actor), None)
        self.actors.pop(key, None)


ENTRIES = [("body: hand", (176, 196, 222)), ("body: ball", (222, 200, 160)), ("body: table", (170, 210, 180)),
           ("links in contact", HIT), ("contact segment", HIT), ("contact normal", (0, 70, 160)),
           ("deepest contact", (120, 0, 60))]


def test_entries_of_one_colour_share_a_row():
    hud = ViewHud(_Plotter(1200, 900))
    hud.set_legend(ENTRIES)
    assert len(hud.legend_rows) == 6
    row = [r for r in hud.legend_rows if r[2] == HIT]
    assert len(row) == 1 and row[0][1].GetInput() == "links in contact \u00b7 contact segment"
    assert hud.legend_labels() == [label for label, _ in ENTRIES]  # every entry still named
    hud.set_legend(ENTRIES[:4])  # the pool: a shorter legend hides the rows left over
    assert len(hud.legend_rows) == 4 and sum(lab.GetVisibility() for _, lab in hud._legend_pool) == 4


def _legend_xy(hud):
    return [sw.GetPosition() for sw, *_ in hud.legend_rows]


def test_short_view_puts_the_legend_beside_the_key():
    tall = ViewHud(_Plotter(1200, 900))
    tall.set_legend(ENTRIES)
    xs = {x for x, _ in _legend_xy(tall)}
    assert xs == {PAD}  # stacked above the key, in the key's column
    assert min(y for _, y in _legend_xy(tall)) > tall.state_title.GetPosition()[1]

    short = ViewHud(_Plotter(750, 440))  # the 3-D view of a 1366x768 window
    short.set_legend(ENTRIES)
    pos = _legend_xy(short)
    key_right = max(lab.GetPosition()[0] for _, lab in short.state_rows)
    assert all(x > key_right for x, _ in pos)  # a column of its own, right of the key's swatches
    assert min(y for _, y in pos) == PAD  # bottom-aligned with the key
    top = max(y for _, y in pos)
    assert top <= short.state_title.GetPosition()[1]  # no higher than the key's title
    assert top < 0.45 * 440
