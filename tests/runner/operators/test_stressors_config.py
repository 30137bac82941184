"""configs/stressors.toml: every condition builds into registered operators, the adversarial conditions declare the
surrogate's real checkpoint digest, and every experiment is labelled as beyond the paper."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.design.config import load_config
from runner.operators import Chain
from runner.operators.adversarial import surrogate_blake3

pytestmark = pytest.mark.runner

STRESSORS = Path(__file__).resolve().parents[3] / "configs" / "stressors.toml"


def test_stressor_config_conditions_build_and_are_labelled() -> None:
    config = load_config(STRESSORS)
    names = set()
    for condition, specs in config.conditions.items():
        chain = Chain.from_specs(list(specs))
        names.update(operator.name for operator in chain.operators)
        for operator in chain.operators:
            if operator.name == "adversarial":
                assert operator.spec()["kwargs"]["surrogate_blake3"] == surrogate_blake3("mfcc-stats"), condition
    assert {"room_reverb", "playback_chain", "adversarial", "band_limit", "codec", "packet_loss_bursty"} <= names
    assert [experiment.id for experiment in config.experiments] == ["D11", "D12", "D13", "D14"]
    assert all("beyond the paper" in experiment.title for experiment in config.experiments)


def test_every_attack_has_its_matched_noise_control_beside_it() -> None:
    config = load_config(STRESSORS)
    for experiment in config.experiments:
        levels = [level for factor in (experiment.factor_a, experiment.factor_b) if factor for level in factor.levels]
        kwargs: dict[str, list[dict]] = {"adversarial": [], "matched_noise": []}
        for level in levels:
            for spec in Chain.from_specs(list(config.conditions[level])).specs():
                kwargs.get(spec["name"], []).append(spec["kwargs"])
        assert kwargs["adversarial"] == kwargs["matched_noise"], experiment.id
    assert any(spec["name"] == "matched_noise" for specs in config.conditions.values() for spec in specs)
