"""File → Open robot / Open trajectory / Open query: the dialogs and their error
handling (the window's File menu calls them; the joint dock is the window's own)."""
from __future__ import annotations

import os

from PySide6 import QtWidgets

from ..model.robot import open_query, open_robot, open_trajectory
from .errors import show_error


# URDF and MJCF files both come as .xml: the file's root element decides (model.robot.robot_format)
ROBOT_FILTER = "Robots (*.urdf *.xml);;URDF (*.urdf *.xml);;MJCF (MuJoCo) (*.xml)"
ROBOT_SUFFIXES = (".urdf", ".xml")


def _dir(win):
    return str(win.settings.value("last_dir", os.getcwd()))


def open_robot_dialog(win):
    path, _ = QtWidgets.QFileDialog.getOpenFileName(win, "Open robot", _dir(win), ROBOT_FILTER)
    if path:
        win.settings.setValue("last_dir", os.path.dirname(path))
        open_robot_file(win, path)


def open_robot_file(win, path, package_dirs=(), trajectory=None, ask=True) -> bool:
    """Open a robot file, URDF or MJCF; when a URDF's ``package://`` package is not found,
    ask for its directory (``ask``) and retry. Errors (a file that is neither format, a
    model MuJoCo cannot compile, ``mujoco`` not installed, ...) end in a dialog. Returns
    True when the robot opened."""
    from cdcore.articulated import PackageNotFoundError
    dirs = list(package_dirs) + [d for d in str(win.settings.value("package_dirs", "")).split(os.pathsep) if d]
    while True:
        try:
            open_robot(win.session, path, dirs, trajectory)
            used = [d for d in dirs if d]
            win.settings.setValue("package_dirs", os.pathsep.join(dict.fromkeys(used)))
            return True
        except PackageNotFoundError as exc:
            if not ask:
                show_error(win, "Open robot", exc)
                return False
            d = QtWidgets.QFileDialog.getExistingDirectory(
                win, f"Directory holding the package '{exc.package}' (for {exc.uri})", _dir(win))
            if not d:
                return False
            if d in dirs:
                show_error(win, "Open robot", exc)
                return False
            dirs.append(d)
        except Exception as exc:  # noqa: BLE001 - any failure ends in a dialog
            show_error(win, "Open robot", exc)
            return False


def open_trajectory_dialog(win):
    path, _ = QtWidgets.QFileDialog.getOpenFileName(win, "Open trajectory", _dir(win), "Trajectories (*.csv *.npz)")
    if path:
        try:
            open_trajectory(win.session, path)
        except Exception as exc:  # noqa: BLE001
            show_error(win, "Open trajectory", exc)


def open_query_dialog(win):
    path, _ = QtWidgets.QFileDialog.getOpenFileName(win, "Open saved query", _dir(win), "Saved queries (*.npz)")
    if path:
        open_query_file(win, path)


def open_query_file(win, path) -> bool:
    """Open a saved query and bring the traversal stepper forward on it."""
    try:
        q = open_query(win.session, path)
    except Exception as exc:  # noqa: BLE001
        show_error(win, "Open query", exc)
        return False
    show_stepper(win)
    return q is not None


def show_stepper(win) -> None:
    """Bring the traversal stepper forward on the loaded query and say what it is."""
    dock = win.findChild(QtWidgets.QDockWidget, "Traversal_stepper")
    if dock is not None:
        dock.show()
        dock.raise_()
    if hasattr(win, "stepper_panel"):
        win.stepper_panel.reload()
    if win.session.scene is not None:
        win.statusBar().showMessage(win.session.scene.description, 30000)
