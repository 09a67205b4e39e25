"""Exact primitive kernels (cdcore._prim) against independent references: closed-form
triangle-triangle distances on degenerate triangles (a sphere is a point, a capsule a
segment), exact tessellations (boxes, convex hulls), fine tessellations of curved shapes
(with their tessellation error as tolerance) and coal's analytic shapes."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdcore import _prim
from cdcore._tridist import all_pairs_distance
from cdcore.primitives import KIND_NAMES, Primitive, tessellate

KINDS = KIND_NAMES[:5]
CURVED = ("cylinder", "ellipsoid")
N_AROUND, N_LAT = 64, 32  # the reference tessellation of curved shapes


def _rot(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _pose(rng, spread=0.6):
    T = np.eye(4)
    T[:3, :3] = _rot(rng)
    T[:3, 3] = rng.uniform(-spread, spread, 3)
    return T


def random_prim(rng, kind, spread=0.6):
    if kind == "convex":
        return Primitive("convex", (), _pose(rng, spread), rng.uniform(-0.3, 0.3, (int(rng.integers(4, 12)), 3)))
    size = rng.uniform(0.05, 0.4, 3)
    n = {"sphere": 1, "capsule": 2, "cylinder": 2}.get(kind, 3)
    return Primitive(kind, size[:n], _pose(rng, spread))


def _packed(*prims):
    kind, size, voff, verts = _prim.pack_primitives(list(prims))
    poses = np.ascontiguousarray([p.pose for p in prims])
    return kind, size, voff, verts, poses


def prim_distance(a, b):
    kind, size, voff, verts, poses = _packed(a, b)
    w = np.empty((1, 2, 3))
    d = _prim.prim_pairs_distance(kind, size, voff, verts, poses, np.array([[0, 1]], np.int64), w)[0]
    hit = _prim.prim_pairs_intersect(kind, size, voff, verts, poses, np.array([[0, 1]], np.int64))[0]
    return d, hit, w[0]


def prim_tri(p, tri):
    kind, size, voff, verts, poses = _packed(p)
    wa, wb = np.empty(3), np.empty(3)
    d = _prim.prim_triangle_distance(kind[0], size[0], poses[0], verts, voff[0], voff[1], tri, wa, wb)
    hit = _prim.prim_triangle_intersect(kind[0], size[0], poses[0], verts, voff[0], voff[1], tri)
    return d, hit, wa, wb


def inside(p, x):
    """Whether world points x (n, 3) lie in the solid (reference, closed forms)."""
    loc = (x - p.pose[:3, 3]) @ p.pose[:3, :3]
    r, h, c = p.size
    if p.kind == "sphere":
        return np.linalg.norm(loc, axis=1) <= r
    if p.kind == "capsule":
        z = np.clip(loc[:, 2], -h, h)
        return np.linalg.norm(loc - np.c_[0 * z, 0 * z, z], axis=1) <= r
    if p.kind == "box":
        return np.all(np.abs(loc) <= p.size, axis=1)
    if p.kind == "cylinder":
        return (np.hypot(loc[:, 0], loc[:, 1]) <= r) & (np.abs(loc[:, 2]) <= h)
    if p.kind == "ellipsoid":
        return ((loc / p.size) ** 2).sum(1) <= 1
    from scipy.spatial import Delaunay
    return Delaunay(p.vertices).find_simplex(loc) >= 0


def core_tris(p):
    """Exact reference geometry: (triangles (m, 3, 3), margin). Spheres and capsules are a
    degenerate triangle (point/segment) plus their radius; boxes and hulls their exact
    surface; cylinders and ellipsoids a fine tessellation (inside the solid)."""
    if p.kind in ("sphere", "capsule"):
        h = p.size[1] if p.kind == "capsule" else 0.0
        a = p.pose[:3, 3] - h * p.pose[:3, 2]
        b = p.pose[:3, 3] + h * p.pose[:3, 2]
        return np.array([[a, b, b]]), p.size[0]
    m = tessellate(p, N_AROUND, N_LAT) if p.kind in ("cylinder", "ellipsoid") else tessellate(p)
    return m.triangles(), 0.0


def sagitta(p):
    """Largest gap between the fine tessellation and the true surface (0 when exact)."""
    if p.kind not in ("cylinder", "ellipsoid"):
        return 0.0
    r = p.size.max()
    # a ring step (2 pi / N_AROUND) and a latitude step (pi / N_LAT) both sag by at most
    # r (1 - cos(step / 2)); a triangle spanning both sags by at most their sum
    return r * ((1 - np.cos(np.pi / N_AROUND)) + (1 - np.cos(np.pi / 2 / N_LAT)))


def ref_distance(a, b):
    ta, ra = core_tris(a)
    tb, rb = core_tris(b)
    d = all_pairs_distance(ta, tb).min()
    # containment: a corner of one inside the other
    pa, pb = ta.reshape(-1, 3), tb.reshape(-1, 3)
    if inside(b, pa).any() or inside(a, pb).any():
        d = 0.0
    return max(0.0, d - ra - rb)


@pytest.mark.parametrize("ka", KIND_NAMES)
@pytest.mark.parametrize("kb", KIND_NAMES)
def test_prim_prim_distance_vs_reference(ka, kb):
    if ka in CURVED and kb in CURVED:
        pytest.skip("two curved shapes: fine tessellations are too slow a reference; test_..._vs_coal covers them")
    rng = np.random.default_rng(hash((ka, kb)) % 2 ** 32)
    n_hit = n_miss = 0
    for _ in range(12):
        a, b = random_prim(rng, ka), random_prim(rng, kb)
        d, hit, w = prim_distance(a, b)
        ref = ref_distance(a, b)
        tol = 1e-9 + sagitta(a) + sagitta(b)
        assert ref - tol <= d <= ref + 1e-9, (ka, kb, d, ref)
        if ref > tol:
            assert not hit
            n_miss += 1
            assert np.linalg.norm(w[0] - w[1]) == pytest.approx(d, rel=1e-6, abs=1e-9)
        elif ref == 0.0 or d == 0.0:
            assert hit
            n_hit += 1
    assert n_hit + n_miss >= 6


@pytest.mark.parametrize("kind", KIND_NAMES)
@given(seed=st.integers(0, 2 ** 31))
def test_prim_triangle_vs_reference(kind, seed):
    rng = np.random.default_rng(seed)
    p = random_prim(rng, kind, spread=0.2)
    tri = rng.uniform(-0.6, 0.6, (3, 3))
    if rng.random() < 0.2:  # degenerate triangles are valid
        tri[2] = tri[0] + rng.random() * (tri[1] - tri[0])
    d, hit, wa, wb = prim_tri(p, np.ascontiguousarray(tri))
    tp, rp = core_tris(p)
    ref = all_pairs_distance(tp, tri[None]).min() - rp
    if inside(p, tri).any():
        ref = 0.0
    ref = max(ref, 0.0)
    tol = 1e-9 + sagitta(p)
    assert ref - tol <= d <= ref + 1e-9
    if ref > tol:
        assert not hit
        assert np.linalg.norm(wa - wb) == pytest.approx(d, rel=1e-6, abs=1e-9)
    elif ref == 0.0:
        assert hit
    assert hit == (d == 0.0) or abs(d) <= tol


def test_ellipsoid_triangle_exact_on_grazing():
    """A triangle tangent to an ellipsoid's pole and one just above it."""
    p = Primitive("ellipsoid", (0.3, 0.2, 0.1))
    for z, expect in ((0.1 - 1e-12, True), (0.1 + 1e-9, False)):
        tri = np.array([[-1.0, -1.0, z], [1.0, -1.0, z], [0.0, 1.0, z]])
        assert prim_tri(p, tri)[1] == expect


