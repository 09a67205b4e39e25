"""cdcore: bounding-volume hierarchies and collision queries (numpy + numba).

Never imports Qt, pyvista or the app; trimesh only lazily for file I/O.
"""
from .bv import BV_TYPES
from .bvh import BVH, build_bvh
from .collide import (AXIS_NAMES, TESTS, BatchResult, CollisionResult, CollisionStats, Outcome, Trace,
                      collide, collide_batch)
from .distance import DistanceResult, distance
from .mesh import Mesh, load_mesh
from .query_io import SavedQuery, load_query, save_query

__all__ = ["BV_TYPES", "BVH", "build_bvh", "AXIS_NAMES", "TESTS", "BatchResult", "CollisionResult",
           "CollisionStats", "Outcome", "Trace", "collide", "collide_batch", "DistanceResult", "distance",
           "Mesh", "load_mesh", "SavedQuery", "load_query", "save_query"]
