"""Which frames paid a numba compile (or a load of a compiled kernel from the cache).

A first use of a kernel signature in a process costs 2-40 ms against frame medians of
0.1-0.3 ms: a frame that included one measures the compiler, not the query. numba takes
its global compiler lock for every compile and every cache load (never on the fast path
of a call), and announces it as the ``numba:compiler_lock`` event: counting those events
tells a frame that compiled from one that did not. The count is process-wide and only
grows, so two threads may at worst mark each other's frame cold (excluded, never a false
"warm")."""
from __future__ import annotations

import itertools
import threading

_lock = threading.Lock()
_count = itertools.count()
_seen = [0]
_installed = [False]


def _install() -> None:
    from numba.core import event

    class _Counter(event.Listener):
        def on_start(self, ev):
            _seen[0] = next(_count) + 1

        def on_end(self, ev):
            pass

    event.register("numba:compiler_lock", _Counter())


def compile_count() -> int:
    """Compiles and cache loads so far in this process (monotonic)."""
    if not _installed[0]:
        with _lock:
            if not _installed[0]:
                _install()
                _installed[0] = True
    return _seen[0]
