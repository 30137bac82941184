"""What a test does when the registry weights it needs are not installed: under ``nox -s tests``, which installs them
before the suite and sets ``INTERBIAS_REAL_WEIGHTS=required``, it fails (their absence is a broken setup, never a
green run that tested nothing); elsewhere it skips, naming the install command."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def weights_absent(message: str) -> NoReturn:
    """Fail with ``message`` where the weights are required, else skip with it."""
    if os.environ.get("INTERBIAS_REAL_WEIGHTS") == "required":
        pytest.fail(message)
    pytest.skip(message)
