"""The main window: docks, menus, files and the frame loop's wiring. The 3-D view's
actors belong to the render module (``app.render.scene_view.SceneView``); the state to
the Qt-free model (``app.model.Session``), which emits one ``FrameView`` per frame.

Frame path (one way): timeline / timer → ``Session.goto`` → ``FrameView`` →
``SceneView.draw`` (every frame) and the docks' read-outs (≤ 10 Hz while playing) →
``Session.commit`` with the frame's render and draw times.

Layout: a main toolbar (scene, BV type, update method, test, play / step, depth, camera),
a timeline bar at the bottom, the scene panel with [robot joints | hierarchy view] on the
left (the joints raised when a robot is loaded), the inspectors tabbed on the right
(stepper, insight, realignment, distance) and the plots tabbed at the bottom (timing,
compare). Adding a dock: see README "Adding a panel" (``add_panel``)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from .model import Session
from .widgets.errors import guarded, show_error
from .widgets.hierarchy_panel import HierarchyPanel
from .widgets.playback import PlaybackBar
from .widgets.scene_panel import ScenePanel
from .widgets.stepper_panel import StepperPanel
from .widgets.toolbar import MainToolBar

MESH_FILTER = "Meshes (*.stl *.obj *.ply *.off *.glb *.gltf *.3mf *.dae);;All files (*)"
LAYOUT_VERSION = 3  # bump when the docks change: an older saved layout is then ignored
DEFAULT_SCENE = "chains-6to1"
READOUT_PERIOD = 0.1  # s between read-out updates (status bar, plots, tables) during playback
READOUT_FRAMES = 3  # ... and frames between them
RECENT_MAX = 8
AREA = QtCore.Qt.DockWidgetArea
#: the Timing dock's minimum height before its panel is built (``TimingPanel`` asks the same):
#: the first window's layout is the one it keeps once the plots are in
TIMING_MIN_HEIGHT = 160

SHORTCUTS = (("Space", "play / pause"), ("→ / ←", "next / previous frame (when no slider or box has focus)"),
             ("N", "stepper: next node pair"), ("F", "focus the stepper's pair, looking across its separating axis"),
             ("Home", "fit the view to the bodies at this frame"), ("Shift+Home", "fit the whole motion"),
             ("Click a box", "select that node in the stepper (its first tested pair)"),
             ("Ctrl+O", "open mesh"), ("Ctrl+Q", "quit"), ("F1", "this list"),
             ("Mouse", "left drag: rotate · right drag / wheel: zoom · middle drag or Shift+left: pan"))


def _noop(*_):
    pass


class _FitScrollArea(QtWidgets.QScrollArea):
    """A vertical scroll area never narrower than its panel's minimum width, kept up to
    date when the panel's content changes (longer names in a combo, a filled table)."""

    def __init__(self, widget, objectName=""):
        super().__init__(objectName=objectName)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.set_panel(widget)

    def set_panel(self, widget):
        """Hold ``widget`` (a lazily built dock's panel replaces its placeholder here)."""
        self.setWidget(widget)
        widget.installEventFilter(self)
        self._fit()

    def _fit(self):
        need = self.widget().minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width() + 2
        if need != self.minimumWidth():
            self.setMinimumWidth(need)

    def eventFilter(self, obj, event):
        if obj is self.widget() and event.type() == QtCore.QEvent.Type.LayoutRequest:
            QtCore.QTimer.singleShot(0, self, self._fit)
        return super().eventFilter(obj, event)


class _PaintWatch(QtCore.QObject):
    """The end of a shown window's first paint, once it has settled: the window and its
    widgets paint, the layout fixes queued at show time (fit_docks, stale tab bars hidden)
    paint again, and then a turn of the event loop paints nothing. ``done(t)`` is called
    then, with ``t`` = ``time.time()`` at the end of the last paint (the first turn that saw
    it): all of the window has been drawn and flushed to the screen by then. Made at the
    window's first show, a child of it (gone with it)."""

    def __init__(self, win, done, quiet_turns: int = 2):
        super().__init__(win)
        self.win, self.done, self.quiet_turns = win, done, quiet_turns
        self.paints = 0
        self._seen = 0
        self._quiet = 0
        self._when = time.time()
        QtWidgets.QApplication.instance().installEventFilter(self)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(1)  # a turn of the event loop (0 would spin it until the first paint)
        self.timer.timeout.connect(self._turn)
        self.timer.start()

    def eventFilter(self, obj, event):
        # QWidget.window unbound: a panel may shadow it (TimingPanel.window is a spin box)
        if event.type() == QtCore.QEvent.Type.Paint and isinstance(obj, QtWidgets.QWidget) \
                and QtWidgets.QWidget.window(obj) is self.win:
            self.paints += 1
        return False

    def _turn(self):
        if not self.paints:  # mapped, not painted yet
            return
        if self.paints != self._seen:
            self._seen, self._quiet, self._when = self.paints, 0, time.time()
            return
        self._quiet += 1
        if self._quiet >= self.quiet_turns:
            self.timer.stop()
            QtWidgets.QApplication.instance().removeEventFilter(self)
            self.done(self._when)


class _EditKeysFirst(QtCore.QObject):
    """Arrow keys go to the focused slider / spin box / text field / list instead of the
    window's frame-step shortcuts (accepting ShortcutOverride hands the key to the widget)."""

    EDITORS = (QtWidgets.QAbstractSlider, QtWidgets.QAbstractSpinBox, QtWidgets.QLineEdit,
               QtWidgets.QAbstractItemView, QtWidgets.QComboBox, QtWidgets.QPlainTextEdit, QtWidgets.QTextEdit)
    KEYS = (QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_Space, QtCore.Qt.Key.Key_Home)

    def eventFilter(self, obj, event):
        if event.type() == QtCore.QEvent.Type.ShortcutOverride and event.key() in self.KEYS \
                and isinstance(obj, self.EDITORS) and obj.hasFocus():
            if event.key() != QtCore.Qt.Key.Key_Space or isinstance(obj, (QtWidgets.QLineEdit,
                                                                         QtWidgets.QAbstractSpinBox)):
                event.accept()
                return True
        return False