def _coal_shape(p):
    import coal
    r, h, c = p.size
    if p.kind == "sphere":
        return coal.Sphere(r)
    if p.kind == "capsule":
        return coal.Capsule(r, 2 * h)
    if p.kind == "cylinder":
        return coal.Cylinder(r, 2 * h)
    if p.kind == "box":
        return coal.Box(*(2 * p.size))
    return coal.Ellipsoid(r, h, c)


@pytest.mark.parametrize("ka", KINDS)
@pytest.mark.parametrize("kb", KINDS)
def test_prim_prim_distance_vs_coal(ka, kb):
    coal = pytest.importorskip("coal")
    rng = np.random.default_rng(1 + hash((kb, ka)) % 2 ** 32)
    req = coal.DistanceRequest()
    req.gjk_tolerance = 1e-10
    creq = coal.CollisionRequest()
    n = 0
    for _ in range(40):
        a, b = random_prim(rng, ka), random_prim(rng, kb)
        res = coal.DistanceResult()
        ta = coal.Transform3s(a.pose[:3, :3], a.pose[:3, 3])
        tb = coal.Transform3s(b.pose[:3, :3], b.pose[:3, 3])
        dc = coal.distance(_coal_shape(a), ta, _coal_shape(b), tb, req, res)
        d, hit, _ = prim_distance(a, b)
        cres = coal.CollisionResult()
        hc = coal.collide(_coal_shape(a), ta, _coal_shape(b), tb, creq, cres) > 0
        if dc > 1e-7:
            assert d == pytest.approx(dc, rel=1e-6, abs=1e-8), (ka, kb)
            assert not hit and not hc
            n += 1
        elif dc < -1e-7:
            assert d == 0.0 and hit and hc
            n += 1
    assert n >= 30


def test_primitive_validation():
    with pytest.raises(ValueError, match="kind"):
        Primitive("cone", (1.0,))
    with pytest.raises(ValueError, match="positive"):
        Primitive("capsule", (0.1,))
    with pytest.raises(ValueError, match="positive"):
        Primitive("box", (0.1, -1.0, 0.2))
    with pytest.raises(ValueError, match="finite"):
        Primitive("sphere", (np.nan,))
    with pytest.raises(ValueError, match="rigid"):
        Primitive("sphere", (1.0,), np.diag([2.0, 1, 1, 1]))
    with pytest.raises(ValueError, match="vertices"):
        Primitive("convex", ())
    with pytest.raises(ValueError, match="vertices"):
        Primitive("convex", (), np.eye(4), np.zeros((0, 3)))


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_tessellation_on_the_surface(kind):
    """Every tessellation vertex lies on the true surface: pulled 0.1 % towards the shape's
    centre it is inside, pushed 0.1 % away it is outside (convex: the hull's vertices are
    input points, so only the first)."""
    rng = np.random.default_rng(5)
    p = random_prim(rng, kind)
    m = tessellate(p)
    c = p.pose[:3, 3] if kind != "convex" else m.vertices.mean(0)
    assert inside(p, c + 0.999 * (m.vertices - c)).all()
    if kind != "convex":
        assert not inside(p, c + 1.001 * (m.vertices - c)).any()
