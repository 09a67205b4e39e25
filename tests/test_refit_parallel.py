"""The threaded refit (``BVH.refit(parallel=...)``, ``bvh.refit_split``, ``bvh.refit_plan``, ``_build.refit_aabb_parts``,
``_build.refit_tree_parts``): the same volumes, bit for bit, as the serial sweep, for every BV type
and split rule; the split a partition of the nodes into closed subtrees with the nodes above them
swept last."""
import threading

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cdcore
from cdcore import _layout as L
from cdcore.bvh import PARALLEL_REFIT_NODES, refit_plan, refit_split
from cdcore.mesh import Mesh

from tests.test_refit_aabb import meshes_and_deformations, reference_refit

BVS = ("aabb", "obb", "sphere", "obb_sphere")


def part_ids(ranges, cuts, p, n_parts):
    """The ids of part p (``n_parts``: the nodes above the parts) in sweep order reversed."""
    rows = ranges[cuts[p]:(cuts[p + 1] if p < n_parts else len(ranges))]
    return np.concatenate([np.arange(a, b) for a, b in rows] or [np.zeros(0, dtype=np.int64)])


def check_split(ni, ranges, cuts, n_parts):
    """Every node once; each part a union of whole subtrees, ascending non-overlapping runs; the
    rest (swept last) only ancestors of the parts' subtrees."""
    n = len(ni)
    assert len(cuts) == n_parts + 1 and cuts[0] == 0
    assert np.all(ranges[:, 0] < ranges[:, 1])
    label = np.full(n, -1, dtype=np.int64)
    seen = []
    for p in range(n_parts + 1):
        ids = part_ids(ranges, cuts, p, n_parts)
        assert np.all(np.diff(ids) > 0)
        label[ids] = p
        seen.append(ids)
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(n))
    for node in range(n):
        if ni[node, L.LEFT] < 0:
            continue
        for child in ni[node, L.LEFT:L.RIGHT + 1]:
            if label[node] < n_parts:  # a part's node: its children in the same part
                assert label[child] == label[node]
    top = part_ids(ranges, cuts, n_parts, n_parts)
    assert len(top) == 0 or top[0] == 0  # the root is swept last, or is itself a part's subtree


@settings(max_examples=120, deadline=None)
@given(meshes_and_deformations(), st.sampled_from(BVS), st.integers(1, 5))
def test_threaded_refit_equals_serial(case, bv, n_parts):
    v, faces, w, leaf, split = case
    a = cdcore.build_bvh(Mesh(v, faces), bv, leaf_size=leaf, split=split)
    b = cdcore.build_bvh(Mesh(v, faces), bv, leaf_size=leaf, split=split)
    ranges, cuts = refit_split(a.nodes_i, a.depth, n_parts)
    check_split(a.nodes_i, ranges, cuts, n_parts)
    for target in (w, v):
        a.refit(target, parallel=True)
        b.refit(target, parallel=False)
        assert np.array_equal(a._F, b._F), bv
        assert a.check() == []
        if bv == "aabb":
            assert np.array_equal(a._nf, reference_refit(a.nodes_i, a.prim_order, faces, target))


def test_the_split_check_fails_on_a_wrong_split():
    """``check_split`` is not vacuous: a node moved to another part, or a node missing, fails it."""
    rng = np.random.default_rng(5)
    bvh = cdcore.build_bvh(Mesh(rng.normal(size=(60, 3)), rng.integers(0, 60, size=(200, 3))), "aabb")
    ranges, cuts = refit_split(bvh.nodes_i, bvh.depth, 2)
    check_split(bvh.nodes_i, ranges, cuts, 2)
    moved = cuts.copy()
    moved[1] += 1  # part 0's last run handed to part 1
    with pytest.raises(AssertionError):
        check_split(bvh.nodes_i, ranges, moved, 2)
    short = ranges.copy()
    short[-1, 1] -= 1  # a node missing
    with pytest.raises(AssertionError):
        check_split(bvh.nodes_i, short, cuts, 2)


