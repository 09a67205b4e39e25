"""The generalized front cache: frame-to-frame reuse of a pair's traversal (Ehmann & Lin 2001,
section 5; Fünzig & Fellner 2003, section 2), with temporal coherence certificates (a separated
front pair is not re-tested while a bound on the motion since its test cannot have closed its
gap). See ``cdcore._front`` for the scheme and the bounds."""
from __future__ import annotations

import threading
import time

import numpy as np

from . import _front as K
from . import _layout as L
from ._core import STATUS, make_plan
from ._cycles import seconds_per_cycle
from ._front import FRONT_COLS, front_entry, front_kdop_entry, max_displacement, parents
from ._kdop_traverse import kdop_query_arrays
from .bvh import BVH
from .collide import CollisionResult, _plan, _result, collide, pose_arg, raise_pose_status

_GROW, _BAD_POSE, _MORE = K.GROW, K.BAD_POSE, K.MORE
_BLK0 = K.B_FIXED + 256  # a new cache's scratch block (int64 slots; grown on demand)
PROBE_EVERY = 64  # frames between two traversals from the root (``FrontCache._collide``)
_PLANS: dict = {}  # (kind, test, program, method) -> the two plans (never written: shared by every cache)


def _front_plans(kind, test, program, method) -> np.ndarray:
    """(2, PLAN_LEN): all contacts with the trace on (the trace rows that stop the descent are the
    next front), then without the trace (the plain traversal of an incoherent frame,
    ``_front.JUMP_REL``). One array per configuration, shared, so that it stays in the cache
    while many pairs are queried."""
    key = (kind, test, program, method)
    plans = _PLANS.get(key)
    if plans is None:
        plans = _PLANS[key] = np.stack([make_plan(kind, test, program, method, first=False, trace=trace)
                                        for trace in (True, False)])
    return plans


