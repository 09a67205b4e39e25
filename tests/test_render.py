"""The pyvista layers of app/render: batched hierarchy wireframes updated in place,
colours from node states, k-DOP polytope edges, body meshes following link poses, the
axis / contact overlays and a non-blank off-screen screenshot.

Off-screen plotters only (``pyvista.Plotter(off_screen=True)``: under pytest-xvfb through
X, without a display VTK falls back to EGL). Nothing here sets pyvista or VTK globals, so
Qt window tests in the same session are unaffected."""
from dataclasses import dataclass

import numpy as np
import pytest
import pyvista as pv

from app.model import Session
from app.model.trees import LEAF_HIT, NOT_VISITED, OVERLAP, SEPARATED
from app.render import (AxisOverlay, BodyMeshLayer, ContactOverlay, HierarchyLayer, Legend,
                        kdop_polytope_edges, pair_midpoints)
from app.render.colors import STATE_COLORS, heat_colors
from app.render.hierarchy import BOX_EDGES, SPHERE_SEGMENTS, box_corners, kdop_wireframes


@pytest.fixture(scope="module")
def chains():
    s = Session()
    s.load_scene("chains-6to1", frames=40)
    s.goto(30)
    return s


@pytest.fixture(scope="module")
def torus():
    s = Session()
    s.load_scene("rigid-torus", frames=40)
    s.goto(30)
    return s


@pytest.fixture
def plotter():
    p = pv.Plotter(off_screen=True, window_size=(320, 240))
    yield p
    p.close()


def _points_address(layer):
    return layer.polydata.GetPoints().GetData().GetVoidPointer(0)


# ---- hierarchy layer --------------------------------------------------------------------
def test_boxes_twelve_lines_each_and_corners_match_world_boxes(plotter, chains):
    tree = chains.trees[0]
    nodes = tree.select("all")
    layer = HierarchyLayer(plotter, "h")
    layer.update(tree, nodes, states=chains.states[0])
    assert layer.n_cells == 12 * len(nodes) == 12 * tree.n_nodes
    assert layer.polydata.n_points == 8 * len(nodes)
    c, ax, e = tree.world_boxes(nodes)
    pts = np.asarray(layer.polydata.points).reshape(len(nodes), 8, 3)
    np.testing.assert_allclose(pts, box_corners(c, ax, e), atol=1e-4)
    # every corner is centre + sum of +-e_j * axis_j, every edge has the length of an extent
    edges = pts[:, BOX_EDGES[:, 1]] - pts[:, BOX_EDGES[:, 0]]
    np.testing.assert_allclose(np.sort(np.linalg.norm(edges, axis=2), axis=1),
                               np.sort(np.repeat(2 * e, 4, axis=1), axis=1), atol=1e-4)


def test_spheres_three_circles_each(plotter):
    s = Session()
    s.set_bv("sphere")
    s.load_scene("rigid-torus", frames=4)
    s.goto(2)
    tree = s.trees[1]
    assert tree.family == "sphere"
    nodes = tree.select("level", 6)
    layer = HierarchyLayer(plotter, "spheres")
    layer.update(tree, nodes, states=s.states[1])
    assert layer.n_cells == 3 * SPHERE_SEGMENTS * len(nodes)
    c, r = tree.world_spheres(nodes)
    pts = np.asarray(layer.polydata.points).reshape(len(nodes), 3 * SPHERE_SEGMENTS, 3)
    np.testing.assert_allclose(np.linalg.norm(pts - c[:, None, :], axis=2), np.repeat(r[:, None], pts.shape[1], 1),
                               rtol=1e-5, atol=1e-5)


