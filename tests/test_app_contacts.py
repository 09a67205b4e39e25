"""Contacts and Verdict in the debugger: the model's frame contacts equal per-link-pair
brute force; the layer draws segments, normals and the deepest contact; the table selects
and focuses a contact; the Verdict panel shows every engine and a disagreement opens the
stepper on the responsible pair."""
import numpy as np
import pytest

from app.model import Session
from app.model.contacts import frame_contacts, run_verdict, verdict_target
from cdcore.contacts import reference_contacts


def _frame_with_contacts(session, start=0):
    for f in range(start, session.scene.frames):
        session.goto(f)
        if session.result.contacts:
            return f
    raise AssertionError("no frame with contacts")


@pytest.mark.parametrize("scene", ["hand-ball", "rigid-torus"])
def test_frame_contacts_equal_brute_force_per_link_pair(scene):
    s = Session()
    s.load_scene(scene, frames=60)
    f = _frame_with_contacts(s)
    c = frame_contacts(s.scene, s.result, f)
    assert len(c) > 0 and c.deepest == 0 and np.all(np.diff(c.depths) <= 0)
    for key in {(int(k), *map(int, b), *map(int, lk)) for k, b, lk in zip(c.scene_pair, c.bodies, c.links)}:
        k, i, j, la, lb = key
        A, B = s.scene.bodies[i], s.scene.bodies[j]
        ref = reference_contacts(A.body.bvhs[la].mesh, A.link_poses[f][la], B.body.bvhs[lb].mesh,
                                 B.link_poses[f][lb])
        rows = np.flatnonzero((c.scene_pair == k) & np.all(c.links == (la, lb), axis=1))
        got = {tuple(t): d for t, d in zip(c.tris[rows].tolist(), c.depths[rows])}
        assert set(got) == {tuple(p) for p in ref.pairs.tolist()}
        for p, d in zip(ref.pairs.tolist(), ref.depths):
            assert got[tuple(p)] == pytest.approx(d, abs=1e-9)


def test_verdict_on_rigid_torus_agrees():
    s = Session()
    s.load_scene("rigid-torus", frames=60)
    f = _frame_with_contacts(s)
    t = verdict_target(s.scene, s.result, 0, frame_contacts(s.scene, s.result, f))
    assert t.links == (0, 0)
    check = run_verdict(s.scene, f, t, s.bv)
    assert {"cdcore", "brute"} <= set(check.verdicts) or "brute" in check.skipped
    assert check.verdicts["cdcore"].hit


# ---- the window ---------------------------------------------------------------------------
pytest.importorskip("pytestqt")
from PySide6 import QtCore, QtWidgets  # noqa: E402


@pytest.fixture
def window(qtbot, tmp_path):
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()


def test_contacts_layer_and_table(window):
    s = window.session
    s.load_scene("hand-ball", frames=60)
    window._options_changed()
    f = _frame_with_contacts(s, 10)
    view = s.view
    assert view.contacts is not None and len(view.contacts) > 0
    layer = window.contacts_layer
    for name in ("contact-segments", "contact-normals", "contact-deepest", "contact-deepest-ends"):
        assert layer.visible(name), name
    assert layer.data["contact-segments"].n_lines == len(view.contacts)
    labels = [lab for lab, _ in window.view3d.legend_entries()]
    assert "contact segment" in labels and "deepest contact" in labels and any("normal" in x for x in labels)
    # the table: one row per contact (up to its cap), deepest first; a row selects and focuses
    panel = window.contacts_panel
    assert panel.model.rowCount() == len(view.contacts)
    cam0 = np.array(window.plotter.camera.position)
    panel.select(0)
    assert layer.selected == 0 and layer.visible("contact-selected")
    assert not np.allclose(cam0, window.plotter.camera.position)
    assert "selected contact" in [lab for lab, _ in window.view3d.legend_entries()]
    # arrows grow with the depth
    lengths = window.contacts_layer.arrow_lengths(np.asarray(view.contacts.depths))
    assert lengths[0] == lengths.max() and np.all(np.diff(lengths) <= 1e-15)
    # switched off: nothing computed, nothing drawn
    panel.show_box.setChecked(False)
    s.goto(f)
    assert s.view.contacts is None and not layer.visible("contact-segments")


