"""Output files of the benchmarks: checked before a run (a benchmark must not run for
minutes and then fail to save) and written atomically (never half-written)."""
from __future__ import annotations

import io
import os
import tempfile


def output_path_problem(path: str) -> str | None:
    """Why ``path`` cannot be written, or None: its directory must exist and take a new
    file (tried, then removed), and ``path`` must not be a directory."""
    path = os.path.abspath(os.fspath(path))
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        return f"directory does not exist: {parent}"
    if os.path.isdir(path):
        return f"is a directory: {path}"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"not writable: {path}"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".probe", dir=parent)
    except OSError as exc:
        return f"cannot write in {parent}: {exc.strerror or exc}"
    os.close(fd)
    os.unlink(tmp)
    return None


def output_dir_problem(directory: str) -> str | None:
    """Why files cannot be written in ``directory`` (created if missing), or None."""
    directory = os.path.abspath(os.fspath(directory))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        return f"cannot create {directory}: {exc.strerror or exc}"
    return output_path_problem(os.path.join(directory, "probe"))


def atomic_write(path, write, newline=None) -> None:
    """``write(fh)`` (a UTF-8 text file) to a temporary file beside ``path``, then
    ``os.replace`` it into place (``cdcore.npz_io.atomic_write_bytes``: never half-written)."""
    from ..npz_io import atomic_write_bytes

    def write_text(raw):
        text = io.TextIOWrapper(raw, encoding="utf-8", newline=newline)
        write(text)
        text.flush()
        text.detach()  # the bytes writer flushes, syncs and closes the file itself

    atomic_write_bytes(os.path.abspath(path), write_text)


def output_file(text: str) -> str:
    """argparse ``type`` of an output file option: refuses an empty path and a path that
    cannot be written (``output_path_problem``) while the arguments are parsed, before
    any work (argparse then exits with code 2 and the message)."""
    import argparse
    if not text or not text.strip():
        raise argparse.ArgumentTypeError("expected a file path, got an empty string")
    problem = output_path_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text