def test_update_in_place_keeps_actor_polydata_and_buffer(plotter, chains):
    s = Session()
    s.load_scene("chains-6to1", frames=40)
    s.goto(10)
    tree = s.trees[0]
    layer = HierarchyLayer(plotter, "h")
    layer.update(tree, tree.select("all"), states=s.states[0])
    actor, pd, addr = layer.actor, layer.polydata, _points_address(layer)
    before = np.array(layer.polydata.points)
    s.goto(30)
    tree = s.trees[0]
    layer.update(tree, tree.select("all"), states=s.states[0])
    assert layer.actor is actor and layer.polydata is pd
    assert _points_address(layer) == addr  # same VTK point array, rewritten
    after = np.array(layer.polydata.points)
    assert np.abs(after - before).max() > 1e-3  # the chains moved
    c, ax, e = tree.world_boxes(tree.select("all"))
    np.testing.assert_allclose(after.reshape(-1, 8, 3), box_corners(c, ax, e), atol=1e-4)
    assert len(plotter.actors) == 1


def test_depth_selection_changes_cell_count(plotter, torus):
    tree = torus.trees[0]
    layer = HierarchyLayer(plotter, "h")
    counts = []
    for lo, hi in ((0, 0), (2, 4), (5, 5), (3, 6)):
        nodes = tree.select("range", lo, hi)
        layer.update(tree, nodes, states=torus.states[0])
        counts.append(layer.n_cells)
        assert layer.n_cells == 12 * len(nodes)
        assert layer.n_nodes == len(nodes)
    assert counts[0] == 12 and len(set(counts)) == 4
    actor = layer.actor
    layer.update(tree, tree.select("level", 1))
    assert layer.actor is actor  # one actor for the layer throughout
    layer.update(tree, [])
    assert layer.n_cells == 0 and not layer.actor.GetVisibility()
    layer.update(tree, tree.select("level", 2))
    assert layer.n_cells == 48 and layer.actor.GetVisibility()


def test_cell_colours_follow_states(plotter, torus):
    tree = torus.trees[1]
    states = torus.states[1]
    nodes = tree.select("all")
    assert {SEPARATED, OVERLAP, LEAF_HIT} <= set(np.unique(states).tolist())
    layer = HierarchyLayer(plotter, "h")
    layer.update(tree, nodes, states=states)
    cd = layer.polydata.cell_data
    np.testing.assert_array_equal(cd["node"], np.repeat(nodes, 12))
    np.testing.assert_array_equal(cd["state"], np.repeat(states[nodes], 12))
    np.testing.assert_array_equal(cd["rgb"], STATE_COLORS[np.repeat(states[nodes], 12)])
    assert layer.polydata.cell_data.active_scalars_name == "rgb"
    # new states, same nodes: colours rewritten in place
    flipped = np.full_like(states, NOT_VISITED)
    flipped[::2] = LEAF_HIT
    layer.update(tree, nodes, states=flipped)
    np.testing.assert_array_equal(layer.polydata.cell_data["rgb"], STATE_COLORS[np.repeat(flipped[nodes], 12)])
    assert layer.node_of_cell(12 * 7 + 3) == nodes[7]
    # heat colouring: a colormap over the counts, zero counts grey
    heat = np.arange(tree.n_nodes) % 5
    layer.update(tree, nodes, colors_by="heat", heat=heat)
    np.testing.assert_array_equal(layer.polydata.cell_data["rgb"], np.repeat(heat_colors(heat[nodes]), 12, axis=0))
    np.testing.assert_array_equal(heat_colors(np.array([0]))[0], STATE_COLORS[NOT_VISITED])
    assert len({tuple(c) for c in heat_colors(np.arange(5))}) == 5


def test_state_colours_distinct():
    assert STATE_COLORS.shape == (5, 3)
    d = np.linalg.norm(STATE_COLORS[:, None, :].astype(float) - STATE_COLORS[None, :, :], axis=2)
    assert d[~np.eye(5, dtype=bool)].min() > 60
    entries = Legend.state_entries()
    assert len(entries) == 5 and all(0 <= x <= 1 for _, c in entries for x in c)


