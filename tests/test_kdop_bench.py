"""``python -m cdcore.bench kdop``: a tiny run writes its plots, tables and JSON."""
import json

from cdcore.bench.__main__ import build_parser, main


def test_kdop_subcommand_is_registered():
    args = build_parser().parse_args(["kdop", "--quick", "--out", "x"])
    assert args.command == "kdop" and args.quick and args.out == "x"


def test_kdop_bench_tiny_run(tmp_path, capsys):
    out = tmp_path / "kdop"
    code = main(["kdop", "--quick", "--no-coal", "--poses", "2", "--repeat", "1", "--scenario", "rotating",
                 "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert (out / "kdop_rotating.png").stat().st_size > 10000
    assert "all cdcore variants agree" in text and "realignment looseness" in text
    res = json.loads((out / "results.json").read_text())
    rot = res["results"]["rotating"]
    assert set(rot["methods"]) == {f"kdop{k}/{r}" for k in (6, 14, 18, 26) for r in ("table", "all", "major")} | {
        "obb/sat15"}
    assert all(len(m["time"]) == len(rot["distances"]) for m in rot["methods"].values())
    assert len(res["looseness"]) == 8
