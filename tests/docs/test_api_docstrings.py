"""Every public class and function of the light install's faces (each name of an ``__all__``) has a docstring of its
own: the API pages of the site are made from them (mkdocstrings), and a name without one would be a bare signature
there. A dataclass's generated ``Name(field, ...)`` text does not count as one."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

FACES = (
    "audit",
    "audit.metrics",
    "audit.table",
    "audit.bundle",
    "audit.statistics",
    "audit.scores",
    "schemas",
    "provenance",
    "reports",
)


def undocumented(face: str) -> list[str]:
    """The classes and functions the face lends without a docstring of their own."""
    module = importlib.import_module(face)
    missing = []
    for name in module.__all__:
        thing = getattr(module, name)
        if not (inspect.isclass(thing) or inspect.isfunction(thing)):
            continue
        text = (thing.__doc__ or "").strip()
        if not text or (inspect.isclass(thing) and text.startswith(f"{thing.__name__}(")):
            missing.append(f"{face}.{name}")
    return missing


@pytest.mark.parametrize("face", FACES)
def test_every_public_class_and_function_of_a_face_is_documented(face: str) -> None:
    assert undocumented(face) == []


def test_the_check_sees_a_missing_docstring_and_a_generated_one() -> None:
    """Hand-made stand-ins with a known answer, put on a real face for the duration of the check."""
    from dataclasses import dataclass

    provenance: Any = importlib.import_module("provenance")

    def bare() -> None:
        pass

    @dataclass
    class Plain:
        x: int

    saved = list(provenance.__all__)
    try:
        provenance.bare, provenance.Plain = bare, Plain
        provenance.__all__ = [*saved, "bare", "Plain"]
        assert undocumented("provenance") == ["provenance.bare", "provenance.Plain"]
    finally:
        provenance.__all__ = saved
        del provenance.bare, provenance.Plain
