"""One compiled signature per kernel (issue 15): every build path (each BV type, each split rule,
refit, the k-DOP table fit) reaches the node kernels with the same argument types, so numba
compiles each once. Run in a fresh numba cache (the suite's shared cache also holds signatures
that tests compile by calling kernels directly). Kernels that had two or three signatures:
int32 and int64 node ids (the build's stack against the refit's loop), read-only mesh arrays
against writable pack arrays (the k-DOP build against its refit)."""
import os
import subprocess
import sys

import pytest

from cdcore.warmup import cached_signatures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BUILD_EVERY_WAY = r"""
import numpy as np
import cdcore
from cdcore import shapes
from cdcore._kdop import ensure_table
torus = shapes.torus(1.0, 0.3, 10, 5)
for bv in cdcore.BV_TYPES:
    for split in ("median", "mean", "sah"):
        b = cdcore.build_bvh(torus, bv=bv, leaf_size=1 + (split == "sah"), split=split)
        b.refit(torus.vertices * 1.01)
        if bv.startswith("kdop"):
            ensure_table(b)
"""

# module prefixes of the node kernels the builds reach (cached_signatures' keys: module.function)
KERNELS = ("aabb.", "obb.", "sphere.", "kdop.", "kdop_angle.", "_kdop.", "_build.", "_build_sah.", "_linalg.")


@pytest.mark.slow
def test_every_build_path_compiles_each_node_kernel_once(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out = subprocess.run([sys.executable, "-c", BUILD_EVERY_WAY], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=1800)
    assert out.returncode == 0, out.stderr[-2000:]
    sigs = cached_signatures([str(tmp_path / "cache")])
    reached = {k: n for k, n in sigs.items() if k.startswith(KERNELS)}
    assert len(reached) >= 20, sorted(sigs)  # the builds did reach the node kernels
    assert {k: n for k, n in reached.items() if n > 1} == {}
