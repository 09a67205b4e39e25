"""Shape generators refuse a resolution before allocating: their triangle bound (``shapes._checked``)
is an upper bound of what they make, also where a mesh grows faster than the product of its
resolutions (a lattice box: cubic in its subdivisions' lattice, quadratic in triangles; a sheet:
quadratic; capsule caps: quadratic in n_around). Before, ``box(subdivisions=100000)`` asked numpy for
21 PiB and a 120-byte scene file for 13 GB."""
import inspect
import itertools
import time

import numpy as np
import pytest

from cdcore import shapes
from cdcore.mesh import MAX_TRIANGLES
from cdcore.scenes.scene import SceneError, scene_from_spec

GENERATORS = sorted(n for n, f in vars(shapes).items()
                    if callable(f) and hasattr(f, "__wrapped__") and getattr(f, "__module__", "") == shapes.__name__)


def _resolutions(fn):
    sig = inspect.signature(fn.__wrapped__)
    return [p for p in sig.parameters if p.startswith("n_") or p in ("n", "subdivisions")]


def _estimate(name, kw):
    most = shapes._TRIANGLE_BOUND.get(name)
    if most is not None:
        return most(kw)
    cells = 1
    for v in kw.values():
        cells *= 10 * 4 ** v if name == "icosphere" else max(v, 1)
    return 2 * cells


@pytest.mark.parametrize("name", GENERATORS)
def test_the_triangle_bound_holds_at_many_resolutions(name):
    fn = getattr(shapes, name)
    res = _resolutions(fn)
    if not res:
        pytest.skip("no resolution argument")
    rng = np.random.default_rng(len(name))
    grid = [[1, 2, 3] if (r == "subdivisions" and name == "icosphere") else [shapes._MIN_RES.get(r, 1), 7, 23]
            for r in res]
    cases = list(itertools.product(*grid)) + [tuple(int(rng.integers(shapes._MIN_RES.get(r, 1), 40)) for r in res)
                                              for _ in range(4)]
    for vals in cases:
        kw = dict(zip(res, vals))
        if name == "icosphere":
            kw = {k: min(v, 4) for k, v in kw.items()}
        assert fn(**kw).n_faces <= _estimate(name, kw), (name, kw)


@pytest.mark.parametrize("call", [
    lambda: shapes.box(subdivisions=100_000),
    lambda: shapes.wave_sheet(n=5_000),
    lambda: shapes.capsule_link(n_around=20_000),
    lambda: shapes.phalanx(n_around=20_000),
    lambda: shapes.palm(n_round=2_000, n_flat=2_000),
    lambda: shapes.slender_aircraft(n=5_000),
])
def test_an_oversized_resolution_is_refused_before_anything_is_allocated(call):
    t = time.perf_counter()
    with pytest.raises(ValueError, match=f"{MAX_TRIANGLES:,} triangles"):
        call()
    assert time.perf_counter() - t < 1.0


def test_a_hand_scene_refuses_a_resolution_of_gigabytes():
    spec = {"name": "h", "kind": "articulated", "frames": 2,
            "bodies": [{"name": "hand", "type": "hand", "resolution": 1024}]}
    with pytest.raises(SceneError, match=r"resolution: expected 3\.\.256"):
        scene_from_spec(spec)
