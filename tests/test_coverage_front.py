"""Branches of the front cache's kernels (``cdcore._front``) the motion tests do not reach: a bad
pose refused by the k-DOP entry (the front left as it was), and the seed pass (``seed_pass``,
without certificates: the pull-ups alone) and parent table (``parents``) against a plain-Python
reference on random fronts of real trees."""
import numpy as np
import pytest

import cdcore
from cdcore import FrontCache, build_bvh, collide
from cdcore._front import (FR_A, FR_B, FRONT_COLS, MG_COLS, RING, RING_COLS, SQ_COLS, SQ_SRC, ST_FAILS, ST_PULLED,
                           ST_REF, ST_SEP, ST_WAIT, seed_pass, parents)
from cdcore._layout import LEFT, RIGHT
from cdcore.transforms import make_pose, rotation_about

from meshgen import torus


@pytest.fixture(scope="module")
def tori():
    return cdcore.Mesh(*torus(0.5, 0.125, 16, 6)), cdcore.Mesh(*torus(0.5, 0.125, 12, 6))


def _linked(phase):
    rot = rotation_about([1, 0, 0], np.pi / 2) @ rotation_about([0, 0, 1], 0.3 * np.sin(phase))
    return make_pose(rot, [0.72 + 0.05 * np.sin(2 * phase), 0.03 * np.cos(phase), 0.0])


def _bad_poses():
    scaled = np.eye(4)
    scaled[:3, :3] *= 1.5  # not a rotation
    nan = np.eye(4)
    nan[0, 3] = np.nan
    return [scaled, nan]


@pytest.mark.parametrize("bv", ["kdop14", "obb"])
def test_a_bad_pose_is_refused_and_the_front_kept(tori, bv):
    ma, mb = tori
    ba, bb = build_bvh(ma, bv, 1), build_bvh(mb, bv, 1)
    fc = FrontCache(ba, bb)
    for k in range(6):
        fc.collide(None, _linked(0.1 * k))
    before = fc._front.copy()
    for bad in _bad_poses():
        for which in ("pose_a", "pose_b"):
            args = (bad, _linked(0.6)) if which == "pose_a" else (None, bad)
            with pytest.raises(ValueError, match=which):
                fc.collide(*args)
            assert np.array_equal(fc._front, before)  # the refused frame changed nothing
    for k in range(6, 12):  # and the cache goes on giving the full traversal's pairs
        pb = _linked(0.1 * k)
        assert np.array_equal(fc.collide(None, pb).pairs, collide(ba, None, bb, pb, contacts="all").pairs)


def _parents_ref(ni):
    p = [-1] * ni.shape[0]
    for node in range(ni.shape[0]):
        if ni[node, LEFT] >= 0:
            p[ni[node, LEFT]] = p[ni[node, RIGHT]] = node
    return p


CALL = 1  # the call of ``make_seeds``: a row waiting until a later call is not pulled up


def _seeds_ref(front, parA, parB):
    """The module docstring's rule, with a Python list as the stack."""
    def eligible(row):
        return row[ST_SEP] == 1 and row[ST_WAIT] <= CALL
    out = []
    for row in front.tolist():
        out.append((row, False))
        while len(out) >= 2 and eligible(out[-1][0]) and eligible(out[-2][0]):
            (r1, _), (r2, _) = out[-2], out[-1]
            if r1[FR_B] == r2[FR_B] and r1[FR_A] != r2[FR_A] and parA[r1[FR_A]] >= 0 \
                    and parA[r1[FR_A]] == parA[r2[FR_A]]:
                pa, pb = parA[r1[FR_A]], r1[FR_B]
            elif r1[FR_A] == r2[FR_A] and r1[FR_B] != r2[FR_B] and parB[r1[FR_B]] >= 0 \
                    and parB[r1[FR_B]] == parB[r2[FR_B]]:
                pa, pb = r1[FR_A], parB[r1[FR_B]]
            else:
                break
            merged = [pa, pb, 1, max(r1[ST_WAIT], r2[ST_WAIT]), max(r1[ST_FAILS], r2[ST_FAILS])]
            out[-2:] = [(merged, True)]
    return np.array([r for r, _ in out], dtype=np.int32).reshape(-1, 5), np.array([m for _, m in out])