def test_highlight_visibility_and_line_width(plotter, chains):
    tree_a, tree_b = chains.trees
    layer = HierarchyLayer(plotter, "h", faces=True)
    layer.update(tree_a, tree_a.select("level", 2), states=chains.states[0])
    assert layer.face_actor is not None and layer.face_polydata.n_cells == 6 * 4
    layer.highlight(tree_a, 1, tree_b, 2)
    hl = layer._highlight
    assert hl.polydata.n_lines == 24 and hl.actor.GetVisibility()
    assert hl.actor.GetProperty().GetLineWidth() > layer.actor.GetProperty().GetLineWidth()
    layer.set_line_width(3)
    assert layer.actor.GetProperty().GetLineWidth() == 3
    layer.set_visible(False)
    assert not layer.actor.GetVisibility() and not hl.actor.GetVisibility()
    layer.set_visible(True)
    layer.clear_highlight()
    assert not hl.actor.GetVisibility()
    layer.clear()
    assert len(plotter.actors) == 0 and layer.n_cells == 0


# ---- k-DOPs -----------------------------------------------------------------------------
N14 = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [1, 1, -1], [1, -1, 1], [-1, 1, 1]], float)
N18 = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [1, 0, 1], [0, 1, 1], [1, -1, 0], [1, 0, -1],
                [0, 1, -1]], float)


def _counts(normals, half_widths):
    h = np.asarray(half_widths, float)
    v, e = kdop_polytope_edges(normals, -h, h)
    return len(v), len(e)


@pytest.mark.parametrize("normals, half, expected", [
    (np.eye(3), [1, 1, 1], (8, 12)),                          # cube (6-DOP)
    (N14, [1, 1, 1, 2.5, 2.5, 2.5, 2.5], (24, 36)),           # truncated cube
    (N14, [1, 1, 1, 2, 2, 2, 2], (12, 24)),                   # cuboctahedron: 4 planes per vertex
    (N14, [3, 3, 3, 1, 1, 1, 1], (6, 12)),                    # octahedron: diagonal slabs only
    (N14, [2 / 3] * 3 + [1] * 4, (24, 36)),                   # truncated octahedron
    (N14, [1, 1, 1, 5, 5, 5, 5], (8, 12)),                    # loose diagonals: the cube
])
def test_kdop_polytope_counts(normals, half, expected):
    assert _counts(normals, half) == expected


def test_kdop_cube_edges_and_offset_box():
    v, e = kdop_polytope_edges(np.eye(3), [0, 1, 2], [3, 2, 5])
    assert len(v) == 8 and len(e) == 12
    np.testing.assert_allclose(np.sort(np.unique(v[:, 0])), [0, 3])
    lengths = np.sort(np.linalg.norm(v[e[:, 0]] - v[e[:, 1]], axis=1))
    np.testing.assert_allclose(lengths, [1] * 4 + [3] * 8)


@pytest.mark.parametrize("normals", [N14, N18])
def test_kdop_of_points_is_a_valid_polytope(normals, rng):
    pts = rng.normal(size=(40, 3))
    d = pts @ normals.T
    v, e = kdop_polytope_edges(normals, d.min(0), d.max(0))
    proj = v @ normals.T
    assert np.all(proj >= d.min(0) - 1e-9) and np.all(proj <= d.max(0) + 1e-9)
    # faces: planes with >= 3 vertices; Euler's formula for a convex polytope
    planes = np.concatenate([-normals, normals])
    offs = np.concatenate([-d.min(0), d.max(0)])
    on = np.abs(v @ planes.T - offs) < 1e-7
    faces = int((on.sum(axis=0) >= 3).sum())
    assert len(v) - len(e) + faces == 2
    assert np.all(np.bincount(e.ravel(), minlength=len(v)) >= 3)  # every vertex has degree >= 3


def _edge_set(points, edges):
    return sorted(tuple(sorted((tuple(np.round(points[a], 6)), tuple(np.round(points[b], 6))))) for a, b in edges)


@pytest.mark.parametrize("normals, half", [
    (np.eye(3), [1, 1, 1]), (N14, [1, 1, 1, 2.5, 2.5, 2.5, 2.5]), (N14, [1, 1, 1, 2, 2, 2, 2]),
    (N14, [3, 3, 3, 1, 1, 1, 1]), (N14, [2 / 3] * 3 + [1] * 4)])
