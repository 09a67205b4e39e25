"""Discrete orientation polytopes (k-DOPs) over fixed direction sets.

A k-DOP (Klosowski et al. 1998; Fünzig & Fellner 2003, section 1, eq. 1-2) is the
intersection of k/2 *slabs* ``lo_i <= D_i . p <= hi_i`` over a fixed set of k/2 unit
directions ``D_i``; the k half-space directions are ``D_0 .. D_{k/2-1}`` followed by their
antiparallel partners ``D_{i+k/2} = -D_i`` (the paper's convention, eq. 2). Directions are
*unit* vectors here (the table realignment measures angles and lengths), so slab widths
along different directions compare directly (the split rule picks the widest one).

Direction sets (all start with the three major axes, so slabs 0..2 are the node's AABB and
the "major" realignment uses them):

``DIRS_KDOP6``   x, y, z                                      -- the AABB (cube normals)
``DIRS_KDOP14``  + the 4 cube-corner diagonals (+-1, +-1, +-1)/sqrt 3
``DIRS_KDOP18``  + the 6 cube-edge diagonals (+-1, +-1, 0)/sqrt 2 (no corners)
``DIRS_KDOP26``  axes + corners + edges

Node data (``KdopData``, one row per node of the flat layout of ``cdcore._layout``):

``slabs``  (n, k) float64  ``[lo_0 .. lo_{k/2-1}, hi_0 .. hi_{k/2-1}]``, grown by the
           build pad (like the AABB's); a parent's slabs are exactly the union of its
           children's (van den Bergen 1998, section 4: k-DOPs merge exactly like AABBs).
Table-realignment data (Fünzig & Fellner section 3.1), per node, for each of the k
half-space directions h (``h < k/2``: ``+D_h``; ``h >= k/2``: ``-D_{h-k/2}``); ``center``,
``hrel`` and ``rho`` are views of one array ``tab`` (n, 3 + 3k), one row per node, which
is what the traversal reads (its last k columns: the occupancy words of the paper-faithful
angle-spaced rings, ``bv.kdop_angle``):
``center`` (n, 3)        rotation centre c: the mean of the node's triangles' vertices;
``hrel``   (n, k)        ``d_h - D_h . c``: distance from c to the supporting plane (>= pad);
``occ``    (n, k) uint32 occupancy bits: bit j-1 set when a vertex direction (p - c)/|p - c|
                         lies in cone ring R_j (j = 1 .. n-1) around D_h, bit n-1 (31) when
                         one lies in the remaining region R_n (cosine < aperture a);
``outer``  (n, k) int32  the outermost occupied cone ring (highest set bit among 0..30,
                         as a ring number 1..31; 0: none): the only bit the factor needs,
                         because the (conservative) table rows are non-decreasing in the
                         ring index, so the scan of eq. 6-7 stops at the first set bit
                         from the outside (see ``ring_table``);
``rho``    (n, k)        the largest "projected length l_p of (p - c) onto the shell of the
                         outermost ring" over vertices in the remaining region R_n (section
                         3.1): l_p = |q| cos(phi - theta_{n-1}), the projection onto the cone
                         boundary direction in q's azimuth (clamped at 0; + pad). The paper
                         stores r_i = d_i / max l_p (eq. 4); ``ratio()`` returns it.
The table data is refreshed lazily after a refit (``ensure_table``): the "major" and
"all" realignments need only the slabs.

The bounding-volume columns of ``nodes_f`` are filled too (box = the AABB of slabs 0..2,
identity axes; sphere around the node; SIZE = the box size), so the generic checker,
the descend rule and the app's box/sphere views work unchanged.
"""
from __future__ import annotations

import itertools
import math
import threading

import numpy as np
from numba import njit

from .._arrival import writable
from .._layout import KIND_KDOP6, KIND_KDOP14, KIND_KDOP18, KIND_KDOP26

_AXES = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
_CORNERS = [(1.0, 1.0, 1.0), (1.0, 1.0, -1.0), (1.0, -1.0, 1.0), (-1.0, 1.0, 1.0)]
_EDGES = [(1.0, 1.0, 0.0), (1.0, 0.0, 1.0), (0.0, 1.0, 1.0), (1.0, -1.0, 0.0), (1.0, 0.0, -1.0),
          (0.0, 1.0, -1.0)]
