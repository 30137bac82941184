"""What a reviewer declares to ``audit scores``: the minDCF costs and the bootstrap, bounded as the bundle
audit's ``[analysis]`` bounds them."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from audit.metrics import EER_METHODS
from schemas import N_RESAMPLES_MAX, SEED_MAX, InputError

TWO_WAY = "enrolment and test speakers (two-way)"


@dataclass(frozen=True)
class ScoringConfig:
    """What the reviewer declares: the minDCF costs and the bootstrap (written into the report)."""

    p_target: float = 0.01
    c_miss: float = 1.0
    c_fa: float = 1.0
    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95

    def __post_init__(self) -> None:
        """Each value within the bounds the bundle audit's ``[analysis]`` uses: one line naming the option."""
        for option, value, low, high in (
            ("--resamples", self.n_resamples, 1, N_RESAMPLES_MAX),
            ("--seed", self.seed, 0, SEED_MAX),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InputError(option, f"expected an integer from {low:,} to {high:,}, got {value!r}")
        for option, number, below in (
            ("--p-target", self.p_target, 1.0),
            ("--c-miss", self.c_miss, math.inf),
            ("--c-fa", self.c_fa, math.inf),
            ("level", self.level, 1.0),
        ):
            if not (math.isfinite(number) and 0 < number < below):
                bound = " and < 1" if below == 1.0 else ""
                raise InputError(option, f"expected a finite number > 0{bound}, got {number!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "eer_variants": list(EER_METHODS),
            "bootstrap_eer_variants": list(EER_METHODS),
            "bootstrap_clusters": f"EER intervals: {TWO_WAY} where test speakers are known; calibration and spoofing "
            "metrics: enrolment speaker",
            "join_key": "(enrol, test) without a trailing audio extension",
        }
