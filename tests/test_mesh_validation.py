"""cdcore.Mesh / cdcore.load_mesh input validation: bad input raises ValueError or
TypeError with a message that names the problem; good input is normalised."""
import os

import numpy as np
import pytest

import cdcore
from cdcore import Mesh, load_mesh

from meshgen import cube, torus

V = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
F = np.array([[0, 1, 2], [0, 1, 3]], dtype=np.int32)


def _with(arr, index, value):
    out = np.array(arr, dtype=np.float64)
    out[index] = value
    return out


# --------------------------------------------------------------------------------------
# Mesh(vertices, faces): rejected input
# --------------------------------------------------------------------------------------
BAD = [
    # id, vertices, faces, exception type, regex the message must match
    ("empty vertices", np.zeros((0, 3)), F, ValueError, r"vertices.*no vertices"),
    ("empty faces", V, np.zeros((0, 3), dtype=np.int64), ValueError, r"faces.*no triangles"),
    ("nan vertex", _with(V, (2, 1), np.nan), F, ValueError, r"vertices.*NaN or infinite.*row 2"),
    ("inf vertex", _with(V, (1, 0), np.inf), F, ValueError, r"vertices.*NaN or infinite.*row 1"),
    ("-inf vertex", _with(V, (3, 2), -np.inf), F, ValueError, r"vertices.*NaN or infinite.*row 3"),
    ("negative index", V, np.array([[0, 1, 2], [0, -1, 3]]), ValueError, r"faces.*negative.*-1.*row 1"),
    ("index == n", V, np.array([[0, 1, 4]]), ValueError, r"faces.*index 4 out of range for 4 vertices"),
    ("index >> n", V, np.array([[0, 1, 2], [2**40, 1, 2]]), ValueError, r"faces.*out of range"),
    ("vertices (n, 2)", V[:, :2], F, ValueError, r"vertices.*shape \(n, 3\).*\(4, 2\)"),
    ("vertices (n, 4)", np.hstack([V, V[:, :1]]), F, ValueError, r"vertices.*shape.*\(4, 4\)"),
    ("vertices (n, 3, 1)", V[:, :, None], F, ValueError, r"vertices.*shape.*\(4, 3, 1\)"),
    ("vertices 1-D", V.ravel(), F, ValueError, r"vertices.*shape.*\(12,\)"),
    ("vertices scalar", np.float64(1.0), F, ValueError, r"vertices.*shape.*\(\)"),
    ("faces (m, 2)", V, F[:, :2], ValueError, r"faces.*shape.*\(2, 2\)"),
    ("faces (m, 4)", V, np.array([[0, 1, 2, 3]]), ValueError, r"faces.*shape.*\(1, 4\)"),
    ("faces (m, 3, 1)", V, F[:, :, None], ValueError, r"faces.*shape.*\(2, 3, 1\)"),
    ("faces 1-D", V, F.ravel(), ValueError, r"faces.*shape.*\(6,\)"),
    ("bool vertices", V.astype(bool), F, TypeError, r"vertices.*bool"),
    ("complex vertices", V.astype(complex), F, TypeError, r"vertices.*complex"),
    ("object vertices", V.astype(object), F, TypeError, r"vertices.*(object|Python objects)"),
    ("string vertices", V.astype(str), F, TypeError, r"vertices.*dtype <U"),
    ("string list vertices", [["0", "0", "0"], ["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]], F,
     TypeError, r"vertices.*dtype <U"),
    ("bytes vertices", V.astype("S8"), F, TypeError, r"vertices.*dtype \|S8"),
    ("None vertices", None, F, TypeError, r"vertices"),
    ("float faces (integral)", V, F.astype(np.float64), TypeError, r"faces.*integer.*float64.*astype"),
    ("float faces (fractional)", V, F + 0.5, TypeError, r"faces.*integer.*float64"),
    ("float faces (nan)", V, np.array([[0.0, 1.0, np.nan]]), TypeError, r"faces.*integer"),
    ("bool faces", V, F.astype(bool), TypeError, r"faces.*integer.*bool"),
    ("complex faces", V, F.astype(complex), TypeError, r"faces.*integer.*complex"),
    ("string faces", V, F.astype(str), TypeError, r"faces.*integer.*<U"),
    ("object faces", V, F.astype(object), TypeError, r"faces.*integer.*object"),
]


@pytest.mark.parametrize("vertices,faces,exc,match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_mesh_input_raises_with_named_problem(vertices, faces, exc, match):
    with pytest.raises(exc, match=match):
        Mesh(vertices, faces)


@pytest.mark.parametrize("which", ["vertices", "faces"])
def test_ragged_lists_are_rejected_with_a_clear_message(which):
    ragged_v = [[0.0, 0.0, 0.0], [1.0, 0.0], [0.0, 1.0, 0.0]]
    ragged_f = [[0, 1, 2], [0, 1]]
    args = (ragged_v, [[0, 1, 2]]) if which == "vertices" else (V, ragged_f)
    with pytest.raises((TypeError, ValueError), match=rf"{which}.*(ragged|inhomogeneous|cannot be read)"):
        Mesh(*args)


def test_ragged_object_array_is_a_type_error():
    arr = np.empty(3, dtype=object)
    arr[:] = [[0.0, 0.0, 0.0], [1.0, 0.0], [0.0, 1.0, 0.0]]
    with pytest.raises(TypeError, match=r"vertices.*(ragged|objects)"):
        Mesh(arr, [[0, 1, 2]])


def test_empty_vertex_list_is_rejected():
    with pytest.raises(ValueError, match=r"vertices"):
        Mesh([], F)


def test_empty_face_list_reports_no_triangles():
    with pytest.raises(ValueError, match=r"faces.*no triangles"):
        Mesh(V, [])


def test_nan_and_inf_are_counted_in_message():
    v = V.copy()
    v[0, 0] = np.nan
    v[3, 1] = np.inf
    v[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"2 vertices are NaN or infinite \(first at row 0"):
        Mesh(v, F)


def test_negative_index_checked_before_range():
    # both problems present: the message names the first one checked, never crashes
    with pytest.raises(ValueError, match=r"faces: (negative|vertex index)"):
        Mesh(V, np.array([[-3, 1, 99]]))


def test_errors_are_not_bare_numpy_errors():
    """Messages start with the argument name, so the user knows which input is wrong."""
    for _, v, f, exc, _ in BAD:
        with pytest.raises(exc) as info:
            Mesh(v, f)
        assert str(info.value).split(":")[0] in ("vertices", "faces"), str(info.value)


# --------------------------------------------------------------------------------------
# Mesh(vertices, faces): accepted input is converted
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("vdtype", [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint16])
@pytest.mark.parametrize("fdtype", [np.int32, np.int64, np.uint32, np.int16, np.uint8, np.uint64])
def test_dtypes_are_converted(vdtype, fdtype):
    m = Mesh(V.astype(vdtype), F.astype(fdtype))
    for arr, dt in ((m.vertices, np.float64), (m.faces, np.int32)):
        assert arr.dtype == dt
        assert arr.flags.c_contiguous
        assert not arr.flags.writeable
    np.testing.assert_array_equal(m.vertices, V.astype(vdtype).astype(np.float64))
    np.testing.assert_array_equal(m.faces, F)
    assert m.n_vertices == 4 and m.n_faces == 2


def test_nested_lists_accepted():
    m = Mesh(V.tolist(), F.tolist())
    assert m.vertices.dtype == np.float64 and m.faces.dtype == np.int32
    np.testing.assert_array_equal(m.vertices, V)


def test_non_contiguous_input_becomes_contiguous():
    big = np.zeros((4, 6))
    big[:, ::2] = V
    fbig = np.zeros((2, 6), dtype=np.int64)
    fbig[:, ::2] = F
    m = Mesh(big[:, ::2], fbig[:, ::2])
    assert m.vertices.flags.c_contiguous and m.faces.flags.c_contiguous
    np.testing.assert_array_equal(m.vertices, V)
    np.testing.assert_array_equal(m.faces, F)
    # Fortran order too
    m = Mesh(np.asfortranarray(V), np.asfortranarray(F))
    assert m.vertices.flags.c_contiguous and m.faces.flags.c_contiguous


def test_mesh_arrays_are_read_only():
    m = Mesh(V, F)
    with pytest.raises(ValueError):
        m.vertices[0, 0] = 1.0
    with pytest.raises(ValueError):
        m.faces[0, 0] = 1
    with pytest.raises(Exception):  # frozen dataclass
        m.vertices = V


def test_caller_arrays_stay_writable():
    v = V.copy()
    f = F.astype(np.int32)
    Mesh(v, f)
    assert v.flags.writeable and f.flags.writeable
    v[0, 0] = 5.0  # must not raise


def test_mesh_does_not_alias_caller_memory():
    flat = V.ravel().copy()
    m = Mesh(flat.reshape(4, 3), F)
    flat[0] = 42.0
    assert m.vertices[0, 0] == 0.0


def test_degenerate_triangles_accepted():
    v = np.vstack([V, [[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]])
    f = np.array([[0, 1, 2],  # fine
                  [4, 4, 4],  # a point
                  [0, 0, 1],  # a segment (repeated vertex)
                  [0, 4, 5]],  # collinear vertices
                 dtype=np.int64)
    m = Mesh(v, f)
    assert m.n_faces == 4
    assert m.triangles().shape == (4, 3, 3)
    # and a hierarchy can be built over them
    for bv in cdcore.BV_TYPES:
        assert cdcore.build_bvh(m, bv).check() == []


def test_single_vertex_all_degenerate_mesh():
    m = Mesh([[1.0, 2.0, 3.0]], [[0, 0, 0]])
    assert m.n_vertices == 1 and m.n_faces == 1


def test_unused_vertices_accepted():
    v = np.vstack([V, [[9.0, 9.0, 9.0]]])
    assert Mesh(v, F).n_vertices == 5


def test_name_default_and_given():
    assert Mesh(V, F).name == "mesh"
    assert Mesh(V, F, name="tet").name == "tet"


# --------------------------------------------------------------------------------------
# Mesh.with_vertices
# --------------------------------------------------------------------------------------
def test_with_vertices_shape_mismatch():
    m = Mesh(V, F)
    with pytest.raises(ValueError, match=r"vertices: expected shape \(4, 3\).*got \(3, 3\)"):
        m.with_vertices(V[:3])
    with pytest.raises(ValueError, match=r"vertices: expected shape \(4, 3\).*got \(5, 3\)"):
        m.with_vertices(np.vstack([V, V[:1]]))
    with pytest.raises(ValueError, match=r"vertices.*shape"):
        m.with_vertices(V.ravel())


def test_with_vertices_validates_values():
    m = Mesh(V, F)
    with pytest.raises(ValueError, match=r"NaN or infinite"):
        m.with_vertices(_with(V, (0, 0), np.nan))
    with pytest.raises(TypeError, match=r"vertices.*complex"):
        m.with_vertices(V.astype(complex))


def test_with_vertices_keeps_topology_and_name():
    m = Mesh(V, F, name="tet")
    m2 = m.with_vertices((V * 2).astype(np.float32))
    assert m2.faces is m.faces and m2.name == "tet"
    assert m2.vertices.dtype == np.float64 and not m2.vertices.flags.writeable
    np.testing.assert_array_equal(m2.vertices, V * 2)
    np.testing.assert_array_equal(m.vertices, V)  # the original is unchanged


def test_bvh_refit_shape_mismatch():
    b = cdcore.build_bvh(Mesh(V, F))
    with pytest.raises(ValueError, match=r"vertices: expected shape"):
        b.refit(V[:3])
    with pytest.raises(ValueError, match=r"vertices: expected shape"):
        b.rebuild(V[:2])


# --------------------------------------------------------------------------------------
# load_mesh
# --------------------------------------------------------------------------------------
def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.stl"):
        load_mesh(tmp_path / "nope.stl")
    with pytest.raises(FileNotFoundError):
        load_mesh(str(tmp_path / "nope.obj"))


def test_load_directory_is_not_a_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_mesh(tmp_path)


def _binary_stl_bytes():
    trimesh = pytest.importorskip("trimesh")
    v, f = torus(1.0, 0.3, 8, 4)
    return trimesh.Trimesh(v, f, process=False).export(file_type="stl")


def _corrupt_files():
    rng = np.random.default_rng(5)
    return {
        "random.stl": rng.bytes(997),
        "random_header.stl": rng.bytes(80) + np.uint32(1000).tobytes() + rng.bytes(100),
        "truncated.stl": None,  # filled in below: a binary STL cut short
        "truncated_header.stl": None,  # only the 80-byte header and the count
        "garbage.obj": b"hello world\nthis is not an obj\nv 1 2\nf a b c\n",
        "binary.obj": rng.bytes(300),
        "empty.ply": b"",
        "empty.stl": b"",
        "empty.obj": b"",
        "points_only.obj": b"v 0 0 0\nv 1 0 0\nv 0 1 0\n",
        "bad_header.ply": b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nend_header\n1\n",
        "unknown.xyz123": b"abc",
    }


@pytest.mark.parametrize("name", list(_corrupt_files()))
def test_load_corrupt_file_raises_value_error_naming_it(tmp_path, name):
    data = _corrupt_files()[name]
    if name.startswith("truncated"):
        raw = _binary_stl_bytes()
        data = raw[: len(raw) // 2] if name == "truncated.stl" else raw[:84]
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        load_mesh(path)


def test_load_mesh_with_bad_indices_raises_value_error(tmp_path):
    path = tmp_path / "badindex.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 9\n")
    try:
        m = load_mesh(path)
    except ValueError as exc:
        assert "badindex.obj" in str(exc)
    else:  # a reader may drop the bad face; what it keeps must be valid
        assert np.all(m.faces < m.n_vertices)


@pytest.mark.parametrize("ext", ["obj", "stl", "ply", "off"])
def test_roundtrip_through_trimesh(tmp_path, ext):
    trimesh = pytest.importorskip("trimesh")
    v, f = torus(1.0, 0.3, 10, 6)
    path = tmp_path / f"torus.{ext}"
    trimesh.Trimesh(v, f, process=False).export(path)
    m = load_mesh(path)
    assert isinstance(m, Mesh)
    assert m.n_faces == len(f)
    assert m.name == f"torus.{ext}"
    assert m.vertices.dtype == np.float64 and m.faces.dtype == np.int32
    # same geometry up to vertex order / duplication (STL stores corners per triangle)
    tri = np.sort(np.round(m.triangles().reshape(-1, 3), 5), axis=0)
    ref = np.sort(np.round(v[f].reshape(-1, 3), 5), axis=0)
    np.testing.assert_allclose(tri, ref, atol=1e-5)
    assert cdcore.build_bvh(m).check() == []


def test_roundtrip_cube_stl_ascii(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    v, f = cube(2.0)
    path = tmp_path / "cube.stl"
    path.write_text(trimesh.Trimesh(v, f, process=False).export(file_type="stl_ascii"))
    m = load_mesh(os.fspath(path))
    assert m.n_faces == 12
    np.testing.assert_allclose(np.abs(m.vertices), 1.0)


def test_mesh_from_file_is_load_mesh(tmp_path):
    path = tmp_path / "tri.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    m = Mesh.from_file(path)
    assert m.n_faces == 1 and m.n_vertices == 3
