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
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # (JSONDecodeError; an int of > 4,300 digits)
        raise SceneError(f"{os.path.basename(path)}: not a readable JSON scene ({exc})") from None
    except RecursionError:  # nested deeper than the parser's recursion allows (~1,000 levels)
        raise SceneError(f"{os.path.basename(path)}: not a readable JSON scene (nested too deep)") from None
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


#: the largest magnitude a scene may write anywhere (positions, scales, times, angles):
#: far inside the range where the kernels are exact (``cdcore.mesh.MAX_COORD``), so
#: that poses composed of several such numbers stay there too
#: the deepest nesting of a scene file (a real scene is < 10 levels deep)
MAX_DEPTH = 64
MAX_NUMBER = 1e9


def check_numbers(node, where: str) -> None:
    """Every number in a JSON tree is finite and at most ``MAX_NUMBER`` in magnitude
    (Python's json reads ``NaN``/``Infinity``), and the tree is at most ``MAX_DEPTH`` levels
    deep; the error names the JSON path. Iterative: a deep tree cannot exhaust the stack."""
    todo = [(node, where, 0)]
    while todo:
        node, where, depth = todo.pop()
        if isinstance(node, (dict, list)):
            if depth >= MAX_DEPTH:
                raise SceneError(f"{where}: nested deeper than {MAX_DEPTH} levels")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            fmt = "{}.{}" if isinstance(node, dict) else "{}[{}]"
            todo.extend((v, fmt.format(where, k), depth + 1) for k, v in reversed(list(items)))
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            if isinstance(node, float) and not np.isfinite(node):
                raise SceneError(f"{where}: not a finite number ({node!r})")
            if abs(node) > MAX_NUMBER:
                raise SceneError(f"{where}: {node!r} is out of range (|x| <= {MAX_NUMBER:g})")


def positive(d: dict, key: str, where: str, default=...) -> float:
    """A number > 0 (periods, times, sizes)."""
    v = get(d, key, where, (int, float), default)
    if not v > 0:
        raise SceneError(f"{where}.{key}: must be positive, got {v!r}")
    return float(v)


def numeric_array(v, where: str) -> np.ndarray:
    """A (nested) list of finite numbers as a float array; anything else is a SceneError."""
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise SceneError(f"{where}: expected a list of numbers (equal-length rows), got {v!r}") from None
    if not _all_numbers(v) or not np.all(np.isfinite(arr)):
        raise SceneError(f"{where}: expected finite numbers, got {v!r}")
    return arr


def _all_numbers(v) -> bool:
    if isinstance(v, list):
        return all(_all_numbers(x) for x in v)
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def key_times(times, where: str) -> np.ndarray:
    """Keyframe times: at least one, finite, strictly increasing."""
    t = numeric_array(times, where)
    if t.ndim != 1 or len(t) < 1:
        raise SceneError(f"{where}: expected a non-empty list of times")
    if np.any(np.diff(t) <= 0):
        raise SceneError(f"{where}: times must be strictly increasing, got {times!r}")
    return t
