"""cdcore: bounding-volume hierarchies and collision queries (numpy + numba).

Never imports Qt, pyvista or the app; trimesh only lazily for file I/O. ``import cdcore``
is cheap: numba and the kernels load on first use of a name below (PEP 562).
"""
from __future__ import annotations

import importlib
import os
import sys
import types

# numba's OpenMP threading layer spin-waits between parallel regions by default: on a busy
# machine (or beside the app's GUI thread) a tiny batch then took 32 ms instead of 0.4 ms.
# Passive waiting must be chosen before the OpenMP runtime starts its pool (the first
# parallel kernel), so it is set at import; a value the user exported wins. (Intel's OpenMP
# reads KMP_BLOCKTIME; GNU's libgomp and LLVM's libomp read OMP_WAIT_POLICY.)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("KMP_BLOCKTIME", "0")

# public name -> the submodule that defines it
_EXPORTS = {
    "BV_TYPES": "bv",
    "BVH": "bvh", "build_bvh": "bvh",
    "AXIS_NAMES": "collide", "TESTS": "collide", "BatchResult": "collide", "CollisionResult": "collide",
    "CollisionStats": "collide", "Outcome": "collide", "Trace": "collide", "collide": "collide",
    "collide_batch": "collide",
    "FrontCache": "front",
    "CrossCheck": "crosscheck", "crosscheck": "crosscheck",
    "DistanceResult": "distance", "distance": "distance", "distance_batch": "distance",
    "Mesh": "mesh", "load_mesh": "mesh",
    "Query": "query",
    "Primitive": "primitives",
    "PrimitiveDistance": "prim_query", "collide_primitive": "prim_query", "distance_primitive": "prim_query",
    "SavedQuery": "query_io", "load_query": "query_io", "save_query": "query_io",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        # submodules (cdcore.shapes, cdcore.scenes, ...) import on attribute access too
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'cdcore' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function (a benign, idempotent race)
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    def __setattr__(self, name, value):
        # The import system binds a loaded submodule to the package attribute of its name;
        # ``collide`` and ``distance`` are functions of modules of the same name: keep the
        # function (as an eager ``from .collide import collide`` would).
        if (isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name
                and value.__name__ == f"{__name__}.{name}"):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
