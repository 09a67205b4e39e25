"""Articulated bodies: links, joints, forward kinematics, the articulation hierarchy
with its four update methods (AABB+, AABB*, OBB, CAB) and body-body collision."""
from .body import ArticulatedBody, Link
from .hierarchy import METHOD_LABELS, UPDATE_METHODS, BodyHierarchy
from .query import BODY_TESTS, BodyCollision, brute_force_pairs, collide_bodies, run_exact_queries

__all__ = ["ArticulatedBody", "Link", "METHOD_LABELS", "UPDATE_METHODS", "BodyHierarchy", "BODY_TESTS",
           "BodyCollision", "brute_force_pairs", "collide_bodies", "run_exact_queries"]
