"""The front cache's temporal coherence certificates (``cdcore._front``): a separated front pair
is skipped while its margin minus a bound on the motion since its test stays positive. These
tests compare the cache with a full ``collide(..., contacts="all")`` every frame on coherent
motions with sudden jumps, refits with deforming vertices and articulated scenes; check the
margin against the exact triangle distance; and show that an unsound motion bound (zero) gives
wrong answers that the comparison catches (so the comparisons can fail)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cdcore
from cdcore import FrontCache, build_bvh, collide
from cdcore._front import _margin, max_displacement
from cdcore.transforms import make_pose, relative_transform, rotation_about

from meshgen import torus, uv_sphere


@pytest.fixture(scope="module")
def tori():
    return cdcore.Mesh(*torus(0.5, 0.125, 24, 8)), cdcore.Mesh(*torus(0.5, 0.125, 20, 8))


def _path(rng, frames, jump_at):
    """A coherent motion of B around A (B's origin wandering through A's tube, turning), with a
    teleport to a random place and attitude at frame ``jump_at`` (-1: none)."""
    x = np.array([0.75, 0.0, 0.0]) + rng.uniform(-0.3, 0.3, 3)
    v = rng.normal(0, 0.01, 3)
    axis = rng.normal(size=3)
    ang = rng.uniform(0, 6)
    w = rng.normal(0, 0.03)
    poses = []
    for k in range(frames):
        if k == jump_at:
            x = rng.uniform(-0.8, 0.8, 3)
            axis = rng.normal(size=3)
            ang = rng.uniform(0, 6)
        v = 0.9 * v + rng.normal(0, 0.004, 3) - 0.02 * (x - [0.6, 0.0, 0.0])  # pulled back near A
        x = x + v
        ang += w
        rot = rotation_about(axis, ang) @ rotation_about([1, 0, 0], np.pi / 2)
        poses.append(make_pose(rot, x))
    return poses


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), bv=st.sampled_from(["aabb", "obb", "obb_sphere", "sphere", "kdop18"]),
       jump=st.booleans())
def test_coherent_motions_with_jumps_equal_full_traversals(tori, seed, bv, jump):
    rng = np.random.default_rng(seed)
    ma, mb = tori
    ba, bb = build_bvh(ma, bv, 1), build_bvh(mb, bv, 2, split="sah")
    fc = FrontCache(ba, bb)
    pose_a = make_pose(rotation_about([0, 0, 1], rng.uniform(0, 6)), rng.uniform(-1, 1, 3))
    frames = 40
    for k, pb in enumerate(_path(rng, frames, rng.integers(5, frames) if jump else -1)):
        pose_b = pose_a @ pb
        full = collide(ba, pose_a, bb, pose_b, contacts="all")
        got = fc.collide(pose_a, pose_b)
        assert np.array_equal(got.pairs, full.pairs), (bv, k)


def test_certificates_skip_tests_and_count_them(tori):
    """On a slow motion most front pairs are kept by their certificates: counted as skipped, not
    as node tests, and far fewer node tests than full traversals."""
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    fc = FrontCache(ba, bb)
    plain = FrontCache(ba, bb, certificates=False)
    full_tests = cert_tests = plain_tests = 0
    for k in range(60):
        rot = rotation_about([1, 0, 0], np.pi / 2) @ rotation_about([0, 0, 1], 0.2 * np.sin(0.05 * k))
        pb = make_pose(rot, [0.77 + 0.03 * np.sin(0.1 * k), 0.02 * np.cos(0.07 * k), 0.0])
        full = collide(ba, None, bb, pb, contacts="all")
        got = fc.collide(None, pb)
        ref = plain.collide(None, pb)
        assert np.array_equal(got.pairs, full.pairs) and np.array_equal(ref.pairs, full.pairs)
        if k >= 5:
            full_tests += full.stats.bv_tests
            cert_tests += got.stats.bv_tests
            plain_tests += ref.stats.bv_tests
            assert fc.last_skipped > 0
    assert fc.skipped_total > 0 and plain.skipped_total == 0
    assert cert_tests < 0.5 * full_tests, (cert_tests, full_tests)
    assert cert_tests < plain_tests


def _approach(frames=80):
    """B slides into A from 0.4 away to deep overlap, in small steps (a coherent motion)."""
    rot = rotation_about([1, 0, 0], np.pi / 2)
    return [make_pose(rot, [0.75, 0.0, 0.45 - 0.6 * k / frames]) for k in range(frames)]


@pytest.mark.parametrize("scale", [0.0, 0.5])
def test_an_unsound_motion_bound_gives_wrong_answers_that_are_caught(tori, scale):
    """With the motion bound forced to zero (or halved) a certificate expires too late, so pairs
    that come into contact after their test are missed: the comparison with full traversals sees
    it. The real bound on the same motion gives the full traversal's pairs every frame."""
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    sound = FrontCache(ba, bb)
    unsound = FrontCache(ba, bb)
    unsound._mscale = scale  # the bound of the motion since a test: scaled down (wrong)
    wrong = 0
    for pb in _approach():
        full = collide(ba, None, bb, pb, contacts="all").pairs
        assert np.array_equal(sound.collide(None, pb).pairs, full)
        if not np.array_equal(unsound.collide(None, pb).pairs, full):
            wrong += 1
    assert wrong > 0


