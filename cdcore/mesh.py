"""Validated triangle meshes and mesh file loading."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

_INT32_MAX = np.iinfo(np.int32).max

#: The coordinate range where the kernels are exact (``cdcore._tritri``: "coordinates up to
#: ~1e60 in magnitude, and products of degree 4 in the coordinates must stay above
#: ~1e-290"): a mesh's largest |coordinate| must lie in [MIN_SCALE, MAX_COORD] (or be 0).
#: Outside it the build overflows (NaN oriented boxes from 1e80) or the separation bounds
#: underflow (missed overlaps from 1e-150); rescale such a mesh.
MAX_COORD = 1e60
MIN_SCALE = 1e-72
#: the most triangles / vertices a mesh may have (a 2**31 index limit in the kernels; this
#: bound keeps the hierarchy and its buffers within a few GiB)
MAX_TRIANGLES = 20_000_000


def as_vertices(vertices, name="vertices") -> np.ndarray:
    """Validate ``vertices`` : (n, 3) real numbers, all finite -> C-contiguous float64.

    Integer and lower-precision float arrays are converted; bool, complex, object and
    string arrays raise ``TypeError``; wrong shapes, empty arrays and NaN/inf raise
    ``ValueError``.
    """
    try:
        arr = np.asarray(vertices)
    except Exception as exc:  # ragged nested lists and the like
        raise ValueError(f"{name}: cannot be read as an array ({exc})") from None
    if arr.dtype == object and arr.size:
        raise TypeError(f"{name}: expected real numbers, got Python objects (is the array ragged?)")
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: expected a real floating-point array, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name}: expected shape (n, 3), got {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name}: the mesh has no vertices")
    # always a private copy: the mesh is read-only and must not alias the caller's memory
    arr = np.array(arr, dtype=np.float64, order="C", copy=True)
    bad = ~np.isfinite(arr)
    if bad.any():
        row = int(np.argwhere(bad)[0, 0])
        raise ValueError(f"{name}: {int(bad.any(axis=1).sum())} vertices are NaN or infinite "
                         f"(first at row {row}: {arr[row].tolist()})")
    check_range(arr, name)
    return arr


def check_range(arr: np.ndarray, name: str = "vertices") -> None:
    """``ValueError`` unless the largest |coordinate| is 0 or in [MIN_SCALE, MAX_COORD]."""
    scale = float(np.abs(arr).max())
    if scale > MAX_COORD:
        raise ValueError(f"{name}: coordinates up to {scale:.3g} exceed {MAX_COORD:g}, the range where the "
                         f"kernels are exact; rescale the mesh")
    if 0.0 < scale < MIN_SCALE:
        raise ValueError(f"{name}: the largest coordinate is {scale:.3g}, below {MIN_SCALE:g} where the kernels' "
                         f"error bounds underflow; rescale the mesh")


def as_faces(faces, n_vertices: int, name="faces") -> np.ndarray:
    """Validate ``faces`` : (m, 3) integer indices into the vertices -> C-contiguous int32."""
    try:
        arr = np.asarray(faces)
    except Exception as exc:
        raise ValueError(f"{name}: cannot be read as an array ({exc})") from None
    if arr.size == 0 and arr.ndim <= 2:
        raise ValueError(f"{name}: the mesh has no triangles")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and arr.size and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            raise TypeError(f"{name}: expected an integer array, got {arr.dtype} (cast it with .astype(int))")
        raise TypeError(f"{name}: expected an integer array, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name}: expected shape (m, 3) of triangle vertex indices, got {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name}: the mesh has no triangles")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0:
        raise ValueError(f"{name}: negative vertex index {lo} (row {int(np.argmin(arr.min(axis=1)))})")
    if hi >= n_vertices:
        raise ValueError(f"{name}: vertex index {hi} out of range for {n_vertices} vertices "
                         f"(row {int(np.argmax(arr.max(axis=1)))})")
    if arr.shape[0] > MAX_TRIANGLES:
        raise ValueError(f"{name}: {arr.shape[0]:,} triangles; at most {MAX_TRIANGLES:,} are supported")
    if n_vertices > _INT32_MAX:
        raise ValueError(f"{name}: more than 2**31-1 vertices are not supported")
    return np.array(arr, dtype=np.int32, order="C", copy=True)


@dataclass(frozen=True, eq=False)
class Mesh:
    """A triangle mesh.

    Parameters
    ----------
    vertices : (n, 3) float64
        Vertex coordinates in the model frame; finite.
    faces : (m, 3) int32
        Counter-clockwise vertex indices per triangle, each in ``[0, n)``. Degenerate
        (zero-area) triangles are valid.
    name : str
        Shown by the app and the bench.
    """

    vertices: np.ndarray
    faces: np.ndarray
    name: str = field(default="mesh")

    def __post_init__(self):
        v = as_vertices(self.vertices)
        f = as_faces(self.faces, v.shape[0])
        v.flags.writeable = False
        f.flags.writeable = False
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)

    def __setstate__(self, state):
        # unpickled arrays are the read-only C float64 / int32 ones of ``__post_init__`` again
        # (pickle restores them writable, or read-only in a received buffer): one signature
        v = np.ascontiguousarray(state["vertices"], dtype=np.float64)
        f = np.ascontiguousarray(state["faces"], dtype=np.int32)
        v.flags.writeable = False
        f.flags.writeable = False
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)
        object.__setattr__(self, "name", state.get("name", "mesh"))

    @property
    def n_vertices(self) -> int:
        return self.vertices.shape[0]

    @property
    def n_faces(self) -> int:
        return self.faces.shape[0]

    def with_vertices(self, vertices) -> "Mesh":
        """The same topology with new vertex positions (validated)."""
        v = as_vertices(vertices)
        if v.shape != self.vertices.shape:
            raise ValueError(f"vertices: expected shape {self.vertices.shape} (same topology), got {v.shape}")
        return self._same_faces(v)

    def _same_faces(self, v: np.ndarray) -> "Mesh":
        """This topology with the vertices ``v``, taken as they are: a validated (n, 3) finite
        float64 C-contiguous array of the same shape that nobody else holds (made read-only)."""
        out = object.__new__(Mesh)
        v.flags.writeable = False
        object.__setattr__(out, "vertices", v)
        object.__setattr__(out, "faces", self.faces)
        object.__setattr__(out, "name", self.name)
        return out

    def triangles(self) -> np.ndarray:
        """(m, 3, 3) float64: the corner coordinates of every triangle."""
        return self.vertices[self.faces]

    @classmethod
    def from_file(cls, path) -> "Mesh":
        return load_mesh(path)


def load_mesh(path) -> Mesh:
    """Read a triangle mesh from any file trimesh reads (STL, OBJ, PLY, OFF, GLB, ...).

    Scenes with several geometries are concatenated. Raises ``FileNotFoundError`` for a
    missing file and ``ValueError`` naming the file for anything unreadable or empty.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"mesh file not found: {path}")
    import trimesh  # lazy: only file I/O needs it

    try:
        loaded = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:
        raise ValueError(f"{os.path.basename(path)}: cannot read mesh ({type(exc).__name__}: {exc})") from None
    faces = getattr(loaded, "faces", None)
    verts = getattr(loaded, "vertices", None)
    if faces is None or verts is None or len(faces) == 0:
        raise ValueError(f"{os.path.basename(path)}: the file contains no triangles")
    try:
        return Mesh(np.asarray(verts, dtype=np.float64), np.asarray(faces), name=os.path.basename(path))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{os.path.basename(path)}: {exc}") from None
