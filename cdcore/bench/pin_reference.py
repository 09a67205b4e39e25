"""pinocchio + coal as an independent reference for URDF forward kinematics and
self-collision (optional: package ``pin``, imported lazily)."""
from __future__ import annotations

import numpy as np


class PinocchioRobot:
    """The same URDF loaded by pinocchio, its collision pairs restricted to the link pairs
    ``mask`` (L, L) allows (``None``: pinocchio's own ``addAllCollisionPairs``).

    Geometry objects map to cdcore links by their parent frame's name."""

    def __init__(self, body, urdf, package_dirs, mask=None):
        import pinocchio as pin
        self.pin = pin
        self.body = body
        dirs = [package_dirs] if isinstance(package_dirs, str) else list(package_dirs or [])
        self.model, self.gmodel, _ = pin.buildModelsFromUrdf(urdf, package_dirs=dirs)
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