def test_batched_kdop_wireframes_match_reference(normals, half):
    h = np.asarray(half, float)
    v, e = kdop_polytope_edges(normals, -h, h)
    pts, edges, owner = kdop_wireframes(normals, -h[None], h[None])
    assert _edge_set(v, e) == _edge_set(pts, edges) and np.all(owner == 0)


def test_batched_kdop_wireframes_many(rng):
    mins, maxs = [], []
    for _ in range(40):
        pts = rng.normal(size=(25, 3)) * rng.uniform(0.1, 3, 3) + rng.normal(size=3) * 5
        d = pts @ N18.T
        mins.append(d.min(0))
        maxs.append(d.max(0))
    pts, edges, owner = kdop_wireframes(N18, np.array(mins), np.array(maxs))
    counts = [len(kdop_polytope_edges(N18, lo, hi)[1]) for lo, hi in zip(mins, maxs)]
    np.testing.assert_array_equal(np.bincount(owner, minlength=40), counts)
    for i in (0, 17, 39):
        v, e = kdop_polytope_edges(N18, mins[i], maxs[i])
        assert _edge_set(v, e) == _edge_set(pts, edges[owner == i])


def test_layer_draws_cdcore_kdop_tree(plotter):
    from cdcore import BV_TYPES, build_bvh
    if "kdop14" not in BV_TYPES:
        pytest.skip("k-DOP hierarchies are not registered")
    from cdcore.shapes import torus
    from app.model import Tree
    bvh = build_bvh(torus(1.0, 0.25, 24, 8), "kdop14")
    pose = np.eye(4)
    pose[:3, :3] = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])
    pose[:3, 3] = (0.5, 0, 0)
    tree = Tree(0, "mesh", "kdop", bvh.nodes_f, bvh.nodes_i, bvh.depth, pose)
    layer = HierarchyLayer(plotter, "kdop")
    nodes = tree.select("level", 3)
    layer.update(tree, nodes)  # no slabs on the tree: the AABB of slabs 0..2 as boxes
    assert layer.n_cells == 12 * len(nodes)
    tree.kdop = bvh.kdop  # cdcore's KdopData: dirs, lo, hi
    layer.update(tree, nodes)
    kd = bvh.kdop
    counts = [len(kdop_polytope_edges(kd.dirs, kd.lo[n], kd.hi[n])[1]) for n in nodes]
    assert layer.n_cells == sum(counts) and layer.n_cells > 12 * len(nodes)
    # drawn points: the tree-frame polytope vertices under the pose, inside every slab
    local = (np.asarray(layer.polydata.points, dtype=np.float64) - pose[:3, 3]) @ pose[:3, :3]
    owner = np.repeat(layer.polydata.cell_data["node"], 2)
    proj = np.einsum("pj,mj->pm", local, kd.dirs)
    assert np.all(proj >= kd.lo[owner] - 1e-4) and np.all(proj <= kd.hi[owner] + 1e-4)
    layer.highlight(tree, int(nodes[0]), tree, int(nodes[1]))
    assert layer._highlight.polydata.n_lines == counts[0] + counts[1]


@dataclass
class _KdopTree:
    """A stand-in for a k-DOP tree exposing its slabs in its own frame."""
    normals: np.ndarray
    mins: np.ndarray
    maxs: np.ndarray
    pose: np.ndarray
    family: str = "kdop"

    def kdop_slabs(self, nodes):
        nodes = np.asarray(nodes)
        return self.normals, self.mins[nodes], self.maxs[nodes]


def test_kdop_layer_draws_polytopes(plotter):
    h = np.array([[1, 1, 1, 2.5, 2.5, 2.5, 2.5], [1, 1, 1, 5, 5, 5, 5]])
    pose = np.eye(4)
    pose[:3, 3] = (1, 2, 3)
    tree = _KdopTree(N14, -h, h, pose)
    layer = HierarchyLayer(plotter, "kdop")
    layer.update(tree, [0, 1], states=np.array([SEPARATED, LEAF_HIT]))
    assert layer.n_cells == 36 + 12
    np.testing.assert_array_equal(np.bincount(layer.polydata.cell_data["node"]), [36, 12])
    np.testing.assert_array_equal(layer.polydata.cell_data["state"], [SEPARATED] * 36 + [LEAF_HIT] * 12)
    np.testing.assert_allclose(np.asarray(layer.polydata.points).mean(axis=0), (1, 2, 3), atol=1e-5)
    addr = _points_address(layer)
    layer.update(tree, [0, 1], states=np.array([SEPARATED, LEAF_HIT]))
    assert _points_address(layer) == addr


