"""A cycle counter readable from nopython code, to time primitive tests inside the
traversal without leaving the compiled loop (``time.perf_counter`` is not available
there). LLVM's ``readcyclecounter`` is the TSC on x86-64 (~10 ns per read here)."""
import time

from llvmlite import ir
from numba import njit, types
from numba.core import config
from numba.core.extending import intrinsic


@intrinsic
def read_cycles(typingctx):
    sig = types.int64()

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=fnty)
        return builder.call(fn, [])

    return sig, codegen


if config.DISABLE_JIT:  # pure-Python runs (kernel line coverage): an intrinsic has no Python body
    def read_cycles():  # noqa: F811
        return time.perf_counter_ns()


@njit(cache=True)
def _now_cycles():
    return read_cycles()


_SECONDS_PER_CYCLE = None


def seconds_per_cycle():
    """Calibrate the counter against ``perf_counter`` once per process (~20 ms).
    Returns 0.0 when the platform has no usable counter (the intrinsic reads 0)."""
    global _SECONDS_PER_CYCLE
    if _SECONDS_PER_CYCLE is None:
        c0, t0 = _now_cycles(), time.perf_counter()
        while time.perf_counter() - t0 < 0.02:
            pass
        c1, t1 = _now_cycles(), time.perf_counter()
        _SECONDS_PER_CYCLE = (t1 - t0) / (c1 - c0) if c1 > c0 else 0.0
    return _SECONDS_PER_CYCLE
