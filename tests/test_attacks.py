"""The attack catalogue of issue 20, kept as tests: hostile or careless files and arguments
must give a typed error (API) or a readable message and a non-zero exit (CLI), never a
crash, a wrong answer or gigabytes of memory.

Cases that used to crash the interpreter run in a child process, so a regression fails the
test instead of killing the suite. ``CDCORE_FUZZ_CASES`` sets the saved-query fuzz's size
(default 1,000; e.g. 20000 for a long run).
"""
import os
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

from cdcore import build_bvh, load_query, save_query, shapes
from cdcore.transforms import make_pose, rotation_about

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _env():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + HERE)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def run_child(code: str, timeout=300):
    """Run ``code`` in a fresh interpreter: (returncode, stdout + stderr)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=_env(), cwd=ROOT)
    return p.returncode, p.stdout + p.stderr


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A torus query that hits (88 pairs in the issue's repro; the count matters little)."""
    d = tmp_path_factory.mktemp("q")
    a = build_bvh(shapes.torus(1.0, 0.25, 24, 8), "obb")
    v = a.mesh.vertices.copy()
    v[:, 2] += 0.02 * np.sin(3 * v[:, 0])
    a.refit(v)  # stores the node arrays
    b = build_bvh(shapes.torus(1.0, 0.25, 20, 10), "obb")
    ans = save_query(d / "q.npz", a, None, b, make_pose(rotation_about([1, 0, 0], 0.3), [0.7, 0.05, 0]))
    assert ans["hit"] and ans["pairs"] > 10
    return d / "q.npz"


def _write(saved, path, **changes):
    with np.load(saved) as z:
        d = {k: z[k] for k in z.files}
    for k, f in changes.items():
        d[k] = f(d[k]) if callable(f) else f
    np.savez(path, **d)
    return path


def _set(key, idx, value):
    def f(a):
        a = a.copy()
        a[idx] = value
        return a
    return f


# ---- finding 1: a saved query could corrupt memory ---------------------------------------
TREE_ATTACKS = {
    "child 2e9": ("a_nodes_i", (0, 0), 2_000_000_000),
    "child n+1000": ("a_nodes_i", (0, 1), "n+1000"),
    "child n+5 (reads into the pack)": ("a_nodes_i", (0, 0), "n+5"),
    "cycle": ("a_nodes_i", (1, slice(0, 2)), 0),
    "leaf start out of range": ("a_nodes_i", "leaf", (2, 10**6)),
    "leaf count out of range": ("a_nodes_i", "leaf", (3, 10**6)),
    "prim_order out of range": ("a_prim_order", (5,), 10**6),
    "prim_order all triangle 0": ("a_prim_order", slice(None), 0),
    "zero-size boxes": ("a_nodes_f", (slice(None), slice(3, 6)), 0.0),
}


@pytest.mark.parametrize("name", list(TREE_ATTACKS))
def test_hostile_saved_tree_is_refused_in_a_child_process(saved, tmp_path, name):
    key, idx, value = TREE_ATTACKS[name]
    with np.load(saved) as z:
        a = z[key].copy()
    n = len(a)
    if value == "n+1000":
        value = n + 1000
    elif value == "n+5":
        value = n + 5
    if idx == "leaf":
        leaf = int(np.flatnonzero(a[:, 0] < 0)[0])
        idx, value = (leaf, value[0]), value[1]
    a[idx] = value
    path = _write(saved, tmp_path / "bad.npz", **{key: a})
    rc, out = run_child(f"""
        from cdcore import load_query
        try:
            q = load_query({str(path)!r})
        except ValueError as exc:
            print("REFUSED", exc)
        else:
            r = q.run()
            print("LOADED", r.hit, len(r.pairs))
    """)
    assert rc == 0, f"{name}: child died with {rc}: {out[-800:]}"
    assert "REFUSED bad.npz: saved tree of mesh a" in out, out


def test_bvh_constructor_checks_structure():
    from cdcore.bvh import BVH
    b = build_bvh(shapes.icosphere(1.0, 1), "aabb")
    ni = b.nodes_i.copy()
    ni[0, 0] = 2_000_000_000
    with pytest.raises(ValueError, match=r"nodes_i\[0\]: child id out of range"):
        BVH(b.mesh, "aabb", 1, b.nodes_f, ni, b.prim_order, b.depth)
    po = b.prim_order.copy()
    po[0] = po[1]
    with pytest.raises(ValueError, match="listed twice"):
        BVH(b.mesh, "aabb", 1, b.nodes_f, b.nodes_i, po, b.depth)


