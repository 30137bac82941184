"""A trial simulation with known truth for the statistics' tests: speakers with their own effects on both sides."""

from __future__ import annotations

import math

import numpy as np


def speaker_trials(
    rng: np.random.Generator, names: np.ndarray, per_speaker: int, *, mean: float, target_effect: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Enrolment and test speakers, labels and scores: per speaker ``per_speaker`` targets N(mean + its target effect,
    1) and as many non-targets against random other speakers, N(-mean + both sides' non-target effects, 1). The
    non-target effect's SD per side is ``target_effect / sqrt(2)``, so both classes have the marginal variance
    ``1 + target_effect**2``."""
    n_speakers = names.size
    targets_of = rng.normal(0.0, target_effect, n_speakers)
    side_of = rng.normal(0.0, target_effect / math.sqrt(2.0), n_speakers)
    own = np.repeat(np.arange(n_speakers), per_speaker)
    other = (own + rng.integers(1, n_speakers, own.size)) % n_speakers
    targets = mean + targets_of[own] + rng.normal(0.0, 1.0, own.size)
    nontargets = -mean + side_of[own] + side_of[other] + rng.normal(0.0, 1.0, own.size)
    labels = np.r_[np.ones(own.size, bool), np.zeros(own.size, bool)]
    return names[np.r_[own, own]], names[np.r_[own, other]], labels, np.r_[targets, nontargets]
