"""A fresh signed synthetic bundle for each test (``tests/provenance/synthetic_bundle.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle


@pytest.fixture
def bundle(tmp_path: Path) -> SyntheticBundle:
    return build_bundle(tmp_path)