# ---- finding 2: typed errors for malformed fields --------------------------------------------
@pytest.mark.parametrize("key, value, words", [
    ("version", np.array([1, 2]), "version"),
    ("answer", np.array([1]), "answer"),
    ("note", np.array([1.5]), "note"),
    ("bv_a", np.array(["obb", "obb"]), "bv_a"),
    ("leaf_a", np.array("three"), "leaf_a"),
    ("leaf_a", np.array(0), "leaf_a"),
    ("expected", np.array(7), "expected"),
    ("format", np.array(b"cdcore-query"), "format"),
    ("a_name", np.zeros(3), "a_name"),
])
def test_malformed_fields_give_value_errors_naming_file_and_field(saved, tmp_path, key, value, words):
    path = _write(saved, tmp_path / "odd.npz", **{key: value})
    with pytest.raises(ValueError) as err:
        load_query(path)
    assert str(err.value).startswith("odd.npz: ") and words in str(err.value), str(err.value)


# ---- finding 3: decompression bombs -----------------------------------------------------------
def _bomb_npz(path, key_arrays, bomb_key, bomb_shape, dtype="<f8"):
    """An honest zip: ``key_arrays`` stored normally, plus ``bomb_key``: a ``.npy`` of
    zeros of ``bomb_shape`` deflated (~1000:1), written without holding it in memory."""
    import io
    buf = io.BytesIO()
    np.savez(buf, **key_arrays)
    import zipfile
    base = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    entries = [(i.filename, base.read(i.filename)) for i in base.infolist()]
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": dtype, "fortran_order": False,
                                                  "shape": tuple(bomb_shape)})
    header = header.getvalue()
    nbytes = int(np.prod(bomb_shape)) * np.dtype(dtype).itemsize
    chunk = bytes(1 << 22)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)  # self-contained: repeatable
    head = zlib.compressobj(9, zlib.DEFLATED, -15)
    head_block = head.compress(header) + head.flush(zlib.Z_FULL_FLUSH)
    reps, tail = divmod(nbytes, len(chunk))
    tail_comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    tail_block = tail_comp.compress(bytes(tail)) + tail_comp.flush(zlib.Z_FINISH)
    crc = zlib.crc32(header)
    for _ in range(reps):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(bytes(tail), crc)
    data_len = len(head_block) + reps * len(block) + len(tail_block)
    size = len(header) + nbytes
    assert size < 2**32 - 1  # no zip64 needed
    out = open(path, "wb")
    central = []
    for name, raw in entries + [(bomb_key + ".npy", None)]:
        offset = out.tell()
        fname = name.encode()
        if raw is not None:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            cdata = c.compress(raw) + c.flush()
            crc_e, csize, usize = zlib.crc32(raw), len(cdata), len(raw)
        else:
            crc_e, csize, usize = crc, data_len, size
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc_e, csize, usize, len(fname), 0))
        out.write(fname)
        if raw is not None:
            out.write(cdata)
        else:
            out.write(head_block)
            for _ in range(reps):
                out.write(block)
            out.write(tail_block)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc_e, csize, usize,
                                   len(fname), 0, 0, 0, 0, 0, offset) + fname)
    cd_offset = out.tell()
    for c in central:
        out.write(c)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), out.tell() - cd_offset,
                          cd_offset, 0))
    out.close()
    return path


def _peak_rss_child(code):
    # VmHWM is this process's own peak: ru_maxrss survives execve, so a child of a 2 GB
    # pytest process would report the parent's peak
    rc, out = run_child(code + "\nprint('PEAK', [l.split()[1] for l in open('/proc/self/status') "
                               "if l.startswith('VmHWM')][0])")
    peak_kb = int(out.rsplit("PEAK", 1)[1].split()[0]) if "PEAK" in out else -1
    return rc, out, peak_kb


