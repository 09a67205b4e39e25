"""Bounding-volume types: one module per type with the same interface, and the registry
that names them for the public API.

Each type's module (``aabb``, ``obb``, ``sphere``, ``kdop``) holds its kernels: fit to
primitives, merge two children, size (the descend volume); its overlap test lives in
``cdcore._overlap`` (boxes: SAT programs, spheres) or ``_kdop_traverse`` (realigned slabs) and
its distance lower bound in ``bounds``; ``dispatch`` is the one switch on the kind that the
build, traversal and distance kernels call; ``cdcore.geometry`` draws it (``geometry`` names
the family: box, sphere or k-DOP polytope). ``supports`` says which features a type has.
See the README, "Adding a bounding-volume type".
"""
from dataclasses import dataclass

from .._layout import (KIND_AABB, KIND_KDOP6, KIND_KDOP14, KIND_KDOP18, KIND_KDOP26, KIND_OBB, KIND_OBB_SPHERE,
                       KIND_SPHERE)


# features a type can support (``BVType.supports``)
FEATURES = ("collide", "distance", "refit", "trace", "batch", "articulated_links", "realign")
_ALL = frozenset(FEATURES) - {"realign"}


@dataclass(frozen=True)
class BVType:
    name: str
    kind: int
    tests: tuple  # overlap tests valid for this type, the first is the default
    description: str
    geometry: str = "box"  # how it is drawn: "box", "sphere", "box+sphere" or "kdop"
    supports: frozenset = _ALL


BV_TYPES = {
    "aabb": BVType("aabb", KIND_AABB, ("sat15", "sat6"),
                   "axis-aligned boxes in the model frame (van den Bergen 1998)"),
    "obb": BVType("obb", KIND_OBB, ("sat15", "sat6"),
                  "oriented boxes fitted by covariance (Gottschalk et al. 1996)"),
    "sphere": BVType("sphere", KIND_SPHERE, ("sphere",), "bounding spheres", "sphere"),
    "obb_sphere": BVType("obb_sphere", KIND_OBB_SPHERE, ("sphere5", "sat15", "sat6", "sphere", "sphere15"),
                         "oriented boxes with bounding spheres (Chang, Wang & Kim 2010)", "box+sphere"),
    # k-DOPs (cdcore.bv.kdop): one test, "slab"; collide(..., realign=...) picks the realignment
    "kdop6": BVType("kdop6", KIND_KDOP6, ("slab",), "6-DOPs: x, y, z slabs (Klosowski et al. 1998)", "kdop",
                    _ALL | {"realign"}),
    "kdop14": BVType("kdop14", KIND_KDOP14, ("slab",), "14-DOPs: axes + cube-corner diagonals", "kdop",
                     _ALL | {"realign"}),
    "kdop18": BVType("kdop18", KIND_KDOP18, ("slab",), "18-DOPs: axes + cube-edge diagonals", "kdop",
                     _ALL | {"realign"}),
    "kdop26": BVType("kdop26", KIND_KDOP26, ("slab",), "26-DOPs: axes + corner + edge diagonals", "kdop",
                     _ALL | {"realign"}),
}
