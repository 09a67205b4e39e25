"""Tests for cdcore.shapes: topology (closed, oriented 2-manifolds), sizes and the special properties."""
import numpy as np
import pytest

from cdcore import Mesh
from cdcore import shapes as S


# ----------------------------------------------------------------------------- helpers

def _edges(faces):
    """Directed edges (3m, 2) in face order."""
    return faces.astype(np.int64)[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)


def signed_volume(vertices, faces):
    """Divergence theorem: sum of signed tetrahedra (origin, triangle)."""
    t = vertices[faces]
    return float(np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum() / 6.0)


def components(mesh):
    """Connected-component label per face (vertex labels by min-propagation over edges)."""
    e = _edges(mesh.faces)
    lab = np.arange(mesh.n_vertices)
    while True:
        m = np.minimum(lab[e[:, 0]], lab[e[:, 1]])
        new = lab.copy()
        np.minimum.at(new, e[:, 0], m)
        np.minimum.at(new, e[:, 1], m)
        new = new[new]  # pointer jumping
        if np.array_equal(new, lab):
            break
        lab = new
    return lab[mesh.faces[:, 0]]


def assert_valid_mesh(mesh):
    assert isinstance(mesh, Mesh)
    assert mesh.vertices.dtype == np.float64 and mesh.vertices.shape[1] == 3
    assert mesh.faces.dtype == np.int32 and mesh.faces.shape[1] == 3
    assert np.isfinite(mesh.vertices).all()
    assert isinstance(mesh.name, str) and mesh.name


def assert_closed_manifold(mesh):
    """Closed, consistently outward-oriented 2-manifold components without duplicates or slivers."""
    assert_valid_mesh(mesh)
    v, f = mesh.vertices, mesh.faces
    d = _edges(f)
    # every undirected edge on exactly two faces
    _, counts = np.unique(np.sort(d, axis=1), axis=0, return_counts=True)
    assert (counts == 2).all(), f"edge face-counts {np.unique(counts)}"
    # consistent orientation: every directed edge used once (so its twin is used by the neighbour)
    assert np.unique(d, axis=0).shape[0] == d.shape[0], "a directed edge is used twice"
    # no unused or duplicate vertices
    assert np.unique(f).size == mesh.n_vertices, "unreferenced vertices"
    scale = float(np.ptp(v, axis=0).max())
    assert np.unique(np.round(v / scale, 9), axis=0).shape[0] == mesh.n_vertices, "duplicate vertices"
    # no degenerate triangles
    t = v[f]
    area = 0.5 * np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1)
    assert area.min() > 1e-9 * scale ** 2, f"degenerate triangle (area {area.min():.3g})"
    # every component: positive volume and a sphere or torus topology (no pinched vertices)
    lab = components(mesh)
    for c in np.unique(lab):
        fc = f[lab == c]
        assert signed_volume(v, fc) > 0, f"component {c} has non-positive volume"
        n_v = np.unique(fc).size
        n_e = 3 * fc.shape[0] // 2
        chi = n_v - n_e + fc.shape[0]
        assert chi in (2, 0), f"component {c} has Euler characteristic {chi}"
    assert signed_volume(v, f) > 0


def n_components(mesh):
    return np.unique(components(mesh)).size


def hull_2d(p):
    """Convex hull (monotone chain) of 2-D points (k, 2), counter-clockwise."""
    p = p[np.lexsort((p[:, 1], p[:, 0]))]

    def half(pts):
        h = []
        for q in pts:
            while len(h) >= 2 and np.cross(np.append(h[-1] - h[-2], 0), np.append(q - h[-2], 0))[2] <= 0:
                h.pop()
            h.append(q)
        return h

    lo, up = half(p), half(p[::-1])
    return np.array(lo[:-1] + up[:-1])