def test_ranges_of_another_tree_are_refused():
    """A split that does not fit the tree raises instead of sweeping out of bounds."""
    from cdcore._build import refit_aabb, refit_aabb_parts, refit_tree_parts
    rng = np.random.default_rng(8)
    v = rng.normal(size=(30, 3))
    small = cdcore.build_bvh(Mesh(v, rng.integers(0, 30, size=(20, 3))), "aabb")
    small.refit(v, parallel=False)
    big = cdcore.build_bvh(Mesh(v, rng.integers(0, 30, size=(90, 3))), "aabb")
    ranges, cuts = refit_split(big.nodes_i, big.depth, 2)
    big.refit(v, parallel=False)
    plan = refit_plan(big.nodes_i, big._tri_verts, len(v), ranges, cuts)
    out = np.empty_like(v)
    ro = v.view()
    ro.flags.writeable = False  # as BVH.refit passes it (one compiled signature)
    with pytest.raises(ValueError, match="another tree"):
        refit_aabb_parts(ro, out, small._F, small._I, small._tri_verts, *plan)
    with pytest.raises(ValueError, match="another tree"):
        refit_aabb(ro, out, small._F, small._I, small._tri_verts, *plan[:2])
    tab, blocks, bcuts = plan
    for bad in (bcuts[::-1].copy(), np.array([0, len(blocks)], dtype=np.int64)):  # cuts out of order, past the blocks
        with pytest.raises(ValueError, match="another tree"):
            refit_aabb_parts(ro, out, big._F, big._I, big._tri_verts, tab, blocks, bad)
    short = blocks.copy()
    short[0, 3] = len(tab) + 1  # a block past the table
    with pytest.raises(ValueError, match="another tree"):
        refit_aabb(ro, out, big._F, big._I, big._tri_verts, tab, short)
    obb = cdcore.build_bvh(Mesh(v, rng.integers(0, 30, size=(20, 3))), "obb")
    with pytest.raises(ValueError, match="another tree"):
        refit_tree_parts(obb.kind, obb._nf, obb._ni, obb._po, obb._v, obb._f, 1e-12, np.empty((2, 3, 3)),
                         ranges, cuts)


@pytest.mark.parametrize("busy", [False, True])
def test_large_trees_refit_on_threads_automatically(monkeypatch, busy):
    """A tree past ``PARALLEL_REFIT_NODES`` takes the threaded path without being asked (the split
    is cached on the tree) unless the machine is busy, and its volumes equal the serial sweep's."""
    from cdcore import bvh as bvh_module
    from cdcore.bench.common import torus_mesh
    monkeypatch.setattr(bvh_module, "_busy", lambda threads: busy)
    mesh = torus_mesh(128, 130)
    rng = np.random.default_rng(2)
    w = mesh.vertices + rng.normal(scale=1e-2, size=mesh.vertices.shape)
    for bv in ("aabb", "obb"):
        a = cdcore.build_bvh(mesh, bv)
        b = cdcore.build_bvh(mesh, bv)
        assert a.n_nodes >= PARALLEL_REFIT_NODES
        a.refit(w)
        b.refit(w, parallel=False)
        assert np.array_equal(a._F, b._F)
        if numba.get_num_threads() > 1:
            assert (a._split is None) == busy and b._split is None


def test_concurrent_refits_from_python_threads():
    """Several Python threads refitting their own large trees at once: each result equals the
    serial one (a refit that finds another parallel region running sweeps serially)."""
    from cdcore.bench.common import torus_mesh
    mesh = torus_mesh(128, 130)
    rng = np.random.default_rng(4)
    targets = [mesh.vertices + rng.normal(scale=1e-2, size=mesh.vertices.shape) for _ in range(3)]
    trees = [cdcore.build_bvh(mesh, "aabb") for _ in targets]
    want = []
    for t in targets:
        ref = cdcore.build_bvh(mesh, "aabb")
        ref.refit(t, parallel=False)
        want.append(ref._F.copy())
    errors = []

    def work(i):
        try:
            for _ in range(5):
                trees[i].refit(targets[i])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(trees))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for tree, w in zip(trees, want):
        assert np.array_equal(tree._F, w)


def test_parallel_must_be_a_bool():
    bvh = cdcore.build_bvh(Mesh(np.eye(3), np.array([[0, 1, 2]])), "obb")
    with pytest.raises(TypeError, match="parallel"):
        bvh.refit(np.eye(3), parallel="yes")


def test_bad_vertices_leave_a_threaded_tree_untouched():
    rng = np.random.default_rng(6)
    v = rng.normal(size=(40, 3))
    bvh = cdcore.build_bvh(Mesh(v, rng.integers(0, 40, size=(80, 3))), "aabb")
    before = bvh._F.copy()
    bad = v.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        bvh.refit(bad, parallel=True)
    assert np.array_equal(bvh._F, before)