def test_verdict_panel_and_disagreement_opens_the_stepper(window, monkeypatch):
    s = window.session
    s.load_scene("rigid-torus", frames=60)
    window._options_changed()
    _frame_with_contacts(s)
    panel = window.verdict_panel
    check = panel.run()
    assert check is not None and panel.table.rowCount() == len(check.verdicts) >= 2
    assert "agrees" in panel.reasons.text() or check.disagreements
    # a library that misses the deepest pair: the panel says why and opens the stepper
    import app.widgets.verdict_panel as vp
    from cdcore.crosscheck import Verdict, crosscheck

    def lossy(scene, frame, target, bv):
        (i, j), (la, lb) = target.bodies, target.links
        A, B = scene.bodies[i], scene.bodies[j]

        def mine(ma, pa, mb, pb):
            ref = reference_contacts(ma, pa, mb, pb)
            pairs = np.delete(ref.pairs, int(np.argmax(ref.depths)), axis=0)
            return Verdict("mine", len(pairs) > 0, len(pairs), 0.0, 0.0, None, pairs, None, 0.0)
        return crosscheck(A.body.bvhs[la].mesh, A.link_poses[frame][la], B.body.bvhs[lb].mesh,
                          B.link_poses[frame][lb], engines=("brute",), peers={"custom": {"mine": mine}})
    monkeypatch.setattr(vp, "run_verdict", lossy)
    opened = []
    panel.open_in_stepper.connect(lambda t, tris: opened.append((t, tris)))
    check = panel.run()
    assert [d.reason for d in check.disagreements] == ["missed_pair"]
    assert "missed pair" in panel.reasons.text() and panel.stepper_btn.isEnabled()
    assert opened and opened[0][1] == check.disagreements[0].pair
    dock = window.findChild(QtWidgets.QDockWidget, "Traversal_stepper")
    assert dock.isVisible() and window.stepper_panel.stepper is not None


def test_contacts_table_sizes_its_columns_once_per_scene(qtbot, monkeypatch):
    """Column sizing measures rows: it ran on every refresh (a chained ``a != n > 0``
    test), ~190 ms per refresh on hand-ball; now once per scene and when a longer link name
    appears (its column then fits the longest name), from the first rows."""
    import dataclasses

    from app.widgets.contacts_panel import SIZE_ROWS, ContactsPanel
    s = Session()
    s.load_scene("hand-ball", frames=60)
    f = _frame_with_contacts(s, 10)
    c = frame_contacts(s.scene, s.result, f)
    assert len(c) > 1
    panel = ContactsPanel(s)
    qtbot.addWidget(panel)
    calls = []
    monkeypatch.setattr(panel.table, "resizeColumnsToContents", lambda: calls.append(1))
    for _ in range(3):
        panel.show_contacts(c)
    assert len(calls) == 1 and panel.model.rowCount() == len(c)
    longer = dataclasses.replace(c, names=c.names[:-1] + (c.names[-1] + " (a much longer link name)",))
    panel.show_contacts(longer)
    panel.show_contacts(c)
    assert len(calls) == 2
    fm = panel.table.fontMetrics()
    assert panel.table.columnWidth(0) >= fm.horizontalAdvance(longer.names[-1])
    panel.clear()  # a new scene: its names are sized again
    panel.show_contacts(c)
    panel.show_contacts(c)
    assert len(calls) == 3
    assert panel.table.verticalHeader().resizeContentsPrecision() == SIZE_ROWS


