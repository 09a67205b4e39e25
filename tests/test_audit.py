"""Self-collision audit (issue 18): per-pair counts equal a brute-force recount, the
classification and the actions follow MoveIt's rules, the reports are written atomically,
the CLI's exit codes, and the dask.distributed runs (a LocalCluster of 2 worker processes)
give counts identical to the single-process run; pose sweeps equal collide_batch /
distance_batch."""
import json
import os

import numpy as np
import pytest
from robotgen import write_twoarm

from cdcore import build_bvh, collide_batch, distance_batch, shapes
from cdcore.articulated import AuditCancelled, audit, load_urdf, read_srdf_disabled
from cdcore.articulated.audit import CHUNK, brute_force_counts, default_configuration
from cdcore.articulated.selfcollision import brute_force_self_pairs
from cdcore.transforms import make_pose, rotation_about


@pytest.fixture(scope="module")
def twoarm(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("robots"))
    urdf = write_twoarm(root)
    return load_urdf(urdf, root), urdf, root


def _q(body, n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(body.limits[:, 0], body.limits[:, 1], (n, body.n_dofs))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("method", ["cab", "aabb_plus", "obb"])
def test_counts_equal_brute_force_recount(twoarm, seed, method):
    body = twoarm[0]
    Q = _q(body, 120, seed)
    r = audit(body, configurations=Q, method=method)
    assert r.n == 120
    assert r.counts == brute_force_counts(body, Q)
    assert any(0 < c < 120 for c in r.counts.values())  # the recount can disagree
    for p, k in r.witness_index.items():  # the first colliding configuration
        hits = [p in brute_force_self_pairs(body, q, skip_adjacent=False) for q in Q]
        assert k == hits.index(True)


def test_sampled_audit_is_deterministic_and_witnesses_collide(twoarm):
    body = twoarm[0]
    a = audit(body, samples=CHUNK + 500, seed=5)
    b = audit(body, samples=CHUNK + 500, seed=5, threads=False)
    assert a.n == CHUNK + 501 and a.counts == b.counts and a.witness_index == b.witness_index
    for p, k in a.witness_index.items():  # row 0 is the default pose
        if k == 0:
            assert np.allclose(a.witness[p], default_configuration(body))
    for p, q in a.witness.items():
        assert p in brute_force_self_pairs(body, q, skip_adjacent=False)
        assert np.all(q >= body.limits[:, 0]) and np.all(q <= body.limits[:, 1])
    c = audit(body, samples=CHUNK + 500, seed=6)
    assert c.counts != a.counts


def test_classification_and_actions(twoarm):
    body = twoarm[0]
    r = audit(body, samples=3000, seed=1, disabled=[("left_arm", "right_arm"), ("base", "left_arm")])
    cls = r.classify()
    for p in (("base", "left_arm"), ("base", "right_arm"), ("left_arm", "left_slider")):
        assert cls[p] == "adjacent"  # right_arm hangs from base through the geometry-less mount
    assert cls[("left_arm", "right_arm")] in ("sometimes", "default")
    kinds = {(a["kind"], tuple(a["pair"])) for a in r.actions()}
    assert ("disabled_but_collides", ("left_arm", "right_arm")) in kinds
    act = [a for a in r.actions() if tuple(a["pair"]) == ("left_arm", "right_arm")][0]
    assert ("left_arm", "right_arm") in brute_force_self_pairs(body, act["witness"], skip_adjacent=False)
    never = [p for p, k in cls.items() if k == "never"]
    assert all(r.counts[p] == 0 for p in never)
    assert r.never_bound() == pytest.approx(1 - 0.05 ** (1 / r.n))
    assert r.never_bound() < 3.0 / r.n * 1.01  # the rule of three


def test_reports_round_trip(twoarm, tmp_path):
    body = twoarm[0]
    r = audit(body, samples=2000, seed=2)
    paths = r.write(tmp_path / "rep")
    assert sorted(os.listdir(tmp_path)) == ["rep.csv", "rep.json", "rep.srdf"]
    dis = set(read_srdf_disabled(paths[0]))
    cls = r.classify()
    assert dis == {p for p, k in cls.items() if k != "sometimes"}
    data = json.loads(open(paths[2]).read())
    assert data["meta"]["n"] == r.n and len(data["pairs"]) == len(cls)
    lines = open(paths[1]).read().splitlines()
    assert lines[0].startswith("link_a,link_b,count") and len(lines) == len(cls) + 1


def test_check_adjacent_false_leaves_them_out(twoarm):
    body = twoarm[0]
    Q = _q(body, 60, 3)
    full = audit(body, configurations=Q)
    part = audit(body, configurations=Q, check_adjacent=False)
    assert set(part.counts) == set(full.counts) - full.adjacent
    assert all(part.counts[p] == full.counts[p] for p in part.counts)
    assert part.classify() == {p: k for p, k in full.classify().items()} or \
        all(part.classify()[p] == "adjacent" for p in full.adjacent)


def test_bad_inputs_and_cancel(twoarm):
    body = twoarm[0]
    with pytest.raises(ValueError, match="exactly one"):
        audit(body)
    with pytest.raises(ValueError, match="samples"):
        audit(body, samples=0)
    with pytest.raises(ValueError, match="NaN"):
        audit(body, configurations=[[0.0, np.nan, 0.0]])
    with pytest.raises(ValueError, match="shape"):
        audit(body, configurations=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="unknown link"):
        audit(body, samples=10, disabled=[("ghost", "base")])
    with pytest.raises(ValueError, match="beyond|non-finite"):
        audit(body, configurations=[[0.0, 0.0, 1e200]])
    calls = []
    with pytest.raises(AuditCancelled):
        audit(body, samples=3 * CHUNK, cancel=lambda: bool(calls.append(1)) or len(calls) > 1)


def test_cli(twoarm, tmp_path, capsys):
    from cdcore.audit import main
    body, urdf, root = twoarm
    srdf = tmp_path / "old.srdf"
    srdf.write_text('<robot name="twoarm"><disable_collisions link1="left_arm" link2="right_arm"/></robot>')
    out = tmp_path / "rep"
    assert main([urdf, "--samples", "500", "--package-dir", root, "--srdf", str(srdf), "--out", str(out),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "audited 501 configurations" in text and "disabled_but_collides: left_arm - right_arm" in text
    assert os.path.isfile(f"{out}.srdf") and os.path.isfile(f"{out}.json")
    assert main([str(tmp_path / "none.urdf"), "--samples", "5", "--out", str(out)]) == 2
    assert main([urdf, "--samples", "5", "--package-dir", root, "--out", str(tmp_path / "no" / "rep")]) == 2
    with pytest.raises(SystemExit) as e:
        main([urdf, "--samples", "0", "--out", str(out)])
    assert e.value.code == 2


@pytest.mark.slow
def test_dask_local_cluster_gives_identical_counts(twoarm, tmp_path):
    distributed = pytest.importorskip("distributed")
    import dask.array as da

    from cdcore.sweep import collide_sweep, distance_sweep
    body = twoarm[0]
    n = CHUNK + 700
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        local = audit(body, samples=n, seed=9)
        remote = audit(body, samples=n, seed=9, client=client)
        assert remote.counts == local.counts and remote.witness_index == local.witness_index
        Q = _q(body, 50, 4)
        assert audit(body, configurations=Q, client=client).counts == brute_force_counts(body, Q)
        # pose sweeps: an .npy file read by the workers, a dask array, an in-memory array
        m = shapes.torus(1.0, 0.3, 16, 8)
        b = build_bvh(m)
        rng = np.random.default_rng(0)
        poses = np.stack([make_pose(rotation_about(rng.normal(size=3), rng.uniform(0, 3)),
                                    rng.uniform(-1.5, 1.5, 3)) for _ in range(700)])
        path = tmp_path / "poses.npy"
        np.save(path, poses)
        want = collide_batch(b, b, poses).hits
        assert np.array_equal(collide_sweep(b, b, str(path), client=client, chunk=128), want)
        assert np.array_equal(collide_sweep(b, b, da.from_array(poses, chunks=(100, 4, 4)), client=client,
                                            chunk=100), want)
        got = collide_sweep(b, b, poses, client=client, chunk=300, out=tmp_path / "hits.npy")
        assert np.array_equal(np.asarray(got), want) and not os.path.exists(tmp_path / "hits.npy.part")
        dist = distance_batch(b, b, poses[:200]).distances
        assert np.array_equal(distance_sweep(b, b, poses[:200], client=client, chunk=64), dist)
    assert np.array_equal(collide_sweep(b, b, str(path), chunk=128), want)  # no client: this process
