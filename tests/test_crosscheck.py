"""cdcore.crosscheck: agreement with python-fcl and coal where they agree with the exact
answer, and one purpose-built case of every disagreement reason; the CLI and the exported
regression test."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import cdcore
from cdcore import build_bvh, crosscheck, save_query
from cdcore.crosscheck import Verdict, export_regression_test, main
from cdcore.transforms import make_pose

from meshgen import cube, torus, uv_sphere

HAVE_FCL = importlib.util.find_spec("fcl") is not None
HAVE_COAL = importlib.util.find_spec("coal") is not None
needs_fcl = pytest.mark.skipif(not HAVE_FCL, reason="python-fcl not installed")
needs_coal = pytest.mark.skipif(not HAVE_COAL, reason="coal not installed")

TORUS = cdcore.Mesh(*torus(0.5, 0.15, 12, 6))
BALL = cdcore.Mesh(*uv_sphere(0.3, 5, 8))
CUBE = cdcore.Mesh(*cube(1.0))


def reasons(check, engine=None):
    return [d.reason for d in check.disagreements if engine is None or d.engine == engine]


@pytest.mark.parametrize("pose_b", [make_pose(None, (0.5, 0, 0)), make_pose(None, (1.5, 0.2, 0)),
                                    make_pose(None, (0.8, 0.1, 0.05))])
def test_exact_engines_agree_and_peers_agree_where_they_agree_with_exact(pose_b):
    check = crosscheck(TORUS, None, BALL, pose_b)
    X = check.verdicts["brute"]
    assert check.exact == "brute"
    c = check.verdicts["cdcore"]
    assert c.hit == X.hit and c.n_contacts == X.n_contacts
    if X.hit:
        assert c.depth == pytest.approx(X.depth, abs=1e-12)
    else:
        assert c.distance == pytest.approx(X.distance, abs=1e-12)
    for name in ("fcl", "coal"):
        if name not in check.verdicts:
            continue
        v = check.verdicts[name]
        same = v.hit == X.hit and (not X.hit or {tuple(p) for p in v.pairs.tolist()} ==
                                   {tuple(p) for p in X.pairs.tolist()})
        assert same == (name not in {d.engine for d in check.disagreements}), check.table()
    assert check.ok, check.table()  # these poses are generic: nobody disagrees


def test_cdcore_bv_types_are_all_run():
    check = crosscheck(TORUS, None, BALL, make_pose(None, (0.5, 0, 0)), bvs=("obb", "aabb", "sphere"),
                       engines=("cdcore", "brute"))
    assert set(check.verdicts) == {"cdcore", "cdcore:aabb", "cdcore:sphere", "brute"}
    assert check.ok


@needs_coal
def test_touching_within_tolerance_coal_cubes_1e9_apart():
    check = crosscheck(CUBE, None, CUBE, make_pose(None, (1 + 1e-9, 0, 0)), engines=("brute", "coal"))
    assert not check.verdicts["brute"].hit and check.verdicts["coal"].hit
    (d,) = check.disagreements
    assert d.reason == "touching" and d.gap == pytest.approx(1e-9, rel=1e-6) and d.pair is not None
    assert "1e-09 apart" in d.message
    # a tolerance below the gap turns it into an extra pair
    strict = crosscheck(CUBE, None, CUBE, make_pose(None, (1 + 1e-9, 0, 0)), engines=("brute", "coal"),
                        tolerance=1e-12)
    assert reasons(strict) == ["extra_pair"]


@needs_fcl
def test_touching_tori_fcl_misses_touching_pairs():
    check = crosscheck(TORUS, None, TORUS, make_pose(None, (1.3, 0, 0)), engines=("brute", "fcl"))
    X = check.verdicts["brute"]
    assert X.hit and X.depth <= 1e-12
    assert reasons(check, "fcl") == ["touching"]
    d = check.disagreements[0]
    assert tuple(d.pair) in {tuple(p) for p in X.pairs.tolist()}


@needs_coal
def test_security_margin_coal():
    check = crosscheck(TORUS, None, BALL, make_pose(None, (0.97, 0, 0)), engines=("brute", "coal"),
                       peers={"coal": {"security_margin": 0.05}})
    (d,) = check.disagreements
    assert d.reason == "security_margin" and 0 < d.gap < 0.05
    assert d.gap == pytest.approx(check.verdicts["brute"].distance)
    plain = crosscheck(TORUS, None, BALL, make_pose(None, (0.97, 0, 0)), engines=("brute", "coal"))
    assert plain.ok


@needs_coal
def test_convex_hull_coal():
    small = cdcore.Mesh(*uv_sphere(0.2, 5, 8))  # in the torus's hole: the hull covers it, the mesh does not
    check = crosscheck(TORUS, None, small, None, engines=("brute", "coal"), peers={"coal": {"convex_hull": "a"}})
    (d,) = check.disagreements
    assert d.reason == "convex_hull" and d.gap > 0.1 and "convex hull of A" in d.message
    assert crosscheck(TORUS, None, small, None, engines=("brute", "coal")).ok


def _dropping_engine(drop_deepest=True, add_far=False, wrong_distance=False):
    """A 'library' that misses the deepest pair, adds a far one, or reports a wrong distance."""
    def run(ma, pa, mb, pb):
        from cdcore.contacts import reference_contacts
        ref = reference_contacts(ma, pa, mb, pb)
        pairs = ref.pairs.copy()
        if drop_deepest and len(pairs):
            pairs = np.delete(pairs, int(np.argmax(ref.depths)), axis=0)
        if add_far:
            pairs = np.vstack([pairs, [[0, 0]]])
        if wrong_distance:
            return Verdict("x", False, 0, 0.123, 0.0, np.zeros((2, 3)), pairs, (0, 0), 0.0)
        return Verdict("x", len(pairs) > 0, len(pairs), 0.0, 0.0, None, pairs, None, 0.0)
    return run


def test_missed_pair_names_the_deepest_missing_pair():
    pb = make_pose(None, (0.5, 0, 0))
    check = crosscheck(TORUS, None, BALL, pb, engines=("brute",), peers={"custom": {"mine": _dropping_engine()}})
    (d,) = check.disagreements
    X = check.verdicts["brute"]
    assert d.engine == "mine" and d.reason == "missed_pair"
    assert d.pair == X.pair  # the deepest exact contact
    assert check.responsible_pair() == X.pair


def test_extra_pair_names_the_pair_and_its_distance():
    pb = make_pose(None, (0.5, 0, 0))
    check = crosscheck(TORUS, None, BALL, pb, engines=("brute",),
                       peers={"custom": {"mine": _dropping_engine(drop_deepest=False, add_far=True)}})
    (d,) = check.disagreements
    assert d.reason == "extra_pair" and d.pair == (0, 0) and d.gap > 0.1


def test_wrong_distance_is_reported():
    check = crosscheck(TORUS, None, BALL, make_pose(None, (1.5, 0, 0)), engines=("brute",),
                       peers={"custom": {"mine": _dropping_engine(wrong_distance=True)}})
    (d,) = check.disagreements
    assert d.reason == "distance" and d.gap == pytest.approx(check.verdicts["brute"].distance)


def test_bad_input():
    with pytest.raises(TypeError):
        crosscheck("a", None, BALL, None)
    with pytest.raises(ValueError, match="engines"):
        crosscheck(TORUS, None, BALL, None, engines=("bullet",))
    with pytest.raises(ValueError, match="peers"):
        crosscheck(TORUS, None, BALL, None, peers={"bullet": {}})
    with pytest.raises(ValueError, match="bvs"):
        crosscheck(TORUS, None, BALL, None, bvs=("box",))
    with pytest.raises(ValueError, match="pose_b"):
        crosscheck(TORUS, None, BALL, np.full((4, 4), np.nan))
    if HAVE_COAL:
        with pytest.raises(ValueError, match="convex_hull"):
            crosscheck(TORUS, None, BALL, None, engines=("brute", "coal"), peers={"coal": {"convex_hull": "c"}})


def test_large_meshes_brute_contacts_still_run_brute_distance_skipped(monkeypatch):
    cc = sys.modules["cdcore.crosscheck"]  # (cdcore.crosscheck is the function of that module)
    monkeypatch.setattr(cc, "BRUTE_MAX_PAIRS", 10)
    hit = crosscheck(TORUS, None, BALL, make_pose(None, (0.5, 0, 0)), engines=("cdcore", "brute"))
    assert hit.exact == "brute" and hit.ok
    apart = crosscheck(TORUS, None, BALL, make_pose(None, (2.5, 0, 0)), engines=("cdcore", "brute"))
    assert apart.exact == "cdcore" and "brute" in apart.skipped and "brute" not in apart.verdicts


# ---- command line -------------------------------------------------------------------------
def _write_obj(path, mesh):
    with open(path, "w") as fh:
        for v in mesh.vertices:
            fh.write(f"v {float(v[0])!r} {float(v[1])!r} {float(v[2])!r}\n")
        for f in mesh.faces + 1:
            fh.write(f"f {f[0]} {f[1]} {f[2]}\n")
    return str(path)


def test_cli_on_meshes_agreement_and_disagreement(tmp_path, capsys):
    a, b = _write_obj(tmp_path / "torus.obj", TORUS), _write_obj(tmp_path / "ball.obj", BALL)
    assert main([a, b, "--pose-b", "0.5,0,0", "--engines", "cdcore,brute"]) == 0
    out = capsys.readouterr().out
    assert "all engines agree" in out and "brute" in out and "cdcore" in out
    if HAVE_COAL:
        code = main([a, b, "--pose-b", "0.97,0,0,0,0,0", "--engines", "brute,coal", "--margin", "0.05",
                     "--json", str(tmp_path / "v.json")])
        out = capsys.readouterr().out
        assert code == 1 and "security_margin" in out
        import json
        data = json.loads((tmp_path / "v.json").read_text())
        assert data["disagreements"][0]["reason"] == "security_margin"


def test_cli_bad_input_exits_2(tmp_path, capsys):
    assert main([str(tmp_path / "missing.stl"), str(tmp_path / "other.stl")]) == 2
    assert "not found" in capsys.readouterr().err
    a = _write_obj(tmp_path / "t.obj", TORUS)
    assert main([a, a, "--pose-b", "1,2"]) == 2
    assert "--pose-b" in capsys.readouterr().err
    assert main([a]) == 2
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    assert main([str(bad)]) == 2


def test_cli_on_saved_query_and_export_regression_test(tmp_path, capsys):
    q = tmp_path / "q.npz"
    save_query(q, build_bvh(TORUS, "obb"), None, build_bvh(BALL, "obb"), make_pose(None, (0.5, 0, 0)),
               note="why?")
    out_py = tmp_path / "test_exported_regression.py"
    assert main([str(q), "--engines", "cdcore,brute", "--export-test", str(out_py)]) == 0
    assert "wrote" in capsys.readouterr().out
    src = out_py.read_text()
    assert "EXACT_HIT = True" in src and "why?" in src
    # the exported file is a passing pytest module (run in a fresh process, as a user would)
    # no plugins: the exported file needs plain pytest only (and no display)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]),
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out_py)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout


def test_export_separated_query(tmp_path):
    path = export_regression_test(tmp_path / "test_sep.py", TORUS, None, BALL, make_pose(None, (1.5, 0, 0)))
    ns = {}
    exec(compile(open(path).read(), path, "exec"), ns)
    assert ns["EXACT_HIT"] is False and ns["EXACT_DISTANCE"] > 0.5
    ns["test_cdcore_gives_the_exact_answer"](tmp_path)
