"""Links made of exact primitive solids (spheres, capsules, boxes, cylinders, ellipsoids,
convex hulls) and triangle meshes.

A body with primitives keeps, per link:

* ``Link.mesh`` (what the articulation hierarchy bounds and the app draws): the real
  triangles plus, per primitive, a *proxy*: its tessellation pushed out until it holds the
  solid (so every bounding volume fitted to it holds the true shape);
* ``body.prims`` (:class:`PrimPack`): the primitives in the link frame;
* ``body.real`` (:class:`RealPack`): hierarchies over the real triangles only.

A link pair's exact query (:func:`exact_queries_with_prims`) tests primitive against
primitive (``_prim``: GJK, closed forms), each primitive as a leaf against the other link's
real-mesh hierarchy (``_prim_leaf``), and the real meshes against each other with the
traversal core (``query.exact_queries``). Solids meet solids; a primitive meets a mesh where
it touches one of its triangles (meshes are surfaces, as everywhere in cdcore).
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from .. import shapes
from .._layout import N_STATS
from ..bv import BV_TYPES
from ..bvh import build_bvh
from ..collide import TEST_CODES, CollisionStats
from ..mesh import Mesh
from ..primitives import BOX, CONVEX, CYLINDER, N_AROUND, N_LAT, local_box, tessellate

PRIMITIVE_MODES = ("exact", "tessellate")
PRIMITIVE_BVS = ("aabb", "obb", "obb_sphere")  # box hierarchies: the primitive leaf test descends boxes
PROXY_AROUND, PROXY_LAT = 24, 12


class PrimPack(NamedTuple):
    kind: np.ndarray      # (P,) int32
    size: np.ndarray      # (P, 3)
    local: np.ndarray     # (P, 4, 4) pose in the link frame
    link_off: np.ndarray  # (L + 1,) int32: link i's primitives are link_off[i]:link_off[i+1]
    vert_off: np.ndarray  # (P + 1,) int32 rows of verts (convex)
    verts: np.ndarray     # (V, 3)
    box_c: np.ndarray     # (P, 3) bounding box centre in the primitive frame
    box_e: np.ndarray     # (P, 3) its half extents


class RealPack(NamedTuple):
    nodes_f: np.ndarray
    nodes_i: np.ndarray
    prim_order: np.ndarray
    vertices: np.ndarray
    faces: np.ndarray
    node_off: np.ndarray
    prim_off: np.ndarray
    vert_off: np.ndarray
    has_real: np.ndarray  # (L,) int32: 1 when the link has real triangles
    # (the offsets and has_real are int32 here as in the fused kernel's packed buffer, so that the
    # kernels both reach have one compiled signature)
    max_height: int
    kind: int


def proxy_mesh(prim) -> Mesh:
    """A closed triangle surface holding the primitive solid (link frame): its tessellation
    scaled about the centre by 1 / cos of half the largest facet's angular diagonal (every
    facet's plane then lies outside the inscribed surface), exact for boxes and hulls."""
    k = prim.code
    if k in (BOX, CONVEX):
        return tessellate(prim)
    m = tessellate(prim, PROXY_AROUND, PROXY_LAT)
    da, dl = 2 * np.pi / PROXY_AROUND, np.pi / PROXY_LAT
    s = 1.0 / np.cos(np.pi / PROXY_AROUND) if k == CYLINDER else 1.0 / np.cos(0.5 * np.hypot(da, dl))
    c = prim.pose[:3, 3]
    return Mesh(c + s * (m.vertices - c), m.faces, m.name)


def link_mesh(prims, real) -> Mesh:
    """The link's bounding/drawing mesh: the real triangles and the primitives' proxies."""
    parts = ([real] if real is not None else []) + [proxy_mesh(p) for p in prims]
    return shapes.merge(parts, name=parts[0].name) if len(parts) > 1 else parts[0]


def pack_prims(link_prims) -> PrimPack:
    flat = [p for ps in link_prims for p in ps]
    link_off = np.cumsum([0] + [len(ps) for ps in link_prims]).astype(np.int32)
    P = len(flat)
    kind = np.array([p.code for p in flat], dtype=np.int32).reshape(P)
    size = np.array([p.size for p in flat], dtype=np.float64).reshape(P, 3)
    local = np.array([p.pose for p in flat], dtype=np.float64).reshape(P, 4, 4)
    counts = [0 if p.vertices is None else len(p.vertices) for p in flat]
    vert_off = np.cumsum([0] + counts).astype(np.int32)
    vs = [p.vertices for p in flat if p.vertices is not None]
    verts = np.ascontiguousarray(np.vstack(vs)) if vs else np.zeros((1, 3))
    boxes = [local_box(p) for p in flat]
    box_c = np.array([b[0] for b in boxes], dtype=np.float64).reshape(P, 3)
    box_e = np.array([b[1] for b in boxes], dtype=np.float64).reshape(P, 3)
    return PrimPack(kind, size, local, link_off, vert_off, verts, box_c, box_e)


def pack_real(real_meshes, mesh_bv: str) -> RealPack:
    """Hierarchies over each link's real triangles (a placeholder triangle, never queried,
    for links without any)."""
    has = np.array([m is not None for m in real_meshes], dtype=np.int32)
    bvhs = [build_bvh(m if m is not None else Mesh(np.zeros((3, 3)), np.array([[0, 1, 2]])), mesh_bv)
            for m in real_meshes]
    node_off = np.cumsum([0] + [b.n_nodes for b in bvhs]).astype(np.int32)
    prim_off = np.cumsum([0] + [b.mesh.n_faces for b in bvhs]).astype(np.int32)
    vert_off = np.cumsum([0] + [b.mesh.n_vertices for b in bvhs]).astype(np.int32)
    return RealPack(np.ascontiguousarray(np.vstack([b.nodes_f for b in bvhs])),
                    np.ascontiguousarray(np.vstack([b.nodes_i for b in bvhs])),
                    np.ascontiguousarray(np.concatenate([b.prim_order for b in bvhs])),
                    np.ascontiguousarray(np.vstack([b.mesh.vertices for b in bvhs])),
                    np.ascontiguousarray(np.vstack([b.mesh.faces for b in bvhs])),
                    node_off, prim_off, vert_off, has, max(b.height for b in bvhs), bvhs[0].kind)


