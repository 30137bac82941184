"""Provenance: digests (BLAKE3 and SHA-256), the environment a run had, atomic writes, the bundle writer, the
in-toto statement and its DSSE envelope (ed25519 keys, sign and verify).

Import through this face (``from provenance import BundleWriter``); a name loads its module on first use.
"""

from schemas import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
