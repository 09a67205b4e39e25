"""A bounded ``.npz`` reader for files from outside (saved queries, trajectories).

``np.load`` decompresses whatever a member declares: a 1.2 MB file can declare gigabytes.
Here every member's ``.npy`` header (shape and dtype: a few hundred bytes at the front of
the member) is read first, and the file is refused before any array is decompressed when
the declared sizes exceed the caller's limit. Object arrays (pickles) are refused. Only the
members asked for are read; a member's decompression is also capped by the size the zip
directory declares for it (``zipfile`` stops there), which must match its header.
"""
from __future__ import annotations

import math
import os
import zipfile
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
from numpy.lib import format as npf

#: the largest ``.npy`` header accepted (numpy's own default limit)
MAX_HEADER_BYTES = 10_000


class NpzLimitError(ValueError):
    """The file declares more data than the documented limit; nothing was decompressed."""


@dataclass(frozen=True)
class Member:
    """One array's declared ``shape`` and ``dtype`` (from its header), and its byte size."""
    key: str
    shape: tuple
    dtype: np.dtype
    nbytes: int


def _members(zf: zipfile.ZipFile, keys, where: str) -> dict:
    out: dict = {}
    for info in zf.infolist():
        name = info.filename
        if not name.endswith(".npy"):
            continue
        key = name[:-4]
        if keys is not None and key not in keys:
            continue
        if key in out:
            raise ValueError(f"{where}: array {key!r} is stored twice")
        out[key] = info
    return out


def _header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, where: str) -> Member:
    try:
        with zf.open(info) as fp:
            version = npf.read_magic(fp)
            if version == (1, 0):
                shape, _fortran, dtype = npf.read_array_header_1_0(fp, max_header_size=MAX_HEADER_BYTES)
            elif version in ((2, 0), (3, 0)):
                shape, _fortran, dtype = npf.read_array_header_2_0(fp, max_header_size=MAX_HEADER_BYTES)
            else:
                raise ValueError(f"unsupported .npy version {version}")
    except Exception as exc:  # bad magic, bad header, bad compression, encrypted member
        raise ValueError(f"{where}: array {key!r}: unreadable header ({type(exc).__name__}: {exc})") from None
    if dtype.hasobject:
        raise ValueError(f"{where}: array {key!r}: object arrays (pickles) are not accepted")
    nbytes = math.prod(int(s) for s in shape) * int(dtype.itemsize)
    if nbytes > info.file_size:
        raise ValueError(f"{where}: array {key!r}: its header declares {nbytes:,} bytes, the member holds "
                         f"{info.file_size:,}")
    return Member(key, tuple(int(s) for s in shape), dtype, nbytes)


def read_npz(path, keys: Iterable[str] | None = None, max_bytes: int = 2**30,
             check: Callable[[dict], None] | None = None, where: str | None = None) -> dict:
    """Read the arrays ``keys`` (default: all) of an ``.npz`` at ``path``.

    Parameters
    ----------
    max_bytes : int
        The most bytes the arrays read may declare in total (and the most the file may
        hold); beyond it ``NpzLimitError`` (a ``ValueError``) is raised before anything is
        decompressed.
    check : callable, optional
        Called with {key: Member} (the declared shapes and dtypes) before any array is
        read: raise to refuse the file.
    where : str
        How messages name the file (default: its base name).

    Returns {key: array}. Raises ``FileNotFoundError`` for a missing file and ``ValueError``
    naming the file for anything unreadable.
    """
    path = os.fspath(path)
    where = where or os.path.basename(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"file not found: {path}")
    size = os.path.getsize(path)
    if size > max_bytes:
        raise NpzLimitError(f"{where}: the file holds {size:,} bytes, more than the limit of {max_bytes:,}")
    keys = None if keys is None else set(keys)
    try:
        zf = zipfile.ZipFile(path)
    except Exception as exc:
        raise ValueError(f"{where}: not a readable .npz ({type(exc).__name__}: {exc})") from None
    with zf:
        infos = _members(zf, keys, where)
        members = {}
        total = 0
        for key, info in infos.items():
            if info.file_size > max_bytes:
                raise NpzLimitError(f"{where}: array {key!r} declares {info.file_size:,} bytes, more than the limit "
                                    f"of {max_bytes:,}")
            members[key] = m = _header(zf, info, key, where)
            total += m.nbytes
            if total > max_bytes:
                raise NpzLimitError(f"{where}: the arrays declare {total:,} bytes (array {key!r}: shape {m.shape}, "
                                    f"{m.dtype}), more than the limit of {max_bytes:,}")
        if check is not None:
            check(members)
        out = {}
        for key, info in infos.items():
            try:
                with zf.open(info) as fp:
                    out[key] = npf.read_array(fp, allow_pickle=False,
                                              max_header_size=MAX_HEADER_BYTES)
            except Exception as exc:  # truncated data, CRC errors, bad compression
                raise ValueError(f"{where}: array {key!r}: unreadable ({type(exc).__name__}: {exc})") from None
    return out


def atomic_write_bytes(path: str, write) -> None:
    """``write(fh)`` to a temporary file beside ``path``, then rename it into place: a
    file is never half-written (a full disk or Ctrl-C leaves the old file or none)."""
    import tempfile
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


__all__ = ["atomic_write_bytes", "read_npz", "Member", "NpzLimitError", "MAX_HEADER_BYTES"]
