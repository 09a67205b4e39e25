"""Architecture walls: cdcore never pulls in Qt, pyvista/VTK, pyqtgraph, the app, and only
lazily trimesh (file I/O), matplotlib and fcl (bench). Checked at run time in a fresh
interpreter and statically over every cdcore source file."""
import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CDCORE = ROOT / "cdcore"

GUI = ["PySide6", "PyQt5", "PyQt6", "shiboken6", "qtpy", "pyvista", "pyvistaqt", "vtk", "vtkmodules",
       "pyqtgraph", "app"]
LAZY = ["matplotlib", "trimesh", "fcl"]  # allowed inside functions only
FORBIDDEN_LOADED = GUI + LAZY


PRELUDE = f"""
import json, sys
FORBIDDEN = {FORBIDDEN_LOADED!r}
def loaded(names=FORBIDDEN):
    return sorted(n for n in names if n in sys.modules or any(m.startswith(n + ".") for m in sys.modules))
"""


def run_python(code: str) -> dict:
    """Run ``PRELUDE`` + ``code`` in a fresh interpreter (repo root on the path); ``code``
    must print one JSON line last. Returns the parsed JSON."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("QT_QPA_PLATFORM", None)
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])




def test_import_and_collide_load_no_gui_or_heavy_modules(tmp_path):
    obj = tmp_path / "tri.obj"
    obj.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n")
    out = run_python(f"""
    import importlib.util
    import numpy as np
    import cdcore
    has_bench = importlib.util.find_spec("cdcore.bench") is not None
    if has_bench:
        import cdcore.bench
    v = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    f = np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]])
    m = cdcore.Mesh(v, f)
    hits = []
    for bv, spec in cdcore.BV_TYPES.items():
        a = cdcore.build_bvh(m, bv)
        for test in spec.tests:
            pose = np.eye(4)
            pose[:3, 3] = (0.2, 0.1, 0.0)
            hits.append(cdcore.collide(a, None, a, pose, test=test).hit)
            hits.append(bool(cdcore.collide_batch(a, a, pose[None], test=test).hits[0]))
    after_collide = loaded()
    mesh = cdcore.load_mesh({str(obj)!r})
    print(json.dumps(dict(has_bench=has_bench, hits=hits, after_collide=after_collide,
                          after_load=loaded(), trimesh_after_load="trimesh" in sys.modules,
                          n_faces=mesh.n_faces)))
    """)
    assert out["hits"] and all(out["hits"])
    assert out["after_collide"] == [], f"cdcore imports {out['after_collide']} eagerly"
    # trimesh is loaded on demand by load_mesh, and nothing GUI-related comes with it
    # (``import trimesh`` itself imports fcl when installed, for trimesh.collision)
    assert out["trimesh_after_load"] and out["n_faces"] == 2
    assert [n for n in out["after_load"] if n not in ("trimesh", "fcl")] == []


def _cdcore_modules():
    mods = []
    for path in sorted(CDCORE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods.append(".".join(parts))
    return mods


def test_importing_every_cdcore_module_loads_no_gui():
    """Every module of the package (bench, scenes, ... included), not just the top level."""
    mods = _cdcore_modules()
    assert "cdcore" in mods and "cdcore.collide" in mods
    out = run_python(f"""
    import importlib
    for name in {mods!r}:
        importlib.import_module(name)
    print(json.dumps(dict(loaded=loaded())))
    """)
    assert out["loaded"] == [], f"importing cdcore modules loads {out['loaded']}"


# --------------------------------------------------------------------------------------
# static check: no import of the GUI modules anywhere, heavy ones only inside functions
# --------------------------------------------------------------------------------------
class _Imports(ast.NodeVisitor):
    def __init__(self):
        self.found = []  # (top-level module name, line, inside a function)
        self.depth = 0

    def _func(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _func

    def visit_Import(self, node):
        for alias in node.names:
            self.found.append((alias.name.split(".")[0], node.lineno, self.depth > 0))

    def visit_ImportFrom(self, node):
        if node.level == 0 and node.module:
            self.found.append((node.module.split(".")[0], node.lineno, self.depth > 0))

    def visit_Call(self, node):
        # importlib.import_module("x") / __import__("x")
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
        if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            self.found.append((node.args[0].value.split(".")[0], node.lineno, self.depth > 0))
        self.generic_visit(node)


def _source_files():
    files = sorted(CDCORE.rglob("*.py"))
    assert len(files) >= 10
    return files


def test_no_cdcore_source_imports_gui_modules():
    bad = []
    for path in _source_files():
        v = _Imports()
        v.visit(ast.parse(path.read_text(), filename=str(path)))
        bad += [f"{path.relative_to(ROOT)}:{line} imports {mod}" for mod, line, _ in v.found if mod in GUI]
    assert bad == []


def test_heavy_optional_modules_are_imported_lazily():
    bad = []
    for path in _source_files():
        v = _Imports()
        v.visit(ast.parse(path.read_text(), filename=str(path)))
        bad += [f"{path.relative_to(ROOT)}:{line} imports {mod} at module level"
                for mod, line, lazy in v.found if mod in LAZY and not lazy]
    assert bad == []


def test_static_checker_sees_imports():
    """The AST walk must find imports in every form, or the checks above prove nothing."""
    src = textwrap.dedent("""
        import PySide6.QtCore
        from pyvista import Plotter
        import numpy as np, vtk
        try:
            from app.model import x
        except ImportError:
            pass
        def f():
            import trimesh
            importlib.import_module("pyqtgraph")
        class K:
            import matplotlib
    """)
    v = _Imports()
    v.visit(ast.parse(src))
    got = {(m, lazy) for m, _, lazy in v.found}
    assert {("PySide6", False), ("pyvista", False), ("vtk", False), ("app", False), ("trimesh", True),
            ("pyqtgraph", True), ("matplotlib", False), ("numpy", False)} <= got


# --------------------------------------------------------------------------------------
# the app's model layer (once it exists) is Qt-free too
# --------------------------------------------------------------------------------------
def _app_model():
    spec = importlib.util.find_spec("app")
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(list(spec.submodule_search_locations)[0])
    if (base / "model").is_dir() or (base / "model.py").is_file():
        return "app.model"
    return None


def test_app_model_is_qt_free():
    name = _app_model()
    if name is None:
        pytest.skip("no app.model package yet")
    out = run_python(f"""
    import importlib, pkgutil
    mod = importlib.import_module({name!r})
    names = [{name!r}]
    if hasattr(mod, "__path__"):
        names += [m.name for m in pkgutil.walk_packages(mod.__path__, {name!r} + ".")]
    for n in names:
        importlib.import_module(n)
    print(json.dumps(dict(loaded=loaded({GUI[:-1]!r} + ["matplotlib"]), names=names)))
    """)
    assert out["loaded"] == [], f"{name} loads {out['loaded']}"