def test_query_bomb_is_refused_before_decompression(saved, tmp_path):
    with np.load(saved) as z:
        d = {k: z[k] for k in z.files if k != "b_vertices"}
    # 1.25 GiB of zeros in a ~1.3 MB file (the 1.2 MB file reached 4.8 GB RSS)
    path = _bomb_npz(tmp_path / "bomb.npz", d, "b_vertices", (56_000_000, 3))
    assert os.path.getsize(path) < 3_000_000
    rc, out, peak = _peak_rss_child(f"""
from cdcore import load_query
try:
    load_query({str(path)!r})
except ValueError as exc:
    print("REFUSED", exc)
""")
    assert rc == 0 and "REFUSED bomb.npz: " in out and "limit" in out, out[-800:]
    assert 0 < peak < 600_000, f"peak RSS {peak} kB"


def test_query_member_that_lies_about_its_size_is_refused(saved, tmp_path):
    """A header declaring 24 GB over 1 KB of data (the issue's 10 GB / 60 GB declarations
    failed only because of an address-space cap)."""
    import io
    import zipfile

    with np.load(saved) as z:
        d = {k: z[k] for k in z.files if k != "b_vertices"}
    np.savez(tmp_path / "liar.npz", **d)
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f8", "fortran_order": False, "shape": (10**9, 3)})
    with zipfile.ZipFile(tmp_path / "liar.npz", "a") as zf:
        zf.writestr("b_vertices.npy", head.getvalue() + bytes(1024))
    rc, out, peak = _peak_rss_child(f"""
from cdcore import load_query
from cdcore.npz_io import read_npz
for f in (read_npz, load_query):
    try:
        f({str(tmp_path / "liar.npz")!r})
    except ValueError as exc:
        print("REFUSED", exc)
""")
    assert rc == 0 and out.count("REFUSED liar.npz: ") == 2, out[-800:]
    assert 0 < peak < 600_000, f"peak RSS {peak} kB"


# ---- the saved-query fuzz: >= 1,000 mutated files in child processes ---------------------------
def test_fuzz_saved_queries(tmp_path):
    import fuzz_query
    n_cases = int(os.environ.get("CDCORE_FUZZ_CASES", "1000"))
    fuzz_query.make_bases(str(tmp_path))
    outcomes, crashes, start, children = {}, [], 0, 0
    script = os.path.join(HERE, "fuzz_query.py")
    while start < n_cases and children < 50:
        children += 1
        p = subprocess.run([sys.executable, script, str(tmp_path), str(start), str(n_cases)], capture_output=True,
                           text=True, env=_env(), cwd=ROOT, timeout=1800)
        last_started = None
        for line in p.stdout.splitlines():
            i, outcome, *rest = line.split(" ", 2)
            if outcome == "start":
                last_started = int(i)
            else:
                outcomes[int(i)] = (outcome, rest[0] if rest else "")
                last_started = None
        if p.returncode == 0:
            break
        at = last_started if last_started is not None else max(outcomes, default=start - 1) + 1
        crashes.append((at, p.returncode, p.stderr[-300:]))
        start = at + 1
    counts = {}
    for outcome, _ in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    bad = [(i, o, d) for i, (o, d) in sorted(outcomes.items()) if o not in ("typed", "equal")]
    assert not crashes, f"{len(crashes)} crashes, first: {crashes[:3]}"
    assert not bad, f"{len(bad)} cases neither refused nor equal to brute force: {bad[:5]}"
    assert len(outcomes) == n_cases and counts.get("typed", 0) > n_cases // 3 and counts.get("equal", 0) > 20, counts


# ---- finding 4: package:// must stay inside its package ----------------------------------------
def _urdf(path, links_xml, joints_xml=""):
    path.write_text(f'<?xml version="1.0"?>\n<robot name="r">{links_xml}{joints_xml}</robot>')
    return path