def test_a_sudden_jump_invalidates_margins(tori):
    """Coherent frames far apart (margins certified), then B jumps into deep overlap: the
    margins must not hold (the jump is larger than any of them), and the pairs are right."""
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    fc = FrontCache(ba, bb)
    rot = rotation_about([1, 0, 0], np.pi / 2)
    far = [make_pose(rot, [0.75, 0.0, 0.80 + 0.001 * k]) for k in range(10)]
    for pb in far:
        assert not fc.collide(None, pb).hit
    assert fc.certified > 0
    for pb in [make_pose(rot, [0.78, 0.0, 0.0]), make_pose(rot, [0.79, 0.0, 0.0])]:
        full = collide(ba, None, bb, pb, contacts="all")
        got = fc.collide(None, pb)
        assert full.hit and np.array_equal(got.pairs, full.pairs)
    # steps just below the incoherence threshold (a fifth of the size, not a plain traversal): the
    # certificates alone must expire
    fc = FrontCache(ba, bb)
    hits = 0
    for z in np.arange(0.8, -0.01, -0.12):
        pb = make_pose(rot, [0.78, 0.0, z])
        full = collide(ba, None, bb, pb, contacts="all")
        got = fc.collide(None, pb)
        assert np.array_equal(got.pairs, full.pairs), z
        hits += full.hit
    assert hits > 0


@pytest.mark.parametrize("bv", ["aabb", "obb", "sphere", "kdop18"])
def test_refit_with_deforming_vertices(tori, bv):
    """A's vertices move (a travelling wave along the normals, growing then jumping) while B
    moves slowly: the certificates take the vertices' largest move into account."""
    ma, mb = tori
    ba, bb = build_bvh(ma, bv, 1), build_bvh(mb, bv, 1)
    fc = FrontCache(ba, bb)
    v0 = ma.vertices
    radial = v0 - 0.5 * v0 / np.maximum(1e-12, np.linalg.norm(v0 * [1, 1, 0], axis=1))[:, None] * [1, 1, 0]
    normals = radial / np.linalg.norm(radial, axis=1)[:, None]
    rot = rotation_about([1, 0, 0], np.pi / 2)
    n_hit = 0
    for k in range(50):
        amp = 0.002 * k if k < 40 else 0.15  # a slow growth, then a large sudden change
        phase = np.sin(4.0 * np.arctan2(v0[:, 1], v0[:, 0]) - 0.3 * k)
        ba.refit(v0 + (amp * phase)[:, None] * normals)
        pb = make_pose(rot, [0.80 + 0.01 * np.sin(0.2 * k), 0.0, 0.0])
        full = collide(ba, None, bb, pb, contacts="all")
        got = fc.collide(None, pb)
        assert np.array_equal(got.pairs, full.pairs), (bv, k)
        n_hit += full.hit
    assert 0 < n_hit < 50


