"""Articulated bodies: links, joints, forward kinematics, the articulation hierarchy
with its four update methods (AABB+, AABB*, OBB, CAB) and body-body collision."""
from .audit import AuditCancelled, AuditResult, audit
from .body import ArticulatedBody, Link
from .hierarchy import METHOD_LABELS, UPDATE_METHODS, BodyHierarchy
from .query import BODY_TESTS, BodyCollision, brute_force_pairs, collide_bodies, run_exact_queries
from .selfcollision import (SelfCollisionChecker, SelfCollisionResult, brute_force_self_pairs, environment_pairs,
                            read_srdf_disabled, self_collision_pairs)
from .trajectory import Trajectory, grasp_trajectory, load_trajectory, random_trajectory, save_trajectory
from .mjcf import MJCFError, MJCFRobot, load_mjcf
from .urdf import PackageNotFoundError, RobotBody, URDFError, load_urdf

__all__ = ["audit", "AuditResult", "AuditCancelled", "ArticulatedBody", "Link", "METHOD_LABELS", "UPDATE_METHODS",
           "BodyHierarchy", "BODY_TESTS",
           "BodyCollision", "brute_force_pairs", "collide_bodies", "run_exact_queries", "SelfCollisionChecker",
           "SelfCollisionResult", "brute_force_self_pairs", "environment_pairs", "read_srdf_disabled",
           "self_collision_pairs", "Trajectory", "grasp_trajectory", "load_trajectory", "random_trajectory",
           "save_trajectory", "PackageNotFoundError", "RobotBody", "URDFError", "load_urdf", "MJCFError",
           "MJCFRobot", "load_mjcf"]
