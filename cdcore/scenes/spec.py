"""Reading scene description files (JSON) with errors that name the offending field."""
from __future__ import annotations

import json
import os

import numpy as np


class SceneError(ValueError):
    """A scene file or description is invalid (the message names the file and field)."""


def read_json(path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SceneError(f"{os.path.basename(path)}: not a readable JSON scene ({exc})") from None
    if not isinstance(data, dict):
        raise SceneError(f"{os.path.basename(path)}: a scene must be a JSON object")
    return data


def get(d: dict, key: str, where: str, kind=None, default=...):
    """``d[key]`` checked against ``kind`` (a type or tuple), or ``default`` if given."""
    if key not in d:
        if default is ...:
            raise SceneError(f"{where}: missing field {key!r}")
        return default
    v = d[key]
    if kind is not None and not isinstance(v, kind) or isinstance(v, bool) and kind in ((int, float), int, float):
        raise SceneError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, got {v!r}")
    return v


def vec(d: dict, key: str, where: str, n: int = 3, default=None) -> np.ndarray:
    v = d.get(key, default)
    if v is None:
        raise SceneError(f"{where}: missing field {key!r}")
    arr = np.asarray(v, dtype=float) if _is_numeric_list(v, n) else None
    if arr is None or not np.all(np.isfinite(arr)):
        raise SceneError(f"{where}.{key}: expected {n} finite numbers, got {v!r}")
    return arr


def _is_numeric_list(v, n):
    return (isinstance(v, (list, tuple)) and len(v) == n
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v))
