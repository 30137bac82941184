"""The data contracts every package shares, at the bottom of the house: the bundle's files and their parsers
(pandera models for the tables, pydantic models for the JSON documents), the flag registry and ``Flag``, the
``[analysis]`` grammar, the EER variants, the wording of counts and numbers, and the error root (``Error``,
``InputError``, ``RunError``) with the command lines' one-line failures.

Import through this face (``from schemas import InputError``); a name loads its module on first use
(``schemas.faces``), so the error root costs no pandera.
"""

from schemas.faces import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