@pytest.mark.parametrize("name", ["chains-6to1", "hand-ball"])
def test_articulated_scenes_equal_full_traversals(name):
    """The lab's front run over an articulated scene (one cache per link pair, on the links'
    poses) checks every query against a full traversal (raises on a mismatch)."""
    from cdcore.lab import LabConfig, MotionRun
    from cdcore.scenes import load_scene
    scene = load_scene(name, frames=40)
    run = MotionRun(scene, LabConfig("obb"), front=True, check=True)
    for f in range(40):
        run.step(f)
    assert run.mismatches == 0
    assert sum(fc.skipped_total for fc in run.fronts.values()) > 0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spheres=st.booleans())
def test_margin_is_a_lower_bound_of_the_triangles_distance(seed, spheres):
    """``_margin`` of a node pair never exceeds the exact distance between the triangles below
    the two nodes (measured by ``cdcore.distance`` on the nodes' own triangles)."""
    rng = np.random.default_rng(seed)
    ma = cdcore.Mesh(*uv_sphere(0.4, 5, 7))
    mb = cdcore.Mesh(*torus(0.4, 0.1, 10, 5))
    bv = "obb_sphere" if spheres else "obb"
    ba, bb = build_bvh(ma, bv, 1), build_bvh(mb, bv, 1)
    rot = rotation_about(rng.normal(size=3), rng.uniform(0, 6))
    pose_b = make_pose(rot, rng.uniform(-0.9, 0.9, 3))
    R, t = relative_transform(np.eye(4), pose_b)
    R, t = np.ascontiguousarray(R), np.ascontiguousarray(t)
    c = np.empty((3, 3))

    for _ in range(6):
        a = int(rng.integers(0, ba.n_nodes))
        b = int(rng.integers(0, bb.n_nodes))
        axis = int(rng.integers(-1, 16))
        m = _margin(ba.nodes_f.copy(), a, bb.nodes_f.copy(), b, R, t, axis, spheres, c)
        if m <= 0:
            continue
        sa = cdcore.Mesh(ma.vertices, ma.faces[ba.node_primitives(a)])
        sb = cdcore.Mesh(mb.vertices, mb.faces[bb.node_primitives(b)])
        d = cdcore.distance(build_bvh(sa, "obb", 1), None, build_bvh(sb, "obb", 1), pose_b).distance
        assert m <= d * (1 + 1e-9) + 1e-12, (a, b, axis, m, d)



def test_a_refit_frame_counts_the_vertex_moves_measurement_in_its_time(tori):
    """``t_total`` of a frame after a refit includes measuring the vertices' moves (a full
    traversal does not need that pass): at least the compiled call's own time."""
    ma, mb = tori
    ba, bb = build_bvh(ma, "obb", 1), build_bvh(mb, "obb", 1)
    fc = FrontCache(ba, bb)
    pb = make_pose(rotation_about([1, 0, 0], np.pi / 2), [0.75, 0.0, 0.0])
    fc.collide(None, pb)
    ba.refit(ma.vertices * 1.001)
    got = fc.collide(None, pb)
    cycles = fc._meta[cdcore._front.M_CYC] * fc._spc
    assert got.t_total > cycles > 0.0
    again = fc.collide(None, pb)  # no refit: the compiled call only
    assert again.t_total == fc._meta[cdcore._front.M_CYC] * fc._spc


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 101])
def test_max_displacement_is_the_largest_vertex_move(n):
    """The refit's D (two maxima over even and odd rows) against numpy, odd and even counts,
    the largest move at either end; never below the exact value (widened by 1e-12)."""
    rng = np.random.default_rng(n)
    old = rng.normal(size=(n, 3))
    new = old + rng.normal(0, 0.01, (n, 3))
    old.flags.writeable = new.flags.writeable = False  # as a Mesh's vertices (one signature)
    for k in ([0, n - 1] if n else []):
        moved = new.copy()
        moved[k] += [0.0, 0.5, -0.3]
        moved.flags.writeable = False
        exact = np.linalg.norm(moved - old, axis=1).max()
        got = max_displacement(old, moved)
        assert exact <= got <= exact * (1 + 1e-11)
    assert max_displacement(old, new) == (0.0 if n == 0 else pytest.approx(np.linalg.norm(new - old, axis=1).max()))
