"""Bounding-volume types: one module per type with the same interface (fit to primitives,
merge two children, size), and the registry that names them for the public API."""
from dataclasses import dataclass

from .._layout import (KIND_AABB, KIND_KDOP6, KIND_KDOP14, KIND_KDOP18, KIND_KDOP26, KIND_OBB, KIND_OBB_SPHERE,
                       KIND_SPHERE)


@dataclass(frozen=True)
class BVType:
    name: str
    kind: int
    tests: tuple  # overlap tests valid for this type, the first is the default
    description: str


BV_TYPES = {
    "aabb": BVType("aabb", KIND_AABB, ("sat15", "sat6"),
                   "axis-aligned boxes in the model frame (van den Bergen 1998)"),
    "obb": BVType("obb", KIND_OBB, ("sat15", "sat6"),
                  "oriented boxes fitted by covariance (Gottschalk et al. 1996)"),
    "sphere": BVType("sphere", KIND_SPHERE, ("sphere",), "bounding spheres"),
    "obb_sphere": BVType("obb_sphere", KIND_OBB_SPHERE, ("sphere5", "sat15", "sat6", "sphere", "sphere15"),
                         "oriented boxes with bounding spheres (Chang, Wang & Kim 2010)"),
    # k-DOPs (cdcore.bv.kdop): one test, "slab"; collide(..., realign=...) picks the realignment
    "kdop6": BVType("kdop6", KIND_KDOP6, ("slab",), "6-DOPs: x, y, z slabs (Klosowski et al. 1998)"),
    "kdop14": BVType("kdop14", KIND_KDOP14, ("slab",), "14-DOPs: axes + cube-corner diagonals"),
    "kdop18": BVType("kdop18", KIND_KDOP18, ("slab",), "18-DOPs: axes + cube-edge diagonals"),
    "kdop26": BVType("kdop26", KIND_KDOP26, ("slab",), "26-DOPs: axes + corner + edge diagonals"),
}
