"""``cdcore-bench fcl``: the torus generator, the linked-tori gap geometry, and a quick
run against python-fcl (skipped when python-fcl is not installed)."""
import json
import sys

import numpy as np
import pytest

from cdcore._tritri_ref import all_pairs_overlap
from cdcore.bench.common import (directed_edges_unique, edge_face_counts, linked_offset, linked_pose,
                                 near_contact_poses, torus)
from cdcore.transforms import relative_transform, transform_points


@pytest.mark.parametrize("n_major, n_minor", [(3, 3), (24, 8), (64, 16), (128, 64)])
def test_torus_is_a_closed_oriented_manifold(n_major, n_minor):
    v, f = torus(n_major, n_minor)
    assert v.shape == (n_major * n_minor, 3) and f.shape == (2 * n_major * n_minor, 3)
    assert f.dtype == np.int32 and f.min() == 0 and f.max() == len(v) - 1
    counts = edge_face_counts(f)
    assert (counts == 2).all()  # every edge shared by exactly two faces
    assert len(v) - len(counts) + len(f) == 0  # Euler characteristic of a torus
    assert directed_edges_unique(f)  # consistently oriented
    assert len({tuple(sorted(t)) for t in f.tolist()}) == len(f)  # no duplicate faces
    tri = v[f]
    area2 = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    assert area2.min() > 0
    volume = np.einsum("ij,ij->", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])) / 6
    assert volume > 0  # outward normals
    if n_minor >= 8:
        assert volume == pytest.approx(2 * np.pi ** 2 * 1.0 * 0.25 ** 2, rel=0.11)


def test_bench_mesh_sizes():
    assert len(torus(64, 16)[1]) == 2048
    assert len(torus(128, 64)[1]) == 16384


def test_linked_offset():
    assert linked_offset(0.5) == pytest.approx(1.0)  # B centred on A's tube: the most clearance
    assert linked_offset(0.01) == pytest.approx(1.49)


def _brute_force_pairs(n_major, n_minor, gap):
    v, f = torus(n_major, n_minor)
    R, t = relative_transform(np.eye(4), linked_pose(gap))
    vb = transform_points(R, t, v)
    return v, vb, all_pairs_overlap(v[f], vb[f])


@pytest.mark.parametrize("n_major, n_minor", [(24, 8), (16, 6)])
@pytest.mark.parametrize("gap, expect_hit", [(0.01, False), (-0.01, True), (0.1, False), (-0.05, True)])
def test_linked_tori_gap_geometry(n_major, n_minor, gap, expect_hit):
    v, vb, pairs = _brute_force_pairs(n_major, n_minor, gap)
    assert bool(len(pairs)) == expect_hit
    # the closest points are vertices of both meshes: A's inner equator at (0.75, 0, 0),
    # B's at (0.75 - gap, 0, 0)
    assert np.any(np.all(np.isclose(v, [0.75, 0, 0], atol=1e-12), axis=1))
    assert np.any(np.all(np.isclose(vb, [0.75 - gap, 0, 0], atol=1e-12), axis=1))


def test_near_contact_poses_are_rigid_and_seeded():
    p = near_contact_poses(16, seed=3)
    assert p.shape == (16, 4, 4)
    rot = p[:, :3, :3]
    assert np.allclose(np.einsum("nji,njk->nik", rot, rot), np.eye(3), atol=1e-12)
    assert np.allclose(np.linalg.det(rot), 1.0)
    assert np.array_equal(p, near_contact_poses(16, seed=3))
    assert not np.array_equal(p, near_contact_poses(16, seed=4))


def test_bad_arguments_are_argparse_errors(capsys):
    from cdcore.bench.__main__ import main
    for argv in ([], ["nope"], ["fcl", "--repeat", "0"], ["fcl", "--repeat", "x"], ["fcl", "--bogus"]):
        assert main(argv) == 2  # argparse's code, returned by main
    assert "usage" in capsys.readouterr().err