# ---- body meshes ------------------------------------------------------------------------
def test_mesh_points_follow_link_poses(plotter, chains):
    sb = chains.scene.bodies[0]
    body = sb.body
    layer = BodyMeshLayer(plotter, 0, sb)
    assert layer.polydata.n_cells == len(body.faces) and body.n_links > 1
    addr = layer.polydata.GetPoints().GetData().GetVoidPointer(0)
    for frame in (5, 30):
        P = sb.link_poses[frame]
        layer.update(P)
        expected = np.concatenate([body.link_vertices(k) @ P[k, :3, :3].T + P[k, :3, 3]
                                   for k in range(body.n_links)])
        np.testing.assert_allclose(layer.polydata.points, expected, atol=1e-4)
    assert layer.polydata.GetPoints().GetData().GetVoidPointer(0) == addr
    # faces: link k's triangles offset by the vertices of the links before it
    faces = layer.polydata.regular_faces
    np.testing.assert_array_equal(faces[layer.face_off[3]:layer.face_off[4]],
                                  body.links[3].mesh.faces + layer.vert_off[3])


def test_mesh_deforming_vertices_and_highlight(plotter):
    s = Session()
    s.load_scene("deform-wave", frames=8)
    s.goto(5)
    k = next(i for i, b in enumerate(s.scene.bodies) if b.deforming)
    sb = s.scene.bodies[k]
    layer = BodyMeshLayer(plotter, k, sb)
    P = sb.link_poses[5]
    layer.update(P)  # the body's current (deformed) vertices
    cur = sb.vertices(5)
    # (the sheet is drawn through its proxy: the exact points are written when asked for)
    np.testing.assert_allclose(layer.world_points(), cur @ P[0, :3, :3].T + P[0, :3, 3], atol=1e-4)
    assert np.abs(cur - sb.base_vertices).max() > 1e-3
    layer.update(P, vertices=sb.base_vertices)
    np.testing.assert_allclose(layer.world_points(), sb.base_vertices @ P[0, :3, :3].T + P[0, :3, 3], atol=1e-4)
    base = np.array(layer.polydata.cell_data["rgb"][0])
    layer.highlight_triangles(0, [3, 7, 11])
    rgb = layer.polydata.cell_data["rgb"]
    assert (rgb[[3, 7, 11]] != base).any(axis=1).all() and (rgb[[0, 1, 2]] == base).all()
    layer.clear_highlight()
    assert (layer.polydata.cell_data["rgb"] == base).all()
    layer.set_opacity(0.3)
    assert layer.actor.GetProperty().GetOpacity() == pytest.approx(0.3)
    layer.set_visible(False)
    assert not layer.actor.GetVisibility()


# ---- overlays and the picture ----------------------------------------------------------------
def test_axis_overlay_draws_the_projected_intervals(plotter, torus):
    st = torus.stepper()
    step = None
    while not st.at_end:
        step = st.next()
        if step.axis_dir is not None:
            break
    assert step is not None and step.axis_dir is not None
    ov = AxisOverlay(plotter)
    assert ov.show(step, st.t.tree_a, st.t.tree_b)
    g = ov.geometry
    u, o = g["axis"], g["offset"]
    proj = g["ends"] @ u
    np.testing.assert_allclose(proj, [*step.interval_a, *step.interval_b], atol=1e-9)
    assert abs(o @ u) < 1e-9
    # the interval line is clear of both nodes in the offset direction
    w = o / np.linalg.norm(o)
    assert step.interval_a[1] <= step.interval_b[0] or step.interval_b[1] <= step.interval_a[0]
    for tree, node in ((st.t.tree_a, step.node_a), (st.t.tree_b, step.node_b)):
        assert (g["ends"] @ w).min() > tree.interval(node, w)[1]
    assert ov.visible
    ov.hide()
    assert not ov.visible
    first = st.goto(0)  # the root pair overlapped: no axis to show
    assert first.axis_dir is None
    assert not ov.show(first, st.t.tree_a, st.t.tree_b) and not ov.visible