def test_package_uri_cannot_leave_the_package(tmp_path):
    from cdcore.articulated import load_urdf
    from cdcore.articulated.urdf import URDFError
    from cdcore.mesh import Mesh  # noqa: F401 - the mesh below is written with trimesh
    import trimesh
    (tmp_path / "pkgs" / "mypkg" / "meshes").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    box = trimesh.creation.box()
    box.export(tmp_path / "outside" / "secret_part.stl")
    box.export(tmp_path / "pkgs" / "mypkg" / "meshes" / "part.stl")
    good = '<link name="a"><collision><geometry><mesh filename="package://mypkg/meshes/part.stl"/></geometry></collision></link>'
    body = load_urdf(_urdf(tmp_path / "ok.urdf", good), [str(tmp_path / "pkgs")])
    assert body.n_links == 1
    for uri in ("package://mypkg/../../outside/secret_part.stl", "package://mypkg/meshes/../../../outside/secret_part.stl",
                "package://../outside/secret_part.stl", "package://mypkg//" + str(tmp_path / "outside" / "secret_part.stl")):
        xml = f'<link name="a"><collision><geometry><mesh filename="{uri}"/></geometry></collision></link>'
        with pytest.raises(URDFError) as err:
            load_urdf(_urdf(tmp_path / "evil.urdf", xml), [str(tmp_path / "pkgs")])
        assert "evil.urdf" in str(err.value) and uri in str(err.value) and "leaves its package" in str(err.value)
    # inside the package, .. that stays inside is fine
    inner = good.replace("meshes/part.stl", "meshes/../meshes/part.stl")
    assert load_urdf(_urdf(tmp_path / "ok2.urdf", inner), [str(tmp_path / "pkgs")]).n_links == 1


# ---- finding 6 (URDF part): duplicate joint names ------------------------------------------------
BOX = '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'


def test_duplicate_joint_names_are_refused(tmp_path):
    from cdcore.articulated import load_urdf
    from cdcore.articulated.urdf import URDFError
    links = "".join(f'<link name="{n}">{BOX}</link>' for n in "abc")
    joints = ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/><limit lower="-1" upper="1"/></joint>'
              '<joint name="j" type="revolute"><parent link="b"/><child link="c"/><limit lower="-1" upper="1"/></joint>')
    with pytest.raises(URDFError, match=r"dup\.urdf: duplicate joint names \['j'\]"):
        load_urdf(_urdf(tmp_path / "dup.urdf", links, joints))


# ---- finding 10 (URDF part): errors name the file and the element ---------------------------------
@pytest.mark.parametrize("geometry, words", [
    ('<box size="1 inf 1"/>', ["<box size>"]),
    ('<box size="1 1"/>', ["<box size>"]),
    ('<sphere radius="inf"/>', ["<sphere>"]),
    ('<cylinder radius="1e300" length="1"/>', ["<cylinder>"]),
    ('<mesh filename="part.stl" scale="1 1"/>', ["<mesh scale>"]),
    ('<mesh filename="part.stl" scale="1e70 1 1"/>', ["coordinates"]),
])
def test_bad_geometry_names_file_link_and_element(tmp_path, geometry, words):
    import trimesh

    from cdcore.articulated import load_urdf
    from cdcore.articulated.urdf import URDFError
    trimesh.creation.box().export(tmp_path / "part.stl")
    xml = f'<link name="hand"><collision><geometry>{geometry}</geometry></collision></link>'
    with pytest.raises(URDFError) as err:
        load_urdf(_urdf(tmp_path / "geo.urdf", xml))
    msg = str(err.value)
    assert msg.startswith("geo.urdf: <link name='hand'> <collision> #0"), msg
    for w in words:
        assert w in msg, msg


@pytest.mark.parametrize("where", ["visual", "joint"])
def test_nan_origins_name_file_and_element(tmp_path, where):
    from cdcore.articulated import load_urdf
    from cdcore.articulated.urdf import URDFError
    nan = '<origin xyz="0 nan 0" rpy="0 0 0"/>'
    if where == "visual":
        links = f'<link name="a"><visual>{nan}<geometry><box size="1 1 1"/></geometry></visual></link>'
        with pytest.raises(URDFError, match=r"^o\.urdf: <link name='a'> <visual> #0 <origin>: .*finite"):
            load_urdf(_urdf(tmp_path / "o.urdf", links), geometry="visual")
    else:
        links = "".join(f'<link name="{n}">{BOX}</link>' for n in "ab")
        joint = f'<joint name="j" type="fixed"><parent link="a"/><child link="b"/>{nan}</joint>'
        with pytest.raises(URDFError, match=r"^o\.urdf: <joint name='j'> <origin>: .*finite"):
            load_urdf(_urdf(tmp_path / "o.urdf", links, joint))


