"""The toolkit's own identity: the distribution's name and the installed version that reports, manifests, run ids
and ``--version`` print."""

from __future__ import annotations

import importlib.metadata

__all__ = ["DISTRIBUTION", "tool_version"]

DISTRIBUTION = "interbias-sv"


def tool_version() -> str:
    """The installed distribution's version, or says plainly that the code runs uninstalled."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return f"unknown ({DISTRIBUTION} is not installed)"
