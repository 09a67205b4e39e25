"""save_query / load_query: exact round trip (refitted trees included) and typed errors."""
import numpy as np
import pytest

import cdcore
from cdcore import build_bvh, collide, load_query, save_query, shapes
from cdcore.transforms import make_pose, rotation_about


@pytest.mark.parametrize("bv, test", [("obb", "sat15"), ("obb_sphere", "sphere5"), ("aabb", None),
                                      ("kdop18", None)])
def test_roundtrip_replays_same_traversal(tmp_path, bv, test):
    torus = shapes.torus(1.0, 0.25, 24, 8)
    a = build_bvh(torus, bv)
    b = build_bvh(shapes.torus(1.0, 0.25, 20, 10), bv, leaf_size=2)
    pose_b = make_pose(rotation_about([1, 0, 0], np.pi / 2), [1.2, 0.05, 0])
    ans = save_query(tmp_path / "q", a, None, b, pose_b, test=test, note="why a hit?", expected=False)
    q = load_query(tmp_path / "q.npz")
    assert q.note == "why a hit?" and q.expected is False and q.test == test
    assert q.bvh_a.bv == bv and q.bvh_b.leaf_size == 2
    np.testing.assert_array_equal(q.bvh_b.mesh.vertices, b.mesh.vertices)
    np.testing.assert_array_equal(q.pose_b, pose_b)
    r0 = collide(a, np.eye(4), b, pose_b, test=test, trace=True)
    r1 = q.run(trace=True)
    assert ans["hit"] == r0.hit == r1.hit and q.answer == ans
    np.testing.assert_array_equal(np.sort(r0.pairs, axis=0), np.sort(r1.pairs, axis=0))
    assert r0.stats.bv_tests == r1.stats.bv_tests and len(r0.trace) == len(r1.trace)


def test_refitted_tree_is_restored(tmp_path):
    m = shapes.torus(1.0, 0.25, 24, 8)
    a = build_bvh(m, "obb")
    v = m.vertices.copy()
    v[:, 2] += 0.2 * np.sin(3 * v[:, 0])
    a.refit(v)
    b = build_bvh(shapes.icosphere(0.4, 2), "obb")
    pose_b = make_pose(None, [1.0, 0.0, 0.2])
    save_query(tmp_path / "q.npz", a, None, b, pose_b)
    q = load_query(tmp_path / "q.npz")
    np.testing.assert_array_equal(q.bvh_a.nodes_f, a.nodes_f)  # the refit, not a rebuild
    assert not np.array_equal(build_bvh(q.bvh_a.mesh, "obb").nodes_f, a.nodes_f)
    r0, r1 = collide(a, None, b, pose_b), q.run()
    assert r0.stats.bv_tests == r1.stats.bv_tests and r0.hit == r1.hit


def test_errors(tmp_path):
    a = build_bvh(shapes.icosphere(1.0, 1), "obb")
    with pytest.raises(TypeError, match="bvh_a"):
        save_query(tmp_path / "q.npz", a.mesh, None, a, None)
    with pytest.raises(ValueError, match="pose_b"):
        save_query(tmp_path / "q.npz", a, None, a, np.zeros((4, 4)))
    with pytest.raises(ValueError):
        save_query(tmp_path / "q.npz", a, None, a, None, test="nope")
    with pytest.raises(FileNotFoundError):
        load_query(tmp_path / "none.npz")
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(ValueError, match="junk.npz"):
        load_query(tmp_path / "junk.npz")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="missing"):
        load_query(tmp_path / "other.npz")
    save_query(tmp_path / "ok.npz", a, None, a, make_pose(None, [3, 0, 0]))
    d = dict(np.load(tmp_path / "ok.npz"))
    d["bv_a"] = np.array("octree")
    np.savez(tmp_path / "bad.npz", **d)
    with pytest.raises(ValueError, match="octree"):
        load_query(tmp_path / "bad.npz")
    assert cdcore.load_query is load_query
