"""A fresh signed synthetic bundle for each test (``tests/provenance/synthetic_bundle.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "provenance"))  # the shared bundle factory
from synthetic_bundle import SyntheticBundle, build_bundle


@pytest.fixture
def bundle(tmp_path: Path) -> SyntheticBundle:
    return build_bundle(tmp_path)
