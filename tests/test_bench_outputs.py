"""Benchmark output paths are checked before the (long) run, and the soak command
reports resident memory per phase."""
import json
import time

import pytest

from cdcore.bench.__main__ import main
from cdcore.bench.output import output_dir_problem, output_path_problem


@pytest.mark.parametrize("argv, message", [
    (["fcl", "--quick", "--json", "/nonexistent-dir/out.json"], "--json: directory does not exist: /nonexistent-dir"),
    (["distance", "--quick", "--json", "/nonexistent-dir/out.json"], "--json: directory does not exist"),
    (["tables", "--quick", "--json", "/nonexistent-dir/out.json"], "--json: directory does not exist"),
    (["tables", "--quick", "--csv", "/proc/out.csv"], "--csv: cannot write in /proc"),
    (["fcl", "--quick", "--json", "/proc/out.json"], "--json: cannot write in /proc"),
    (["kdop", "--quick", "--out", "/proc/kdop-out"], "--out: cannot create /proc/kdop-out"),
    (["soak", "--json", "/nonexistent-dir/soak.json"], "--json: directory does not exist"),
])
def test_bad_output_paths_fail_before_the_run(argv, message, capsys):
    pytest.importorskip("fcl")
    t0 = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - t0 < 5  # refused up front, nothing was benchmarked
    assert message in capsys.readouterr().err


def test_output_path_problems(tmp_path):
    assert output_path_problem(tmp_path / "ok.json") is None
    assert list(tmp_path.iterdir()) == []  # the probe file is removed
    assert output_path_problem(tmp_path).startswith("is a directory")
    assert output_dir_problem(tmp_path / "new" / "dir") is None and (tmp_path / "new" / "dir").is_dir()


def test_soak_reports_rss_per_phase(tmp_path, capsys):
    out = tmp_path / "soak.json"
    code = main(["soak", "--frames", "60", "--queries", "300", "--json", str(out), "--max-growth", "0.5"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "frames: 60 in" in text and "queries: 300 in" in text and "10,000,000 frames" in text
    data = json.loads(out.read_text())
    assert set(data) == {"frames", "queries"}
    for phase in data.values():
        assert phase["samples"] and all(rss > 0 for _, rss in phase["samples"]) and phase["growth"] < 0.5
