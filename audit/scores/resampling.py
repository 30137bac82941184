"""Speaker-cluster bootstrap intervals of any metric that takes per-trial weights (``audit scores``).

The same scheme as the EER intervals of ``audit.scores.scoring``: enrolment speakers are drawn with replacement
(``audit.statistics.draws.draw_cluster_weights``, the report's seed), a trial weighs its enrolment speaker's
multiplicity, and the interval is the percentile interval of the draws. A draw on which the metric is undefined (a
class drawn with no weight) is NaN and counted, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from audit.metrics import MetricInputError
from audit.statistics import percentile_interval


def weighted_draws(
    metric: Callable[[NDArray[np.float64]], float], codes: NDArray[np.int64], weights: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``metric(trial weights)`` for each row of speaker ``weights`` (resamples x speakers); NaN where undefined."""
    draws = np.full(weights.shape[0], np.nan)
    for row, speaker_weights in enumerate(weights):
        try:
            draws[row] = metric(speaker_weights[codes])
        except MetricInputError:
            continue
    return draws


def interval_columns(name: str, draws: NDArray[np.float64], level: float) -> dict[str, Any]:
    """``<name>_low``, ``<name>_high`` and ``<name>_undefined_draws`` of the draws' percentile interval."""
    interval = percentile_interval(draws, level)
    return {
        f"{name}_low": interval["low"],
        f"{name}_high": interval["high"],
        f"{name}_undefined_draws": interval["n_undefined"],
    }
