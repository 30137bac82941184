"""Shared runner fixtures: the paper's 12 labels as random-weight checkpoints of their published size and layout
(``interbias checkpoints synthesise``), written once per test session into a temporary folder (about 3.3 GB)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def real_size_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoints root holding the folder of every paper label of configs/encoders.toml."""
    from runner.encoders import load_roster
    from runner.encoders.synthesis import synthesise

    root = tmp_path_factory.mktemp("real-size-checkpoints")
    synthesise([spec for spec in load_roster(ROOT / "configs" / "encoders.toml", root) if spec.paper])
    return root
