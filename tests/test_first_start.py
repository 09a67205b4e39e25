"""The first start on an empty numba cache (issue 16: "with an empty numba cache the window
appears within 5 s and compiles in the background with progress"): ``cdcore.warmup.kernels_cached``
tells a cold cache from a warm one without importing a kernel, and ``app.first_start`` shows a
window while a worker thread compiles, with Qt's event loop running."""
import os
import pickle
import subprocess
import sys
import threading
import time

import pytest

from cdcore import warmup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _index(root, name, stamp, overloads):
    """A numba index file as numba 0.68 writes it: its version tag pickled, then (stamp, overloads)."""
    import numba
    d = os.path.join(root, "some", "dir")
    os.makedirs(d, exist_ok=True)
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    path = os.path.join(d, f"{name}-10.{tag}.nbi")
    with open(path, "wb") as fh:
        pickle.dump(numba.__version__, fh, protocol=-1)
        fh.write(pickle.dumps((stamp, overloads), protocol=-1))
    return path


def _stamp(module):
    from numba.core.caching import _hash_source_file
    src = os.path.join(ROOT, "cdcore", *module.split(".")) + ".py"
    st = os.stat(src)
    return _hash_source_file(src, st.st_mtime, st.st_size)


def test_kernels_cached_reads_the_index_stamps(tmp_path):
    names = ("_core.query_entry", "_build.refit_aabb")
    root = str(tmp_path)
    assert not warmup.kernels_cached(names, [root])  # empty cache
    _index(root, "_core.query_entry", _stamp("_core"), {"sig": "file"})
    assert not warmup.kernels_cached(names, [root])  # one of the two missing
    _index(root, "_build.refit_aabb", _stamp("_build"), {"sig": "file"})
    assert warmup.kernels_cached(names, [root])
    # an index of other sources (edited since), one without signatures, a damaged one: not cached
    for bad in (b"other sources", None, "garbage"):
        other = tmp_path / "other"
        if other.exists():
            for f in other.rglob("*.nbi"):
                f.unlink()
        if bad == "garbage":
            p = _index(str(other), "_core.query_entry", _stamp("_core"), {"sig": "file"})
            with open(p, "wb") as fh:
                fh.write(b"\x80not a pickle")
        elif bad is None:
            _index(str(other), "_core.query_entry", _stamp("_core"), {})
        else:
            _index(str(other), "_core.query_entry", bad, {"sig": "file"})
        _index(str(other), "_build.refit_aabb", _stamp("_build"), {"sig": "file"})
        assert not warmup.kernels_cached(names, [str(other)]), bad


