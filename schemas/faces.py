"""Faces that load on first use: what a top-level package lends, without importing it all.

A top-level package's ``__init__`` is the face other packages import through (``from schemas import InputError``).
Python runs a package's ``__init__`` for every import of one of its modules, so an eager face would make importing
``schemas.errors`` pay for pandera and ``audit.metrics`` pay for the whole audit. A lazy face lends each name from its
home module when the name is first asked for (PEP 562 ``__getattr__``), the way SPEC 1 (scientific Python's lazy
loading) does: the names are written once, as the imports of the package's ``__init__.pyi`` stub, which type
checkers and documentation tools read as the face itself.
"""

from __future__ import annotations

import ast
import importlib
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["lazy_face", "lent_names"]


def lent_names(package: str, stub: Path) -> dict[str, str]:
    """Each name the stub lends, with the module it comes from (``from .errors import Error as Error`` or
    ``from schemas.errors import Error as Error`` in package ``schemas`` gives ``{"Error": "schemas.errors"}``)."""
    homes = {}
    for node in ast.parse(stub.read_text(encoding="utf-8"), str(stub)).body:
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        if node.level not in (0, 1):
            raise ValueError(f"{stub}: a face lends from its own package only (from .module or from {package}.module)")
        module = f"{package}.{node.module}" if node.level == 1 else node.module
        for alias in node.names:
            homes[alias.asname or alias.name] = module
    return homes


class _Face(types.ModuleType):
    """A package whose face lends a name that is also one of its submodules (``audit.verify``, the function, from
    ``audit/verify.py``): importing the submodule sets the package's attribute to the module, which would hide the
    name lent; a face keeps the name it lends."""

    def __setattr__(self, name: str, value: Any) -> None:
        lent = self.__dict__.get("__lent_from_submodules__", ())
        if name in lent and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def lazy_face(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for the ``__init__`` of ``package``, from the imports of the
    ``__init__.pyi`` beside ``init_file``: ``__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)``."""
    homes = lent_names(package, Path(init_file).with_suffix(".pyi"))
    names = sorted(homes)
    shadowed = {name for name, home in homes.items() if home == f"{package}.{name}"}
    face = sys.modules[package]
    if shadowed:
        face.__dict__["__lent_from_submodules__"] = frozenset(shadowed)
        face.__class__ = _Face

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        setattr(sys.modules[package], name, value)  # the next look-up finds it without asking again
        return value

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__, names
