"""Public API argument checking: build_bvh, collide, collide_batch raise clear
ValueError/TypeError for bad arguments, and accept the documented defaults."""
import re

import numpy as np
import pytest

import cdcore
from cdcore import BV_TYPES, Mesh, build_bvh, collide, collide_batch
from cdcore.transforms import make_pose, random_poses, random_rotations, rotation_about

from meshgen import torus, uv_sphere


@pytest.fixture(scope="module")
def meshes():
    return Mesh(*torus(1.0, 0.3, 12, 6)), Mesh(*uv_sphere(0.5, 5, 8))


@pytest.fixture(scope="module")
def trees(meshes):
    ma, mb = meshes
    return {bv: (build_bvh(ma, bv), build_bvh(mb, bv)) for bv in BV_TYPES}


HIT_POSE = make_pose(None, (1.0, 0.0, 0.0))  # the sphere sits on the torus tube


# --------------------------------------------------------------------------------------
# build_bvh
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("bv", ["kdop", "AABB", "", "obb ", None, 3, ("aabb",)])
def test_build_unknown_bv(meshes, bv):
    with pytest.raises(ValueError, match=re.escape(f"bv: expected one of {sorted(BV_TYPES)}")):
        build_bvh(meshes[0], bv)


@pytest.mark.parametrize("obj", [None, "mesh.stl", torus(), (np.zeros((3, 3)), np.array([[0, 1, 2]]))])
def test_build_non_mesh(obj):
    with pytest.raises(TypeError, match=r"mesh: expected cdcore\.Mesh, got"):
        build_bvh(obj)


def test_build_non_mesh_checked_before_bv():
    with pytest.raises(TypeError, match=r"mesh"):
        build_bvh("not a mesh", "kdop")


@pytest.mark.parametrize("leaf", [0, -1, -100, np.int64(0)])
def test_build_leaf_size_too_small(meshes, leaf):
    with pytest.raises(ValueError, match=rf"leaf_size: must be >= 1, got {int(leaf)}"):
        build_bvh(meshes[0], "aabb", leaf)


@pytest.mark.parametrize("leaf", [True, False, 1.5, 2.0, "3", None, np.float64(2.0), [2]])
def test_build_leaf_size_wrong_type(meshes, leaf):
    with pytest.raises(TypeError, match=r"leaf_size: expected an int, got"):
        build_bvh(meshes[0], "aabb", leaf)


@pytest.mark.parametrize("leaf", [1, 2, np.int32(3), np.int64(4), 10**6])
def test_build_leaf_size_accepted(meshes, leaf):
    b = build_bvh(meshes[1], "obb", leaf)
    assert b.leaf_size == int(leaf) and isinstance(b.leaf_size, int)
    assert b.check() == []
    if leaf >= meshes[1].n_faces:
        assert b.n_nodes == 1 and b.height == 0


def test_build_defaults(meshes):
    b = build_bvh(meshes[0])
    assert b.bv == "aabb" and b.leaf_size == 1
    assert b.n_leaves == meshes[0].n_faces and b.n_nodes == 2 * meshes[0].n_faces - 1


# --------------------------------------------------------------------------------------
# collide: hierarchy / test / contacts arguments
# --------------------------------------------------------------------------------------
def test_collide_mismatched_bv_types(trees):
    for bv_a in BV_TYPES:
        for bv_b in BV_TYPES:
            if bv_a == bv_b:
                continue
            with pytest.raises(ValueError, match=rf"same bounding-volume type.*'{bv_a}'.*'{bv_b}'"):
                collide(trees[bv_a][0], None, trees[bv_b][1], None)
            with pytest.raises(ValueError, match=r"same bounding-volume type"):
                collide_batch(trees[bv_a][0], trees[bv_b][1], np.eye(4)[None])


