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
"""
from __future__ import annotations

import os

from numba import njit

NRT_FREE = os.environ.get("CDCORE_PAIR_NRT", "") != "1"


def pair_njit(fn=None, signature=None, **options):
    """``njit(cache=True, **options)``, without numba's runtime when ``NRT_FREE``; with
    ``signature``, compiled for it only (when the module is imported: other argument types
    raise ``TypeError`` instead of compiling again)."""
    opts = {"cache": True}
    opts.update(options)
    if NRT_FREE:
        opts["_nrt"] = False
    jit = njit(**opts) if signature is None else njit(signature, **opts)
    if fn is None:
        return jit
    return jit(fn)
