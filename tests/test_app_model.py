"""The Qt-free model: sessions, recording, stepping, memory (no display needed)."""
import csv
import json
import os
import tracemalloc

import numpy as np
import pytest

from app.model import COLUMNS, Session
from app.model.trees import LEAF_HIT, NOT_VISITED, OVERLAP
from cdcore.collide import Outcome


@pytest.fixture
def session():
    s = Session()
    s.load_scene("chains-6to1", frames=120)
    return s


def test_every_scene_loads_and_computes_frames():
    s = Session()
    for name in s.scene_names():
        s.load_scene(name, frames=8)
        for f in range(8):
            rec = s.goto(f)
            assert rec.frame == f and rec.t_total >= 0
        assert len(s.trees) == len(s.scene.bodies)
        assert all(len(st) == t.n_nodes for st, t in zip(s.states, s.trees))
        assert len(s.traversals) == len(s.scene.pairs)


def test_stepper_walks_to_the_end_and_counts_bv_tests(session):
    session.goto(100)
    st = session.stepper()
    assert st.count == session.traversals[0].bv_tests == len(st.t.trace) > 1
    n = 0
    while not st.at_end:
        step = st.next()
        n += 1
        assert step.index == n - 1
        if step.outcome == Outcome.SEPARATED:
            assert step.axis >= 0 and step.axis_dir is not None
            (a0, a1), (b0, b1) = step.interval_a, step.interval_b
            assert a1 < b0 or b1 < a0  # the drawn projections really are disjoint
    assert n == st.count
    assert st.current().stack == []  # everything popped at the end
    assert st.prev().index == st.count - 2


def test_stepper_drills_into_an_exact_query():
    session = Session()
    session.load_scene("hand-ball", frames=80)
    for f in range(80):
        session.goto(f)
        r = session.result.pairs[0]
        if r.n_exact:
            break
    assert r.n_exact
    li, lj = r.link_pairs[0]
    st = session.stepper(drill=(int(li), int(lj)))
    assert st.t.tree_a.level == "mesh" and st.count >= 1
    hit = st.run_to_next_hit()
    assert (hit.outcome == Outcome.LEAF_HIT) == bool(r.hits[0])


def test_states_colour_visited_nodes(session):
    session.goto(100)
    a = session.states[0]
    assert a[0] >= OVERLAP  # the root pair is always tested and overlaps when anything is close
    assert (a == NOT_VISITED).any() or (a > NOT_VISITED).all()
    if session.result.contacts:
        assert (a == LEAF_HIT).any()


def test_settings_change_what_is_computed(session):
    session.goto(90)
    cab = session.record.n_exact
    session.set_method("aabb_star")
    assert session.trees[0].family == "aabb"
    assert session.record.n_exact >= cab
    session.set_test("sat6")
    assert session.test == "sat6"
    with pytest.raises(ValueError):
        session.set_test("nonsense")
    with pytest.raises(ValueError):
        session.set_method("nonsense")
    session.set_bv("aabb")
    assert session.scene.bodies[0].body.bvhs[0].bv == "aabb"


def test_recording_writes_header_rows_and_sidecar(session, tmp_path):
    path = tmp_path / "rec.csv"
    session.start_recording(str(path))
    for f in range(25):
        session.goto(f)
    # rows are on disk before recording stops (a killed app leaves a valid CSV)
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == COLUMNS and len(rows) == 26
    sidecar = session.stop_recording()
    meta = json.loads(open(sidecar).read())
    assert meta["rows"] == 25 and meta["settings"]["scene"] == "chains-6to1" and "numpy" in meta["versions"]
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["frame"]) for r in rows] == list(range(25))
    assert all(float(r["t_total_us"]) >= 0 for r in rows)


def test_recording_to_a_bad_path_raises_oserror(session, tmp_path):
    with pytest.raises(OSError, match="cannot record"):
        session.start_recording(str(tmp_path / "missing-dir" / "x.csv"))


def test_bad_mesh_files_raise_readable_errors(tmp_path):
    s = Session()
    bad = tmp_path / "broken.stl"
    bad.write_bytes(b"\x00\x01garbage" * 10)
    with pytest.raises(ValueError, match="broken.stl"):
        s.load_meshes([str(bad)])
    with pytest.raises(FileNotFoundError):
        s.load_meshes([str(tmp_path / "none.obj")])
    with pytest.raises(ValueError):
        s.load_meshes([])


def test_user_meshes_make_a_rigid_scene(tmp_path):
    import trimesh
    p = tmp_path / "box.stl"
    trimesh.creation.box(extents=(1, 2, 3)).export(p)
    s = Session()
    s.load_meshes([str(p)], frames=20)
    assert s.scene.kind == "rigid" and len(s.scene.bodies) == 2
    hits = sum(s.goto(f).contacts > 0 for f in range(20))
    assert 0 < hits < 20


