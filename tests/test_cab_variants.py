"""CAB's parent-axis rule (Schmidl, Walker & Lin 2004, section 3.2.1) against a plain-numpy
reference: eq. 1-3, the parallel case ("the child box with the largest axis, not
considering the major axes") and the rejected normalised-sum variant (``cab_sum``)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from cdcore import _layout as L
from cdcore.articulated import BodyHierarchy, UPDATE_METHODS
from cdcore.articulated.hierarchy import CAB_PARALLEL_TOL, _cab_axes
from cdcore.transforms import random_rotations, rotation_about


def _nf(boxes):
    """nodes_f rows for child boxes given as (centre, R (columns = axes sorted by extent), extents)."""
    nf = np.zeros((len(boxes), L.N_FCOLS))
    for n, (c, R, e) in enumerate(boxes):
        nf[n, L.C0:L.C0 + 3] = c
        nf[n, L.R0:L.R0 + 9] = np.asarray(R).ravel()
        nf[n, L.E0:L.E0 + 3] = e
    return nf


def ref_cab_axes(boxes, joint, use_sum=False):
    """The paper's rule written out plainly (columns of the result are A_1, A_2, A_3)."""
    a = []
    for c, R, e in boxes:
        u = np.asarray(R)[:, 0] * e[0]
        a.append(u if (np.asarray(c) - joint) @ u >= 0 else -u)
    a1, a2 = a
    if abs(a1 @ a2) / (np.linalg.norm(a1) * np.linalg.norm(a2)) > CAB_PARALLEL_TOL:
        # the child with the largest axis other than its major one
        e1, e2 = boxes[0][2], boxes[1][2]
        pick = 0 if (e1[1], e1[2]) >= (e2[1], e2[2]) else 1
        return np.asarray(boxes[pick][1], float)
    E = a1 - a2
    cands = [E, a1, a2]
    if use_sum and np.linalg.norm(E) <= min(np.linalg.norm(a1), np.linalg.norm(a2)):
        M = a1 + a2
    else:
        M = max(cands, key=np.linalg.norm)  # ties: E first, then a1 (the kernel's order)
    A1 = M / np.linalg.norm(M)
    A2 = np.cross(a1, a2)
    A2 /= np.linalg.norm(A2)
    return np.stack([A1, A2, np.cross(A1, A2)], axis=1)


def _child(rng, joint):
    R = random_rotations(1, rng)[0]
    e = np.sort(rng.uniform(0.1, 3.0, 3))[::-1]
    return (joint + R[:, 0] * e[0] * rng.choice([-1, 1]) + rng.normal(0, 0.1, 3), R, e)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), use_sum=st.booleans())
def test_cab_axes_match_the_reference(seed, use_sum):
    rng = np.random.default_rng(seed)
    joint = rng.normal(size=3)
    boxes = [_child(rng, joint), _child(rng, joint)]
    A = np.empty((3, 3))
    _cab_axes(_nf(boxes), 0, 1, *joint, A, use_sum)
    np.testing.assert_allclose(A, ref_cab_axes(boxes, joint, use_sum), atol=1e-9)
    np.testing.assert_allclose(A.T @ A, np.eye(3), atol=1e-9)


def test_parallel_case_takes_the_child_with_the_largest_non_major_axis():
    """Parallel major axes: child 0 has the longer major axis, child 1 the larger second
    axis; the paper takes child 1's axes (the old rule, the longer major axis, took 0's)."""
    R0 = np.eye(3)
    R1 = rotation_about((1, 0, 0), 0.5)  # same major axis x, cross-section turned
    boxes = [((-5.0, 0, 0), R0, np.array([5.0, 0.5, 0.4])), ((3.0, 0, 0), R1, np.array([3.0, 1.0, 0.2]))]
    A = np.empty((3, 3))
    _cab_axes(_nf(boxes), 0, 1, 0.0, 0.0, 0.0, A, False)
    np.testing.assert_allclose(A, R1, atol=1e-15)
    np.testing.assert_allclose(A, ref_cab_axes(boxes, np.zeros(3)), atol=1e-15)
    # swap the second extents: child 0 is picked
    boxes[0] = ((-5.0, 0, 0), R0, np.array([5.0, 1.5, 0.4]))
    _cab_axes(_nf(boxes), 0, 1, 0.0, 0.0, 0.0, A, False)
    np.testing.assert_allclose(A, R0, atol=1e-15)
    # equal second extents: the third decides
    boxes[0] = ((-5.0, 0, 0), R0, np.array([5.0, 1.0, 0.1]))
    _cab_axes(_nf(boxes), 0, 1, 0.0, 0.0, 0.0, A, False)
    np.testing.assert_allclose(A, R1, atol=1e-15)


def test_cab_sum_differs_from_cab_only_when_the_chain_folds():
    joint = np.zeros(3)
    e = np.array([2.0, 0.5, 0.3])
    A, B = np.empty((3, 3)), np.empty((3, 3))
    for angle, same in ((np.radians(150), True), (np.radians(90), True), (np.radians(40), False)):
        R1 = rotation_about((0, 0, 1), angle)  # a2 at `angle` from a1 = +x
        boxes = [(np.array([2.0, 0, 0]), np.eye(3), e), (R1[:, 0] * 2.0, R1, e)]
        _cab_axes(_nf(boxes), 0, 1, *joint, A, False)
        _cab_axes(_nf(boxes), 0, 1, *joint, B, True)
        assert np.allclose(A, B) == same, angle
        if not same:  # the sum bisects the two major axes
            bis = np.array([np.cos(angle / 2), np.sin(angle / 2), 0])
            np.testing.assert_allclose(B[:, 0], bis, atol=1e-12)
    assert "cab_sum" in UPDATE_METHODS


def test_cab_sum_shares_the_leaf_boxes_of_cab():
    from cdcore.scenes import load_scene
    sc = load_scene("chains-braided", frames=40)
    body = sc.bodies[0].body
    hc, hs = BodyHierarchy(body, "cab"), BodyHierarchy(body, "cab_sum")
    leaves = np.flatnonzero(hc.tree.nodes_i[:, L.LEFT] < 0)
    for f in (0, 20, 39):
        hc.update(sc.bodies[0].link_poses[f])
        hs.update(sc.bodies[0].link_poses[f])
        np.testing.assert_array_equal(hc.nodes_f[leaves], hs.nodes_f[leaves])