def test_contact_overlay_in_place(plotter, torus):
    ov = ContactOverlay(plotter)
    ov.show(np.zeros((3, 3)))
    pd, addr = ov.polydata, ov.polydata.GetPoints().GetData().GetVoidPointer(0)
    ov.show(np.ones((3, 3)))
    assert ov.polydata is pd and ov.polydata.GetPoints().GetData().GetVoidPointer(0) == addr
    np.testing.assert_allclose(ov.polydata.points, 1.0)
    ov.show(np.ones((5, 3)))
    assert ov.polydata.n_points == 5 and len(plotter.actors) == 1
    va = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]])
    mid = pair_midpoints(va, np.array([[0, 1, 2]]), va + 2, np.array([[0, 1, 2]]), [[0, 0]])
    np.testing.assert_allclose(mid, [[4 / 3, 4 / 3, 1.0]])


def test_screenshot_not_blank(chains):
    p = pv.Plotter(off_screen=True, window_size=(320, 240))
    try:
        p.set_background("white")
        for i, (tree, states) in enumerate(zip(chains.trees, chains.states)):
            HierarchyLayer(p, f"h{i}", line_width=2).update(tree, tree.select("all"), states=states)
            BodyMeshLayer(p, i, chains.scene.bodies[i]).update(chains.scene.bodies[i].link_poses[30])
        Legend.add_to(p)
        p.reset_camera()
        img = p.screenshot(return_img=True)
        assert img.shape[:2] == (240, 320)
        assert img.std() > 5
        # some pixels carry the state colours of the visited nodes (orange: overlapping)
        orange = np.all(np.abs(img[..., :3].astype(int) - STATE_COLORS[OVERLAP]) < 40, axis=-1)
        assert orange.sum() > 20
    finally:
        p.close()


def test_rigid_single_link_mesh_is_posed_by_its_actor_matrix(plotter):
    """A rigid one-link body keeps its points in the link frame (nothing re-sent to the GL per
    frame); the actor's matrix is the pose, so the drawn vertices are the posed mesh. Passing
    vertices (a deformed shape) writes world points and resets the matrix, and back."""
    s = Session()
    s.load_scene("rigid-torus", frames=40)
    sb = s.scene.bodies[1]
    assert sb.body.n_links == 1 and not sb.deforming
    layer = BodyMeshLayer(plotter, 1, sb)
    assert layer.rigid
    v0 = np.asarray(sb.body.links[0].mesh.vertices, dtype=np.float64)
    addr = layer.polydata.GetPoints().GetData().GetVoidPointer(0)
    mtime = layer.polydata.GetPoints().GetMTime()
    for frame in (3, 29):
        P = sb.link_poses[frame][0]
        layer.update(sb.link_poses[frame])
        np.testing.assert_allclose(layer.polydata.points, v0, atol=1e-5)  # untouched, link frame
        np.testing.assert_allclose(layer.world_points(), v0 @ P[:3, :3].T + P[:3, 3], atol=1e-4)
        M = layer.actor.GetMatrix()
        np.testing.assert_allclose([[M.GetElement(r, c) for c in range(4)] for r in range(4)], P, atol=1e-12)
    assert layer.polydata.GetPoints().GetMTime() == mtime
    assert layer.polydata.GetPoints().GetData().GetVoidPointer(0) == addr
    P = sb.link_poses[7][0]
    shape = v0 * 1.5
    layer.update(sb.link_poses[7], vertices=shape)
    np.testing.assert_allclose(layer.polydata.points, shape @ P[:3, :3].T + P[:3, 3], atol=1e-4)
    np.testing.assert_allclose(layer.world_points(), shape @ P[:3, :3].T + P[:3, 3], atol=1e-4)
    layer.update(sb.link_poses[7])
    np.testing.assert_allclose(layer.world_points(), v0 @ P[:3, :3].T + P[:3, 3], atol=1e-4)