_AXIS_LABELS = ["x", "y", "z"]
_CORNER_LABELS = ["x+y+z", "x+y-z", "x-y+z", "-x+y+z"]
_EDGE_LABELS = ["x+y", "x+z", "y+z", "x-y", "x-z", "y-z"]


def _unit(rows):
    d = np.array(rows, dtype=np.float64)
    return np.ascontiguousarray(d / np.linalg.norm(d, axis=1)[:, None])


DIRS_KDOP6 = _unit(_AXES)
DIRS_KDOP14 = _unit(_AXES + _CORNERS)
DIRS_KDOP18 = _unit(_AXES + _EDGES)
DIRS_KDOP26 = _unit(_AXES + _CORNERS + _EDGES)

KDOP_DIRS = {"kdop6": DIRS_KDOP6, "kdop14": DIRS_KDOP14, "kdop18": DIRS_KDOP18, "kdop26": DIRS_KDOP26}
KDOP_KIND = {"kdop6": KIND_KDOP6, "kdop14": KIND_KDOP14, "kdop18": KIND_KDOP18, "kdop26": KIND_KDOP26}
KIND_TO_NAME = {v: k for k, v in KDOP_KIND.items()}

# Trace/histogram axis ids of a k-DOP query: the index i (0 .. k/2-1) of A's slab direction
# D_i that separated the pair first (slabs are tested in this order).
KDOP_AXIS_NAMES = {
    "kdop6": _AXIS_LABELS,
    "kdop14": _AXIS_LABELS + _CORNER_LABELS,
    "kdop18": _AXIS_LABELS + _EDGE_LABELS,
    "kdop26": _AXIS_LABELS + _CORNER_LABELS + _EDGE_LABELS,
}

# Table 1 of Fünzig & Fellner: aperture a of the direction cones (cosine); the values
# ``aperture()`` computes must agree with these (tests/test_kdop_realign.py).
TABLE1_APERTURE = {"kdop6": 0.57735, "kdop14": 0.806898, "kdop18": 0.816497, "kdop26": 0.886452}
# Table 1's 12-DOP (dodecahedron): the 12 face normals of a regular dodecahedron, i.e. the 6
# directions to the vertices of an icosahedron (0, +-1, +-phi) and cyclic. Not a hierarchy
# type (no node layout); only its aperture is reproduced. The paper prints 0.787539, the
# exact covering cosine is 0.794654 (inradius / circumradius; see ``cdcore-bench tables``).
_PHI = (1.0 + 5 ** 0.5) / 2.0
DIRS_DODECA12 = _unit([(0.0, 1.0, _PHI), (0.0, -1.0, _PHI), (1.0, _PHI, 0.0), (-1.0, _PHI, 0.0), (_PHI, 0.0, 1.0),
                       (_PHI, 0.0, -1.0)])
TABLE1_PAPER_KDOP12 = 0.787539
TABLE1_DIRS = {"kdop6": DIRS_KDOP6, "kdop12": DIRS_DODECA12, "kdop14": DIRS_KDOP14, "kdop18": DIRS_KDOP18,
               "kdop26": DIRS_KDOP26}

# n of section 3.1: rings R_1 .. R_{n-1} inside the cone, R_n the remaining directions; one
# bit per ring in an unsigned 32-bit word.
N_RINGS = 32

# Angular slack (radians) added to every ring boundary when the factor table is built: a
# direction whose cosine lands a rounding error on the wrong side of a ring boundary is
# still covered. Cosines carry <= ~4 ulps (1e-15) of error; ring boundaries sit at angles
# >= theta_1 >= 0.08 rad (a_1 <= 1 - (1 - 0.8865)/31), where d(theta) = d(cos)/sin(theta)
# <= 1.3e-14 rad; 1e-9 rad is far above that and changes the factors by ~1e-9 only.
TABLE_ANGLE_EPS = 1e-9
# The aperture used for the cones is the exact covering cosine less this margin, so that
# every unit direction (even with a rounded cosine) has some D_h with cosine >= a.
APERTURE_MARGIN = 1e-12
# Table entries are grown by this relative amount to absorb the rounding of cos/tan/divide
# in their own evaluation (each a few ulps, ~1e-15).
TABLE_REL_PAD = 1e-13


