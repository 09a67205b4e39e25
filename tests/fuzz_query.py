"""Mutation fuzzing of saved queries (``load_query``), run in child processes.

``python tests/fuzz_query.py BASE_DIR START STOP`` runs cases START..STOP-1: case ``i``
takes base query ``i % len(bases)``, mutates one stored array (or the file's bytes) with a
generator seeded by ``i``, writes it, loads it and, when it loads, runs it and compares the
answer with brute force over all triangle pairs. One line per case on stdout:
``i outcome detail`` with outcome ``typed`` (a ValueError/FileNotFoundError: refused),
``equal`` (loaded, answer equal to brute force), ``mismatch`` or ``untyped`` (any other
exception). A crash (segfault, abort) ends the process: the parent sees the case that
started and did not finish (``test_attacks.test_fuzz_saved_queries``).
"""
from __future__ import annotations

import io
import os
import sys

import numpy as np

INDEX_KEYS = ("a_nodes_i", "b_nodes_i", "a_prim_order", "b_prim_order", "a_faces", "b_faces")
FLOAT_KEYS = ("a_nodes_f", "b_nodes_f", "a_vertices", "b_vertices", "pose_a", "pose_b")
SCALAR_KEYS = ("format", "version", "bv_a", "bv_b", "leaf_a", "leaf_b", "test", "note", "realign", "expected",
               "answer", "a_name", "b_name", "a_depth", "b_depth")


def make_bases(directory) -> list:
    """Saved queries over small meshes: every box/sphere type, refitted trees (stored node
    arrays), leaves of several triangles, a k-DOP (no stored tree), hits and misses."""
    from cdcore import build_bvh, save_query, shapes
    from cdcore.transforms import make_pose, rotation_about
    linked = make_pose(rotation_about([1, 0, 0], np.pi / 2), [1.0, 0.05, 0.0])
    out = []
    for k, (bv, leaf, test) in enumerate([("obb", 1, "sat15"), ("aabb", 2, None), ("sphere", 1, None),
                                          ("obb_sphere", 3, "sphere5"), ("kdop14", 1, None), ("aabb", 1, "sat6")]):
        ta = shapes.torus(1.0, 0.25, 12, 6)
        a = build_bvh(ta, bv, leaf)
        b = build_bvh(shapes.torus(1.0, 0.25, 10, 6), bv, leaf)
        if bv != "kdop14":
            v = ta.vertices.copy()
            v[:, 2] += 0.05 * np.sin(3 * v[:, 0])
            a.refit(v)  # a refitted tree differs from a rebuild: the node arrays are stored
        pose = linked if k % 2 == 0 else make_pose(None, [1.9, 0.0, 0.0])
        p = os.path.join(directory, f"base{k}.npz")
        save_query(p, a, None, b, pose, test=test, note=f"base {k}")
        out.append(p)
    return out


def _index_value(rng, a):
    n = max(len(a), 1)
    return int(rng.choice([-1, -2, 0, n - 1, n, n + 1, n + 64, 2 * n, 2**31 - 1, -2**31, 2_000_000_000,
                           int(rng.integers(0, n))]))


def _float_value(rng, x):
    return float(rng.choice([np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0, -x, 1e-3 * x, x + 1e-13, x * 1.5,
                             x - 1e-9, 1e61, 5e-324]))


def _reshape(rng, a):
    op = int(rng.integers(0, 6))
    if op == 0 and a.ndim >= 1 and len(a):
        return a[:-1]
    if op == 1 and a.ndim >= 1 and len(a):
        return np.concatenate([a, a[-1:]])
    if op == 2:
        return a.reshape(-1)
    if op == 3 and a.ndim == 2:
        return a.T.copy()
    if op == 4:
        return a[:0]
    return a[..., None]


def _retype(rng, a):
    dt = rng.choice(["float64", "float32", "int64", "uint8", "bool", "U3", "complex128", "int16", "S2"])
    try:
        return a.astype(dt)
    except (TypeError, ValueError, OverflowError):
        return np.zeros(a.shape, dtype=dt)