def test_thousand_frames_without_memory_growth():
    s = Session()
    s.load_scene("chains-6to1", frames=1000)
    for f in range(700):  # fill the bounded histories first
        s.goto(f)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for f in range(1000):
        s.goto(f % 1000)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    growth = sum(st.size_diff for st in after.compare_to(before, "filename"))
    assert growth < 2_000_000, f"memory grew by {growth} bytes over 1000 frames"
    assert len(s.history) == 600


def test_model_layer_does_not_import_qt():
    import subprocess
    import sys
    code = ("import sys, app.model; s = app.model.Session(); s.load_scene('rigid-torus', frames=3); s.goto(2);"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'PyQt5', 'PyQt6', 'pyvista', "
            "'pyvistaqt', 'vtk', 'pyqtgraph')]; print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=os.path.dirname(
        os.path.dirname(__file__)))
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("realign", ["table", "table_angle", "all", "major"])
def test_kdop_scenes_step_and_show_realigned_intervals(realign):
    s = Session()
    s.bv = "kdop18"
    s.realign = realign
    s.load_scene("rigid-torus", frames=30)
    seps = 0
    for f in range(30):
        s.goto(f)
        st = s.stepper()
        assert st.count == s.traversals[0].bv_tests
        while not st.at_end:
            step = st.next()
            if step.outcome == Outcome.SEPARATED:
                (a0, a1), (b0, b1) = step.interval_a, step.interval_b
                assert a1 < b0 or b1 < a0, (f, step.index)  # A's slab vs B's realigned interval
                seps += 1
        if seps > 50:
            break
    assert seps > 0
    assert s.trees[0].family == "kdop" and s.trees[0].kdop is not None


@pytest.mark.parametrize("scene,frame", [("proximity-point", 250), ("chains-6to1", 100), ("hand-ball", 10)])
def test_min_distance_matches_brute_force_over_link_pairs(scene, frame):
    from cdcore.distance import distance
    from app.model.proximity import min_distance
    s = Session()
    s.load_scene(scene, frames=frame + 1)
    s.goto(frame)
    rep = min_distance(s)
    i, j = s.scene.pairs[s.selected_pair]
    A, B = s.scene.bodies[i], s.scene.bodies[j]
    Pa, Pb = A.link_poses[frame], B.link_poses[frame]
    brute = min(distance(A.body.bvhs[la], Pa[la], B.body.bvhs[lb], Pb[lb]).distance
                for la in range(A.body.n_links) for lb in range(B.body.n_links))
    assert rep.distance == pytest.approx(brute, rel=1e-12, abs=1e-15)
    assert np.linalg.norm(rep.points[0] - rep.points[1]) == pytest.approx(rep.distance, rel=1e-9, abs=1e-12)
    assert rep.queries <= A.body.n_links * B.body.n_links


@pytest.mark.parametrize("scene", ["rigid-torus", "hand-ball"])
def test_heat_counts_the_node_tests_of_the_last_frames(scene):
    """``Session.heat`` (counted on demand from the frames' traces) equals node-test counts
    accumulated frame by frame with np.add.at over the traces the frames tested: the
    pair traversals (single-link sides) and, for a robot, the body-level traces."""
    from cdcore.articulated import collide_bodies

    s = Session()
    s.load_scene(scene)
    s.set_heat_frames(3)
    per_frame = []
    for f in range(5, 10):
        s.goto(f)
        counts = [np.zeros(t.n_nodes, np.int64) for t in s.trees]
        for k, (i, j) in enumerate(s.scene.pairs):
            bi, bj = s.scene.bodies[i].body, s.scene.bodies[j].body
            if bi.n_links == 1 and bj.n_links == 1:
                tr = s.traversals[k].trace
                np.add.at(counts[i], tr.node_a, 1)
                np.add.at(counts[j], tr.node_b, 1)
                continue
            r = collide_bodies(s.runner.hierarchies[i], s.runner.hierarchies[j], s.runner.test, trace=True,
                               exact_test=s.exact_test, realign=s.kdop_realign)
            if bi.n_links > 1:
                np.add.at(counts[i], r.trace.node_a, 1)
            if bj.n_links > 1:
                np.add.at(counts[j], r.trace.node_b, 1)
            for li, lj in r.link_pairs.tolist():
                if bi.n_links == 1 or bj.n_links == 1:
                    t = s.link_traversal(i, li, j, lj)
                    if bi.n_links == 1:
                        np.add.at(counts[i], t.trace.node_a, 1)
                    if bj.n_links == 1:
                        np.add.at(counts[j], t.trace.node_b, 1)
        per_frame.append(counts)
    ref = [sum(c[b] for c in per_frame[-3:]) for b in range(len(s.trees))]
    assert any(r.sum() for r in ref)
    for b in range(len(s.trees)):
        got = s.heat(b)
        assert got.dtype == np.int32 and got.shape == (s.trees[b].n_nodes,)
        np.testing.assert_array_equal(got, ref[b])
