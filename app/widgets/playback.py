"""Playback controls: play/pause, step, step back (shown in the main toolbar, see
``toolbar_items``), and the timeline: frame slider, frame number, speed."""
from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets

from .errors import guarded


class PlaybackBar(QtWidgets.QWidget):
    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.driven = False  # True: the window calls sync() while playing
        self._synced = 0.0
        lay = QtWidgets.QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        self.back_btn = QtWidgets.QToolButton(text="◀|", objectName="stepBack", toolTip="Step back (←)")
        self.play_btn = QtWidgets.QToolButton(text="▶", objectName="play", toolTip="Play / pause (Space)",
                                              checkable=True)
        self.fwd_btn = QtWidgets.QToolButton(text="|▶", objectName="stepForward", toolTip="Step (→)")
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal, objectName="frameSlider")
        self.slider.setTracking(True)
        self.frame_label = QtWidgets.QLabel("0 / 0", objectName="frameLabel")
        # fixed in both directions: a new text then repaints the label only (a label free in
        # either direction asks its parents for a layout pass on every setText)
        self.frame_label.setFixedSize(self.frame_label.fontMetrics().horizontalAdvance("00000 / 00000") + 8,
                                      self.frame_label.sizeHint().height())
        self.speed = QtWidgets.QSpinBox(objectName="speed", minimum=1, maximum=50, value=1, prefix="×",
                                        toolTip="Frames per tick")
        lay.addWidget(QtWidgets.QLabel("Frame"))
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.frame_label)
        lay.addWidget(QtWidgets.QLabel("speed"))
        lay.addWidget(self.speed)
        self.back_btn.clicked.connect(lambda: self.step(-1))
        self.fwd_btn.clicked.connect(lambda: self.step(1))
        self.play_btn.toggled.connect(self.session.set_playing)
        self.slider.valueChanged.connect(self._scrub)
        self.speed.valueChanged.connect(lambda v: setattr(self.session, "speed", int(v)))
        session.scene_changed.connect(self.sync)
        session.frame_changed.connect(self._on_frame)
        session.settings_changed.connect(self.sync)
        self.sync()

    def toolbar_items(self):
        return [(None, self.back_btn), (None, self.play_btn), (None, self.fwd_btn)]

    def step(self, delta: int):
        if self.session.scene is not None:
            self.session.set_playing(False)
            guarded(self, "Step", self.session.step, delta)

    def toggle(self):
        self.play_btn.toggle()

    def _scrub(self, value: int):
        s = self.session
        if s.scene is not None and value != s.frame:
            guarded(self, "Frame", s.goto, value)

    def _on_frame(self, _rec=None):
        """Every frame when stepping; during playback the window's read-out tick calls
        ``sync`` (<= 10 Hz: the slider and the frame number repaint part of the window)."""
        if self.session.playing and self.driven:
            return
        now = time.perf_counter()
        if self.session.playing and now - self._synced < 0.1:
            return
        self._synced = now
        self.sync()

    def sync(self):
        self._synced = time.perf_counter()
        s = self.session
        self.slider.blockSignals(True)
        self.play_btn.blockSignals(True)
        self.slider.setRange(0, max(0, s.n_frames - 1))
        self.slider.setValue(s.frame)
        self.play_btn.setChecked(s.playing)
        self.play_btn.setText("❚❚" if s.playing else "▶")
        self.frame_label.setText(f"{s.frame} / {max(0, s.n_frames - 1)}")
        self.slider.blockSignals(False)
        self.play_btn.blockSignals(False)
