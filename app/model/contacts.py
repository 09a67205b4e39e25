"""Contact geometry of a frame, Qt-free: every intersecting triangle pair of every link
pair in contact, with its intersection segment, normal and depth (``cdcore.contacts``), in
world coordinates; and the cross-library verdict of one link pair (``cdcore.crosscheck``).

Computed by ``Session`` only while a view shows contacts (``session.wants["contacts"]``):
one ``collide(..., contacts="all", geometry=True)`` per link pair the frame found in
contact (the runner itself asks only for the first contact).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cdcore import collide

#: at most this many contacts are kept per frame (the deepest ones): a table and a layer of
#: more would not be read, and their cost would drown the frame
MAX_CONTACTS = 4000
#: the cross-check runs the O(m n) brute-force reference only up to this many triangle pairs
#: (above it cdcore, tested equal to the reference, is taken as exact)
VERDICT_BRUTE_MAX = 400_000


def _ro(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class FrameContacts:
    """Row r is one intersecting triangle pair: ``scene_pair`` (k,) index into
    ``scene.pairs``; ``bodies``/``links``/``tris`` (k, 2) (A's, B's); ``points`` (k, 2, 3)
    segment end points; ``normals`` (k, 3) unit, from A to B; ``depths`` (k,) translational
    penetration depth; ``names`` (link A / link B). Rows are sorted deepest first, so
    ``deepest`` is 0 (-1 when there is no contact); ``dropped`` contacts beyond
    ``MAX_CONTACTS`` were left out."""
    scene_pair: np.ndarray
    bodies: np.ndarray
    links: np.ndarray
    tris: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    depths: np.ndarray
    names: tuple
    dropped: int = 0

    def __len__(self) -> int:
        return len(self.depths)

    @property
    def deepest(self) -> int:
        return 0 if len(self.depths) else -1

    def midpoint(self, r: int) -> np.ndarray:
        return self.points[r].mean(axis=0)


def empty_contacts() -> FrameContacts:
    z = np.zeros((0, 2), np.int64)
    return FrameContacts(_ro(np.zeros(0, np.int64)), _ro(z), _ro(z.copy()), _ro(z.copy()), _ro(np.zeros((0, 2, 3))),
                         _ro(np.zeros((0, 3))), _ro(np.zeros(0)), ())


def _link_name(sb, li):
    return sb.body.links[li].name if sb.body.n_links > 1 else sb.name


def frame_contacts(scene, result, frame: int, test: str | None = None, realign: str | None = None) -> FrameContacts:
    """The contacts of ``result`` (a ``FrameResult`` of ``scene`` at ``frame``)."""
    rows = []
    for k, ((i, j), pr) in enumerate(zip(scene.pairs, result.pairs)):
        A, B = scene.bodies[i], scene.bodies[j]
        for la, lb in pr.contacts.tolist():
            ba, bb = A.body.bvhs[la], B.body.bvhs[lb]
            r = collide(ba, A.link_poses[frame][la], bb, B.link_poses[frame][lb], test=test, realign=realign,
                        geometry=True)
            if r.hit:
                rows.append((k, i, j, la, lb, r, f"{_link_name(A, la)} / {_link_name(B, lb)}"))
    if not rows:
        return empty_contacts()
    n = sum(len(r.pairs) for *_, r, _ in rows)
    cat = np.concatenate
    scene_pair = cat([np.full(len(r.pairs), k) for k, *_, r, _ in rows])
    bodies = cat([np.tile((i, j), (len(r.pairs), 1)) for _, i, j, *_, r, _ in rows])
    links = cat([np.tile((la, lb), (len(r.pairs), 1)) for *_, la, lb, r, _ in rows])
    names_per = [name for *_, r, name in rows for _ in range(len(r.pairs))]
    tris = cat([r.pairs for *_, r, _ in rows]).astype(np.int64)
    points = cat([r.points for *_, r, _ in rows])
    normals = cat([r.normals for *_, r, _ in rows])
    depths = cat([r.depths for *_, r, _ in rows])
    order = np.lexsort((np.arange(n), -depths))[:MAX_CONTACTS]  # deepest first, stable
    return FrameContacts(_ro(scene_pair[order]), _ro(bodies[order]), _ro(links[order]), _ro(tris[order]),
                         _ro(points[order]), _ro(normals[order]), _ro(depths[order]),
                         tuple(names_per[q] for q in order), n - len(order))


@dataclass(frozen=True)
class VerdictTarget:
    """The link pair a verdict is about: scene pair index, bodies (i, j), links (la, lb)."""
    scene_pair: int
    bodies: tuple
    links: tuple
    label: str


def verdict_target(scene, result, pair: int, contacts: FrameContacts | None = None,
                   row: int | None = None) -> VerdictTarget | None:
    """Which link pair of scene pair ``pair`` to cross-check: the selected contact's, else
    the deepest contact's of that pair, else the first link pair the frame tested exactly
    (single-link bodies: their only link pair)."""
    i, j = scene.pairs[pair]
    A, B = scene.bodies[i], scene.bodies[j]
    links = None
    if contacts is not None and len(contacts):
        mine = np.flatnonzero(contacts.scene_pair == pair)
        if row is not None and 0 <= row < len(contacts) and contacts.scene_pair[row] == pair:
            links = tuple(int(x) for x in contacts.links[row])
        elif len(mine):
            links = tuple(int(x) for x in contacts.links[mine[0]])
    if links is None:
        pr = result.pairs[pair]
        if len(pr.link_pairs):
            links = tuple(int(x) for x in pr.link_pairs[0])
        elif A.body.n_links == 1 and B.body.n_links == 1:
            links = (0, 0)
        else:
            return None
    la, lb = links
    return VerdictTarget(pair, (i, j), links, f"{_link_name(A, la)} / {_link_name(B, lb)}")


def run_verdict(scene, frame: int, target: VerdictTarget, bv: str = "obb"):
    """``cdcore.crosscheck`` on the target's two link meshes at ``frame`` (world poses)."""
    from cdcore.crosscheck import crosscheck
    (i, j), (la, lb) = target.bodies, target.links
    A, B = scene.bodies[i], scene.bodies[j]
    ma, mb = A.body.bvhs[la].mesh, B.body.bvhs[lb].mesh
    return crosscheck(ma, A.link_poses[frame][la], mb, B.link_poses[frame][lb], bvs=(bv,),
                      brute=ma.n_faces * mb.n_faces <= VERDICT_BRUTE_MAX)
