"""Bounding-volume hierarchies over triangle meshes: build, refit, rebuild, inspect."""
from __future__ import annotations

import os

import numpy as np

from . import _layout as L
from ._arrival import writable
from ._build import PAD_REL, build_into, refit_aabb, refit_aabb_parts, refit_tree, refit_tree_parts
from ._build_sah import SPLITS
from ._kdop import build_kdop_arrays, refit_kdop
from ._pack import H_HEIGHT, H_LEAF_CAP, finish_header, new_pack, pack_arrays, views
from .bv import BV_TYPES
from .bv.obb import triangle_moments
from .mesh import Mesh, as_vertices

def _pad(vertices: np.ndarray) -> float:
    """The pad of every volume (``_build.PAD_REL`` times the coordinate scale)."""
    lo, hi = _bounds(vertices)
    return PAD_REL * float(max(np.abs(lo).max(), np.abs(hi).max()) + (hi - lo).max())


def _bounds(vertices):
    # per-column min/max: numpy's axis=0 reductions on (n, 3) are ~10x slower than this
    lo = np.array([vertices[:, i].min() for i in range(3)])
    hi = np.array([vertices[:, i].max() for i in range(3)])
    return lo, hi


class BVH:
    """A binary bounding-volume hierarchy over a mesh's triangles, in flat arrays.

    Attributes
    ----------
    mesh : Mesh
        The mesh at the last build or refit.
    bv : str
        ``"aabb"``, ``"obb"``, ``"sphere"`` or ``"obb_sphere"``.
    nodes_f : (n, 20) float64, read-only
        Per node: box centre, half-extents, axes (3x3 row-major, axes are columns), sphere
        centre and radius, size. See ``cdcore._layout``. AABB trees keep compact rows (box
        and size only) for the kernels: their ``nodes_f`` is those rows spelled out (identity
        axes, no sphere), made when first read after a build or refit (a copy: read it again
        after a refit). ``box_centers()``/``box_extents()`` read the rows without a copy.
    nodes_i : (n, 4) int32, read-only
        Per node: left child, right child (-1: leaf), start and count into ``prim_order``.
    prim_order : (m,) int32, read-only
        Triangle ids ordered so that every node's triangles are contiguous.
    depth : (n,) int32
        Depth of every node (root 0). Children always have larger ids than their parent.
    """

    split = "median"  # the build's split rule (``build_bvh``)

    def __init__(self, mesh: Mesh, bv: str, leaf_size: int, nodes_f, nodes_i, prim_order, depth, kdop=None):
        """A hierarchy from existing arrays (``build_bvh`` builds one). The structure is
        checked first (:func:`cdcore.validate.check_structure`: child ids in range and
        after their parents, leaf ranges and ``prim_order`` a permutation), since the query
        kernels follow it without bounds checks; ``ValueError`` otherwise. The volumes are
        taken as given (``check()`` tests them; ``cdcore.validate.check_volumes`` refuses)."""
        from .validate import check_structure
        if not isinstance(mesh, Mesh):
            raise TypeError(f"mesh: expected cdcore.Mesh, got {type(mesh).__name__}")
        if not isinstance(bv, str) or bv not in BV_TYPES:
            raise ValueError(f"bv: expected one of {sorted(BV_TYPES)}, got {bv!r}")
        nodes_i, prim_order = check_structure(nodes_i, prim_order, mesh.n_faces, None, "BVH")
        nf = np.asarray(nodes_f)
        if nf.dtype.kind != "f" or nf.shape != (len(nodes_i), L.N_FCOLS):
            raise ValueError(f"BVH: nodes_f: expected float ({len(nodes_i)}, {L.N_FCOLS}), got {nf.dtype} {nf.shape}")
        depth = np.asarray(depth)
        if depth.shape != (len(nodes_i),):
            raise ValueError(f"BVH: depth: expected shape ({len(nodes_i)},), got {depth.shape}")
        self.mesh = mesh
        self.bv = bv
        self.kind = BV_TYPES[bv].kind
        self.leaf_size = leaf_size
        self._set_arrays(nodes_f, nodes_i, prim_order, depth, kdop)

    def _set_arrays(self, nodes_f, nodes_i, prim_order, depth, kdop):
        # the packed copy is what the query kernels read (cdcore._pack); the public arrays
        # are views into it, so a refit updates both at once
        self._set_pack(*pack_arrays(self.kind, nodes_f, nodes_i, prim_order, self.mesh.vertices,
                                    self.mesh.faces), depth, kdop)

    def _set_pack(self, F, I, depth, kdop):
        self._F, self._I = F, I
        # writable views for the build/refit kernels; the public ones are read-only, since a
        # child index written from outside could send a query kernel out of bounds
        self._nf, self._ni, self._po, self._v, self._f = views(F, I)
        self._nodes_f, self.nodes_i, self.prim_order = (_read_only(a) for a in (self._nf, self._ni, self._po))
        self._full_f = None  # AABB trees: nodes_f spelled out, made when first read
        self._tri_verts = None  # AABB trees: the faces in primitive order, made at the first refit
        self._split = None  # (threads, order, cuts) of a parallel refit (``refit_split``), made at the first
        self._plan = None  # AABB trees: (threads, table, blocks, cuts) of the refit's sweep (``refit_plan``)
        self.depth = depth
        self.kdop = kdop  # k-DOP types: slabs and realignment data (cdcore.bv.kdop.KdopData)
        self._height = int(depth.max())
        # what a query's buffers are sized by (cdcore.collide._run, cdcore.Query): the largest
        # leaf and the height the kernels read from the pack's header
        self._leaf_cap, self._stack_h = int(I[H_LEAF_CAP]), int(I[H_HEIGHT])

    # ---- pickling (dask workers, process pools) ------------------------------------
    def __getstate__(self):
        # the pack and what cannot be derived from it; its views, caches and refit plans are
        # remade on arrival (pickled one by one, the views would be copies a refit misses)
        return {"mesh": self.mesh, "bv": self.bv, "leaf_size": self.leaf_size, "split": self.split,
                "F": self._F, "I": self._I, "depth": self.depth, "kdop": self.kdop}

    def __setstate__(self, state):
        self.mesh, self.bv, self.leaf_size, self.split = state["mesh"], state["bv"], state["leaf_size"], state["split"]
        self.kind = BV_TYPES[self.bv].kind
        # writable copies: a buffer received from another process (dask's zero-copy frames) is
        # read-only, and the kernels are compiled for writable packs only (one signature each);
        # the checks of ``BVH(...)`` are not repeated: the sender's tree passed them
        self._set_pack(writable(state["F"]), writable(state["I"]), writable(state["depth"]), state["kdop"])

    # ---- construction -------------------------------------------------------------
    @classmethod
    def build(cls, mesh: Mesh, bv: str = "aabb", leaf_size: int = 1, split: str = "median") -> "BVH":
        if not isinstance(mesh, Mesh):
            raise TypeError(f"mesh: expected cdcore.Mesh, got {type(mesh).__name__}")
        if not isinstance(bv, str) or bv not in BV_TYPES:
            raise ValueError(f"bv: expected one of {sorted(BV_TYPES)}, got {bv!r}")
        if isinstance(leaf_size, bool) or not isinstance(leaf_size, (int, np.integer)):
            raise TypeError(f"leaf_size: expected an int, got {type(leaf_size).__name__}")
        if leaf_size < 1:
            raise ValueError(f"leaf_size: must be >= 1, got {leaf_size}")
        if not isinstance(split, str) or split not in SPLITS:
            raise ValueError(f"split: expected one of {sorted(SPLITS)}, got {split!r}")
        self = cls.__new__(cls)
        self.mesh, self.bv, self.kind, self.leaf_size = mesh, bv, BV_TYPES[bv].kind, int(leaf_size)
        self.split = split
        self._build()
        return self

    def _build(self) -> None:
        """Build top-down straight into a new pack (no copy of the finished tree)."""
        mesh, kind = self.mesh, self.kind
        if kind in L.KDOP_KINDS:
            self._set_arrays(*build_kdop_arrays(self.bv, mesh.vertices, mesh.faces, self.leaf_size,
                                                _pad(mesh.vertices), SPLITS[self.split]))
            return
        m = mesh.n_faces
        cap = 2 * m - 1
        F, I = new_pack(kind, cap, mesh.n_vertices, m)
        nf, ni, po, v, f = views(F, I)
        v[:] = mesh.vertices
        f[:] = mesh.faces
        if kind == L.KIND_AABB:
            m1 = m2 = p1 = p2 = np.zeros((1, 6))
            area = np.zeros(1)
        else:
            m1, m2, p1, p2, area = triangle_moments(v, f)
        depth = np.empty(cap, dtype=np.int32)
        n = build_into(kind, SPLITS[self.split], v, f, self.leaf_size, _pad(v), m1, m2, p1, p2, area, nf, ni, po, depth)
        if n < cap:  # leaves of several triangles: fewer nodes than the bound
            F, I = pack_arrays(kind, nf[:n], ni[:n], po, v, f)
            depth = depth[:n].copy()
        else:
            finish_header(I)
        self._set_pack(F, I, depth, None)

    def refit(self, vertices, parallel: bool | None = None) -> None:
        """Refit all volumes to new vertex positions, keeping the topology (one reverse
        loop over the nodes, van den Bergen section 4).

        vertices : (n, 3) float64, same count as the mesh's.
        parallel : bool, optional
            Sweep disjoint subtrees on numba's threads, then the nodes above them
            (``refit_split``; the same volumes bit for bit). None: for trees of at least
            ``PARALLEL_REFIT_NODES`` nodes when numba has more than one thread, the machine
            is not already busy (``_busy``) and no other parallel region is running (a
            refit then runs serially rather than wait); True:
            always (waits for a running parallel region); False: never. k-DOP trees refit
            serially.
        """
        if parallel is not None and not isinstance(parallel, (bool, np.bool_)):
            raise TypeError(f"parallel: expected a bool or None, got {type(parallel).__name__}")
        if self.kind == L.KIND_AABB:
            self._refit_aabb(vertices, parallel)
            return
        self.mesh = self.mesh.with_vertices(vertices)
        self._v[:] = self.mesh.vertices
        self._scaled_cache = None  # the scaled copy holds the old boxes
        if self.kdop is not None:
            refit_kdop(self, _pad(self.mesh.vertices))
            return
        split = self._parallel_split(parallel)
        if split is None:
            whole = np.array([[0, len(self._ni)]], dtype=np.int64)
            refit_tree(self.kind, self._nf, self._ni, self._po, self._v, self._f, _pad(self._v), np.empty((3, 3)),
                       whole, 0, 1)
            return
        try:
            refit_tree_parts(self.kind, self._nf, self._ni, self._po, self._v, self._f, _pad(self._v),
                             np.empty((split[0], 3, 3)), split[1], split[2])
        finally:
            _parallel_lock().release()

    def _refit_aabb(self, vertices, parallel=None) -> None:
        """AABB trees: validation, copies, pad and refit in one compiled call (``refit_aabb``)."""
        src = vertices
        if not (type(src) is np.ndarray and src.dtype == np.float64 and src.ndim == 2
                and src.flags.c_contiguous and src.shape == self._v.shape):
            src = as_vertices(vertices)  # converts, or raises what is wrong
            if src.shape != self._v.shape:
                raise ValueError(f"vertices: expected shape {self._v.shape} (same topology), got {src.shape}")
        if self._tri_verts is None:
            self._tri_verts = np.ascontiguousarray(self._f[self._po])
        out = np.empty(self._v.shape)
        split = self._parallel_split(parallel)
        if split is None:
            plan = self._plan
            if plan is None:  # any tree's plan serves a serial sweep: its blocks in order
                plan = self._plan = (1, *refit_plan(self._ni, self._tri_verts, self._v.shape[0],
                                                    np.array([[0, len(self._ni)]]), np.array([0, 1])))
            code = refit_aabb(src, out, self._F, self._I, self._tri_verts, plan[1], plan[2])
        else:
            try:
                plan = self._plan
                if plan is None or plan[0] != split[0]:
                    plan = self._plan = (split[0], *refit_plan(self._ni, self._tri_verts, self._v.shape[0], split[1],
                                                               split[2]))
                ro = src.view()  # read-only, as a Mesh's own vertices are: one compiled signature
                ro.flags.writeable = False
                code = refit_aabb_parts(ro, out, self._F, self._I, self._tri_verts, *plan[1:])
            finally:
                _parallel_lock().release()
        if code:  # the node rows are untouched; the pack's vertices are put back (the mesh's own)
            self._v[:] = self.mesh.vertices
            as_vertices(src)  # non-finite or out-of-range coordinates: raises, naming them
            raise ValueError("vertices: NaN, infinite or out-of-range coordinates")
        self.mesh = self.mesh._same_faces(out)
        self._full_f = None
        self._scaled_cache = None

    def _parallel_split(self, parallel=None):
        """``(threads, order, cuts)`` when this refit runs on numba's threads (``refit``'s
        ``parallel``; the lock of parallel regions is then held and the caller releases it),
        else None."""
        if parallel is False or (parallel is None and len(self._ni) < PARALLEL_REFIT_NODES):
            return None
        import numba
        threads = numba.get_num_threads()
        if parallel is None and (threads < 2 or _busy(threads)):
            return None
        lock = _parallel_lock()
        # another thread's parallel region: an automatic refit runs serially rather than wait
        if not lock.acquire(blocking=bool(parallel)):
            return None
        split = self._split
        if split is None or split[0] != threads:
            split = self._split = (threads, *refit_split(self._ni, self.depth, threads))
        return split

    def rebuild(self, vertices=None) -> None:
        """Build the hierarchy anew (optionally for new vertex positions)."""
        if vertices is not None:
            self.mesh = self.mesh.with_vertices(vertices)
        self._build()

    def scaled(self, scale) -> "BVH":
        """This hierarchy for the model scaled by ``diag(scale)`` (scale (3,) > 0): AABB trees
        only. A non-uniform scaling is not a deformation (van den Bergen 1998, section 6): the
        boxes of the scaled model are the scaled boxes, exactly, with no refit. The result
        shares the topology and is cached for the last scale asked for (what ``collide`` uses
        for a pose with per-axis scale). Other types raise ``ValueError``: a scaled OBB or
        sphere is no longer one."""
        if self.kind != L.KIND_AABB:
            raise ValueError(f"scaled: per-axis scale is supported for 'aabb' hierarchies only, not "
                             f"bv={self.bv!r} (a scaled oriented box or sphere is not one)")
        s = np.asarray(scale, dtype=np.float64).reshape(3)
        if not (np.all(np.isfinite(s)) and np.all(s > 0)):
            raise ValueError(f"scale: expected 3 finite positive factors, got {scale!r}")
        key = tuple(s.tolist())
        cached = getattr(self, "_scaled_cache", None)
        if cached is not None and cached[0] == key and cached[2] is self._F:
            return cached[1]
        out = BVH.__new__(BVH)
        out.mesh = Mesh(self.mesh.vertices * s, self.mesh.faces, name=self.mesh.name)
        out.bv, out.kind, out.leaf_size, out.split = self.bv, self.kind, self.leaf_size, self.split
        F = self._F.copy()
        out._set_pack(F, self._I, self.depth, None)
        out._nf[:, L.C0:L.C0 + 3] *= s
        out._nf[:, L.E0:L.E0 + 3] *= s
        out._v[:] = out.mesh.vertices
        e = out._nf[:, L.E0:L.E0 + 3]
        m = 1e-3 * e.max(axis=1)  # aabb.box_size: the descend volume of the scaled boxes
        out._nf[:, -1] = 8.0 * (e[:, 0] + m) * (e[:, 1] + m) * (e[:, 2] + m)  # SIZE: the last column
        self._scaled_cache = (key, out, self._F)
        return out

    # ---- inspection ---------------------------------------------------------------
    @property
    def nodes_f(self) -> np.ndarray:
        """(n, N_FCOLS) float64, read-only (see the class docstring)."""
        if self.kind != L.KIND_AABB:
            return self._nodes_f
        full = self._full_f
        if full is None:
            nf = self._nf
            full = np.zeros((len(nf), L.N_FCOLS))
            full[:, L.C0:L.E0 + 3] = nf[:, L.C0:L.E0 + 3]
            full[:, L.R0] = full[:, L.R0 + 4] = full[:, L.R0 + 8] = 1.0
            full[:, L.SIZE] = nf[:, L.AABB_SIZE]
            full.flags.writeable = False
            self._full_f = full
        return full

    @property
    def n_nodes(self) -> int:
        return self.nodes_i.shape[0]

    @property
    def height(self) -> int:
        return self._height

    @property
    def is_leaf(self) -> np.ndarray:
        """(n,) bool."""
        return self.nodes_i[:, L.LEFT] < 0

    @property
    def n_leaves(self) -> int:
        return int(self.is_leaf.sum())

    def node_primitives(self, node: int) -> np.ndarray:
        s, c = self.nodes_i[node, L.START], self.nodes_i[node, L.COUNT]
        return self.prim_order[s:s + c]

    def box_centers(self) -> np.ndarray:
        return self._nodes_f[:, L.C0:L.C0 + 3]

    def box_extents(self) -> np.ndarray:
        return self._nodes_f[:, L.E0:L.E0 + 3]

    def box_axes(self) -> np.ndarray:
        """(n, 3, 3): columns are the box axes."""
        if self.kind == L.KIND_AABB:
            return np.broadcast_to(np.eye(3), (self.n_nodes, 3, 3))  # read-only
        return self.nodes_f[:, L.R0:L.R0 + 9].reshape(-1, 3, 3)

    def sphere_centers(self) -> np.ndarray:
        return self.nodes_f[:, L.S0:L.S0 + 3]

    def sphere_radii(self) -> np.ndarray:
        return self.nodes_f[:, L.SR]

    def box_corners(self, nodes=None) -> np.ndarray:
        """(k, 8, 3) corners of the boxes of ``nodes`` (all by default), in the model frame."""
        idx = np.arange(self.n_nodes) if nodes is None else np.asarray(nodes)
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
        local = signs[None, :, :] * self.box_extents()[idx][:, None, :]
        return self.box_centers()[idx][:, None, :] + np.einsum("nij,nkj->nki", self.box_axes()[idx], local)

    def check(self, rtol: float = 1e-12, children: bool | None = None) -> list[str]:
        """Invariant check (numpy, for tests and the app's insight view); see
        :func:`cdcore.check.check_bvh`. Returns a list of violations."""
        from .check import check_bvh
        errs = check_bvh(self, rtol, children)
        if self.kdop is not None and not errs:
            from .bv.kdop import check_kdop
            errs += check_kdop(self, rtol)
        return errs

    def __repr__(self) -> str:
        return (f"BVH(bv={self.bv!r}, triangles={self.mesh.n_faces}, nodes={self.n_nodes}, "
                f"height={self.height}, leaf_size={self.leaf_size}, split={self.split!r})")


