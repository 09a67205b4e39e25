"""Qt-free model of the debugger: state, signals, recording, stepping (never imports Qt
or pyvista)."""
from .recorder import COLUMNS, Recorder, RecorderError
from .frame_view import FrameRecord, FrameView
from .session import Session
from .signals import Signal
from .stepper import Step, Stepper
from .trees import STATE_NAMES, Traversal, Tree

__all__ = ["COLUMNS", "Recorder", "RecorderError", "FrameRecord", "FrameView", "Session", "Signal", "Step", "Stepper",
           "STATE_NAMES", "Traversal", "Tree"]
