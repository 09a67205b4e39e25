"""The debugger's state, Qt-free: the scene, the chosen BV type / update method / test,
the current frame and its results, the trees to draw with their node states, the
traversals to step through, recording and compare mode. Views connect to its signals."""
from __future__ import annotations

import os
import time
from collections import deque

import numpy as np

from cdcore import BV_TYPES, collide, load_mesh
from cdcore.collide import CollisionStats
from cdcore import layout as L
from cdcore.articulated import BODY_TESTS, UPDATE_METHODS, collide_bodies
from cdcore.scenes import SceneRunner, list_scenes, load_scene, rigid_scene
from cdcore.scenes.scene import SCENE_DIR

from .frame_view import FrameRecord, FrameView
from .recorder import Recorder, RecorderError
from .signals import Signal
from .stepper import Stepper
from .trees import NOT_VISITED, Traversal, Tree, apply_trace_states

HISTORY = 600  # frames kept for the live plots


class LoadCancelled(Exception):
    """The user cancelled a load running on a worker thread (not an error)."""


def family_of(bv: str) -> str:
    """How a BV type is drawn, from cdcore's registry (``BVType.geometry``): "sphere", "kdop",
    "aabb" (axis-aligned boxes) or "obb" (oriented boxes, with or without spheres)."""
    geometry = BV_TYPES[bv].geometry
    if geometry in ("sphere", "kdop"):
        return geometry
    return "aabb" if BV_TYPES[bv].kind == L.KIND_AABB else "obb"


