"""The articulation hierarchy's update methods, by name: constants only (no numba), so that
the app's argument parser and its menus read them without importing the compiler."""

#: the update methods of ``BodyHierarchy`` (AABB+, AABB*, OBB, CAB and CAB with summed extents)
UPDATE_METHODS = ("aabb_plus", "aabb_star", "obb", "cab", "cab_sum")
METHOD_AABB_PLUS, METHOD_AABB_STAR, METHOD_OBB, METHOD_CAB, METHOD_CAB_SUM = range(5)
METHOD_LABELS = {"aabb_plus": "AABB+", "aabb_star": "AABB*", "obb": "OBB", "cab": "CAB", "cab_sum": "CAB-sum"}

__all__ = ["UPDATE_METHODS", "METHOD_LABELS", "METHOD_AABB_PLUS", "METHOD_AABB_STAR", "METHOD_OBB", "METHOD_CAB",
           "METHOD_CAB_SUM"]