def signed_dirs(dirs: np.ndarray) -> np.ndarray:
    """(k, 3): the k half-space directions D_0..D_{k/2-1}, -D_0..-D_{k/2-1}."""
    return np.ascontiguousarray(np.vstack([dirs, -dirs]))


def _hull_facets(points: np.ndarray, tol: float = 1e-9):
    """Facets of the convex hull of points on the unit sphere, by brute force over triples
    (k <= 26: at most 2600 triples). Returns a list of (unit normal, offset, sorted point
    ids on the facet); a facet with more than three coplanar points appears once.
    ``tol``: the direction sets are exact up to rounding (1e-16), while distinct planes
    through them differ by > 1e-2 in offset, so 1e-9 separates "on the plane" from "off"
    and degenerate (collinear) triples (cross product < 1e-9) from real ones."""
    facets = {}
    k = len(points)
    for i, j, l in itertools.combinations(range(k), 3):
        n = np.cross(points[j] - points[i], points[l] - points[i])
        nn = np.linalg.norm(n)
        if nn < 1e-9:
            continue
        n = n / nn
        off = float(n @ points[i])
        if off < 0:
            n, off = -n, -off
        side = points @ n - off
        if np.all(side <= tol):
            ids = tuple(np.flatnonzero(np.abs(side) <= tol).tolist())
            facets.setdefault(ids, (n, off))
    return [(n, off, ids) for ids, (n, off) in facets.items()]


_APERTURES: dict = {}


def aperture(bv: str) -> float:
    """The largest a such that every unit direction u has max_h u . D_h >= a over the k
    half-space directions (the cosine of the covering radius, Table 1 of Fünzig & Fellner).
    The minimum of max_h u . D_h is attained at a vertex of the spherical Voronoi diagram,
    i.e. at the circumcentre of a facet of the directions' convex hull, where the cosine is
    the facet plane's offset from the origin."""
    if bv not in _APERTURES:
        _APERTURES[bv] = aperture_of(KDOP_DIRS[bv])
    return _APERTURES[bv]


def aperture_of(dirs: np.ndarray) -> float:
    """``aperture`` of any set of slab directions (k/2, 3) (unit rows)."""
    return min(off for _, off, _ in _hull_facets(signed_dirs(np.asarray(dirs, dtype=np.float64))))


