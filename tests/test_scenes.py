"""Scene files: every shipped scene loads deterministically; bad files give typed errors."""
import json

import numpy as np
import pytest

from cdcore.scenes import SceneError, list_scenes, load_scene, rigid_scene
from cdcore import shapes


def test_every_scene_loads_and_is_deterministic():
    names = list_scenes()
    assert {"chains-3to1", "chains-6to1", "chains-dented", "chains-braided", "hand-ball", "rigid-torus",
            "rigid-teapot-like", "rigid-slender", "deform-wave", "proximity-parallel", "proximity-point"} <= set(names)
    for name in names:
        a = load_scene(name, frames=12)
        b = load_scene(name, frames=12)
        assert a.frames == 12 and a.bodies and a.pairs
        for x, y in zip(a.bodies, b.bodies):
            assert np.array_equal(x.link_poses, y.link_poses)
            assert np.all(np.isfinite(x.link_poses))
            R = x.link_poses[..., :3, :3]
            assert np.allclose(np.einsum("...ki,...kj->...ij", R, R), np.eye(3), atol=1e-9)


@pytest.mark.parametrize("name", ["chains-3to1", "chains-braided", "hand-ball"])
def test_joint_motions_stay_within_limits(name):
    sc = load_scene(name)
    for sb in sc.bodies:
        body = sb.body
        if body.n_links < 2:
            continue
        # recover the joint angles from consecutive link poses: R_child = R_parent @ R_origin @ Rot(axis, q)
        P = sb.link_poses
        for i in range(1, body.n_links):
            p = body.parents[i]
            rel = np.einsum("fji,fjk->fik", P[:, p, :3, :3] @ body.origins[i][:3, :3], P[:, i, :3, :3])
            k = body.axes[i]
            # rotation angle about k: atan2(sin, cos) from the matrix
            s = 0.5 * np.einsum("j,fj->f", k, np.stack([rel[:, 2, 1] - rel[:, 1, 2], rel[:, 0, 2] - rel[:, 2, 0],
                                                        rel[:, 1, 0] - rel[:, 0, 1]], axis=1))
            c = (np.trace(rel, axis1=1, axis2=2) - 1 - (1 - 0) * 0) / 2
            q = np.arctan2(s, np.clip((np.trace(rel, axis1=1, axis2=2) - 1) / 2, -1, 1))
            lo, hi = body.limits[i]
            assert q.min() >= lo - 1e-6 and q.max() <= hi + 1e-6, (name, i, q.min(), q.max())
            del c


@pytest.mark.parametrize("name,target", [("chains-3to1", 0.0214), ("chains-6to1", 0.0354),
                                         ("chains-dented", 0.0073)])
def test_chains_are_near_each_other_and_mostly_apart(name, target):
    """CAB Tables 1-3: few contacts (the paper's 214, 354, 73 in 10,000 frames) while the
    chains stay close enough for the AABB* boxes to overlap on most frames."""
    from cdcore.scenes import SceneRunner
    from cdcore.scenes.motion_paper import pass_offsets
    sc = load_scene(name)
    star = SceneRunner(sc, "aabb_star")
    frames = range(0, sc.frames, 3)
    brute = [star.brute(f) for f in frames]
    res = [star.step(f) for f in frames]
    per_frame = sum(b.contacts for b in brute) / len(brute)
    assert 0 < per_frame <= 0.05 and per_frame == pytest.approx(target, abs=0.02)
    assert sum(r.n_exact > 0 for r in res) > 0.75 * len(res)  # the broad phase keeps finding candidates
    # contacts only where the script's pass brings chain B in
    spec = sc.spec["script"]
    off = pass_offsets(np.asarray(frames) * sc.dt, spec["far"], spec["near"], spec["period"], spec["pass"])
    hit = np.array([b.contacts > 0 for b in brute])
    assert hit.any() and np.all(off[hit] < spec["far"] - 0.5)


def test_near_pass_script_validates_its_fields():
    import copy
    from cdcore.scenes.scene import scene_from_spec
    from cdcore.scenes.spec import SceneError
    base = load_scene("chains-3to1", frames=3).spec
    for field, value in (("period", 0), ("pass", 100.0), ("body", 5), ("axis", [0, 0, 0]), ("slide", [1.0])):
        sp = copy.deepcopy(base)
        sp["script"][field] = value
        with pytest.raises(SceneError, match=field if field != "pass" else "pass"):
            scene_from_spec(sp, frames=3)


