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