class MainWindow(QtWidgets.QMainWindow):
    """The debugger window. ``session`` is the Qt-free model it binds to."""

    #: the window's first paint is over (``time.time()`` then): everything on screen was drawn
    #: once and flushed (``app.__main__`` reports it as the first window and starts the scene
    #: build then); the docks whose panels wait for it are built right after
    first_painted = QtCore.Signal(float)

    def __init__(self, session: Session | None = None, settings: QtCore.QSettings | None = None):
        super().__init__()
        self.painted_at = None  # time.time() of the end of the first paint, once painted
        self._paint_watched = False
        self._after_paint = []  # lazily built docks shown before the first paint: built after it
        #: True: those docks wait for ``release_panels()`` instead (``app.__main__``: until the
        #: first scene is drawn, so that their construction does not delay it)
        self.hold_panels = False
        from .render import colors
        from .render.native_view import make_plotter  # the 3-D view needs a display: import late
        from .render.scene_view import SceneView

        self.setWindowTitle("BVH debugger")
        self.setObjectName("MainWindow")
        self.setAcceptDrops(True)
        # no dock animations: every relayout of the window (a read-out label's new text
        # asks for one) made a QPropertyAnimation per dock (11 a read-out)
        self.setAnimated(False)
        # the left docks run the window's full height (the plots sit beside them): a robot's
        # joint sliders get the room
        self.setCorner(QtCore.Qt.Corner.BottomLeftCorner, AREA.LeftDockWidgetArea)
        self.settings = settings or QtCore.QSettings("bvh-debugger", "app")
        self.mesh_loader = None  # the mesh load running on a worker thread, if any
        self.exporter = None  # the frame export running, if any
        self.session = session or Session()
        self.session.deferred_commit = True
        self._lazy_factories = {}  # attribute -> (dock, factory) of the docks not built yet
        self._panels = {}  # attribute -> the panel of a lazily built dock

        frame = QtWidgets.QFrame()
        lay = QtWidgets.QVBoxLayout(frame)
        lay.setContentsMargins(0, 0, 0, 0)
        # a native child window VTK draws into (a QOpenGLWidget made Qt compose the whole
        # window through GL on every frame), no MSAA (x20 slower under software GL) and no
        # timer renders: the frame loop repaints once per frame
        self.plotter = make_plotter(frame)
        self.plotter.set_background("white")
        self._silence_vtk_keys()
        self._vtk_render_time = 0.0
        self.plotter.ren_win.AddObserver("StartEvent", self._render_started)
        self.plotter.ren_win.AddObserver("EndEvent", self._render_ended)
        self.plotter.interactor.installEventFilter(self)  # resizes re-anchor the HUD; clicks pick
        lay.addWidget(self.plotter.interactor)
        self.setCentralWidget(frame)
        self.view3d = SceneView(self.plotter)
        self.view3d._lighting()
        self.follow = False
        self._first_draw = False
        self._press = None
        self._readout_t = 0.0
        self._frames_since_readout = 0

        # panels, toolbars, docks
        self.scene_panel = ScenePanel(self.session)
        self.scene_panel.loader = self.load_ref
        self.hierarchy_panel = HierarchyPanel(colors.STATE_COLORS)
        self.stepper_panel = StepperPanel(self.session)
        self.playback = PlaybackBar(self.session)
        self.playback.driven = True
        self.toolbar = MainToolBar(self)
        self.addToolBar(QtCore.Qt.ToolBarArea.TopToolBarArea, self.toolbar)
        self.toolbar.add_group(self.scene_panel.toolbar_items())
        self.toolbar.add_group(self.playback.toolbar_items())
        self.toolbar.add_group(self.hierarchy_panel.toolbar_items())
        self._camera_actions()
        self.timeline = QtWidgets.QToolBar("Timeline", self, objectName="timelineBar", movable=False)
        self.timeline.addWidget(self.playback)
        self.addToolBar(QtCore.Qt.ToolBarArea.BottomToolBarArea, self.timeline)

        d_scene = self._dock("Scene", self.scene_panel, AREA.LeftDockWidgetArea, name="Scene_and_method")
        d_tree = self._dock("Hierarchy view", self.hierarchy_panel, AREA.LeftDockWidgetArea, name="Hierarchy_view")
        self.splitDockWidget(d_scene, d_tree, QtCore.Qt.Orientation.Vertical)
        self._robot_dock()
        d_step = self._dock("Stepper", self.stepper_panel, AREA.RightDockWidgetArea, name="Traversal_stepper",
                            tip="Traversal stepper: walk the selected pair's traversal node pair by node pair")
        self._optional_docks()
        d_step.raise_()
        d_tree.raise_()
        self._menus()

        self.status = QtWidgets.QLabel(objectName="statusLabel")
        # its text changes every read-out: fixed in both directions, a new text repaints the
        # label only (a label free in either direction asks for a layout pass of the window)
        self.status.setFixedSize(self.status.fontMetrics().horizontalAdvance("x" * 120),
                                 self.status.fontMetrics().height() + 4)
        self.statusBar().addPermanentWidget(self.status, 1)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(0)  # as fast as frames can be computed and drawn
        self.timer.timeout.connect(self._tick)

        self.session.scene_changed.connect(self._on_scene)
        self.session.frame_changed.connect(self._on_frame)
        self.session.settings_changed.connect(self._on_settings)
        self.session.recording_changed.connect(self._on_recording)
        self.session.recording_failed.connect(self._on_recording_failed)
        self.hierarchy_panel.changed.connect(self._options_changed)
        self.scene_panel.open_mesh_requested.connect(self.open_mesh_dialog)
        self.stepper_panel.step_changed.connect(self._on_step)
        self.stepper_panel.focus_requested.connect(self.focus_on_pair)
        for key, fn in ((QtCore.Qt.Key.Key_Space, self.playback.toggle),
                        (QtCore.Qt.Key.Key_Right, lambda: self.playback.step(1)),
                        (QtCore.Qt.Key.Key_Left, lambda: self.playback.step(-1)),
                        (QtCore.Qt.Key.Key_N, self.stepper_panel.next_btn.click)):
            sc = QtGui.QShortcut(QtGui.QKeySequence(key), self)
            sc.setContext(QtCore.Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(fn)
        self._edit_keys = _EditKeysFirst(self)
        QtWidgets.QApplication.instance().installEventFilter(self._edit_keys)
        self._restore()

    # ---- docks built when first shown ---------------------------------------------------------
    # Compare and Build lab sit behind Timing: nobody sees them before clicking their tab, and
    # building them (pyqtgraph plots, tables, cdcore.lab's import) cost ~0.2-0.3 s of the first
    # window. Their panels are built when the dock is first shown, or when code asks for them.
    # Timing is shown from the start, but its panel needs pyqtgraph (importing it after PySide6
    # materialises every Qt class into pyqtgraph's shim: ~0.5-1 s of a warm start): the dock is
    # in the first window, its plots are built right after the window's first paint.
    compare_panel = property(lambda self: self._lazy_panel("compare_panel"))
    lab_panel = property(lambda self: self._lazy_panel("lab_panel"))
    timing_panel = property(lambda self: self._lazy_panel("timing_panel"))

    def _lazy_dock(self, attr, title, factory, area, name, tip=None, tab_behind=None):
        """A dock whose panel (``factory()``, kept as ``self.<attr>``) is built the first time
        the dock is shown or the attribute is read; until then it holds an empty widget."""
        dock = self._dock(title, QtWidgets.QWidget(objectName=name + "_placeholder"), area, tip=tip,
                          tab_behind=tab_behind, name=name)
        self._lazy_factories[attr] = (dock, factory)
        dock.visibilityChanged.connect(lambda on, a=attr, d=dock: on and self._dock_wants_panel(a, d))
        return dock

    def _dock_wants_panel(self, attr, dock) -> None:
        """A lazily built dock became visible: build its panel now, or right after the
        window's first paint when the window has not painted yet (the first window first)."""
        if self.painted_at is None or self.hold_panels:
            if attr not in self._after_paint:
                self._after_paint.append(attr)
        elif self._shown_now(dock):
            self._lazy_panel(attr)

    def _painted(self, when: float) -> None:
        self.painted_at = when
        self._paint_watch = None
        self.first_painted.emit(when)
        if not self.hold_panels:
            self.release_panels()

    def release_panels(self) -> None:
        """Build the lazily built docks that were shown before the first paint (and are still
        shown); from now on a shown lazy dock is built at once."""
        self.hold_panels = False
        if self.painted_at is None:
            return  # the first paint builds them
        pending, self._after_paint = self._after_paint, []
        for attr in pending:
            entry = self._lazy_factories.get(attr)
            if entry is not None and self._shown_now(entry[0]):
                self._lazy_panel(attr)

    def wait_painted(self, timeout: float = 10.0) -> bool:
        """Run the event loop until the window has been painted once (``show()`` first);
        whether it was within ``timeout`` s."""
        app = QtWidgets.QApplication.instance()
        t_end = time.monotonic() + timeout
        while self.painted_at is None and time.monotonic() < t_end:
            app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.AllEvents, 50)
        return self.painted_at is not None

    @staticmethod
    def _shown_now(dock) -> bool:
        """A tab behind another reports itself visible while off screen: only a dock that
        paints somewhere counts as shown."""
        return dock.isVisible() and not dock.visibleRegion().isEmpty()

    def _lazy_panel(self, attr):
        entry = self._lazy_factories.pop(attr, None)
        if entry is not None:
            dock, factory = entry
            panel = factory()
            dock.widget().set_panel(panel)
            self._quiet_plots(panel)
            self._panels[attr] = panel
            if attr == "timing_panel" and self.session.scene is not None:
                panel.refresh()  # built after the scene's first frames: their timings now
        return self._panels.get(attr)

    # ---- compatibility views of the render module (tests, scripts) --------------------------
    hud = property(lambda self: self.view3d.hud)
    axis_overlay = property(lambda self: self.view3d.axis)
    mesh_layers = property(lambda self: self.view3d.meshes)
    tree_layers = property(lambda self: self.view3d.trees)
    resolved_depth = property(lambda self: self.view3d.resolved_depth)
    _scene_box = property(lambda self: self.view3d.scene_box)
    _realign_actors = property(lambda self: self.view3d._realign_actors)
    _closest = property(lambda self: self.view3d.closest)

    def _silence_vtk_keys(self):
        """VTK's and pyvista's one-letter keys (w: wireframe, s: surface, e/q: quit, 3:
        stereo, p: pick, r: reset...) silently changed the view: the window has its own
        shortcuts (Help → Keyboard shortcuts)."""
        iren = self.plotter.iren.interactor
        iren.RemoveObservers("CharEvent")
        iren.AddObserver("CharEvent", _noop)
        try:
            self.plotter.iren.clear_key_event_callbacks()
        except AttributeError:
            pass

    # ---- layout -----------------------------------------------------------------------
    def _dock(self, title, widget, area, tip=None, tab_behind=None, name=None):
        """A dock holding ``widget`` in a vertical scroll area that is never narrower than
        the widget needs (so nothing is cut and no horizontal scrollbar appears)."""
        dock = QtWidgets.QDockWidget(title, self)
        name = name or title.replace(" ", "_").replace("&", "and")
        dock.setObjectName(name)
        if tip:
            dock.toggleViewAction().setToolTip(tip)
        dock.setWidget(_FitScrollArea(widget, objectName=name + "_scroll"))
        self._quiet_plots(widget)
        tab_with = self.findChild(QtWidgets.QDockWidget, tab_behind) if tab_behind else None
        if tab_with is not None:
            self.tabifyDockWidget(tab_with, dock)  # added as a tab right away: adding it to the
            tab_with.raise_()                     # area first left a stray second tab bar
        else:
            self.addDockWidget(area, dock)
        dock.visibilityChanged.connect(self._dock_shown)
        return dock

    def _dock_shown(self, _visible):
        try:
            self._update_wants()
        except RuntimeError:  # the window is being destroyed
            pass

    def add_panel(self, title, widget, area=AREA.RightDockWidgetArea, tab_behind="Traversal_stepper", tip=None,
                  name=None) -> QtWidgets.QDockWidget:
        """Add a panel as a dock (tabbed behind ``tab_behind``), listed in the View menu.
        The panel binds to ``self.session`` signals itself and should refresh at most
        10 times a second while ``session.playing`` (see README "Adding a panel")."""
        dock = self._dock(title, widget, area, tip=tip, tab_behind=tab_behind, name=name)
        if hasattr(self, "view_menu"):
            self.view_menu.insertAction(self._view_sep, dock.toggleViewAction())
        return dock

    @staticmethod
    def _quiet_plots(widget):
        """pyqtgraph scenes repaint only their own view: with no slot on the scene's
        ``changed`` signal, Qt flushed the whole window (~28 ms under software GL) for each
        change of a plot (QGraphicsScene::_q_processDirtyItems). A widget holds pyqtgraph
        views only once pyqtgraph is imported: it is not imported for that here."""
        pg = sys.modules.get("pyqtgraph")
        if pg is None:
            return
        for gv in widget.findChildren(pg.GraphicsView) + ([widget] if isinstance(widget, pg.GraphicsView) else []):
            if not getattr(gv, "_quiet", False):
                gv.scene().changed.connect(_noop)
                gv._quiet = True

    def _robot_dock(self):
        """The joint sliders: tabbed with the hierarchy view, shown and raised (given most
        of the left column) when the scene has a robot; hidden otherwise."""
        from .model.robot import RobotModel
        from .widgets.joint_panel import JointPanel
        self.robot_model = RobotModel(self.session)
        self.joint_panel = JointPanel(self.robot_model)
        self.joint_dock = self._dock("Robot joints", self.joint_panel, AREA.LeftDockWidgetArea,
                                     name="Robot_joints", tab_behind="Hierarchy_view",
                                     tip="Pose the robot's joints; its links in contact")
        self.joint_panel.highlight.toggled.connect(lambda _on: self._options_changed())
        self.joint_dock.setVisible(False)

    def _optional_docks(self):
        """Timing, compare, insight, realignment and distance panels."""
        from .model.audit import AuditModel
        from .widgets.audit_panel import AuditPanel
        self.audit_model = AuditModel(self.robot_model)
        self.audit_panel = AuditPanel(self.audit_model)
        self.audit_dock = self._dock("Audit", self.audit_panel, AREA.LeftDockWidgetArea,
                                     name="Self_collision_audit", tab_behind="Hierarchy_view",
                                     tip="Which link pairs can collide: a link x link matrix; click a cell")
        self.audit_panel.highlight_requested.connect(self._highlight_triangles)
        from .widgets.realign_panel import RealignPanel
        self.realign_panel = RealignPanel(self.session)
        self._dock("Realignment", self.realign_panel, AREA.RightDockWidgetArea, name="k-DOP_realignment",
                   tip="k-DOP realignment of the stepper's pair", tab_behind="Traversal_stepper")
        self.realign_panel.draw_requested.connect(self._draw_realign)
        from .widgets.distance_panel import DistancePanel
        self.distance_panel = DistancePanel(self.session)
        self._dock("Distance", self.distance_panel, AREA.RightDockWidgetArea, name="Minimum_distance",
                   tip="Minimum distance of the selected pair, with the closest points", tab_behind="Traversal_stepper")
        self.distance_panel.points_changed.connect(self._draw_closest)
        self.insight_panel = None
        if importlib.util.find_spec("pyqtgraph") is not None:  # the plot docks, built when shown
            def timing():
                from .widgets.timing_panel import TimingPanel
                panel = TimingPanel(self.session, max_rate=1.0 / READOUT_PERIOD, driven=True)
                d.widget().setMinimumHeight(panel.minimumHeight())
                return panel
            d = self._lazy_dock("timing_panel", "Timing", timing, AREA.BottomDockWidgetArea, name="Timing")
            d.widget().setMinimumHeight(TIMING_MIN_HEIGHT)
            def compare():
                from .widgets.compare_panel import ComparePanel
                return ComparePanel(self.session)

            def lab():
                from .widgets.lab_panel import LabPanel
                return LabPanel(self.session)
            self._lazy_dock("compare_panel", "Compare", compare, AREA.BottomDockWidgetArea, name="Compare_methods",
                            tip="Compare update methods side by side", tab_behind="Timing")
            self._lazy_dock("lab_panel", "Build lab", lab, AREA.BottomDockWidgetArea, name="Build_lab",
                            tip="BV type x test x split x leaf size on this scene's motion: tree quality and "
                                "verdict", tab_behind="Compare_methods")
        self._contact_docks()
        try:
            from .widgets.insight_panel import InsightPanel
            self.insight_panel = InsightPanel(self.session)
            self._dock("Insight", self.insight_panel, AREA.RightDockWidgetArea, name="Insight",
                       tip="Ground truth, refit quality, heat map", tab_behind="Traversal_stepper")
            self.insight_panel.heat_toggled.connect(
                lambda on: self.hierarchy_panel.color_by.setCurrentText("heat" if on else "state"))
            self.insight_panel.highlight_requested.connect(self._highlight_triangles)
        except ImportError:
            pass

    def _contact_docks(self):
        """Contacts (table + 3-D layer) and Verdict (the pair through every library)."""
        from .render.contacts import ContactsLayer
        from .widgets.contacts_panel import ContactsPanel
        from .widgets.verdict_panel import VerdictPanel
        self.contacts_panel = ContactsPanel(self.session, driven=True)  # read-outs: _readouts
        # bottom area, beside Timing: the tables' columns need the width (a right-hand tab cut them)
        self._dock("Contacts", self.contacts_panel, AREA.BottomDockWidgetArea, name="Contacts",
                   tip="Intersecting triangle pairs: segment, normal, penetration depth",
                   tab_behind="Timing")
        self.contacts_layer = ContactsLayer(self.plotter)
        self.view3d.add_layer("contacts", self.contacts_layer)
        self.verdict_panel = VerdictPanel(self.session, self.contacts_panel.selected_row,
                                          lambda: self.contacts_panel.contacts)
        self._dock("Verdict", self.verdict_panel, AREA.BottomDockWidgetArea, name="Verdict",
                   tip="This pair through cdcore, the exact reference, python-fcl and coal",
                   tab_behind="Timing")
        self.contacts_panel.contact_selected.connect(self.select_contact)
        self.contacts_panel.shown_changed.connect(self._contacts_shown)
        self.verdict_panel.open_in_stepper.connect(self.open_verdict_pair)

    def _contacts_shown(self, on: bool):
        self.contacts_layer.enabled = bool(on)
        self._options_changed()

    def select_contact(self, row):
        """Mark contact ``row`` of the Contacts table and zoom the camera to it."""
        self.contacts_layer.select(row)
        c = self.contacts_panel.contacts
        if row is not None and c is not None and row < len(c):
            mid = c.points[row].mean(axis=0)
            r = max(float(np.linalg.norm(c.points[row, 1] - c.points[row, 0])), 0.12 * self.contacts_layer.diag,
                    4.0 * float(c.depths[row]))  # the contact with enough around it to see where it is
            self.fit_view(np.array([mid[0] - r, mid[0] + r, mid[1] - r, mid[1] + r, mid[2] - r, mid[2] + r]))
        self.view3d._legend()
        self.request_render()

    def open_verdict_pair(self, target, tris):
        """A disagreement: select its body pair, drill the stepper into the responsible link
        pair and highlight the responsible triangle pair."""
        s = self.session
        if target.scene_pair != s.selected_pair and hasattr(s, "select_pair"):
            guarded(self, "Verdict", s.select_pair, target.scene_pair)
        dock = self.findChild(QtWidgets.QDockWidget, "Traversal_stepper")
        if dock is not None:
            dock.show()
            dock.raise_()
        if s.scene.bodies[target.bodies[0]].body.n_links > 1 or s.scene.bodies[target.bodies[1]].body.n_links > 1:
            self.stepper_panel.reload(drill=target.links)
        else:
            self.stepper_panel.reload()
        if tris is not None:
            (i, j), (la, lb) = target.bodies, target.links
            self._highlight_triangles([(i, la, [tris[0]]), (j, lb, [tris[1]])])
        self.statusBar().showMessage(f"verdict: stepping {target.label}"
                                     + (f", triangles {tris[0]} / {tris[1]} highlighted" if tris else ""), 6000)

    def fit_docks(self) -> None:
        """Size the dock areas from their content: each side as wide as its widest panel
        asks (within a third of the window), the bottom plots at least ~200 px high, and
        on the left the robot joints (when shown) get what the scene panel leaves."""
        docks = [d for d in self.findChildren(QtWidgets.QDockWidget) if not d.isFloating()]
        for area in (AREA.LeftDockWidgetArea, AREA.RightDockWidgetArea):
            side = [d for d in docks if self.dockWidgetArea(d) == area and not d.isHidden()]
            if side:
                want = max(max(d.widget().widget().sizeHint().width(), d.widget().minimumWidth()) for d in side)
                want = min(want + 4, max(self.width() // 3, max(d.widget().minimumWidth() for d in side)))
                self.resizeDocks(side[:1], [want], QtCore.Qt.Orientation.Horizontal)
        scene = self.findChild(QtWidgets.QDockWidget, "Scene_and_method")
        lower = self.joint_dock if self.joint_dock.isVisible() else self.findChild(QtWidgets.QDockWidget,
                                                                                     "Hierarchy_view")
        if scene is not None and lower is not None and not scene.isHidden():
            top = scene.widget().widget().sizeHint().height() + 8
            rest = max(self.centralWidget().height(), 200)
            self.resizeDocks([scene, lower], [top, max(rest - top, lower.widget().widget().sizeHint().height())],
                             QtCore.Qt.Orientation.Vertical)
        bottom = [d for d in docks if self.dockWidgetArea(d) == AREA.BottomDockWidgetArea and not d.isHidden()]
        if bottom:
            h = max(215, min(280, self.height() // 4))
            self.resizeDocks(bottom[:1], [h], QtCore.Qt.Orientation.Vertical)
        for bar in self.findChildren(QtWidgets.QTabBar):
            bar.setElideMode(QtCore.Qt.TextElideMode.ElideNone)  # full tab titles
        QtCore.QTimer.singleShot(0, self._hide_stray_tab_bars)

    def _hide_stray_tab_bars(self):
        """Qt 6.11 leaves stale tab bars of tabified dock groups painted at a group's
        pre-layout place (reproduced with a bare QMainWindow, once two groups are tabified): a
        second bar with the group's titles, or the bar of the group as it was while the docks
        were being added (its first titles only: "Timing | Compare" over the 3-D view, the full
        group's bar below its docks). Hide a bar whose titles are all on another visible bar
        and that does not sit under the docks it names (tabs are South)."""
        docks = {d.windowTitle(): d for d in self.findChildren(QtWidgets.QDockWidget)}
        direct = QtCore.Qt.FindChildOption.FindDirectChildrenOnly
        bars = [(bar, tuple(bar.tabText(i) for i in range(bar.count())))
                for bar in self.findChildren(QtWidgets.QTabBar, options=direct) if bar.isVisible()]
        for bar, titles in bars:
            if not any(other is not bar and set(titles) <= set(others) for other, others in bars):
                continue
            rects = [docks[t].geometry() for t in titles if t in docks and docks[t].isVisible()]
            if rects and abs(bar.geometry().top() - max(r.bottom() for r in rects)) > 8:
                bar.hide()

    def _camera_actions(self):
        tb = self.toolbar
        tb.addSeparator()
        self.act_fit = QtGui.QAction("Fit", self, objectName="actFit", shortcut=QtGui.QKeySequence("Home"),
                                     toolTip="Fit the view to the bodies at this frame (Home)")
        self.act_fit.triggered.connect(lambda: (self.fit_view(), self.request_render()))
        self.act_fit_motion = QtGui.QAction("Fit motion", self, objectName="actFitMotion",
                                            shortcut=QtGui.QKeySequence("Shift+Home"),
                                            toolTip="Fit the view to the bodies over their whole motion (Shift+Home)")
        self.act_fit_motion.triggered.connect(lambda: (self.fit_view(self.view3d.frame_bounds("motion")),
                                                       self.request_render()))
        self.act_follow = QtGui.QAction("Follow", self, objectName="actFollow", checkable=True,
                                        toolTip="Keep the bodies in view as they move")
        self.act_follow.toggled.connect(self.set_follow)
        self.act_focus = QtGui.QAction("Focus pair", self, objectName="actFocus", shortcut=QtGui.QKeySequence("F"),
                                       toolTip="Zoom to the stepper's current node pair looking across its "
                                               "separating axis, or to the closest points (F)")
        self.act_focus.triggered.connect(self.focus_on_pair)
        for a in (self.act_fit, self.act_fit_motion, self.act_follow, self.act_focus):
            a.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
            tb.addAction(a)
            self.addAction(a)

    def _menus(self):
        from .widgets import robot_actions as ra
        m = self.menuBar().addMenu("&File")
        self.act_open = m.addAction("&Open mesh…", self.open_mesh_dialog, QtGui.QKeySequence.StandardKey.Open)
        self.act_scene = m.addAction("Open scene &file…", self.open_scene_dialog)
        self.act_robot = m.addAction("Open &robot (URDF, MJCF)…", lambda: ra.open_robot_dialog(self))
        self.act_trajectory = m.addAction("Open &trajectory…", lambda: ra.open_trajectory_dialog(self))
        self.act_query = m.addAction("Open saved &query…", lambda: ra.open_query_dialog(self))
        self.recent_menu = m.addMenu("Open r&ecent")
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        m.addSeparator()
        self.act_record = m.addAction("&Record frame timings…", self.record_dialog)
        self.act_stop = m.addAction("&Stop recording", self.stop_recording)
        self.act_stop.setEnabled(False)
        m.addAction("Save &screenshot…", self.screenshot_dialog)
        m.addAction("Export frames as &PNG sequence…", self.export_frames_dialog)
        m.addSeparator()
        m.addAction("&Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)
        v = self.view_menu = self.menuBar().addMenu("&View")
        for dock in self.findChildren(QtWidgets.QDockWidget):
            v.addAction(dock.toggleViewAction())
        self._view_sep = v.addSeparator()
        for a in (self.act_fit, self.act_fit_motion, self.act_follow, self.act_focus):
            v.addAction(a)
        v.addAction("Reset camera direction", lambda: (self.reset_view(), self.request_render()))
        self.act_front = v.addAction("Draw front cache")
        self.act_front.setCheckable(True)
        self.act_front.setObjectName("actFront")
        self.act_front.setToolTip("Track every link pair with a front cache and draw the largest front's nodes")
        self.act_front.toggled.connect(self.show_front)
        v.addAction("Reset layout", self.reset_layout)
        h = self.menuBar().addMenu("&Help")
        self.act_shortcuts = h.addAction("&Keyboard shortcuts", self.show_shortcuts, QtGui.QKeySequence("F1"))

    def show_front(self, on: bool) -> None:
        """View → Draw front cache: the generalized front of the link pair with the largest
        front, as wireframes (``app.render.front``); off removes the layer and its state."""
        if on:
            from .render.front import FrontLayer
            self.view3d.add_layer("front", FrontLayer(self.plotter))
        else:
            layer = self.view3d.layers.pop("front", None)
            if layer is not None:
                layer.clear()
        self.view3d._legend()
        self.request_render()

    def show_shortcuts(self) -> QtWidgets.QDialog:
        """Help → Keyboard shortcuts: a non-modal table of every key and mouse action."""
        dlg = QtWidgets.QDialog(self, objectName="shortcutsDialog")
        dlg.setWindowTitle("Keyboard shortcuts")
        lay = QtWidgets.QVBoxLayout(dlg)
        table = QtWidgets.QTableWidget(len(SHORTCUTS), 2, objectName="shortcutsTable")
        table.setHorizontalHeaderLabels(["Key", "Action"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        for r, (k, what) in enumerate(SHORTCUTS):
            table.setItem(r, 0, QtWidgets.QTableWidgetItem(k))
            table.setItem(r, 1, QtWidgets.QTableWidgetItem(what))
        table.resizeColumnsToContents()
        table.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(table)
        box = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        box.rejected.connect(dlg.close)
        lay.addWidget(box)
        dlg.resize(table.horizontalHeader().length() + 40, table.verticalHeader().length() + 110)
        dlg.show()
        return dlg

    # ---- recent files ----------------------------------------------------------------
    def recent(self) -> list:
        try:
            items = json.loads(str(self.settings.value("recent", "[]")))
        except ValueError:
            return []
        return [r for r in items if isinstance(r, dict) and len(r) == 1] if isinstance(items, list) else []

    def _remember(self, ref: dict) -> None:
        items = [r for r in self.recent() if r != ref]
        self.settings.setValue("recent", json.dumps([ref] + items[:RECENT_MAX - 1]))

    def _fill_recent(self):
        m = self.recent_menu
        m.clear()
        items = self.recent()
        if not items:
            m.addAction("(none)").setEnabled(False)
        for ref in items:
            (kind, value), = ref.items()
            text = ", ".join(os.path.basename(p) for p in value) if isinstance(value, list) else os.path.basename(
                str(value))
            a = m.addAction(f"{kind}: {text}", lambda r=ref: self.open_recent(r))
            a.setToolTip(str(value))
        m.addSeparator()
        m.addAction("Clear list", lambda: self.settings.setValue("recent", "[]"))

    def open_recent(self, ref: dict) -> bool:
        from .widgets import robot_actions as ra
        (kind, value), = ref.items()
        if kind == "robot":
            return ra.open_robot_file(self, value)
        if kind == "query":
            return ra.open_query_file(self, value)
        if kind == "meshes":
            return self.open_meshes(value) is not None
        return self.load_ref(ref)

    # ---- files --------------------------------------------------------------------
    def _last_dir(self):
        return str(self.settings.value("last_dir", os.getcwd()))

    def open_mesh_dialog(self):
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(self, "Open one or two meshes", self._last_dir(),
                                                          MESH_FILTER)
        if paths:
            self.open_meshes(paths)

    def open_meshes(self, paths):
        """Read one or two meshes and build their hierarchies on a worker thread (progress
        dialog, Cancel); the scene is shown when it is ready (more than two: a dialog says
        so). Returns the loader, or None."""
        from .widgets.mesh_loader import MeshLoader
        paths = list(paths)
        if not 1 <= len(paths) <= 2:
            show_error(self, "Open mesh", f"open one mesh (collided with itself) or two meshes (A and B), "
                                          f"not {len(paths)}")
            return None
        self.settings.setValue("last_dir", os.path.dirname(paths[0]))
        if self.mesh_loader is not None:
            self.mesh_loader.cancel()
        self.session.set_playing(False)
        self.mesh_loader = MeshLoader(self, self.session, paths)
        self.mesh_loader.start()
        return self.mesh_loader

    def open_scene_dialog(self):
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open scene", self._last_dir(), "Scenes (*.json)")
        if path:
            self.settings.setValue("last_dir", os.path.dirname(path))
            self.load_ref({"file": path})

    def load_ref(self, ref: dict) -> bool:
        """Load a scene (``Session.scene_ref`` form) with a progress message while it
        builds and compiles; a failure is a dialog and the current scene stays."""
        if len(ref.get("meshes", ())) > 2:
            show_error(self, "Open mesh", f"open one mesh (collided with itself) or two meshes (A and B), "
                                          f"not {len(ref['meshes'])}")
            return False
        try:
            self.load_in_background(ref)
        except Exception as exc:  # noqa: BLE001 - any failure of the load is shown, the app goes on
            show_error(self, "Open scene" if "meshes" not in ref else "Open mesh", exc)
            self.scene_panel.sync()
            return False
        return True

    def load_in_background(self, ref: dict, frames: int | None = None, prebuilt=None) -> None:
        """Build the scene (and compile the kernels it needs, on a first run) on a worker
        thread into a private Session while the window keeps painting a progress message,
        then adopt it here in the GUI thread (views are only touched from this thread).
        ``prebuilt()``: a Session holding this very scene, built while the window was made
        (``app.__main__``: the scene of the command line), or None; it is used when it was
        built with this session's settings, else the scene is built here."""
        s = self.session
        settings = (s.bv, s.method, s.test, s.deform, s.realign)

        def build():
            tmp = prebuilt() if prebuilt is not None else None
            if tmp is not None and (tmp.bv, tmp.method, tmp.test, tmp.deform, tmp.realign) == settings:
                return tmp
            tmp = Session()
            tmp.bv, tmp.method, tmp.test, tmp.deform, tmp.realign = s.bv, s.method, s.test, s.deform, s.realign
            tmp.load_ref(ref, frames)
            return tmp

        tmp = self.run_busy(self.loading_message(ref), build)
        s.adopt(tmp)

    @staticmethod
    def _load_label(ref: dict) -> str:
        return ref.get("scene") or os.path.basename(ref.get("file", "")) or ", ".join(
            os.path.basename(p) for p in ref.get("meshes", ()))

    @classmethod
    def loading_message(cls, ref: dict) -> str:
        return (f"Loading {cls._load_label(ref)}: building hierarchies and compiling the collision kernels "
                "(cached after the first run)")

    def announce_loading(self, ref: dict) -> None:
        """Say in the 3-D view and the status bar that ``ref`` is loading (the first window,
        shown before its scene is built; short: it fits the view at 1366x768); the load's
        own busy display replaces it and clears it when the scene is in."""
        text = f"Loading {self._load_label(ref)} …"
        self.hud.set_busy(text)
        self.statusBar().showMessage(text)
        self.scene_panel.show_pending(ref)

    def run_busy(self, message: str, fn):
        """``fn()`` on a worker thread; meanwhile the 3-D view and the status bar show
        ``message`` with the seconds elapsed (numba compiles mostly outside the GIL, so
        the window keeps repainting). Returns fn's result or raises its exception."""
        out = {}

        def work():
            try:
                out["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the GUI thread
                out["error"] = exc

        worker = threading.Thread(target=work, name="bvh-load", daemon=True)
        t0 = time.perf_counter()
        worker.start()
        worker.join(0.15)  # a warm load is done before any message would flash
        app = QtWidgets.QApplication.instance()
        while worker.is_alive():
            text = f"{message} … {time.perf_counter() - t0:.0f} s"
            self.hud.set_busy(text)
            self.statusBar().showMessage(text)
            self.plotter.interactor.update()
            app.processEvents(QtCore.QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents, 50)
            worker.join(0.1)
        self.hud.set_busy(None)
        self.statusBar().clearMessage()
        if "error" in out:
            raise out["error"]
        return out.get("value")

    def dragEnterEvent(self, event):
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event):
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        scenes = [p for p in paths if p.lower().endswith(".json")]
        from .widgets.robot_actions import open_query_file, open_robot_file
        if paths and paths[0].lower().endswith((".urdf", ".xml")):  # a URDF or an MJCF robot
            open_robot_file(self, paths[0])
        elif paths and paths[0].lower().endswith(".npz"):
            open_query_file(self, paths[0])
        elif scenes:
            self.load_ref({"file": scenes[0]})
        elif paths:
            self.open_meshes(paths)

    def record_dialog(self):
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Record frame timings", self._last_dir(),
                                                        "CSV (*.csv)")
        if path:
            self.start_recording(path)

    def start_recording(self, path):
        guarded(self, "Record", self.session.start_recording, path)

    def stop_recording(self):
        return guarded(self, "Stop recording", self.session.stop_recording)

    def screenshot_dialog(self):
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save screenshot", self._last_dir(), "PNG (*.png)")
        if path:
            guarded(self, "Screenshot", self.screenshot, path)

    def screenshot(self, path: str | None = None):
        """The 3-D view with its overlay as an image array (and a PNG file when ``path``
        is given)."""
        self.hud.layout()
        self.plotter.render()
        return self.plotter.screenshot(path, return_img=True)

    def window_screenshot(self, path: str) -> None:
        """The whole window (toolbars, docks and the 3-D view) as a PNG. ``grab`` alone
        leaves the GL view blank under Xvfb: the view's own rendering is painted over it."""
        QtWidgets.QApplication.instance().processEvents()
        pix = self.grab()
        img = np.ascontiguousarray(self.screenshot()[..., :3])
        view = QtGui.QImage(img.data, img.shape[1], img.shape[0], 3 * img.shape[1],
                            QtGui.QImage.Format.Format_RGB888)
        where = self.plotter.interactor.mapTo(self, QtCore.QPoint(0, 0))
        size = self.plotter.interactor.size()
        painter = QtGui.QPainter(pix)
        painter.drawImage(QtCore.QRect(where, size), view)
        painter.end()
        if not pix.save(path, "PNG"):
            raise OSError(f"cannot write {path}")

    def export_frames_dialog(self):
        from .widgets.export_dialog import ExportDialog
        s = self.session
        if s.scene is None:
            return
        dlg = ExportDialog(self, s.n_frames, s.frame, self._last_dir())
        if dlg.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            first, last, directory = dlg.values()
            self.settings.setValue("last_dir", directory)
            self.start_export(directory, first, last)

    def start_export(self, directory: str, first: int, last: int):
        """Export frames first..last to PNGs in the background of the event loop (one frame
        per turn, a progress dialog with Cancel); returns the exporter."""
        from .widgets.export_dialog import FrameExporter
        if self.exporter is not None and self.exporter.running:
            self.exporter.cancel()
        self.session.set_playing(False)
        self.exporter = FrameExporter(self, directory, first, last)
        self.exporter.start()
        return self.exporter

    def export_frames(self, directory: str, first: int | None = None, count: int | None = None,
                      progress=None, cancelled=None) -> int:
        """Render frames to ``directory/frame_00000.png`` … (a video's frames; assemble with
        any encoder, e.g. ``ffmpeg -i frame_%05d.png out.mp4``); synchronous. Returns the
        number written. ``progress(k, n)`` after each; ``cancelled()`` polled before each."""
        s = self.session
        first = s.frame if first is None else first
        count = s.n_frames - first if count is None else count
        frames = range(first, min(s.n_frames, first + count))
        if not os.path.isdir(directory):
            raise FileNotFoundError(f"no such directory: {directory}")
        done = 0
        for k, f in enumerate(frames):
            if cancelled is not None and cancelled():
                break
            self.export_one(directory, k, f)
            done += 1
            if progress is not None:
                progress(k + 1, len(frames))
        return done

    def export_one(self, directory: str, k: int, frame: int) -> str:
        self.session.goto(frame)
        self._readouts()  # the overlay's counters for this very frame
        path = os.path.join(directory, f"frame_{k:05d}.png")
        self.screenshot(path)
        return path

    # ---- the frame loop ------------------------------------------------------------------
    def _tick(self):
        if not self.session.playing:
            self.timer.stop()
            return
        guarded(self, "Frame", self.session.tick)

    def _on_settings(self):
        if self.session.playing and not self.timer.isActive():
            self.timer.start()
        elif not self.session.playing:
            self.timer.stop()
            self._readouts()  # the paused frame's numbers (updates were throttled while playing)

    def _on_recording(self, on: bool):
        self.act_stop.setEnabled(on)
        self.act_record.setEnabled(not on)
        self._readouts()

    def _on_recording_failed(self, message: str):
        # the session stopped recording after the first write error: one dialog, not one per frame
        show_error(self, "Recording stopped",
                   message + "\n\nEvery complete row is kept; the sidecar records the error.")

    def _on_scene(self):
        s = self.session
        self.view3d.set_scene(s.scene)
        ref = s.scene_ref()
        self.settings.setValue("last_scene_ref", json.dumps(ref))
        robot = getattr(s, "robot_source", None)
        if robot:
            self._remember({"robot": os.path.abspath(robot["urdf"])})
        elif ref and ("file" in ref or "meshes" in ref):
            self._remember(ref)
        has_robot = self.robot_model.body is not None
        if has_robot != self.joint_dock.isVisible():
            self.joint_dock.setVisible(has_robot)
            if has_robot:
                self.joint_dock.raise_()
            if self.isVisible() and not getattr(self, "_user_layout", False):
                QtCore.QTimer.singleShot(0, self.fit_docks)
        self._first_draw = True

    def draw_options(self):
        from .render.scene_view import DrawOptions
        hp = self.hierarchy_panel
        return DrawOptions(show_tree=hp.show_tree.isChecked(), show_mesh=hp.show_mesh.isChecked(),
                           opacity=hp.opacity.value() / 100.0, color_by=hp.color_by.currentText(),
                           depth=hp.selection(), highlight_contacts=self.joint_panel.highlight.isChecked())

    def _update_wants(self) -> bool:
        """Tell the model what the shown views need; True when the current frame lacks it."""
        s = self.session
        hp = getattr(self, "hierarchy_panel", None)
        if hp is None or not hasattr(self, "insight_panel"):
            return False  # still building the window
        stepper = self.findChild(QtWidgets.QDockWidget, "Traversal_stepper")
        insight = self.findChild(QtWidgets.QDockWidget, "Insight")
        heat = hp.color_by.currentText() == "heat" or bool(
            self.insight_panel is not None and self.insight_panel.heat_check.isChecked())
        trace = hp.show_tree.isChecked() or heat or any(
            d is not None and d.isVisible() and not d.visibleRegion().isEmpty() for d in (stepper, insight))
        contacts = getattr(self, "contacts_panel", None) is not None and self.contacts_panel.show_box.isChecked()
        wants = {"trace": bool(trace), "heat": bool(heat), "contacts": bool(contacts)}
        v = s.view
        stale = v is not None and ((wants["trace"] and not v.traced) or (wants["heat"] and v.heat is None)
                                   or (wants["contacts"] and v.contacts is None))
        s.wants = wants
        return stale

    def _options_changed(self, *_):
        if self._update_wants() and self.session.scene is not None and not self.session.playing:
            guarded(self, "Frame", self.session.goto, self.session.frame)  # recompute what is now shown
        else:
            self.redraw()

    def _on_frame(self, view):
        t0 = time.perf_counter()
        self.view3d.draw(view, self.draw_options())
        if self._first_draw:
            if view.trees:
                self.hierarchy_panel.set_max_depth(max(t.height for t in view.trees))
            self.reset_view()
            self._first_draw = False
        elif self.follow:
            self._follow()
        if not view.playing:  # while playing, the overlay's text is a read-out (<= 10 Hz, _readouts):
            # a new text is a new texture per text actor (FreeType + upload) in the next render
            self.view3d.update_hud(view, auto=self.hierarchy_panel.mode.currentText() == "auto")
        self._render_now()
        # the frame's draw time (actors updated now) and its render (the last VTK render:
        # the repaint itself runs when Qt next paints the window)
        self.session.commit(self._vtk_render_time, time.perf_counter() - t0)
        self._schedule_readouts()

    def redraw(self, render: bool = True):
        """Draw the current frame again with the panel's options (no recomputation)."""
        v = self.session.view
        if v is None or self.session.scene is None:
            return
        self.view3d.draw(v, self.draw_options())
        self._update_depth_label()
        if render:
            self.view3d.update_hud(v, auto=self.hierarchy_panel.mode.currentText() == "auto")
            self.request_render()

    def _update_depth_label(self):
        mode, lo, hi = self.view3d.resolved_depth
        text = {"all": "all", "leaves": "leaves", "level": f"= {lo}", "cut": f"= cut {lo}",
                "range": f"= {lo}-{hi}"}[mode] + \
            f" ({self.view3d.nodes_drawn:,} nodes)"
        if self.hierarchy_panel.resolved.text() != text:  # an unchanged label costs no repaint
            self.hierarchy_panel.resolved.setText(text)

    # ---- read-outs: status bar, plots, tables (≤ 10 Hz while playing) --------------------
    def _fps(self) -> float:
        from .model.readout import fps_readout
        return fps_readout(self.session.history)

    def _schedule_readouts(self):
        """Read-outs while playing: at most every READOUT_PERIOD and every READOUT_FRAMES
        frames (a slow loop would otherwise repaint them every frame), done here, in the
        frame's own pass, so their repaint shares the 3-D view's composition of the window
        (a timer would paint them in a pass of their own: a second composition)."""
        self._frames_since_readout += 1
        if not self.session.playing or (time.perf_counter() - self._readout_t >= READOUT_PERIOD
                                        and self._frames_since_readout >= READOUT_FRAMES):
            self._readouts()

    def _readouts(self):
        """One update of every read-out from the same record: the status bar, the HUD's
        fps, the depth label and the timing dock show the same frame and frame rate."""
        self._readout_t = time.perf_counter()
        self._frames_since_readout = 0
        s = self.session
        rec = s.record
        if rec is None:
            return
        fps = self._fps() if s.playing else 0.0
        self._update_depth_label()
        if s.view is not None:
            self.view3d.update_hud(s.view, fps=fps or None, auto=self.hierarchy_panel.mode.currentText() == "auto")
        text = (f"frame {rec.frame}  |  update {rec.t_update * 1e6:.0f} µs  test {rec.t_test * 1e6:.0f} µs  "
                f"query {rec.t_query * 1e6:.0f} µs  |  #exact {rec.n_exact}  #false {rec.n_false}  "
                f"contacts {rec.contacts}  |  " + (f"{fps:.0f} fps" if fps > 0 else "paused"))
        if s.recorder is not None:
            text += f"  |  ● recording {s.recorder.rows} rows"
        if self.status.text() != text:
            self.status.setText(text)
        timing = self._panels.get("timing_panel")  # not built here: built when first shown
        if timing is not None and timing.isVisible():
            from .widgets.timing_panel import PLOT_PERIOD
            timing.refresh(plot_period=PLOT_PERIOD)
        if getattr(self, "contacts_panel", None) is not None:
            self.contacts_panel.refresh()  # the table in this same pass (its own clock made extra passes)
        if s.playing:
            self.playback.sync()
            self.robot_model.refresh()
        # the layouts these new texts and rows ask for, now: left to the event loop they ran
        # after this frame's paint and moved widgets, a second repaint of the window a frame
        # later (2 ms of Qt per pass at 1600x1000)
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)

    # ---- camera ----------------------------------------------------------------------
    def reset_view(self):
        """Look down at the scene from above and in front, framing the bodies at this frame
        (Fit motion frames the whole motion). Renders nothing: both callers render after it
        (pyvista's default ``render=True`` cost a synchronous render of the first frame)."""
        self.plotter.view_vector((0.35, -0.75, 1.0), viewup=(0.0, 0.0, 1.0), render=False)
        self.fit_view()

    def fit_view(self, bounds=None):
        """Frame ``bounds`` (default: the bodies at the current frame), keeping the view
        direction."""
        self.view3d.fit(bounds)

    def _view_extent(self, points) -> float:
        from .render.camera import view_extent
        return view_extent(self.plotter.renderer, points)

    def set_follow(self, on: bool) -> None:
        """Follow mode: every frame, re-frame the bodies when one leaves the view or they
        shrink to a small part of it."""
        self.follow = bool(on)
        if self.act_follow.isChecked() != self.follow:
            self.act_follow.setChecked(self.follow)
        if self.follow and self.session.scene is not None:
            self._follow(force=True)
            self.request_render()

    def _follow(self, force: bool = False):
        b = self.view3d.frame_bounds("pose")
        ext = self.view3d.view_extent(b)
        if force or ext > 0.98 or ext < 0.35:
            self.fit_view(b)

    def focus_on_pair(self) -> bool:
        """Zoom to the stepper's current node pair looking across its separating axis (the
        axis runs left-right on screen, both projected intervals and the gap visible), or
        to the closest points when there is no pair; False when there is nothing to focus."""
        from .render.camera import look_across
        v = self.view3d
        step, trav = v.step
        if step is not None and getattr(step, "axis_dir", None) is not None:
            ren = self.plotter.renderer
            look_across(ren, step.axis_dir, up_hint=ren.GetActiveCamera().GetViewUp())
            v.show_step(step, trav, up=ren.GetActiveCamera().GetViewUp())  # intervals above the pair on screen
        b = v.focus_bounds()
        if b is None:
            self.statusBar().showMessage("nothing to focus on: step to a node pair, or measure the distance", 4000)
            return False
        if self.follow:
            self.set_follow(False)  # follow would re-frame the whole bodies at the next frame
        op = self.hierarchy_panel.opacity
        if op.value() > 40 and self.hierarchy_panel.show_mesh.isChecked():
            op.setValue(40)  # deep nodes lie inside the meshes: see through them (the slider undoes it)
        self.fit_view(b)
        self.request_render()
        return True

    # ---- rendering ------------------------------------------------------------------------
    def _render_started(self, *_):
        self._vtk_t0 = time.perf_counter()

    def _render_ended(self, *_):
        self._vtk_render_time = time.perf_counter() - getattr(self, "_vtk_t0", time.perf_counter())

    def _render_now(self):
        """Schedule one repaint of the 3-D view: Qt paints it together with the widgets that
        changed this frame, in one composition of the window (a synchronous repaint here
        cost a second composition per frame: half the frame rate under software GL)."""
        self._render_pending = False
        self.plotter.interactor.update()

    def request_render(self):
        """Coalesce render requests made while a frame is being handled."""
        if not getattr(self, "_render_pending", False):
            self._render_pending = True
            QtCore.QTimer.singleShot(0, lambda: self._render_pending and self._render_now())

    # ---- panels' requests to the view ------------------------------------------------------
    def _draw_realign(self, wires):
        self.view3d.show_realign(wires)
        self.request_render()

    def _draw_closest(self, points):
        self.view3d.show_closest(points)
        self.request_render()

    def _on_step(self, step, traversal):
        if self.realign_panel.isVisible():
            self.realign_panel.show_step(step, traversal)
        self.view3d.show_step(step, traversal, up=self.plotter.camera.GetViewUp())
        self.request_render()

    def _highlight_triangles(self, items):
        self.view3d.highlight_triangles(items)
        self.request_render()

    # ---- picking ----------------------------------------------------------------------------
    def pick_at(self, x: int, y: int):
        """Select the node drawn at widget pixel (x, y): the stepper moves to the first
        tested pair of the pair's traversal holding that node (switching the body pair if
        needed) and the node is outlined. Returns (body, node) or None."""
        v = self.view3d
        dpr = self.plotter.interactor.devicePixelRatioF()
        h = self.plotter.interactor.height()
        hit = v.pick_node(int(x * dpr), int((h - y) * dpr))
        s = self.session
        if hit is None or s.view is None or not s.view.trees:
            return None
        body, node = hit
        tree = s.view.trees[body]
        v.show_picked(tree, node)
        pairs = s.scene.pairs
        if body not in pairs[s.selected_pair]:
            for k, (i, j) in enumerate(pairs):
                if body in (i, j):
                    s.select_pair(k)
                    break
        panel = self.stepper_panel
        panel.reload()
        found = panel.stepper.find_node(tree, node) if panel.stepper is not None else None
        panel._show()
        dock = self.findChild(QtWidgets.QDockWidget, "Traversal_stepper")
        if dock is not None:
            dock.show()
            dock.raise_()
        name = s.scene.bodies[body].name
        self.statusBar().showMessage(
            f"picked node {node} of {name}" + (f": stepper at pair {found.index + 1} / {found.count}" if found
                                               else ": not tested in this frame's traversal"), 8000)
        v._legend()
        self.request_render()
        return hit

    def eventFilter(self, obj, event):
        if obj is self.plotter.interactor and not getattr(self.plotter, "_closed", False):
            t = event.type()
            if t == QtCore.QEvent.Type.Resize:
                self.hud.layout()
            elif t == QtCore.QEvent.Type.MouseButtonPress and event.button() == QtCore.Qt.MouseButton.LeftButton:
                self._press = event.position().toPoint()
            elif t == QtCore.QEvent.Type.MouseButtonRelease and event.button() == QtCore.Qt.MouseButton.LeftButton:
                p, press, self._press = event.position().toPoint(), self._press, None
                if press is not None and (p - press).manhattanLength() <= 3:  # a click, not a rotation
                    QtCore.QTimer.singleShot(0, lambda: guarded(self, "Pick", self.pick_at, p.x(), p.y()))
        return super().eventFilter(obj, event)

    # ---- persistence ------------------------------------------------------------------
    def _restore(self):
        geo = self.settings.value("geometry")
        state = self.settings.value("window_state")
        if geo is None or not self.restoreGeometry(geo):
            self.size_to_screen()
        else:
            self._keep_on_screen()
        self._default_layout_pending = True  # the default layout is made (and kept) once shown
        self._saved_state = state

    def size_to_screen(self) -> None:
        """Size the window to 92 % of the screen's available area (at most 1920x1200),
        centred: a fixed 1600x1000 put the timeline and status bar off a 1366x768 screen."""
        scr = self.screen() or QtWidgets.QApplication.primaryScreen()
        if scr is None:
            self.resize(1400, 900)
            return
        a = scr.availableGeometry()
        w, h = min(int(a.width() * 0.92), 1920), min(int(a.height() * 0.92), 1200)
        self.resize(w, h)
        self.move(a.x() + (a.width() - w) // 2, a.y() + (a.height() - h) // 2)

    def _keep_on_screen(self) -> None:
        scr = self.screen() or QtWidgets.QApplication.primaryScreen()
        if scr is None:
            return
        a = scr.availableGeometry()
        if self.width() > a.width() or self.height() > a.height():
            self.resize(min(self.width(), a.width()), min(self.height(), a.height()))

    def reset_layout(self):
        """The default layout: docks back in place, scene + hierarchy view (robot joints when
        a robot is loaded) on the left, stepper raised on the right, timing at the bottom."""
        if getattr(self, "_default_state", None) is not None:
            self.restoreState(self._default_state, LAYOUT_VERSION)
        for d in self.findChildren(QtWidgets.QDockWidget):
            d.setFloating(False)
        self.joint_dock.setVisible(self.robot_model.body is not None)
        for name in ("Traversal_stepper", "Timing", "Robot_joints" if self.robot_model.body is not None
                     else "Hierarchy_view"):
            d = self.findChild(QtWidgets.QDockWidget, name)
            if d is not None and d.isVisible():
                d.raise_()
        self._user_layout = False
        self.fit_docks()

    def showEvent(self, event):
        super().showEvent(event)
        if not self._paint_watched:  # the first show: watch for the end of the first paint
            self._paint_watched = True
            self._paint_watch = _PaintWatch(self, self._painted)
        if getattr(self, "_default_layout_pending", False):
            self._default_layout_pending = False
            self.fit_docks()
            self._default_state = self.saveState(LAYOUT_VERSION)
            if self._saved_state is not None and self.restoreState(self._saved_state, LAYOUT_VERSION):
                self._user_layout = True  # the user's own dock sizes: never re-fitted behind their back
                self.joint_dock.setVisible(self.robot_model.body is not None)
        QtCore.QTimer.singleShot(0, self._hide_stray_tab_bars)
        QtCore.QTimer.singleShot(0, self._update_wants)

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if not getattr(self, "_user_layout", False) and self.isVisible():
            self.fit_docks()

    def closeEvent(self, event):
        self.timer.stop()
        self.session.set_playing(False)
        self.session.stop_recording()
        if self.mesh_loader is not None:
            self.mesh_loader.cancel()  # its worker's result is dropped
        if self.exporter is not None:
            self.exporter.cancel()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState(LAYOUT_VERSION))
        self.settings.sync()
        QtWidgets.QApplication.instance().removeEventFilter(self._edit_keys)
        self.plotter.close()
        super().closeEvent(event)