def test_deform_scene_changes_vertices_every_frame():
    sc = load_scene("deform-wave", frames=5)
    sheet = sc.bodies[0]
    assert sheet.deforming
    v0, v1 = sheet.vertices(0), sheet.vertices(1)
    assert v0.shape == v1.shape and not np.array_equal(v0, v1)
    assert np.array_equal(v0[:, :2], v1[:, :2])  # a flat sheet moves along its normal (z) only


def test_deform_wave_vertices_follow_the_travelling_wave():
    """``SceneBody.vertices`` (sine and cosine parts per vertex, made once) against the wave
    written out: base + amplitude sin(2 pi (x / wavelength - t / period)) along the normals."""
    from cdcore.scenes.scene import _vertex_normals
    sheet = load_scene("deform-wave", frames=600).bodies[0]
    d, base = sheet.deform, sheet.base_vertices
    n = _vertex_normals(base, sheet.body.links[0].mesh.faces)
    for f in (0, 1, 7, 150, 299, 599):
        t = f * d["dt"]
        ref = base + (d["amplitude"] * np.sin(2 * np.pi * (base[:, 0] / d["wavelength"] - t / d["period"])))[:, None] * n
        np.testing.assert_allclose(sheet.vertices(f), ref, rtol=0, atol=1e-14)


def _write(tmp_path, spec, name="s.json"):
    p = tmp_path / name
    p.write_text(json.dumps(spec) if not isinstance(spec, str) else spec)
    return str(p)


GOOD = {"name": "mine", "kind": "rigid", "frames": 5,
        "bodies": [{"name": "a", "type": "rigid", "mesh": {"shape": "icosphere", "args": {"radius": 1.0}}},
                   {"name": "b", "type": "rigid", "mesh": {"shape": "torus"},
                    "motion": {"root": {"type": "random", "cube_size": 2.0, "seed": 3}}}]}


def test_a_user_scene_file_loads(tmp_path):
    sc = load_scene(_write(tmp_path, GOOD))
    assert sc.name == "mine" and len(sc.bodies) == 2 and sc.pairs == [(0, 1)]


def test_a_user_mesh_file_in_a_scene(tmp_path):
    import trimesh
    trimesh.creation.box(extents=(1, 1, 1)).export(tmp_path / "box.obj")
    spec = json.loads(json.dumps(GOOD))
    spec["bodies"][0]["mesh"] = {"file": "box.obj", "scale": 2.0}
    sc = load_scene(_write(tmp_path, spec))
    assert np.ptp(sc.bodies[0].body.links[0].mesh.vertices, axis=0) == pytest.approx([2, 2, 2])


@pytest.mark.parametrize("mutate,match", [
    (lambda s: s.pop("kind"), "kind"),
    (lambda s: s.update(kind="nonsense"), "kind"),
    (lambda s: s.update(frames=0), "frames"),
    (lambda s: s.update(bodies=[]), "bodies"),
    (lambda s: s["bodies"][0]["mesh"].update(shape="teapot_real"), "unknown shape"),
    (lambda s: s["bodies"][0]["mesh"].update(args={"radius": 1.0, "bogus": 2}), "args"),
    (lambda s: s["bodies"][0].update(type="robot"), "type"),
    (lambda s: s.update(pairs=[[0, 5]]), "pairs"),
    (lambda s: s["bodies"][1]["motion"]["root"].update(type="teleport"), "type"),
    (lambda s: s["bodies"][0]["mesh"].update(shape=None, file="missing.stl") or s["bodies"][0]["mesh"].pop("shape"),
     "missing.stl"),
])
def test_bad_scene_descriptions_raise_scene_errors(tmp_path, mutate, match):
    spec = json.loads(json.dumps(GOOD))
    mutate(spec)
    with pytest.raises(SceneError, match=match):
        load_scene(_write(tmp_path, spec))


def test_corrupt_and_missing_scene_files(tmp_path):
    with pytest.raises(SceneError, match="JSON"):
        load_scene(_write(tmp_path, "{not json", "bad.json"))
    with pytest.raises(SceneError, match="object"):
        load_scene(_write(tmp_path, "[1, 2]", "list.json"))
    with pytest.raises(FileNotFoundError, match="unknown scene"):
        load_scene("no-such-scene")


def test_rigid_scene_from_meshes():
    sc = rigid_scene(shapes.torus(), shapes.icosphere(0.5, 2), frames=50, cube_size=2.0)
    assert sc.kind == "rigid" and sc.bodies[1].link_poses.shape == (50, 1, 4, 4)
