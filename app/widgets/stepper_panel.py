"""Traversal stepper: walk the selected body pair's traversal one node pair at a time,
see the pending stack, the outcome and, for a separated pair, the separating axis with
both projections; drill into an exact query (a link pair's triangle hierarchies)."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from cdcore.collide import Outcome

from .errors import guarded

_OUT_TEXT = {Outcome.SEPARATED: "separated", Outcome.OVERLAP: "overlap → descend",
             Outcome.LEAF_HIT: "leaf pair HIT", Outcome.LEAF_MISS: "leaf pair false alarm"}


class StepperPanel(QtWidgets.QWidget):
    step_changed = QtCore.Signal(object, object)  # (Step or None, Traversal)
    focus_requested = QtCore.Signal()

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.stepper = None
        lay = QtWidgets.QVBoxLayout(self)
        self.label = QtWidgets.QLabel(wordWrap=True, objectName="stepperLabel")
        lay.addWidget(self.label)
        row = QtWidgets.QHBoxLayout()
        self.reset_btn = QtWidgets.QToolButton(text="⟲", objectName="stepReset", toolTip="Back to the start")
        self.prev_btn = QtWidgets.QToolButton(text="◀", objectName="stepPrev", toolTip="Previous node pair")
        self.next_btn = QtWidgets.QToolButton(text="▶", objectName="stepNext", toolTip="Next node pair (N)")
        self.hit_btn = QtWidgets.QToolButton(text="next hit", objectName="stepHit", toolTip="Run to the next leaf hit")
        self.end_btn = QtWidgets.QToolButton(text="end", objectName="stepEnd", toolTip="Run to the end")
        for b in (self.reset_btn, self.prev_btn, self.next_btn, self.hit_btn, self.end_btn):
            row.addWidget(b)
        row.addStretch(1)
        lay.addLayout(row)
        self.drill_box = QtWidgets.QComboBox(objectName="drillBox", toolTip="Exact queries of this frame")
        self.drill_box.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.drill_box.setMinimumContentsLength(16)
        lay.addWidget(self.drill_box)
        drill = QtWidgets.QHBoxLayout()
        self.drill_btn = QtWidgets.QPushButton("step into", objectName="drillBtn",
                                               toolTip="Step through this link pair's triangle hierarchies")
        self.up_btn = QtWidgets.QPushButton("back to bodies", objectName="drillUp")
        self.focus_btn = QtWidgets.QPushButton("focus (F)", objectName="stepFocus",
                                               toolTip="Zoom the 3-D view to the current node pair (F)")
        drill.addWidget(self.drill_btn)
        drill.addWidget(self.up_btn)
        drill.addWidget(self.focus_btn)
        lay.addLayout(drill)
        self.outcome = QtWidgets.QLabel(objectName="stepOutcome", wordWrap=True)
        self.outcome.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay.addWidget(self.outcome)
        lay.addWidget(QtWidgets.QLabel("Pending node pairs (top first):"))
        self.stack = QtWidgets.QListWidget(objectName="stepStack")
        lay.addWidget(self.stack, 1)
        self.reset_btn.clicked.connect(lambda: self._move(lambda s: s.goto(-1)))
        self.prev_btn.clicked.connect(lambda: self._move(lambda s: s.prev()))
        self.next_btn.clicked.connect(lambda: self._move(lambda s: s.next()))
        self.hit_btn.clicked.connect(lambda: self._move(lambda s: s.run_to_next_hit()))
        self.end_btn.clicked.connect(lambda: self._move(lambda s: s.run_to_end()))
        self.drill_btn.clicked.connect(self._drill)
        self.up_btn.clicked.connect(lambda: self.reload())
        self.focus_btn.clicked.connect(self.focus_requested)
        session.frame_changed.connect(self._on_frame)
        session.settings_changed.connect(self._on_frame)
        self._stale = True
        self.reload()

    def _on_frame(self, *_):
        """While playing, the traversal of the moment is not rebuilt (replaying a trace of
        thousands of pairs every frame would cost the frame rate); it is when paused."""
        self._stale = True
        if not self.session.playing and self.isVisible():
            self.reload()
        elif self.session.playing:
            self.label.setText("playing — pause to step through this frame's traversal")

    def showEvent(self, event):
        super().showEvent(event)
        if self._stale and not self.session.playing:
            self.reload()

    def reload(self, drill=None):
        """A fresh stepper for the current frame and selected pair (or a drilled link pair)."""
        self._stale = False
        self.stepper = guarded(self, "Traversal", self.session.stepper, drill)
        data = self.drill_box.currentData()
        chosen = tuple(data) if data is not None else None
        self.drill_box.clear()
        s = self.session
        if s.result is not None and s.scene is not None and s.result.pairs:
            r = s.result.pairs[s.selected_pair]
            i, j = s.scene.pairs[s.selected_pair]
            for (li, lj), hit in zip(r.link_pairs.tolist(), r.hits.tolist()):
                na = s.scene.bodies[i].body.links[li].name
                nb = s.scene.bodies[j].body.links[lj].name
                self.drill_box.addItem(f"{na} / {nb} ({'contact' if hit else 'no contact'})", (li, lj))
            # keep showing the link pair being stepped (or the one chosen before a reload)
            keep = tuple(drill) if drill is not None else chosen
            for k in range(self.drill_box.count()):
                if keep is not None and tuple(self.drill_box.itemData(k)) == keep:
                    self.drill_box.setCurrentIndex(k)
                    break
        self.drill_btn.setEnabled(self.drill_box.count() > 0)
        # an empty list says why (a blank box read as a broken panel): no link pair of the
        # selected bodies passed the body-level traversal at this frame (with a placeholder
        # Qt selects no item by itself: the first is selected here)
        self.drill_box.setPlaceholderText("no link pair's volumes overlap at this frame"
                                          if s.result is not None and s.scene is not None else "")
        if self.drill_box.count() and self.drill_box.currentIndex() < 0:
            self.drill_box.setCurrentIndex(0)
        self.up_btn.setEnabled(drill is not None)
        self._show()

    def _drill(self):
        data = self.drill_box.currentData()
        if data is not None:
            self.reload(drill=tuple(data))

    def _move(self, fn):
        if self.stepper is not None:
            fn(self.stepper)
            self._show()

    def _show(self):
        st = self.stepper
        if st is None:
            self.label.setText("no traversal")
            self.outcome.setText("")
            self.stack.clear()
            self.step_changed.emit(None, None)
            return
        t = st.t
        self.label.setText(f"<b>{t.label}</b> — test {t.test}, {st.count} node pairs tested")
        step = st.current()
        self.stack.clear()
        if step is None:
            self.outcome.setText(f"before the first pair (0 / {st.count})")
            self.stack.addItem("(0, 0)")
        else:
            text = f"step {step.index + 1} / {st.count}: nodes <b>({step.node_a}, {step.node_b})</b> — " \
                   f"{_OUT_TEXT[step.outcome]}"
            if step.outcome == Outcome.SEPARATED:
                text += f" by axis <b>{step.axis}: {step.axis_name}</b>"
                if step.interval_a is not None:
                    a, b = step.interval_a, step.interval_b
                    gap = max(b[0] - a[1], a[0] - b[1])
                    text += (f"<br>A projects to [{a[0]:.4g}, {a[1]:.4g}], B to [{b[0]:.4g}, {b[1]:.4g}]; "
                             f"gap {gap:.3g}")
            self.outcome.setText(text)
            for a, b in reversed(step.stack):
                self.stack.addItem(f"({a}, {b})")
        self.step_changed.emit(step, t)
