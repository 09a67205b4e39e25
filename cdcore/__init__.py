"""cdcore: bounding-volume hierarchies and collision queries (numpy + numba).

Never imports Qt, pyvista or the app; trimesh only lazily for file I/O. ``import cdcore``
is cheap: numba and the kernels load on first use of a name below (PEP 562).
"""
from __future__ import annotations

import os

from ._lazy import lazy_package

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


lazy_package(__name__, _EXPORTS, submodules=True)
