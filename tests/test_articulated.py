"""Articulated bodies: FK, the four hierarchy updates, collisions against brute force."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cdcore import shapes
from cdcore import _layout as L
from cdcore.articulated import (UPDATE_METHODS, ArticulatedBody, BodyHierarchy, Link, brute_force_pairs,
                                collide_bodies)
from cdcore.articulated.hierarchy import build_topology
from cdcore.scenes import SceneRunner, list_scenes, load_scene
from cdcore.scenes.runner import contact_pairs
from cdcore.transforms import make_pose, rotation_about

ARTICULATED = [n for n in list_scenes() if n.startswith(("chains", "hand"))]
_SCENES = {}


def scene(name):
    if name not in _SCENES:
        _SCENES[name] = load_scene(name)
    return _SCENES[name]


def rz(a):
    return make_pose(rotation_about((0, 0, 1), a))


def test_fk_matches_hand_computed_poses():
    link = shapes.capsule_link(3.0, 1.0, 8, 4)
    body = ArticulatedBody([Link("a", link, -1, make_pose(None, (1, 2, 3)), (0, 0, 1)),
                            Link("b", link, 0, make_pose(None, (3, 0, 0)), (0, 0, 1)),
                            Link("c", link, 1, make_pose(rotation_about((1, 0, 0), np.pi / 2), (3, 0, 0)),
                                 (0, 1, 0))])
    q = np.array([0.3, -0.7, 1.1])
    root = make_pose(rotation_about((0, 1, 0), 0.2), (0.5, 0, 0))
    P = body.fk(q, root)
    T0 = root @ make_pose(None, (1, 2, 3)) @ rz(0.3)
    T1 = T0 @ make_pose(None, (3, 0, 0)) @ rz(-0.7)
    T2 = T1 @ make_pose(rotation_about((1, 0, 0), np.pi / 2), (3, 0, 0)) @ make_pose(rotation_about((0, 1, 0), 1.1))
    np.testing.assert_allclose(P, np.stack([T0, T1, T2]), atol=1e-12)
    # the straight chain along x: the last link's joint sits at 6 along x
    np.testing.assert_allclose(body.fk(np.zeros(3))[2][:3, 3], (7, 2, 3), atol=1e-12)
    # vectorised over frames equals frame by frame
    Q = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    np.testing.assert_allclose(body.fk_frames(Q), np.stack([body.fk(q_) for q_ in Q]), atol=1e-12)


def test_fk_of_the_hand_branches_at_the_palm():
    body = scene("hand-ball").bodies[0].body
    assert body.n_links == 16
    children_of_palm = [i for i, p in enumerate(body.parents) if p == 0]
    assert len(children_of_palm) == 5  # five fingers
    P = body.fk(np.zeros(16))
    for i in children_of_palm:  # each finger's first joint is fixed on the palm
        np.testing.assert_allclose(P[i], body.origins[i], atol=1e-12)


def test_fk_rejects_bad_input():
    body = scene("chains-3to1").bodies[0].body
    with pytest.raises(ValueError, match="q"):
        body.fk(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        body.fk_frames(np.full((2, body.n_links), np.nan))
    with pytest.raises(ValueError):
        ArticulatedBody([Link("a", shapes.icosphere(1.0, 1), parent=3)])
    with pytest.raises(TypeError):
        ArticulatedBody([Link("a", "not a mesh")])
    with pytest.raises(ValueError, match="axis"):
        ArticulatedBody([Link("a", shapes.icosphere(1.0, 1), axis=(0, 0, 0))])


def test_topology_is_balanced_joint_cuts():
    topo = build_topology(np.arange(-1, 15))  # a chain of 16
    assert topo.n_nodes == 31 and topo.height == 4
    ni = topo.nodes_i
    for n in np.flatnonzero(ni[:, L.LEFT] >= 0):
        links = topo.link_order[ni[n, L.START]:ni[n, L.START] + ni[n, L.COUNT]]
        assert np.all(np.diff(np.sort(links)) == 1)  # connected: a contiguous run of the chain
        j = topo.joint_link[n]
        assert j in links and j - 1 in links  # the joint joining the two halves


def _encloses(h, poses, tol=1e-9):
    """Every node's box holds every vertex of every link below it (world frame)."""
    body, tree = h.body, h.tree
    nf = h.nodes_f
    world = [body.link_vertices(i) @ poses[i, :3, :3].T + poses[i, :3, 3] for i in range(body.n_links)]
    scale = max(np.abs(w).max() for w in world)
    for n in range(tree.n_nodes):
        s, c = tree.nodes_i[n, L.START], tree.nodes_i[n, L.COUNT]
        pts = np.vstack([world[i] for i in tree.link_order[s:s + c]])
        R = nf[n, L.R0:L.R0 + 9].reshape(3, 3)
        local = (pts - nf[n, L.C0:L.C0 + 3]) @ R
        over = (np.abs(local) - nf[n, L.E0:L.E0 + 3]).max()
        if over > tol * scale:
            return f"node {n} misses a vertex by {over:.3g}"
        # the sphere used by sphere tests holds the box
        if np.linalg.norm(nf[n, L.E0:L.E0 + 3]) > nf[n, L.SR] * (1 + 1e-12):
            return f"node {n}: sphere smaller than its box"
    return None


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(ARTICULATED), frac=st.floats(0.0, 1.0), method=st.sampled_from(UPDATE_METHODS))
def test_every_update_encloses_all_link_geometry(name, frac, method):
    sc = scene(name)
    f = int(frac * (sc.frames - 1))
    for sb in sc.bodies:
        if sb.body.n_links < 2:
            continue
        h = BodyHierarchy(sb.body, method)
        h.update(sb.link_poses[f])
        err = _encloses(h, sb.link_poses[f])
        assert err is None, (name, f, method, err)