def polygon_area(p):
    x, y = p[:, 0], p[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def mid_section(mesh, length):
    """The (y, z) ring of vertices nearest x = length/2, ordered by angle about the x axis."""
    xs = np.round(mesh.vertices[:, 0], 9)
    ux = np.unique(xs)
    x0 = ux[np.argmin(np.abs(ux - length / 2))]
    ring = mesh.vertices[xs == x0][:, 1:]
    return ring[np.argsort(np.arctan2(ring[:, 1], ring[:, 0]))]


def link_ratio(mesh):
    ext = np.ptp(mesh.vertices, axis=0)
    return ext[0] / max(ext[1], ext[2])


# ----------------------------------------------------------------------------- all closed generators

CLOSED = {
    "torus": (lambda: S.torus(), lambda: S.torus(1.0, 0.3, 6, 3)),
    "capsule_link": (lambda: S.capsule_link(), lambda: S.capsule_link(3.0, 1.0, 4, 1)),
    "capsule_link_6": (lambda: S.capsule_link(6.0, 1.0), lambda: S.capsule_link(0.5, 1.0, 5, 2)),
    "boat_hull_link": (lambda: S.boat_hull_link(), lambda: S.boat_hull_link(6.0, 1.0, 0.35, 8, 3)),
    "ellipsoid": (lambda: S.ellipsoid((1.0, 2.0, 0.5)), lambda: S.ellipsoid((1, 2, 3), 2, 3)),
    "uv_sphere": (lambda: S.uv_sphere(), lambda: S.uv_sphere(2.0, 3, 4)),
    "icosphere": (lambda: S.icosphere(), lambda: S.icosphere(0.5, 0)),
    "box": (lambda: S.box(), lambda: S.box((1, 2, 3), (1, 1, 1), subdivisions=2)),
    "box_sub": (lambda: S.box(subdivisions=8), lambda: S.box((0.1, 5, 1), subdivisions=3)),
    "rounded_box": (lambda: S.rounded_box(), lambda: S.rounded_box((1, 2, 3), 0.3, n_round=1, n_flat=1)),
    "cylinder": (lambda: S.cylinder(), lambda: S.cylinder(1.0, 3.0, 3, 2)),
    "teapot_like": (lambda: S.teapot_like(), lambda: S.teapot_like(9, 8)),
    "slender_aircraft": (lambda: S.slender_aircraft(), lambda: S.slender_aircraft(8)),
    "palm": (lambda: S.palm(), lambda: S.palm(1.0, 1.2, 0.2, n_round=1, n_flat=1)),
    "phalanx": (lambda: S.phalanx(), lambda: S.phalanx(0.3, 0.1, 4, 1)),
    "table": (lambda: S.table(), lambda: S.table(1.0, 1.0, 1.0, 0.1, 0.05, 3)),
    "perturbed_sphere": (lambda: S.perturbed_sphere(), lambda: S.perturbed_sphere(1.0, 0.2, 4, 5, seed=3)),
    "wave_torus": (lambda: S.wave_torus(t=0.37), lambda: S.wave_torus(1.0, 0.3, 8, 4, t=1.3, amplitude=0.5)),
}


@pytest.mark.parametrize("res", ["default", "small"])
@pytest.mark.parametrize("name", sorted(CLOSED))
def test_closed_generators_are_oriented_2_manifolds(name, res):
    mesh = CLOSED[name][0 if res == "default" else 1]()
    assert_closed_manifold(mesh)


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_generators_are_deterministic(name):
    a, b = CLOSED[name][0](), CLOSED[name][0]()
    assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.faces, b.faces)


def test_assert_closed_manifold_catches_defects():
    m = S.icosphere(subdivisions=1)
    with pytest.raises(AssertionError):  # a hole
        assert_closed_manifold(Mesh(m.vertices, m.faces[1:]))
    flipped = m.faces.copy()
    flipped[0] = flipped[0, ::-1]
    with pytest.raises(AssertionError):  # one face wound the wrong way
        assert_closed_manifold(Mesh(m.vertices, flipped))
    with pytest.raises(AssertionError):  # everything inside out
        assert_closed_manifold(Mesh(m.vertices, m.faces[:, ::-1]))


# ----------------------------------------------------------------------------- counts and sizes

def test_default_triangle_counts():
    assert S.torus().n_faces == 2 * 64 * 16
    assert S.box().n_faces == 12 and S.box().n_vertices == 8
    assert S.box(subdivisions=3).n_faces == 12 * 9
    assert S.icosphere(subdivisions=3).n_faces == 1280
    assert S.uv_sphere(1.0, 16, 32).n_faces == 2 * 32 * 15
    assert S.cylinder(n_around=32).n_faces == 4 * 32
    assert S.perturbed_sphere(n_lat=50, n_lon=50).n_faces == 4900
    assert S.wave_sheet(n=64).n_faces == 2 * 64 ** 2


