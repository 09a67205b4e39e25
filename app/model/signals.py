"""A minimal Qt-free signal: the model layer announces changes without importing Qt;
the widgets connect Qt slots to it (thin bindings)."""
from __future__ import annotations

import weakref


class Signal:
    """``connect(fn)``, ``disconnect(fn)``, ``emit(*args)``. Bound methods are held weakly,
    so a closed widget never keeps the model calling into it."""

    def __init__(self):
        self._slots: list = []

    def connect(self, fn) -> None:
        ref = weakref.WeakMethod(fn) if hasattr(fn, "__self__") else (lambda f=fn: f)
        self._slots.append(ref)

    def disconnect(self, fn) -> None:
        self._slots = [r for r in self._slots if r() is not None and r() != fn]

    def emit(self, *args) -> None:
        dead = False
        for ref in list(self._slots):  # a slot may connect or disconnect while we emit
            fn = ref()
            if fn is None:
                dead = True
                continue
            fn(*args)
        if dead:
            self._slots = [r for r in self._slots if r() is not None]
