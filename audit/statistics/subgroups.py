"""Subgroup statistics: bootstrap intervals of subgroup EER gaps, and the fixed-threshold analysis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics.point import eer
from audit.metrics.weighted_roc import ResampleWeights, weighted_eer, weighted_sums
from audit.statistics.contrasts import SpeakerDraws, TermTrials, estimate_with_interval, subgroup_gap_draws
from audit.statistics.draws import FloatArray, IntArray, StatisticsInputError, pair_codes
from schemas.eer_method import EerMethod


@dataclass(frozen=True)
class SubgroupInput:
    """One setting's subgroup records pooled: per trial its score, label, enrolment and test speakers and
    subgroup (each subgroup may come from its own trial list; they are resampled jointly through speakers)."""

    key: Mapping[str, str]
    scores: ArrayLike
    labels: ArrayLike
    enrol_speaker: ArrayLike
    test_speaker: ArrayLike
    subgroups: ArrayLike


def subgroup_gap_intervals(
    record: SubgroupInput, draws: SpeakerDraws, level: float, eer_method: EerMethod
) -> dict[str, Any]:
    """Each subgroup's EER, its gap to the first subgroup (sorted) and the range, with two-way intervals from
    the shared ``draws``, and the number of speakers behind each subgroup (a subgroup of one speaker says so)."""
    scores = np.asarray(record.scores, dtype=float)
    scored = np.isfinite(scores)
    trials = TermTrials(
        scores=scores[scored],
        labels=np.asarray(record.labels)[scored].astype(bool),
        enrol=np.asarray(record.enrol_speaker)[scored],
        test=np.asarray(record.test_speaker)[scored],
        subgroups=np.asarray(record.subgroups).astype(str)[scored],
        all_scored=True,
    )
    codes = {"eer": pair_codes(draws.index, trials.enrol, trials.test, draws.positions)}
    gaps = subgroup_gap_draws({"eer": trials}, codes, draws.weights, level, eer_method)
    assert trials.subgroups is not None
    speakers = {
        name: int(np.unique(trials.enrol[trials.subgroups == name].astype(str)).size)
        for name in sorted(set(trials.subgroups.tolist()))
    }
    return {
        "key": dict(record.key),
        "eer_method": eer_method,
        "cluster": "enrolment and test speakers (two-way)",
        "n_unscored": int((~scored).sum()),
        "n_speakers": speakers,
        "reference": gaps["reference"],
        "undefined": gaps["undefined"],
        **gaps["terms"].get("eer", {}),
    }


# Fixed-threshold subgroup analysis


@dataclass(frozen=True)
class FixedThresholdInput(SubgroupInput):
    """A subgroup setting's trials for a common-threshold analysis, plus the development speakers (disjoint from
    the evaluation speakers)."""

    dev_speakers: Sequence[str]


def fixed_threshold_analysis(
    record: FixedThresholdInput,
    *,
    operating_point: Literal["eer"] | float = "eer",
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    eer_method: EerMethod = EerMethod.INTERP,
    draws: SpeakerDraws | None = None,
) -> dict[str, Any]:
    """FAR and FRR per subgroup at one threshold chosen on development speakers.

    Development trials are those whose enrolment and test speakers are both development speakers;
    evaluation trials have neither; trials mixing the two are excluded and counted. The threshold (accept
    ``score >= threshold``) is the development threshold where |FAR - FRR| is smallest (``"eer"``) or the
    lowest one whose development FAR does not exceed ``operating_point`` (a target FAR). Intervals come from
    the two-way speaker bootstrap of the evaluation trials: their speakers' multiplicities in ``draws`` (the
    audit's shared draws), else drawn here from ``n_resamples`` and ``seed``. Per-subgroup EERs
    (``eer_method``) on the evaluation trials are reported beside them, as the paper's gaps.
    """
    scores = np.asarray(record.scores, dtype=float)
    labels = np.asarray(record.labels).astype(bool)
    enrol = np.asarray(record.enrol_speaker).astype(str)
    test = np.asarray(record.test_speaker).astype(str)
    subgroups = np.asarray(record.subgroups).astype(str)
    if len({scores.size, labels.size, enrol.size, test.size, subgroups.size}) != 1:
        raise StatisticsInputError(f"record {dict(record.key)}: per-trial arrays differ in length")
    dev_set = np.asarray(sorted({str(s) for s in record.dev_speakers}))
    enrol_dev, test_dev = np.isin(enrol, dev_set), np.isin(test, dev_set)
    scored = np.isfinite(scores)
    dev = enrol_dev & test_dev & scored
    evaluation = ~enrol_dev & ~test_dev & scored
    if not (labels[dev].any() and (~labels[dev]).any()):
        raise StatisticsInputError(f"record {dict(record.key)}: the development split lacks a class")
    threshold = _threshold(scores[dev], labels[dev], operating_point)
    index = np.unique(np.concatenate([enrol[evaluation], test[evaluation]]))
    if index.size < 2:
        raise StatisticsInputError(f"record {dict(record.key)}: fewer than 2 evaluation speakers")
    if draws is None:
        draws = SpeakerDraws.of([index], n_resamples, seed)
    codes, partners = pair_codes(draws.index, enrol[evaluation], test[evaluation], draws.positions)
    assert partners is not None
    eval_scores, eval_labels, eval_groups = scores[evaluation], labels[evaluation], subgroups[evaluation]
    per_subgroup: dict[str, Any] = {}
    for name in sorted(set(eval_groups.tolist())):
        member = eval_groups == name
        per_subgroup[name] = _error_rates(
            eval_scores[member],
            eval_labels[member],
            (codes[member], partners[member]),
            threshold,
            draws.weights,
            level,
            eer_method,
        )
    return {
        "key": dict(record.key),
        "operating_point": operating_point,
        "threshold": threshold,
        "n_dev_trials": int(dev.sum()),
        "n_eval_trials": int(evaluation.sum()),
        "n_mixed_excluded": int((scored & ~dev & ~evaluation).sum()),
        "n_unscored": int((~scored).sum()),
        "n_resamples": draws.weights.rows,
        "seed": draws.seed,
        "level": level,
        "cluster": "enrolment and test speakers (two-way)",
        "n_speakers": int(index.size),
        "subgroups": per_subgroup,
    }


def _threshold(scores: FloatArray, labels: NDArray[np.bool_], operating_point: str | float) -> float:
    candidates = np.unique(scores)
    targets = np.sort(scores[labels])
    nontargets = np.sort(scores[~labels])
    far = 1.0 - np.searchsorted(nontargets, candidates, "left") / nontargets.size  # share >= threshold
    frr = np.searchsorted(targets, candidates, "left") / targets.size  # share below threshold
    if operating_point == "eer":
        return float(candidates[np.argmin(np.abs(far - frr))])
    target_far = float(operating_point)
    if not 0.0 < target_far < 1.0:
        raise StatisticsInputError(f"a target FAR must lie strictly between 0 and 1, got {operating_point}")
    allowed = np.flatnonzero(far <= target_far)
    if allowed.size:
        return float(candidates[allowed[0]])
    return float(np.nextafter(candidates[-1], np.inf))  # above every development score: accept none


def _error_rates(
    scores: FloatArray,
    labels: NDArray[np.bool_],
    codes: tuple[IntArray, IntArray],
    threshold: float,
    weights: ResampleWeights,
    level: float,
    eer_method: EerMethod,
) -> dict[str, Any]:
    """FAR, FRR at the threshold and the EER, with two-way bootstrap intervals (trial weights x counts)."""
    accepted = scores >= threshold
    counted = np.column_stack(
        [~labels & accepted, ~labels, labels & ~accepted, labels]  # false accepts, non-targets, ...
    ).astype(float)
    totals = weighted_sums(weights, *codes, counted)
    point = counted.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        far_draws, frr_draws = totals[:, 0] / totals[:, 1], totals[:, 2] / totals[:, 3]
    result: dict[str, Any] = {
        "n_target": int(point[3]),
        "n_nontarget": int(point[1]),
        "far": estimate_with_interval(point[0] / point[1], far_draws, level) if point[1] else None,
        "frr": estimate_with_interval(point[2] / point[3], frr_draws, level) if point[3] else None,
        "eer": None,
    }
    if point[1] and point[3]:
        result["eer"] = estimate_with_interval(
            eer(scores, labels, eer_method),
            weighted_eer(scores, labels, codes[0], weights, eer_method, codes[1]),
            level,
        )
    return result