@pytest.mark.parametrize("bv", list(BV_TYPES))
@pytest.mark.parametrize("test", list(cdcore.TESTS) + ["sat16", "SAT15", "", 15])
def test_collide_test_not_valid_for_bv(trees, bv, test):
    a, b = trees[bv]
    if test in BV_TYPES[bv].tests:
        assert collide(a, None, b, HIT_POSE, test=test).hit
        return
    with pytest.raises(ValueError, match=rf"test: .* is not available for bv='{bv}'; choose one of"):
        collide(a, None, b, None, test=test)
    with pytest.raises(ValueError, match=r"test: .* is not available"):
        collide_batch(a, b, HIT_POSE[None], test=test)


def test_every_bv_has_a_valid_default_test(trees):
    for bv, (a, b) in trees.items():
        assert BV_TYPES[bv].tests and set(BV_TYPES[bv].tests) <= set(cdcore.TESTS)
        res = collide(a, None, b, HIT_POSE)
        assert res.hit
        assert res.pairs.tolist() == collide(a, None, b, HIT_POSE, test=BV_TYPES[bv].tests[0]).pairs.tolist()


@pytest.mark.parametrize("contacts", ["some", "ALL", "", None, 1, True])
def test_collide_bad_contacts(trees, contacts):
    a, b = trees["aabb"]
    with pytest.raises(ValueError, match=r"contacts: expected 'all' or 'first'"):
        collide(a, None, b, None, contacts=contacts)


@pytest.mark.parametrize("which", ["a", "b"])
@pytest.mark.parametrize("obj", [None, "tree", 1])
def test_collide_non_bvh(trees, meshes, which, obj):
    a, b = trees["aabb"]
    obj = meshes[0] if obj is None else obj
    args = (obj, b) if which == "a" else (a, obj)
    with pytest.raises(TypeError, match=rf"bvh_{which}: expected cdcore\.BVH"):
        collide(args[0], None, args[1], None)
    with pytest.raises(TypeError, match=rf"bvh_{which}: expected cdcore\.BVH"):
        collide_batch(args[0], args[1], np.eye(4)[None])


# --------------------------------------------------------------------------------------
# collide: poses
# --------------------------------------------------------------------------------------
def _shear():
    p = np.eye(4)
    p[0, 1] = 0.5
    return p


def _rot_scaled(s):
    return make_pose(rotation_about((1.0, 2.0, 3.0), 0.7) * s, (0.1, 0.2, 0.3))


def _last_row():
    p = np.eye(4)
    p[3, 0] = 1.0
    return p


def _nan(where):
    p = np.eye(4)
    p[where] = np.nan
    return p


NON_RIGID = {
    "scale 2x": np.diag([2.0, 2.0, 2.0, 1.0]),
    "rotation scaled 2x": _rot_scaled(2.0),
    "tiny scale": _rot_scaled(1.0 + 1e-4),
    "anisotropic scale": np.diag([1.0, 1.0, 0.5, 1.0]),
    "shear": _shear(),
    "reflection det -1": np.diag([1.0, 1.0, -1.0, 1.0]),
    "rotation+reflection": make_pose(-rotation_about((0.0, 1.0, 1.0), 0.3)),
    "zero matrix 3x3": make_pose(np.zeros((3, 3))),
}


@pytest.mark.parametrize("which", ["pose_a", "pose_b"])
@pytest.mark.parametrize("pose", list(NON_RIGID.values()), ids=list(NON_RIGID))
def test_collide_non_rigid_pose(trees, which, pose):
    a, b = trees["obb"]
    kw = {"pose_a": None, "pose_b": None, which: pose}
    with pytest.raises(ValueError, match=rf"{which}: not a rigid transform"):
        collide(a, kw["pose_a"], b, kw["pose_b"])