def test_contacts_cross_matches_numpy():
    from app.render.contacts import _cross, _perpendiculars
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    np.testing.assert_allclose(_cross(a, b), np.cross(a, b), atol=1e-12)
    x = a / np.linalg.norm(a, axis=1)[:, None]
    y, z = _perpendiculars(x)
    np.testing.assert_allclose(np.einsum("ij,ij->i", x, y), 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1, atol=1e-12)
    np.testing.assert_allclose(z, np.cross(x, y), atol=1e-12)


def test_large_rigid_mesh_drawn_through_a_display_proxy(plotter):
    """A rigid one-link mesh above PROXY_ABOVE triangles is drawn decimated (same bounds), the
    exact mesh while triangles are highlighted; smaller meshes are drawn as they are."""
    from app.render.meshes import PROXY_ABOVE, PROXY_TRIANGLES
    s = Session()
    s.load_scene("rigid-torus-20k", frames=10)
    sb = s.scene.bodies[0]
    layer = BodyMeshLayer(plotter, 0, sb)
    assert layer.n_triangles > PROXY_ABOVE and layer.proxy is not None
    assert layer.actor.GetMapper().GetInput().GetNumberOfCells() == layer.proxy.n_cells
    assert layer.drawn_triangles <= 1.05 * PROXY_TRIANGLES < layer.n_triangles
    np.testing.assert_allclose(layer.proxy.bounds, layer.polydata.bounds, atol=1e-3)
    layer.highlight_triangles(0, [1, 2, 3])
    assert layer.drawn_triangles == layer.n_triangles
    assert layer.actor.GetMapper().GetInput().GetNumberOfCells() == layer.n_triangles
    layer.clear_highlight()
    assert layer.drawn_triangles == layer.proxy.n_cells
    # other vertices given for the rigid mesh (its proxy cannot take them): the exact mesh is
    # drawn, posed in world coordinates, until the mesh is posed by its matrix again
    P = sb.link_poses[3][0]
    bigger = layer._v0 * 1.1
    layer.update(sb.link_poses[3], vertices=bigger)
    assert layer.drawn_triangles == layer.n_triangles
    np.testing.assert_allclose(layer.world_points(), bigger @ P[:3, :3].T + P[:3, 3], atol=1e-4)
    layer.update(sb.link_poses[3])
    assert layer.drawn_triangles == layer.proxy.n_cells
    np.testing.assert_allclose(layer.world_points(), layer._v0 @ P[:3, :3].T + P[:3, 3], atol=1e-4)
    s2 = Session()
    s2.load_scene("rigid-torus", frames=5)
    small = BodyMeshLayer(plotter, 0, s2.scene.bodies[0])
    assert small.n_triangles <= PROXY_ABOVE and small.proxy is None and small.drawn_triangles == small.n_triangles


# ---- no Python algorithm between a layer's PolyData and its mapper -------------------------
def _mapper_feeds(actor, polydata) -> bool:
    """The actor's mapper reads ``polydata`` through a trivial producer (no pyvista
    ``ActiveScalarsAlgorithm``: a Python ``vtkAlgorithm`` re-run by every render's
    bounds request after each in-place update)."""
    mapper = actor.GetMapper()
    alg = mapper.GetInputAlgorithm()
    return alg is not None and alg.GetClassName() == "vtkTrivialProducer" and \
        mapper.GetInput().GetAddressAsString("vtkObject") == polydata.GetAddressAsString("vtkObject")


