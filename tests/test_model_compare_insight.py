"""Compare mode and the insight checks (Qt-free): CAB-table totals side by side, ground
truth against a brute-force oracle (and that it can fail), refit quality, heat."""
import dataclasses

import numpy as np
import pytest

from app.model import insight
from app.model.compare import CompareModel, MethodTotals
from app.model.insight import ground_truth, heat_summary, refit_quality
from app.model.session import Session
from cdcore._tritri_ref import all_pairs_overlap

# chains-6to1 touches at frames 276-285: a 30-frame window around them
CHAIN_FRAMES = range(262, 292)


def _session(name, frame=0, **kw):
    s = Session()
    for k, v in kw.items():
        setattr(s, k, v)
    s.load_scene(name)
    if frame:
        s.goto(frame)
    return s


# ---- compare ---------------------------------------------------------------------------

@pytest.mark.parametrize("methods", [["obb"], [], ["obb", "nope"], ["obb", "cab", "aabb_star", "aabb_plus", "obb"],
                                     ["obb", "obb"]])
def test_compare_rejects_bad_method_lists(methods):
    with pytest.raises(ValueError):
        CompareModel(methods)


def test_compare_chains_obb_cab_aabb_star():
    s = _session("chains-6to1")
    s.visuals = False
    cm = CompareModel(["obb", "cab", "aabb_star"])
    changes = []
    cm.changed.connect(lambda: changes.append(1))
    s.compare = cm
    cm.rebuild(s)
    for f in CHAIN_FRAMES:
        s.goto(f)
    assert len(changes) == 1 + len(CHAIN_FRAMES)
    tot = cm.totals()
    assert list(tot) == ["obb", "cab", "aabb_star"]
    fields = {"frames", "n_coll", "n_false", "t_update", "t_test", "t_query", "t_total", "n_v", "c_v", "n_p", "c_p"}
    for t in tot.values():
        assert isinstance(t, MethodTotals)
        assert fields <= set(t.as_dict())
        assert t.frames == len(CHAIN_FRAMES)
        assert t.t_total == pytest.approx(t.t_update + t.t_test + t.t_query)
        # T = N_v C_v + N_p C_p covers the test and query time
        assert t.n_v * t.c_v + t.n_p * t.c_p == pytest.approx(t.t_test + t.t_query, rel=1e-9)
    obb, cab, star = tot["obb"], tot["cab"], tot["aabb_star"]
    assert obb.n_coll > 0 and obb.contacts > 0  # the window has contacts
    # same leaf boxes: same exact queries, frame by frame (CAB Tables 1-5)
    assert (obb.n_coll, obb.n_false) == (cab.n_coll, cab.n_false)
    assert cm.series("obb", "n_exact") == cm.series("cab", "n_exact")
    # AABB* leaves enclose the OBB leaves
    assert star.n_coll >= obb.n_coll
    assert all(a >= o for a, o in zip(cm.series("aabb_star", "n_exact"), cm.series("obb", "n_exact")))
    # the methods agree with the session's own runner (cab) on contacts
    assert obb.contacts == cab.contacts == star.contacts
    assert len(cm.histories["cab"]) == len(CHAIN_FRAMES)
    cm.reset()
    assert cm.totals()["obb"].frames == 0 and not cm.histories["obb"]
    # a new scene rebuilds the runners through the session
    s.load_scene("chains-3to1")
    assert cm.scene is s.scene and cm.totals()["cab"].frames == 1


def test_compare_follows_session_settings():
    s = _session("hand-ball")
    s.set_test("sat6")
    cm = CompareModel(["cab", "aabb_plus"])
    s.compare = cm
    cm.rebuild(s)
    assert all(r.test == "sat6" and r.exact_test == s.exact_test and r.deform == s.deform
               for r in cm.runners.values())
    assert all(r.scene is s.scene for r in cm.runners.values())
    s.goto(3)
    assert cm.frame == 3


# ---- ground truth ------------------------------------------------------------------------

@pytest.mark.parametrize("name,frames", [("chains-3to1", [90, 270]), ("hand-ball", [0, 8]),
                                         ("rigid-torus", [8, 13]), ("deform-wave", [5])])
def test_ground_truth_ok_on_contact_frames(name, frames):
    s = _session(name)
    for f in frames:
        s.goto(f)
        assert s.record.contacts > 0, "pick frames with contacts"
        gt = ground_truth(s)
        assert gt.ok and gt.complete, gt.summary()
        assert gt.n_brute_link_contacts == gt.n_reported_link_contacts == s.record.contacts
        assert gt.n_brute_tri_contacts == gt.n_bvh_tri_contacts > 0
        assert gt.n_tri_tests > 0 and gt.highlights() == []
        assert gt.summary().startswith(f"frame {f}: OK")


def test_ground_truth_one_pair_and_self_collision():
    s = _session("hand-ball", 8)
    k = s.scene.pairs.index((0, 0))  # the hand against itself: adjacent links excluded
    gt = ground_truth(s, k)
    assert gt.ok and gt.pair_indices == [k]
    n = s.scene.bodies[0].body.n_links
    assert gt.n_link_pairs == n * (n - 1) // 2 - len(s.scene.bodies[0].body.adjacent_pairs())
    with pytest.raises(ValueError):
        ground_truth(s, len(s.scene.pairs))


def _contact_pair(s):
    return next(k for k, p in enumerate(s.result.pairs) if len(p.contacts))