def test_contact_arrows_match_pyvista_glyphs():
    """The arrows placed by numpy are pyvista's glyph filter's arrows: per arrow the same
    points up to a turn about its (symmetric) axis: equal (along-axis, radial) coordinates."""
    import pyvista as pv

    from app.render.contacts import ARROW_SIDES, ContactsLayer
    rng = np.random.default_rng(7)
    k = 9
    origins, dirs = rng.normal(size=(k, 3)), rng.normal(size=(k, 3))
    dirs[3] = (0.0, 0.0, 0.0)  # a zero normal draws no arrow
    dirs[4] = (2.0, 0.0, 0.0)  # along the template's own axis
    lengths = rng.uniform(0.1, 2.0, k)
    plotter = pv.Plotter(off_screen=True)
    layer = ContactsLayer(plotter)
    layer._arrows("contact-normals", origins, dirs, lengths, width=1.5)
    got = layer.data["contact-normals"]
    ok = np.linalg.norm(dirs, axis=1) > 0
    cloud = pv.PolyData(origins[ok])
    cloud["vec"] = dirs[ok] * lengths[ok, None]
    cloud["len"] = lengths[ok]
    ref = cloud.glyph(orient="vec", scale="len", factor=1.0,
                      geom=pv.Arrow(tip_length=0.3, tip_radius=0.12, shaft_radius=0.0375, tip_resolution=ARROW_SIDES,
                                    shaft_resolution=ARROW_SIDES)).triangulate()
    assert got.n_points == ref.n_points and got.n_cells == ref.n_cells
    m = got.n_points // ok.sum()
    P, Q = np.asarray(got.points).reshape(-1, m, 3), np.asarray(ref.points).reshape(-1, m, 3)
    for a, (o, d, n) in enumerate(zip(origins[ok], dirs[ok], lengths[ok])):
        u = d / np.linalg.norm(d)

        def coords(X):
            rel = X - o
            along = rel @ u
            c = np.round(np.c_[along, np.linalg.norm(rel - along[:, None] * u, axis=1)] / n, 6) + 0.0
            return c[np.lexsort((c[:, 1], c[:, 0]))]
        np.testing.assert_allclose(coords(P[a]), coords(Q[a]), atol=1e-5)
    plotter.close()