def mutate(d: dict, rng) -> tuple:
    """(mutated dict or raw bytes marker, description)."""
    d = dict(d)
    kind = int(rng.integers(0, 100))
    if kind < 45:
        key = str(rng.choice([k for k in INDEX_KEYS if k in d] or list(d)))
        a = np.array(d[key], copy=True)
        op = int(rng.integers(0, 8))
        if op <= 2 and a.size:
            idx = tuple(int(rng.integers(0, s)) for s in a.shape)
            a[idx] = _index_value(rng, a)
            desc = f"{key}{list(idx)}={a[idx]}"
        elif op == 3 and a.size > 1:
            flat = a.reshape(-1)
            i, j = rng.integers(0, flat.size, 2)
            flat[i], flat[j] = flat[j], flat[i]
            desc = f"{key} swap {i},{j}"
        elif op == 4 and a.ndim == 2:
            c = int(rng.integers(0, a.shape[1]))
            a[:, c] = rng.choice([0, -1, 1])
            desc = f"{key}[:, {c}] constant"
        elif op == 5 and a.size:
            flat = a.reshape(-1)
            rng.shuffle(flat)
            desc = f"{key} shuffled"
        elif op == 6:
            a = _reshape(rng, a)
            desc = f"{key} shape {a.shape}"
        else:
            a = _retype(rng, a)
            desc = f"{key} dtype {a.dtype}"
        d[key] = a
    elif kind < 75:
        key = str(rng.choice([k for k in FLOAT_KEYS if k in d]))
        a = np.array(d[key], dtype=np.float64, copy=True)
        op = int(rng.integers(0, 6))
        if op <= 2:
            idx = tuple(int(rng.integers(0, s)) for s in a.shape)
            a[idx] = _float_value(rng, float(a[idx]))
            desc = f"{key}{list(idx)}={a[idx]}"
        elif op == 3 and a.ndim == 2:
            c = int(rng.integers(0, a.shape[1]))
            a[:, c] *= rng.choice([0.0, 0.5, -1.0, 1e-6])
            desc = f"{key}[:, {c}] scaled"
        elif op == 4:
            a = _reshape(rng, a)
            desc = f"{key} shape {a.shape}"
        else:
            a = _retype(rng, a)
            desc = f"{key} dtype {a.dtype}"
        d[key] = a
    elif kind < 90:
        key = str(rng.choice([k for k in SCALAR_KEYS if k in d]))
        choice = int(rng.integers(0, 9))
        vals = [np.array([1, 2]), np.array(-5), np.array(2**40), np.array("obb"), np.array("sat6"),
                np.array(1.5), np.array([]), np.array("x" * 300), np.array(b"bytes")]
        d[key] = vals[choice]
        desc = f"{key}={d[key]!r:.40}"
    elif kind < 94:
        key = str(rng.choice(list(d)))
        del d[key]
        desc = f"delete {key}"
    else:
        desc = "bytes"
        d = None
    return d, desc


def _corrupt_bytes(raw: bytes, rng) -> bytes:
    b = bytearray(raw)
    op = int(rng.integers(0, 3))
    if op == 0:
        return bytes(b[:int(rng.integers(0, len(b)))])
    for _ in range(int(rng.integers(1, 8))):
        b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
    return bytes(b)


def run_case(bases, i, tmpdir):
    from cdcore import load_query
    from cdcore._tritri_ref import all_pairs_overlap
    from cdcore.transforms import relative_transform, transform_points
    rng = np.random.default_rng(i)
    base = bases[i % len(bases)]
    with np.load(base, allow_pickle=False) as z:
        d0 = {k: z[k] for k in z.files}
    d, desc = mutate(d0, rng)
    path = os.path.join(tmpdir, f"case{i}.npz")
    if d is None:
        raw = open(base, "rb").read()
        with open(path, "wb") as fh:
            fh.write(_corrupt_bytes(raw, rng))
    else:
        buf = io.BytesIO()
        np.savez_compressed(buf, **d) if rng.integers(0, 2) else np.savez(buf, **d)
        with open(path, "wb") as fh:
            fh.write(buf.getvalue())
    try:
        try:
            q = load_query(path)
        except (ValueError, FileNotFoundError) as exc:
            return "typed", f"{desc} -> {type(exc).__name__}: {str(exc)[:120]}"
        try:
            res = q.run()
        except ValueError as exc:  # e.g. a test the type does not support
            return "typed", f"{desc} -> run: {str(exc)[:120]}"
        R, t = relative_transform(q.pose_a, q.pose_b)
        vb = transform_points(R, t, q.bvh_b.mesh.vertices)
        want = all_pairs_overlap(q.bvh_a.mesh.vertices[q.bvh_a.mesh.faces], vb[q.bvh_b.mesh.faces])
        got = {tuple(p) for p in np.asarray(res.pairs).tolist()}
        exp = {tuple(p) for p in np.asarray(want).tolist()}
        if got != exp or res.hit != bool(exp):
            return "mismatch", f"{desc}: {len(got)} pairs, brute force {len(exp)}"
        return "equal", desc
    except Exception as exc:  # noqa: BLE001 - the point is to report it
        return "untyped", f"{desc} -> {type(exc).__name__}: {str(exc)[:160]}"
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def main(argv):
    base_dir, start, stop = argv[0], int(argv[1]), int(argv[2])
    bases = sorted(os.path.join(base_dir, f) for f in os.listdir(base_dir) if f.startswith("base"))
    tmpdir = os.path.join(base_dir, f"work{os.getpid()}")
    os.makedirs(tmpdir, exist_ok=True)
    for i in range(start, stop):
        print(f"{i} start", flush=True)
        outcome, detail = run_case(bases, i, tmpdir)
        print(f"{i} {outcome} {detail}".replace("\n", " "), flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main(sys.argv[1:]))
