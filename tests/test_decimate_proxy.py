"""The display proxy of a deforming mesh (``app.render.decimate.cluster_proxy``): vertex
clustering onto the mesh's own vertices, compared with a plain-loop reference on random and
degenerate meshes; the layer's proxy follows the deformation frame by frame."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.render.decimate import cluster_proxy


def _reference(v, f, target):
    """The same clustering with Python loops (dicts for the cells, explicit nearest search)."""
    n = len(v)
    if n == 0 or len(f) == 0 or target >= n:
        return list(range(n)), [tuple(x) for x in f]
    e = [np.linalg.norm(v[f[i, (k + 1) % 3]] - v[f[i, k]]) for i in range(len(f)) for k in range(3)]
    e = [x for x in e if np.isfinite(x)]
    edge = float(np.mean(e)) if e else 0.0
    span = float(np.ptp(v, axis=0).max())
    if not edge > 0 or not span > 0:
        return list(range(n)), [tuple(x) for x in f]
    h = edge * np.sqrt(n / max(target, 1))
    lo = v.min(axis=0)
    cells = {}
    for i in range(n):
        cells.setdefault(tuple(np.floor((v[i] - lo) / h).astype(np.int64)), []).append(i)
    keys = sorted(cells)  # the same order as the flattened grid key (row-major i, j, k)
    cell_of = {}
    rep = []
    for c, key in enumerate(keys):
        members = cells[key]
        centroid = v[members].mean(axis=0)
        best = min(members, key=lambda i: (((v[i] - centroid) ** 2).sum(), i))
        rep.append(best)
        for i in members:
            cell_of[i] = c
    out, seen = [], set()
    for a, b, c in f:
        t = (cell_of[a], cell_of[b], cell_of[c])
        if len(set(t)) < 3 or tuple(sorted(t)) in seen:
            continue
        seen.add(tuple(sorted(t)))
        out.append(t)
    return rep, out


def _grid(nx, ny, jitter, rng):
    x, y = np.meshgrid(np.linspace(0, 1, nx), np.linspace(0, 1, ny), indexing="ij")
    v = np.stack([x.ravel(), y.ravel(), np.zeros(nx * ny)], axis=1) + rng.normal(scale=jitter, size=(nx * ny, 3))
    idx = np.arange(nx * ny).reshape(nx, ny)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    f = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return v, f


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 14), st.integers(2, 14), st.floats(0, 0.05), st.integers(1, 200), st.integers(0, 2**31))
def test_cluster_proxy_equals_the_loop_reference(nx, ny, jitter, target, seed):
    rng = np.random.default_rng(seed)
    v, f = _grid(nx, ny, jitter, rng)
    if seed % 3 == 0:  # degenerate triangles and repeated vertices are valid input
        f = np.concatenate([f, np.stack([f[:, 0], f[:, 0], f[:, 1]], 1)])
        v[1] = v[0]
    rep, pf = cluster_proxy(v, f, target)
    ref_rep, ref_pf = _reference(v, f, target)
    assert rep.tolist() == list(ref_rep)
    assert [tuple(x) for x in pf.tolist()] == [tuple(x) for x in ref_pf]
    assert len(set(rep.tolist())) == len(rep) and (pf >= 0).all() and (pf < len(rep)).all()


def test_cluster_proxy_of_a_sheet_keeps_about_the_target_and_its_bounds():
    rng = np.random.default_rng(0)
    v, f = _grid(101, 101, 0.0, rng)  # 20,000 triangles, as deform-wave's sheet
    rep, pf = cluster_proxy(v, f, 2500)
    assert 1500 <= len(rep) <= 4000 and 3000 <= len(pf) <= 8000
    np.testing.assert_allclose(v[rep].min(axis=0), v.min(axis=0), atol=0.02)
    np.testing.assert_allclose(v[rep].max(axis=0), v.max(axis=0), atol=0.02)


@pytest.mark.parametrize("case", ["empty", "one point", "flat", "nan"])
def test_cluster_proxy_degenerate_inputs_return_the_mesh(case):
    v = {"empty": np.zeros((0, 3)), "one point": np.zeros((3, 3)), "flat": np.zeros((4, 3)),
         "nan": np.full((4, 3), np.nan)}[case]
    f = np.zeros((0, 3), np.int64) if case == "empty" else np.array([[0, 1, 2]])
    rep, pf = cluster_proxy(v, f, 1)
    assert rep.tolist() == list(range(len(v))) and pf.tolist() == f.tolist()


@pytest.mark.gui
def test_a_deforming_sheet_is_drawn_through_a_proxy_that_follows_it():
    """deform-wave's 20,000-triangle sheet: drawn with ~5,000 triangles whose vertices are the
    sheet's own at every frame; the exact sheet while triangles are highlighted."""
    import pyvista as pv

    from app.model import Session
    from app.render.meshes import BodyMeshLayer, FOLLOW_TRIANGLES, PROXY_ABOVE
    s = Session()
    s.load_scene("deform-wave", frames=12)
    sb = s.scene.bodies[0]
    p = pv.Plotter(off_screen=True, window_size=(320, 240))
    try:
        layer = BodyMeshLayer(p, 0, sb)
        assert layer.n_triangles > PROXY_ABOVE and layer.proxy is not None
        assert layer.drawn_triangles <= 1.6 * FOLLOW_TRIANGLES < layer.n_triangles
        rep = layer._follow[0]
        drawn = []
        for frame in (3, 9):
            s.goto(frame)
            layer.update(sb.link_poses[frame])
            P = sb.link_poses[frame][0]
            v = np.asarray(sb.body.vertices)
            np.testing.assert_allclose(layer.proxy.points, v[rep] @ P[:3, :3].T + P[:3, 3], atol=1e-5)
            # the exact mesh (written when needed: here, by world_points) has the same vertices
            np.testing.assert_allclose(layer.world_points(), v @ P[:3, :3].T + P[:3, 3], atol=1e-5)
            np.testing.assert_array_equal(np.asarray(layer.polydata.points)[rep], layer.proxy.points)
            drawn.append(np.array(layer.proxy.points))
        assert np.abs(drawn[1] - drawn[0]).max() > 1e-3  # the wave moved, and the proxy with it
        s.goto(11)
        layer.update(sb.link_poses[11])
        layer.highlight_triangles(0, [5])  # the exact mesh is drawn, at this frame's shape
        assert layer.drawn_triangles == layer.n_triangles
        P = sb.link_poses[11][0]
        np.testing.assert_allclose(layer.polydata.points, np.asarray(sb.body.vertices) @ P[:3, :3].T + P[:3, 3],
                                   atol=1e-5)
        layer.clear_highlight()
        assert layer.drawn_triangles == layer.proxy.n_cells
    finally:
        p.close()
