"""k-DOP realignment: direction sets, the aperture of Table 1, the conservative factor
table, the unit-DOP facet table, and the property that every method's realigned k-DOP
contains the exact k-DOP of the moved geometry (in floating point), with its looseness."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import build_bvh
from cdcore.bv.kdop import (KDOP_AXIS_NAMES, KDOP_DIRS, N_RINGS, TABLE1_APERTURE, aperture, facet_table,
                            ring_table, signed_dirs)
from cdcore.realign import (METHODS, exact_kdop, kdop_polytope, kdop_volume, looseness, node_vertices,
                            realign_kdop, realignment_report, rotated_exact_kdop)
from cdcore.transforms import random_rotations, rotation_about

from meshgen import cube, grid, soup, torus, uv_sphere

KDOPS = tuple(KDOP_DIRS)


# ---- direction sets and Table 1 ---------------------------------------------------------
@pytest.mark.parametrize("bv", KDOPS)
def test_direction_sets(bv):
    d = KDOP_DIRS[bv]
    k2 = {"kdop6": 3, "kdop14": 7, "kdop18": 9, "kdop26": 13}[bv]
    assert d.shape == (k2, 3) and len(KDOP_AXIS_NAMES[bv]) == k2
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(d[:3], np.eye(3))
    g = np.abs(d @ d.T) - np.eye(k2)
    assert g.max() < 1 - 1e-6  # no direction repeated or antiparallel to another


@pytest.mark.parametrize("bv", KDOPS)
def test_aperture_matches_table1_and_covers_the_sphere(bv):
    a = aperture(bv)
    assert abs(a - TABLE1_APERTURE[bv]) < 1e-5
    u = np.random.default_rng(0).normal(size=(200000, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    best = (u @ signed_dirs(KDOP_DIRS[bv]).T).max(axis=1)
    assert best.min() >= a - 1e-12  # every direction lies in some cone of aperture a
    assert best.min() < a + 5e-3  # and a is (nearly) attained


# ---- the factor table --------------------------------------------------------------------
@pytest.mark.parametrize("bv", KDOPS)
def test_ring_table_shape_and_monotone_rows(bv):
    rt = ring_table(bv)
    n = N_RINGS
    assert rt.T.shape == (n, n) and rt.TN.shape == (n,) and rt.n == 32
    assert rt.acos[0] == 1.0 and abs(rt.acos[-1] - rt.a) < 1e-15
    assert np.all(rt.T[1:, 0] == 0.0)
    assert np.all(np.diff(rt.T[1:, 1:], axis=1) >= 0)  # the scan of eq. 6-7 stops at the outermost set bit
    jj, mm = np.meshgrid(np.arange(n), np.arange(n))
    assert np.all(rt.T[(mm >= 1) & (jj >= mm)] >= 1.0)  # D' may point right at an occupied ring
    assert np.all((rt.TN[1:] > 0) & (rt.TN[1:] <= 1.0 + 1e-12))
    # ring lookup (a cosine on a boundary may land in either ring: the table's slack covers it)
    mid = 0.5 * (rt.acos[:-1] + rt.acos[1:])
    assert np.array_equal(rt.ring_of(mid), np.arange(1, n))
    assert rt.ring_of(1.0) == 1 and rt.ring_of(rt.acos[5]) in (5, 6) and rt.ring_of(rt.a) == n - 1
    assert rt.ring_of(rt.a - 1e-9) == n and rt.ring_of(-1.0) == n


@pytest.mark.parametrize("bv", KDOPS)
def test_ring_table_bounds_every_configuration(bv):
    """Sample D' in ring m and a point q in ring j (or in the remaining region) at random
    azimuths: D'.q / (D_h.q) never exceeds T[m, j], and D'.q never exceeds TN[m] l_p."""
    rt = ring_table(bv)
    rng = np.random.default_rng(1)
    th = rt.theta
    n = rt.n
    N = 20000
    m = rng.integers(1, n, N)
    tp = th[m - 1] + (th[m] - th[m - 1]) * rng.random(N)
    j = rng.integers(1, n, N)
    phi = th[j - 1] + (th[j] - th[j - 1]) * rng.random(N)
    psi = rng.random(N) * 2 * np.pi
    cosang = np.cos(tp) * np.cos(phi) + np.sin(tp) * np.sin(phi) * np.cos(psi)
    ratio = cosang / np.cos(phi)
    assert np.all(ratio <= rt.T[m, j] * (1 + 1e-12))
    # the entry is the worst case (same azimuth, point on the ring's outer edge, D' at the
    # angle of its ring nearest to it), up to the angular slack
    dist = np.maximum(0.0, np.maximum(th[j] - th[m], th[m - 1] - th[j]))
    worst = np.cos(dist) / np.cos(th[j])
    assert np.all(worst <= rt.T[m, j]) and np.all(rt.T[m, j] <= worst * (1 + 1e-7))
    # remaining region: phi in [theta_{n-1}, pi]
    phi = th[n - 1] + (np.pi - th[n - 1]) * rng.random(N)
    cosang = np.cos(tp) * np.cos(phi) + np.sin(tp) * np.sin(phi) * np.cos(psi)
    lp = np.maximum(0.0, np.cos(phi - th[n - 1]))
    assert np.all(cosang <= rt.TN[m] * lp + 1e-12)


def test_paper_entries_are_not_conservative():
    """Eq. 7 literally (a_{h-1}/a_{m+h}) lets a point escape: kdop6, D' on the outer edge of
    ring 22, a point on the supporting plane at the outer edge of ring 30, same azimuth."""
    rt = ring_table("kdop6")
    m, j = 22, 30
    tp, phi = rt.theta[m] - 1e-12, rt.theta[j]
    hrel = 1.0
    q = hrel / math.cos(phi) * np.array([math.cos(phi), math.sin(phi), 0.0])
    dp = np.array([math.cos(tp), math.sin(tp), 0.0])
    true = float(dp @ q)
    paper = rt.paper_factor(m, 1 << (j - 1), np.inf) * hrel
    ours = rt.T[m, j] * hrel
    assert paper < true - 0.1  # escapes by more than 10% of hrel
    assert ours >= true


# ---- the unit DOP's facets ("all") --------------------------------------------------------
@pytest.mark.parametrize("bv", KDOPS)
def test_facet_table_covers_every_direction(bv):
    ft = facet_table(bv)
    sd = signed_dirs(KDOP_DIRS[bv])
    assert len(ft.vert) == {"kdop6": 8, "kdop14": 24, "kdop18": 32, "kdop26": 48}[bv]
    # unit-DOP vertices satisfy every half-space, with equality on their triangle's planes
    assert np.all(ft.vert @ sd.T <= 1 + 1e-12)
    u = np.random.default_rng(2).normal(size=(3000, 3))
    for x in u:
        f = int(np.argmax(ft.vert @ x))
        lam = [ft.inv[t] @ x for t in range(ft.start[f], ft.start[f + 1])]
        best = max(lam, key=lambda l: l.min())
        assert best.min() >= -1e-12 * np.linalg.norm(x)


def test_kdop6_all_equals_major():
    b = build_bvh(cdcore.Mesh(*torus(1.0, 0.3, 12, 6)), "kdop6")
    rng = np.random.default_rng(3)
    for R in random_rotations(20, rng):
        t = rng.normal(size=3)
        for node in (0, 3, 17):
            np.testing.assert_allclose(realign_kdop(b, node, R, t, "all"), realign_kdop(b, node, R, t, "major"),
                                       rtol=1e-15, atol=1e-15)


# ---- conservativeness --------------------------------------------------------------------
def _mesh(kind, rng):
    if kind == "soup":
        v, f = soup(rng, n=int(rng.integers(1, 30)))
    elif kind == "sphere":
        v, f = uv_sphere(0.7, 5, 8)
    elif kind == "torus":
        v, f = torus(1.0, 0.3, 12, 6)
    elif kind == "grid":
        v, f = grid(4, 1.0)
    else:
        v, f = cube(1.0)
    return v, f


def _rotation(kind, rng):
    if kind == "uniform":
        return random_rotations(1, rng)[0]
    if kind == "small":
        return rotation_about(rng.normal(size=3), 10.0 ** rng.uniform(-9, -1))
    if kind == "tie":  # axis permutations, 45-degree turns: remapping ties and ring boundaries
        axes = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), (1, 1, 0)]
        ang = [np.pi / 2, np.pi / 4, np.pi, 2 * np.pi / 3, np.arccos(1 / np.sqrt(3))]
        return rotation_about(axes[rng.integers(5)], ang[rng.integers(5)])
    return random_rotations(1, rng)[0] * (1.0 + rng.uniform(-9e-7, 9e-7))  # accepted as rigid (1e-6)


def _contains(outer, inner):
    k2 = len(inner) // 2
    return bool(np.all(outer[:k2] <= inner[:k2]) and np.all(outer[k2:] >= inner[k2:]))


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), bv=st.sampled_from(KDOPS),
       mesh=st.sampled_from(["soup", "sphere", "torus", "grid", "cube"]),
       rot=st.sampled_from(["uniform", "small", "tie", "skewed"]),
       scale=st.sampled_from([1.0, 1e-5, 1e5]), leaf=st.sampled_from([1, 4]))
def test_every_method_contains_the_moved_geometry(seed, bv, mesh, rot, scale, leaf):
    rng = np.random.default_rng(seed)
    v, f = _mesh(mesh, rng)
    b = build_bvh(cdcore.Mesh(v * scale, f), bv, leaf)
    nodes = {0, b.n_nodes - 1, int(rng.integers(b.n_nodes)), int(rng.integers(b.n_nodes))}
    R = _rotation(rot, rng)
    t = rng.normal(size=3) * scale * 10.0 ** rng.integers(0, 4)
    for node in nodes:
        ex = rotated_exact_kdop(b, node, R, t)
        for m in METHODS:
            r = realign_kdop(b, node, R, t, m)
            assert _contains(r, ex), (m, node, float(np.max(np.concatenate([r[:len(r) // 2] - ex[:len(r) // 2],
                                                                              ex[len(r) // 2:] - r[len(r) // 2:]]))))


@pytest.mark.parametrize("bv", KDOPS)
def test_single_points_and_flat_nodes(bv):
    """Leaves holding one triangle (flat) or a degenerate point: the table's remaining
    region carries everything and the bound must still hold along the normal."""
    v = np.array([[0.3, 0.2, 0.1], [1.3, 0.2, 0.1], [0.3, 1.2, 0.1], [2.0, 2.0, 2.0]])
    f = np.array([[0, 1, 2], [3, 3, 3]], dtype=np.int32)
    b = build_bvh(cdcore.Mesh(v, f), bv)
    rng = np.random.default_rng(5)
    for R in list(random_rotations(30, rng)) + [np.eye(3), rotation_about((0, 0, 1), np.pi / 4)]:
        t = rng.normal(size=3)
        for node in range(b.n_nodes):
            ex = rotated_exact_kdop(b, node, R, t)
            for m in METHODS:
                assert _contains(realign_kdop(b, node, R, t, m), ex), (m, node)


def test_identity_is_tight_for_all_and_major():
    b = build_bvh(cdcore.Mesh(*uv_sphere(1.0, 8, 12)), "kdop18")
    scale = b.kdop.scale
    for node in (0, 5, b.n_nodes - 1):
        own = b.kdop.slabs[node]
        for m in ("all", "major"):
            r = realign_kdop(b, node, np.eye(3), None, m)
            if m == "all":  # every slab realigned onto itself
                np.testing.assert_allclose(r, own, rtol=0, atol=4e-12 * scale)
            else:  # x, y, z exact; the diagonals from the box
                np.testing.assert_allclose(r[[0, 1, 2, 9, 10, 11]], own[[0, 1, 2, 9, 10, 11]], rtol=0,
                                           atol=4e-12 * scale)


# ---- looseness and polytopes ----------------------------------------------------------------
def test_kdop_volumes():
    assert kdop_volume(np.array([-1.0, -1, -1, 1, 1, 1]), "kdop6") == pytest.approx(8.0, rel=1e-12)
    cube_v = cube(2.0)[0]
    assert kdop_volume(exact_kdop(cube_v, "kdop26"), "kdop26") == pytest.approx(8.0, rel=1e-12)
    octa = np.vstack([np.eye(3), -np.eye(3)])
    assert kdop_volume(exact_kdop(octa, "kdop26"), "kdop26") == pytest.approx(4.0 / 3.0, rel=1e-12)
    assert kdop_volume(exact_kdop(octa, "kdop14"), "kdop14") == pytest.approx(4.0 / 3.0, rel=1e-12)
    verts, faces = kdop_polytope(exact_kdop(octa, "kdop18"), "kdop18")
    assert all(len(fc) >= 3 for fc in faces)
    flat = exact_kdop(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]), "kdop14")
    assert kdop_volume(flat, "kdop14") < 1e-12


def test_looseness_report_per_method():
    """Looseness on a sphere's nodes under random rotations: every method >= 1, "all" the
    tightest on average for k >= 14 (it equals "major" for k = 6)."""
    m = cdcore.Mesh(*uv_sphere(1.0, 10, 16))
    rng = np.random.default_rng(6)
    for bv in KDOPS:
        b = build_bvh(m, bv)
        nodes = np.flatnonzero((b.depth >= 2) & (b.depth <= 4))
        w = {k: [] for k in METHODS}
        for _ in range(12):
            R, t, node = random_rotations(1, rng)[0], rng.normal(size=3), int(rng.choice(nodes))
            ex = rotated_exact_kdop(b, node, R, t)
            for meth in METHODS:
                L = looseness(realign_kdop(b, node, R, t, meth), ex, bv)
                assert L["mean_width_ratio"] >= 1.0 - 1e-9 and L["volume_ratio"] >= 1.0 - 1e-9
                assert np.all(L["excess"] >= -1e-9)
                w[meth].append(L["mean_width_ratio"])
        if bv != "kdop6":
            assert np.mean(w["all"]) < np.mean(w["major"]) and np.mean(w["all"]) < np.mean(w["table"])


def test_realignment_report():
    b = build_bvh(cdcore.Mesh(*torus(1.0, 0.3, 12, 6)), "kdop14")
    R = rotation_about((1, 2, 0), 0.6)
    rep = realignment_report(b, 3, R, (0.5, 0.0, 0.0))
    assert set(rep["methods"]) == set(METHODS) and rep["kdop"].shape == (14,) and rep["exact"].shape == (14,)
    assert rep["sigma"].shape == (7,) and np.all((rep["sigma"] >= 0) & (rep["sigma"] < 14))
    assert rep["occ"].dtype == np.uint32 and rep["ratio"].shape == (14,)
    for m in METHODS:
        assert _contains(rep["methods"][m]["kdop"], rep["exact"])
    assert np.allclose(node_vertices(b, 3).mean(axis=0), rep["center"])
    with pytest.raises(ValueError, match="method"):
        realign_kdop(b, 0, R, None, "paper")
    with pytest.raises(ValueError, match="k-DOP hierarchy"):
        realign_kdop(build_bvh(b.mesh, "aabb"), 0, R)
