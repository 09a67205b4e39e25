"""The warm-up's two parts (``cdcore.warmup``): together they are every step, and the parent
fails (non-zero) when either process fails, stopping the other."""
import subprocess

import pytest

from cdcore import warmup


def test_parts_cover_every_step_once():
    labels = [label for label, _ in warmup._steps()]
    core = [label for label, _ in warmup._steps("core")]
    side = [label for label, _ in warmup._steps("side")]
    assert sorted(core + side) == sorted(labels)
    assert not set(core) & set(side)
    assert any("distances" in label for label in side) and any("hierarchies" in label for label in core)


class _FakeChild:
    def __init__(self, rc):
        self.returncode = rc
        self.terminated = False

    def wait(self):
        return self.returncode

    def terminate(self):
        self.terminated = True


@pytest.mark.parametrize("core_fails, child_rc, expected", [(False, 0, 0), (False, 3, 1), (True, 0, 1)])
def test_main_runs_the_side_part_in_a_second_process(monkeypatch, capsys, core_fails, child_rc, expected):
    spawned = []

    def fake_popen(cmd, *a, **k):
        assert cmd[-2:] == ["--part", "side"]
        spawned.append(_FakeChild(child_rc))
        return spawned[-1]

    parts = []

    def fake_warm(progress=None, part=None):
        parts.append(part)
        if core_fails:
            raise RuntimeError("broken kernel")
        return 0.0

    monkeypatch.setattr(subprocess, "Popen", fake_popen)
    monkeypatch.setattr(warmup, "warm", fake_warm)
    monkeypatch.setattr(warmup, "cached_signatures", lambda roots: {})
    assert warmup.main(["--jobs", "2"]) == expected
    assert parts == ["core"] and len(spawned) == 1
    assert spawned[0].terminated == core_fails
    err = capsys.readouterr().err
    assert ("failed" in err) == (expected != 0)


def test_main_with_one_job_runs_everything_here(monkeypatch):
    parts = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("no second process with --jobs 1"))
    monkeypatch.setattr(warmup, "warm", lambda progress=None, part=None: parts.append(part) or 0.0)
    monkeypatch.setattr(warmup, "cached_signatures", lambda roots: {})
    assert warmup.main(["--jobs", "1"]) == 0
    assert parts == [None]


@pytest.mark.parametrize("part", ["core", "side", None])
def test_entry_points_are_loaded_where_no_other_process_compiles_them(monkeypatch, part):
    """The core part loads the query entries before its steps and never the robots' self-check
    (the side part's: loaded after its steps, when the core part has cached the traversal loops
    it calls; loaded first, both processes compiled them: ~20 s each in a profile of numba's
    compile events); one process loads all of them."""
    real_steps = warmup._steps
    events = []
    monkeypatch.setattr(warmup, "load_kernels", lambda names: events.append(("load", tuple(names))))
    monkeypatch.setattr(warmup, "_steps", lambda p=None: [("step", lambda: events.append(("step",)))])
    warmup.warm(part=part)
    robot = "articulated._self_kernel.self_check"
    loaded = [n for e in events if e[0] == "load" for n in e[1]]
    assert sorted(loaded) == sorted(k for k in warmup.IMPORT_COMPILED
                                    if part is None or (k == robot) == (part == "side"))
    step = events.index(("step",))
    for i, e in enumerate(events):
        if e[0] == "load":
            assert (robot in e[1]) == (i > step), events  # the self-check after the steps, the rest before
    core = [label for label, _ in real_steps("core")]
    assert core and all("MJCF" not in label and "self-collision" not in label for label in core)
