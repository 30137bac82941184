"""Deprecated path of ``runner.design.experiments`` (the experiment designs), kept for one release: import
``ExperimentDesign`` and its parts from ``runner.design`` instead. Removed in 0.2."""

from __future__ import annotations

import warnings

from runner.design.experiments import *  # noqa: F403
from runner.design.experiments import __all__  # noqa: F401

warnings.warn(
    "runner.designs moved to runner.design.experiments; import from runner.design (removed in 0.2)",
    DeprecationWarning,
    stacklevel=2,
)
