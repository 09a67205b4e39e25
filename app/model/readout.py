"""Numbers the read-outs share (status bar, HUD, timing dock): one definition each, so
the window never shows two frame rates for the same moment."""
from __future__ import annotations

import itertools

FPS_FRAMES = 10  # the frame rate shown: the mean over the last frames of playback


def fps_readout(history, frames: int = FPS_FRAMES) -> float:
    """Mean frame rate over the last ``frames`` played frames that measured one (0: none)."""
    n = len(history)
    rows = itertools.islice(history, max(0, n - frames), None)
    fps = [r.fps for r in rows if r.fps > 0]
    return sum(fps) / len(fps) if fps else 0.0
