"""Subgroup statistics: bootstrap intervals of subgroup EER gaps, and the fixed-threshold analysis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics import (
    ResampleWeights,
    binned_threshold_positions,
    eer,
    eer_and_draws,
    threshold_positions,
    weights_at_thresholds,
)
from audit.statistics.contrasts import (
    ONE_SPEAKER,
    SpeakerDraws,
    TermTrials,
    estimate_with_interval,
    subgroup_gap_draws,
    withheld_interval,
)
from audit.statistics.draws import (
    FloatArray,
    IntArray,
    StatisticsInputError,
    coded_pairs,
    drawn_positions,
    percentile_interval,
    text_codes,
)
from schemas import EerMethod


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
    enrol_ids, test_ids = np.asarray(record.enrol_speaker)[scored], np.asarray(record.test_speaker)[scored]
    trials = TermTrials(
        scores=scores[scored],
        labels=np.asarray(record.labels)[scored].astype(bool),
        enrol=enrol_ids,
        test=test_ids,
        subgroups=np.asarray(record.subgroups).astype(str)[scored],
        all_scored=True,
    )
    names, (enrol, test) = text_codes(enrol_ids, test_ids)
    drawn = drawn_positions(names, draws.positions, np.r_[enrol, test])
    codes = {"eer": coded_pairs(drawn, enrol, test, len(draws.positions))}
    gaps = subgroup_gap_draws({"eer": trials}, codes, draws.weights, level, eer_method)
    assert trials.subgroups is not None
    speakers = {
        name: int(np.unique(enrol[trials.subgroups == name]).size) for name in sorted(set(trials.subgroups.tolist()))
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

MIN_DEV_SPEAKERS = 10  # development speakers per class below which no threshold (nor its uncertainty) is estimated


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
    min_dev_speakers: int = MIN_DEV_SPEAKERS,
) -> dict[str, Any]:
    """FAR and FRR per subgroup at one threshold chosen on development speakers.

    Development trials are those whose enrolment and test speakers are both development speakers;
    evaluation trials have neither; trials mixing the two are excluded and counted. The threshold (accept
    ``score >= threshold``) is the development threshold where |FAR - FRR| is smallest (``"eer"``) or the
    lowest one whose development FAR does not exceed ``operating_point`` (a target FAR). With fewer than
    ``min_dev_speakers`` (``MIN_DEV_SPEAKERS``) development speakers in either class the analysis is not run (the
    threshold would be a few speakers' and its uncertainty cannot be estimated): the error says so.

    Intervals come from the two-way speaker bootstrap of development and evaluation speakers together (their
    multiplicities in ``draws``, the audit's shared draws, else drawn here from ``n_resamples`` and ``seed``):
    each resample re-chooses the threshold on its development trials and applies it to its evaluation trials,
    so the threshold's own uncertainty is in the FAR and FRR intervals (percentile). A subgroup of one
    enrolment speaker gets no interval; a rate of zero (or one) events gets the exact Clopper-Pearson bound
    beside the bootstrap's. Per-subgroup EERs (``eer_method``) on the evaluation trials are reported beside
    them, as the paper's gaps.
    """
    scores = np.asarray(record.scores, dtype=float)
    labels = np.asarray(record.labels).astype(bool)
    sizes = {np.size(column) for column in (record.enrol_speaker, record.test_speaker, record.subgroups)}
    if len({scores.size, labels.size, *sizes}) != 1:
        raise StatisticsInputError(f"record {dict(record.key)}: per-trial arrays differ in length")
    # Speakers and subgroups as codes of their text, made once (a record's trials name a few hundred speakers): the
    # masks, counts and speaker codes below are integer work, not text compared trial by trial.
    names, (enrol, test) = text_codes(record.enrol_speaker, record.test_speaker)
    group_names, (subgroups,) = text_codes(record.subgroups)
    dev_set = {str(s) for s in record.dev_speakers}
    is_dev = np.fromiter((name in dev_set for name in names.tolist()), dtype=bool, count=names.size)
    enrol_dev, test_dev = is_dev[enrol], is_dev[test]
    scored = np.isfinite(scores)
    dev = enrol_dev & test_dev & scored
    evaluation = ~enrol_dev & ~test_dev & scored
    dev_speakers = development_speakers(enrol[dev], test[dev], labels[dev])
    if min(dev_speakers.values()) < max(1, min_dev_speakers):
        raise StatisticsInputError(
            f"record {dict(record.key)}: the development trials have {dev_speakers['target']} speaker(s) with "
            f"target trials and {dev_speakers['nontarget']} with non-target trials, fewer than the declared "
            f"minimum of {max(1, min_dev_speakers)} per class: a threshold chosen on so few speakers is theirs, "
            "and its uncertainty cannot be estimated"
        )
    index = np.unique(np.concatenate([enrol[evaluation], test[evaluation]]))
    if index.size < 2:
        raise StatisticsInputError(f"record {dict(record.key)}: fewer than 2 evaluation speakers")
    if draws is None:
        draws = SpeakerDraws.of([names[np.unique(np.r_[index, enrol[dev], test[dev]])]], n_resamples, seed)
    drawn = drawn_positions(names, draws.positions, np.r_[enrol[dev | evaluation], test[dev | evaluation]])
    candidates = np.unique(scores[dev])
    dev_codes = coded_pairs(drawn, enrol[dev], test[dev], len(draws.positions))
    chosen = _threshold_indices(scores[dev], labels[dev], candidates, dev_codes, draws.weights, operating_point)
    point = _threshold_indices(scores[dev], labels[dev], candidates, None, None, operating_point)[0]
    threshold = _threshold_value(candidates, point)
    codes, partners = coded_pairs(drawn, enrol[evaluation], test[evaluation], len(draws.positions))
    eval_scores, eval_labels, eval_groups = scores[evaluation], labels[evaluation], subgroups[evaluation]
    eval_enrol = enrol[evaluation]
    per_subgroup: dict[str, Any] = {}
    for group in np.unique(eval_groups):  # codes of sorted names: in the names' order
        member = eval_groups == group
        per_subgroup[str(group_names[group])] = _error_rates(
            _Evaluated(eval_scores[member], eval_labels[member], (codes[member], partners[member])),
            (candidates, point, chosen),
            draws.weights,
            level,
            eer_method,
            one_speaker=np.unique(eval_enrol[member]).size == 1,
        )
    defined = chosen[chosen >= 0]
    return {
        "key": dict(record.key),
        "operating_point": operating_point,
        "threshold": threshold,
        "threshold_draws": percentile_interval(
            np.where(chosen >= 0, np.append(candidates, _threshold_value(candidates, candidates.size))[chosen], np.nan),
            level,
        )
        | {"distinct": int(np.unique(defined).size)},
        "threshold_resampled": True,
        "n_dev_speakers": dev_speakers,
        "min_dev_speakers": min_dev_speakers,
        "n_dev_trials": int(dev.sum()),
        "n_eval_trials": int(evaluation.sum()),
        "n_mixed_excluded": int((scored & ~dev & ~evaluation).sum()),
        "n_unscored": int((~scored).sum()),
        "n_resamples": draws.weights.rows,
        "seed": draws.seed,
        "level": level,
        "cluster": "development and evaluation speakers, enrolment and test sides (two-way)",
        "n_speakers": int(index.size),
        "subgroups": per_subgroup,
    }


def development_speakers(enrol: NDArray[Any], test: NDArray[Any], labels: NDArray[np.bool_]) -> dict[str, int]:
    """How many speakers stand behind development trials of each class (``MIN_DEV_SPEAKERS`` applies to both): those
    enrolled in a target trial, and those on either side of a non-target trial.

    >>> development_speakers(np.array(["a", "a", "b"]), np.array(["a", "c", "b"]), np.array([True, False, True]))
    {'target': 2, 'nontarget': 2}
    """
    return {
        "target": int(np.unique(enrol[labels].astype(str)).size),
        "nontarget": int(np.unique(np.r_[enrol[~labels], test[~labels]].astype(str)).size),
    }


def _threshold_value(candidates: FloatArray, position: int) -> float:
    """The threshold at candidate ``position``; past the last one, just above every development score."""
    if position < candidates.size:
        return float(candidates[position])
    return float(np.nextafter(candidates[-1], np.inf))  # accept none


def _threshold_indices(
    scores: FloatArray,
    labels: NDArray[np.bool_],
    candidates: FloatArray,
    codes: tuple[IntArray, IntArray | None] | None,
    weights: ResampleWeights | None,
    operating_point: str | float,
) -> IntArray:
    """Per resample (one row of unit weights when ``weights`` is None), the position in ``candidates`` of the
    development threshold: the first with the smallest |FAR - FRR| (``"eer"``), or the first whose FAR does not
    exceed the target (``candidates.size`` when none: accept none); -1 where the resample lacks a class."""
    if operating_point != "eer" and not 0.0 < float(operating_point) < 1.0:
        raise StatisticsInputError(f"a target FAR must lie strictly between 0 and 1, got {operating_point}")
    n = candidates.size
    bins = np.searchsorted(candidates, scores) + np.where(labels, 0, n)  # targets 0..n-1, non-targets n..2n-1
    target_far = None if operating_point == "eer" else float(operating_point)
    if weights is None or codes is None:
        return threshold_positions(np.bincount(bins, minlength=2 * n)[:, None].astype(float), n, target_far)
    return binned_threshold_positions(weights, *codes, bins, n, target_far)


@dataclass(frozen=True)
class _Evaluated:
    """One subgroup's evaluation trials and their speaker codes."""

    scores: FloatArray
    labels: NDArray[np.bool_]
    codes: tuple[IntArray, IntArray]


def _error_rates(
    trials: _Evaluated,
    thresholds: tuple[FloatArray, int, IntArray],
    weights: ResampleWeights,
    level: float,
    eer_method: EerMethod,
    *,
    one_speaker: bool,
) -> dict[str, Any]:
    """FAR and FRR at the development threshold (point: ``thresholds``' point position; draws: each resample's
    own), and the EER, with two-way bootstrap intervals (trial weights x counts)."""
    candidates, point, chosen = thresholds
    scores, labels = trials.scores, trials.labels
    accepted = scores >= _threshold_value(candidates, point)
    counts = [int((~labels & accepted).sum()), int((~labels).sum()), int((labels & ~accepted).sum()), int(labels.sum())]
    # A trial is accepted at candidate position k iff k < (the candidates at or below its score).
    missed, n_target, false_accepts, n_nontarget = weights_at_thresholds(
        weights, *trials.codes, labels, np.searchsorted(candidates, scores, "right"), chosen.clip(min=0)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        far_draws = false_accepts / n_nontarget
        frr_draws = missed / n_target
    far_draws[chosen < 0] = np.nan
    frr_draws[chosen < 0] = np.nan
    result: dict[str, Any] = {
        "n_target": counts[3],
        "n_nontarget": counts[1],
        "far": _rate(counts[0], counts[1], far_draws, level, one_speaker),
        "frr": _rate(counts[2], counts[3], frr_draws, level, one_speaker),
        "eer": None,
    }
    if not (counts[1] and counts[3]):
        return result
    if one_speaker:
        result["eer"] = withheld_interval(eer(scores, labels, eer_method), ONE_SPEAKER)
    else:  # the point EER from its draws' sort, eer()'s bit for bit
        estimate, drawn = eer_and_draws(scores, labels, eer_method, trials.codes[0], trials.codes[1], weights)
        result["eer"] = estimate_with_interval(estimate, drawn, level, corrected=True)
    return result


def _rate(events: int, n: int, draws: FloatArray, level: float, one_speaker: bool) -> dict[str, Any] | None:
    """A rate's estimate and percentile interval (a share of trials at a threshold has no hull optimism to correct;
    on the tests' simulation the bias correction only added its own noise); none for one speaker; with
    ``exact_bound`` (Clopper-Pearson at ``level``, trials taken as independent) when no trial or every trial is an
    event, where the bootstrap of the speakers has nothing to vary."""
    if not n:
        return None
    if one_speaker:
        return withheld_interval(events / n, ONE_SPEAKER)
    result = estimate_with_interval(events / n, draws, level, corrected=False)
    tail = (1.0 - level) / 2.0
    if events == 0:
        bound = 1.0 - tail ** (1.0 / n)
        result["exact_bound"] = {"low": 0.0, "high": bound, "reason": f"0 of {n} trials: Clopper-Pearson upper bound"}
    elif events == n:
        bound = tail ** (1.0 / n)
        result["exact_bound"] = {"low": bound, "high": 1.0, "reason": f"{n} of {n} trials: Clopper-Pearson lower bound"}
    return result
