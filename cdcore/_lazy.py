"""Lazy package attributes (PEP 562): a package's public names import their submodule on first
access, so importing the package loads no kernel (numba loads a kernel from its cache, or
compiles it, when its module is imported)."""
from __future__ import annotations

import importlib
import sys
import types


def lazy_package(name: str, exports: dict, submodules: bool = False) -> None:
    """Make the package ``name`` (its ``__init__``'s ``__name__``) resolve ``exports`` (public
    name -> submodule) on first access, and with ``submodules`` its submodules by attribute
    (``cdcore.shapes``). The import system binds a loaded submodule to the package attribute
    of its name; a public function named as its module (``collide``, ``audit``) is kept over
    the module, as an eager ``from .collide import collide`` would."""
    module = sys.modules[name]
    namespace = module.__dict__

    def __getattr__(attr: str):
        sub = exports.get(attr)
        if sub is None:
            if submodules:
                try:
                    return importlib.import_module(f"{name}.{attr}")
                except ModuleNotFoundError as e:
                    if e.name != f"{name}.{attr}":
                        raise
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None
        value = getattr(importlib.import_module(f"{name}.{sub}"), attr)
        namespace[attr] = value  # later lookups skip this function (a benign, idempotent race)
        return value

    def __dir__():
        return sorted(set(namespace) | set(exports))

    def __setattr__(self, attr, value):
        if (isinstance(value, types.ModuleType) and exports.get(attr) == attr
                and value.__name__ == f"{name}.{attr}"):
            value = getattr(value, attr)
        types.ModuleType.__setattr__(self, attr, value)

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    module.__class__ = type("LazyPackage", (types.ModuleType,), {"__setattr__": __setattr__})