# ---- trajectories: bounded rows and values, BOM, strings ------------------------------------------
@pytest.fixture(scope="module")
def twoarm(tmp_path_factory):
    from robotgen import write_twoarm

    from cdcore.articulated import load_urdf
    root = str(tmp_path_factory.mktemp("robots"))
    return load_urdf(write_twoarm(root), root)


def test_trajectory_value_beyond_bound_is_refused(twoarm, tmp_path):
    """A finger joint at 1e200 (issue 20, finding 5) used to be accepted and made the
    self-collision kernels divide by zero."""
    from cdcore.articulated.trajectory import MAX_JOINT_VALUE, load_trajectory
    p = tmp_path / "far.csv"
    p.write_text("left_turn,left_slide\n0,0\n0,1e200\n")
    with pytest.raises(ValueError, match=r"far\.csv: joint 'left_slide' at frame 1 is 1e\+200"):
        load_trajectory(p, twoarm)
    np.savez(tmp_path / "far.npz", q=np.array([[0.0, 1e308]]), joint_names=np.array(["left_turn", "left_slide"]))
    with pytest.raises(ValueError, match="far.npz: joint 'left_slide'"):
        load_trajectory(tmp_path / "far.npz", twoarm)
    p.write_text(f"left_turn\n{MAX_JOINT_VALUE}\n")
    assert load_trajectory(p, twoarm).q[0, 0] == MAX_JOINT_VALUE


def test_trajectory_limits_allow_error_clip(twoarm, tmp_path):
    from cdcore.articulated.trajectory import load_trajectory
    lo, hi = twoarm.limits[0]
    p = tmp_path / "over.csv"
    p.write_text(f"{twoarm.joint_names[0]}\n0\n{hi + 0.5}\n{hi + 1.0}\n")
    t = load_trajectory(p, twoarm)
    assert t.outside_limits == {twoarm.joint_names[0]: (2, hi + 1.0)} and t.q[2, 0] == hi + 1.0
    with pytest.raises(ValueError, match=r"over\.csv: joint .* leaves its limits in 2 frames"):
        load_trajectory(p, twoarm, limits="error")
    assert load_trajectory(p, twoarm, limits="clip").q[:, 0].max() == hi
    with pytest.raises(ValueError, match="limits"):
        load_trajectory(p, twoarm, limits="ignore")


def test_trajectory_row_bound(twoarm, tmp_path, monkeypatch):
    """The issue's 2x10^7-row CSV reached 5.3 GB RSS, then a bare MemoryError; the 25 M
    frame .npz (1.5 MB) was accepted."""
    from cdcore.articulated import trajectory as T
    monkeypatch.setattr(T, "MAX_FRAMES", 1000)
    p = tmp_path / "long.csv"
    p.write_text("left_turn\n" + "0\n" * 1001)
    with pytest.raises(ValueError, match=r"long\.csv: more than 1,000 frames"):
        T.load_trajectory(p, twoarm)
    p.write_text("left_turn\n" + "0\n" * 1000)
    assert T.load_trajectory(p, twoarm).frames == 1000
    monkeypatch.undo()
    # 25 M frames (200 MB) of zeros in a ~0.2 MB file: refused from the header
    bomb = _bomb_npz(tmp_path / "long.npz", {"joint_names": np.array(["left_turn"])}, "q", (25_000_000, 1))
    assert os.path.getsize(bomb) < 1_000_000
    rc, out, peak = _peak_rss_child(f"""
from robotgen import write_twoarm
from cdcore.articulated import load_urdf
from cdcore.articulated.trajectory import load_trajectory
import tempfile
root = tempfile.mkdtemp()
body = load_urdf(write_twoarm(root), root)
try:
    load_trajectory({str(bomb)!r}, body)
except ValueError as exc:
    print("REFUSED", exc)
""")
    assert rc == 0 and "REFUSED long.npz: q has 25,000,000 frames" in out, out[-800:]
    assert 0 < peak < 600_000, f"peak RSS {peak} kB"