def test_missing_fcl_exits_2_without_traceback(monkeypatch, capsys):
    from cdcore.bench.__main__ import main
    monkeypatch.setitem(sys.modules, "fcl", None)  # makes `import fcl` raise ImportError
    assert main(["fcl", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "python-fcl is not importable" in err and "Traceback" not in err


def test_fcl_bench_quick(tmp_path):
    pytest.importorskip("fcl")
    from cdcore.bench.__main__ import main
    from cdcore.bench.fcl_bench import FIXED_POSES, MESHES, RANDOM_POSE
    out = tmp_path / "fcl.json"
    assert main(["fcl", "--quick", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["agreement"]["ok"], data["agreement"]["disagreements"]
    rows = data["rows"]
    variants = data["meta"]["variants"]
    assert {"obb/sat15", "obb_sphere/sphere5", "aabb/sat15", "aabb/sat6"} <= set(variants)
    pose_kinds = [name for name, _ in FIXED_POSES] + [RANDOM_POSE]
    collide = [r for r in rows if r["section"] == "collide"]
    for label, _, _ in MESHES:
        for pose in pose_kinds:
            got = {r["variant"] for r in collide if r["mesh"] == label and r["pose"] == pose}
            assert got == {"python-fcl", *variants}, (label, pose, got)
        batch = {r["variant"] for r in rows if r["section"] == "batch" and r["mesh"] == label
                 and r["engine"] != "cdcore-serial"}
        assert batch == {"python-fcl loop", *variants}
        serial = [r for r in rows if r["section"] == "batch" and r["mesh"] == label and r["engine"] == "cdcore-serial"]
        assert len(serial) == len(variants) and all(r["agree_with_fcl"] for r in serial)
        builds = {r["bv"] for r in rows if r["section"] == "build" and r["mesh"] == label}
        assert builds == {"obbrss", "aabb", "obb", "sphere", "obb_sphere"}
    assert {r["mesh"] for r in collide} == {label for label, _, _ in MESHES}
    for r in rows:
        if r["section"] in ("collide", "batch"):
            assert r["agree_with_fcl"], r
            assert r["median_s"] > 0
    fixed = [r for r in collide if r["n_poses"] == 1]
    assert all(r["hits"] == int(r["expected_hit"]) for r in fixed)
    assert any(r["section"] == "refit" and "meets_target" in r for r in rows)
    assert {r["key"] for r in rows if r["section"] == "startup"} >= {"import", "first_collide", "warm_collide"}


def _write_obj(path, v, f):
    with open(path, "w") as fh:
        fh.writelines(f"v {float(x)!r} {float(y)!r} {float(z)!r}\n" for x, y, z in v)
        fh.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in f)


def test_envrob_arguments_are_checked(tmp_path, capsys):
    """--env/--rob: both or neither, readable files; a clear message and exit 2, no traceback."""
    pytest.importorskip("fcl")
    from cdcore.bench.__main__ import main
    v, f = torus(16, 8)
    good = tmp_path / "good.obj"
    _write_obj(good, v, f)
    bad = tmp_path / "bad.obj"
    bad.write_text("v 1 2\nf 1 2 9\n")
    cases = (["--env", str(good)], ["--rob", str(good)], ["--envrob-only"],
             ["--env", str(tmp_path / "missing.obj"), "--rob", str(good)],
             ["--env", str(good), "--rob", str(bad)])
    for extra in cases:
        assert main(["fcl", "--quick", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("cdcore-bench fcl: ") and "Traceback" not in err, (extra, err)


def test_envrob_section_agrees_with_fcl(tmp_path):
    """The env/rob section on procedural stand-ins: every engine's answers equal python-fcl's,
    both outcomes occur, and the verdict row carries the geometric mean of per-pose ratios."""
    pytest.importorskip("fcl")
    from cdcore.bench.__main__ import main
    from cdcore.bench.fcl_bench import TARGET_ENVROB
    v, f = torus(48, 12)
    _write_obj(tmp_path / "env.obj", v * 3.0, f)   # a large ring filling its box around a hole
    _write_obj(tmp_path / "rob.obj", *torus(12, 6))
    out = tmp_path / "er.json"
    assert main(["fcl", "--quick", "--repeat", "20", "--env", str(tmp_path / "env.obj"),
                 "--rob", str(tmp_path / "rob.obj"), "--envrob-only", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["agreement"]["ok"], data["agreement"]["disagreements"]
    rows = [r for r in data["rows"] if r["section"] == "envrob"]
    assert {r["section"] for r in data["rows"]} == {"envrob"}  # --envrob-only: nothing else ran
    n = rows[0]["n_poses"]
    ref = rows[0]
    assert ref["engine"] == "python-fcl" and 0 < ref["hits"] < n
    assert all(r["agree_with_fcl"] and r["hits"] == ref["hits"] for r in rows)
    verdicts = [r for r in rows if "meets_target" in r]
    assert len(verdicts) == len(data["meta"]["variants"])
    for r in verdicts:
        assert r["target"] == TARGET_ENVROB and r["ratio"] > 0
        assert r["meets_target"] == (r["ratio"] <= TARGET_ENVROB)
