"""Opening meshes runs off the GUI thread with progress and can be cancelled."""
import time

import pytest

pytest.importorskip("pytestqt")
from PySide6 import QtCore, QtWidgets  # noqa: E402

from app.model import Session  # noqa: E402
from app.model.session import LoadCancelled  # noqa: E402
from cdcore import shapes  # noqa: E402


def _write_obj(path, mesh):
    with open(path, "w") as fh:
        fh.writelines(f"v {x!r} {y!r} {z!r}\n" for x, y, z in mesh.vertices.tolist())
        fh.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in mesh.faces.tolist())
    return str(path)


@pytest.fixture
def files(tmp_path):
    return (_write_obj(tmp_path / "a.obj", shapes.torus(1.0, 0.25, 48, 12)),
            _write_obj(tmp_path / "b.obj", shapes.icosphere(0.5, 2)))


def test_prepare_reports_progress_and_touches_no_state(files):
    s = Session()
    s.load_scene("rigid-torus", frames=10)
    seen = []
    scene = s.prepare_meshes(files, 50, progress=lambda k, n, text: seen.append((k, n, text)))
    assert [k for k, _, _ in seen] == [0, 1, 2, 3] and all(n == 3 for _, n, _ in seen)
    assert "reading a.obj" in seen[0][2] and "building the obb hierarchies" in seen[2][2]
    assert s.scene.name == "rigid-torus"  # not installed yet
    s.install_mesh_scene(scene, files)
    assert s.scene.name == "user: a.obj vs b.obj" and s.source_meshes == list(files)


def test_prepare_stops_when_cancelled(files):
    s = Session()
    calls = []
    with pytest.raises(LoadCancelled):
        s.prepare_meshes(files, 50, progress=lambda *a: calls.append(a), cancelled=lambda: len(calls) >= 1)
    assert len(calls) == 1 and s.scene is None


@pytest.fixture
def window(qtbot, tmp_path):
    from app.main_window import MainWindow
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings=settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.session.load_scene("rigid-torus", frames=20)
    yield win
    win.close()


def _dialogs(win):
    return [w for w in win.findChildren(QtWidgets.QMessageBox) if w.objectName() == "errorDialog" and w.isVisible()]


def test_open_meshes_runs_on_a_worker_with_progress(window, qtbot, files):
    t0 = time.perf_counter()
    loader = window.open_meshes(list(files))
    assert time.perf_counter() - t0 < 1.0  # the GUI thread is not held
    assert loader.dialog.isVisible() and loader.thread.is_alive() or loader.thread is not None
    with qtbot.waitSignal(loader.finished, timeout=60_000):
        pass
    assert window.session.scene.name == "user: a.obj vs b.obj"
    assert not loader.dialog.isVisible() and QtWidgets.QApplication.overrideCursor() is None
    assert not _dialogs(window)


def test_cancel_closes_at_once_and_drops_the_result(window, qtbot, files):
    loader = window.open_meshes(list(files))
    loader.dialog.findChild(QtWidgets.QPushButton).click()  # the Cancel button
    assert not loader.dialog.isVisible() and loader.is_cancelled
    loader.thread.join(60)
    qtbot.wait(50)  # let the worker's queued result arrive: it must be dropped
    assert window.session.scene.name == "rigid-torus"
    assert not _dialogs(window) and QtWidgets.QApplication.overrideCursor() is None


def test_a_bad_file_shows_one_dialog(window, qtbot, tmp_path):
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n")
    loader = window.open_meshes([str(bad)])
    with qtbot.waitSignal(loader.failed, timeout=60_000) as blocker:
        pass
    assert "bad.obj" in blocker.args[0]
    assert len(_dialogs(window)) == 1 and window.session.scene.name == "rigid-torus"