def test_trajectory_line_bound(twoarm, tmp_path):
    from cdcore.articulated.trajectory import MAX_LINE_CHARS, load_trajectory
    p = tmp_path / "wide.csv"
    p.write_text("left_turn\n" + "0," * (MAX_LINE_CHARS // 2 + 1) + "\n")
    with pytest.raises(ValueError, match="wide.csv: a line longer than"):
        load_trajectory(p, twoarm)


def test_trajectory_csv_with_byte_order_mark(twoarm, tmp_path):
    from cdcore.articulated.trajectory import load_trajectory
    p = tmp_path / "bom.csv"
    p.write_bytes("\ufeffleft_turn,left_slide\r\n0.1,0.01\r\n".encode("utf-8"))
    t = load_trajectory(p, twoarm)
    assert t.columns == ["left_turn", "left_slide"] and t.q[0, twoarm.joint_names.index("left_turn")] == 0.1


def test_trajectory_npz_of_strings_is_a_value_error(twoarm, tmp_path):
    from cdcore.articulated.trajectory import load_trajectory
    np.savez(tmp_path / "s.npz", q=np.array([["a", "b"]]), joint_names=np.array(["left_turn", "left_slide"]))
    with pytest.raises(ValueError, match=r"s\.npz: q must be real numbers"):
        load_trajectory(tmp_path / "s.npz", twoarm)
    np.savez(tmp_path / "n.npz", q=np.zeros((2, 1)), joint_names=np.array([1.5]))
    with pytest.raises(ValueError, match=r"n\.npz: joint_names must be strings"):
        load_trajectory(tmp_path / "n.npz", twoarm)


def test_random_trajectory_with_huge_limits(twoarm):
    """URDF limits of +-1e308 ("unbounded") overflowed the range (OverflowError)."""
    import copy

    from cdcore.articulated.trajectory import random_trajectory, sampling_limits
    body = copy.copy(twoarm)
    body.limits = np.array(twoarm.limits, copy=True)
    body.limits[0] = (-1e308, 1e308)
    body.limits[1] = (0.0, 1e308)
    lim = sampling_limits(body)
    assert np.all(np.isfinite(lim)) and tuple(lim[0]) == (-np.pi, np.pi) and tuple(lim[1]) == (0.0, 2 * np.pi)
    q = random_trajectory(body, 100, seed=1)
    assert np.all(np.isfinite(q)) and np.all(q >= lim[:, 0]) and np.all(q <= lim[:, 1])


# ---- findings 9 and 10 (CLI part): arguments checked before any work -------------------------------
@pytest.mark.parametrize("argv, words", [
    (["robots", "--robots", ""], "no robot named"),
    (["robots", "--robots", "allegro,r2d2"], "unknown robot 'r2d2'"),
    (["robots", "--seed", "-1"], "--seed"),
    (["robots", "--json", "/proc/r.json"], "--json"),
    (["tables", "--json", ""], "empty string"),
    (["tables", "--csv", "/nonexistent-dir/x.csv"], "directory does not exist"),
    (["soak", "--max-growth", "-1"], "--max-growth"),
    (["soak", "--warmup", "nan"], "--warmup"),
    (["fcl", "--json", "/proc/x.json"], "--json"),
    (["distance", "--json", ""], "empty string"),
])
def test_bench_arguments_refused_before_work(argv, words, capsys):
    from cdcore.bench.__main__ import main
    assert main(argv) == 2  # argparse's exit code, returned (as tests/test_bench_outputs.py expects)
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err


def test_bench_ctrl_c_exits_130_without_traceback(tmp_path):
    import signal
    import time
    env = _env()
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    env["PYTHONUNBUFFERED"] = "1"  # its first line arrives when printed, seconds before the end
    # the full axes table (~5 s on a quiet machine): --quick could finish before the signal
    # SIG_DFL in the child: a run started in the background (nohup ... &) inherits SIGINT ignored,
    # and Python then installs no KeyboardInterrupt handler
    p = subprocess.Popen([sys.executable, "-m", "cdcore.bench", "axes"], stdout=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                         stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    p.stdout.readline()  # it has started working
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    # 130, or death by SIGINT after the message (the shell shows 130 for both): a signal that lands
    # during interpreter shutdown is re-delivered by Python
    assert p.returncode in (130, -signal.SIGINT), (p.returncode, err[-500:])
    assert "Traceback" not in err and "interrupted" in err, err