def test_ground_truth_catches_a_dropped_contact():
    s = _session("hand-ball", 8)
    k = _contact_pair(s)
    p = s.result.pairs[k]
    hit = int(np.flatnonzero(p.hits)[0])
    dropped = tuple(p.link_pairs[hit].tolist())
    hits = p.hits.copy()
    hits[hit] = False  # sabotage: the runner "missed" this contact
    s.result.pairs[k] = dataclasses.replace(p, hits=hits)
    gt = ground_truth(s)
    assert not gt.ok
    i, j = s.scene.pairs[k]
    assert gt.missed_links == [(k, i, dropped[0], j, dropped[1])]
    assert not gt.spurious_links and not gt.missed_tris and not gt.spurious_tris
    assert (i, dropped[0], []) in gt.highlights()
    assert "missed link pairs (1)" in gt.summary()


def test_ground_truth_catches_a_spurious_contact():
    s = _session("hand-ball", 8)
    k = next(k for k, (i, j) in enumerate(s.scene.pairs) if i != j and len(s.result.pairs[k].contacts))
    i, j = s.scene.pairs[k]
    p = s.result.pairs[k]
    real = set(map(tuple, p.contacts.tolist()))
    fake = next((a, b) for a in range(s.scene.bodies[i].body.n_links)
                for b in range(s.scene.bodies[j].body.n_links) if (a, b) not in real)
    # sabotage: the runner "reports" a contact between links that do not touch
    s.result.pairs[k] = dataclasses.replace(p, link_pairs=np.vstack([p.link_pairs, np.array([fake], np.int32)]),
                                            hits=np.append(p.hits, True))
    gt = ground_truth(s)
    assert not gt.ok
    assert gt.spurious_links == [(k, i, fake[0], j, fake[1])] and not gt.missed_links


def test_ground_truth_catches_missed_triangles(monkeypatch):
    s = _session("rigid-torus", 8)
    real = insight.collide

    def lossy(*a, **kw):  # sabotage: the BVH route loses its first triangle pair
        r = real(*a, **kw)
        return dataclasses.replace(r, pairs=r.pairs[1:])

    monkeypatch.setattr(insight, "collide", lossy)
    gt = ground_truth(s)
    assert not gt.ok and len(gt.missed_tris) == 1 and not gt.spurious_tris
    _, ba, la, ta, bb, lb, tb = gt.missed_tris[0]
    assert {(ba, la), (bb, lb)} <= {(b, ln) for b, ln, _ in gt.highlights()}


def test_ground_truth_caps_the_work():
    s = _session("rigid-torus", 8)
    gt = ground_truth(s, max_pair_tests=10)
    assert gt.skipped and not gt.complete
    assert gt.ok  # nothing compared, nothing wrong
    assert "skipped: too large" in gt.summary()


def test_brute_prefilter_matches_plain_brute_force():
    rng = np.random.default_rng(7)
    a = rng.random((300, 1, 3)) + rng.random((300, 3, 3)) * 0.2
    b = rng.random((400, 1, 3)) + rng.random((400, 3, 3)) * 0.2
    found, _ = insight._brute_link_pair(a, b, 10 ** 9)
    full = all_pairs_overlap(a, b)
    assert len(full) > 50
    assert set(map(tuple, found.tolist())) == set(map(tuple, full.tolist()))


# ---- refit quality -------------------------------------------------------------------------

def test_refit_quality_deforming_sheet():
    s = _session("deform-wave", 20)
    rq = refit_quality(s)
    sheet = next(b for b in rq.bodies if s.scene.bodies[b.body].deforming)
    r = sheet.level_ratio[np.isfinite(sheet.level_ratio)]
    assert len(r) > 3 and np.all(r >= 0.99)  # a refit never beats a fresh build by much
    assert sheet.worst > 1.0 and rq.worst >= sheet.worst
    assert rq.rebuild_recommended == (rq.worst > rq.threshold) and rq.threshold == insight.REBUILD_THRESHOLD
    rigid = [b for b in rq.bodies if not s.scene.bodies[b.body].deforming]
    for b in rigid:  # never refitted: a fresh build is the same tree
        assert np.allclose(b.level_ratio[np.isfinite(b.level_ratio)], 1.0)
    s.set_deform("rebuild")
    rq2 = refit_quality(s)
    sheet2 = rq2.bodies[sheet.body]
    assert np.allclose(sheet2.level_ratio[np.isfinite(sheet2.level_ratio)], 1.0)
    assert not rq2.rebuild_recommended


def test_refit_quality_obb_is_its_own_reference():
    s = _session("hand-ball", 30)
    s.set_method("obb")
    rq = refit_quality(s)
    art = [b for b in rq.bodies if b.tree == "articulation"]
    assert art
    for b in art:
        assert np.all(b.node_ratio == 1.0)
        assert np.all(b.level_ratio == 1.0)
    # CAB shares the leaf boxes with OBB: ratio 1 at every leaf
    s.set_method("cab")
    b = next(b for b in refit_quality(s).bodies if b.tree == "articulation")
    leaves = s.scene.bodies[b.body].body.tree.nodes_i[:, 0] < 0
    assert np.allclose(b.node_ratio[leaves], 1.0)


# ---- heat ----------------------------------------------------------------------------------

def test_heat_summary_levels():
    s = _session("hand-ball")
    for f in range(1, 6):
        s.goto(f)
    levels = heat_summary(s, 0)
    tree = s.trees[0]
    assert [lv.level for lv in levels] == list(range(tree.height + 1))
    assert sum(lv.nodes for lv in levels) == tree.n_nodes
    assert all(lv.min <= lv.mean <= lv.max for lv in levels)
    assert levels[0].max > 0  # the root is tested every frame
    with pytest.raises(ValueError):
        heat_summary(s, 99)
