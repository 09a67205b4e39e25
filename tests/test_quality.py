"""Tree-quality metrics against plain-numpy references; the cost model; the lab on shipped scenes
(builders and the front cache equal the reference traversal on every shipped scene's motion)."""
import numpy as np
import pytest

import cdcore
from cdcore import _layout as L
from cdcore import build_bvh
from cdcore.quality import (epo, expected_tests, fit_cost_model, node_measures, sah_costs, sibling_overlap,
                            tree_quality)

from meshgen import soup, torus, uv_sphere


def _mesh():
    return cdcore.Mesh(*torus(0.5, 0.15, 16, 6))


@pytest.mark.parametrize("bv", ["aabb", "obb", "sphere", "kdop14"])
def test_sah_cost_matches_a_loop(bv):
    b = build_bvh(_mesh(), bv, 2, split="sah")
    area, vol, _ = node_measures(b)
    sah = vol_c = 0.0
    for n in range(b.n_nodes):
        w = b.nodes_i[n, L.COUNT] if b.nodes_i[n, L.LEFT] < 0 else 1.0
        sah += w * area[n] / area[0]
        vol_c += w * vol[n] / vol[0]
    assert sah_costs(b) == pytest.approx((sah, vol_c), rel=1e-12)
    if bv == "sphere":
        assert area[0] == pytest.approx(4 * np.pi * b.nodes_f[0, L.SR] ** 2)


def _samples(b):
    v, f = b.mesh.vertices, b.mesh.faces
    bary = np.array([[1 / 3, 1 / 3, 1 / 3], [2 / 3, 1 / 6, 1 / 6], [1 / 6, 2 / 3, 1 / 6], [1 / 6, 1 / 6, 2 / 3]])
    pts = np.einsum("sk,fkd->fsd", bary, v[f])
    area = 0.5 * np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]), axis=1)
    return pts, area


def test_epo_matches_brute_force_on_nested_boxes():
    b = build_bvh(_mesh(), "aabb", 1, split="median")
    pts, area = _samples(b)
    total = 0.0
    c, e = b.box_centers(), b.box_extents()
    for n in range(b.n_nodes):
        inside = np.all(np.abs(pts - c[n]) <= e[n], axis=2)  # (faces, 4)
        own = np.zeros(len(area), bool)
        own[b.node_primitives(n)] = True
        w = 1.0 if b.nodes_i[n, L.LEFT] >= 0 else b.nodes_i[n, L.COUNT]
        total += w * (inside[~own].sum(axis=1) * 0.25 * area[~own]).sum()
    assert epo(b) == pytest.approx(total / area.sum(), rel=1e-9)
    assert epo(b) > 0


def test_sibling_overlap_references():
    b = build_bvh(_mesh(), "aabb", 1)
    c, e = b.box_centers(), b.box_extents()
    ref = 0.0
    for n in np.flatnonzero(~b.is_leaf):
        l, r = b.nodes_i[n, L.LEFT], b.nodes_i[n, L.RIGHT]
        d = np.minimum(c[l] + e[l], c[r] + e[r]) - np.maximum(c[l] - e[l], c[r] - e[r])
        ref += np.prod(np.clip(d, 0, None))
    assert sibling_overlap(b) == pytest.approx(ref / np.prod(2 * e[0]), rel=1e-12)
    # spheres: the lens formula against Monte Carlo
    s = build_bvh(cdcore.Mesh(*uv_sphere(0.5, 5, 8)), "sphere", 4)
    rng = np.random.default_rng(0)
    mc = 0.0
    for n in np.flatnonzero(~s.is_leaf):
        l, r = s.nodes_i[n, L.LEFT], s.nodes_i[n, L.RIGHT]
        cl, rl, cr, rr = s.nodes_f[l, L.S0:L.S0 + 3], s.nodes_f[l, L.SR], s.nodes_f[r, L.S0:L.S0 + 3], s.nodes_f[r, L.SR]
        p = cl + rl * (rng.random((20000, 3)) * 2 - 1)
        inside = (np.linalg.norm(p - cl, axis=1) <= rl) & (np.linalg.norm(p - cr, axis=1) <= rr)
        mc += inside.mean() * (2 * rl) ** 3
    v0 = 4 / 3 * np.pi * s.nodes_f[0, L.SR] ** 3
    assert sibling_overlap(s) == pytest.approx(mc / v0, rel=0.05)
    # oriented boxes: an OBB tree estimate is close to Monte Carlo
    o = build_bvh(_mesh(), "obb", 2)
    assert 0 <= sibling_overlap(o) < sibling_overlap(build_bvh(_mesh(), "obb", 2, split="median")) + 1


def test_histograms_and_counts():
    q = tree_quality(build_bvh(_mesh(), "obb", 3, split="mean"))
    assert q.leaf_size_hist.sum() == q.n_leaves
    assert (q.leaf_size_hist * np.arange(len(q.leaf_size_hist))).sum() == _mesh().n_faces
    assert q.depth_hist.sum() == q.n_leaves and len(q.depth_hist) == q.height + 1
    with pytest.raises(TypeError):
        tree_quality("tree")


