"""The 3-D view as a *native* child window that VTK draws into itself.

Why not pyvistaqt's ``QtInteractor``: since pyvistaqt 0.13 it is a ``QOpenGLWidget``.
A window holding a ``QOpenGLWidget`` is composed by Qt through OpenGL on *every* update
of *any* widget in it: the whole backing store is uploaded as a texture, drawn with the
GL widget's texture and swapped — under software GL (Xvfb, llvmpipe, remote desktops) a
1600x1000 window costs 60–110 ms per frame that way, 3–5x the 3-D render itself. Here
VTK renders into the widget's own X window (``vtkXOpenGLRenderWindow`` on the widget's
``winId``) and swaps it itself; the rest of the window stays a raster backing store of
which Qt flushes only the changed rectangles.

``NativePlotter`` is a pyvista ``BasePlotter`` (``add_mesh``, ``camera``, ``screenshot``
...) on VTK's own ``QVTKRenderWindowInteractor`` with its default ``QWidget`` base, as
pyvistaqt's ``QtInteractor`` was before 0.13 — the same API the app uses, with
``interactor`` being the widget. ``BVH_DEBUGGER_VIEW=fbo`` in the environment selects
pyvistaqt's widget instead (``make_plotter``).
"""
from __future__ import annotations

import contextlib
import os

from pyvista.plotting.plotter import BasePlotter
from pyvista.plotting.render_window_interactor import RenderWindowInteractor

VIEW_ENV = "BVH_DEBUGGER_VIEW"


def _qvtk_class():
    import vtkmodules.qt
    vtkmodules.qt.QVTKRWIBase = "QWidget"  # a native window VTK renders into (the default; pinned)
    from vtkmodules.qt.QVTKRenderWindowInteractor import QVTKRenderWindowInteractor
    return QVTKRenderWindowInteractor


_QVTK = _qvtk_class()


@contextlib.contextmanager
def _no_base_init():
    """PySide6 continues the cooperative ``__init__`` chain from ``QWidget.__init__`` into
    ``BasePlotter.__init__`` with no arguments; it is called explicitly afterwards."""
    orig = BasePlotter.__init__
    BasePlotter.__init__ = lambda *a, **k: None
    try:
        yield
    finally:
        BasePlotter.__init__ = orig


class NativePlotter(_QVTK, BasePlotter):
    """A pyvista plotter living in a native Qt child window (see the module docstring).
    It never renders by itself: ``update()`` schedules a paint, whose handler renders and
    swaps; ``render()`` renders now."""

    def __init__(self, parent=None, multi_samples: int = 0):
        with _no_base_init():
            _QVTK.__init__(self, parent=parent)
        BasePlotter.__init__(self)
        self.interactor = self
        self.ren_win = self.GetRenderWindow()
        self.ren_win.SetMultiSamples(int(multi_samples))
        for renderer in self.renderers:
            renderer.view_isometric()
            self.ren_win.AddRenderer(renderer)
        self._off_screen = False
        self.iren = RenderWindowInteractor(self, interactor=self.ren_win.GetInteractor())
        self.iren.interactor.RemoveObservers("MouseMoveEvent")  # pyvista's own hover handling
        self.iren.initialize()
        self.enable_trackball_style()
        self._observers = {}
        self._first_time = False  # BasePlotter: a live window, rendering is allowed
        self._closed = False

    def render(self) -> None:
        """Render the view now (the widget's paint handler does the same)."""
        if self._closed or not self.isVisible():
            return
        self._rendered = True
        BasePlotter.render(self)

    def add_actor(self, *args, **kwargs):
        """pyvista renders after adding an actor (``render=True``): a full synchronous render
        (tens of ms under software GL) per actor added. The app renders once per frame, so
        adding never renders here."""
        kwargs["render"] = False
        return BasePlotter.add_actor(self, *args, **kwargs)

    def paintEvent(self, ev):
        if not self._closed:
            self._rendered = True
            self._Iren.Render()

    def close(self) -> None:
        """Finalize and *release* the VTK render window and interactor now: left to the
        interpreter's exit, their destructors talk to an X server that may be gone (a test
        session's Xvfb), and Xlib then exits the process with status 1."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        BasePlotter.close(self)
        _QVTK.close(self)
        self._Iren = _ClosedInteractor()
        self._RenderWindow = None
        for key in ("ren_win", "iren"):
            with contextlib.suppress(AttributeError):
                setattr(self, key, None)


class _ClosedInteractor:
    """Stands in for the VTK interactor after ``close``: Qt may still deliver an event
    (leave, resize) to the widget."""

    def __getattr__(self, _name):
        return lambda *a, **k: None


#: Qt platforms whose native child windows VTK can render into (X11, Win32, Cocoa); on
#: Wayland a window id is no X window, so the view falls back to pyvistaqt's widget
NATIVE_PLATFORMS = ("xcb", "windows", "cocoa")


def use_native(platform: str, choice: str = "") -> bool:
    """Whether the 3-D view is a ``NativePlotter`` on Qt platform ``platform`` given the
    ``BVH_DEBUGGER_VIEW`` value ``choice`` ("fbo": never, "native" or "": where it works)."""
    choice = choice.strip().lower()
    if choice == "fbo":
        return False
    return platform in NATIVE_PLATFORMS


def make_plotter(parent):
    """The 3-D view widget: ``NativePlotter`` where the platform allows it (X11, Windows,
    macOS) or, on other platforms (Wayland) and with ``BVH_DEBUGGER_VIEW=fbo``, pyvistaqt's
    ``QtInteractor`` (a ``QOpenGLWidget``: Qt composes the whole window via GL)."""
    from PySide6 import QtGui
    if not use_native(QtGui.QGuiApplication.platformName(), os.environ.get(VIEW_ENV, "")):
        from pyvistaqt import QtInteractor
        return QtInteractor(parent, multi_samples=0, auto_update=False)
    return NativePlotter(parent, multi_samples=0)