def test_teapot_like():
    m = S.teapot_like()
    assert 3000 <= m.n_faces <= 4500  # van den Bergen's teapot: 3,752
    assert n_components(m) == 3
    v = m.vertices
    assert v[:, 2].min() == pytest.approx(0.0)
    # the spout is on +x and the handle on -x: not rotationally symmetric, and not mirror symmetric in y
    assert v[:, 0].max() > 1.4 and v[:, 0].min() < -1.2
    assert abs(v[v[:, 0] > 1.2, 1].mean()) > 0.05  # the spout is yawed
    assert S.teapot_like(96, 80).n_faces > 3 * m.n_faces


def test_slender_aircraft():
    m = S.slender_aircraft()
    assert 5000 <= m.n_faces <= 7000  # van den Bergen's X-wing: 6,084
    assert n_components(m) == 6
    ext = np.ptp(m.vertices, axis=0)
    assert ext[0] == pytest.approx(10.0, abs=0.6)
    lab = components(m)
    fus = m.vertices[np.unique(m.faces[lab == lab[0]])]
    f_ext = np.ptp(fus, axis=0)
    assert f_ext[0] / f_ext[1] == pytest.approx(10.0, rel=0.05)
    assert S.slender_aircraft(64).n_faces > 3 * m.n_faces


@pytest.mark.parametrize("length,thickness,kw", [(3.0, 1.0, {}), (6.0, 1.0, {}),
                                                 (3.0, 1.0, dict(n_around=8, n_len=1)),
                                                 (6.0, 0.5, dict(n_around=12, n_len=3)), (0.6, 1.0, {})])
def test_capsule_link_ratio_and_placement(length, thickness, kw):
    m = S.capsule_link(length, thickness, **kw)
    assert link_ratio(m) == pytest.approx(length / thickness, rel=0.05)
    v = m.vertices
    assert v[:, 0].min() == pytest.approx(0.0, abs=1e-12) and v[:, 0].max() == pytest.approx(length)
    assert np.abs(v[:, 1:].mean(axis=0)).max() < 1e-9 * length  # centred on the x axis
    assert np.hypot(v[:, 1], v[:, 2]).max() == pytest.approx(thickness / 2)


@pytest.mark.parametrize("length,thickness,kw", [(6.0, 1.0, {}), (3.0, 1.0, {}),
                                                 (6.0, 1.0, dict(n_around=8, n_len=3)),
                                                 (4.0, 0.5, dict(dent=0.2, n_around=16))])
def test_boat_hull_ratio(length, thickness, kw):
    m = S.boat_hull_link(length, thickness, **kw)
    assert link_ratio(m) == pytest.approx(length / thickness, rel=0.05)
    v = m.vertices
    assert v[:, 0].min() == pytest.approx(0.0, abs=1e-12) and v[:, 0].max() == pytest.approx(length)
    assert np.ptp(v[:, 1]) == pytest.approx(thickness, rel=0.05)  # max thickness is across y
    assert np.ptp(v[:, 2]) < 0.9 * thickness  # the keel side is dented in


@pytest.mark.parametrize("kw,min_excess", [({}, 0.10), (dict(n_around=8, n_len=3), 0.05),
                                           (dict(n_around=48, n_len=48), 0.10)])
def test_boat_hull_is_non_convex(kw, min_excess):
    length = 6.0
    m = S.boat_hull_link(length, 1.0, **kw)
    ring = mid_section(m, length)
    # the mid-section boundary turns both ways: a reflex vertex exists
    e = np.roll(ring, -1, axis=0) - ring
    turn = e[:, 0] * np.roll(e[:, 1], -1) - e[:, 1] * np.roll(e[:, 0], -1)
    assert (turn > 1e-12).any() and (turn < -1e-12).any()
    # every section is a scaled copy of this one and the 3-D hull contains each section's
    # 2-D hull, so hull volume / volume >= this area ratio
    ratio = polygon_area(hull_2d(ring)) / polygon_area(ring)
    assert ratio >= 1.0 + min_excess
    # the capsule with the same parameters is convex in that sense
    c = mid_section(S.capsule_link(length, 1.0, kw.get("n_around", 24), kw.get("n_len", 24)), length)
    assert polygon_area(hull_2d(c)) == pytest.approx(polygon_area(c))


def test_boat_hull_rejects_bad_dent():
    with pytest.raises(ValueError):
        S.boat_hull_link(dent=0.5)


