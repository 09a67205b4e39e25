"""pinocchio + coal as an independent reference for URDF and MJCF forward kinematics and
self-collision (optional: package ``pin``, imported lazily).

MJCF: pinocchio 4.1's MJCF parser does not open MuJoCo scene files as published (the
shared Shadow hand's ``reach.xml``): it does not follow ``<include>`` (the hand is an
include inside ``<worldbody>``: "No such node (body)"; a material of an included asset
file: "Cannot find material"), it reads only the first top-level body (the floor's
site-only body: a model with 0 joints), and it places that body at the identity, dropping
its ``pos``/``quat``. :func:`normalised_mjcf` writes a copy it can open: includes inlined,
asset directories absolute, plane and height-field geoms (not robot parts; cdcore leaves
them out too) and lights dropped, and every top-level body under one root body named
``world`` at the identity (MuJoCo's world body, so world geoms map to cdcore's ``world``
link). Nothing else changes: pinocchio still parses the bodies, joints, ``<default>``
classes, geom frames and sizes itself, and coal loads the mesh files itself.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

_ASSET_DIRS = ("meshdir", "texturedir", "assetdir")


def _inline_includes(el, base: str, depth: int = 0) -> None:
    """Replace every ``<include file=..>`` under ``el`` by the children of the included
    file's root (MuJoCo resolves include paths against the top-level file's directory)."""
    if depth > 20:
        raise ValueError("MJCF includes nested more than 20 deep (a cycle?)")
    for k, ch in enumerate(list(el)):
        if ch.tag == "include":
            f = ch.get("file")
            if not f:
                raise ValueError("MJCF <include> without a file attribute")
            sub = ET.parse(os.path.join(base, f)).getroot()
            _inline_includes(sub, base, depth + 1)
            pos = list(el).index(ch)
            el.remove(ch)
            for i, g in enumerate(list(sub)):
                el.insert(pos + i, g)
        else:
            _inline_includes(ch, base, depth)


def normalised_mjcf(path, out_path) -> str:
    """Write the copy of MJCF file ``path`` that pinocchio can open (see the module doc) to
    ``out_path``; returns ``out_path``."""
    path = os.path.abspath(os.fspath(path))
    base = os.path.dirname(path)
    tree = ET.parse(path)
    root = tree.getroot()
    _inline_includes(root, base)
    compilers = list(root.iter("compiler")) or [ET.SubElement(root, "compiler")]
    for c in compilers:  # relative asset directories are relative to the model file's
        for a in _ASSET_DIRS:
            if c.get(a) is not None:
                c.set(a, os.path.normpath(os.path.join(base, c.get(a))))
    if not any(c.get("meshdir") or c.get("assetdir") for c in compilers):
        compilers[0].set("meshdir", base)  # mesh files relative to the model file
    for wb in root.findall("worldbody"):
        for ch in list(wb):
            if ch.tag == "light" or (ch.tag == "geom" and ch.get("type") in ("plane", "hfield")):
                wb.remove(ch)
        kids = list(wb)
        top = ET.SubElement(wb, "body", {"name": "world"})
        for ch in kids:
            wb.remove(ch)
            top.append(ch)
    tree.write(os.fspath(out_path))
    return os.fspath(out_path)


class PinocchioRobot:
    """The same URDF loaded by pinocchio, its collision pairs restricted to the link pairs
    ``mask`` (L, L) allows (``None``: pinocchio's own ``addAllCollisionPairs``).

    Geometry objects map to cdcore links by their parent frame's name."""

    def __init__(self, body, urdf, package_dirs, mask=None):
        import pinocchio as pin
        dirs = [package_dirs] if isinstance(package_dirs, str) else list(package_dirs or [])
        model, gmodel, _ = pin.buildModelsFromUrdf(urdf, package_dirs=dirs)
        self._setup(pin, body, model, gmodel, mask)

    @classmethod
    def from_mjcf(cls, body, path, mask=None) -> "PinocchioRobot":
        """The same MJCF file loaded by pinocchio (``buildModelFromMJCF`` and
        ``buildGeomFromMJCF(.., COLLISION)``: the geoms with ``contype``/``conaffinity``
        set) from a :func:`normalised_mjcf` copy in a temporary directory."""
        import tempfile

        import pinocchio as pin
        with tempfile.TemporaryDirectory(prefix="cdcore-pin-mjcf-") as d:
            flat = normalised_mjcf(path, os.path.join(d, "model.xml"))
            model = pin.buildModelFromMJCF(flat)
            gmodel = pin.buildGeomFromMJCF(model, flat, pin.COLLISION)
        names = set(body.joint_values(np.zeros(body.n_dofs)))
        other = [model.names[j] for j in range(1, model.njoints) if model.names[j] not in names]
        if other:  # pinocchio merges a body's several joints into one composite joint
            raise ValueError(f"pinocchio's joints {other} are not the model's hinge/slide joints (bodies with "
                             f"several joints, ball or free joints): no joint-by-joint reference")
        self = cls.__new__(cls)
        self._setup(pin, body, model, gmodel, mask)
        return self

    def _setup(self, pin, body, model, gmodel, mask):
        self.pin = pin
        self.body = body
        self.model, self.gmodel = model, gmodel
        self.data = self.model.createData()
        names = [self.model.frames[g.parentFrame].name for g in self.gmodel.geometryObjects]
        self.geom_links = names
        index = {n: i for i, n in enumerate(body.link_names)}
        self.gmodel.removeAllCollisionPairs()
        if mask is None:
            self.gmodel.addAllCollisionPairs()
        else:
            for a in range(len(names)):
                for b in range(a + 1, len(names)):
                    if names[a] in index and names[b] in index and mask[index[names[a]], index[names[b]]]:
                        self.gmodel.addCollisionPair(pin.CollisionPair(a, b))
        self.gdata = pin.GeometryData(self.gmodel)
        self._index = index

    def q(self, q) -> np.ndarray:
        """cdcore ``q`` (n_dofs,) -> pinocchio configuration (mimic joints set, continuous
        joints as (cos, sin))."""
        vals = self.body.joint_values(q)
        out = self.pin.neutral(self.model)
        for jid in range(1, self.model.njoints):
            j = self.model.joints[jid]
            if j.nq == 0:  # a mimic joint modelled by pinocchio itself
                continue
            v = vals[self.model.names[jid]]
            if j.nq == 2:
                out[j.idx_q:j.idx_q + 2] = np.cos(v), np.sin(v)
            else:
                out[j.idx_q] = v
        return out

    def collide(self, pq) -> None:
        """``computeCollisions`` on a pinocchio configuration (the timed call)."""
        self.pin.computeCollisions(self.model, self.data, self.gmodel, self.gdata, pq, False)

    def colliding_pairs(self, q) -> set:
        """Link name pairs (a, b), ordered like ``body.link_names``, in collision."""
        self.collide(self.q(q))
        out = set()
        for k, cp in enumerate(self.gmodel.collisionPairs):
            if self.gdata.collisionResults[k].isCollision():
                a, b = self.geom_links[cp.first], self.geom_links[cp.second]
                out.add((a, b) if self._index[a] < self._index[b] else (b, a))
        return out

    def pair_universe(self) -> set:
        out = set()
        for cp in self.gmodel.collisionPairs:
            a, b = self.geom_links[cp.first], self.geom_links[cp.second]
            if a in self._index and b in self._index and a != b:
                out.add((a, b) if self._index[a] < self._index[b] else (b, a))
        return out

    def link_distance(self, q, a, b) -> float:
        """Minimum coal distance between the geometry of links a and b (negative: depth)."""
        import coal
        pin = self.pin
        pin.updateGeometryPlacements(self.model, self.data, self.gmodel, self.gdata, self.q(q))
        best = np.inf
        for i, ni in enumerate(self.geom_links):
            for j, nj in enumerate(self.geom_links):
                if ni == a and nj == b:
                    gi, gj = self.gmodel.geometryObjects[i], self.gmodel.geometryObjects[j]
                    req, res = coal.DistanceRequest(), coal.DistanceResult()
                    d = coal.distance(gi.geometry, coal.Transform3s(self.gdata.oMg[i].homogeneous),
                                      gj.geometry, coal.Transform3s(self.gdata.oMg[j].homogeneous), req, res)
                    best = min(best, d)
        return float(best)

    def frame_pose(self, q, name) -> np.ndarray:
        pin = self.pin
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return self.data.oMf[self.model.getFrameId(name)].homogeneous.copy()