# ---- realignment tables ---------------------------------------------------------------
class RingTable:
    """The 2-D factor table of section 3.1 for one direction set (built once per k).

    Cone rings around a direction D_h: ``a_j = 1 - j (1 - a)/(n - 1)`` (j = 0 .. n-1) and
    ``R_j = {u : a_{j-1} >= u . D_h >= a_j}`` with angle bounds ``theta_j = acos a_j``;
    ``R_n`` the rest.

    ``T[m, j]`` (m = 1 .. n-1: the ring of the rotated direction D' relative to D_h;
    j = 1 .. n-1: the outermost occupied ring) bounds ``D'.q / (D_h.q)_max`` for every
    vertex offset q = p - c whose direction lies in ring j. Derivation (conservative, no
    approximation): with phi = angle(q, D_h) and theta' = angle(D', D_h), the spherical
    triangle inequality gives angle(q, D') >= |phi - theta'|, so
    ``D'.q <= |q| cos(phi - theta')``, and ``|q| cos phi = D_h.q <= hrel``; hence
    ``D'.q <= hrel * cos(phi - theta')/cos(phi) = hrel * (cos theta' + sin theta' tan phi)``,
    increasing in phi. So the worst point of ring j sits on its outer edge theta_j and the
    worst D' of ring m at the angle of ring m nearest theta_j:
    ``T[m, j] = cos(dist(theta_j, [theta_{m-1}, theta_m])) / cos(theta_j)``
    (boundaries widened by ``TABLE_ANGLE_EPS``). The rows are non-decreasing in j (the
    expression is increasing in theta_j), which is the monotonicity the paper uses to stop
    the search of eq. 6-7 at the first set bit; rows are nevertheless passed through a
    running maximum so that the kernel's "outermost ring only" lookup is conservative by
    construction. ``T[m, 0] = 0`` (no occupied ring).

    ``TN[m]`` is the factor of eq. 5 for the remaining region R_n, to be multiplied by rho
    (the largest shell projection l_p = |q| cos(phi - theta_{n-1}) there): with
    alpha = phi - theta_{n-1} >= 0 and beta = theta_{n-1} - theta' >= 0,
    ``cos(alpha + beta) = cos alpha cos beta - sin alpha sin beta <= cos alpha cos beta``
    (both sines >= 0), so ``D'.q <= |q| cos(phi - theta') <= l_p cos(theta_{n-1} - theta_m)``.

    Note: the paper's own entries (``a_{h-1}/a_{m-h}``, ``a_{h-1}/a_{m+h}`` and
    ``a_{(n-2)-m}/r_i``) approximate the cosine of an angle difference by a ring cosine
    with the index difference; since the rings are equally spaced in cosine, not in angle,
    that underestimates the cosine (e.g. k = 6, m = 22, h = 8: a_7 = 0.904 against
    cos(theta_30 - theta_22) = 0.990) and a point on the slab face escapes the realigned
    k-DOP. ``paper_factor`` reproduces those entries for comparison only.
    """

    def __init__(self, a: float, n: int = N_RINGS):
        self.a = a
        self.n = n
        j = np.arange(n)
        self.acos = 1.0 - j * (1.0 - a) / (n - 1)  # a_0 = 1 .. a_{n-1} = a
        self.theta = np.arccos(np.clip(self.acos, -1.0, 1.0))
        eps = TABLE_ANGLE_EPS
        th = self.theta
        T = np.zeros((n, n))
        TN = np.zeros(n)
        for m in range(1, n):
            lo_m = max(th[m - 1] - eps, 0.0)
            hi_m = th[m] + eps
            for jj in range(1, n):
                phi = th[jj] + eps
                dist = max(0.0, phi - hi_m, lo_m - phi)
                T[m, jj] = math.cos(dist) / math.cos(phi)
            T[m] = np.maximum.accumulate(T[m])
            TN[m] = math.cos(max(0.0, (th[n - 1] - eps) - hi_m))
        self.T = np.ascontiguousarray(T * (1.0 + TABLE_REL_PAD))
        self.TN = np.ascontiguousarray(TN * (1.0 + TABLE_REL_PAD))
        # the inverse ring width 1/delta used to find a cosine's ring: j = ceil((1 - cos)/delta)
        self.inv_delta = (n - 1) / (1.0 - a)

    def ring_of(self, cosine):
        """Ring number (1 .. n-1) of a direction with this cosine to D_h (n: remaining)."""
        c = np.asarray(cosine, dtype=np.float64)
        j = np.ceil((1.0 - c) * self.inv_delta).astype(np.int64)
        j = np.clip(j, 1, self.n - 1)
        return np.where(c >= self.a, j, self.n)

    def paper_factor(self, m: int, occ: int, r: float) -> float:
        """The literal factor of eq. 5-7 (for comparison; NOT conservative, see above):
        ``f = a_{(n-2)-m}/r`` if bit n is set, else ``a``; then the max with
        ``a_{h-1}/a_{m-h}`` for set inner bits and ``a_{h-1}/a_{m+h}`` for set outer bits."""
        n, A = self.n, self.acos

        def acc(i):
            return A[min(max(i, 0), n - 1)]

        f = acc((n - 2) - m) / r if (occ >> (n - 1)) & 1 and r > 0 else self.a
        for h in range(0, m):  # inner rings m - h (eq. 6)
            if (occ >> (m - h - 1)) & 1:
                f = max(f, acc(h - 1) / acc(m - h))
        for h in range(1, n - 1 - m):  # outer rings m + h (eq. 7)
            if (occ >> (m + h - 1)) & 1:
                f = max(f, acc(h - 1) / acc(m + h))
        return f