def test_basic_solid_extents():
    np.testing.assert_allclose(np.ptp(S.torus(1.0, 0.25).vertices, axis=0), [2.5, 2.5, 0.5], rtol=1e-2)
    np.testing.assert_allclose(np.ptp(S.ellipsoid((1, 2, 3)).vertices, axis=0)[2], 6.0)
    ico = S.icosphere(2.0, 2, center=(1, 0, 0))
    np.testing.assert_allclose(np.linalg.norm(ico.vertices - (1, 0, 0), axis=1), 2.0)
    assert ico.n_faces == 320
    b = S.box((1, 2, 3), (1, 1, 1), subdivisions=4)
    np.testing.assert_allclose(b.vertices.min(0), [0.5, 0.0, -0.5])
    np.testing.assert_allclose(b.vertices.max(0), [1.5, 2.0, 2.5])
    assert signed_volume(b.vertices, b.faces) == pytest.approx(6.0)
    cyl = S.cylinder(0.5, 2.0, 64)
    np.testing.assert_allclose(cyl.vertices.min(0), [-0.5, -0.5, -1.0], atol=1e-12)
    assert signed_volume(cyl.vertices, cyl.faces) == pytest.approx(np.pi * 0.25 * 2.0, rel=0.01)
    s = S.uv_sphere(1.5, 40, 80)
    assert signed_volume(s.vertices, s.faces) == pytest.approx(4 / 3 * np.pi * 1.5 ** 3, rel=0.01)


def test_rounded_box_and_palm():
    rb = S.rounded_box((1.0, 2.0, 3.0), 0.2)
    np.testing.assert_allclose(np.ptp(rb.vertices, axis=0), [1.0, 2.0, 3.0])
    r, (a, b, c) = 0.2, (1.0 - 0.4, 2.0 - 0.4, 3.0 - 0.4)  # inner box
    exact = (a * b * c + 2 * r * (a * b + b * c + a * c) + np.pi * r ** 2 * (a + b + c)
             + 4 / 3 * np.pi * r ** 3)
    assert signed_volume(rb.vertices, rb.faces) == pytest.approx(exact, rel=0.01)
    p = S.palm(width=0.9, length=1.1, thickness=0.3)
    v = p.vertices
    assert v[:, 0].min() == pytest.approx(0.0, abs=1e-12) and v[:, 0].max() == pytest.approx(1.1)
    np.testing.assert_allclose(np.ptp(v, axis=0), [1.1, 0.9, 0.3])
    np.testing.assert_allclose(v[:, 1:].min(0), -v[:, 1:].max(0), atol=1e-12)
    with pytest.raises(ValueError):
        S.rounded_box((1, 1, 1), 0.5)


def test_phalanx():
    m = S.phalanx(0.5, 0.1)
    v = m.vertices
    assert v[:, 0].min() == pytest.approx(0.0, abs=1e-12) and v[:, 0].max() == pytest.approx(0.5)
    assert np.hypot(v[:, 1], v[:, 2]).max() == pytest.approx(0.1)


def test_table():
    m = S.table(width=1.6, depth=0.9, height=0.75, top_thickness=0.05, leg_radius=0.04)
    assert n_components(m) == 5
    v = m.vertices
    assert v[:, 2].max() == pytest.approx(0.75) and v[:, 2].min() == pytest.approx(0.0)
    np.testing.assert_allclose(v[:, :2].min(0), [-0.8, -0.45])
    np.testing.assert_allclose(v[:, :2].max(0), [0.8, 0.45])
    top = v[np.isclose(v[:, 2], 0.75)]
    assert len(top) == 4  # the top face is the box's upper face


def test_perturbed_sphere():
    r, amp = 1.0, 0.05
    m = S.perturbed_sphere(r, amp, 50, 50, seed=7)
    d = np.linalg.norm(m.vertices, axis=1)
    assert d.min() >= r - amp - 1e-12 and d.max() <= r + amp + 1e-12
    assert np.ptp(d) > 0.5 * amp  # actually bumpy
    assert 4000 <= m.n_faces <= 6000
    other = S.perturbed_sphere(r, amp, 50, 50, seed=8)
    assert not np.allclose(other.vertices, m.vertices)
    # parallel-close proximity: a sphere of radius r - amp fits inside without crossing
    inner = S.uv_sphere(r - amp, 50, 50)
    assert np.linalg.norm(inner.vertices, axis=1).max() <= d.min() + 1e-12
    # smooth: radius is Lipschitz in the direction (bump frequencies <= 3 pi)
    e = _edges(m.faces)
    u = m.vertices / d[:, None]
    du = np.linalg.norm(u[e[:, 0]] - u[e[:, 1]], axis=1)
    assert (np.abs(d[e[:, 0]] - d[e[:, 1]]) <= amp * 3 * np.pi * du * 1.01 + 1e-12).all()
    with pytest.raises(ValueError):
        S.perturbed_sphere(1.0, 1.0)


