"""Articulated bodies: links, joints, forward kinematics, the articulation hierarchy
with its four update methods (AABB+, AABB*, OBB, CAB) and body-body collision."""
import importlib
import sys
import types

# name -> submodule: imported on first access (PEP 562), so that reading a constant
# (``UPDATE_METHODS``) does not import the self-collision and traversal kernels, which
# load from numba's cache or, on an empty cache, compile (the app's argument parser and
# its first window need only the constants)
_EXPORTS = {
    "audit": "audit",
    "AuditResult": "audit",
    "AuditCancelled": "audit",
    "ArticulatedBody": "body",
    "Link": "body",
    "METHOD_LABELS": "hierarchy",
    "UPDATE_METHODS": "hierarchy",
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


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function (a benign, idempotent race)
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    def __setattr__(self, name, value):
        # The import system binds a loaded submodule to the package attribute of its name;
        # ``audit`` is a function of the module of the same name: keep the function (as the
        # eager ``from .audit import audit`` did).
        if (isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name
                and value.__name__ == f"{__name__}.{name}"):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = ["audit", "AuditResult", "AuditCancelled", "ArticulatedBody", "Link", "METHOD_LABELS", "UPDATE_METHODS",
           "BodyHierarchy", "BODY_TESTS",
           "BodyCollision", "brute_force_pairs", "collide_bodies", "run_exact_queries", "SelfCollisionChecker",
           "SelfCollisionResult", "brute_force_self_pairs", "environment_pairs", "read_srdf_disabled",
           "self_collision_pairs", "Trajectory", "grasp_trajectory", "load_trajectory", "random_trajectory",
           "save_trajectory", "PackageNotFoundError", "RobotBody", "URDFError", "load_urdf", "MJCFError",
           "MJCFRobot", "load_mjcf"]
