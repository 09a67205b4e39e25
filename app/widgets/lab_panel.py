"""The build lab in the app: 2-8 configurations (BV type x test x split rule x leaf size) run
over the session's scene and motion (``cdcore.lab.LabRun``, one frame per timer tick so the
window stays live), node tests and time per frame plotted per configuration, then the table of
tree-quality numbers and the verdict (which wins, by how much, and why)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from cdcore.lab import FrontRun, LabConfig, LabRun, verdict

DEFAULT = "aabb::median  aabb::sah  obb::median  obb::sah  obb_sphere:sphere5:sah"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
COLUMNS = ("configuration", "N_v/frame", "N_p/frame", "ms/frame", "C_v (ns)", "R²", "E[N_v]/meas", "SAH", "EPO",
           "overlap", "build ns/tri")


class LabPanel(QtWidgets.QWidget):
    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.job = None
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        row = QtWidgets.QHBoxLayout()
        self.configs = QtWidgets.QLineEdit(DEFAULT, objectName="labConfigs", toolTip=(
            "2-8 configurations bv[:test[:split[:leaf[:realign]]]], separated by spaces; split: median, mean, sah, "
            "volume; realign (k-DOPs): table, all, major, table_angle"))
        self.frames = QtWidgets.QSpinBox(objectName="labFrames", minimum=2, maximum=2000, value=120,
                                         toolTip="frames of the scene's motion to run")
        self.run_btn = QtWidgets.QPushButton("Run lab", objectName="labRun")
        self.run_btn.clicked.connect(self.toggle)
        self.front_btn = QtWidgets.QPushButton("Front cache", objectName="labFront", toolTip=(
            "The first configuration with full traversals and with the front cache on the same frames: node "
            "tests and front size per frame (every front query checked against the full one)"))
        self.front_btn.clicked.connect(self.toggle_front)
        row.addWidget(QtWidgets.QLabel("Configurations"))
        row.addWidget(self.configs, 1)
        row.addWidget(QtWidgets.QLabel("frames"))
        row.addWidget(self.frames)
        row.addWidget(self.run_btn)
        row.addWidget(self.front_btn)
        self.status = QtWidgets.QLabel("", objectName="labStatus")
        row.addWidget(self.status)
        lay.addLayout(row)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        self.plot_nv = self._plot("node tests per frame (N_v)", "labPlotNv")
        self.plot_t = self._plot("query time per frame (ms)", "labPlotTime")
        split.addWidget(self.plot_nv)
        split.addWidget(self.plot_t)
        # the verdict first (what a person reads), the numbers behind it in the next tab
        self.tabs = QtWidgets.QTabWidget(objectName="labTabs")
        self.verdict = QtWidgets.QPlainTextEdit(objectName="labVerdict", readOnly=True)
        self.verdict.setPlaceholderText("Run the lab: the verdict (which configuration wins, by how much and why) "
                                        "appears here when the run ends; the numbers in the Table tab.")
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS), objectName="labTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.tabs.addTab(self.verdict, "Verdict")
        self.tabs.addTab(self.table, "Table")
        split.addWidget(self.tabs)
        split.setSizes([280, 280, 560])
        self.setMinimumHeight(150)
        lay.addWidget(split, 1)
        self.timer = QtCore.QTimer(self, interval=0)
        self.timer.timeout.connect(self._tick)
        self.curves = []

    @staticmethod
    def _plot(title, name):
        w = pg.PlotWidget(objectName=name)
        pi = w.getPlotItem()
        pi.setTitle(title, size="9pt")
        pi.showGrid(x=True, y=True, alpha=0.3)
        pi.setLabel("bottom", "frame")
        pi.getAxis("left").enableAutoSIPrefix(False)
        w.setMinimumSize(160, 110)  # the configurations' colours are keyed in the table, not a legend
        return w

    def parse(self) -> list[LabConfig]:
        """The configurations typed in (``ValueError`` says which one is wrong)."""
        items = self.configs.text().split()
        configs = [LabConfig.parse(t) for t in items]
        if not 2 <= len(configs) <= 8:
            raise ValueError(f"give 2 to 8 configurations, got {len(configs)}")
        return configs

    def toggle(self) -> None:
        if self.job is not None:
            self.stop("stopped")
            return
        scene = getattr(self.session, "scene", None)
        if scene is None:
            self.status.setText("Load a scene first.")
            return
        try:
            configs = self.parse()
            self.job = LabRun(scene, configs, frames=min(self.frames.value(), scene.frames))
        except (ValueError, TypeError) as exc:
            QtWidgets.QMessageBox.warning(self, "Build lab", str(exc))
            return
        for p in (self.plot_nv, self.plot_t):
            p.getPlotItem().clear()
        self.curves = []
        for k, c in enumerate(configs):
            pen = pg.mkPen(PALETTE[k % len(PALETTE)], width=1.5)
            self.curves.append((self.plot_nv.plot([], [], pen=pen, name=c.label),
                                self.plot_t.plot([], [], pen=pen, name=c.label)))
        self.table.setRowCount(0)
        self.verdict.setPlainText("")
        self.run_btn.setText("Stop")
        self.status.setText(f"{scene.name}: running {len(configs)} configurations over "
                            f"{self.job.frames} frames, interleaved")
        self.timer.start()

    def toggle_front(self) -> None:
        if self.job is not None:
            self.stop("stopped")
            return
        scene = getattr(self.session, "scene", None)
        if scene is None:
            self.status.setText("Load a scene first.")
            return
        try:
            items = self.configs.text().split()
            config = LabConfig.parse(items[0]) if items else LabConfig("obb")
            self.job = FrontRun(scene, config, frames=min(self.frames.value(), scene.frames))
        except (ValueError, TypeError) as exc:
            QtWidgets.QMessageBox.warning(self, "Build lab", str(exc))
            return
        for p in (self.plot_nv, self.plot_t):
            p.getPlotItem().clear()
        full, front, size = (pg.mkPen(PALETTE[0], width=1.5), pg.mkPen(PALETTE[1], width=1.5),
                             pg.mkPen(PALETTE[2], width=1, style=QtCore.Qt.PenStyle.DashLine))
        self.curves = [(self.plot_nv.plot([], [], pen=full), self.plot_t.plot([], [], pen=full)),
                       (self.plot_nv.plot([], [], pen=front), self.plot_t.plot([], [], pen=front)),
                       (self.plot_nv.plot([], [], pen=size), None)]
        self.table.setRowCount(0)
        self.verdict.setPlainText("")
        self.front_btn.setText("Stop")
        self.run_btn.setEnabled(False)
        self.status.setText(f"{scene.name}: {config.label}, full vs front cache")
        self.timer.start()

    def stop(self, why: str) -> None:
        self.timer.stop()
        job, self.job = self.job, None
        self.run_btn.setText("Run lab")
        self.front_btn.setText("Front cache")
        self.run_btn.setEnabled(True)
        self.front_btn.setEnabled(True)
        if job is not None and job.frame > 1:
            if isinstance(job, FrontRun):
                self._show_front(job)
            else:
                self._show(job)
        self.status.setText(f"{why}: {job.frame if job else 0} frames")

    def _tick(self) -> None:
        job = self.job
        if job is None:
            return
        try:
            more = job.step()
        except Exception as exc:  # a kernel error: say it, never crash the window
            self.stop("failed")
            QtWidgets.QMessageBox.warning(self, "Build lab", f"{type(exc).__name__}: {exc}")
            return
        if job.frame % 5 == 0 or not more:
            if isinstance(job, FrontRun):
                series = [(job.full.log.n_v, job.full.log.seconds), (job.front.log.n_v, job.front.log.seconds),
                          (job.front.log.front, None)]
            else:
                series = [(r.log.n_v, r.log.seconds) for r in job.runs]
            for (cn, ct), (nv, secs) in zip(self.curves, series):
                x = np.arange(len(nv))
                cn.setData(x, np.asarray(nv, float))
                if ct is not None:
                    ct.setData(x, np.asarray(secs) * 1e3)
            self.status.setText(f"frame {job.frame} / {job.frames}")
        if not more:
            self.stop("done")

    def _show_front(self, job) -> None:
        c = job.result()
        rows = (("full traversal (blue)", c.full), ("front cache (orange)", c.front))
        cols = ("run", "N_v/frame", "ms/frame", "front size (green)")
        self.table.setColumnCount(len(cols))
        self.table.setHorizontalHeaderLabels(cols)
        self.table.setRowCount(2)
        for i, (name, log) in enumerate(rows):
            cells = (name, f"{log['n_v'].mean():.0f}", f"{np.median(log['seconds']) * 1e3:.3f}",
                     f"{log['front'].mean():.0f}" if i else "-")
            for j, text in enumerate(cells):
                self.table.setItem(i, j, QtWidgets.QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.verdict.setPlainText(
            f"{c.config.label} on {c.scene}: the front cache did {c.test_ratio:.2f}x the node tests of full traversals "
            f"and took {c.time_ratio:.2f}x the time (median over frames), with the same contacts on every frame. "
            f"A full traversal tests 2F - 1 node pairs when it stops at F, so 0.5x is the bound a front reaches "
            f"when the motion is coherent; incoherent motion sends the cache back to the root.")

    def _show(self, job) -> None:
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        results = job.results()
        self.table.setRowCount(len(results))
        for i, r in enumerate(results):
            q = r.quality[0]
            cells = (r.config.label, f"{r.mean_nv:.0f}", f"{r.mean_np:.0f}", f"{r.mean_seconds * 1e3:.3f}",
                     f"{r.c_v * 1e9:.0f}", f"{r.r2:.2f}", f"{r.expected_nv:.0f}/{r.measured_nv:.0f}",
                     f"{q.sah_cost:.1f}", f"{q.epo:.1f}", f"{q.sibling_overlap:.3f}", f"{r.build_ns_per_tri:.0f}")
            for j, text in enumerate(cells):
                item = QtWidgets.QTableWidgetItem(text)
                if j == 0:  # the configuration's curve colour
                    item.setForeground(QtGui.QBrush(QtGui.QColor(PALETTE[i % len(PALETTE)])))
                    item.setText("■ " + text)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.verdict.setPlainText(verdict(results))
