"""Non-uniform scaling of a model (van den Bergen 1998, section 6; SOLID's VRML scalings):
poses ``[R diag(s) | t]`` work for AABB trees and equal the brute-force answer on the scaled
meshes; other BV types refuse them with a clear error."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import Mesh, build_bvh, collide
from cdcore._tritri_ref import all_pairs_overlap
from cdcore.collide import split_scale
from cdcore.transforms import make_pose, random_rotations, relative_transform, transform_points

from meshgen import torus as _torus


def torus(*args):
    return Mesh(*_torus(*args))


def _scaled_pose(rng, spread):
    R = random_rotations(1, rng)[0]
    s = rng.uniform(0.3, 3.0, 3)
    M = make_pose(R, rng.uniform(-spread, spread, 3))
    M[:3, :3] = R * s  # columns scaled: x_world = R diag(s) x + t
    return M, s


def _brute(mesh_a, pose_a, mesh_b, pose_b):
    """All intersecting triangle pairs of the scaled, placed meshes: brute force in A's rigid
    frame with the kernels' arithmetic (scaled vertices, then B moved by the rigid relative
    transform), so borderline pairs round the same way."""
    (ra, sa), (rb, sb) = split_scale(pose_a), split_scale(pose_b)
    R, t = relative_transform(ra, rb)
    va = mesh_a.vertices * sa
    vb = transform_points(R, t, mesh_b.vertices * sb)
    return {tuple(p) for p in all_pairs_overlap(va[mesh_a.faces], vb[mesh_b.faces]).tolist()}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), leaf=st.sampled_from([1, 3]), test=st.sampled_from(["sat15", "sat6"]))
def test_scaled_aabb_trees_match_brute_force(seed, leaf, test):
    rng = np.random.default_rng(seed)
    m = torus(1.0, 0.3, 14, 7)
    pa, _ = _scaled_pose(rng, 0.5)
    pb, _ = _scaled_pose(rng, 0.5)
    b = build_bvh(m, "aabb", leaf)
    got = {tuple(p) for p in collide(b, pa, b, pb, test=test).pairs.tolist()}
    assert got == _brute(m, pa, m, pb)


def test_scaled_tree_is_the_tree_of_the_scaled_mesh():
    """The scaled boxes enclose the scaled triangles exactly as a refit would (no refit)."""
    m = torus(1.0, 0.3, 16, 8)
    s = np.array([2.0, 0.5, 1.5])
    b = build_bvh(m, "aabb")
    sb = b.scaled(s)
    assert sb.check() == []
    # the same topology; every box encloses its scaled triangles (check) and is tight: equal
    # to a refit of the same tree to the scaled vertices up to the scaled padding
    np.testing.assert_array_equal(sb.nodes_i, b.nodes_i)
    ref = build_bvh(m, "aabb")
    ref.refit(m.vertices * s)
    scale = np.abs(m.vertices * s).max() * 4
    np.testing.assert_allclose(sb.box_centers(), ref.box_centers(), rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(sb.box_extents(), ref.box_extents(), rtol=0, atol=1e-9 * scale)
    assert b.scaled(s) is sb  # cached for the last scale


def test_scale_on_other_types_is_refused_with_a_clear_error():
    m = torus(1.0, 0.3, 10, 5)
    M = make_pose(None, [0.2, 0, 0])
    M[:3, :3] = np.diag([2.0, 1.0, 1.0])
    for bv in ("obb", "sphere", "obb_sphere", "kdop18"):
        b = build_bvh(m, bv)
        with pytest.raises(ValueError, match="per-axis scale .*'aabb' hierarchies only"):
            collide(b, None, b, M)


def test_shear_and_reflection_are_still_rejected():
    m = torus(1.0, 0.3, 10, 5)
    b = build_bvh(m, "aabb")
    shear = np.eye(4)
    shear[0, 1] = 0.5
    mirror = np.diag([-1.0, 1.0, 1.0, 1.0])
    for bad in (shear, mirror):
        assert split_scale(bad) is None
        with pytest.raises(ValueError, match="pose_b: not a rigid transform"):
            collide(b, None, b, bad)


def test_split_scale_roundtrip():
    rng = np.random.default_rng(3)
    M, s = _scaled_pose(rng, 1.0)
    rigid, s2 = split_scale(M)
    np.testing.assert_allclose(s2, s, rtol=1e-12)
    np.testing.assert_allclose(rigid[:3, :3] * s2, M[:3, :3], rtol=1e-12, atol=1e-15)
    assert cdcore.collide is collide
