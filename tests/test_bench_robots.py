"""``cdcore-bench robots``: every shared robot, the Shadow hand (MJCF) included, agrees with
pinocchio + coal; the hand's grasp and random configurations are reported apart."""
import json

import pytest

from cdcore.articulated.shared_robots import available_robots
from cdcore.bench.__main__ import main


def test_bench_robots_shadow_and_allegro(tmp_path, capsys):
    pytest.importorskip("pinocchio")
    pytest.importorskip("mujoco")
    if not {"shadow", "allegro"} <= set(available_robots()):
        pytest.skip("shared robots not found")
    out = tmp_path / "rows.json"
    assert main(["robots", "--robots", "shadow,allegro", "--configs", "6", "--repeat", "3", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    for name in ("shadow", "allegro"):
        assert f"{name}: median per configuration" in text and "answers differ on 0/6" in text
        assert f"{name}:   grasp " in text and f"{name}:   random" in text
    rows = json.loads(out.read_text())
    assert {r["robot"] for r in rows} == {"shadow", "allegro"}
    assert {r["kind"] for r in rows} == {"grasp", "random"} and all(r["agree"] for r in rows)


def test_bench_robots_unknown_robot(capsys):
    assert main(["robots", "--robots", "atlas"]) == 2
    assert "shadow" in capsys.readouterr().err  # the choices are named