def make_seeds(front, parA, parB):
    """``seed_pass`` with no certificates (every row a seed): (seeds (k, 5), pulled (k,) bool)."""
    n = len(front)
    fin = np.zeros((n, FRONT_COLS), dtype=np.int32)
    fin[:, :5] = front
    fin[:, ST_REF] = -1
    m_in = np.full((n, MG_COLS), -1.0)
    sq = np.zeros((n, SQ_COLS), dtype=np.int32)
    par = np.concatenate([parA, parB])
    k, skipped, merges = seed_pass(fin, m_in, n, sq, par, len(parA), -1.0, np.zeros((RING, RING_COLS)), CALL, CALL,
                                   1e-9, 0)
    assert skipped == 0
    pulled = sq[:k, ST_PULLED].astype(bool)
    # a row taken as it is names its input row; a pulled-up one none
    assert np.array_equal(sq[:k, SQ_SRC] < 0, pulled)
    assert merges == len(front) - k
    return sq[:k, :5], pulled


def _full_front(niA, niB, rng, depth_a, depth_b):
    """A front in traversal order: the BVTT cut at random depths (each node pair either split
    in A, split in B, or kept), with random states."""
    rows = []

    def visit(a, b, da, db):
        can_a = niA[a, LEFT] >= 0 and da < depth_a
        can_b = niB[b, LEFT] >= 0 and db < depth_b
        if (can_a or can_b) and rng.random() < 0.8:
            if can_a and (not can_b or rng.random() < 0.5):
                visit(niA[a, LEFT], b, da + 1, db)
                visit(niA[a, RIGHT], b, da + 1, db)
            else:
                visit(a, niB[b, LEFT], da, db + 1)
                visit(a, niB[b, RIGHT], da, db + 1)
            return
        rows.append([a, b, rng.choice([0, 1, 1]), rng.choice([0, 0, 0, 1, 2]), rng.integers(0, 3)])

    visit(0, 0, 0, 0)
    return np.array(rows, dtype=np.int32)


def test_parents_and_seeds_equal_a_python_reference(tori):
    ma, mb = tori
    ba, bb = build_bvh(ma, "aabb", 1), build_bvh(mb, "obb", 2)
    niA, niB = ba.nodes_i, bb.nodes_i
    parA, parB = parents(niA), parents(niB)
    assert parA.tolist() == _parents_ref(niA) and parB.tolist() == _parents_ref(niB)
    rng = np.random.default_rng(3)
    merged_any = 0
    for trial in range(60):
        front = _full_front(niA, niB, rng, 1 + trial % 6, 1 + (trial // 6) % 6)
        seeds, merged = make_seeds(front, parA, parB)
        ref_seeds, ref_merged = _seeds_ref(front, parA, parB)
        assert np.array_equal(seeds, ref_seeds), trial
        assert np.array_equal(merged, ref_merged), trial
        merged_any += int(merged.sum())
        # the seeds still cover every leaf pair exactly once (what makes a seeded traversal exact)
        assert _leaf_pairs(seeds, niA, niB) == _leaf_pairs(front, niA, niB)
    assert merged_any > 0


def _leaf_pairs(rows, niA, niB):
    def leaves(ni, node):
        if ni[node, LEFT] < 0:
            return [node]
        return leaves(ni, ni[node, LEFT]) + leaves(ni, ni[node, RIGHT])
    out = []
    for a, b in rows[:, :2].tolist():
        out += [(x, y) for x in leaves(niA, a) for y in leaves(niB, b)]
    assert len(out) == len(set(out))
    return sorted(out)