class FacetTable:
    """The unit DOP's vertices (all d_i = 1) and the triples of half-space directions that
    support them (Zachmann 1998, as used in Fünzig & Fellner section 2, eq. 3).

    A vertex of the unit DOP is dual to a facet of the convex hull of the k directions; its
    normal cone is spanned by that facet's directions. For a rotated direction D' the
    unit-DOP vertex maximising D'.v (``vert``) names the facet, and a triangle (h1, h2, h3)
    of that facet with ``D' = sum lambda_h D_h``, lambda >= 0, gives by weak LP duality
    ``D'.p = sum lambda_h D_h.p <= sum lambda_h d_h`` for *every* k-DOP, whether or not its
    combinatorics match the unit DOP's. ``inv[t]`` maps D' to lambda for triangle t (the
    inverse of the triangle's direction matrix: the "k inversions", here done once per k
    in B's frame, where the directions are fixed). Facets with more than three coplanar
    directions list every triple; the kernel keeps the triple with the largest min lambda.
    """

    def __init__(self, dirs: np.ndarray):
        k2 = len(dirs)
        sd = signed_dirs(dirs)
        facets = _hull_facets(sd)
        verts, starts, slab, sign, inv = [], [0], [], [], []
        for n, off, ids in facets:
            verts.append(n / off)
            for tri in itertools.combinations(ids, 3):
                S = sd[list(tri)]  # rows are directions
                if abs(np.linalg.det(S)) < 1e-9:  # coplanar with the origin (cannot happen for
                    continue  # a facet with offset > 0; kept as a guard against a singular inverse)
                inv.append(np.linalg.inv(S.T))  # lambda = inv @ D'
                slab.append([h % k2 for h in tri])
                sign.append([1.0 if h < k2 else -1.0 for h in tri])
            starts.append(len(inv))
        self.vert = np.ascontiguousarray(np.array(verts))
        self.start = np.array(starts, dtype=np.int64)
        self.slab = np.ascontiguousarray(np.array(slab, dtype=np.int64))
        self.sign = np.ascontiguousarray(np.array(sign))
        self.inv = np.ascontiguousarray(np.array(inv))


_RING_TABLES: dict = {}
_FACET_TABLES: dict = {}


def ring_table(bv: str) -> RingTable:
    if bv not in _RING_TABLES:
        _RING_TABLES[bv] = RingTable(aperture(bv) - APERTURE_MARGIN)
    return _RING_TABLES[bv]


def facet_table(bv: str) -> FacetTable:
    if bv not in _FACET_TABLES:
        _FACET_TABLES[bv] = FacetTable(KDOP_DIRS[bv])
    return _FACET_TABLES[bv]