def _read_only(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def build_bvh(mesh: Mesh, bv: str = "aabb", leaf_size: int = 1, split: str = "median") -> BVH:
    """Build a bounding-volume hierarchy top-down (van den Bergen 1998, section 2).

    Parameters
    ----------
    mesh : Mesh
    bv : {"aabb", "obb", "sphere", "obb_sphere", "kdop6", "kdop14", "kdop18", "kdop26"}
        Bounding-volume type. ``"obb_sphere"`` stores an OBB and a sphere per node
        (Chang et al. 2010); ``"sphere"`` uses the spheres only; ``"kdopK"`` builds k-DOPs
        over fixed direction sets, split at the midpoint of the widest slab (node data in
        ``BVH.kdop``, see ``cdcore.bv.kdop``).
    leaf_size : int
        Maximum number of triangles per leaf.
    split : {"median", "mean", "sah", "volume"}
        How a node's triangles are divided (``cdcore._build_sah``): ``"median"`` (default, the
        paper's) cuts the longest box axis (k-DOPs: widest slab) at the box's centre, which keeps
        boxes cube-like; ``"mean"`` cuts the same axis at the mean triangle key, which balances
        counts; ``"sah"`` minimises the surface-area heuristic n_L A(L) + n_R A(R) over 16 bins
        on each of the node's three axes, which minimises the expected overlap tests against a
        randomly placed partner; ``"volume"`` minimises n_L V(L) + n_R V(R), the same for a
        partner much larger than the node. Leaves hold at most ``leaf_size`` triangles with
        every rule.
    """
    return BVH.build(mesh, bv, leaf_size, split)


PARALLEL_REFIT_NODES = 1 << 15  # smaller trees refit in < ~0.3 ms: waking threads would not pay


def _busy(threads: int) -> bool:
    """Whether the machine is already busy: a 1-minute load average above ``threads - 0.5``. A
    threaded sweep ends with its slowest thread, and on a busy machine that thread waits for a
    core (measured on 2 cores at load ~2.5: the threaded AABB refit 1.2-1.7x the serial one's
    time, against ~0.55x on the quiet machine)."""
    try:
        return os.getloadavg()[0] > threads - 0.5
    except OSError:  # no load average on this platform
        return False


def _parallel_lock():
    from .collide import _PARALLEL  # (collide imports this module)
    return _PARALLEL


def refit_split(ni, depth, n_parts: int):
    """The node sweep of a refit split for ``n_parts`` threads: ``(ranges, cuts)`` as
    ``_build.refit_tree_parts`` and ``refit_plan`` take them (runs of consecutive ids; a pre-order tree's subtree
    is its root and one run of descendants). The largest subtree (by triangles, ``COUNT``) is
    replaced by its two children while it holds more than 1/(2 n_parts) of the triangles;
    the subtrees then go to the parts largest first, each to the part with the fewest
    triangles so far (LPT); the replaced nodes are swept last. Each part's runs are ascending and
    swept backwards, so children come first (a child's id exceeds its parent's:
    ``validate.check_structure``)."""
    import heapq
    n = len(ni)
    count = ni[:, L.COUNT].astype(np.int64)
    limit = count[0] / (2 * n_parts)
    heap = [(-int(count[0]), 0)]
    top = []
    while heap:
        c, node = heap[0]
        if -c <= limit or ni[node, L.LEFT] < 0 or len(heap) >= 16 * n_parts:
            break
        heapq.heappop(heap)
        top.append(node)
        for child in (int(ni[node, L.LEFT]), int(ni[node, L.RIGHT])):
            heapq.heappush(heap, (-int(count[child]), child))
    roots = sorted(((-c, node) for c, node in heap), reverse=True)
    label = np.full(n, -1, dtype=np.int64)
    loads = [0] * n_parts
    for c, node in roots:  # LPT
        p = loads.index(min(loads))
        loads[p] += c
        label[node] = p
    label[top] = n_parts
    # every other node takes its parent's label, level by level (a parent is one level up)
    internal = np.flatnonzero(ni[:, L.LEFT] >= 0)
    parent = np.zeros(n, dtype=np.int64)
    parent[ni[internal, L.LEFT]] = internal
    parent[ni[internal, L.RIGHT]] = internal
    by_depth = np.argsort(depth, kind="stable")
    edges = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2))
    for d in range(1, len(edges) - 1):
        nodes = by_depth[edges[d]:edges[d + 1]]
        nodes = nodes[label[nodes] < 0]
        label[nodes] = label[parent[nodes]]
    ranges = []
    cuts = []
    for p in range(n_parts + 1):  # each part's ids as ascending [first, end) runs
        cuts.append(len(ranges))
        ids = np.flatnonzero(label == p)
        if len(ids):
            breaks = np.flatnonzero(np.diff(ids) > 1) + 1
            starts = ids[np.concatenate([[0], breaks])]
            ends = ids[np.concatenate([breaks - 1, [len(ids) - 1]])] + 1
            ranges.extend(zip(starts.tolist(), ends.tolist()))
    return np.array(ranges, dtype=np.int64).reshape(-1, 2), np.array(cuts[:n_parts + 1], dtype=np.int64)


