"""cdcore.validate: the compiled tree checks equal their plain-numpy references on random
broken trees, accept every built and refitted tree, and name what is wrong."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from cdcore import build_bvh, shapes
from cdcore.validate import (OK, check_structure, structure_problem, structure_problem_ref, validate_tree,
                             volume_excess, volume_excess_ref)

MESH = shapes.torus(1.0, 0.3, 10, 6)
TREES = {(bv, leaf): build_bvh(MESH, bv, leaf) for bv in ("aabb", "obb", "sphere", "obb_sphere") for leaf in (1, 3)}


@given(st.sampled_from(sorted(TREES)), st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_structure_kernel_equals_reference_on_mutated_trees(key, seed, n_mut):
    rng = np.random.default_rng(seed)
    b = TREES[key]
    ni, po = b.nodes_i.copy(), b.prim_order.copy()
    n, m = len(ni), len(po)
    for _ in range(n_mut):
        if rng.random() < 0.75:
            ni[rng.integers(0, n), rng.integers(0, 4)] = rng.choice([-1, -2, 0, 1, n - 1, n, n + 7, m, 2**31 - 1,
                                                                    -2**31, int(rng.integers(-n, 2 * n))])
        else:
            po[rng.integers(0, m)] = rng.choice([-1, 0, m - 1, m, 2**31 - 1, int(rng.integers(0, m))])
    leaf = key[1]
    got = structure_problem(ni, po, m, leaf)
    want = structure_problem_ref(ni, po, m, leaf)
    assert got[0] == want[0] and (got[0] == OK) == (want[0] == OK)
    if got[0] != OK:
        with pytest.raises(ValueError):
            check_structure(ni, po, m, leaf)


@pytest.mark.parametrize("key", sorted(TREES))
def test_built_and_refitted_trees_pass_and_excess_equals_reference(key):
    b = build_bvh(MESH, *key)
    for stage in range(2):
        if stage:
            v = MESH.vertices.copy()
            v[:, 2] += 0.1 * np.sin(4 * v[:, 0])
            b.refit(v)
        nf, ni, po, depth = validate_tree(b.kind, b.nodes_f, b.nodes_i, b.prim_order, b.mesh.vertices,
                                          b.mesh.faces, key[1])
        np.testing.assert_array_equal(depth, b.depth)
        got = volume_excess(b.kind, nf, ni, po, np.array(b.mesh.vertices), np.array(b.mesh.faces))
        want = volume_excess_ref(b.kind, nf, ni, po, b.mesh.vertices, b.mesh.faces)
        assert got[:2] == want[:2] and abs(got[2] - want[2]) < 1e-15


@given(st.sampled_from(sorted(TREES)), st.integers(0, 2**32 - 1))
def test_volume_kernel_equals_reference_on_shrunken_volumes(key, seed):
    rng = np.random.default_rng(seed)
    b = TREES[key]
    nf = b.nodes_f.copy()
    node = int(rng.integers(0, len(nf)))
    nf[node, int(rng.integers(0, 20))] *= rng.choice([0.0, 0.5, 0.999, 1.001, -1.0])
    got = volume_excess(b.kind, nf, b.nodes_i.copy(), b.prim_order.copy(), np.array(b.mesh.vertices),
                        np.array(b.mesh.faces))
    want = volume_excess_ref(b.kind, nf, b.nodes_i, b.prim_order, b.mesh.vertices, b.mesh.faces)
    assert abs(got[2] - want[2]) <= 1e-12 * max(1.0, abs(want[2]))
    if got[2] > 0:
        with pytest.raises(ValueError, match="does not enclose|orthonormal|negative"):
            validate_tree(b.kind, nf, b.nodes_i, b.prim_order, b.mesh.vertices, b.mesh.faces, key[1])


@pytest.mark.parametrize("change, words", [
    (lambda ni, po: ni.__setitem__((0, 0), 0), "nodes_i[0]: a child id must be greater"),
    (lambda ni, po: ni.__setitem__((0, 3), 5), "nodes_i[0]: the root"),
    (lambda ni, po: po.__setitem__(3, po[4]), "listed twice"),
    (lambda ni, po: po.__setitem__(3, -1), "prim_order[3]: triangle id out of range"),
])
def test_messages_name_the_array_and_index(change, words):
    b = TREES[("obb", 1)]
    ni, po = b.nodes_i.copy(), b.prim_order.copy()
    change(ni, po)
    with pytest.raises(ValueError) as err:
        check_structure(ni, po, len(po), 1, where="t.npz")
    assert str(err.value).startswith("t.npz: ") and words in str(err.value), str(err.value)


def test_dtypes_and_int32_range():
    b = TREES[("aabb", 1)]
    with pytest.raises(TypeError, match="integer"):
        check_structure(b.nodes_i.astype(float), b.prim_order, len(b.prim_order))
    ni = b.nodes_i.astype(np.int64)
    ni[0, 0] = 2**32 + 1  # would wrap to 1 in a cast
    with pytest.raises(ValueError, match="int32 range"):
        check_structure(ni, b.prim_order, len(b.prim_order))
