"""The OBB refit's merge (``bv.obb.merge_keep_axes``): the support-function form must give the
box a brute-force projection of both children's 8 corners gives, along the parent's axes."""
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cdcore._layout import C0, E0, N_FCOLS, R0
from cdcore.bv.obb import merge_keep_axes
from cdcore.transforms import random_rotations


def _corners(c, e, R):
    """(8, 3) corners of the box centre c, half-extents e, axes the columns of R."""
    return np.array([c + R @ (np.array(s) * e) for s in itertools.product((-1.0, 1.0), repeat=3)])


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1e-3, 1.0, 1e3]),
       flat=st.booleans())
def test_merge_equals_corner_projection(seed, scale, flat):
    rng = np.random.default_rng(seed)
    nf = np.zeros((3, N_FCOLS))
    rots = random_rotations(3, rng)
    for row in range(3):
        nf[row, R0:R0 + 9] = rots[row].ravel()
    for child in (1, 2):
        nf[child, C0:C0 + 3] = rng.normal(scale=scale, size=3)
        e = rng.uniform(0.0, scale, size=3)
        if flat:
            e[rng.integers(3)] = 0.0  # a planar child (a one-triangle leaf)
        nf[child, E0:E0 + 3] = e
    pts = np.vstack([_corners(nf[k, C0:C0 + 3], nf[k, E0:E0 + 3], nf[k, R0:R0 + 9].reshape(3, 3))
                     for k in (1, 2)])
    U = nf[0, R0:R0 + 9].reshape(3, 3).copy()
    merge_keep_axes(nf, 0, 1, 2)
    # the axes may be reordered (long, mid, short) and the third re-signed: compare the box
    # through its corners' projections on the merged axes
    R = nf[0, R0:R0 + 9].reshape(3, 3)
    assert np.allclose(np.abs(R.T @ U), np.round(np.abs(R.T @ U)), atol=1e-12)  # same axes, permuted
    proj = pts @ R
    lo = nf[0, C0:C0 + 3] @ R - nf[0, E0:E0 + 3]
    hi = nf[0, C0:C0 + 3] @ R + nf[0, E0:E0 + 3]
    tol = 1e-12 * (scale + np.abs(pts).max())
    # encloses every corner ...
    assert np.all(proj >= lo - tol) and np.all(proj <= hi + tol)
    # ... and is the tightest such box (each face touches a corner)
    np.testing.assert_allclose(proj.min(axis=0), lo, rtol=0, atol=tol)
    np.testing.assert_allclose(proj.max(axis=0), hi, rtol=0, atol=tol)