class FrontCache:
    """All-contacts collision of one pair of hierarchies over the frames of a motion, each frame
    starting from the node pairs where the previous one stopped (the front), and skipping the
    front pairs whose separation is still certified (``cdcore._front``: a margin from their
    last test minus a bound on the relative motion since).

    Parameters
    ----------
    bvh_a, bvh_b : BVH
        Hierarchies of the same bounding-volume type (refit them freely between frames: the
        front keeps its node pairs and the certificates account for the vertices' moves, which
        the cache reads from the meshes; a rebuild resets it).
    test, realign : str, optional
        As for ``cdcore.collide``.
    enabled : bool
        False: every frame is a full traversal from the root (the same answers, for comparing).
    certificates : bool
        False: every front pair is tested every frame (the front alone, for comparing).

    Incoherent motion (random placements) makes any front a loss: a frame whose motion bound
    since the last call exceeds ``_front.JUMP_REL`` of the larger root ball is a traversal from
    the root (``_front``), so such a motion costs what full traversals cost. The cache keeps
    the node tests of its last frame started from the root (``ref``); every ``PROBE_EVERY``
    frames, or when a frame kept every row of a front grown past twice that, the next frame
    starts from the root again (a front kept deep after the bodies moved apart costs a look
    per row each frame).
    A front frame's tests are not compared with ``ref``: an old ``ref`` measured the bodies
    apart, and a front near contact needed more tests than that while still saving half of a
    full traversal's (chains-6to1: 0.46x node tests without that back-off, 0.51x with it).

    ``collide(pose_a, pose_b)`` returns the ``CollisionResult`` that ``collide(..., contacts="all")``
    would (the same pairs); its ``stats.bv_tests`` counts the node tests this frame did, including
    those of pull-up attempts, and not the front pairs kept by their certificates: those are
    ``last_skipped`` (and summed in ``skipped_total``). ``t_total`` is the time inside the
    compiled call, as for ``collide``, plus the time measuring a refitted mesh's vertex moves.
    State is per object (a lock serialises calls on one object; use one ``FrontCache`` per pair
    and thread). Per-axis scaled poses are not supported (``ValueError``).
    """

    def __init__(self, bvh_a: BVH, bvh_b: BVH, test: str | None = None, realign: str | None = None,
                 enabled: bool = True, certificates: bool = True):
        self._plan = _plan(bvh_a, bvh_b, test, realign)  # validates
        p = self._plan
        # all contacts, trace on: the trace rows that stop the descent are the next front
        self._kplan = _front_plans(p.kind, p.test, p.program, p.method)
        self.bvh_a, self.bvh_b = bvh_a, bvh_b
        self.test, self.realign = test, realign
        self.enabled = bool(enabled)
        # the motion bound's factor (``_front.seed_pass``): 1.0; negative: no certificates.
        # Tests set 0.0 to show that an unsound bound gives wrong answers they catch.
        self._mscale = 1.0 if certificates else -1.0
        self._lock = threading.Lock()
        self._topology = None
        self._ring = np.zeros((K.RING, K.RING_COLS))
        self._meta = np.zeros(K.META_LEN, dtype=np.int64)
        self._fr = np.zeros((2, 16, FRONT_COLS), dtype=np.int32)
        self._mg = np.zeros((2, 16, K.MG_COLS))
        # the calls' scratch block (``_front.front_entry``), reused: made larger when a call
        # asks for it
        self._blk = np.zeros(_BLK0, dtype=np.int64)
        self._call = 0
        self._spc = seconds_per_cycle()
        self.skipped_total = 0
        self.last_skipped = 0
        self._side = 0
        self._n = 1
        self._reset()

    def reset(self) -> None:
        """Forget the front: the next frame traverses from the root pair. Safe while another
        thread is in ``collide`` (it waits for that frame: a reset in the middle of one
        made the frame see the root pair and the old front, every contact twice)."""
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        self._fr[self._side, 0] = 0  # the root pair (0, 0), state zero
        self._fr[self._side, 0, K.ST_REF] = -1  # no certificate
        self._mg[self._side, 0, K.MG_M] = K.NO_MARGIN
        self._n = 1
        self._ref = None  # node tests of the last frame started from the root
        self._skip = 0  # frames still to start from the root
        self._since_root = 0  # frames since the last one from the root

    @property
    def _front(self) -> np.ndarray:
        """The front's rows (k, FRONT_COLS) int32 (a copy)."""
        with self._lock:
            return self._fr[self._side, :self._n].copy()

    @property
    def front(self) -> np.ndarray:
        """(k, 2) int32: the node pairs (of A, of B) where the last frame's traversal stopped
        (read under the cache's lock, as every reader below: a frame running on another
        thread swaps the front's slots at its end)."""
        with self._lock:
            return self._fr[self._side, :self._n, :2].copy()

    @property
    def front_size(self) -> int:
        return int(self._n)

    @property
    def certified(self) -> int:
        """Front pairs holding a separation certificate (skipped next frame unless the motion
        bound has used it up)."""
        with self._lock:
            return int(np.count_nonzero(self._fr[self._side, :self._n, K.ST_REF] >= 0))

    def _check_topology(self):
        a, b = self.bvh_a, self.bvh_b
        key = (a._I, b._I)
        if self._topology is None or self._topology[0] is not key[0] or self._topology[1] is not key[1]:
            self._topology = key
            self._par = np.concatenate([parents(a._ni), parents(b._ni)])
            self._meshes = (a.mesh, b.mesh)
            self._reset()

    def _deformation(self):
        """(D_A, D_B, seconds): the largest vertex moves of the two meshes since the last frame
        (0.0 when a mesh is the same object: a ``Mesh`` is immutable and every refit makes a new
        one) and the time measuring them took (part of the frame's ``t_total``: a full
        traversal does not need it)."""
        (ma, mb), a, b = self._meshes, self.bvh_a.mesh, self.bvh_b.mesh
        if a is ma and b is mb:
            return 0.0, 0.0, 0.0
        t0 = time.perf_counter()
        da = 0.0 if a is ma else float(max_displacement(ma.vertices, a.vertices))
        db = 0.0 if b is mb else float(max_displacement(mb.vertices, b.vertices))
        return da, db, time.perf_counter() - t0

    def _grow(self) -> None:
        """Twice the front's rows (``_front.GROW``)."""
        cap = 2 * self._fr.shape[1]
        fr = np.zeros((2, cap, FRONT_COLS), dtype=np.int32)
        mg = np.zeros((2, cap, K.MG_COLS))
        fr[:, :self._fr.shape[1]] = self._fr
        mg[:, :self._mg.shape[1]] = self._mg
        self._fr, self._mg = fr, mg

    def collide(self, pose_a, pose_b) -> CollisionResult:
        """All intersecting triangle pairs at this frame's poses (rigid (4, 4) float64, or None)."""
        if not self.enabled:
            return collide(self.bvh_a, pose_a, self.bvh_b, pose_b, test=self.test, contacts="all",
                           realign=self.realign)
        pa = pose_arg(pose_a, "pose_a")
        pb = pose_arg(pose_b, "pose_b")
        with self._lock:
            return self._collide(pa, pb)

    def _collide(self, pa, pb) -> CollisionResult:
        self._check_topology()
        a, b = self.bvh_a, self.bvh_b
        da, db, t_def = self._deformation()
        if self._skip > 0:
            self._skip -= 1
            self._reset()
        meta = self._meta
        kd = kdop_query_arrays(a, b, self._plan.method) if self._plan.kdop else None
        # (the call's index, input slot and front rows go as scalars, and the results come back
        # in ``meta``, read once: a numpy scalar read or write costs ~0.1 us)
        while True:
            if kd is not None:
                code = front_kdop_entry(a._F, a._I, b._F, b._I, pa, pb, self._kplan, self._par, self._fr, self._mg,
                                        self._ring, meta, self._blk, self._call, self._side, self._n, da, db,
                                        self._mscale, kd)
            else:
                code = front_entry(a._F, a._I, b._F, b._I, pa, pb, self._kplan, self._par, self._fr, self._mg,
                                   self._ring, meta, self._blk, self._call, self._side, self._n, da, db,
                                   self._mscale)
            if code == _GROW:
                self._grow()
            elif code == _MORE:
                self._blk = np.zeros(int(meta[K.M_NEED]) * 3 // 2, dtype=np.int64)
            else:
                break
        blk = self._blk
        if code == _BAD_POSE:
            raise_pose_status(int(blk[STATUS]))  # nothing was changed
        m = meta.tolist()
        self._meshes = (a.mesh, b.mesh)
        self._call += 1
        if not m[K.M_SAME]:
            self._side = 1 - self._side
        self._n = m[K.M_NOUT]
        self.last_skipped = m[K.M_SKIPPED]
        self.skipped_total += self.last_skipped
        counts = blk[:STATUS + 1].copy()
        n = m[K.M_NPAIRS]
        if n:
            o = m[K.M_OPAIRS]
            pairs = blk[o:o + n].view(np.int32).reshape(n, 2).copy()
        else:
            pairs = np.empty((0, 2), dtype=np.int32)
        if m[K.M_FROM_ROOT]:
            self._ref = counts.item(L.CNT_BV_TESTS)
            self._since_root = 0
        else:
            self._since_root += 1
            # Kept pairs cost no test but still a look each frame: a front that kept every row
            # and is much larger than a full traversal (the bodies have moved apart, or stopped
            # apart) is dropped. Every PROBE_EVERY frames one frame starts from the root to
            # measure that size again. (A front that tested rows is not dropped for its size:
            # near contact it grows past an old ``ref`` measured apart, and dropping it cost
            # chains-6to1 0.50x instead of 0.43x of a full traversal's node tests.)
            if self._since_root >= PROBE_EVERY or (m[K.M_SAME] and self._ref is not None
                                                   and self._n > 2 * self._ref + 16):
                self._skip = 1
        return _result(n > 0, pairs, counts, m[K.M_CYC] * self._spc + t_def)

    def front_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """(nodes of A, nodes of B) that appear in the front (unique, sorted): what the 3-D view
        highlights."""
        with self._lock:
            f = self._fr[self._side, :self._n].copy()
        return np.unique(f[:, 0]), np.unique(f[:, 1])


__all__ = ["FrontCache"]
