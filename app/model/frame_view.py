"""The one thing that travels from the model to the views: an immutable snapshot of one
computed frame (``FrameView``), emitted by ``Session.frame_changed``.

The frame path is one-way: timeline → ``Session.goto`` → ``FrameView`` → the render
module (``app.render.scene_view``) and the docks. Nothing downstream writes back into the
model except through ``Session``'s public setters, and nothing reads its private state.

Arrays inside a view are read-only (``setflags(write=False)``): a view that tried to
modify one would raise instead of silently changing what the next frame starts from.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cdcore.collide import CollisionStats


@dataclass
class FrameRecord:
    """One computed frame for the plots, the counters and the recorder (times in s).

    ``stats`` holds the frame's counters as the engine's ``CollisionStats`` (summed over
    the scene's pairs, broad and exact phases): the one counters type shared by the app,
    the recorder and the bench. ``n_exact`` / ``n_false``: link pairs sent to an exact
    query / of those, pairs with no contact (the paper's #exact and #false); ``contacts``
    link pairs in contact. The frame-time breakdown: ``t_engine`` (the collision
    loop: update + test + query with the runner's own bookkeeping), ``t_model`` (the
    app's model work after it: traces for the views, the snapshot), ``t_render`` (the
    3-D view's VTK render), ``t_qt`` (the rest of the loop: widgets, Qt's event
    processing and painting) -- their sum is the frame's wall time when playing.
    ``warm=False`` marks a frame that paid a first-use kernel compile: excluded from plots
    and totals."""
    frame: int
    t_update: float
    t_test: float
    t_query: float
    t_total: float
    stats: CollisionStats
    n_exact: int
    n_false: int
    contacts: int
    t_engine: float = 0.0
    t_model: float = 0.0
    t_render: float = 0.0
    t_draw: float = 0.0   # updating the render module's actors (numpy -> VTK)
    t_qt: float = 0.0
    t_frame: float = 0.0  # wall time since the previous committed frame while playing
    fps: float = 0.0
    warm: bool = True

    @property
    def bv_tests(self) -> int:
        return self.stats.bv_tests

    @property
    def prim_tests(self) -> int:
        return self.stats.prim_tests

    @property
    def t_app(self) -> float:
        """The app's own work per frame: the frame minus the 3-D render."""
        return max(self.t_frame - self.t_render, 0.0) if self.t_frame > 0 else self.t_engine + self.t_model + \
            self.t_draw + self.t_qt


def _frozen(a):
    if isinstance(a, np.ndarray) and a.flags.writeable:
        a = a.view()
        a.setflags(write=False)
    return a


@dataclass(frozen=True)
class FrameView:
    """Everything a view needs to draw one frame. Built by ``Session`` once per frame.

    Attributes
    ----------
    frame, n_frames : int
    scene_name : str
    scene_id : int
        Changes when another scene is loaded (a view rebuilds its actors then).
    record : FrameRecord
        Timings and counters of the frame.
    result : cdcore.scenes.runner.FrameResult
        The engine's per-pair results (contacts, histograms).
    link_poses : tuple of (n_links, 4, 4) float64
        Per body, its links' poses at this frame.
    vertices : tuple of (n, 3) float64 or None
        Per body, the deformed mesh vertices (None: rigid links).
    trees, states : tuple
        Per body, the tree drawn (``app.model.trees.Tree``) and its node states (int8).
        Empty when ``traced`` is False (nothing shown needed the traced re-run).
    heat : tuple of (n_nodes,) int or None
        Per body, node tests over the last ``heat_frames`` frames, when a view asked.
    traversals : tuple of Traversal
        Per scene pair, the traced traversal (empty when not traced).
    contact_links : dict
        {body index: sorted link indices in contact} over every pair.
    selected_pair : int
    settings : dict
        bv, method, test, exact_test, realign of the run.
    playing : bool
    contacts : app.model.contacts.FrameContacts or None
        Contact geometry of every triangle pair in contact, when a view asked
        (``session.wants["contacts"]``).
    """
    frame: int
    n_frames: int
    scene_name: str
    scene_id: int
    record: FrameRecord
    result: object
    link_poses: tuple
    vertices: tuple
    trees: tuple = ()
    states: tuple = ()
    heat: tuple | None = None
    heat_frames: int = 0
    traversals: tuple = ()
    contact_links: dict = field(default_factory=dict)
    selected_pair: int = 0
    settings: dict = field(default_factory=dict)
    playing: bool = False
    contacts: object = None

    def __post_init__(self):
        for name in ("states", "link_poses"):
            object.__setattr__(self, name, tuple(_frozen(a) for a in getattr(self, name)))
        if self.heat is not None:
            object.__setattr__(self, "heat", tuple(_frozen(a) for a in self.heat))

    @property
    def traced(self) -> bool:
        return bool(self.trees)

    @property
    def heat_max(self) -> float:
        """The largest heat over every tree (one colour scale for all), 0 without heat."""
        if not self.heat:
            return 0.0
        return max((float(h.max()) for h in self.heat if h.size), default=0.0)
