"""Extreme but finite coordinates: inside [MIN_SCALE, MAX_COORD] every BV type and test
equals the brute-force oracle and every node is finite; outside it ``Mesh`` refuses with
a clear error (it used to give NaN oriented boxes from 1e80 and missed overlaps from
1e-150); ``BVH.check`` reports non-finite nodes."""
import numpy as np
import pytest

import cdcore
from cdcore import BV_TYPES, BVH, build_bvh, collide, load_mesh, shapes
from cdcore.mesh import MAX_COORD, MIN_SCALE
from cdcore.transforms import make_pose, rotation_about

from meshgen import torus
from test_collide_oracle import check_all, oracle


def _torus(largest):
    v, f = torus(0.5, 0.15, 12, 6)
    return cdcore.Mesh(v * (largest / np.abs(v).max()), f)


@pytest.mark.parametrize("largest", [MIN_SCALE, 1e-40, 1e40, MAX_COORD])
@pytest.mark.parametrize("gap", [-0.1, 0.02])
def test_linked_tori_at_the_range_ends_match_the_oracle(largest, gap):
    m = _torus(largest)
    s = largest / 0.65
    pb = make_pose(rotation_about([1, 0, 0], np.pi / 2), [(0.7 - gap) * s, 0.0, 0.0])
    expected = check_all(m, np.eye(4), m, pb, leaf_sizes=(1,))
    assert bool(expected) == (gap < 0)  # a real overlap and a real near miss (linked, 2% apart)
    for bv in BV_TYPES:
        b = build_bvh(m, bv)
        assert np.all(np.isfinite(b.nodes_f)) and b.check() == [], bv


@pytest.mark.parametrize("largest", [1e61, 1e80, 1e150, 1e300, -1e200])
def test_huge_coordinates_are_rejected(largest):
    v, f = torus(0.5, 0.15, 12, 6)
    v = v * (abs(largest) / np.abs(v).max()) * np.sign(largest)
    with pytest.raises(ValueError, match=r"vertices: coordinates up to .* exceed 1e\+60, the range where the kernels"):
        cdcore.Mesh(v, f)


@pytest.mark.parametrize("largest", [1e-73, 1e-150, 1e-300, 5e-324])
def test_tiny_coordinates_are_rejected(largest):
    v, f = torus(0.5, 0.15, 12, 6)
    with pytest.raises(ValueError, match=r"vertices: the largest coordinate is .* below 1e-72"):
        cdcore.Mesh(v * (largest / np.abs(v).max()), f)


def test_all_zero_mesh_is_valid_degenerate_input():
    m = cdcore.Mesh(np.zeros((3, 3)), [[0, 1, 2]])
    b = build_bvh(m, "obb")
    assert collide(b, None, b, None).hit == bool(len(oracle(m, np.eye(4), m, np.eye(4))))


def test_with_vertices_checks_the_range_too():
    m = _torus(1.0)
    with pytest.raises(ValueError, match="exceed 1e\\+60"):
        m.with_vertices(m.vertices * 1e70)


def test_mesh_file_with_huge_coordinates_names_the_file(tmp_path):
    p = tmp_path / "huge.obj"
    p.write_text("v 0 0 0\nv 1e200 0 0\nv 0 1 0\nf 1 2 3\n")
    with pytest.raises(ValueError, match=r"^huge\.obj: vertices: coordinates up to 1e\+200"):
        load_mesh(p)


def test_check_reports_non_finite_nodes():
    m = _torus(1.0)
    for bv in ("obb", "aabb", "sphere", "kdop14"):
        b = build_bvh(m, bv)
        nf = np.array(b.nodes_f, copy=True)
        nf[3, 0] = np.nan
        bad = BVH(b.mesh, b.bv, b.leaf_size, nf, b.nodes_i, b.prim_order, b.depth, b.kdop)
        errs = bad.check()
        assert errs and "1 nodes have NaN or infinite values (first: node 3)" in errs[0], (bv, errs)


GENERATORS = [("torus", "n_major"), ("torus", "n_minor"), ("capsule_link", "n_around"), ("uv_sphere", "n_lat"),
              ("uv_sphere", "n_lon"), ("ellipsoid", "n_lat"), ("cylinder", "n_around"), ("teapot_like", "n_around"),
              ("phalanx", "n_around"), ("table", "n_around"), ("perturbed_sphere", "n_bumps"),
              ("rounded_box", "n_round"), ("palm", "n_round"), ("wave_torus", "n_minor"), ("boat_hull_link", "n_around")]


@pytest.mark.parametrize("fn, arg", GENERATORS)
def test_shape_resolution_zero_is_a_clear_error(fn, arg):
    with pytest.raises(ValueError, match=rf"^{fn}\({arg}=\.\.\.\): expected \d+\.\.\d+, got 0"):
        getattr(shapes, fn)(**{arg: 0})


@pytest.mark.parametrize("call, exc, message", [
    (lambda: shapes.torus(n_major=100_000, n_minor=100_000), ValueError, "more than 20,000,000 triangles"),
    (lambda: shapes.icosphere(subdivisions=12), ValueError, r"icosphere\(subdivisions=...\): expected 0..9"),
    (lambda: shapes.uv_sphere(n_lat=2.5), TypeError, r"uv_sphere\(n_lat=...\): expected an int"),
    (lambda: shapes.torus(major=float("nan")), ValueError, r"torus\(major=...\): expected finite numbers"),
    (lambda: shapes.wave_sheet(size=float("inf")), ValueError, r"wave_sheet\(size=...\): expected finite"),
    (lambda: shapes.torus(1e200), ValueError, "exceed 1e\\+60"),
])
def test_shape_arguments_checked_before_allocating(call, exc, message):
    with pytest.raises(exc, match=message):
        call()