BAD_POSES = [
    ("nan rotation", _nan((1, 1)), ValueError, r"NaN or infinite"),
    ("nan translation", _nan((0, 3)), ValueError, r"NaN or infinite"),
    ("inf translation", make_pose(None, (np.inf, 0.0, 0.0)), ValueError, r"NaN or infinite"),
    ("all nan", np.full((4, 4), np.nan), ValueError, r"NaN or infinite"),
    ("bad last row", _last_row(), ValueError, r"last row must be \(0, 0, 0, 1\)"),
    ("homogeneous w=2", np.diag([1.0, 1.0, 1.0, 2.0]), ValueError, r"last row"),
    ("(3, 3)", np.eye(3), ValueError, r"expected shape \(4, 4\), got \(3, 3\)"),
    ("(3, 4)", np.eye(4)[:3], ValueError, r"expected shape \(4, 4\), got \(3, 4\)"),
    ("(1, 4, 4)", np.eye(4)[None], ValueError, r"expected shape \(4, 4\), got \(1, 4, 4\)"),
    ("(16,)", np.eye(4).ravel(), ValueError, r"expected shape \(4, 4\)"),
    ("scalar", 1.0, ValueError, r"expected shape \(4, 4\)"),
    ("string", "identity", TypeError, r"expected a real 4x4 array"),
    ("complex", np.eye(4, dtype=complex), TypeError, r"expected a real 4x4 array"),
    ("bool", np.eye(4, dtype=bool), TypeError, r"expected a real 4x4 array"),
    ("object", np.eye(4).astype(object), TypeError, r"expected a real 4x4 array"),
]


@pytest.mark.parametrize("which", ["pose_a", "pose_b"])
@pytest.mark.parametrize("pose,exc,match", [p[1:] for p in BAD_POSES], ids=[p[0] for p in BAD_POSES])
def test_collide_bad_pose(trees, which, pose, exc, match):
    a, b = trees["aabb"]
    kw = {"pose_a": None, "pose_b": None, which: pose}
    with pytest.raises(exc, match=rf"{which}: .*{match}"):
        collide(a, kw["pose_a"], b, kw["pose_b"])


def test_pose_checks_run_before_any_traversal(trees):
    """A bad pose is reported even if the hierarchies' roots would be separated (an OBB tree:
    AABB trees accept a scaled pose, van den Bergen section 6)."""
    a, b = trees["obb"]
    far = make_pose(None, (100.0, 0.0, 0.0))
    bad = far.copy()
    bad[:3, :3] *= 2.0
    with pytest.raises(ValueError, match=r"pose_b"):
        collide(a, None, b, bad)


def test_none_pose_means_identity(trees):
    for bv, (a, b) in trees.items():
        for test in BV_TYPES[bv].tests:
            ref = collide(a, np.eye(4), b, np.eye(4), test=test)
            for pa, pb in ((None, None), (None, np.eye(4)), (np.eye(4), None)):
                assert collide(a, pa, b, pb, test=test).pairs.tolist() == ref.pairs.tolist()
            # and with a real placement of B
            ref = collide(a, np.eye(4), b, HIT_POSE, test=test)
            assert ref.hit
            assert collide(a, None, b, HIT_POSE, test=test).pairs.tolist() == ref.pairs.tolist()
            bt = collide_batch(a, b, np.stack([np.eye(4), HIT_POSE]), test=test)
            bt2 = collide_batch(a, b, np.stack([np.eye(4), HIT_POSE]), pose_a=np.eye(4), test=test)
            assert bt.hits.tolist() == bt2.hits.tolist() == [False, True]


def test_pose_as_lists_and_ints_accepted(trees):
    a, b = trees["obb"]
    ref = collide(a, None, b, HIT_POSE)
    assert collide(a, np.eye(4).tolist(), b, HIT_POSE.tolist()).pairs.tolist() == ref.pairs.tolist()
    assert collide(a, np.eye(4, dtype=np.int64), b, HIT_POSE.astype(np.float32)).pairs.tolist() \
        == ref.pairs.tolist()
    assert collide(a, np.asfortranarray(np.eye(4)), b, np.asfortranarray(HIT_POSE)).pairs.tolist() \
        == ref.pairs.tolist()


def test_nearly_orthonormal_pose_accepted(trees):
    """A rotation that went through float32 or a few matrix products is still rigid."""
    a, b = trees["aabb"]
    rng = np.random.default_rng(4)
    for R in random_rotations(20, rng):
        pose = make_pose(R.astype(np.float32).astype(np.float64), (1.0, 0.0, 0.0))
        collide(a, None, b, pose)


