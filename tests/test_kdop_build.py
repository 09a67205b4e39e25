"""k-DOP hierarchies: build (split at the midpoint of the widest slab), exact refit
(van den Bergen section 4: refit == rebuild at the root, every node tight), the table data
of section 3.1 and the k-DOP invariant checker."""
import numpy as np
import pytest

import cdcore
from cdcore import _layout as L
from cdcore import build_bvh
from cdcore.bv.kdop import KDOP_DIRS, N_RINGS, check_kdop, ring_table, signed_dirs
from cdcore.transforms import random_rotations

from meshgen import cube, grid, soup, torus, uv_sphere

KDOPS = tuple(KDOP_DIRS)


def _mesh(kind, rng):
    if kind == "soup":
        v, f = soup(rng, n=60)
    elif kind == "sphere":
        v, f = uv_sphere(0.7, 6, 10)
    elif kind == "torus":
        v, f = torus(1.0, 0.3, 16, 6)
    elif kind == "grid":
        v, f = grid(7, 2.0)
    else:
        v, f = cube(1.0)
    return cdcore.Mesh(v, f, name=kind)


MESH_KINDS = ["soup", "sphere", "torus", "grid", "cube"]


def deform(kind, v, rng):
    v = v.copy()
    if kind == "twist":
        ang = 2.0 * v[:, 2] + 0.5 * v[:, 0]
        c, s = np.cos(ang), np.sin(ang)
        v[:, 0], v[:, 1] = c * v[:, 0] - s * v[:, 1], s * v[:, 0] + c * v[:, 1]
    elif kind == "noise":
        v += rng.normal(scale=0.05, size=v.shape)
    elif kind == "collapse":
        v[:, 2] = 0.0
        v += (1e3, -2e3, 5e2)
    else:  # rigid
        v = v @ random_rotations(1, rng)[0].T + rng.normal(size=3)
    return v


def slab_split_rule(b):
    """Every internal node splits along its widest slab (first of equal widths) at the slab's
    midpoint by the triangles' projected midpoints, or is halved when one side is empty."""
    kd = b.kdop
    k2 = kd.k // 2
    tri = b.mesh.triangles()
    halvings = 0
    for p in np.flatnonzero(~b.is_leaf):
        w = kd.hi[p] - kd.lo[p]
        axis = int(np.argmax(w))
        proj = tri @ kd.dirs[axis]  # (m, 3)
        key = 0.5 * (proj.min(axis=1) + proj.max(axis=1))
        delta = 0.5 * (kd.slabs[p, axis] + kd.slabs[p, k2 + axis])
        left = b.node_primitives(b.nodes_i[p, L.LEFT])
        right = b.node_primitives(b.nodes_i[p, L.RIGHT])
        keys = key[b.node_primitives(p)]
        tol = 1e-12 * (np.abs(delta) + w.max())
        if np.all(keys <= delta + tol) or np.all(keys > delta - tol):
            if abs(len(left) - len(right)) <= 1 and len(left) == len(keys) // 2:
                halvings += 1
                continue
        assert np.all(key[left] <= delta + tol), p
        assert np.all(key[right] > delta - tol), p
    return halvings


@pytest.mark.parametrize("leaf_size", [1, 3])
@pytest.mark.parametrize("bv", KDOPS)
def test_build_invariants_and_split_rule(bv, leaf_size):
    rng = np.random.default_rng(leaf_size)
    for kind in MESH_KINDS:
        b = build_bvh(_mesh(kind, rng), bv, leaf_size)
        assert b.check() == [], kind
        assert check_kdop(b, tight=True) == []
        assert b.kdop.slabs.shape == (b.n_nodes, 2 * len(KDOP_DIRS[bv]))
        assert np.all(np.isfinite(b.nodes_f)) and np.all(b.nodes_f[:, L.SIZE] > 0)
        counts = b.nodes_i[:, L.COUNT]
        assert np.all(counts[b.is_leaf] <= leaf_size) and np.all(counts[~b.is_leaf] > leaf_size)
        slab_split_rule(b)


def test_split_rule_halves_when_one_side_is_empty():
    v = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    b = build_bvh(cdcore.Mesh(v, np.zeros((16, 3), dtype=np.int32) + [0, 1, 2]), "kdop18")
    assert slab_split_rule(b) == b.n_nodes - b.n_leaves and b.height == 4
    assert b.check() == []


@pytest.mark.parametrize("bv", KDOPS)
def test_refit_is_exact(bv):
    """After any deformation a refitted node's slabs are the tight slabs of its triangles
    (+ pad), so the root equals a rebuild's root bit for bit; the table data is marked stale
    and, refreshed, equals the one fitted from scratch on the same topology."""
    rng = np.random.default_rng(9)
    for kind in ("torus", "soup", "grid"):
        mesh = _mesh(kind, rng)
        b = build_bvh(mesh, bv, 2)
        topo = b.nodes_i.copy(), b.prim_order.copy()
        for dkind in ("twist", "noise", "collapse", "rigid"):
            v2 = deform(dkind, mesh.vertices, rng)
            b.refit(v2)
            assert np.array_equal(b.nodes_i, topo[0]) and np.array_equal(b.prim_order, topo[1])
            assert not b.kdop.table_valid
            assert b.check(children=True) == [], (kind, dkind)  # tight slabs, children inside
            fresh = build_bvh(mesh.with_vertices(v2), bv, 2)
            np.testing.assert_array_equal(b.kdop.slabs[0], fresh.kdop.slabs[0])
            np.testing.assert_array_equal(b.nodes_f[0, :6], fresh.nodes_f[0, :6])
            # table data: refresh, then compare with a from-scratch fit on the same topology
            from cdcore._kdop import ensure_table
            ensure_table(b)
            assert b.kdop.table_valid and check_kdop(b) == []
            c = b.kdop
            from cdcore._kdop import _fit_table
            from cdcore.bv.kdop import KdopData
            kd2 = KdopData(bv, c.slabs.copy(), c.scale, c.pad)
            _fit_table(kd2, b.nodes_i, b.prim_order, b.mesh.vertices, b.mesh.faces)
            for name in ("center", "hrel", "occ", "outer", "rho"):
                np.testing.assert_array_equal(getattr(kd2, name), getattr(c, name))


