"""Deprecated path of ``runner.design.config`` (the run configuration), kept for one release: import
``load_config`` and ``RunConfig`` from ``runner`` (or ``runner.design``) instead. Removed in 0.2."""

from __future__ import annotations

import warnings

from runner.design.config import *  # noqa: F403
from runner.design.config import __all__  # noqa: F401

warnings.warn(
    "runner.config moved to runner.design.config; import from runner or runner.design (removed in 0.2)",
    DeprecationWarning,
    stacklevel=2,
)
