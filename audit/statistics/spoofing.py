"""Speaker-bootstrap intervals of the spoofing-aware metrics of a bundle's spoof cells: each cell's evaluation set
(its targets and spoofs with its genuine companion's bona fide non-targets, ``audit.metrics.record_spoofing``)
resampled through the audit's shared two-way speaker draws, as every other interval of the audit.

The three EERs and the countermeasure's EER (``rocch``) come from the compiled weighted-ROC loops; a-DCF, min t-DCF
and t-EER are computed on each draw's per-trial weights, every draw at once (``a_dcf_draws``, ``min_t_dcf_draws``,
``t_eer_draws``: the numbers of one call per draw). A trial weighs its enrolment speaker's multiplicity times its
test speaker's; a target or a spoof of the enrolment speaker, its speaker's. Percentile intervals, as ``audit
scores`` gives them; their coverage has not been measured by simulation, and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from audit.metrics import SpoofingSet, a_dcf_draws, min_t_dcf_draws, spoofing_metrics, t_eer_draws, weighted_eer
from audit.statistics.contrasts import ONE_SPEAKER, SpeakerDraws, estimate_with_interval, withheld_interval
from audit.statistics.draws import FloatArray
from schemas import SPOOFING_COLUMNS, EerMethod, TrialKind


@dataclass(frozen=True)
class SpoofingInput:
    """One spoof cell's evaluation set (its trials' speakers named) and the key that names it in the report."""

    key: Mapping[str, str]
    evaluated: SpoofingSet


def _eer_masks(kinds: Any) -> dict[str, tuple[str, Any, Any]]:
    """Per EER: which score, its positives and the trials it keeps."""
    target, spoof, nontarget = kinds == TrialKind.TARGET, kinds == TrialKind.SPOOF, kinds == TrialKind.NONTARGET
    everyone = np.ones(kinds.size, dtype=bool)
    return {
        "sv_eer": ("asv", target, ~spoof),
        "spf_eer": ("asv", target, ~nontarget),
        "sasv_eer": ("asv", target, everyone),
        "cm_eer": ("cm", ~spoof, everyone),
    }


def _metric_draws(evaluated: SpoofingSet, draws: SpeakerDraws, name: str) -> FloatArray:
    """The metric ``name`` of every draw (NaN where a draw leaves it undefined)."""
    assert evaluated.enrol_speaker is not None and evaluated.test_speaker is not None
    asv, cm, kinds = evaluated.asv, evaluated.cm, evaluated.kinds
    masks = _eer_masks(kinds)
    if name in masks:
        score, positives, kept = masks[name]
        enrol, partner = draws.codes(evaluated.enrol_speaker[kept], evaluated.test_speaker[kept])
        values = asv if score == "asv" else cm
        return weighted_eer(values[kept], positives[kept], enrol, draws.weights, EerMethod.ROCCH, partner)
    weighted: dict[str, Callable[[FloatArray], FloatArray]] = {
        "a_dcf": lambda w: a_dcf_draws(asv, kinds, w),
        "min_t_dcf": lambda w: min_t_dcf_draws(cm, asv, kinds, w),
        "t_eer": lambda w: t_eer_draws(cm, asv, kinds, w),
    }
    # Each row of trial weights gives its metric alone (the same bits among any rows): measured once per distinct
    # draw of the cell's speakers (SpeakerDraws.distinct_trial_weights) and repeated.
    enrol, partner = draws.codes(evaluated.enrol_speaker, evaluated.test_speaker)
    assert partner is not None
    weights, repeated = draws.distinct_trial_weights(enrol, partner)
    drawn: FloatArray = weighted[name](weights)[repeated]
    return drawn


def spoofing_intervals(records: Sequence[SpoofingInput], draws: SpeakerDraws, level: float) -> list[dict[str, Any]]:
    """Per spoof cell, each of ``SPOOFING_COLUMNS`` with its percentile interval from ``draws`` (none for a metric
    undefined on the cell, with why; none for a cell of one enrolment speaker, whose draws only reweigh its trials)."""
    rows = []
    for record in records:
        evaluated = record.evaluated
        estimates = spoofing_metrics(evaluated.asv, evaluated.cm, evaluated.kinds)
        row: dict[str, Any] = {"key": dict(record.key), "n_trials": int(evaluated.kinds.size)}
        one_speaker = np.unique(np.asarray(evaluated.enrol_speaker)).size < 2
        for name in SPOOFING_COLUMNS:
            estimate = estimates[name]
            if estimate is None:
                row[name] = {"not_computable": estimates[f"{name}_not_computable"]}
            elif one_speaker:
                row[name] = withheld_interval(estimate, ONE_SPEAKER)
            else:
                drawn = _metric_draws(evaluated, draws, name)
                row[name] = estimate_with_interval(estimate, drawn, level, corrected=False)
        rows.append(row)
    return rows