# node ids per block of a refit plan: a block's rows (56 KB) stay in cache from its leaves to its parents
PLAN_BLOCK = 1024


def refit_plan(ni, tri_verts, n_verts: int, ranges, cuts, block: int = PLAN_BLOCK):
    """The AABB refit's node sweep as a table, made once per tree (``_build.refit_aabb``,
    ``refit_aabb_parts``): ``(tab, blocks, bcuts)``.

    The id ranges of ``refit_split``'s parts (``ranges``, ``cuts``; one part ``[[0, n]]``,
    ``[0, 1]`` for a serial sweep) are cut, from their ends down, into blocks of ``block``
    consecutive ids. In each block, ``tab`` (int32, 4 columns) lists its one-triangle leaves
    ``[node, p, q, r]`` (the triangle's vertex ids: the leaf loop streams them instead of
    reading the node's row and then its face), its leaves of several triangles
    ``[node, start, count, 0]`` and its parents ``[node, left, right, 0]``, each kind by
    decreasing id; ``blocks[b]`` (int64) holds the table rows where the block's three kinds
    begin and where it ends. A parent's children have larger ids (``validate.check_structure``),
    so they are in an earlier block or earlier in its own. ``bcuts`` (int64, P + 1): part p is
    blocks ``bcuts[p]:bcuts[p + 1]``, the nodes above the parts ``bcuts[P]:``. The last row of
    ``blocks`` is ``[n_nodes, n_verts, n_faces, len(tab)]``: the kernels refuse a plan made for
    a tree of other sizes, and every id in ``tab`` is checked here against those sizes."""
    ni = np.asarray(ni)
    tri_verts = np.asarray(tri_verts)
    n, m = len(ni), len(tri_verts)
    n_parts = len(cuts) - 1
    ids, win, bcuts = [], [], []
    w = 0
    for p in range(n_parts + 1):
        bcuts.append(w)
        rows = ranges[cuts[p]:cuts[p + 1]] if p < n_parts else ranges[cuts[n_parts]:]
        for a, b in np.asarray(rows, dtype=np.int64).reshape(-1, 2)[::-1].tolist():
            for hi in range(b, a, -block):
                lo = max(a, hi - block)
                ids.append(np.arange(hi - 1, lo - 1, -1))
                win.append(np.full(hi - lo, w))
                w += 1
    ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    win = np.concatenate(win) if win else np.zeros(0, dtype=np.int64)
    if len(ids) != n or (n and (ids.min() < 0 or ids.max() >= n or np.any(np.bincount(ids, minlength=n) != 1))):
        raise ValueError("refit_plan: the ranges do not hold every node once")
    left, right, start, count = (ni[ids, c].astype(np.int64) for c in (L.LEFT, L.RIGHT, L.START, L.COUNT))
    leaf = left < 0
    if (np.any(~leaf & ((left <= ids) | (right <= ids) | (left >= n) | (right >= n)))
            or np.any(leaf & ((start < 0) | (count < 1) | (start + count > m)))
            or (m and (tri_verts.min() < 0 or tri_verts.max() >= n_verts))):
        raise ValueError("refit_plan: node ids or primitive ranges outside the tree")
    kind = np.where(leaf, np.where(count == 1, 0, 1), 2)
    order = np.argsort(win * 3 + kind, kind="stable")  # by block, then kind; decreasing ids within
    ids, kind, left, right, start, count = (a[order] for a in (ids, kind, left, right, start, count))
    tab = np.zeros((n, 4), dtype=np.int32)
    tab[:, 0] = ids
    one = kind == 0
    tab[one, 1:] = tri_verts[start[one]]
    several = kind == 1
    tab[several, 1] = start[several]
    tab[several, 2] = count[several]
    inner = kind == 2
    tab[inner, 1] = left[inner]
    tab[inner, 2] = right[inner]
    per = np.bincount(win[order] * 3 + kind, minlength=3 * w).reshape(w, 3)
    ends = np.cumsum(per.ravel()).reshape(w, 3)
    blocks = np.empty((w + 1, 4), dtype=np.int64)
    blocks[:w, 0] = ends[:, 2] - per.sum(axis=1)
    blocks[:w, 1:] = ends
    blocks[w] = (n, n_verts, m, n)
    return tab, blocks, np.array(bcuts, dtype=np.int64)
