"""The main window: owns the 3-D view (a pyvistaqt QtInteractor with its heads-up
display) and the docks, runs the frame loop (the model computes, the view draws), frames
the camera, persists its layout.

Layout: a main toolbar (scene, BV type, update method, test, play / step, depth, camera),
a timeline bar (frame slider, speed) at the bottom, small panels on the left (scene,
hierarchy view), the inspectors tabbed on the right (stepper, insight, realignment,
distance) and the plots tabbed at the bottom (timing, compare), each dock at least as
wide as its panel needs."""
from __future__ import annotations

import json
import os
import threading
import time

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from .model import Session
from .model.framing import pair_bounds, scene_bounds
from .model.trees import readable_selection
from .widgets.errors import guarded, show_error
from .widgets.hierarchy_panel import HierarchyPanel
from .widgets.playback import PlaybackBar
from .widgets.scene_panel import ScenePanel
from .widgets.stepper_panel import StepperPanel
from .widgets.toolbar import MainToolBar

MESH_FILTER = "Meshes (*.stl *.obj *.ply *.off *.glb *.gltf *.3mf *.dae);;All files (*)"
LAYOUT_VERSION = 2  # bump when the docks change: an older saved layout is then ignored
DEFAULT_SCENE = "chains-6to1"
STATUS_PERIOD = 0.1  # s between status-bar updates during playback
AREA = QtCore.Qt.DockWidgetArea


class _FitScrollArea(QtWidgets.QScrollArea):
    """A vertical scroll area never narrower than its panel's minimum width, kept up to
    date when the panel's content changes (longer names in a combo, a filled table)."""

    def __init__(self, widget, objectName=""):
        super().__init__(objectName=objectName)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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


