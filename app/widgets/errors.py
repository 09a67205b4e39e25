"""Showing errors: every user-caused failure ends in a dialog, never a crash."""
from __future__ import annotations

import traceback

from PySide6 import QtWidgets

USER_ERRORS = (ValueError, TypeError, OSError, KeyError, RuntimeError)


def show_error(parent, title: str, exc: BaseException | str) -> None:
    """A modal warning naming the problem (the message, not a traceback)."""
    msg = str(exc) if not isinstance(exc, str) else exc
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Warning, title, msg or type(exc).__name__,
                                QtWidgets.QMessageBox.StandardButton.Ok, parent)
    if isinstance(exc, BaseException) and not isinstance(exc, USER_ERRORS):
        box.setDetailedText("".join(traceback.format_exception(exc)))
    box.setObjectName("errorDialog")
    box.open()  # non-blocking: scripted runs and tests keep going


def guarded(parent, title: str, fn, *args, **kwargs):
    """Call ``fn``; on an exception show it in a dialog and return None."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the app must survive any failure of one action
        show_error(parent, title, exc)
        return None