def attach(body, link_prims, real_meshes) -> None:
    """Give ``body`` its primitives (list per link of Primitive in the link frame) and
    real-mesh hierarchies (list per link of Mesh or None)."""
    if body.bvhs[0].kind not in (0, 1, 3):  # AABB, OBB, OBB+sphere: the leaf test needs box nodes
        raise ValueError(f"exact primitives need box hierarchies (mesh_bv 'aabb', 'obb' or 'obb_sphere'), got "
                         f"{body.mesh_bv!r}; use primitives='tessellate'")
    body.prims = pack_prims(link_prims)
    body.real = pack_real(real_meshes, body.mesh_bv)
    body.link_primitives = [list(ps) for ps in link_prims]


def _packs(body):
    prims = getattr(body, "prims", None)
    if prims is not None:
        return prims, body.real
    L = body.n_links
    empty = PrimPack(np.zeros(0, np.int32), np.zeros((0, 3)), np.zeros((0, 4, 4)), np.zeros(L + 1, np.int32),
                     np.zeros(1, np.int32), np.zeros((1, 3)), np.zeros((0, 3)), np.zeros((0, 3)))
    real = RealPack(body.nodes_f, body.nodes_i, body.prim_order, body.vertices, body.faces, body.node_off,
                    body.prim_off, body.vert_off, np.ones(L, dtype=np.int32), body.max_height, body.bvhs[0].kind)
    return empty, real


def fused_prim_arrays(body):
    """(floats, ints, dims) the fused self-collision kernel (``_self_kernel._prim_exact``)
    reads for exact primitive links; empty arrays and a zero flag for other bodies. dims:
    real-mesh node, vertex and face counts, primitive count, convex vertex rows, the flag,
    the real meshes' tree height."""
    prims = getattr(body, "prims", None)
    if prims is None:
        z = np.zeros(0)
        return ([z] * 7, [np.zeros(0, np.int32)] * 10, [0, 0, 0, 0, 0, 0, 0])
    r = body.real
    floats = [r.nodes_f, r.vertices, prims.size, prims.local, prims.verts, prims.box_c, prims.box_e]
    ints = [r.nodes_i, r.prim_order, r.faces, r.node_off, r.prim_off, r.vert_off, prims.kind, prims.link_off,
            prims.vert_off, r.has_real.astype(np.int32)]
    dims = [len(r.nodes_f), len(r.vertices), len(r.faces), len(prims.kind), len(prims.verts), 1, r.max_height]
    return floats, ints, dims


def exact_queries_with_prims(body_a, poses_a, body_b, poses_b, pairs, test=None):
    """``run_exact_queries`` for bodies with primitives: (hits (k,) bool, stats, seconds)."""
    from .._prim_leaf import link_pairs_prims
    from .query import exact_queries

    pa, ra = _packs(body_a)
    pb, rb = _packs(body_b)
    pairs = np.ascontiguousarray(pairs, dtype=np.int32).reshape(-1, 2)
    poses_a = np.ascontiguousarray(poses_a, dtype=np.float64)
    poses_b = np.ascontiguousarray(poses_b, dtype=np.float64)
    hits = np.zeros(len(pairs), dtype=np.bool_)
    need = np.zeros(len(pairs), dtype=np.bool_)
    counters = np.zeros(N_STATS, dtype=np.int64)
    t0 = time.perf_counter()
    if len(pairs):
        stack = np.empty(max(ra.max_height, rb.max_height) + 2, dtype=np.int32)
        link_pairs_prims(pairs, poses_a, poses_b, *pa, ra.nodes_f, ra.nodes_i, ra.prim_order, ra.vertices, ra.faces,
                         ra.node_off, ra.prim_off, ra.vert_off, ra.has_real, *pb, rb.nodes_f, rb.nodes_i,
                         rb.prim_order, rb.vertices, rb.faces, rb.node_off, rb.prim_off, rb.vert_off, rb.has_real,
                         stack, hits, need)
        if need.any():
            code, program = TEST_CODES[test or BV_TYPES[body_a.mesh_bv].tests[0]]
            sub = np.ascontiguousarray(pairs[need])
            h2 = np.zeros(len(sub), dtype=np.bool_)
            exact_queries(sub, poses_a, poses_b, ra.kind, code, program, np.zeros(1, dtype=np.int64),
                          ra.nodes_f, ra.nodes_i, ra.prim_order, ra.vertices, ra.faces, ra.node_off, ra.prim_off,
                          ra.vert_off, rb.nodes_f, rb.nodes_i, rb.prim_order, rb.vertices, rb.faces, rb.node_off,
                          rb.prim_off, rb.vert_off, 1,
                          np.empty((ra.max_height + rb.max_height + 2, 2), dtype=np.int32), counters, h2)
            hits[need] = h2
    dt = time.perf_counter() - t0
    return hits, CollisionStats.from_counts(counters, dt), dt


__all__ = ["PrimPack", "RealPack", "PRIMITIVE_MODES", "attach", "exact_queries_with_prims", "fused_prim_arrays",
           "link_mesh",
           "proxy_mesh", "local_box", "N_AROUND", "N_LAT"]