def test_cab_handles_parallel_children():
    """A straight chain: every pair of child major axes is (anti)parallel, the special case."""
    body = scene("chains-6to1").bodies[0].body
    poses = body.fk(np.zeros(body.n_links))
    for method in ("cab", "cab_sum"):
        h = BodyHierarchy(body, method)
        h.update(poses)
        assert _encloses(h, poses) is None
        root_ext = h.nodes_f[0, L.E0:L.E0 + 3]
        # tight along the chain: 8 links of 6 with 7 joint gaps of 0.25
        assert root_ext[0] == pytest.approx((8 * 6.0 + 7 * 0.25) / 2, rel=1e-3)


def test_chain_scenes_are_16_links_with_120_brute_pairs_per_frame():
    """CAB Tables 1-4: 1,200,000 brute queries in 10,000 frames = C(16, 2) per frame: two
    chains of 8, self-collision included, no link touching its neighbour at the joint."""
    for name in ("chains-3to1", "chains-6to1", "chains-dented", "chains-braided"):
        sc = scene(name)
        assert sum(b.body.n_links for b in sc.bodies) == 16
        assert sorted(sc.pairs) == [(0, 0), (0, 1), (1, 1)]
        assert all(not b.body.joints_touch and b.body.skipped_self_pairs() == set() for b in sc.bodies)
        r = SceneRunner(sc, "cab")
        for f in (0, sc.frames // 2, sc.frames - 1):
            b = r.brute(f)
            assert b.n_exact == 120
            assert [len(p.link_pairs) for p in b.pairs] == [64, 28, 28]
            # links never touch at their joints: self pairs have no contact
            assert not b.pairs[1].hits.any() and not b.pairs[2].hits.any()


@pytest.mark.parametrize("name", ["chains-3to1", "chains-braided", "hand-ball"])
def test_obb_and_cab_give_identical_exact_queries_and_contacts_equal_brute_force(name):
    sc = scene(name)
    runners = {m: SceneRunner(sc, m) for m in UPDATE_METHODS}
    frames = np.linspace(0, sc.frames - 1, 40).astype(int)
    if name.startswith("chains") and name != "chains-braided":  # contacts only during the passes
        frames = np.unique(np.concatenate([frames, np.arange(255, 290)]))
    total = {m: 0 for m in UPDATE_METHODS}
    contacts = 0
    for f in frames:
        res = {m: r.step(int(f)) for m, r in runners.items()}
        brute = runners["cab"].brute(int(f))
        for m in UPDATE_METHODS:
            assert contact_pairs(res[m]) == contact_pairs(brute), (name, f, m)
            total[m] += res[m].n_exact
        assert res["obb"].n_exact == res["cab"].n_exact, (name, f)
        assert [set(map(tuple, p.link_pairs.tolist())) for p in res["obb"].pairs] == \
               [set(map(tuple, p.link_pairs.tolist())) for p in res["cab"].pairs]
        contacts += res["cab"].contacts
    assert contacts > 0, name
    assert total["obb"] <= total["aabb_star"]


def test_self_collision_skips_adjacent_links():
    sc = scene("hand-ball")
    hand = sc.bodies[0]
    h = BodyHierarchy(hand.body, "cab")
    adj = hand.body.adjacent_pairs()
    for f in range(0, sc.frames, 97):
        h.update(hand.link_poses[f])
        r = collide_bodies(h, h)
        pairs = {tuple(p) for p in r.link_pairs.tolist()}
        assert all(i < j and (i, j) not in adj for i, j in pairs)
    brute = brute_force_pairs(hand.body, hand.body, self_collision=True)
    assert len(brute) == 16 * 15 // 2 - len(adj)


def test_update_requires_poses_of_the_right_shape():
    h = BodyHierarchy(scene("chains-3to1").bodies[0].body, "cab")
    with pytest.raises(ValueError, match="poses"):
        h.update(np.zeros((3, 4, 4)))
    with pytest.raises(ValueError, match="update"):
        collide_bodies(h, h)
    with pytest.raises(ValueError, match="method"):
        BodyHierarchy(h.body, "nope")
