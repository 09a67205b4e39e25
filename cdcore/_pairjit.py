"""The decorator of the functions a traversal calls once per node pair or triangle pair.

Numba counts references of every array a compiled function receives: an atomic increment
on entry and a decrement on exit per array (~20 ns each on this machine), also when the
callee is inlined (the inlined arguments become new references). A per-pair helper taking a
dozen arrays spent more on that than on its arithmetic (60-70 % of a traversal, issue 15).
These helpers never allocate nor keep an array past their return, so they are compiled
without numba's runtime (``_nrt=False``): their caller owns every array for the whole call
and the callee's reference counting is pure overhead.

``_nrt`` is an undocumented numba option; ``tests/test_pair_calls.py`` fails when numba stops
honouring it. ``CDCORE_PAIR_NRT=1`` (set before ``cdcore`` is imported; use a separate
``NUMBA_CACHE_DIR``: the cache does not key on the option) compiles them with reference
counting, the plain path with identical answers.

Entry points (``entry_njit``, ``pair_njit(signature=...)``) are compiled for one explicit
signature, as ``njit(signature)`` does, but when first called (or ``load_kernel``-ed), not when
their module is imported: ``import cdcore.collide`` then costs no kernel load (~0.4 s of a warm
start, which the app spends after its window is on screen). The deferral replaces the
dispatcher's ``_compile_for_args`` (what numba's C dispatcher calls when no compiled signature
matches and compiling is allowed) on the instance: it compiles the declared signature and
disables further compiles, exactly what the eager decorator does at import.
``tests/test_pair_calls.py`` fails when numba stops honouring that; ``CDCORE_EAGER_ENTRIES=1``
compiles them at import, the plain path.
"""
from __future__ import annotations

import os
import threading

from numba import njit

NRT_FREE = os.environ.get("CDCORE_PAIR_NRT", "") != "1"
EAGER_ENTRIES = os.environ.get("CDCORE_EAGER_ENTRIES", "") == "1"


def pair_njit(fn=None, signature=None, **options):
    """``njit(cache=True, **options)``, without numba's runtime when ``NRT_FREE``; with
    ``signature``, an entry point compiled for it only (``entry_njit``: at its first call; other
    argument types raise ``TypeError`` instead of compiling again)."""
    opts = dict(options)
    if NRT_FREE:
        opts["_nrt"] = False
    if signature is not None:
        jit = entry_njit(signature, **opts)
    else:
        jit = njit(**dict({"cache": True}, **opts))
    if fn is None:
        return jit
    return jit(fn)


def entry_njit(signature, **options):
    """``njit(signature, cache=True, **options)`` compiled (or loaded from numba's cache) at
    the first call or ``load_kernel``, not at import (module docstring)."""
    opts = dict({"cache": True}, **options)
    if EAGER_ENTRIES:
        return njit(signature, **opts)

    def wrap(fn):
        return _defer(njit(**opts)(fn), signature)
    return wrap


def _defer(disp, signature):
    lock = threading.Lock()

    def load():
        with lock:  # two threads' first calls compile once (numba's own lock orders compiles)
            if disp._can_compile:
                from numba.core import typeinfer
                with typeinfer.register_dispatcher(disp):  # as numba's eager decorator does
                    disp.compile(signature)
                disp.disable_compile()

    def first_call(*args, **kws):
        # numba's C dispatcher calls what this returns with the arguments: the dispatcher
        # itself, which now matches the declared signature (with numba's conversions)
        load()
        return disp

    disp._compile_for_args = first_call
    disp.cdcore_load = load
    return disp


def load_kernel(disp) -> None:
    """Compile or load ``disp`` now: a deferred entry point's declared signature (any other
    dispatcher: nothing)."""
    load = getattr(disp, "cdcore_load", None)
    if load is not None:
        load()