# ---- per-node data ----------------------------------------------------------------------
class KdopData:
    """k-DOP node arrays of one hierarchy (see the module docstring)."""

    def __init__(self, bv: str, slabs: np.ndarray, scale: float, pad: float):
        self.bv = bv
        self.pad = pad  # the absolute pad of the slabs (``bvh._pad``)
        self.dirs = KDOP_DIRS[bv]
        self.k = 2 * len(self.dirs)
        self.slabs = slabs
        self.scale = scale  # max |v| + largest extent of the mesh: the padding scale
        n = slabs.shape[0]
        # one row per node for the traversal: [centre (3), hrel (k), rho (k), occupancy of
        # the angle-spaced rings (k, as floats; ``bv.kdop_angle``)]
        self.tab = np.zeros((n, 3 + 3 * self.k))
        self.occ = np.zeros((n, self.k), dtype=np.uint32)
        self.outer = np.zeros((n, self.k), dtype=np.int32)
        self.table_valid = False
        # held while the table data is fitted (``_kdop.ensure_table``): queries from several
        # threads after a refit fit it once, and none reads it half-fitted
        self.table_lock = threading.Lock()

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "table_lock"}

    def __setstate__(self, state):
        # from another process: arrays writable again (a received buffer is read-only; the
        # kernels are compiled for writable ones), the directions the module's own, and the
        # query tables (a cache of module tables) remade on first use
        self.__dict__.update(writable({k: v for k, v in state.items() if not k.startswith("_query_tables")}))
        self.dirs = KDOP_DIRS[self.bv]
        self.table_lock = threading.Lock()

    @property
    def center(self) -> np.ndarray:
        return self.tab[:, :3]

    @property
    def hrel(self) -> np.ndarray:
        return self.tab[:, 3:3 + self.k]

    @property
    def rho(self) -> np.ndarray:
        return self.tab[:, 3 + self.k:3 + 2 * self.k]

    @property
    def occ_angle(self) -> np.ndarray:
        """(n, k) uint32 occupancy bits of the angle-spaced rings (``bv.kdop_angle``)."""
        return self.tab[:, 3 + 2 * self.k:].astype(np.uint32)

    @property
    def lo(self) -> np.ndarray:
        return self.slabs[:, : self.k // 2]

    @property
    def hi(self) -> np.ndarray:
        return self.slabs[:, self.k // 2:]

    def ratio(self) -> np.ndarray:
        """(n, k) the paper's r_i = d_i / max |p - c| over the remaining region (eq. 4),
        inf where that region holds no vertex."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.rho > 0, self.hrel / np.where(self.rho > 0, self.rho, 1.0), np.inf)


# ---- njit kernels on one node -----------------------------------------------------------
@njit(cache=True)
def project_vertices(dirs, verts):
    """(nv, k/2): every vertex projected onto every direction (one fixed arithmetic
    order, shared by build and refit so that they agree bit for bit)."""
    nv = verts.shape[0]
    k2 = dirs.shape[0]
    out = np.empty((nv, k2))
    for v in range(nv):
        x = verts[v, 0]
        y = verts[v, 1]
        z = verts[v, 2]
        for i in range(k2):
            out[v, i] = dirs[i, 0] * x + dirs[i, 1] * y + dirs[i, 2] * z
    return out


@njit(cache=True)
def fit_prims(slabs, node, proj, faces, prim_order, start, count, pad):
    """Tight slabs of the node's triangles (the k-DOP of their vertices), grown by
    ``pad`` on every side (the same absolute pad as the boxes: it absorbs the rounding of
    the projections, ~1 ulp of the coordinate scale)."""
    k2 = proj.shape[1]
    for i in range(k2):
        slabs[node, i] = np.inf
        slabs[node, k2 + i] = -np.inf
    for kk in range(start, start + count):
        f = prim_order[kk]
        for c in range(3):
            v = faces[f, c]
            for i in range(k2):
                x = proj[v, i]
                if x < slabs[node, i]:
                    slabs[node, i] = x
                if x > slabs[node, k2 + i]:
                    slabs[node, k2 + i] = x
    for i in range(k2):
        slabs[node, i] -= pad
        slabs[node, k2 + i] += pad


@njit(cache=True)
def merge(slabs, node, left, right):
    """Exact k-DOP of two children's k-DOPs (their padding is inherited)."""
    k2 = slabs.shape[1] // 2
    for i in range(k2):
        slabs[node, i] = min(slabs[left, i], slabs[right, i])
        slabs[node, k2 + i] = max(slabs[left, k2 + i], slabs[right, k2 + i])


@njit(cache=True)
def widest_slab(slabs, node):
    """Index of the widest slab (the longest k-DOP direction; ties: lowest index)."""
    k2 = slabs.shape[1] // 2
    best = 0
    w = slabs[node, k2] - slabs[node, 0]
    for i in range(1, k2):
        wi = slabs[node, k2 + i] - slabs[node, i]
        if wi > w:
            w = wi
            best = i
    return best


@njit(cache=True)
def fit_table_node(dirs, node, verts, faces, prim_order, start, count, slabs, tab, occ, outer, pad, a,
                   inv_delta, n_rings):
    """Section 3.1, second construction pass, for one node: rotation centre, distances to
    the supporting planes, occupancy bits of the cone rings and the largest shell
    projection in the remaining region, for all k half-space directions. ``tab`` rows are
    [centre (3), hrel (k), rho (k)]."""
    k2 = dirs.shape[0]
    k = 2 * k2
    H = 3  # hrel columns
    P = 3 + k  # rho columns
    cx = cy = cz = 0.0
    for kk in range(start, start + count):
        f = prim_order[kk]
        for c in range(3):
            v = faces[f, c]
            cx += verts[v, 0]
            cy += verts[v, 1]
            cz += verts[v, 2]
    nvt = 3.0 * count
    cx /= nvt
    cy /= nvt
    cz /= nvt
    tab[node, 0] = cx
    tab[node, 1] = cy
    tab[node, 2] = cz
    for i in range(k2):
        dc = dirs[i, 0] * cx + dirs[i, 1] * cy + dirs[i, 2] * cz
        # the slabs carry the pad, so hrel >= pad > 0 even when c lies on a face
        tab[node, H + i] = slabs[node, k2 + i] - dc
        tab[node, H + k2 + i] = dc - slabs[node, i]
    for h in range(k):
        occ[node, h] = 0
        tab[node, P + h] = 0.0
    top = n_rings - 1  # ring n (the remaining region) is bit n-1
    sa = math.sqrt(max(0.0, 1.0 - a * a))  # sin of the cone's half-angle theta_{n-1}
    for kk in range(start, start + count):
        f = prim_order[kk]
        for c in range(3):
            v = faces[f, c]
            qx = verts[v, 0] - cx
            qy = verts[v, 1] - cy
            qz = verts[v, 2] - cz
            L = math.sqrt(qx * qx + qy * qy + qz * qz)
            if L == 0.0:
                continue  # at the centre: contributes 0 <= any bound
            for i in range(k2):
                sp = dirs[i, 0] * qx + dirs[i, 1] * qy + dirs[i, 2] * qz
                cs = sp / L
                lperp = math.sqrt(max(0.0, L * L - sp * sp))  # distance from the axis c + s D_i
                for s in range(2):
                    h = i if s == 0 else k2 + i
                    cos_h = cs if s == 0 else -cs
                    if cos_h >= a:
                        j = int(math.ceil((1.0 - cos_h) * inv_delta))
                        if j < 1:
                            j = 1
                        if j > top:
                            j = top
                        occ[node, h] |= np.uint32(1) << np.uint32(j - 1)
                    else:
                        occ[node, h] |= np.uint32(1) << np.uint32(top)
                        # l_p: projection of q onto the cone's shell direction in q's azimuth,
                        # |q| cos(phi - theta_{n-1}) = a (D_h . q) + sin(theta_{n-1}) |q_perp|
                        lp = a * (sp if s == 0 else -sp) + sa * lperp
                        if lp > tab[node, P + h]:
                            tab[node, P + h] = lp
    for h in range(k):
        if tab[node, P + h] > 0.0:
            tab[node, P + h] += pad  # the same pad as the slabs (rounding of q, |q|, l_p)
        w = occ[node, h] & ((np.uint32(1) << np.uint32(top)) - np.uint32(1))
        j = 0
        while w != 0:
            w >>= np.uint32(1)
            j += 1
        outer[node, h] = j


# ---- invariant checker (plain numpy; tests and the app's insight view) --------------------
def check_kdop(bvh, rtol: float = 1e-12, tight: bool = True) -> list[str]:
    """k-DOP invariants of a hierarchy, on top of ``cdcore.check.check_bvh``: every node's
    slabs contain its vertices' projections (within ``rtol`` of the mesh scale) and, with
    ``tight``, equal their min/max grown by the pad (true after a build and after a refit:
    the merge is exact); parents contain their children; the box columns are slabs 0..2;
    and, when the table data is current, the rotation centre is the vertex mean, ``hrel``
    matches the slabs, ``outer`` is the highest ring bit of ``occ`` and every vertex is
    covered: a vertex in cone ring j of direction h has bit j-1 set and j <= outer, one in
    the remaining region has bit 31 set and its shell projection l_p <= rho."""
    from .. import _layout as L
    kd = bvh.kdop
    errs: list[str] = []
    v, f = bvh.mesh.vertices, bvh.mesh.faces
    tol = rtol * float(np.abs(v).max() + np.ptp(v, axis=0).max()) + 1e-300
    n, k2 = bvh.n_nodes, len(kd.dirs)
    if kd.slabs.shape != (n, 2 * k2) or not np.all(np.isfinite(kd.slabs)):
        return [f"slabs: expected a finite ({n}, {2 * k2}) array"]
    lo, hi = kd.lo, kd.hi
    if np.any(lo > hi):
        errs.append("a slab has lo > hi")
    proj = v @ kd.dirs.T
    ni = bvh.nodes_i
    for i in range(n):
        pp = proj[f[bvh.node_primitives(i)].ravel()]
        pmin, pmax = pp.min(axis=0), pp.max(axis=0)
        miss = max((lo[i] - pmin).max(), (pmax - hi[i]).max())
        if miss > tol:
            errs.append(f"node {i}: k-DOP misses a vertex by {miss:.3g}")
        elif tight:
            loose = max(np.abs(lo[i] - (pmin - kd.pad)).max(), np.abs(hi[i] - (pmax + kd.pad)).max())
            if loose > tol:
                errs.append(f"node {i}: k-DOP is not tight (off by {loose:.3g})")
        if ni[i, L.LEFT] >= 0:
            for c in (ni[i, L.LEFT], ni[i, L.RIGHT]):
                out = max((lo[i] - lo[c]).max(), (hi[c] - hi[i]).max())
                if out > tol:
                    errs.append(f"node {i}: child {c}'s k-DOP pokes out by {out:.3g}")
    box_lo = bvh.box_centers() - bvh.box_extents()
    box_hi = bvh.box_centers() + bvh.box_extents()
    if max(np.abs(box_lo - lo[:, :3]).max(), np.abs(box_hi - hi[:, :3]).max()) > tol:
        errs.append("box columns differ from slabs 0..2")
    if errs or not kd.table_valid:
        return errs
    rt = ring_table(kd.bv)
    sd = signed_dirs(kd.dirs)
    top = rt.n - 1
    for i in range(n):
        pts = v[f[bvh.node_primitives(i)].ravel()]
        c = pts.mean(axis=0)
        if np.abs(c - kd.center[i]).max() > tol:
            errs.append(f"node {i}: rotation centre is not the vertex mean")
            continue
        href = np.concatenate([hi[i] - kd.dirs @ c, kd.dirs @ c - lo[i]])
        if np.abs(href - kd.hrel[i]).max() > tol:
            errs.append(f"node {i}: hrel does not match the slabs")
        occ = kd.occ[i].astype(np.int64)
        low = occ & ((1 << top) - 1)
        hsb = np.array([int(x).bit_length() for x in low])
        if not np.array_equal(hsb, kd.outer[i]):
            errs.append(f"node {i}: outer is not the highest ring bit of occ")
        q = pts - c
        L_ = np.linalg.norm(q, axis=1)
        q, L_ = q[L_ > 0], L_[L_ > 0]
        if len(q) == 0:
            continue
        cos = (q @ sd.T) / L_[:, None]  # (p, k)
        # a cosine within 1e-9 of a ring boundary may be filed in either ring: accept both
        inner = cos >= rt.a + 1e-9
        r_lo = np.ceil((1.0 - (cos + 1e-9)) * rt.inv_delta).astype(np.int64).clip(1, top)
        r_hi = np.ceil((1.0 - (cos - 1e-9)) * rt.inv_delta).astype(np.int64).clip(1, top)
        bit_set = (((occ[None, :] >> (r_lo - 1)) & 1) | ((occ[None, :] >> (r_hi - 1)) & 1))
        if np.any(inner & ((bit_set == 0) | (r_lo > kd.outer[i][None, :]))):
            errs.append(f"node {i}: a vertex's cone ring is not marked")
        rem = cos < rt.a - 1e-9
        sin = np.sqrt(np.clip(1.0 - cos * cos, 0.0, None))
        lp = L_[:, None] * (rt.a * cos + np.sqrt(1.0 - rt.a ** 2) * sin)
        if np.any(rem) and (np.any(rem & (((occ[None, :] >> top) & 1) == 0))
                            or np.any(rem & (lp > kd.rho[i][None, :] + tol))):
            errs.append(f"node {i}: a vertex of the remaining region is not covered")
    return errs