class MainWindow(QtWidgets.QMainWindow):
    """The debugger window. ``session`` is the Qt-free model it binds to."""

    def __init__(self, session: Session | None = None, settings: QtCore.QSettings | None = None):
        super().__init__()
        from pyvistaqt import QtInteractor  # the 3-D view needs a display: import late

        from .render import colors
        from .render.hierarchy import HierarchyLayer
        from .render.hud import ViewHud
        from .render.meshes import BodyMeshLayer
        from .render.overlay import AxisOverlay

        self._HierarchyLayer, self._BodyMeshLayer, self._ViewHud = HierarchyLayer, BodyMeshLayer, ViewHud
        self.setWindowTitle("BVH debugger")
        self.setObjectName("MainWindow")
        self.setAcceptDrops(True)
        self.settings = settings or QtCore.QSettings("bvh-debugger", "app")
        self.mesh_loader = None  # the mesh load running on a worker thread, if any
        self.session = session or Session()
        self.session.deferred_commit = True

        frame = QtWidgets.QFrame()
        lay = QtWidgets.QVBoxLayout(frame)
        lay.setContentsMargins(0, 0, 0, 0)
        # no MSAA (x20 slower under software GL) and no timer renders: the frame loop
        # repaints once per frame
        self.plotter = QtInteractor(frame, multi_samples=0, auto_update=False)
        self.plotter.set_background("white")
        self._lighting()
        self._vtk_render_time = 0.0
        self.plotter.ren_win.AddObserver("StartEvent", self._render_started)
        self.plotter.ren_win.AddObserver("EndEvent", self._render_ended)
        self.plotter.interactor.installEventFilter(self)  # resizes re-anchor the HUD
        lay.addWidget(self.plotter.interactor)
        self.setCentralWidget(frame)
        self.axis_overlay = AxisOverlay(self.plotter)
        self.hud = ViewHud(self.plotter)
        self.mesh_layers = []
        self.tree_layers = []
        self.resolved_depth = ("all", 0, 0)  # what the depth control drew last (auto resolved)
        self.follow = False
        self._step = (None, None)  # the stepper's current (step, traversal)
        self._closest = None  # closest points drawn (2, 3)
        self._realign_key = []

        # panels, toolbars, docks
        self.scene_panel = ScenePanel(self.session)
        self.scene_panel.loader = self.load_ref
        self.hierarchy_panel = HierarchyPanel(colors.STATE_COLORS)
        self.stepper_panel = StepperPanel(self.session)
        self.playback = PlaybackBar(self.session)
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
        d_step = self._dock("Stepper", self.stepper_panel, AREA.RightDockWidgetArea, name="Traversal_stepper",
                            tip="Traversal stepper: walk the selected pair's traversal node pair by node pair")
        self._optional_docks()
        self.splitDockWidget(d_scene, d_tree, QtCore.Qt.Orientation.Vertical)
        d_step.raise_()
        self._menus()

        self.status = QtWidgets.QLabel(objectName="statusLabel")
        self.statusBar().addPermanentWidget(self.status)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(0)  # as fast as frames can be computed and drawn
        self.timer.timeout.connect(self._tick)

        self.session.scene_changed.connect(self._on_scene)
        self.session.frame_changed.connect(self._on_frame)
        self.session.settings_changed.connect(self._on_settings)
        self.session.recording_changed.connect(self._on_recording)
        self.session.recording_failed.connect(self._on_recording_failed)
        self.hierarchy_panel.changed.connect(self.redraw)
        self.scene_panel.open_mesh_requested.connect(self.open_mesh_dialog)
        self.stepper_panel.step_changed.connect(self._on_step)
        self.stepper_panel.focus_requested.connect(self.focus_on_pair)
        for key, fn in ((QtCore.Qt.Key.Key_Space, self.playback.toggle),
                        (QtCore.Qt.Key.Key_Right, lambda: self.playback.step(1)),
                        (QtCore.Qt.Key.Key_Left, lambda: self.playback.step(-1)),
                        (QtCore.Qt.Key.Key_N, self.stepper_panel.next_btn.click)):
            sc = QtGui.QShortcut(QtGui.QKeySequence(key), self)
            sc.setContext(QtCore.Qt.ShortcutContext.ApplicationShortcut)
            sc.activated.connect(fn)
        self._restore()

    # ---- layout -----------------------------------------------------------------
    def _dock(self, title, widget, area, tip=None, tab_behind=None, name=None):
        """A dock holding ``widget`` in a vertical scroll area that is never narrower than
        the widget needs (so nothing is cut and no horizontal scrollbar appears)."""
        dock = QtWidgets.QDockWidget(title, self)
        name = name or title.replace(" ", "_").replace("&", "and")
        dock.setObjectName(name)
        if tip:
            dock.toggleViewAction().setToolTip(tip)
        dock.setWidget(_FitScrollArea(widget, objectName=name + "_scroll"))
        tab_with = self.findChild(QtWidgets.QDockWidget, tab_behind) if tab_behind else None
        if tab_with is not None:
            self.tabifyDockWidget(tab_with, dock)  # added as a tab right away: adding it to the
            tab_with.raise_()                     # area first left a stray second tab bar
        else:
            self.addDockWidget(area, dock)
        return dock

    def _optional_docks(self):
        """Timing, compare, insight, realignment and distance panels."""
        from .widgets.realign_panel import RealignPanel
        self.realign_panel = RealignPanel(self.session)
        self._dock("Realignment", self.realign_panel, AREA.RightDockWidgetArea, name="k-DOP_realignment",
                   tip="k-DOP realignment of the stepper's pair", tab_behind="Traversal_stepper")
        self.realign_panel.draw_requested.connect(self._draw_realign)
        self._realign_actors = []
        from .widgets.distance_panel import DistancePanel
        self.distance_panel = DistancePanel(self.session)
        self._dock("Distance", self.distance_panel, AREA.RightDockWidgetArea, name="Minimum_distance",
                   tip="Minimum distance of the selected pair, with the closest points", tab_behind="Traversal_stepper")
        self.distance_panel.points_changed.connect(self._draw_closest)
        from .widgets.robot_actions import install_robot_dock  # robots: joint panel (issue 10)
        install_robot_dock(self)
        self.timing_panel = self.compare_panel = self.insight_panel = None
        try:
            from .widgets.timing_panel import TimingPanel
            self.timing_panel = TimingPanel(self.session, max_rate=10.0)
            d = self._dock("Timing", self.timing_panel, AREA.BottomDockWidgetArea, name="Timing")
            d.widget().setMinimumHeight(self.timing_panel.minimumHeight())
        except ImportError:
            pass
        try:
            from .widgets.compare_panel import ComparePanel
            self.compare_panel = ComparePanel(self.session)
            self._dock("Compare", self.compare_panel, AREA.BottomDockWidgetArea, name="Compare_methods",
                       tip="Compare update methods side by side", tab_behind="Timing")
        except ImportError:
            pass
        try:
            from .widgets.insight_panel import InsightPanel
            self.insight_panel = InsightPanel(self.session)
            self._dock("Insight", self.insight_panel, AREA.RightDockWidgetArea, name="Insight",
                       tip="Ground truth, refit quality, heat map", tab_behind="Traversal_stepper")
            if hasattr(self.insight_panel, "heat_toggled"):
                self.insight_panel.heat_toggled.connect(
                    lambda on: self.hierarchy_panel.color_by.setCurrentText("heat" if on else "state"))
            if hasattr(self.insight_panel, "highlight_requested"):
                self.insight_panel.highlight_requested.connect(self._highlight_triangles)
        except ImportError:
            pass

    def fit_docks(self) -> None:
        """Size the dock areas from their content: each side as wide as its widest panel
        asks (within a third of the window), the bottom plots at least ~200 px high."""
        docks = [d for d in self.findChildren(QtWidgets.QDockWidget) if not d.isFloating()]
        for area in (AREA.LeftDockWidgetArea, AREA.RightDockWidgetArea):
            side = [d for d in docks if self.dockWidgetArea(d) == area]
            if side:
                want = max(max(d.widget().widget().sizeHint().width(), d.widget().minimumWidth()) for d in side)
                want = min(want + 4, max(self.width() // 3, max(d.widget().minimumWidth() for d in side)))
                self.resizeDocks(side[:1], [want], QtCore.Qt.Orientation.Horizontal)
        left = [d for d in docks if self.dockWidgetArea(d) == AREA.LeftDockWidgetArea and d.isVisible()]
        if len(left) > 1:  # stacked: each as high as its panel asks
            self.resizeDocks(left, [d.widget().widget().sizeHint().height() + 8 for d in left],
                             QtCore.Qt.Orientation.Vertical)
        bottom = [d for d in docks if self.dockWidgetArea(d) == AREA.BottomDockWidgetArea]
        if bottom:
            h = max(215, min(280, self.height() // 4))
            self.resizeDocks(bottom[:1], [h], QtCore.Qt.Orientation.Vertical)
        for bar in self.findChildren(QtWidgets.QTabBar):
            bar.setElideMode(QtCore.Qt.TextElideMode.ElideNone)  # full tab titles
        QtCore.QTimer.singleShot(0, self._hide_stray_tab_bars)

    def _hide_stray_tab_bars(self):
        """Qt 6.11 leaves a second, stale tab bar of a tabified dock group painted at the
        group's pre-layout place (reproduced with a bare QMainWindow, once two groups are
        tabified): hide a tab bar that does not touch the docks it names."""
        docks = {d.windowTitle(): d for d in self.findChildren(QtWidgets.QDockWidget)}
        groups = {}
        for bar in self.findChildren(QtWidgets.QTabBar, options=QtCore.Qt.FindChildOption.FindDirectChildrenOnly):
            if bar.isVisible():
                groups.setdefault(tuple(bar.tabText(i) for i in range(bar.count())), []).append(bar)
        for titles, bars in groups.items():
            rects = [docks[t].geometry() for t in titles if t in docks and docks[t].isVisible()]
            if len(bars) < 2 or not rects:
                continue
            bottom = max(r.bottom() for r in rects)  # tabs sit under their docks (South)
            for bar in bars:
                if abs(bar.geometry().top() - bottom) > 8:
                    bar.hide()

    def _camera_actions(self):
        tb = self.toolbar
        tb.addSeparator()
        self.act_fit = QtGui.QAction("Fit", self, objectName="actFit", shortcut=QtGui.QKeySequence("Home"),
                                     toolTip="Fit the view to the bodies over their whole motion (Home)")
        self.act_fit.triggered.connect(lambda: (self.fit_view(), self.request_render()))
        self.act_follow = QtGui.QAction("Follow", self, objectName="actFollow", checkable=True,
                                        toolTip="Keep the bodies in view as they move")
        self.act_follow.toggled.connect(self.set_follow)
        self.act_focus = QtGui.QAction("Focus pair", self, objectName="actFocus", shortcut=QtGui.QKeySequence("F"),
                                       toolTip="Zoom to the stepper's current node pair, or the closest points (F)")
        self.act_focus.triggered.connect(self.focus_on_pair)
        for a in (self.act_fit, self.act_follow, self.act_focus):
            a.setShortcutContext(QtCore.Qt.ShortcutContext.ApplicationShortcut)
            tb.addAction(a)
            self.addAction(a)

    def _menus(self):
        m = self.menuBar().addMenu("&File")
        self.act_open = m.addAction("&Open mesh…", self.open_mesh_dialog, QtGui.QKeySequence.StandardKey.Open)
        self.act_scene = m.addAction("Open scene &file…", self.open_scene_dialog)
        from .widgets.robot_actions import add_robot_actions  # robots, trajectories, saved queries
        add_robot_actions(self, m)
        m.addSeparator()
        self.act_record = m.addAction("&Record frame timings…", self.record_dialog)
        self.act_stop = m.addAction("&Stop recording", self.stop_recording)
        self.act_stop.setEnabled(False)
        m.addAction("Save &screenshot…", self.screenshot_dialog)
        m.addAction("Export frames as &PNG sequence…", self.export_frames_dialog)
        m.addSeparator()
        m.addAction("&Quit", self.close, QtGui.QKeySequence.StandardKey.Quit)
        v = self.menuBar().addMenu("&View")
        for dock in self.findChildren(QtWidgets.QDockWidget):
            v.addAction(dock.toggleViewAction())
        v.addSeparator()
        for a in (self.act_fit, self.act_follow, self.act_focus):
            v.addAction(a)
        v.addAction("Reset camera direction", lambda: (self.reset_view(), self.request_render()))
        v.addAction("Reset layout", self.reset_layout)

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

    def load_in_background(self, ref: dict, frames: int | None = None) -> None:
        """Build the scene (and compile the kernels it needs, on a first run) on a worker
        thread into a private Session while the window keeps painting a progress message,
        then adopt it here in the GUI thread (views are only touched from this thread)."""
        s = self.session
        label = ref.get("scene") or os.path.basename(ref.get("file", "")) or ", ".join(
            os.path.basename(p) for p in ref.get("meshes", ()))

        def build():
            tmp = Session()
            tmp.bv, tmp.method, tmp.test, tmp.deform, tmp.realign = s.bv, s.method, s.test, s.deform, s.realign
            tmp.load_ref(ref, frames)
            return tmp

        tmp = self.run_busy(f"Loading {label}: building hierarchies and compiling the collision kernels "
                            "(cached after the first run)", build)
        s.adopt(tmp)

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
        if paths and paths[0].lower().endswith(".urdf"):
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
        d = QtWidgets.QFileDialog.getExistingDirectory(self, "Export frames to", self._last_dir())
        if d:
            guarded(self, "Export frames", self.export_frames, d)

    def export_frames(self, directory: str, first: int | None = None, count: int | None = None):
        """Render frames to ``directory/frame_00000.png`` … (a video's frames; assemble with
        any encoder, e.g. ``ffmpeg -i frame_%05d.png out.mp4``)."""
        s = self.session
        first = s.frame if first is None else first
        count = s.n_frames - first if count is None else count
        for k, f in enumerate(range(first, min(s.n_frames, first + count))):
            s.goto(f)
            self.screenshot(os.path.join(directory, f"frame_{k:05d}.png"))

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
            self._status()  # the paused frame's numbers (updates were throttled while playing)
            self._update_hud()

    def _on_recording(self, on: bool):
        self.act_stop.setEnabled(on)
        self.act_record.setEnabled(not on)
        self._status()

    def _on_recording_failed(self, message: str):
        # the session stopped recording after the first write error: one dialog, not one per frame
        show_error(self, "Recording stopped",
                   message + "\n\nEvery complete row is kept; the sidecar records the error.")

    def _on_scene(self):
        for layer in self.mesh_layers + self.tree_layers:
            layer.clear()
        self.plotter.clear()
        self._lighting()
        self.axis_overlay = type(self.axis_overlay)(self.plotter)
        self.hud = self._ViewHud(self.plotter)
        self._realign_actors = []
        self._step, self._closest = (None, None), None
        s = self.session
        self.mesh_layers = [self._BodyMeshLayer(self.plotter, i, sb) for i, sb in enumerate(s.scene.bodies)]
        self.tree_layers = [self._HierarchyLayer(self.plotter, f"tree{i}") for i in range(len(s.scene.bodies))]
        self._scene_box = scene_bounds(s.scene)
        self.settings.setValue("last_scene_ref", json.dumps(s.scene_ref()))
        self._first_draw = True

    def _on_frame(self, _record):
        t0 = time.perf_counter()
        self.redraw(render=False)
        if getattr(self, "_first_draw", False):
            self.reset_view()
            self._first_draw = False
        elif self.follow:
            self._follow()
        self._update_hud()
        self._render_now()
        # drawing time: updating the batched geometry now + the last VTK render (the
        # repaint itself runs when Qt next paints the window)
        self.session.commit(time.perf_counter() - t0 + self._vtk_render_time)
        self._status()

    # ---- camera ----------------------------------------------------------------------
    def reset_view(self):
        """Look down at the scene from above and in front (elongated scenes such as the
        chains fill the width), framing the bodies over their whole motion."""
        self.plotter.view_vector((0.35, -0.75, 1.0), viewup=(0.0, 0.0, 1.0))
        self.fit_view()

    def fit_view(self, bounds=None):
        """Frame ``bounds`` (default: the bodies over the whole motion, so none drifts out
        of view later), keeping the view direction."""
        b = bounds if bounds is not None else getattr(self, "_scene_box", None)
        if b is None:
            self.plotter.reset_camera()
            return
        ren = self.plotter.renderer
        b = [float(x) for x in b]
        ren.ResetCamera(*b)  # centres the bounds' sphere: loose for long, thin scenes (chains)
        cam = ren.GetActiveCamera()
        corners = np.array([[b[i], b[2 + j], b[4 + k]] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
        for _ in range(3):  # dolly until the projected box fills ~90 % of the view's tighter side
            ext = self._view_extent(corners)
            if not np.isfinite(ext) or ext <= 0:
                break
            f = 0.9 / ext
            if abs(f - 1.0) < 0.03:
                break
            cam.Dolly(min(max(f, 0.2), 5.0))
            ren.ResetCameraClippingRange()
        ren.ResetCameraClippingRange()

    def _view_extent(self, points) -> float:
        """Largest |x| or |y| of ``points`` in normalised view coordinates (1: the edge)."""
        ren = self.plotter.renderer
        out = 0.0
        for p in points:
            ren.SetWorldPoint(float(p[0]), float(p[1]), float(p[2]), 1.0)
            ren.WorldToView()
            x, y, _ = ren.GetViewPoint()
            out = max(out, abs(x), abs(y))
        return out

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
        s = self.session
        b = scene_bounds(s.scene, frames=[s.frame])
        corners = np.array([[b[i], b[2 + j], b[4 + k]] for i in (0, 1) for j in (0, 1) for k in (0, 1)])
        ext = self._view_extent(corners)
        if force or ext > 0.98 or ext < 0.35:
            self.fit_view(b)

    def focus_on_pair(self) -> bool:
        """Zoom to the stepper's current node pair (with the separating axis drawn), or to
        the closest points when there is no pair; False when there is nothing to focus."""
        step, trav = self._step
        extra = None
        if step is not None and self.axis_overlay.visible and self.axis_overlay.geometry is not None:
            g = self.axis_overlay.geometry
            extra = np.vstack([g["start"], g["end"], g["ends"]])
        b = pair_bounds(step, trav, extra_points=extra)
        if b is None and self._closest is not None:
            p = np.asarray(self._closest, dtype=np.float64)
            r = max(float(np.linalg.norm(p[1] - p[0])), 1e-3 * float(np.ptp(self._scene_box.reshape(3, 2), 1).max()))
            b = pair_bounds(None, None, pad=0.0, extra_points=np.vstack([p - 2 * r, p + 2 * r]))
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

    # ---- heads-up display ----------------------------------------------------------------
    def _update_hud(self):
        from cdcore.articulated import METHOD_LABELS
        s = self.session
        rec = s.record
        if s.scene is None or rec is None:
            return
        mode, lo, hi = self.resolved_depth
        depth = {"all": "all levels", "leaves": "leaves", "level": f"level {lo}", "range": f"levels {lo}-{hi}"}[mode]
        if self.hierarchy_panel.mode.currentText() == "auto":
            depth += " (auto)"
        boxes = sum(t.n_nodes for t in self.tree_layers)
        multi = any(sb.body.n_links > 1 for sb in s.scene.bodies)
        method = f"  ·  update {METHOD_LABELS[s.method]}" if multi else ""
        self.hud.set_info(
            f"{s.scene.name}   frame {rec.frame} / {s.n_frames - 1}\n"
            f"BV {s.bv}{method}  ·  test {s.exact_test}\n{depth}: {boxes:,} nodes drawn",
            f"BV tests {rec.bv_tests:,}\ntriangle tests {rec.prim_tests:,}\n#exact {rec.n_exact}  #false {rec.n_false}"
            f"\ncontacts {rec.contacts}" + (f"\n{rec.fps:.0f} fps" if s.playing and rec.fps > 0 else ""))

    def _lighting(self):
        """One headlight instead of pyvista's light kit: half the cost of shading the meshes
        under software OpenGL, and boxes are drawn unlit anyway."""
        import pyvista as pv
        self.plotter.remove_all_lights()
        self.plotter.add_light(pv.Light(light_type="headlight"))

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

    def redraw(self, render: bool = True):
        s = self.session
        if s.scene is None or not self.mesh_layers:
            return
        hp = self.hierarchy_panel
        mode, lo, hi = hp.selection()
        hp.set_max_depth(max(t.height for t in s.trees) if s.trees else 0)
        if mode == "auto":
            mode, lo, hi = readable_selection(s.trees)
        self.resolved_depth = (mode, lo, hi)
        by = hp.color_by.currentText()
        heats = [s.heat(i) for i in range(len(s.trees))] if by == "heat" else None
        heat_max = max((float(h.max()) for h in heats if h.size), default=0.0) if heats else None
        drawn = 0
        for i, sb in enumerate(s.scene.bodies):
            ml = self.mesh_layers[i]
            ml.set_visible(hp.show_mesh.isChecked())
            ml.set_opacity(hp.opacity.value() / 100.0)
            if hp.show_mesh.isChecked():
                ml.update(sb.link_poses[s.frame], sb.body.bvhs[0].mesh.vertices if sb.deforming else None)
            tl = self.tree_layers[i]
            tl.set_visible(hp.show_tree.isChecked())
            if hp.show_tree.isChecked() and i < len(s.trees):
                tree = s.trees[i]
                nodes = tree.select(mode, lo, hi)
                drawn += len(nodes)
                # one heat scale for every tree: the colour bar's
                tl.update(tree, nodes, colors_by=by, states=s.states[i], heat=heats[i] if heats else None,
                          heat_max=max(heat_max, 1.0) if heats else None)
        hp.resolved.setText({"all": "all", "leaves": "leaves", "level": f"= {lo}", "range": f"= {lo}-{hi}"}[mode]
                            + f" ({drawn:,} nodes)")
        if not hp.show_tree.isChecked():
            self.hud.set_key("none")
        elif by == "heat":
            self.hud.set_key("heat", heat_max or 0.0, len(s._heat))
        elif self.hud.key_mode != "state":
            self.hud.set_key("state")
        if render:
            self._update_hud()
            self.request_render()

    def _draw_realign(self, wires):
        """Realigned k-DOPs as line sets (a handful of polytopes: one actor each is fine),
        and their colour key in the 3-D view."""
        import pyvista as pv
        for a in self._realign_actors:
            self.plotter.remove_actor(a, render=False)
        self._realign_actors = []
        from .render.hierarchy import kdop_wireframes
        key = []
        for k, (label, dirs, slabs, pose, rgb) in enumerate(wires):
            k2 = len(dirs)
            local, edges, _ = kdop_wireframes(dirs, slabs[None, :k2], slabs[None, k2:])
            pts = local @ pose[:3, :3].T + pose[:3, 3]
            if len(edges) == 0:
                continue
            lines = np.hstack([np.full((len(edges), 1), 2), edges]).ravel()
            poly = pv.PolyData(np.asarray(pts, dtype=np.float64), lines=lines)
            self._realign_actors.append(self.plotter.add_mesh(
                poly, color=[c / 255 for c in rgb], line_width=3 if k >= 2 else 2, lighting=False,
                name=f"realign-{k}", reset_camera=False, pickable=False))
            key.append((label, rgb))
        self.hud.set_realign_key(key)
        self.request_render()

    def _draw_closest(self, points):
        """The two closest points and the segment between them."""
        import pyvista as pv
        for name in ("closest-segment", "closest-points"):
            self.plotter.remove_actor(name, render=False)
        self._closest = None if points is None else np.asarray(points, dtype=np.float64)
        if points is not None:
            p = self._closest
            self.plotter.add_mesh(pv.Line(p[0], p[1]), color="black", line_width=4, name="closest-segment",
                                  reset_camera=False, pickable=False, lighting=False)
            self.plotter.add_mesh(pv.PolyData(p), color="crimson", point_size=14, render_points_as_spheres=True,
                                  name="closest-points", reset_camera=False, pickable=False)
        self.request_render()

    def _on_step(self, step, traversal):
        self._step = (step, traversal)
        if self.realign_panel.isVisible():
            self.realign_panel.show_step(step, traversal)
        if step is None or traversal is None:
            self.axis_overlay.hide()
            for tl in self.tree_layers:
                if hasattr(tl, "clear_highlight"):
                    tl.clear_highlight()
        else:
            if self.tree_layers:
                self.tree_layers[0].highlight(traversal.tree_a, step.node_a, traversal.tree_b, step.node_b)
            if step.axis_dir is not None:
                self.axis_overlay.show(step, traversal.tree_a, traversal.tree_b,
                                       up=self.plotter.camera.GetViewUp())
            else:
                self.axis_overlay.hide()
        self.request_render()

    def _highlight_triangles(self, items):
        for body, link, tris in items:
            if body < len(self.mesh_layers):
                self.mesh_layers[body].highlight_triangles(link, tris)
        self.request_render()

    def _status(self):
        s = self.session
        rec = s.record
        if rec is None:
            return
        now = time.perf_counter()
        if s.playing and now - getattr(self, "_status_t", 0.0) < STATUS_PERIOD:
            return  # while playing, a text nobody can read at 60 Hz only costs repaints
        self._status_t = now
        text = (f"frame {rec.frame}  |  update {rec.t_update * 1e6:.0f} µs  test {rec.t_test * 1e6:.0f} µs  "
                f"query {rec.t_query * 1e6:.0f} µs  |  #exact {rec.n_exact}  #false {rec.n_false}  "
                f"contacts {rec.contacts}  |  " + (f"{rec.fps:.0f} fps" if s.playing and rec.fps > 0 else "paused"))
        if s.recorder is not None:
            text += f"  |  ● recording {s.recorder.rows} rows"
        self.status.setText(text)

    def eventFilter(self, obj, event):
        if obj is self.plotter.interactor and event.type() == QtCore.QEvent.Type.Resize:
            self.hud.layout()
        return super().eventFilter(obj, event)

    # ---- persistence ------------------------------------------------------------------
    def _restore(self):
        geo = self.settings.value("geometry")
        state = self.settings.value("window_state")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(1400, 900)
        if state is None or not self.restoreState(state, LAYOUT_VERSION):
            self._default_layout_pending = True  # sized from content once shown
        else:
            self._user_layout = True  # the user's own dock sizes: never re-fitted behind their back

    def reset_layout(self):
        for d in self.findChildren(QtWidgets.QDockWidget):
            d.setFloating(False)
            d.show()
        self.fit_docks()

    def showEvent(self, event):
        super().showEvent(event)
        if getattr(self, "_default_layout_pending", False):
            self._default_layout_pending = False
            self.fit_docks()
        QtCore.QTimer.singleShot(0, self._hide_stray_tab_bars)

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
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState(LAYOUT_VERSION))
        self.settings.sync()
        self.plotter.close()
        super().closeEvent(event)
