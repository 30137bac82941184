"""Where a run's folders are: the cache (embeddings, built corpora, installed weights), the checkpoints root, and
placeholder roots for a configuration whose folders are named but never read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ROOT_VARIABLES", "default_cache_root", "default_checkpoints_root", "placeholder_roots"]


def default_cache_root() -> Path:
    """The cache: ``$INTERBIAS_CACHE``, else ``~/.cache/interbias-sv``."""
    return Path(os.environ.get("INTERBIAS_CACHE", "~/.cache/interbias-sv")).expanduser()


ROOT_VARIABLES = ("INTERBIAS_CORPORA", "INTERBIAS_CHECKPOINTS")  # the roots configs/full.toml reads its folders under


@contextmanager
def placeholder_roots(folder: str) -> Iterator[None]:
    """While a configuration whose corpus and checkpoint folders are named but never read is loaded (a plan from
    declared sizes, a rehearsal), each unset variable of ``ROOT_VARIABLES`` names ``folder``; unset again after, so
    nothing later in the process reads the placeholder."""
    unset = [name for name in ROOT_VARIABLES if name not in os.environ]
    os.environ.update(dict.fromkeys(unset, folder))
    try:
        yield
    finally:
        for name in unset:
            os.environ.pop(name, None)


def default_checkpoints_root() -> Path:
    """Where checkpoints are installed and read: ``$INTERBIAS_CHECKPOINTS``, else the cache's ``checkpoints``."""
    named = os.environ.get("INTERBIAS_CHECKPOINTS")
    return Path(named).expanduser() if named else default_cache_root() / "checkpoints"
