"""The per-pair callees of the traversal are compiled without reference counting
(``cdcore._pairjit``, numba's undocumented ``_nrt=False``): these tests fail when numba stops
honouring the option, and check that the core's callees use it."""
import numpy as np
from numba import njit

from cdcore import _pairjit
from cdcore._pairjit import pair_njit


def _sum_rows(a, b, i):
    return a[i, 0] + b[i, 1]


def _refcount_calls(llvm: str) -> int:
    return llvm.count("NRT_incref") + llvm.count("NRT_decref")


def test_numba_honours_nrt_false():
    """The same array-taking function: reference counting with numba's runtime, none without."""
    a = np.arange(6.0).reshape(3, 2)
    plain = njit(cache=False)(_sum_rows)
    assert plain(a, a, 1) == 5.0
    assert _refcount_calls(next(iter(plain.inspect_llvm().values()))) > 0, \
        "numba no longer reference-counts array arguments: revisit cdcore._pairjit"
    if not _pairjit.NRT_FREE:
        return  # CDCORE_PAIR_NRT=1: the plain path
    free = pair_njit(_sum_rows, cache=False)
    assert free(a, a, 1) == 5.0
    assert _refcount_calls(next(iter(free.inspect_llvm().values()))) == 0, \
        "numba ignores _nrt=False: the per-pair callees now pay reference counting (cdcore._pairjit)"


def test_core_callees_are_pair_compiled():
    from cdcore import _core
    from cdcore.bv import dispatch
    for fn in (_core.traverse, _core.leaf_pair, _core._all_prim_pairs, dispatch.box_separation, dispatch.kdop_separation):
        assert fn.targetoptions.get("_nrt") is (False if _pairjit.NRT_FREE else None), fn.py_func.__name__


# ---- entry points: one explicit signature, compiled at the first call (``entry_njit``) ----------
_ENTRY_PROBE = """
import sys
import numpy as np
from numba import types
import cdcore
from cdcore import _core, _pairjit, shapes
d = _core.query_entry_w
before = (len(d.signatures), d._can_compile)
t = shapes.torus(1.0, 0.3, 8, 4)
b = cdcore.build_bvh(t, "obb")
hit = cdcore.Query(b, b)(np.eye(4))
after = (len(d.signatures), d._can_compile)
declared = tuple(_core.SIG_QUERY_W.args)
same = tuple(d.signatures[0]) == declared
try:  # another argument type: refused, as an eager explicit signature refuses it
    d(*(np.zeros(3, np.float32),) * 8)
    refused = False
except TypeError:
    refused = True
print(before, after, same, refused, len(d.signatures), hit)
"""


def _probe(env_extra):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-c", _ENTRY_PROBE], env=env, cwd=root, capture_output=True,
                         text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_entry_points_compile_their_signature_at_the_first_call():
    """Fails when numba stops calling the instance's ``_compile_for_args`` (``_pairjit._defer``):
    the first call would then compile the argument types it sees and leave compiling on. A
    fresh process: nothing compiled by the import, one signature (the declared one) after the
    first query, other argument types refused without compiling."""
    got = " ".join(_probe({"CDCORE_EAGER_ENTRIES": ""}))
    assert got == "(0, True) (1, False) True True 1 True", got


def test_eager_entry_points_are_the_plain_path():
    """``CDCORE_EAGER_ENTRIES=1``: compiled when the module is imported (numba's documented
    explicit-signature decorator), the same answers."""
    got = " ".join(_probe({"CDCORE_EAGER_ENTRIES": "1"}))
    assert got == "(1, False) (1, False) True True 1 True", got


def _bump(counts, k):
    counts[k] += 1
    return counts[k]


def test_an_entry_point_first_call_runs_once_and_converts_its_arguments():
    """The first call compiles the declared signature and runs the function exactly once (its
    result returned); a read-only array converts to the declared writable-or-not 'A' layout as
    numba's explicit signatures allow; other types are refused without compiling."""
    from numba import types

    from cdcore._pairjit import entry_njit
    fn = entry_njit(types.int64(types.int64[:], types.int64), cache=False)(_bump)
    counts = np.zeros(3, np.int64)
    assert fn(counts, 1) == 1 and counts.tolist() == [0, 1, 0]
    assert fn(counts, 1) == 2 and counts.tolist() == [0, 2, 0]
    assert len(fn.signatures) == 1 and not fn._can_compile
    import pytest
    with pytest.raises(TypeError):
        fn(np.zeros(3), 0)
    assert len(fn.signatures) == 1


def test_load_kernel_loads_each_entry_point_once_from_many_threads():
    """``load_kernel`` from several threads at once: one signature, compiling then disabled."""
    import threading

    from cdcore import _build, _core
    from cdcore._pairjit import load_kernel
    ds = (_core.resume_kdop_entry, _build.refit_aabb)
    threads = [threading.Thread(target=lambda d=d: load_kernel(d)) for d in ds for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for d in ds:
        assert len(d.signatures) == 1 and not d._can_compile, d
    load_kernel(_core.traverse)  # a dispatcher without a declared signature: nothing