def test_contact_layer_reuses_its_buffers_and_draws_exactly_the_frame():
    """Frames of 300, 5, 0, 7 and 300 contacts: every PolyData holds exactly that frame's
    points and cells (the arrows those of a fresh layer), and the point buffers are the
    same objects throughout (no per-frame allocation of the frame's size)."""
    import pyvista as pv

    from app.render.contacts import MAX_ARROWS, ContactsLayer

    contacts, View = _random_contacts, _ContactsView

    plotter = pv.Plotter(off_screen=True)
    layer = ContactsLayer(plotter)
    layer.diag = 1.0
    bufs = None
    for k, seed in ((300, 1), (5, 2), (0, 3), (7, 4), (300, 5)):
        c = contacts(k, seed)
        layer.update(View(c))
        if k == 0:
            assert not any(layer.visible(n) for n in layer.actors)
            continue
        seg = layer.data["contact-segments"]
        assert seg.n_points == 2 * k and seg.n_lines == k
        np.testing.assert_array_equal(np.asarray(seg.points), c.points.reshape(-1, 3))
        np.testing.assert_array_equal(seg.lines.reshape(-1, 3)[:, 1:], np.arange(2 * k).reshape(k, 2))
        assert layer.data["contact-ends"].n_verts == 2 * k
        fresh_plotter = pv.Plotter(off_screen=True)
        fresh = ContactsLayer(fresh_plotter)
        fresh.diag = 1.0
        fresh.update(View(c))
        got, ref = layer.data["contact-normals"], fresh.data["contact-normals"]
        assert got.n_cells == ref.n_cells == min(k, MAX_ARROWS) * (ref.n_cells // min(k, MAX_ARROWS))
        np.testing.assert_array_equal(np.asarray(got.points), np.asarray(ref.points))
        np.testing.assert_array_equal(got.faces, ref.faces)
        fresh_plotter.close()
        now = {n: b["pts"] for n, b in layer._bufs.items()}
        if bufs is not None:  # the first frame sized them
            assert all(now[n] is bufs[n] for n in bufs if n in now), "a buffer was reallocated"
        bufs = now
    plotter.close()


def test_driven_contacts_table_follows_the_windows_readouts_while_playing(qtbot):
    """A driven panel (the window's) does not refresh on its own clock while playing (its
    repaint then fell in frames of its own); ``refresh`` shows the latest frame; paused,
    every frame shows at once."""
    from app.widgets.contacts_panel import ContactsPanel
    s = Session()
    s.load_scene("hand-ball", frames=60)
    s.wants = {"trace": False, "heat": False, "contacts": True}
    panel = ContactsPanel(s, driven=True)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    s.playing = True
    f = _frame_with_contacts(s, 5)
    assert panel.contacts is None and panel.model.rowCount() == 0  # held back while playing
    panel.refresh()
    assert panel.contacts is s.view.contacts and panel.model.rowCount() == len(s.view.contacts) > 0
    s.goto(f + 1)
    assert panel.contacts is not s.view.contacts
    panel.refresh()
    assert panel.contacts is s.view.contacts
    s.playing = False
    s.goto(f + 2)
    assert panel.contacts is s.view.contacts  # paused: at once


def test_contacts_layer_count_changes_keep_its_vtk_arrays():
    """A new contact count only sets the tuple counts of the layer's VTK arrays: the same
    vtkPoints / vtkCellArray / data arrays, still viewing the layer's buffers (new
    wrappers per count change cost ~15x the point write, and counts change nearly every
    frame); a rendered frame equals a fresh layer's."""
    import pyvista as pv

    from app.render.contacts import ContactsLayer

    contacts, View = _random_contacts, _ContactsView

    def addresses(layer):
        out = {}
        for name, poly in layer.data.items():
            cells = {"verts": poly.GetVerts(), "segments": poly.GetLines(), "arrows": poly.GetPolys()}
            ca = cells[layer._bufs[name]["cells"]]
            out[name] = (poly.GetPoints().GetAddressAsString("vtkObject"), ca.GetAddressAsString("vtkObject"),
                         ca.GetOffsetsArray().GetAddressAsString("vtkObject"),
                         poly.GetPoints().GetData().GetVoidPointer(0))
        return out

    plotter = pv.Plotter(off_screen=True, window_size=(200, 160))
    layer = ContactsLayer(plotter)
    layer.diag = 1.0
    layer.update(View(contacts(40, 0)))
    first = addresses(layer)
    for k, seed in ((33, 1), (3, 2), (0, 3), (17, 4), (40, 5)):
        c = contacts(k, seed)
        layer.update(View(c))
        if k == 0:
            continue
        assert addresses(layer) == first, f"VTK arrays replaced at a count of {k}"
        for name, poly in layer.data.items():
            b = layer._bufs[name]
            assert int(poly.GetPoints().GetData().GetVoidPointer(0)[1:17], 16) == b["pts"].ctypes.data
            np.testing.assert_array_equal(np.asarray(poly.points), b["pts"][:b["n"]])
        seg = layer.data["contact-segments"]
        assert seg.n_points == 2 * k and seg.n_lines == k
        np.testing.assert_array_equal(np.asarray(seg.points), c.points.reshape(-1, 3))
    img = plotter.screenshot(return_img=True)
    fresh_plotter = pv.Plotter(off_screen=True, window_size=(200, 160))
    fresh_plotter.camera = plotter.camera.copy()
    fresh = ContactsLayer(fresh_plotter)
    fresh.diag = 1.0
    fresh.update(View(c))
    np.testing.assert_array_equal(fresh_plotter.screenshot(return_img=True), img)
    plotter.close()
    fresh_plotter.close()


def _random_contacts(k, seed):
    """A frame's worth of ``k`` random contacts (depths descending, as the model emits them)."""
    from app.model.contacts import FrameContacts
    rng = np.random.default_rng(seed)
    z = np.zeros((k, 2), np.int64)
    depths = np.sort(rng.uniform(0, 1, k))[::-1].copy()
    return FrameContacts(np.zeros(k, np.int64), z, z, z, rng.normal(size=(k, 2, 3)),
                         rng.normal(size=(k, 3)), depths, ("a / b",) * k)


class _ContactsView:
    """What ``ContactsLayer.update`` reads of a frame view."""

    def __init__(self, c):
        self.contacts = c
