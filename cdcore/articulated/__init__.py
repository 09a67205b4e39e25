"""Articulated bodies: links, joints, forward kinematics, the articulation hierarchy
with its four update methods (AABB+, AABB*, OBB, CAB) and body-body collision."""
from .._lazy import lazy_package

# name -> submodule: imported on first access (PEP 562), so that reading a constant
# (``UPDATE_METHODS``, from ``methods``) imports neither numba (~0.5 s) nor the kernels,
# which load from numba's cache or, on an empty cache, compile (the app's argument parser
# and its first window need only the constants)
_EXPORTS = {
    "audit": "audit",
    "AuditResult": "audit",
    "AuditCancelled": "audit",
    "ArticulatedBody": "body",
    "Link": "body",
    "METHOD_LABELS": "methods",
    "UPDATE_METHODS": "methods",
    "BodyHierarchy": "hierarchy",
    "BODY_TESTS": "query",
    "BodyCollision": "query",
    "brute_force_pairs": "query",
    "collide_bodies": "query",
    "run_exact_queries": "query",
    "SelfCollisionChecker": "selfcollision",
    "SelfCollisionResult": "selfcollision",
    "brute_force_self_pairs": "selfcollision",
    "environment_pairs": "selfcollision",
    "read_srdf_disabled": "selfcollision",
    "self_collision_pairs": "selfcollision",
    "Trajectory": "trajectory",
    "grasp_trajectory": "trajectory",
    "load_trajectory": "trajectory",
    "random_trajectory": "trajectory",
    "save_trajectory": "trajectory",
    "MJCFError": "mjcf",
    "MJCFRobot": "mjcf",
    "load_mjcf": "mjcf",
    "PackageNotFoundError": "urdf",
    "RobotBody": "urdf",
    "URDFError": "urdf",
    "load_urdf": "urdf",
}


lazy_package(__name__, _EXPORTS)


__all__ = ["audit", "AuditResult", "AuditCancelled", "ArticulatedBody", "Link", "METHOD_LABELS", "UPDATE_METHODS",
           "BodyHierarchy", "BODY_TESTS",
           "BodyCollision", "brute_force_pairs", "collide_bodies", "run_exact_queries", "SelfCollisionChecker",
           "SelfCollisionResult", "brute_force_self_pairs", "environment_pairs", "read_srdf_disabled",
           "self_collision_pairs", "Trajectory", "grasp_trajectory", "load_trajectory", "random_trajectory",
           "save_trajectory", "PackageNotFoundError", "RobotBody", "URDFError", "load_urdf", "MJCFError",
           "MJCFRobot", "load_mjcf"]
