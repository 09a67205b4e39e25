"""Threads that do not spin: ``import cdcore`` chooses passive waiting for numba's OpenMP pool
(unless the user chose), and small or ``parallel=False`` batches never start the pool."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code, **env):
    e = dict(os.environ, PYTHONPATH=ROOT, **env)
    e.pop("OMP_WAIT_POLICY", None) if "OMP_WAIT_POLICY" not in env else None
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=900)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_sets_passive_waiting_and_keeps_the_users_choice():
    assert _run("import os, cdcore; print(os.environ['OMP_WAIT_POLICY'])") == "PASSIVE"
    assert _run("import os, cdcore; print(os.environ['OMP_WAIT_POLICY'])", OMP_WAIT_POLICY="ACTIVE") == "ACTIVE"


def test_serial_batches_never_start_the_thread_pool():
    code = """
import numpy as np, cdcore
from cdcore import shapes
from cdcore.transforms import make_pose
import numba.np.ufunc.parallel as par
m = shapes.torus(1.0, 0.3, 12, 6)
b = cdcore.build_bvh(m, bv="aabb")
poses = np.stack([make_pose(None, [x, 0.0, 0.0]) for x in np.linspace(0, 3, 80)])
small = cdcore.collide_batch(b, b, poses[:8])
serial = cdcore.collide_batch(b, b, poses, parallel=False)
print(par._is_initialized, int(small.hits.sum()), int(serial.hits.sum()))
"""
    started, small, serial = _run(code).split()
    assert started == "False"
    assert int(small) > 0 and int(serial) >= int(small)