class Session:
    """Everything the app shows. ``goto(frame)`` computes a frame (timed, as the bench
    does) then, untimed, the traces that colour the trees; ``commit(t_render)`` records
    it once drawn. Errors the user caused (bad files, bad settings) raise ``ValueError``
    / ``OSError`` with a readable message; widgets show them in a dialog."""

    def __init__(self):
        self.scene_changed = Signal()      # ()
        self.frame_changed = Signal()      # (FrameView): the one per-frame message to the views
        self.settings_changed = Signal()   # ()
        self.recording_changed = Signal()  # (bool)
        self.recording_failed = Signal()   # (message): a write error stopped the recording
        self.scene = None
        self.runner = None
        self._bv = "obb"
        self.method = "cab"
        self.test = "sat15"
        self.deform = "refit"
        self.realign = "table"  # k-DOP hierarchies: how B's k-DOPs are realigned
        self.frame = 0
        self.playing = False
        self.speed = 1
        self.visuals = True
        self.deferred_commit = False  # a view commits after drawing
        self.history: deque[FrameRecord] = deque(maxlen=HISTORY)
        self.result = None
        self.record: FrameRecord | None = None
        self.trees: list[Tree] = []
        self.states: list[np.ndarray] = []
        self.traversals: list[Traversal] = []
        self.selected_pair = 0
        self.heat_frames = 60
        self._heat: deque = deque(maxlen=self.heat_frames)
        self._poses: dict = {}  # (frame, body): link poses (``frame_poses``)
        self.recorder: Recorder | None = None
        self.record_error: str | None = None  # why the last recording stopped on its own
        self._last_commit = None
        self.compare = None  # CompareModel, when on
        self.source_meshes: list[str] = []
        self.reload = None  # the builder of a scene made in code (robot, saved query)
        # what the shown views need beyond the engine's results (set by the window from what
        # is visible): "trace" re-runs the pairs traced for the node states and the stepper,
        # "heat" sums the node tests over the last frames
        self.wants = {"trace": True, "heat": False}
        self.scene_id = 0
        self.view: FrameView | None = None

    # ---- scenes -----------------------------------------------------------------
    @staticmethod
    def scene_names() -> list[str]:
        return list_scenes()

    def load_scene(self, name_or_path: str, frames: int | None = None) -> None:
        """A built-in scene by name, or a scene JSON file (``FileNotFoundError`` naming the
        file when it does not exist)."""
        self.scene = load_scene(name_or_path, frames=frames, mesh_bv=self.bv)
        self.source_meshes = []
        self.reload = None
        self._scene_loaded()

    def load_built_scene(self, build) -> None:
        """A scene made by ``build(mesh_bv, frames)`` (robots, saved queries: see
        ``app.model.robot``); ``build`` is kept to rebuild it when the BV type changes."""
        self.scene = build(self.bv, None)
        self.source_meshes = []
        self.reload = build
        self._scene_loaded()

    def scene_ref(self) -> dict | None:
        """How to load the current scene again, JSON-serialisable: ``{"scene": name}`` (built
        in), ``{"file": path}`` (a scene file) or ``{"meshes": [paths]}`` (opened meshes).
        Its display name (``scene.name``) alone cannot do it: "user: a.stl" is no scene name."""
        s = self.scene
        if s is None:
            return None
        if self.source_meshes:
            return {"meshes": list(self.source_meshes)}
        builtin = s.source and os.path.dirname(os.path.abspath(s.source)) == os.path.abspath(SCENE_DIR)
        if builtin or not s.source:
            return {"scene": os.path.splitext(os.path.basename(s.source))[0] if s.source else s.name}
        return {"file": os.path.abspath(s.source)}

    def load_ref(self, ref: dict, frames: int | None = None) -> None:
        """Load what ``scene_ref()`` described (``ValueError`` for a malformed reference)."""
        if not isinstance(ref, dict) or len(ref) != 1:
            raise ValueError(f"not a scene reference: {ref!r}")
        (kind, value), = ref.items()
        if kind == "meshes" and isinstance(value, list) and value:
            self.load_meshes(value, frames or 1000)
        elif kind in ("scene", "file") and isinstance(value, str) and value:
            self.load_scene(value, frames)
        else:
            raise ValueError(f"not a scene reference: {ref!r}")

    def adopt(self, other: Session) -> None:
        """Show the scene another, private Session loaded (one with no listeners, e.g. on a
        worker thread while the window shows progress)."""
        if other.scene is None:
            raise ValueError("no scene loaded")
        self.scene = other.scene
        self.source_meshes = list(other.source_meshes)
        self._scene_loaded()

    def load_meshes(self, paths, frames: int = 1000) -> None:
        """A rigid scene from the user's mesh files (one file: the mesh against itself;
        two: A against B), under random placements like the rigid scenes."""
        paths = [os.fspath(p) for p in paths]
        self.install_mesh_scene(self.prepare_meshes(paths, frames), paths)

    def prepare_meshes(self, paths, frames: int = 1000, progress=None, cancelled=None):
        """The slow part of ``load_meshes`` (reading the files, building the hierarchies),
        touching no session state, so it can run on a worker thread: returns the scene for
        ``install_mesh_scene``. ``progress(step, steps, text)`` is called before each step;
        ``cancelled()`` is polled between steps (``LoadCancelled`` is raised if true)."""
        paths = [os.fspath(p) for p in paths]
        if not 1 <= len(paths) <= 2:
            raise ValueError("open one mesh (collided with itself) or two meshes (A and B)")
        steps = len(paths) + 1

        def step(k, text):
            if cancelled is not None and cancelled():
                raise LoadCancelled(text)
            if progress is not None:
                progress(k, steps, text)
        meshes = []
        for k, p in enumerate(paths):
            step(k, f"reading {os.path.basename(p)}")
            meshes.append(load_mesh(p))
        a, b = meshes[0], meshes[-1]
        step(len(paths), f"building the {self.bv} hierarchies ({a.n_faces + b.n_faces:,} triangles)")
        size = float(max(np.ptp(a.vertices, axis=0).max(), np.ptp(b.vertices, axis=0).max()))
        scene = rigid_scene(a, b, frames=frames, cube_size=1.2 * size, name="user: " + " vs ".join(
            os.path.basename(p) for p in paths), mesh_bv=self.bv)
        step(steps, "done")
        return scene

    def install_mesh_scene(self, scene, paths) -> None:
        """Show a scene made by ``prepare_meshes`` (on the GUI thread)."""
        self.scene = scene
        self.source_meshes = [os.fspath(p) for p in paths]
        self.reload = None
        self._scene_loaded()

    def _scene_loaded(self):
        self.selected_pair = 0
        self.history.clear()
        self._heat.clear()
        self._poses = {}
        self.frame = 0
        self.playing = False
        # nothing of the previous scene may be seen by a listener of scene_changed (a robot
        # panel pairing the new scene's pairs with the old result raised IndexError)
        self.result = self.record = self.view = None
        self.trees, self.states, self.traversals = [], [], []
        self.scene_id += 1
        self._make_runner()
        self.scene_changed.emit()
        self.goto(0)

    def _make_runner(self):
        broad = self.test if self.test in BODY_TESTS else "sat15"
        self.runner = SceneRunner(self.scene, self.method, broad, self.deform, exact_test=self.exact_test,
                                  realign=self.kdop_realign)
        if self.compare is not None:
            self.compare.rebuild(self)

    @property
    def exact_test(self) -> str:
        tests = BV_TYPES[self.bv].tests
        return self.test if self.test in tests else tests[0]

    @property
    def kdop_realign(self) -> str | None:
        """The realignment method when the mesh hierarchies are k-DOPs, else None."""
        return self.realign if self.bv.startswith("kdop") else None

    @property
    def tests(self) -> tuple:
        """Overlap tests valid for the current BV type."""
        return BV_TYPES[self.bv].tests

    # ---- settings -----------------------------------------------------------------
    @property
    def bv(self) -> str:
        return self._bv

    @bv.setter
    def bv(self, bv: str) -> None:
        """The BV type of the next scene load; the overlap test follows it (a k-DOP runs
        ``slab``: keeping ``sat15`` would mislabel recordings)."""
        if bv not in BV_TYPES:
            raise ValueError(f"unknown BV type {bv!r}")
        self._bv = bv
        if self.test not in self.tests:
            self.test = self.tests[0]

    def set_bv(self, bv: str) -> None:
        if bv not in BV_TYPES:
            raise ValueError(f"unknown BV type {bv!r}")
        if bv == self.bv:
            return
        self.bv = bv
        if self.scene is not None:
            name = self.scene.source or None
            frame = self.frame
            if self.source_meshes:
                self.load_meshes(self.source_meshes, self.scene.frames)
            elif self.reload is not None:
                build, frames = self.reload, self.scene.frames
                self.scene = build(self.bv, frames)
                self.reload = build
                self._scene_loaded()
            elif name:
                self.load_scene(name, frames=self.scene.frames)
            self.goto(min(frame, self.scene.frames - 1))
        self.settings_changed.emit()

    def set_method(self, method: str) -> None:
        if method not in UPDATE_METHODS:
            raise ValueError(f"unknown update method {method!r}")
        self.method = method
        self._settings_applied()

    def set_test(self, test: str) -> None:
        if test not in self.tests:
            raise ValueError(f"test {test!r} is not available for {self.bv}; choose one of {self.tests}")
        self.test = test
        self._settings_applied()

    def set_realign(self, method: str) -> None:
        from cdcore.realign import METHODS
        if method not in METHODS:
            raise ValueError(f"unknown realignment {method!r}; choose one of {METHODS}")
        self.realign = method
        self._settings_applied()

    def set_deform(self, mode: str) -> None:
        if mode not in ("refit", "rebuild"):
            raise ValueError(f"unknown deform mode {mode!r}")
        self.deform = mode
        self._settings_applied()

    def _settings_applied(self):
        if self.scene is not None:
            self._make_runner()
            self.goto(self.frame)
        self.settings_changed.emit()

    def select_pair(self, index: int) -> None:
        if self.scene is None or not 0 <= index < len(self.scene.pairs):
            raise ValueError(f"no body pair {index}")
        self.selected_pair = index
        self.settings_changed.emit()

    # ---- frames ---------------------------------------------------------------------
    @property
    def n_frames(self) -> int:
        return self.scene.frames if self.scene is not None else 0

    def goto(self, frame: int) -> FrameRecord:
        """Compute ``frame`` (clamped to the scene) and announce its ``FrameView``."""
        if self.scene is None:
            raise ValueError("no scene loaded")
        from .compile_watch import compile_count
        frame = int(min(max(frame, 0), self.scene.frames - 1))
        compiles = compile_count()
        t0 = time.perf_counter()
        res = self.runner.step(frame)
        t1 = time.perf_counter()
        self.frame = frame
        self.result = res
        self._poses = {}  # this frame's link poses per body (FramePoses copies them per lookup)
        stats = CollisionStats(bv_tests=res.bv_tests, prim_tests=res.prim_tests,
                               false_alarms=sum(p.exact.false_alarms for p in res.pairs))
        self.record = FrameRecord(frame, res.t_update, res.t_test, res.t_query, res.t_total, stats, res.n_exact,
                                  res.n_false, res.contacts, t_engine=t1 - t0,
                                  warm=compile_count() == compiles)
        if self.compare is not None:
            self.compare.step(frame)
        if self.visuals and self.wants.get("trace", True):
            self._compute_visuals()
        else:
            self.trees, self.states, self.traversals = [], [], []
        self.view = self._make_view()
        self.record.t_model = time.perf_counter() - t1
        self.frame_changed.emit(self.view)
        if not self.deferred_commit:
            self.commit(0.0)
        return self.record

    def _make_view(self) -> FrameView:
        s, f = self.scene, self.frame
        heat = None
        if self.wants.get("heat") and self.trees:
            heat = tuple(self.heat(i) for i in range(len(self.trees)))
        contact_links: dict = {}
        for (i, j), pr in zip(s.pairs, self.result.pairs):
            for li, lj in pr.contacts.tolist():
                contact_links.setdefault(i, set()).add(li)
                contact_links.setdefault(j, set()).add(lj)
        return FrameView(
            frame=f, n_frames=s.frames, scene_name=s.name, scene_id=self.scene_id, record=self.record,
            result=self.result, link_poses=tuple(self.frame_poses(i) for i in range(len(s.bodies))),
            vertices=tuple(sb.body.bvhs[0].mesh.vertices if sb.deforming else None for sb in s.bodies),
            trees=tuple(self.trees), states=tuple(self.states), heat=heat, heat_frames=len(self._heat),
            traversals=tuple(self.traversals), contact_links={k: sorted(v) for k, v in contact_links.items()},
            selected_pair=self.selected_pair, playing=self.playing,
            settings={"bv": self.bv, "method": self.method, "test": self.test, "exact_test": self.exact_test,
                      "realign": self.kdop_realign},
            contacts=self.frame_contacts() if self.wants.get("contacts") else None)

    def frame_contacts(self):
        """The current frame's contact geometry (``app.model.contacts``)."""
        from .contacts import frame_contacts
        return frame_contacts(self.scene, self.result, self.frame, test=self.exact_test, realign=self.kdop_realign)

    def step(self, delta: int = 1) -> FrameRecord:
        return self.goto(self.frame + delta)

    def tick(self) -> FrameRecord | None:
        """One tick of playback: advance by ``speed`` frames, wrapping at the end."""
        if self.scene is None or not self.playing:
            return None
        nxt = self.frame + self.speed
        return self.goto(nxt if nxt < self.scene.frames else 0)

    def set_playing(self, playing: bool) -> None:
        self.playing = bool(playing)
        self.reset_fps_clock()
        self.settings_changed.emit()

    def reset_fps_clock(self) -> None:
        """The next committed frame starts a new fps measurement (it gets no fps itself)."""
        self._last_commit = None

    def commit(self, t_render: float, t_draw: float = 0.0) -> None:
        """The current frame has been drawn: ``t_render`` s in the 3-D view's render (the
        last one), ``t_draw`` s updating its actors. History, fps, the frame-time breakdown
        and recording."""
        rec = self.record
        if rec is None:
            return
        now = time.perf_counter()
        rec.t_render = t_render
        rec.t_draw = t_draw
        # fps is the playback loop's rate: only between two frames committed while playing
        # (a step, a scrub or the first frame after a pause measures the user, not the loop)
        rec.fps = 0.0
        if self.playing:
            if self._last_commit is not None:
                dt = now - self._last_commit
                rec.fps = 1.0 / dt if dt > 0 else 0.0
                rec.t_frame = dt
                # the rest of the period: Qt's event processing, widget updates and painting
                rec.t_qt = max(dt - rec.t_engine - rec.t_model - rec.t_draw - rec.t_render, 0.0)
            self._last_commit = now
        else:
            self._last_commit = None
        self.history.append(rec)
        if self.recorder is not None:
            try:
                self.recorder.write(self.csv_row(rec))
            except RecorderError as exc:
                # the recorder has stopped itself (complete rows kept, sidecar written):
                # announce it once, the frame loop carries on without recording
                self.recorder = None
                self.record_error = str(exc)
                self.recording_changed.emit(False)
                self.recording_failed.emit(self.record_error)

    def warm_history(self) -> list:
        """The recorded frames that paid no kernel compile (what plots and totals use)."""
        return [r for r in self.history if r.warm]

    def csv_row(self, rec: FrameRecord) -> dict:
        """One recording row (``recorder.COLUMNS``): times in µs like the window shows them."""
        s = self.scene
        pairs = " ".join(f"{s.bodies[i].name}/{s.bodies[j].name}" for i, j in s.pairs)
        us = 1e6
        row = {"frame": rec.frame, "scene": s.name, "body_pairs": pairs, "bv": self.bv,
               "update_method": self.method, "test": self.test, "bv_tests": rec.bv_tests,
               "prim_tests": rec.prim_tests, "n_exact": rec.n_exact, "n_false": rec.n_false,
               "contacts": rec.contacts, "warm": int(rec.warm),
               "fps": rec.fps if rec.fps > 0 else ""}  # empty: not measured (first frame, paused)
        for key in ("t_update", "t_test", "t_query", "t_total", "t_engine", "t_model", "t_draw", "t_render"):
            row[key + "_us"] = getattr(rec, key) * us
        for key in ("t_qt", "t_frame"):  # only measured between two frames of playback
            row[key + "_us"] = getattr(rec, key) * us if rec.t_frame > 0 else ""
        return row

    # ---- recording ------------------------------------------------------------------
    def start_recording(self, path: str) -> None:
        if self.scene is None:
            raise ValueError("load a scene before recording")
        self.stop_recording()
        self.recorder = Recorder(path, self.settings())
        self.record_error = None
        self.recording_changed.emit(True)

    def stop_recording(self, reason: str | None = None) -> str | None:
        """Close the recording (``reason``: why it stopped early, kept in the sidecar)."""
        if self.recorder is None:
            return None
        sidecar = self.recorder.close(reason)
        self.recorder = None
        self.recording_changed.emit(False)
        return sidecar

    def settings(self) -> dict:
        s = self.scene
        return {"scene": s.name if s else None, "scene_file": s.source if s else None,
                "scene_spec": s.spec if s else None, "meshes": self.source_meshes, "frames": self.n_frames,
                "bv": self.bv, "update_method": self.method, "test": self.test, "exact_test": self.exact_test,
                "deform": self.deform, "realign": self.kdop_realign, "speed": self.speed}

    # ---- trees, states and traversals --------------------------------------------------
    def _compute_visuals(self):
        s = self.scene
        self.trees = []
        for i, sb in enumerate(s.bodies):
            h = self.runner.hierarchies[i]
            if sb.body.n_links > 1:
                self.trees.append(Tree(i, "articulation", "aabb" if h.kind == L.KIND_AABB else "obb",
                                       h.nodes_f, h.tree.nodes_i, h.tree.depth, np.eye(4)))
            else:
                self.trees.append(self.link_tree(i, 0))
        self.states = [np.full(t.n_nodes, NOT_VISITED, dtype=np.int8) for t in self.trees]
        # the heat map's raw material: per body, the tree size and the node arrays this frame
        # tested (references into the traces); counted only when heat is shown (``heat``):
        # counting every frame cost ~0.7 ms (np.add.at) on a robot scene nobody looked at
        heat = [(t.n_nodes, []) for t in self.trees]
        self.traversals = []
        broad_test = self.runner.test
        for k, (i, j) in enumerate(s.pairs):
            multi = s.bodies[i].body.n_links > 1 or s.bodies[j].body.n_links > 1
            if multi:
                r = collide_bodies(self.runner.hierarchies[i], self.runner.hierarchies[j], broad_test, trace=True,
                                   exact_test=self.exact_test, realign=self.kdop_realign)
                trav = Traversal(f"{s.bodies[i].name} / {s.bodies[j].name}", r.trace, self._body_tree(i),
                                 self._body_tree(j), broad_test, r.broad.bv_tests)
                if s.bodies[i].body.n_links > 1:
                    apply_trace_states(self.states[i], None, r.trace)
                    heat[i][1].append(r.trace.node_a)
                if s.bodies[j].body.n_links > 1:
                    apply_trace_states(None, self.states[j], r.trace)
                    heat[j][1].append(r.trace.node_b)
                # single-link sides: colour their mesh trees from the exact queries
                for li, lj in r.link_pairs.tolist():
                    if s.bodies[i].body.n_links == 1 or s.bodies[j].body.n_links == 1:
                        t = self.link_traversal(i, li, j, lj)
                        if s.bodies[i].body.n_links == 1:
                            apply_trace_states(self.states[i], None, t.trace)
                            heat[i][1].append(t.trace.node_a)
                        if s.bodies[j].body.n_links == 1:
                            apply_trace_states(None, self.states[j], t.trace)
                            heat[j][1].append(t.trace.node_b)
            else:
                trav = self.link_traversal(i, 0, j, 0)
                apply_trace_states(self.states[i], self.states[j], trav.trace)
                heat[i][1].append(trav.trace.node_a)
                heat[j][1].append(trav.trace.node_b)
            self.traversals.append(trav)
        self._heat.append(heat)

    def _body_tree(self, i: int) -> Tree:
        """The articulation-level tree of body i (world frame)."""
        h = self.runner.hierarchies[i]
        return Tree(i, "articulation", "aabb" if h.kind == L.KIND_AABB else "obb", h.nodes_f.copy(),
                    h.tree.nodes_i, h.tree.depth, np.eye(4))

    def link_tree(self, body: int, link: int) -> Tree:
        """The mesh hierarchy of one link, posed at the current frame."""
        sb = self.scene.bodies[body]
        bvh = sb.body.bvhs[link]
        return Tree(body, "mesh", family_of(bvh.bv), bvh.nodes_f, bvh.nodes_i, bvh.depth,
                    self.frame_poses(body)[link], link, bvh, getattr(bvh, "kdop", None))

    def frame_poses(self, body: int) -> np.ndarray:
        """(L, 4, 4) link poses of ``body`` at the current frame, looked up once per frame
        (a traced re-run asks for them twice per link pair). Shared by every caller of this
        frame: never write into it. (Not flagged read-only: numba types a read-only array
        apart, and the kernels took a slower dispatch: +11 M instructions a frame.)"""
        key = (self.frame, body)
        got = self._poses.get(key)
        if got is None:
            got = np.asarray(self.scene.bodies[body].link_poses[self.frame])
            self._poses = {k: v for k, v in self._poses.items() if k[0] == self.frame}
            self._poses[key] = got
        return got

    def link_traversal(self, i: int, li: int, j: int, lj: int) -> Traversal:
        """The mesh-level traversal of an exact query (first contact, as the runner does)."""
        sa, sb = self.scene.bodies[i], self.scene.bodies[j]
        ta, tb = self.link_tree(i, li), self.link_tree(j, lj)
        r = collide(sa.body.bvhs[li], ta.pose, sb.body.bvhs[lj], tb.pose, test=self.exact_test,
                    contacts="first", trace=True, realign=self.kdop_realign)
        name_a = sa.body.links[li].name if sa.body.n_links > 1 else sa.name
        name_b = sb.body.links[lj].name if sb.body.n_links > 1 else sb.name
        return Traversal(f"{name_a} / {name_b} (triangles)", r.trace, ta, tb, self.exact_test, r.stats.bv_tests,
                         (li, lj), self.kdop_realign)

    def stepper(self, drill: tuple | None = None) -> Stepper | None:
        """A stepper over the selected pair's traversal, or (``drill`` = (link_a, link_b))
        over the mesh-level exact query of one link pair of it."""
        if not self.traversals:
            return None
        if drill is None:
            return Stepper(self.traversals[self.selected_pair])
        i, j = self.scene.pairs[self.selected_pair]
        return Stepper(self.link_traversal(i, drill[0], j, drill[1]))

    def set_heat_frames(self, n: int) -> None:
        """Count node tests over the last ``n`` frames for the heat map."""
        if n < 1:
            raise ValueError("heat frames must be >= 1")
        self.heat_frames = int(n)
        self._heat = deque(self._heat, maxlen=self.heat_frames)

    def heat(self, body: int) -> np.ndarray:
        """How often each node of body's tree was tested over the last ``heat_frames``."""
        n = self.trees[body].n_nodes
        nodes = [a for h in self._heat if len(h) > body and h[body][0] == n for a in h[body][1] if len(a)]
        if not nodes:
            return np.zeros(n, np.int32)
        return np.bincount(np.concatenate(nodes), minlength=n).astype(np.int32)  # (np.add.at: ~10x slower)
