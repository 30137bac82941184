"""runner.seeds: a configuration per seed differs from the original in its seed alone (oracle: tomllib)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from runner.design.config import load_config
from runner.design.seeds import seed_configs, seeded_config_text
from schemas.errors import InputError

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", ["default.toml", "full.toml"])
def test_only_the_seed_changes(name: str) -> None:
    text = (ROOT / "configs" / name).read_text()
    original, seeded = tomllib.loads(text), tomllib.loads(seeded_config_text(text, 77))
    assert seeded["run"].pop("seed") == 77
    original["run"].pop("seed")
    assert seeded == original


def test_a_missing_seed_is_added_and_a_missing_run_table_is_one_line() -> None:
    text = '[run]\nname = "x"  # no seed\n\n[analysis]\nseed = 3\n'
    seeded = tomllib.loads(seeded_config_text(text, 5))
    assert seeded["run"]["seed"] == 5 and seeded["analysis"]["seed"] == 3  # the bootstrap seed is not the run's
    with pytest.raises(InputError, match="no \\[run\\] table"):
        seeded_config_text("[analysis]\nseed = 3\n", 5, "c.toml")


def test_seed_configs_load_with_their_paths_resolving(tmp_path: Path) -> None:
    config = tmp_path / "default.toml"
    config.write_text((ROOT / "configs" / "default.toml").read_text())
    (tmp_path / "encoders.toml").write_text((ROOT / "configs" / "encoders.toml").read_text())
    written = seed_configs(config, [1, 2])
    assert [path.name for _, path in written] == ["default.seed-1.toml", "default.seed-2.toml"]
    assert [load_config(path).seed for _, path in written] == [1, 2]