@pytest.mark.parametrize("bv", KDOPS)
def test_rebuild_after_refit_is_a_fresh_build(bv):
    rng = np.random.default_rng(8)
    mesh = _mesh("torus", rng)
    b = build_bvh(mesh, bv, 2)
    v2 = deform("twist", mesh.vertices, rng)
    b.refit(v2)
    b.rebuild()
    fresh = build_bvh(mesh.with_vertices(v2), bv, 2)
    for name in ("nodes_f", "nodes_i", "prim_order", "depth"):
        np.testing.assert_array_equal(getattr(b, name), getattr(fresh, name))
    for name in ("slabs", "center", "hrel", "occ", "outer", "rho"):
        np.testing.assert_array_equal(getattr(b.kdop, name), getattr(fresh.kdop, name))


@pytest.mark.parametrize("bv", KDOPS)
def test_table_data(bv):
    """Rotation centre = vertex mean; hrel >= pad; outer = highest ring bit; every direction's
    remaining-region bit is set for a node with vertices behind its centre."""
    b = build_bvh(_mesh("sphere", np.random.default_rng(0)), bv)
    kd = b.kdop
    assert kd.occ.dtype == np.uint32 and kd.outer.max() <= N_RINGS - 1
    assert np.all(kd.hrel >= kd.pad * 0.999)
    internal = np.flatnonzero(~b.is_leaf)
    assert np.all((kd.occ[internal] >> np.uint32(31)) & np.uint32(1))  # something lies behind c
    r = kd.ratio()
    assert r.shape == kd.hrel.shape and np.all(r > 0)
    v = b.mesh.vertices
    np.testing.assert_allclose(kd.center[0], v[b.mesh.faces].reshape(-1, 3).mean(axis=0), rtol=0, atol=1e-14)
    # the cube's root: 8 corners around the centre; along +x the 4 front corners sit at
    # cos = 1/sqrt 3 (the kdop6 aperture) -- ring n-1 or the remaining region, nothing inside
    bc = build_bvh(cdcore.Mesh(*cube(2.0)), bv)
    sd = signed_dirs(KDOP_DIRS[bv])
    q = bc.mesh.vertices - bc.kdop.center[0]
    cos = (q @ sd.T) / np.linalg.norm(q, axis=1)[:, None]
    rt = ring_table(bv)
    for h in range(len(sd)):
        inner = cos[:, h] >= rt.a + 1e-9
        if inner.any():
            assert bc.kdop.outer[0, h] >= rt.ring_of(cos[inner, h] + 1e-9).max()


@pytest.mark.parametrize("bv", KDOPS)
def test_checker_detects_broken_kdop_data(bv):
    good = build_bvh(_mesh("torus", np.random.default_rng(0)), bv, 2)
    assert good.check() == []
    node = int(np.flatnonzero(~good.is_leaf)[5])
    k2 = good.kdop.k // 2

    def broken(fn):
        b = build_bvh(good.mesh, bv, 2)
        fn(b.kdop)
        return check_kdop(b)

    assert any("misses a vertex" in e for e in broken(lambda kd: kd.slabs.__setitem__((node, k2 - 1), kd.slabs[node, -1])))
    assert any("not tight" in e for e in broken(lambda kd: kd.slabs.__setitem__((node, -1), kd.slabs[node, -1] + 0.01)))
    assert any("rotation centre" in e for e in broken(lambda kd: kd.center.__setitem__(node, kd.center[node] + 0.01)))
    assert any("hrel" in e for e in broken(lambda kd: kd.hrel.__setitem__((node, 0), kd.hrel[node, 0] * 0.5)))
    assert any("outer" in e for e in broken(lambda kd: kd.outer.__setitem__((node, 3), kd.outer[node, 3] - 1)))
    assert any("remaining region" in e for e in broken(lambda kd: kd.rho.__setitem__((node, 2), 0.0)))

    def drop_rings(kd):
        kd.occ[node, :] &= np.uint32(1 << 31)
        kd.outer[node, :] = 0
    assert any("cone ring" in e for e in broken(drop_rings))
    # a stale table after a refit is not checked (it is refreshed before use)
    b = build_bvh(good.mesh, bv, 2)
    b.refit(b.mesh.vertices * 1.5)
    assert not b.kdop.table_valid and b.check() == []


def test_counter_slots_are_defined_once():
    """The traversal protocol (counter slots, status codes) lives in ``_layout`` only: every
    kernel module imports it instead of redefining it."""
    import pathlib
    import re
    root = pathlib.Path(cdcore.__file__).parent
    for name in ("CNT_BV_TESTS", "CNT_PRIM_TESTS", "CNT_LEAF_PAIRS", "CNT_FALSE", "CNT_PRIM_CYCLES",
                 "CNT_MAX_STACK", "N_COUNTERS", "DONE", "BUFFER_FULL"):
        defs = [p.name for p in root.rglob("*.py") if re.search(rf"^{name} = ", p.read_text(), re.M)]
        assert defs == ["_layout.py"], (name, defs)
    assert set(L.KDOP_KINDS) == {cdcore.BV_TYPES[bv].kind for bv in KDOPS}
    assert all(cdcore.BV_TYPES[bv].tests == ("slab",) for bv in KDOPS)
