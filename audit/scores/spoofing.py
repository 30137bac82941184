"""Spoofing-aware metrics in ``audit scores --cm-scores``: per group, the ASV score's SV-, SPF- and SASV-EER and
a-DCF, the countermeasure's own EER (bona fide against spoofs), and the tandem's min t-DCF and t-EER
(``audit.metrics.spoofing``), with speaker-bootstrap intervals.

The EERs are ``rocch`` (the recommended variant); the a-DCF has Shim et al.'s default costs, the t-DCF ASVspoof
2019's constants with the ASV at its EER threshold. A metric undefined on a group (a kind of trial absent, an
error-free ASV for the t-DCF) is left out with the reason in ``<metric>_not_computable``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from audit.metrics import MetricInputError, a_dcf, eer, min_t_dcf, sasv_eer, spf_eer, sv_eer, t_eer, weighted_eer
from audit.scores.resampling import interval_columns, weighted_draws
from schemas import EerMethod, TrialKind


def spoofing_row(
    asv: NDArray[np.float64],
    cm: NDArray[np.float64],
    kinds: NDArray[np.int64],
    resampled: tuple[NDArray[np.int64], NDArray[np.float64], float] | None,
) -> dict[str, Any]:
    """The spoofing-aware metrics of one group's trials (ASV scores, CM scores, ``TrialKind`` codes); with
    ``resampled`` (per-trial speaker codes, speaker weights, level) their speaker-bootstrap intervals."""
    row: dict[str, Any] = {kind.word + "_trials": int((kinds == kind).sum()) for kind in TrialKind}
    target, spoof, everyone = kinds == TrialKind.TARGET, kinds == TrialKind.SPOOF, np.ones(kinds.size, dtype=bool)
    # Per EER: its scores, its positives and the trials it keeps (the bootstrap's weighted EERs take these).
    eers = {
        "sv_eer": (asv, target, ~spoof),
        "spf_eer": (asv, target, kinds != TrialKind.NONTARGET),
        "sasv_eer": (asv, target, everyone),
        "cm_eer": (cm, ~spoof, everyone),
    }
    weighted: dict[str, Callable[[NDArray[np.float64] | None], float]] = {
        "a_dcf": lambda w: a_dcf(asv, kinds, weights=w),
        "min_t_dcf": lambda w: min_t_dcf(cm, asv, kinds, weights=w),
        "t_eer": lambda w: t_eer(cm, asv, kinds, weights=w),
    }
    values: dict[str, Callable[[], float]] = {
        "sv_eer": lambda: sv_eer(asv, kinds),
        "spf_eer": lambda: spf_eer(asv, kinds),
        "sasv_eer": lambda: sasv_eer(asv, kinds),
        "cm_eer": lambda: eer(cm, ~spoof),
    } | {name: partial(metric, None) for name, metric in weighted.items()}
    defined = []
    for name, value in values.items():
        try:
            row[name] = value()
            defined.append(name)
        except MetricInputError as error:
            row[f"{name}_not_computable"] = str(error)
    if resampled is None:
        return row
    codes, weights, level = resampled
    for name in defined:
        if name in eers:
            scores, positives, kept = eers[name]
            draws = weighted_eer(scores[kept], positives[kept], codes[kept], weights, EerMethod.ROCCH)
        else:
            draws = weighted_draws(weighted[name], codes, weights)
        row |= interval_columns(name, draws, level)
    return row