def test_kernels_cached_agrees_with_a_fresh_import(tmp_path):
    """On an empty cache directory the answer is False, and after a process imported
    ``cdcore.collide`` (compiling into it) True: numba's own index files, as numba wrote them.
    Uses a cache directory of its own; the compile takes minutes, so only the cheap half runs
    unless the suite's cache already holds the kernels (then the project's cache answers True)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    code = "from cdcore.warmup import kernels_cached; print(kernels_cached())"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "False"
    names = warmup.cached_signatures(warmup._cache_roots())
    if all(n in names for n in warmup.IMPORT_COMPILED):
        assert warmup.kernels_cached()


@pytest.fixture
def qapp_quits(qapp):
    before = qapp.quitOnLastWindowClosed()
    yield qapp
    qapp.setQuitOnLastWindowClosed(before)


@pytest.mark.gui  # a display (Qt)
def test_first_start_window_runs_the_work_with_the_event_loop_alive(qapp_quits, monkeypatch):
    from app import first_start

    shown = []
    orig_show = first_start.FirstStartWindow.show
    monkeypatch.setattr(first_start.FirstStartWindow, "show", lambda self: (shown.append(self), orig_show(self)))
    ticks = []
    from PySide6 import QtCore
    timer = QtCore.QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    done = threading.Event()

    def work():
        import numba

        @numba.njit
        def f(x):  # a compile the window counts
            return x + 1
        f(1)
        time.sleep(0.6)
        done.set()

    t0 = time.monotonic()
    assert first_start.prepare_kernels(qapp_quits, work=work, poll_ms=20)
    timer.stop()
    assert done.is_set()
    assert shown and not shown[0].isVisible()
    assert shown[0].progress.done >= 1 and "f" in shown[0].progress.current
    assert "compiled" in shown[0].detail.text()
    # the event loop ran while the work did: the timer fired many times within the 0.6 s
    assert len([t for t in ticks if t - t0 < 0.6]) >= 5
    assert qapp_quits.quitOnLastWindowClosed()  # restored


@pytest.mark.gui  # a display (Qt)
def test_first_start_hands_the_workers_error_to_the_caller(qapp_quits):
    from app import first_start

    def work():
        raise RuntimeError("compile failed")

    with pytest.raises(RuntimeError, match="compile failed"):
        first_start.prepare_kernels(qapp_quits, work=work, poll_ms=10)


@pytest.mark.gui  # a display (Qt)
def test_first_start_does_nothing_on_a_warm_cache(qapp_quits, monkeypatch):
    from app import first_start
    monkeypatch.setattr(warmup, "kernels_cached", lambda *a, **k: True)
    assert first_start.prepare_kernels(qapp_quits) is False


def test_preload_loads_the_entry_points_on_a_worker_thread():
    """``preload`` loads ``WARM_KERNELS`` off the GUI thread (each then has its one signature,
    compiling disabled) and says when it is done; an error stays in the worker (the first call
    raises it again)."""
    from app import first_start, warm_start
    from cdcore import _core
    assert first_start.preload is warm_start.preload
    done = []
    worker = warm_start.preload(done=lambda: done.append(threading.current_thread().name))
    assert worker.name == "engine-preload"
    worker.join(timeout=120)
    assert not worker.is_alive() and done == ["engine-preload"]
    for name in warm_start.WARM_KERNELS:
        module, func = name.rsplit(".", 1)
        d = getattr(sys.modules["cdcore." + module], func)
        assert len(d.signatures) == 1 and not d._can_compile, name
    assert len(_core.query_entry_w.signatures) == 1
    w = warm_start.preload(kernels=("no_such_module.f",))
    w.join(timeout=30)
    assert not w.is_alive()


def test_warm_preload_leaves_out_only_the_robot_kernel():
    """The warm start preloads every entry point but the robots' (loaded with the first robot
    scene); the cold start's worker compiles all of them."""
    from app import first_start, warm_start
    assert first_start.KERNELS == warm_start.KERNELS == warmup.IMPORT_COMPILED
    assert set(warm_start.WARM_KERNELS) == set(warm_start.KERNELS) - {"articulated._self_kernel.self_check"}
    assert "_core.query_entry_w" in warm_start.WARM_KERNELS


def test_every_import_compiled_kernel_is_listed():
    """A kernel with an explicit signature (compiled at import, or deferred to its first call by
    ``entry_njit``) must be in ``IMPORT_COMPILED`` (what ``kernels_cached`` checks and the
    first-start worker loads), or a cold start would compile it on the GUI thread with no
    window."""
    import importlib
    import pkgutil

    import cdcore
    from numba.core.registry import CPUDispatcher
    found = set()
    for m in pkgutil.walk_packages(cdcore.__path__, "cdcore."):
        if m.name.startswith("cdcore.bench"):
            continue
        mod = importlib.import_module(m.name)
        for key, value in vars(mod).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == mod.__name__ and (
                    not value._can_compile or hasattr(value, "cdcore_load")):
                found.add(f"{mod.__name__[len('cdcore.'):]}.{key}")
    assert found and found <= set(warmup.IMPORT_COMPILED), sorted(found - set(warmup.IMPORT_COMPILED))
    assert found == set(warmup.IMPORT_COMPILED), sorted(set(warmup.IMPORT_COMPILED) - found)


@pytest.mark.gui  # a display (Qt)
def test_a_failed_first_start_compile_is_a_message_not_a_traceback(tmp_path):
    """The app's launch with a first-start compile that fails: exit 1 and one readable line."""
    code = """
import sys
import app.first_start as fs
import cdcore.warmup
def boom(app, report=False, work=None, poll_ms=100):
    raise RuntimeError("LLVM ran out of memory")
fs.prepare_kernels = boom
cdcore.warmup.kernels_cached = lambda *a, **k: False  # a cold cache: the first start compiles
from app.__main__ import main
sys.exit(main(["--scene", "chains-6to1", "--frames", "1", "--quit"]))
"""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path), QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1, out.stderr
    assert "error: the collision kernels could not be compiled: RuntimeError: LLVM ran out of memory" in out.stderr
    assert "Traceback" not in out.stderr
