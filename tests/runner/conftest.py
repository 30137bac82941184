"""Shared runner fixtures: the paper's 12 labels as random-weight checkpoints of their published size and layout
(``interbias checkpoints synthesise``), written once per test session into a temporary folder (about 3.3 GB for
all of them; a test of one label writes only that label's folder)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def real_size_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``label -> checkpoints root``: the root, after writing ``label``'s folder there if this session has not."""
    from runner.encoders import load_roster

    root = tmp_path_factory.mktemp("real-size-checkpoints")
    specs = {spec.label: spec for spec in load_roster(ROOT / "configs" / "encoders.toml", root) if spec.paper}
    written: set[str] = set()

    def checkpoint(label: str) -> Path:
        from runner.encoders.synthesis import synthesise

        if label not in written:
            synthesise([specs[label]])
            written.add(label)
        return root

    return checkpoint


@pytest.fixture(scope="session")
def real_size_checkpoints(real_size_checkpoint: Callable[[str], Path]) -> Path:
    """A checkpoints root holding the folder of every paper label of configs/encoders.toml."""
    from runner.encoders import load_roster

    for spec in load_roster(ROOT / "configs" / "encoders.toml", Path("/nowhere")):
        if spec.paper:
            root = real_size_checkpoint(spec.label)
    return root