def test_hierarchy_and_highlight_actors_read_their_polydata_directly(plotter, chains):
    tree = chains.trees[0]
    layer = HierarchyLayer(plotter, "h", faces=True)
    layer.update(tree, tree.select("all"), states=chains.states[0])
    layer.highlight(tree, 0, tree, 1)
    assert _mapper_feeds(layer.actor, layer.polydata)
    assert _mapper_feeds(layer.face_actor, layer.face_polydata)
    hl = layer._highlight
    assert _mapper_feeds(hl.actor, hl.polydata) and _mapper_feeds(hl.fill_actor, hl.fill_polydata)
    # an in-place update then a render: no Python algorithm executes (a vtkPythonAlgorithm
    # anywhere upstream would show as a second data object between PolyData and mapper)
    plotter.render()
    before = layer.actor.GetMapper().GetInput().GetMTime()
    layer.update(tree, tree.select("leaves"), states=chains.states[0])
    plotter.render()
    assert _mapper_feeds(layer.actor, layer.polydata)
    assert layer.actor.GetMapper().GetInput().GetMTime() > before
    # what is drawn: the cells' own rgb array, as the colours of the nodes' states
    img = plotter.screenshot(return_img=True)
    assert img.reshape(-1, 3).std(axis=0).max() > 0


def _scene_view(plotter, scene: str, frames: int):
    """A ``SceneView`` with ``scene`` loaded in a fresh ``Session`` (the module, the session, the view)."""
    import app.render.scene_view as sv
    s = Session()
    s.load_scene(scene, frames=frames)
    view = sv.SceneView(plotter)
    view.set_scene(s.scene)
    return sv, s, view


def test_auto_depth_is_recomputed_only_when_a_tree_changes(plotter, monkeypatch):
    """The "auto" depth reads only the trees' depth arrays (the engine's own, the same from
    frame to frame): computed once per topology, and equal to ``readable_selection``."""
    from app.model.trees import Tree, readable_selection
    sv, s, view = _scene_view(plotter, "hand-ball", 12)
    calls = []
    real = sv.readable_selection
    monkeypatch.setattr(sv, "readable_selection", lambda trees: calls.append(1) or real(trees))
    for f in range(6):
        s.goto(f)
        view.draw(s.view)
        assert view.resolved_depth == readable_selection(s.view.trees)
    assert len(calls) == 1
    # a tree of another topology (new depth arrays, e.g. a rebuild): computed again
    t0 = s.view.trees[0]
    deeper = Tree(t0.body, t0.level, t0.family, t0.nodes_f, t0.nodes_i, t0.depth + 1, t0.pose)
    trees = (deeper,) + tuple(s.view.trees[1:])
    assert view._auto_selection(trees) == readable_selection(trees)
    assert len(calls) == 2


def test_drawn_nodes_are_selected_again_only_when_a_tree_or_the_depth_changes(plotter, monkeypatch):
    """The nodes drawn per tree are ``Tree.select`` of the resolved depth, made once per
    topology and depth (deform-wave's sheet: the cut of 40,000 nodes every frame cost ~35 us)."""
    from app.model.trees import Tree
    sv, s, view = _scene_view(plotter, "deform-wave", 8)
    calls = []
    real = Tree.select
    monkeypatch.setattr(Tree, "select", lambda self, *a: calls.append(a) or real(self, *a))
    for f in range(5):
        s.goto(f)
        view.draw(s.view)
        drawn = sum(len(real(t, *view.resolved_depth)) for t in s.view.trees)
        assert view.nodes_drawn == drawn
    assert len(calls) == len(s.view.trees)  # once per tree
    view.draw(s.view, sv.DrawOptions(depth=("level", 3, 3)))  # another depth: selected again
    assert len(calls) == 2 * len(s.view.trees)
    assert view.nodes_drawn == sum(len(real(t, "level", 3, 3)) for t in s.view.trees)
    t0 = s.view.trees[0]  # a tree of another topology (new arrays: a rebuild)
    other = Tree(t0.body, t0.level, t0.family, t0.nodes_f, t0.nodes_i.copy(), t0.depth.copy(), t0.pose)
    assert list(view._select(0, other, ("level", 3, 3))) == list(real(other, "level", 3, 3))
    assert len(calls) == 2 * len(s.view.trees) + 1
