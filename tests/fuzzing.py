"""How many examples a property-based test draws: its full count in the whole suite (``INTERBIAS_FUZZ=ci``, the
default, what ``nox -s tests`` and CI run), a fifth in the loop for a change (``INTERBIAS_FUZZ=dev``, ``nox -s
fast``), never fewer than five."""

from __future__ import annotations

import os

__all__ = ["examples"]


def examples(full: int) -> int:
    """``full`` in the whole suite, a fifth of it (at least 5) in the fast loop."""
    return max(5, full // 5) if os.environ.get("INTERBIAS_FUZZ", "ci") == "dev" else full
