"""Objects received from another process get writable arrays back.

dask (and any pickle protocol 5 transport) delivers large arrays as read-only views of the
received frames. The kernels are compiled for writable arrays only (one signature each,
issue 15): a read-only one would compile them again in every worker, two processes at once,
which numba's on-disk index does not survive (``tests/test_readonly_inputs.py``). Classes
whose arrays reach kernels take ``WritableOnArrival``'s ``__setstate__``; ``Mesh`` keeps its
arrays read-only by design and ``BVH`` rebuilds its pack itself.
"""
from __future__ import annotations

import numpy as np

_MAX_DEPTH = 6  # a body's state -> links -> link -> primitive -> arrays: deep enough, never cyclic


def writable(value, depth: int = 0):
    """``value`` with every read-only ndarray in it (dicts, lists, tuples, namedtuples, and
    the attributes of cdcore objects without a ``__setstate__`` of their own) a writable copy."""
    if isinstance(value, np.ndarray):
        return value if value.flags.writeable or value.dtype == object else value.copy()
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: writable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [writable(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        items = [writable(v, depth + 1) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    cls = type(value)
    if cls.__module__.startswith("cdcore.") and hasattr(value, "__dict__") and not hasattr(cls, "__setstate__"):
        for k, v in list(vars(value).items()):
            new = writable(v, depth + 1)
            if new is not v:
                object.__setattr__(value, k, new)
    return value


class WritableOnArrival:
    """Mixin: unpickled instances hold writable arrays (see the module docstring)."""

    def __setstate__(self, state):
        self.__dict__.update(writable(state))
