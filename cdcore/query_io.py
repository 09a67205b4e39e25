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
    from .npz_io import atomic_write_bytes
    atomic_write_bytes(path, lambda fh: np.savez_compressed(fh, **data))
    return answer


#: The most bytes a query file's arrays may declare (checked from their headers before
#: anything is decompressed): two meshes of about a million triangles with their trees.
MAX_QUERY_BYTES = 2**30
_SIDE_KEYS = ("vertices", "faces", "name", "nodes_f", "nodes_i", "prim_order", "depth")
_READ_KEYS = set(_KEYS) | {"realign", "expected", "answer"} | {f"{s}_{k}" for s in "ab" for k in _SIDE_KEYS}


def _declared_shapes(where):
    """Refuse inconsistent declared shapes before any array is decompressed."""
    def check(members):
        for key in ("format", "version", "bv_a", "bv_b", "leaf_a", "leaf_b", "test", "note", "realign", "expected",
                    "a_name", "b_name"):
            if key in members and members[key].shape != ():
                raise ValueError(f"{where}: {key}: expected a single value, got shape {members[key].shape}")
        for side in "ab":
            faces = members.get(f"{side}_faces")
            if faces is None or len(faces.shape) != 2:
                continue  # reported with the mesh, after reading
            m = faces.shape[0]
            for k, cols in (("nodes_f", 20), ("nodes_i", 4)):
                mem = members.get(f"{side}_{k}")
                if mem is not None and (len(mem.shape) != 2 or mem.shape[0] > max(2 * m - 1, 1)
                                        or mem.shape[1] != cols):
                    raise ValueError(f"{where}: {side}_{k}: shape {mem.shape} does not fit a tree over {m} triangles")
    return check


def _text(d, key, where, default=None) -> str:
    if key not in d:
        if default is None:
            raise ValueError(f"{where}: {key}: missing")
        return default
    a = d[key]
    if a.dtype.kind != "U" or a.shape != ():
        raise ValueError(f"{where}: {key}: expected a string, got {a.dtype} of shape {a.shape}")
    return str(a)


def _integer(d, key, where, lo, hi, default=None) -> int:
    if key not in d:
        if default is None:
            raise ValueError(f"{where}: {key}: missing")
        return default
    a = d[key]
    if a.dtype.kind not in "iu" or a.shape != ():
        raise ValueError(f"{where}: {key}: expected an integer, got {a.dtype} of shape {a.shape}")
    v = int(a)
    if not lo <= v <= hi:
        raise ValueError(f"{where}: {key}: expected {lo}..{hi}, got {v}")
    return v


def load_query(path, max_bytes: int = MAX_QUERY_BYTES) -> SavedQuery:
    """Read a query written by :func:`save_query`.

    A file is data from outside: its declared array sizes are bounded (``max_bytes``,
    default ``MAX_QUERY_BYTES``) before anything is decompressed, every field is checked
    for its type and shape, and a stored tree (a refitted one) is validated before any
    kernel sees it (:func:`cdcore.validate.validate_tree`: child ids in range and after
    their parents, leaf ranges and ``prim_order`` a permutation, volumes finite and
    enclosing their triangles).

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming the file and
    the field for anything else (not an npz, another format, missing or malformed arrays,
    a broken tree, more than ``max_bytes`` declared).
    """
    from .npz_io import read_npz
    from .validate import validate_tree

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"query file not found: {path}")
    where = os.path.basename(path)
    d = read_npz(path, _READ_KEYS, max_bytes, check=_declared_shapes(where), where=where)
    missing = [k for k in _KEYS if k not in d]
    if "format" in d and (d["format"].dtype.kind != "U" or str(d["format"]) != FORMAT):
        raise ValueError(f"{where}: not a cdcore query (format {str(d['format'])[:80]!r})")
    if missing:
        raise ValueError(f"{where}: not a cdcore query: missing {missing}")
    version = _integer(d, "version", where, 0, 2**31 - 1)
    if version > VERSION:
        raise ValueError(f"{where}: query format version {version} is newer than this cdcore ({VERSION})")
    bvhs = []
    for side in ("a", "b"):
        bv = _text(d, f"bv_{side}", where)
        if bv not in BV_TYPES:
            raise ValueError(f"{where}: bv_{side}: unknown bounding-volume type {bv[:80]!r}")
        leaf = _integer(d, f"leaf_{side}", where, 1, 2**31 - 1)
        try:
            mesh = Mesh(d[f"{side}_vertices"], d[f"{side}_faces"], name=_text(d, f"{side}_name", where, side))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: mesh {side}: {exc}") from None
        bvh = build_bvh(mesh, bv, leaf)
        saved = [d.get(f"{side}_{k}") for k in ("nodes_f", "nodes_i", "prim_order")]
        present = [x is not None for x in saved]
        if any(present) and not all(present):
            raise ValueError(f"{where}: the saved tree of mesh {side} is incomplete (nodes_f, nodes_i and prim_order "
                             f"go together)")
        if bvh.kdop is None and all(present):
            try:
                nf, ni, po, depth = validate_tree(bvh.kind, saved[0], saved[1], saved[2], mesh.vertices, mesh.faces,
                                                  leaf, where=f"saved tree of mesh {side}")
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{where}: {exc}") from None
            if not (np.array_equal(nf, bvh.nodes_f) and np.array_equal(ni, bvh.nodes_i)
                    and np.array_equal(po, bvh.prim_order)):
                bvh = BVH(mesh, bv, leaf, nf, ni, po, depth)
        bvhs.append(bvh)
    try:
        pa, pb = as_pose(d["pose_a"], "pose_a"), as_pose(d["pose_b"], "pose_b")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    ans = d.get("answer", np.array([-1, -1, -1]))
    if ans.dtype.kind not in "iu" or ans.shape != (3,):
        raise ValueError(f"{where}: answer: expected 3 integers (hit, pairs, bv_tests), got {ans.dtype} "
                         f"of shape {ans.shape}")
    exp = _integer(d, "expected", where, -1, 1, -1)
    test = _text(d, "test", where) or None
    realign = _text(d, "realign", where, "") or None
    return SavedQuery(bvhs[0], pa, bvhs[1], pb, test, realign, _text(d, "note", where),
                      {"hit": bool(ans[0]), "pairs": int(ans[1]), "bv_tests": int(ans[2])},
                      None if exp < 0 else bool(exp), os.path.abspath(path))


__all__ = ["SavedQuery", "load_query", "save_query", "MAX_QUERY_BYTES"]
