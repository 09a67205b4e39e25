"""Saved queries: one ``.npz`` holding both meshes, their poses, the hierarchies' type and
build parameters, the overlap test and a note, so a query whose answer surprised someone can
be sent, re-run and opened in the debugger's traversal stepper.

A refitted hierarchy (deformed mesh) differs from a fresh build of the same mesh; its node
arrays are saved too and restored on load, so the traversal replays exactly.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .bv import BV_TYPES
from .bvh import BVH, build_bvh
from .mesh import Mesh
from .transforms import as_pose

FORMAT = "cdcore-query"
VERSION = 1
_KEYS = ("format", "version", "a_vertices", "a_faces", "b_vertices", "b_faces", "pose_a", "pose_b", "bv_a", "bv_b",
         "leaf_a", "leaf_b", "test", "note")


@dataclass
class SavedQuery:
    """A loaded query; ``run()`` replays it with ``cdcore.collide``.

    ``answer``: what cdcore answered when it was saved (``hit``, ``pairs``, ``bv_tests``);
    ``expected``: what the sender expected (True/False) or None.
    """
    bvh_a: BVH
    pose_a: np.ndarray
    bvh_b: BVH
    pose_b: np.ndarray
    test: str | None
    realign: str | None
    note: str
    answer: dict
    expected: bool | None
    path: str | None = None

    def run(self, contacts: str = "all", trace: bool = False):
        from .collide import collide
        return collide(self.bvh_a, self.pose_a, self.bvh_b, self.pose_b, test=self.test, contacts=contacts,
                       trace=trace, realign=self.realign)


def save_query(path, bvh_a: BVH, pose_a, bvh_b: BVH, pose_b, test: str | None = None, note: str = "",
               realign: str | None = None, expected: bool | None = None) -> dict:
    """Write the query ``collide(bvh_a, pose_a, bvh_b, pose_b, test, realign=realign)`` to
    ``path`` (``.npz``; the suffix is added if missing).

    Parameters
    ----------
    bvh_a, bvh_b : BVH
    pose_a, pose_b : (4, 4) float64 rigid poses (``None``: identity)
    test : str, optional
        Overlap test (default: the BV type's first).
    note : str
        Free text: what looked wrong.
    expected : bool, optional
        The answer the sender expected.

    Returns the answer cdcore gives now (``hit``, ``pairs``, ``bv_tests``), also stored.
    Raises ``TypeError`` for non-BVH inputs and ``ValueError`` for bad poses, an unknown
    test or a test the BV type does not support (the query is run once to check).
    """
    from .collide import collide
    for name, b in (("bvh_a", bvh_a), ("bvh_b", bvh_b)):
        if not isinstance(b, BVH):
            raise TypeError(f"{name}: expected a cdcore.BVH, got {type(b).__name__}")
    pa = np.eye(4) if pose_a is None else as_pose(pose_a, "pose_a")
    pb = np.eye(4) if pose_b is None else as_pose(pose_b, "pose_b")
    if not isinstance(note, str):
        raise TypeError(f"note: expected str, got {type(note).__name__}")
    res = collide(bvh_a, pa, bvh_b, pb, test=test, realign=realign)
    answer = {"hit": bool(res.hit), "pairs": int(len(res.pairs)), "bv_tests": int(res.stats.bv_tests)}
    data = {"format": np.array(FORMAT), "version": np.array(VERSION),
            "pose_a": pa, "pose_b": pb, "test": np.array(test or ""), "realign": np.array(realign or ""),
            "note": np.array(note), "expected": np.array(-1 if expected is None else int(bool(expected))),
            "answer": np.array([int(answer["hit"]), answer["pairs"], answer["bv_tests"]], dtype=np.int64)}
    for side, b in (("a", bvh_a), ("b", bvh_b)):
        data[f"{side}_vertices"] = b.mesh.vertices
        data[f"{side}_faces"] = b.mesh.faces
        data[f"{side}_name"] = np.array(b.mesh.name)
        data[f"bv_{side}"] = np.array(b.bv)
        data[f"leaf_{side}"] = np.array(b.leaf_size)
        if b.kdop is None:  # the tree as it is (refitted trees differ from a rebuild)
            data[f"{side}_nodes_f"] = b.nodes_f
            data[f"{side}_nodes_i"] = b.nodes_i
            data[f"{side}_prim_order"] = b.prim_order
            data[f"{side}_depth"] = b.depth
    path = os.fspath(path)
    if not path.endswith(".npz"):
        path += ".npz"
    np.savez_compressed(path, **data)
    return answer


def load_query(path) -> SavedQuery:
    """Read a query written by :func:`save_query`.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming the file and
    the field for anything else (not an npz, another format, missing or malformed arrays).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"query file not found: {path}")
    where = os.path.basename(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            d = {k: z[k] for k in z.files}
    except Exception as exc:  # zip and format errors of every kind
        raise ValueError(f"{where}: not a readable .npz ({type(exc).__name__}: {exc})") from None
    missing = [k for k in _KEYS if k not in d]
    if "format" in d and str(d["format"]) != FORMAT:
        raise ValueError(f"{where}: not a cdcore query (format {str(d['format'])!r})")
    if missing:
        raise ValueError(f"{where}: not a cdcore query: missing {missing}")
    if int(d["version"]) > VERSION:
        raise ValueError(f"{where}: query format version {int(d['version'])} is newer than this cdcore ({VERSION})")
    bvhs = []
    for side in ("a", "b"):
        bv = str(d[f"bv_{side}"])
        if bv not in BV_TYPES:
            raise ValueError(f"{where}: bv_{side}: unknown bounding-volume type {bv!r}")
        try:
            mesh = Mesh(d[f"{side}_vertices"], d[f"{side}_faces"], name=str(d.get(f"{side}_name", side)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: mesh {side}: {exc}") from None
        bvh = build_bvh(mesh, bv, int(d[f"leaf_{side}"]))
        saved = [d.get(f"{side}_{k}") for k in ("nodes_f", "nodes_i", "prim_order", "depth")]
        if bvh.kdop is None and all(x is not None for x in saved):
            nf, ni, po, depth = saved
            if nf.shape != bvh.nodes_f.shape or ni.shape != bvh.nodes_i.shape or po.shape != bvh.prim_order.shape:
                raise ValueError(f"{where}: the saved tree of mesh {side} does not match its mesh")
            if not (np.array_equal(nf, bvh.nodes_f) and np.array_equal(ni, bvh.nodes_i)):
                bvh = BVH(mesh, bv, bvh.leaf_size, np.ascontiguousarray(nf, np.float64),
                          np.ascontiguousarray(ni, np.int32), np.ascontiguousarray(po, np.int32),
                          np.ascontiguousarray(depth, np.int32))
        bvhs.append(bvh)
    try:
        pa, pb = as_pose(d["pose_a"], "pose_a"), as_pose(d["pose_b"], "pose_b")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    ans = d.get("answer", np.array([-1, -1, -1]))
    exp = int(d.get("expected", np.array(-1)))
    return SavedQuery(bvhs[0], pa, bvhs[1], pb, str(d["test"]) or None, str(d.get("realign", "")) or None,
                      str(d["note"]), {"hit": bool(ans[0]), "pairs": int(ans[1]), "bv_tests": int(ans[2])},
                      None if exp < 0 else bool(exp), os.path.abspath(path))


__all__ = ["SavedQuery", "load_query", "save_query"]
