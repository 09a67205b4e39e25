import os
import tempfile

import numpy as np
import pytest

# numba compiles on first use; make hypothesis tolerate that first slow example
from hypothesis import settings

settings.register_profile("cdcore", deadline=None, max_examples=60, derandomize=True)
# HYPOTHESIS_PROFILE=coverage: kernel line coverage under NUMBA_DISABLE_JIT=1 (pure Python, ~100x slower)
settings.register_profile("coverage", deadline=None, max_examples=8, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "cdcore"))

# Tests never read or write the user's settings (the app's QSettings live under
# $XDG_CONFIG_HOME): every test run gets its own, set before any QApplication exists, and
# the subprocesses the tests start inherit it.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="bvh-tests-config-")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(scope="module")
def twoarm(tmp_path_factory):
    """The generated two-arm robot (``robotgen.write_twoarm``): (body, URDF path, package root)."""
    from robotgen import write_twoarm

    from cdcore.articulated import load_urdf
    root = str(tmp_path_factory.mktemp("robots"))
    urdf = write_twoarm(root)
    return load_urdf(urdf, root), urdf, root


# ---- markers: gui (needs a display) and slow ------------------------------------------------
# Modules whose tests run the scripted app, benchmarks or fresh-process probes.
SLOW_MODULES = {"test_bench_fcl", "test_bench_tables", "test_kdop_bench", "test_walls"}


# What in a test module's source means its tests need a display.
GUI_HINTS = ("qtbot", "QApplication", "QtInteractor", "main_window", "DISPLAY", "xvfb", '"-m", "app"')


def _needs_display(module) -> bool:
    if not hasattr(module, "_needs_display"):
        try:
            src = open(module.__file__, encoding="utf-8").read()
        except OSError:
            src = ""
        module._needs_display = any(h in src for h in GUI_HINTS)
    return module._needs_display


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item, "module", None)
        if "qtbot" in getattr(item, "fixturenames", ()) or (module is not None and _needs_display(module)):
            item.add_marker(pytest.mark.gui)
        if module is not None and module.__name__.rpartition(".")[2] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


def pytest_xvfb_disable(config):
    """Start no Xvfb when the run deselects every GUI test (``-m "not gui"``): the engine's
    tests need no display."""
    expr = config.getoption("markexpr", "") or ""
    return "not gui" in expr
