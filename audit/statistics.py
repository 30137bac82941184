"""Uncertainty and beyond-the-paper statistics for bundles with per-trial scores (issue 7, DESIGN.md 4).

Everything here is pure numpy and returns JSON-able dicts (floats, ints, strings, lists).

**Clusters.** The speaker-cluster bootstrap resamples speakers with replacement and keeps all their trials.
Each trial belongs to exactly one cluster: the caller passes one cluster id per trial, and the audit passes
the trial's *enrolment* speaker. Every trial involves its enrolment speaker, all of a speaker's target trials
share that speaker's voice and recording conditions, and one-way clustering on it is the standard speaker
bootstrap; the remaining dependence through the test speaker of non-target trials is not resampled, so the
intervals are, if anything, slightly narrow (stated in every result as ``cluster``).

**One resample for the four terms.** The four terms of a contrast score the same trial list, so one draw of
cluster multiplicities (a row of the weights matrix) weights the same trials in all four; each term keeps its
own scores. Contrasts on the same trial list with the same seed get the same draws, so family means are
resampled jointly.

**EER variant.** Bootstrap draws and their point estimates use one EER variant of ``audit.metrics``, named
``eer_method`` in every result: ``interp`` (default, the linear crossing of the ROC with ``fpr = fnr``) or
``legacy`` (the paper's routine, for intervals on the published estimand). For a resample, both equal
``audit.metrics.eer`` of the trials repeated as often as their speaker was drawn. ``rocch`` is not offered:
its hull needs a PAV pass per resample.

**Intervals** are percentile intervals of the bootstrap draws (``numpy.quantile``, linear interpolation), at
the declared ``level``; ``n_resamples`` and ``seed`` are recorded beside them. A draw in which a subset has no
target or no non-target trial has no EER: it is counted (``n_undefined``), never filled in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.contrasts import TERMS
from audit.metrics import MetricInputError, eer

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Verdict = Literal["additive within margin", "non-additive", "undetermined"]
BootstrapEerMethod = Literal["interp", "legacy"]

_RESAMPLE_CHUNK_TRIALS = 2_000_000  # weights held at once (rows x trials), about 16 MB of float64


class StatisticsInputError(MetricInputError):
    """Inputs on which a statistic is not defined (mismatched lengths, missing terms, overlapping splits)."""


# --------------------------------------------------------------------------------------------------------
# Speaker-cluster bootstrap of weighted EERs


def cluster_codes(clusters: ArrayLike) -> tuple[IntArray, int]:
    """Integer codes 0..C-1 for per-trial cluster ids (sorted ids, so equal id lists give equal codes)."""
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if codes.size else 0


def draw_cluster_weights(n_clusters: int, n_resamples: int, seed: int) -> FloatArray:
    """(n_resamples, n_clusters) multiplicities: each row draws ``n_clusters`` clusters with replacement."""
    if n_clusters < 2:
        raise StatisticsInputError(f"the bootstrap needs at least 2 speaker clusters, got {n_clusters}")
    if n_resamples < 1:
        raise StatisticsInputError(f"n_resamples must be positive, got {n_resamples}")
    drawn = np.random.default_rng(seed).integers(0, n_clusters, size=(n_resamples, n_clusters))
    drawn += np.arange(n_resamples)[:, None] * n_clusters  # one bincount for all rows
    return np.bincount(drawn.ravel(), minlength=n_resamples * n_clusters).reshape(n_resamples, -1).astype(float)


@dataclass(frozen=True)
class _SortedTrials:
    """One score array's trials, targets and non-targets each sorted by descending score, and for every
    distinct threshold (descending) how many of each score at or above it."""

    target_cluster: IntArray
    nontarget_cluster: IntArray
    targets_at_or_above: IntArray  # per distinct threshold
    nontargets_at_or_above: IntArray

    @classmethod
    def of(cls, scores: FloatArray, labels: NDArray[np.bool_], clusters: IntArray) -> _SortedTrials:
        target_scores, nontarget_scores = scores[labels], scores[~labels]
        target_order = np.argsort(-target_scores, kind="stable")
        nontarget_order = np.argsort(-nontarget_scores, kind="stable")
        thresholds = np.unique(scores)[::-1]
        ascending_targets = np.sort(target_scores)
        ascending_nontargets = np.sort(nontarget_scores)
        return cls(
            target_cluster=clusters[labels][target_order],
            nontarget_cluster=clusters[~labels][nontarget_order],
            targets_at_or_above=target_scores.size - np.searchsorted(ascending_targets, thresholds, "left"),
            nontargets_at_or_above=nontarget_scores.size - np.searchsorted(ascending_nontargets, thresholds, "left"),
        )


def weighted_eer(
    scores: ArrayLike,
    labels: ArrayLike,
    clusters: IntArray,
    weights: FloatArray,
    method: BootstrapEerMethod = "interp",
) -> FloatArray:
    """The EER of each row of cluster ``weights`` (rows x clusters); NaN where a class weighs 0.

    A row of integer weights is a resample: each trial counts as often as its cluster was drawn, and the
    result equals ``audit.metrics.eer`` of the trials repeated that often (tested). Weighted ROC points come
    from cumulative weights over each class sorted once; the crossing with ``fpr = fnr`` is found per row by a
    vectorised binary search over thresholds (the exact integer test ``fps * P + tps * N >= P * N``).
    ``interp`` then interpolates from the point before it; ``legacy`` walks to the nearest points that
    ``roc_curve`` keeps on either side (see ``_WeightedRoc.legacy``).
    """
    if method not in ("interp", "legacy"):
        raise StatisticsInputError(f"unknown bootstrap EER method {method!r}: expected interp or legacy")
    score_array = np.asarray(scores, dtype=float)
    label_array = np.asarray(labels).astype(bool)
    trials = _SortedTrials.of(score_array, label_array, clusters)
    rows = weights.shape[0]
    chunk = max(1, _RESAMPLE_CHUNK_TRIALS // max(1, score_array.size))
    result = np.empty(rows)
    for start in range(0, rows, chunk):  # a loop over blocks of resamples, bounded memory
        block = weights[start : start + chunk]
        roc = _WeightedRoc(
            _cumulative(block, trials.target_cluster), _cumulative(block, trials.nontarget_cluster), trials
        )
        result[start : start + chunk] = roc.legacy() if method == "legacy" else roc.interp()
    return result


def _cumulative(weights: FloatArray, sorted_clusters: IntArray) -> FloatArray:
    """Per row, cumulative weight of the sorted trials, with a leading 0 column."""
    out = np.zeros((weights.shape[0], sorted_clusters.size + 1))
    np.cumsum(weights[:, sorted_clusters], axis=1, out=out[:, 1:])
    return out


class _WeightedRoc:
    """Weighted ROC points of a block of resamples at every distinct threshold (descending), one row each.

    A threshold whose trials all weigh 0 in a row repeats the previous point there; the points ``roc_curve``
    would see for the resampled trials are the distinct ones ("present"). Cumulative weight is monotone in
    the threshold, so every search below is a vectorised binary search.
    """

    def __init__(self, target_cum: FloatArray, nontarget_cum: FloatArray, trials: _SortedTrials) -> None:
        self.target_cum = target_cum
        self.nontarget_cum = nontarget_cum
        self.trials = trials
        self.rows = np.arange(target_cum.shape[0])
        self.last = trials.targets_at_or_above.size - 1
        self.n_target = target_cum[:, -1]
        self.n_nontarget = nontarget_cum[:, -1]

    def point(self, threshold: IntArray) -> tuple[FloatArray, FloatArray]:
        """(tps, fps) per row at the given threshold index per row."""
        return (
            self.target_cum[self.rows, self.trials.targets_at_or_above[threshold]],
            self.nontarget_cum[self.rows, self.trials.nontargets_at_or_above[threshold]],
        )

    def total(self, threshold: IntArray) -> FloatArray:
        tps, fps = self.point(threshold)
        return tps + fps

    def first_where(self, low: IntArray, test: Callable[[IntArray], NDArray[np.bool_]]) -> IntArray:
        """Per row, the first threshold at or after ``low`` where ``test`` (monotone) holds, else the last."""
        high = np.full(self.rows.size, self.last)
        low = np.minimum(low, high)
        while np.any(low < high):
            middle = (low + high) // 2
            holds = test(middle)
            high = np.where(holds, middle, high)
            low = np.where(holds, low, middle + 1)
        return np.minimum(low, self.last)  # past the last where the test never holds

    def crossing(self) -> IntArray:
        """First threshold with fpr >= fnr (it holds at the last one)."""
        goal = self.n_target * self.n_nontarget

        def reached(threshold: IntArray) -> NDArray[np.bool_]:
            tps, fps = self.point(threshold)
            return fps * self.n_target + tps * self.n_nontarget >= goal

        return self.first_where(np.zeros(self.rows.size, dtype=np.int64), reached)

    def rates(self, threshold: IntArray) -> tuple[FloatArray, FloatArray]:
        """(fpr, fnr) with roc_curve's arithmetic."""
        tps, fps = self.point(threshold)
        with np.errstate(divide="ignore", invalid="ignore"):
            return fps / self.n_nontarget, 1 - tps / self.n_target

    def defined(self, values: FloatArray) -> FloatArray:
        return np.where((self.n_target > 0) & (self.n_nontarget > 0), values, np.nan)

    def interp(self) -> FloatArray:
        """Linear crossing from the point before the crossing ((0, 0) if none weighs anything)."""
        after = self.crossing()
        fpr, fnr = self.rates(after)
        fpr_before, fnr_before = self.rates(np.maximum(after - 1, 0))
        has_before = after > 0
        fpr_before = np.where(has_before, fpr_before, 0.0)
        side_before = np.where(has_before, fpr_before - fnr_before, -1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            side = fpr - fnr
            return self.defined(fpr_before + (fpr - fpr_before) * (-side_before / (side - side_before)))

    def legacy(self) -> FloatArray:
        """roc_curve's kept points nearest the crossing on either side, the first smaller |fnr - fpr| of the
        two, mean of the rates (the prepended (0, 0) counts before every point, with gap 1 and value 0.5).

        |fnr - fpr| falls strictly along the present points up to the crossing and rises after it, so the
        answer is the last kept point before the crossing or the first kept one at or after it.
        """
        after = self.crossing()  # present: a repeated point would have crossed already
        while not np.all(kept := self.kept(after)):
            after = np.where(kept, after, self.next_present(after)[0])
        before, at_origin = self.previous_present(after)
        while not np.all(done := at_origin | self.kept(before)):
            earlier, origin = self.previous_present(before)
            before = np.where(done, before, earlier)
            at_origin |= ~done & origin
        fpr, fnr = self.rates(after)
        fpr_before, fnr_before = self.rates(before)
        fpr_before = np.where(at_origin, 0.0, fpr_before)
        fnr_before = np.where(at_origin, 1.0, fnr_before)
        take_before = np.abs(fnr_before - fpr_before) <= np.abs(fnr - fpr)
        return self.defined(np.where(take_before, (fpr_before + fnr_before) / 2, (fpr + fnr) / 2))

    def next_present(self, threshold: IntArray) -> tuple[IntArray, NDArray[np.bool_]]:
        """The next threshold adding weight after ``threshold``, and whether there is one."""
        total = self.total(threshold)
        following = self.first_where(threshold + 1, lambda t: self.total(t) > total)
        return following, self.total(following) > total

    def previous_present(self, threshold: IntArray) -> tuple[IntArray, NDArray[np.bool_]]:
        """A threshold at the present point before ``threshold``'s, and whether there is none (origin)."""
        total = self.total(threshold)
        first = self.first_where(np.zeros(self.rows.size, dtype=np.int64), lambda t: self.total(t) >= total)
        earlier = np.maximum(first - 1, 0)
        return earlier, (first == 0) | (self.total(earlier) == 0)

    def kept(self, threshold: IntArray) -> NDArray[np.bool_]:
        """roc_curve keeps a point unless it lies midway between its present neighbours (equal steps)."""
        tps, fps = self.point(threshold)
        earlier, no_earlier = self.previous_present(threshold)
        following, has_following = self.next_present(threshold)
        tps_before, fps_before = self.point(earlier)
        tps_after, fps_after = self.point(following)
        midway = (2 * tps == tps_before + tps_after) & (2 * fps == fps_before + fps_after)
        return no_earlier | ~has_following | ~midway


def percentile_interval(draws: FloatArray, level: float) -> dict[str, Any]:
    """Percentile interval of the defined draws, with how many draws were undefined (NaN)."""
    defined = draws[np.isfinite(draws)]
    tail = (1.0 - level) / 2.0
    if defined.size == 0:
        return {"low": None, "high": None, "n_undefined": int(draws.size)}
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return {"low": float(low), "high": float(high), "n_undefined": int(draws.size - defined.size)}


# --------------------------------------------------------------------------------------------------------
# Contrasts


@dataclass(frozen=True)
class ContrastInput:
    """One contrast with per-trial scores: the four terms score the same trials (in the same order).

    ``scores`` maps each of ``clean``, ``a``, ``b``, ``ab`` to its score array (NaN where a trial was not
    scored); ``labels`` (1 target, 0 non-target) and ``clusters`` (the enrolment speaker of each trial) are
    shared. ``subgroups`` (optional, e.g. the enrolment speaker's gender) gives per-subgroup EERs and gaps.
    ``key`` identifies the contrast in the report (experiment, model, corpus, factor levels...); ``family`` is
    the group of contrasts a family verdict covers (e.g. the experiment); ``held_out`` marks settings declared
    held out before the run.
    """

    key: Mapping[str, str]
    family: str
    scores: Mapping[str, ArrayLike]
    labels: ArrayLike
    clusters: ArrayLike
    subgroups: ArrayLike | None = None
    held_out: bool = False
    model: str = ""


@dataclass
class _ContrastDraws:
    """Bootstrap draws of one contrast (one row per resample) and its point estimates."""

    estimate: dict[str, float]
    draws: dict[str, FloatArray]
    summary: dict[str, Any]


def _contrast_values(terms: Mapping[str, Any]) -> dict[str, Any]:
    prediction = terms["a"] + terms["b"] - terms["clean"]
    return {**terms, "prediction": prediction, "ie": terms["ab"] - prediction}


def _scored_trials(contrast: ContrastInput) -> tuple[dict[str, FloatArray], FloatArray, Any, Any, int]:
    """The trials scored in all four terms, and how many were dropped because a term did not score them."""
    missing = [term for term in TERMS if term not in contrast.scores]
    if missing:
        raise StatisticsInputError(f"contrast {dict(contrast.key)}: missing term(s) {', '.join(missing)}")
    labels = np.asarray(contrast.labels)
    clusters = np.asarray(contrast.clusters)
    scores = {term: np.asarray(contrast.scores[term], dtype=float) for term in TERMS}
    subgroups = None if contrast.subgroups is None else np.asarray(contrast.subgroups)
    lengths = {labels.size, clusters.size, *(s.size for s in scores.values())}
    if subgroups is not None:
        lengths.add(subgroups.size)
    if len(lengths) != 1:
        raise StatisticsInputError(
            f"contrast {dict(contrast.key)}: the four terms, labels, clusters and subgroups must cover the "
            f"same trials, got lengths {sorted(lengths)}"
        )
    scored = np.logical_and.reduce([np.isfinite(s) for s in scores.values()])
    kept = {term: s[scored] for term, s in scores.items()}
    kept_subgroups = None if subgroups is None else subgroups[scored]
    return kept, labels[scored], clusters[scored], kept_subgroups, int(scored.size - scored.sum())


def bootstrap_contrast(
    contrast: ContrastInput,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    eer_method: BootstrapEerMethod = "interp",
) -> dict[str, Any]:
    """Point estimates and speaker-cluster bootstrap intervals for one contrast: each term's EER, the
    prediction, IE and (with subgroups) per-subgroup EERs and gaps. JSON-able; see the module docstring."""
    return _bootstrap_contrast(contrast, n_resamples, seed, level, eer_method).summary


def _bootstrap_contrast(
    contrast: ContrastInput, n_resamples: int, seed: int, level: float, eer_method: BootstrapEerMethod
) -> _ContrastDraws:
    scores, labels, clusters, subgroups, n_unscored = _scored_trials(contrast)
    codes, n_clusters = cluster_codes(clusters)
    weights = draw_cluster_weights(n_clusters, n_resamples, seed)
    try:
        estimate = _contrast_values({term: eer(scores[term], labels, eer_method) for term in TERMS})
    except MetricInputError as error:
        raise StatisticsInputError(f"contrast {dict(contrast.key)}: {error}") from error
    draws = _contrast_values({term: weighted_eer(scores[term], labels, codes, weights, eer_method) for term in TERMS})
    summary: dict[str, Any] = {
        "key": dict(contrast.key),
        "family": contrast.family,
        "model": contrast.model,
        "held_out": contrast.held_out,
        "eer_method": eer_method,
        "cluster": "enrolment speaker",
        "n_trials": int(labels.size),
        "n_unscored_dropped": n_unscored,
        "n_clusters": n_clusters,
        "n_resamples": n_resamples,
        "seed": seed,
        "level": level,
        "estimates": {name: _interval(estimate[name], draws[name], level) for name in estimate},
    }
    if subgroups is not None:
        summary["subgroups"] = _subgroup_gaps(scores, labels, codes, subgroups, weights, level, eer_method)
    return _ContrastDraws(estimate=estimate, draws=draws, summary=summary)


def _interval(estimate: float, draws: FloatArray, level: float) -> dict[str, Any]:
    return {"estimate": float(estimate), **percentile_interval(draws, level)}


def _subgroup_gaps(
    scores: Mapping[str, FloatArray],
    labels: Any,
    codes: IntArray,
    subgroups: Any,
    weights: FloatArray,
    level: float,
    eer_method: BootstrapEerMethod,
) -> dict[str, Any]:
    """Per term, each subgroup's EER and its signed gap to the first subgroup (sorted), plus the range
    (largest minus smallest subgroup EER), all with intervals from the same resamples. A subgroup whose EER
    is undefined in some term (one class, constant scores) is left out of every term and listed with why."""
    as_text = np.asarray([str(name) for name in subgroups])
    estimates: dict[str, dict[str, float]] = {term: {} for term in TERMS}
    undefined: dict[str, str] = {}
    for name in sorted(set(as_text.tolist())):
        member = as_text == name
        try:
            values = {term: eer(scores[term][member], labels[member], eer_method) for term in TERMS}
        except MetricInputError as error:
            undefined[name] = str(error)
            continue
        for term, value in values.items():
            estimates[term][name] = value
    names = sorted(estimates["clean"])
    result: dict[str, Any] = {"reference": names[0] if names else None, "undefined": undefined, "terms": {}}
    for term in TERMS if names else ():
        draws = {}
        for name in names:
            member = as_text == name
            draws[name] = weighted_eer(scores[term][member], labels[member], codes[member], weights, eer_method)
        stacked = np.vstack([draws[name] for name in names])
        point = np.array([estimates[term][name] for name in names])
        reference = names[0]
        result["terms"][term] = {
            "eer": {name: _interval(estimates[term][name], draws[name], level) for name in names},
            "gap_to_reference": {
                name: _interval(
                    estimates[term][name] - estimates[term][reference], draws[name] - draws[reference], level
                )
                for name in names[1:]
            },
            "range": _interval(point.max() - point.min(), stacked.max(axis=0) - stacked.min(axis=0), level),
        }
    return result


# --------------------------------------------------------------------------------------------------------
# Equivalence to additivity (TOST)


def tost_verdict(ie_draws: FloatArray, margin: float, alpha: float = 0.05) -> dict[str, Any]:
    """Two one-sided tests of ``|IE| < margin`` from bootstrap draws of IE, with these rules:

    - bootstrap p-values ``p_below = share of draws >= margin`` (for H0: IE >= margin) and
      ``p_above = share of draws <= -margin`` (for H0: IE <= -margin); ``p_tost = max`` of the two;
    - ``additive within margin`` when ``p_tost < alpha``: the ``1 - 2*alpha`` percentile interval lies
      inside ``(-margin, margin)``;
    - ``non-additive`` when that interval lies entirely outside ``[-margin, margin]`` (the interaction exceeds
      the margin with one-sided confidence ``1 - alpha``);
    - ``undetermined`` otherwise, including every interval that crosses a margin bound, however close the
      mean is to 0: a small mean is never called equivalence.
    """
    if not margin > 0:
        raise StatisticsInputError(f"the equivalence margin must be positive, got {margin}")
    defined = ie_draws[np.isfinite(ie_draws)]
    if defined.size == 0:
        return {"verdict": "undetermined", "margin": margin, "alpha": alpha, "reason": "no defined draws"}
    low, high = np.quantile(defined, [alpha, 1.0 - alpha])
    p_below = float(np.mean(defined >= margin))
    p_above = float(np.mean(defined <= -margin))
    verdict: Verdict
    if -margin < low and high < margin:
        verdict = "additive within margin"
    elif low > margin or high < -margin:
        verdict = "non-additive"
    else:
        verdict = "undetermined"
    return {
        "verdict": verdict,
        "margin": margin,
        "alpha": alpha,
        "interval": [float(low), float(high)],
        "interval_level": 1.0 - 2.0 * alpha,
        "p_tost": max(p_below, p_above),
        "n_draws": int(defined.size),
    }


# --------------------------------------------------------------------------------------------------------
# Fixed-threshold subgroup analysis


@dataclass(frozen=True)
class FixedThresholdInput:
    """One record's trials for a common-threshold analysis: scores, labels, enrolment and test speakers and a
    subgroup per trial, plus the development speakers (disjoint from the evaluation speakers)."""

    key: Mapping[str, str]
    scores: ArrayLike
    labels: ArrayLike
    enrol_speaker: ArrayLike
    test_speaker: ArrayLike
    subgroups: ArrayLike
    dev_speakers: Sequence[str]


def fixed_threshold_analysis(
    record: FixedThresholdInput,
    *,
    operating_point: Literal["eer"] | float = "eer",
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    eer_method: BootstrapEerMethod = "interp",
) -> dict[str, Any]:
    """FAR and FRR per subgroup at one threshold chosen on development speakers.

    Development trials are those whose enrolment and test speakers are both development speakers;
    evaluation trials have neither; trials mixing the two are excluded and counted. The threshold (accept
    ``score >= threshold``) is the development threshold where |FAR - FRR| is smallest (``"eer"``) or the
    lowest one whose development FAR does not exceed ``operating_point`` (a target FAR). Intervals come from
    the speaker-cluster bootstrap of the evaluation trials (clusters: enrolment speakers). Per-subgroup
    EERs (``eer_method``) on the evaluation trials are reported beside them, as the paper's gaps.
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
    codes, n_clusters = cluster_codes(enrol[evaluation])
    if n_clusters < 2:
        raise StatisticsInputError(f"record {dict(record.key)}: fewer than 2 evaluation enrolment speakers")
    weights = draw_cluster_weights(n_clusters, n_resamples, seed)
    eval_scores, eval_labels, eval_groups = scores[evaluation], labels[evaluation], subgroups[evaluation]
    per_subgroup: dict[str, Any] = {}
    for name in sorted(set(eval_groups.tolist())):
        member = eval_groups == name
        per_subgroup[name] = _error_rates(
            eval_scores[member], eval_labels[member], codes[member], n_clusters, threshold, weights, level, eer_method
        )
    return {
        "key": dict(record.key),
        "operating_point": operating_point,
        "threshold": threshold,
        "n_dev_trials": int(dev.sum()),
        "n_eval_trials": int(evaluation.sum()),
        "n_mixed_excluded": int((scored & ~dev & ~evaluation).sum()),
        "n_unscored": int((~scored).sum()),
        "n_resamples": n_resamples,
        "seed": seed,
        "level": level,
        "cluster": "enrolment speaker",
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
    codes: IntArray,
    n_clusters: int,
    threshold: float,
    weights: FloatArray,
    level: float,
    eer_method: BootstrapEerMethod,
) -> dict[str, Any]:
    """FAR, FRR at the threshold and the EER, with bootstrap intervals (per-cluster counts x weights)."""
    accepted = scores >= threshold
    counted = (~labels & accepted, ~labels, labels & ~accepted, labels)  # false accepts, non-targets, ...
    per_cluster = np.column_stack([np.bincount(codes, weights=c, minlength=n_clusters) for c in counted])
    totals = weights @ per_cluster
    point = per_cluster.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        far_draws, frr_draws = totals[:, 0] / totals[:, 1], totals[:, 2] / totals[:, 3]
    result: dict[str, Any] = {
        "n_target": int(point[3]),
        "n_nontarget": int(point[1]),
        "far": _interval(point[0] / point[1], far_draws, level) if point[1] else None,
        "frr": _interval(point[2] / point[3], frr_draws, level) if point[3] else None,
        "eer": None,
    }
    if point[1] and point[3] and np.unique(scores).size > 1:
        result["eer"] = _interval(
            eer(scores, labels, eer_method), weighted_eer(scores, labels, codes, weights, eer_method), level
        )
    return result


# --------------------------------------------------------------------------------------------------------
# Held-out validation of additive predictions


def held_out_validation(
    contrasts: Sequence[Mapping[str, Any]], acceptable_error: float, *, worst: int = 5
) -> dict[str, Any]:
    """Per model, the distribution of prediction errors (observed EER(A+B) minus the additive prediction,
    i.e. IE) over the held-out settings only: nothing is fitted, the prediction has no parameters.

    Each contrast is a mapping with ``model``, ``held_out`` (bool), ``prediction``, ``observed`` and ``key``.
    Reports n, quantiles (5, 25, 50, 75, 95 %), the mean absolute error, the share within the predeclared
    ``acceptable_error``, and the ``worst`` settings by absolute error.
    """
    if not acceptable_error > 0:
        raise StatisticsInputError(f"the acceptable error must be positive, got {acceptable_error}")
    by_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for contrast in contrasts:
        if contrast["held_out"]:
            by_model[str(contrast["model"])].append(contrast)
    models: dict[str, Any] = {}
    for model, rows in sorted(by_model.items()):
        errors = np.array([row["observed"] - row["prediction"] for row in rows], dtype=float)
        order = np.argsort(-np.abs(errors), kind="stable")[:worst]
        quantiles = np.quantile(errors, [0.05, 0.25, 0.5, 0.75, 0.95])
        models[model] = {
            "n": int(errors.size),
            "quantiles": dict(zip(("q05", "q25", "q50", "q75", "q95"), map(float, quantiles), strict=True)),
            "mean_absolute_error": float(np.mean(np.abs(errors))),
            "share_within_acceptable": float(np.mean(np.abs(errors) <= acceptable_error)),
            "worst": [{"key": dict(rows[i]["key"]), "error": float(errors[i])} for i in order],
        }
    return {
        "acceptable_error": acceptable_error,
        "n_held_out": sum(len(rows) for rows in by_model.values()),
        "n_not_held_out": sum(1 for contrast in contrasts if not contrast["held_out"]),
        "models": models,
    }


# --------------------------------------------------------------------------------------------------------
# Coupling of IE and prediction


def coupling_under_additivity(
    estimates: Sequence[Mapping[str, float]], draws: Sequence[Mapping[str, FloatArray]], level: float = 0.95
) -> dict[str, Any]:
    """Observed correlation of IE with the prediction across contrasts, beside the correlation expected when
    every contrast is exactly additive and only the trial noise of the bootstrap remains.

    IE = EER(A+B) - prediction shares the prediction's terms with the opposite sign, so noise alone makes
    them negatively correlated. Simulation: each contrast's true terms are its measured clean, A and B EERs
    with EER(A+B) set to their additive value; draw ``s`` adds that contrast's bootstrap deviations of the
    four terms (draw ``s`` minus the mean of its draws, jointly, so the terms keep their shared-trial
    dependence); the correlation across contrasts is computed per draw.
    """
    if len(estimates) < 3:
        return {"n_contrasts": len(estimates), "observed": None, "expected_under_additivity": None}
    point = {term: np.array([e[term] for e in estimates]) for term in TERMS}
    observed = _correlation(*_prediction_and_ie(point))
    additive = {**point, "ab": point["a"] + point["b"] - point["clean"]}
    simulated = {}
    for term in TERMS:
        stacked = np.vstack([d[term] for d in draws])  # contrasts x resamples
        deviation = stacked - np.nanmean(stacked, axis=1, keepdims=True)
        simulated[term] = additive[term][:, None] + deviation
    prediction, ie = _prediction_and_ie(simulated)
    correlations = np.array(
        [_correlation(prediction[:, s], ie[:, s]) for s in range(prediction.shape[1])], dtype=float
    )  # NaN where a draw is undefined or has no spread: counted as n_undefined
    defined = correlations[np.isfinite(correlations)]
    return {
        "n_contrasts": len(estimates),
        "observed": observed,
        "expected_under_additivity": {
            "median": float(np.median(defined)) if defined.size else None,
            **percentile_interval(correlations, level),
            "n_simulations": int(defined.size),
        },
    }


def _prediction_and_ie(terms: Mapping[str, FloatArray]) -> tuple[FloatArray, FloatArray]:
    values = _contrast_values(dict(terms))
    return values["prediction"], values["ie"]


def _correlation(x: FloatArray, y: FloatArray) -> float | None:
    """Pearson correlation; None when either side is undefined or has no spread (strict JSON has no NaN)."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))) or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


# --------------------------------------------------------------------------------------------------------
# Entry point for the audit of a bundle


def bundle_statistics(
    contrasts: Sequence[ContrastInput],
    *,
    margin: float,
    acceptable_error: float | None = None,
    fixed_threshold: Sequence[FixedThresholdInput] = (),
    operating_point: Literal["eer"] | float = "eer",
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    alpha: float = 0.05,
    eer_method: BootstrapEerMethod = "interp",
) -> dict[str, Any]:
    """Every issue-7 statistic of a bundle, JSON-able, for ``report.json`` (section ``statistics``).

    ``contrasts``: one :class:`ContrastInput` per contrast with per-trial scores (four terms' score arrays,
    shared labels, enrolment-speaker clusters, optional subgroups, family, held-out marker). ``margin``: the
    practical equivalence margin declared before the run (EER units). ``acceptable_error``: the predeclared
    error for held-out predictions (held-out validation is skipped when None). ``fixed_threshold``: records
    for the common-threshold subgroup analysis.
    """
    contrast_draws = [_bootstrap_contrast(c, n_resamples, seed, level, eer_method) for c in contrasts]
    summaries = [{**r.summary, "tost": tost_verdict(r.draws["ie"], margin, alpha)} for r in contrast_draws]
    families: dict[str, list[int]] = defaultdict(list)
    for index, contrast in enumerate(contrasts):
        families[contrast.family].append(index)
    family_results = {}
    for family, members in sorted(families.items()):
        mean_ie = np.mean(np.vstack([contrast_draws[i].draws["ie"] for i in members]), axis=0)
        mean_estimate = float(np.mean([contrast_draws[i].estimate["ie"] for i in members]))
        verdicts = [summaries[i]["tost"]["verdict"] for i in members]
        family_results[family] = {
            "n_contrasts": len(members),
            "mean_ie": _interval(mean_estimate, mean_ie, level),
            "tost": tost_verdict(mean_ie, margin, alpha),
            "contrast_verdicts": {
                v: verdicts.count(v) for v in ("additive within margin", "non-additive", "undetermined")
            },
        }
    result: dict[str, Any] = {
        "eer_method": eer_method,
        "cluster": "enrolment speaker",
        "n_resamples": n_resamples,
        "seed": seed,
        "level": level,
        "margin": margin,
        "alpha": alpha,
        "contrasts": summaries,
        "families": family_results,
        "coupling": coupling_under_additivity(
            [r.estimate for r in contrast_draws], [r.draws for r in contrast_draws], level
        ),
    }
    if acceptable_error is not None:
        result["held_out"] = held_out_validation(
            [
                {
                    "model": c.model,
                    "held_out": c.held_out,
                    "prediction": r.estimate["prediction"],
                    "observed": r.estimate["ab"],
                    "key": c.key,
                }
                for c, r in zip(contrasts, contrast_draws, strict=True)
            ],
            acceptable_error,
        )
    result["fixed_threshold"] = [
        fixed_threshold_analysis(
            record,
            operating_point=operating_point,
            n_resamples=n_resamples,
            seed=seed,
            level=level,
            eer_method=eer_method,
        )
        for record in fixed_threshold
    ]
    return result
