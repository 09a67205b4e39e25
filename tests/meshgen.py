"""Small procedural meshes for tests (no files, no trimesh needed)."""
import numpy as np


def uv_sphere(radius=1.0, n_lat=8, n_lon=12, center=(0.0, 0.0, 0.0)):
    lat = np.linspace(0, np.pi, n_lat + 1)[1:-1]
    lon = np.linspace(0, 2 * np.pi, n_lon, endpoint=False)
    pts = [(0, 0, radius)]
    for a in lat:
        for b in lon:
            pts.append((radius * np.sin(a) * np.cos(b), radius * np.sin(a) * np.sin(b), radius * np.cos(a)))
    pts.append((0, 0, -radius))
    v = np.array(pts) + np.asarray(center)
    faces = []
    for j in range(n_lon):
        faces.append((0, 1 + j, 1 + (j + 1) % n_lon))
    for i in range(n_lat - 2):
        for j in range(n_lon):
            a = 1 + i * n_lon + j
            b = 1 + i * n_lon + (j + 1) % n_lon
            c = a + n_lon
            d = b + n_lon
            faces += [(a, c, b), (b, c, d)]
    last = len(pts) - 1
    base = 1 + (n_lat - 2) * n_lon
    for j in range(n_lon):
        faces.append((base + j, last, base + (j + 1) % n_lon))
    return v, np.array(faces, dtype=np.int32)


def torus(R=1.0, r=0.25, n_major=24, n_minor=8):
    u = np.linspace(0, 2 * np.pi, n_major, endpoint=False)
    w = np.linspace(0, 2 * np.pi, n_minor, endpoint=False)
    uu, ww = np.meshgrid(u, w, indexing="ij")
    v = np.stack([(R + r * np.cos(ww)) * np.cos(uu), (R + r * np.cos(ww)) * np.sin(uu), r * np.sin(ww)],
                 axis=-1).reshape(-1, 3)
    faces = []
    for i in range(n_major):
        for j in range(n_minor):
            a = i * n_minor + j
            b = ((i + 1) % n_major) * n_minor + j
            c = ((i + 1) % n_major) * n_minor + (j + 1) % n_minor
            d = i * n_minor + (j + 1) % n_minor
            faces += [(a, b, c), (a, c, d)]
    return v, np.array(faces, dtype=np.int32)


def grid(n=6, size=1.0, z=0.0):
    """A flat n x n quad grid in the plane z (2 n^2 triangles)."""
    xs = np.linspace(-size / 2, size / 2, n + 1)
    xx, yy = np.meshgrid(xs, xs, indexing="ij")
    v = np.stack([xx.ravel(), yy.ravel(), np.full(xx.size, z)], axis=1)
    faces = []
    for i in range(n):
        for j in range(n):
            a = i * (n + 1) + j
            faces += [(a, a + n + 1, a + n + 2), (a, a + n + 2, a + 1)]
    return v, np.array(faces, dtype=np.int32)


def cube(size=1.0, center=(0.0, 0.0, 0.0)):
    h = size / 2
    v = np.array([[sx, sy, sz] for sx in (-h, h) for sy in (-h, h) for sz in (-h, h)]) + np.asarray(center)
    f = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
         (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    return v, np.array(f, dtype=np.int32)


def soup(rng, n=30, spread=1.0, size=0.4):
    """Random triangle soup in a box of side ``spread``; a few degenerate triangles."""
    centers = (rng.random((n, 1, 3)) - 0.5) * spread
    v = (centers + (rng.random((n, 3, 3)) - 0.5) * size).reshape(-1, 3)
    f = np.arange(3 * n, dtype=np.int32).reshape(n, 3)
    if n >= 4:
        f[1, 2] = f[1, 1]  # repeated vertex
        v[f[2, 2]] = 0.5 * (v[f[2, 0]] + v[f[2, 1]])  # collinear
    return v, f
