"""The warm-up's signature report (``cdcore.warmup.cached_signatures``) counts what numba really
cached: a kernel called with int64 and float64 arguments, and one reached with a literal
constant and with a variable from compiled callers, each show two signatures; a kernel whose
callers pass ``np.int64(...)`` shows one (the rule issue 15's call sites follow)."""
import os
import subprocess
import sys
import textwrap

from cdcore.warmup import cached_signatures

MODULE = textwrap.dedent('''
    import numpy as np
    from numba import njit

    @njit(cache=True)
    def twice(x):
        return x + x

    @njit(cache=True)
    def callee_lit(a, k):
        return a + k

    @njit(cache=True)
    def callee_one(a, k):
        return a + k

    @njit(cache=True)
    def caller(a):
        # a literal 0 and a variable: two signatures of callee_lit; np.int64: one of callee_one
        return (callee_lit(a, 0) + callee_lit(a, a) + callee_one(a, np.int64(0))
                + callee_one(a, np.int64(a)))

    def make(mode):  # closures of one factory (as _core._make_walk): one index file, one function each
        @njit(cache=True)
        def fam(x):
            return x * mode
        return fam

    fam2 = make(2)
    fam3 = make(3)
''')


def test_report_counts_each_cached_signature(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "sigmod.py").write_text(MODULE)
    cache = tmp_path / "cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(src))
    code = ("import sigmod; sigmod.twice(1); sigmod.twice(1.5); sigmod.caller(3); "
            "sigmod.fam2(1); sigmod.fam3(1); sigmod.fam3(1.5)")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)
    sigs = cached_signatures([str(cache)])
    assert sigs["sigmod.twice"] == 2
    assert sigs["sigmod.callee_lit"] == 2
    assert sigs["sigmod.callee_one"] == 1
    assert sigs["sigmod.caller"] == 1
    # two closures in one index file: fam3 has two signatures, fam2 one; the report says 2
    # (the most of any one function), not 3
    fam = [k for k in sigs if "make" in k]
    assert len(fam) == 1 and sigs[fam[0]] == 2, sigs
    assert cached_signatures([str(tmp_path / "nothing")]) == {}
