"""The main window: owns the 3-D view (a pyvistaqt QtInteractor) and the docks, runs the
frame loop (the model computes, the view draws), persists its layout."""
from __future__ import annotations

import os
import time

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from .model import Session
from .widgets.errors import guarded, show_error
from .widgets.hierarchy_panel import HierarchyPanel
from .widgets.playback import PlaybackBar
from .widgets.scene_panel import ScenePanel
from .widgets.stepper_panel import StepperPanel

MESH_FILTER = "Meshes (*.stl *.obj *.ply *.off *.glb *.gltf *.3mf *.dae);;All files (*)"


class MainWindow(QtWidgets.QMainWindow):
    """The debugger window. ``session`` is the Qt-free model it binds to."""

    def __init__(self, session: Session | None = None, settings: QtCore.QSettings | None = None):
        super().__init__()
        from pyvistaqt import QtInteractor  # the 3-D view needs a display: import late

        from .render.hierarchy import HierarchyLayer
        from .render.meshes import BodyMeshLayer
        from .render.overlay import AxisOverlay
        from .render import colors

        self._HierarchyLayer, self._BodyMeshLayer = HierarchyLayer, BodyMeshLayer
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
        lay.addWidget(self.plotter.interactor)
        self.setCentralWidget(frame)
        self.axis_overlay = AxisOverlay(self.plotter)
        self.mesh_layers = []
        self.tree_layers = []

        # docks
        self.scene_panel = ScenePanel(self.session)
        self.hierarchy_panel = HierarchyPanel(colors.STATE_COLORS)
        self.stepper_panel = StepperPanel(self.session)
        self.playback = PlaybackBar(self.session)
        left = QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
        d_scene = self._dock("Scene & method", self.scene_panel, left)
        d_tree = self._dock("Hierarchy view", self.hierarchy_panel, left)
        d_step = self._dock("Traversal stepper", self.stepper_panel, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("Playback", self.playback, QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, scroll=False)
        self._optional_docks()
        # default layout: the 3-D view gets most of the window
        self.tabifyDockWidget(d_scene, d_tree)
        d_scene.raise_()
        for name in ("Compare_methods", "Insight", "k-DOP_realignment", "Minimum_distance"):
            d = self.findChild(QtWidgets.QDockWidget, name)
            if d is not None:
                self.tabifyDockWidget(d_step, d)
        d_step.raise_()
        self.resizeDocks([d_scene, d_step], [300, 320], QtCore.Qt.Orientation.Horizontal)
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
        for key, fn in ((QtCore.Qt.Key.Key_Space, self.playback.toggle),
                        (QtCore.Qt.Key.Key_Right, lambda: self.playback.step(1)),
                        (QtCore.Qt.Key.Key_Left, lambda: self.playback.step(-1)),
                        (QtCore.Qt.Key.Key_N, self.stepper_panel.next_btn.click)):
            sc = QtGui.QShortcut(QtGui.QKeySequence(key), self)
            sc.setContext(QtCore.Qt.ShortcutContext.ApplicationShortcut)
            sc.activated.connect(fn)
        self._restore()

    # ---- layout -----------------------------------------------------------------
    def _dock(self, title, widget, area, scroll=True):
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(title.replace(" ", "_").replace("&", "and"))
        if scroll:
            sa = QtWidgets.QScrollArea()
            sa.setWidgetResizable(True)
            sa.setWidget(widget)
            widget = sa
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _optional_docks(self):
        """Timing, compare, insight and realignment panels."""
        from .widgets.realign_panel import RealignPanel
        self.realign_panel = RealignPanel(self.session)
        self._dock("k-DOP realignment", self.realign_panel, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        self.realign_panel.draw_requested.connect(self._draw_realign)
        self._realign_actors = []
        from .widgets.distance_panel import DistancePanel
        self.distance_panel = DistancePanel(self.session)
        self._dock("Minimum distance", self.distance_panel, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        self.distance_panel.points_changed.connect(self._draw_closest)
        self.timing_panel = self.compare_panel = self.insight_panel = None
        try:
            from .widgets.timing_panel import TimingPanel
            self.timing_panel = TimingPanel(self.session, max_rate=10.0)
            self._dock("Timing", self.timing_panel, QtCore.Qt.DockWidgetArea.BottomDockWidgetArea)
        except ImportError:
            pass
        try:
            from .widgets.compare_panel import ComparePanel
            self.compare_panel = ComparePanel(self.session)
            self._dock("Compare methods", self.compare_panel, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
        except ImportError:
            pass
        try:
            from .widgets.insight_panel import InsightPanel
            self.insight_panel = InsightPanel(self.session)
            self._dock("Insight", self.insight_panel, QtCore.Qt.DockWidgetArea.RightDockWidgetArea)
            if hasattr(self.insight_panel, "heat_toggled"):
                self.insight_panel.heat_toggled.connect(
                    lambda on: self.hierarchy_panel.color_by.setCurrentText("heat" if on else "state"))
            if hasattr(self.insight_panel, "highlight_requested"):
                self.insight_panel.highlight_requested.connect(self._highlight_triangles)
        except ImportError:
            pass

    def _menus(self):
        m = self.menuBar().addMenu("&File")
        self.act_open = m.addAction("&Open mesh…", self.open_mesh_dialog, QtGui.QKeySequence.StandardKey.Open)
        self.act_scene = m.addAction("Open scene &file…", self.open_scene_dialog)
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
        v.addAction("Reset camera", lambda: (self.reset_view(), self.request_render()))

    # ---- files --------------------------------------------------------------------
    def _last_dir(self):
        return str(self.settings.value("last_dir", os.getcwd()))

    def open_mesh_dialog(self):
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(self, "Open one or two meshes", self._last_dir(),
                                                          MESH_FILTER)
        if paths:
            self.open_meshes(paths)

    def open_meshes(self, paths):
        """Read the meshes and build their hierarchies on a worker thread (progress dialog,
        Cancel); the scene is shown when it is ready. Returns the loader."""
        from .widgets.mesh_loader import MeshLoader
        self.settings.setValue("last_dir", os.path.dirname(paths[0]))
        if self.mesh_loader is not None:
            self.mesh_loader.cancel()
        self.session.set_playing(False)
        self.mesh_loader = MeshLoader(self, self.session, paths[:2])
        self.mesh_loader.start()
        return self.mesh_loader

    def open_scene_dialog(self):
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open scene", self._last_dir(), "Scenes (*.json)")
        if path:
            self.settings.setValue("last_dir", os.path.dirname(path))
            guarded(self, "Open scene", self.session.load_scene, path)

    def dragEnterEvent(self, event):
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event):
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        scenes = [p for p in paths if p.lower().endswith(".json")]
        if scenes:
            guarded(self, "Open scene", self.session.load_scene, scenes[0])
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
        """The 3-D view as an image array (and a PNG file when ``path`` is given)."""
        self.plotter.render()
        return self.plotter.screenshot(path, return_img=True)

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

    def _on_recording(self, on: bool):
        self.act_stop.setEnabled(on)
        self.act_record.setEnabled(not on)
        self._status()

    def _on_recording_failed(self, message: str):
        # the session stopped recording after the first write error: one dialog, not one per frame
        show_error(self, "Recording stopped", message + "\n\nEvery complete row is kept; the sidecar records the error.")

    def _on_scene(self):
        for layer in self.mesh_layers + self.tree_layers:
            layer.clear()
        self.plotter.clear()
        self._lighting()
        self.axis_overlay = type(self.axis_overlay)(self.plotter)
        s = self.session
        self.mesh_layers = [self._BodyMeshLayer(self.plotter, i, sb) for i, sb in enumerate(s.scene.bodies)]
        self.tree_layers = [self._HierarchyLayer(self.plotter, f"tree{i}") for i in range(len(s.scene.bodies))]
        self.settings.setValue("last_scene", s.scene.source or s.scene.name)
        self._first_draw = True

    def _on_frame(self, _record):
        t0 = time.perf_counter()
        self.redraw(render=False)
        if getattr(self, "_first_draw", False):
            self.reset_view()
            self._first_draw = False
        self._render_now()
        # drawing time: updating the batched geometry now + the last VTK render (the
        # repaint itself runs when Qt next paints the window)
        self.session.commit(time.perf_counter() - t0 + self._vtk_render_time)
        self._status()

    def reset_view(self):
        """Look down at the scene from above and in front, so elongated scenes (chains)
        fill the width of the view."""
        self.plotter.view_vector((0.35, -0.75, 1.0), viewup=(0.0, 0.0, 1.0))
        self.plotter.reset_camera()

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
                by = hp.color_by.currentText()
                tl.update(tree, nodes, colors_by=by, states=s.states[i],
                          heat=s.heat(i) if by == "heat" else None)
        if render:
            self.request_render()

    def _draw_realign(self, wires):
        """Realigned k-DOPs as line sets (a handful of polytopes: one actor each is fine)."""
        import pyvista as pv
        for a in self._realign_actors:
            self.plotter.remove_actor(a, render=False)
        self._realign_actors = []
        for k, (label, pts, edges, rgb) in enumerate(wires):
            if len(edges) == 0:
                continue
            lines = np.hstack([np.full((len(edges), 1), 2), edges]).ravel()
            poly = pv.PolyData(np.asarray(pts, dtype=np.float64), lines=lines)
            self._realign_actors.append(self.plotter.add_mesh(
                poly, color=[c / 255 for c in rgb], line_width=3 if k >= 2 else 2, lighting=False,
                name=f"realign-{k}", reset_camera=False, pickable=False))
        self.request_render()

    def _draw_closest(self, points):
        """The two closest points and the segment between them."""
        import pyvista as pv
        for name in ("closest-segment", "closest-points"):
            self.plotter.remove_actor(name, render=False)
        if points is not None:
            p = np.asarray(points, dtype=np.float64)
            self.plotter.add_mesh(pv.Line(p[0], p[1]), color="black", line_width=3, name="closest-segment",
                                  reset_camera=False, pickable=False, lighting=False)
            self.plotter.add_mesh(pv.PolyData(p), color="crimson", point_size=12, render_points_as_spheres=True,
                                  name="closest-points", reset_camera=False, pickable=False)
        self.request_render()

    def _on_step(self, step, traversal):
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
                self.axis_overlay.show(step, traversal.tree_a, traversal.tree_b)
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
        text = (f"frame {rec.frame}  |  update {rec.t_update * 1e3:.3f} ms  test {rec.t_test * 1e3:.3f} ms  "
                f"query {rec.t_query * 1e3:.3f} ms  |  #exact {rec.n_exact}  #false {rec.n_false}  "
                f"contacts {rec.contacts}  |  {rec.fps:.0f} fps")
        if s.recorder is not None:
            text += f"  |  ● recording {s.recorder.rows} rows"
        self.status.setText(text)

    # ---- persistence ------------------------------------------------------------------
    def _restore(self):
        geo = self.settings.value("geometry")
        state = self.settings.value("window_state")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(1400, 900)
        if state is not None:
            self.restoreState(state)

    def closeEvent(self, event):
        self.timer.stop()
        self.session.set_playing(False)
        self.session.stop_recording()
        if self.mesh_loader is not None:
            self.mesh_loader.cancel()  # its worker's result is dropped
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState())
        self.settings.sync()
        self.plotter.close()
        super().closeEvent(event)