def _expected_ref(ba, bb):
    ma, mb = node_measures(ba), node_measures(bb)
    root = ma[1][0] + mb[1][0] + (ma[2][0] * mb[0][0] + mb[2][0] * ma[0][0]) / (4 * np.pi)
    nv, npr = 1.0, 0.0
    todo = [(0, 0)]
    while todo:
        a, b = todo.pop()
        p = min(1.0, (ma[1][a] + mb[1][b] + (ma[2][a] * mb[0][b] + mb[2][b] * ma[0][a]) / (4 * np.pi)) / root)
        la, lb = ba.nodes_i[a, 0] < 0, bb.nodes_i[b, 0] < 0
        if la and lb:
            npr += p * ba.nodes_i[a, 3] * bb.nodes_i[b, 3]
            continue
        nv += 2 * p
        if lb or (not la and ba.nodes_f[a, L.SIZE] >= bb.nodes_f[b, L.SIZE]):
            todo += [(ba.nodes_i[a, 0], b), (ba.nodes_i[a, 1], b)]
        else:
            todo += [(a, bb.nodes_i[b, 0]), (a, bb.nodes_i[b, 1])]
    return nv, npr


def test_expected_tests_matches_the_recursion():
    rng = np.random.default_rng(1)
    ba = build_bvh(cdcore.Mesh(*soup(rng, n=12)), "obb", 1)
    bb = build_bvh(cdcore.Mesh(*uv_sphere(0.5, 4, 5)), "obb", 2)
    assert expected_tests(ba, bb, eps=0.0) == pytest.approx(_expected_ref(ba, bb), rel=1e-12)
    med = expected_tests(build_bvh(_mesh(), "aabb", 1), build_bvh(_mesh(), "aabb", 1))
    sah = expected_tests(build_bvh(_mesh(), "aabb", 1, split="sah"), build_bvh(_mesh(), "aabb", 1, split="sah"))
    assert sah[0] < med[0]


def test_fit_cost_model_recovers_the_costs():
    rng = np.random.default_rng(2)
    nv, npr, nq = rng.integers(100, 5000, 50), rng.integers(0, 500, 50), rng.integers(1, 20, 50)
    t = nv * 40e-9 + npr * 300e-9 + nq * 2e-6
    c_v, c_p, c_0, r2 = fit_cost_model(nv, npr, t, nq)
    assert (c_v, c_p, c_0) == pytest.approx((40e-9, 300e-9, 2e-6), rel=1e-6) and r2 == pytest.approx(1.0)


# ---- the lab on every shipped scene ----------------------------------------------------------
def _scenes():
    from cdcore.scenes import list_scenes
    return list_scenes()


@pytest.mark.slow
@pytest.mark.parametrize("name", _scenes())
def test_split_trees_and_front_cache_match_on_every_scene(name):
    """Every split rule's trees and the front cache return the pairs of the median-split full
    traversal (itself equal to brute force: test_collide_oracle) on each shipped scene's motion."""
    from cdcore.lab import LabConfig, MotionRun
    from cdcore.scenes import load_scene
    scene = load_scene(name, frames=6)
    runs = {s: MotionRun(scene, LabConfig("obb", split=s)) for s in ("median", "mean", "sah", "volume")}
    front = MotionRun(scene, LabConfig("obb", split="sah"), front=True, check=True)
    for f in range(6):
        contacts = {}
        for s, r in runs.items():
            r.step(f)
            contacts[s] = r.log.contacts[-1]
        front.step(f)
        assert len(set(contacts.values())) == 1, (name, f, contacts)
        assert front.log.contacts[-1] == contacts["median"]


def test_run_lab_and_verdict():
    from cdcore.lab import LabConfig, run_lab, verdict
    from cdcore.scenes import load_scene
    scene = load_scene("chains-6to1", frames=4)
    res = run_lab(scene, [LabConfig("aabb"), LabConfig("obb", split="sah")], frames=3, check=True)
    assert len(res) == 2 and all(len(r.log["n_v"]) == 3 for r in res)
    text = verdict(res)
    assert text.startswith("Fastest: ") and ("aabb" in text and "obb" in text)
    with pytest.raises(ValueError, match="1 to 8"):
        run_lab(scene, [LabConfig()] * 9)
    with pytest.raises(ValueError):
        LabConfig.parse("obb:sat15:sha")
    with pytest.raises(ValueError):
        LabConfig.parse("obb:slab")
    assert LabConfig.parse("obb::sah:2") == LabConfig("obb", None, "sah", 2)


def test_bench_lab_refuses_bad_arguments(tmp_path, capsys):
    from cdcore.bench.__main__ import main
    assert main(["lab", "--config", "obb::sha"]) == 2
    assert main(["lab", "--scene", "no-such-scene", "--frames", "3"]) == 2
    assert main(["lab", "--png", str(tmp_path / "missing" / "x.png")]) == 2
    assert main(["lab", "--splits", "--env", "env.obj"]) == 2  # --env without --rob
    err = capsys.readouterr().err
    assert "split" in err and "unknown scene" in err and "does not exist" in err and "go together" in err


def test_bench_lab_runs_and_writes_its_plot(tmp_path, capsys):
    from cdcore.bench.__main__ import main
    png, js = tmp_path / "lab.png", tmp_path / "lab.json"
    assert main(["lab", "--scene", "chains-6to1", "--frames", "3", "--config", "aabb", "--config", "obb::sah",
                 "--png", str(png), "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "Verdict:" in out and "Fastest: " in out
    assert png.stat().st_size > 10_000 and js.stat().st_size > 100