def test_wave_sheet_is_open_grid():
    n = 10
    m = S.wave_sheet(2.0, n)
    assert_valid_mesh(m)
    assert m.n_faces == 2 * n * n and m.n_vertices == (n + 1) ** 2
    np.testing.assert_allclose(m.vertices[:, 2], 0.0)
    _, counts = np.unique(np.sort(_edges(m.faces), axis=1), axis=0, return_counts=True)
    assert set(counts.tolist()) == {1, 2} and (counts == 1).sum() == 4 * n
    t = m.triangles()
    nz = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])[:, 2]
    assert (nz > 0).all()


def test_wave_displace():
    m = S.wave_sheet(2.0, 64)
    amp, wl = 0.1, 0.7
    v1 = S.wave_displace(m.vertices, 0.3, amp, wl)
    assert v1.shape == m.vertices.shape and v1.dtype == np.float64
    np.testing.assert_array_equal(v1[:, :2], m.vertices[:, :2])
    assert np.abs(v1[:, 2]).max() <= amp + 1e-12 and np.ptp(v1[:, 2]) > amp
    # smooth in space: |dz| <= amp * (2 pi / wl) * edge length
    e = _edges(m.faces)
    dz = np.abs(v1[e[:, 0], 2] - v1[e[:, 1], 2])
    dl = np.linalg.norm(m.vertices[e[:, 0]] - m.vertices[e[:, 1]], axis=1)
    assert (dz <= amp * 2 * np.pi / wl * dl + 1e-12).all()
    # smooth in time and travelling
    v2 = S.wave_displace(m.vertices, 0.3 + 1e-3, amp, wl)
    assert 0 < np.abs(v2[:, 2] - v1[:, 2]).max() < 1e-2
    # input untouched, mesh still valid with the new vertices
    np.testing.assert_allclose(m.vertices[:, 2], 0.0)
    assert m.with_vertices(v1).n_faces == m.n_faces


def test_deform_torus():
    base = S.torus(1.0, 0.25, 32, 12)
    for t in (0.0, 0.21, 0.5):
        v = S.deform_torus(base.vertices, t, amplitude=0.3)
        assert_closed_manifold(base.with_vertices(v))
        rho = np.hypot(np.hypot(v[:, 0], v[:, 1]) - 1.0, v[:, 2])
        assert rho.max() <= 0.25 * 1.3 + 1e-9 and rho.min() >= 0.25 * 0.7 - 1e-9
    v0 = S.deform_torus(base.vertices, 0.0)
    np.testing.assert_allclose(S.deform_torus(base.vertices, 1.0), v0, atol=1e-12)  # period 1 / speed
    assert not np.allclose(S.deform_torus(base.vertices, 0.1), v0)
    np.testing.assert_allclose(S.deform_torus(base.vertices, 0.3, amplitude=0.0), base.vertices, atol=1e-12)
    wt = S.wave_torus(t=0.2)
    np.testing.assert_array_equal(wt.faces, S.torus().faces)


def test_merge_and_transformed():
    a, b = S.box(), S.icosphere(0.5, 1, center=(3, 0, 0))
    m = S.merge([a, b], name="pair")
    assert m.name == "pair"
    assert m.n_vertices == a.n_vertices + b.n_vertices and m.n_faces == a.n_faces + b.n_faces
    np.testing.assert_array_equal(m.faces[a.n_faces:], b.faces + a.n_vertices)
    assert_closed_manifold(m)
    assert n_components(m) == 2
    with pytest.raises(ValueError):
        S.merge([])
    c, s = np.cos(0.4), np.sin(0.4)
    pose = np.array([[c, -s, 0, 1], [s, c, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1.0]])
    t = S.transformed(a, pose)
    np.testing.assert_allclose(t.vertices, a.vertices @ pose[:3, :3].T + pose[:3, 3])
    assert signed_volume(t.vertices, t.faces) == pytest.approx(1.0)
    mirror = np.diag([-1.0, 1.0, 1.0, 1.0])
    r = S.transformed(S.teapot_like(12, 10), mirror)
    assert_closed_manifold(r)  # re-wound: still outward
    with pytest.raises(ValueError):
        S.transformed(a, np.eye(3))