def test_caller_pose_not_modified(trees):
    a, b = trees["obb"]
    p = random_poses(1, np.random.default_rng(9))[0]
    keep = p.copy()
    collide(a, p, b, p)
    collide_batch(a, b, p[None], pose_a=p)
    np.testing.assert_array_equal(p, keep)
    assert p.flags.writeable


# --------------------------------------------------------------------------------------
# collide_batch
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(5, 4), (4, 4), (5, 3, 3), (5, 4, 3), (2, 5, 4, 4), (16,)])
def test_batch_bad_shape(trees, shape):
    a, b = trees["aabb"]
    with pytest.raises(ValueError, match=re.escape(f"poses_b: expected shape (N, 4, 4), got {shape}")):
        collide_batch(a, b, np.zeros(shape))


@pytest.mark.parametrize("poses", ["identity", None, np.zeros((2, 4, 4), dtype=complex)])
def test_batch_bad_type(trees, poses):
    a, b = trees["aabb"]
    with pytest.raises(TypeError, match=r"poses_b: expected a real \(N, 4, 4\) array"):
        collide_batch(a, b, poses)


@pytest.mark.parametrize("bad_index", [0, 3, 6])
@pytest.mark.parametrize("bad", ["scale 2x", "shear", "reflection det -1", "nan", "last row"])
def test_batch_bad_pose_in_the_middle_names_its_index(trees, bad_index, bad):
    a, b = trees["obb_sphere"]
    poses = random_poses(7, np.random.default_rng(bad_index), cube_size=2.0)
    poses[bad_index] = {"nan": _nan((2, 3)), "last row": _last_row()}.get(bad, NON_RIGID.get(bad))
    with pytest.raises(ValueError, match=rf"poses_b\[{bad_index}\]: "):
        collide_batch(a, b, poses)


def test_batch_reports_the_first_bad_index(trees):
    a, b = trees["aabb"]
    poses = np.tile(np.eye(4), (6, 1, 1))
    poses[2, 0, 0] = 2.0
    poses[4, 1, 1] = np.nan
    with pytest.raises(ValueError, match=r"poses_b\[2\]: not a rigid transform"):
        collide_batch(a, b, poses)


def test_batch_bad_pose_a(trees):
    a, b = trees["aabb"]
    poses = np.tile(np.eye(4), (2, 1, 1))
    with pytest.raises(ValueError, match=r"pose_a: not a rigid transform"):
        collide_batch(a, b, poses, pose_a=np.diag([2.0, 1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match=r"pose_a: expected shape \(4, 4\)"):
        collide_batch(a, b, poses, pose_a=np.eye(3))
    with pytest.raises(TypeError, match=r"pose_a"):
        collide_batch(a, b, poses, pose_a="identity")


def test_batch_empty_and_list_input(trees):
    a, b = trees["aabb"]
    res = collide_batch(a, b, np.zeros((0, 4, 4)))
    assert res.hits.shape == (0,) and res.stats.bv_tests == 0
    res = collide_batch(a, b, [np.eye(4).tolist(), HIT_POSE.tolist()])
    assert res.hits.tolist() == [False, True]
    res = collide_batch(a, b, np.stack([np.eye(4), HIT_POSE]).astype(np.float32))
    assert res.hits.tolist() == [False, True]


def test_batch_non_contiguous_poses(trees):
    a, b = trees["obb"]
    poses = random_poses(10, np.random.default_rng(2), cube_size=2.5)
    strided = np.repeat(poses, 2, axis=0)[::2]
    assert not strided.flags.c_contiguous or strided.base is not None
    ref = collide_batch(a, b, poses)
    assert collide_batch(a, b, strided).hits.tolist() == ref.hits.tolist()
    assert collide_batch(a, b, np.asfortranarray(poses)).hits.tolist() == ref.hits.tolist()
