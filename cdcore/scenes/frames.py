"""Link poses computed on demand: a scene's motion is a pure function of time, so its
frames are evaluated in chunks as they are asked for and only a few chunks are kept.
Memory is constant in the number of frames (a 10-million-frame scene costs what a
1,000-frame one does)."""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .spec import SceneError

CHUNK = 256      # frames evaluated at once (FK is vectorised over frames)
CACHED = 4       # chunks kept (least recently used dropped)
MAX_GATHER = 1 << 27  # floats a slice may materialise at once (1 GiB)


class FramePoses:
    """World poses of every link at every frame, shaped like an (F, L, 4, 4) array.

    ``poses[f]`` is the (L, 4, 4) poses at frame ``f``; slices, index arrays and tuples
    (``poses[:n, 0]``) gather the frames they name; ``np.asarray(poses)`` materialises all
    of them (small scenes and tests only). ``q_fn(frames, t)`` gives the joint angles and
    ``root_fn(frames, t)`` the root poses (``t = frames * dt``). Thread-safe: the cache
    is guarded by a lock; returned arrays are private copies.
    """

    def __init__(self, body, q_fn, root_fn, n_frames: int, dt: float, where: str = "scene"):
        self.body = body
        self.q_fn = q_fn
        self.root_fn = root_fn
        self.n_frames = int(n_frames)
        self.dt = float(dt)
        self.where = where
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def with_motion(self, q_fn=None, root_fn=None) -> "FramePoses":
        """The same body with another joint trajectory and/or root path."""
        return FramePoses(self.body, q_fn or self.q_fn, root_fn or self.root_fn, self.n_frames, self.dt,
                          self.where)

    # ---- array-like -----------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return (self.n_frames, self.body.n_links, 4, 4)

    ndim = 4
    dtype = np.dtype(np.float64)

    def __len__(self) -> int:
        return self.n_frames

    def __array__(self, dtype=None, copy=None):
        self._check_size(self.n_frames)
        out = self.compute(np.arange(self.n_frames))
        return out if dtype is None else out.astype(dtype)

    def __getitem__(self, key):
        rest = ()
        if isinstance(key, tuple):
            if key and key[0] is Ellipsis:
                return np.asarray(self)[key]
            key, rest = (key[0], key[1:]) if key else (slice(None), ())
        if isinstance(key, (int, np.integer)):
            f = int(key)
            if f < 0:
                f += self.n_frames
            if not 0 <= f < self.n_frames:
                raise IndexError(f"frame {key} out of range 0..{self.n_frames - 1}")
            out = self.frame(f)
        else:
            frames = self._frames(key)
            out = self.compute(frames)
            if frames.ndim == 0:
                out = out[0]
            else:
                rest = (slice(None),) + rest if rest else rest
        return out[rest] if rest else out

    def _frames(self, key) -> np.ndarray:
        """Frame ids named by a slice or an index array, without an array of all frames."""
        if isinstance(key, slice):
            r = range(self.n_frames)[key]
            self._check_size(len(r))
            return np.arange(r.start, r.stop, r.step, dtype=np.int64)
        idx = np.asarray(key)
        if idx.dtype == np.bool_:
            if idx.shape != (self.n_frames,):
                raise IndexError(f"boolean index of shape {idx.shape} for {self.n_frames} frames")
            return np.flatnonzero(idx)
        if idx.dtype.kind not in "iu":
            raise IndexError(f"frames: expected integers, slices or a boolean mask, got {idx.dtype}")
        frames = np.where(idx < 0, idx + self.n_frames, idx).astype(np.int64)
        if frames.size and (frames.min() < 0 or frames.max() >= self.n_frames):
            raise IndexError(f"frame index out of range 0..{self.n_frames - 1}")
        return frames

    def _check_size(self, n: int) -> None:
        size = n * self.body.n_links * 16
        if size > MAX_GATHER:
            raise MemoryError(f"{self.where}: {n:,} frames x {self.body.n_links} links of poses "
                              f"({size * 8 / 2**30:.1f} GiB) at once; ask for fewer frames")

    def invalidate(self, f: int) -> None:
        """Forget the cached chunk holding frame ``f`` (its motion data was edited: a robot's
        joint values from the joint panel); it is recomputed when next asked for."""
        with self._lock:
            self._cache.pop(int(f) // CHUNK, None)

    # ---- evaluation ---------------------------------------------------------------
    def frame(self, f: int) -> np.ndarray:
        """(L, 4, 4) poses at frame ``f`` (from the chunk cache)."""
        c = f // CHUNK
        with self._lock:
            block = self._cache.get(c)
            if block is not None:
                self._cache.move_to_end(c)
        if block is None:
            block = self.compute(np.arange(c * CHUNK, min((c + 1) * CHUNK, self.n_frames)))
            block.flags.writeable = False
            with self._lock:
                self._cache[c] = block
                while len(self._cache) > CACHED:
                    self._cache.popitem(last=False)
        return block[f - c * CHUNK].copy()

    def compute(self, frames) -> np.ndarray:
        """(n, L, 4, 4) poses at ``frames``, uncached; non-finite poses are a SceneError."""
        frames = np.asarray(frames, dtype=np.int64).reshape(-1)
        self._check_size(len(frames))
        t = frames * self.dt
        q = self.q_fn(frames, t)
        roots = self.root_fn(frames, t)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(roots))):
            bad = int(frames[np.flatnonzero(~(np.isfinite(q).all(axis=1) & np.isfinite(roots).all(axis=(1, 2))))[0]])
            raise SceneError(f"{self.where}: the motion gives non-finite poses at frame {bad}")
        return self.body.fk_frames(q, roots)
