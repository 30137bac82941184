"""Paired encoder comparisons (issue 41): which encoders a run can tell apart, and the smallest difference it could.

**Paired differences.** A setting is one experiment, corpus, condition and subgroup whose encoders scored one trial
list. Every pair of its encoders gets the EER difference (in the statistics' EER variant) with the percentile
interval of the two-way speaker bootstrap on the *same draws* for both (``SpeakerDraws``, shared with every
contrast; a trial is kept when every encoder of the setting scored it, so the pairs stay paired), and the two-sided
bootstrap p-value ``min(1, 2 min(share of draws <= 0, share of draws >= 0))``. Holm's step-down procedure runs over a
family declared before the run (``[analysis] ranking_family``: the pairs of one condition, or of one experiment's
conditions; never chosen after seeing results); a pair is "separable" only where Holm rejects at familywise
``alpha``.

**Minimum detectable difference (MDD)**, by simulation on this run's own draws (its speakers, trials and encoders):
each resample's deviation of a pair's difference from the draws' mean is one simulated data set's estimation error,
and that data set's bootstrap draws are the centred draws moved to its simulated estimate (the scheme of
``audit.statistics.equivalence.family_power``). A pair's MDD is the smallest true difference at which its p-value
falls below Holm's first-step level ``alpha / k`` (k pairs in the family: enough for Holm to reject it, whatever the
other pairs do) with the right sign ``POWER`` of the time (``minimum_detectable_differences``, order statistics of
the draws, no search); a family's MDD is the median over its pairs. Below it a difference is more likely missed than
found; "not separable" says no more than that.

**Macro ranking** (the paper's Table 7 definition): per encoder, the mean over experiments of the mean over their
conditions of the records' EERs, computed on every draw alike (a record undefined in a draw, a class drawn with no
weight, is left out of that draw's means and counted), so each pair's macro difference has an interval, a p-value
and a Holm decision over all macro pairs. A single encoder's macro gets no interval: the EER's small resampling bias
adds up over the records (the draws of a macro over hundreds of records all lay to one side of it in a rehearsal of
the paper's registry), while on a difference of two encoders scored on the same trials it largely cancels.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics import MetricInputError
from audit.statistics.contrasts import (
    ContrastInput,
    DrawCache,
    SpeakerDraws,
    TermTrials,
    _eer_and_draws,
    _kept,
    _n_speakers,
    estimate_with_interval,
    scored_trials,
)
from audit.statistics.draws import FloatArray, IntArray, StatisticsInputError, bias_corrected_rows, sorted_quantiles
from audit.statistics.equivalence import POWER, holm_rejections
from schemas import EerMethod, count, format_number

MACRO_FAMILY = "macro (paper Table 7)"
ALL_TRIALS = "all trials"  # the draw cache's part of a record's draws over its kept trials (the contrasts' too)
RANKING_RULE = (
    "a pair is 'separable' where Holm's step-down procedure over its declared family rejects 'equal EERs' at "
    "familywise alpha (two-sided bootstrap p-values of the paired difference on shared speaker draws)"
)


@dataclass(frozen=True)
class RankingInput:
    """One setting's encoders on one trial list: ``scores`` maps each encoder to its per-trial scores (NaN where not
    scored), in the order of ``labels`` (1 target, 0 non-target), ``enrol_speaker`` and ``test_speaker`` (None: one-way
    clustering on the enrolment speaker). ``key`` names the setting (experiment, corpus, condition, subgroup...);
    ``records`` (encoder -> record id) lets a record's draws be computed once per audit."""

    key: Mapping[str, str]
    scores: Mapping[str, ArrayLike]
    labels: ArrayLike
    enrol_speaker: ArrayLike
    test_speaker: ArrayLike | None = None
    records: Mapping[str, str] | None = None

    def family(self, declared: str) -> str:
        """The Holm family this setting's pairs belong to under ``[analysis] ranking_family``."""
        if declared == "experiment":
            return str(self.key.get("experiment", ""))
        return setting_name(self.key)


def setting_name(key: Mapping[str, str]) -> str:
    """``D01/asterisk/pink-10dB``: the key's non-empty values."""
    return "/".join(str(value) for value in key.values() if value)


@dataclass(frozen=True)
class _Drawn:
    """One setting's per-encoder EER estimates and draws, on its paired trials."""

    setting: RankingInput
    estimates: dict[str, float]
    draws: dict[str, FloatArray]
    n_trials: int
    n_dropped: int
    n_speakers: int


def _drawn(
    setting: RankingInput,
    shared: SpeakerDraws,
    eer_method: EerMethod,
    cache: DrawCache,
    skip: Collection[tuple[str, str, int, bytes]] = frozenset(),
) -> _Drawn:
    """The setting's encoders' EERs and draws on the trials every one of them scored (through ``cache``); an encoder
    whose draws' cache key is in ``skip`` is left out (``ranking_draws``: draws another process makes)."""
    scores = {model: np.asarray(values, dtype=float) for model, values in setting.scores.items()}
    labels, enrol = np.asarray(setting.labels), np.asarray(setting.enrol_speaker)
    test = None if setting.test_speaker is None else np.asarray(setting.test_speaker)
    sizes = {labels.size, enrol.size, *(values.size for values in scores.values())}
    sizes |= set() if test is None else {test.size}
    if len(sizes) != 1:
        raise StatisticsInputError(
            f"setting {setting_name(setting.key)}: scores, labels and speakers must cover the same trials, got "
            f"lengths {sorted(sizes)}"
        )
    kept = np.logical_and.reduce([np.isfinite(values) for values in scores.values()])
    enrol_kept, test_kept = _kept(enrol, kept), _kept(test, kept)
    # the whole columns' codes (found once per trial list, which many settings share), then the kept trials'
    enrol_codes, partner_codes = shared.codes(enrol, test)
    codes = (_kept(enrol_codes, kept), _kept(partner_codes, kept))
    labels_kept = np.asarray(_kept(labels, kept)).astype(bool)
    records = setting.records or {}
    estimates, draws = {}, {}
    for model, values in sorted(scores.items()):
        record, scores_kept = records.get(model), _kept(values, kept)
        if record is not None and skip and DrawCache.key(record, ALL_TRIALS, scores_kept) in skip:
            continue
        trials = TermTrials(
            scores=scores_kept,
            labels=labels_kept,
            enrol=enrol_kept,
            test=test_kept,
            subgroups=None,
            all_scored=bool(kept.sum() == np.isfinite(values).sum()),
        )
        try:
            estimates[model], draws[model] = cache.get(
                record, ALL_TRIALS, trials.scores, _eer_and_draws, trials, *codes, shared.weights,
                eer_method, None,
            )  # fmt: skip
        except MetricInputError as error:
            raise StatisticsInputError(f"setting {setting_name(setting.key)}, encoder {model}: {error}") from error
    return _Drawn(
        setting, estimates, draws, int(kept.sum()), int(kept.size - kept.sum()), _n_speakers([codes], shared.index.size)
    )


def ranking_draws(
    settings: Sequence[RankingInput], shared: SpeakerDraws, eer_method: EerMethod, contrasts: Sequence[ContrastInput]
) -> DrawCache:
    """The draws of every ranked record's trials that no contrast term draws (same record, same kept trials), in a
    cache the rankings then read: run beside the contrasts (``schemas.Forked``), so that each record's
    draws are made once per audit. A setting the rankings cannot use is left to ``paired_rankings`` to report."""
    drawn_by_contrasts = set()
    for contrast in contrasts:
        if contrast.records is not None:
            for term, trials in scored_trials(contrast)[0].items():
                drawn_by_contrasts.add(DrawCache.key(contrast.records[term], ALL_TRIALS, trials.scores))
    cache = DrawCache()
    for setting in settings:
        try:
            _drawn(setting, shared, eer_method, cache, drawn_by_contrasts)
        except StatisticsInputError:
            continue
    return cache


def two_sided_p(differences: FloatArray) -> float:
    """Bootstrap p-value of "no difference": twice the smaller share of defined draws on either side of 0 (at most 1).

    >>> two_sided_p(np.array([0.1, 0.2, 0.3, -0.1])), two_sided_p(np.zeros(3))
    (0.5, 1.0)
    """
    defined = differences[np.isfinite(differences)]
    if defined.size == 0:
        return 1.0
    return min(1.0, 2.0 * min(float(np.mean(defined <= 0)), float(np.mean(defined >= 0))))


def p_text(p_value: float, n_resamples: int) -> str:
    """A bootstrap p-value as text; 0 (no draw on the other side of 0) as below the smallest it can resolve, 2 / R.

    >>> p_text(0.0312, 1000), p_text(0.0, 1000)
    ('0.031', '< 0.002')
    """
    return f"< {format_number(2.0 / n_resamples, 3)}" if p_value == 0 else format_number(p_value, 3)


def _pairs(
    estimates: Mapping[str, float], draws: Mapping[str, FloatArray], level: float
) -> tuple[list[dict[str, Any]], FloatArray, FloatArray]:
    """Every pair of encoders (the better first), its difference with its percentile interval and p-value, and its
    draws as the MDD reads them: ascending (undefined ones NaN, last; sorted once, for the quantiles too) and their
    means. Quantiles and shares come from calls over the stacked draws (the same values as
    ``estimate_with_interval`` and ``two_sided_p`` row by row: tested); a pair without a defined draw from those."""
    order = sorted(estimates, key=lambda model: (estimates[model], model))
    pairs = list(itertools.combinations(order, 2))
    if not pairs:
        return [], np.empty((0, 0)), np.empty(0)
    first, second = (np.array(side) for side in zip(*itertools.combinations(range(len(order)), 2), strict=True))
    encoders = np.vstack([draws[model] for model in order])
    stacked = encoders[first] - encoders[second]
    ordered, n_defined = _ascending(stacked)
    some = n_defined > 0
    tail = (1.0 - level) / 2.0
    quantiles = iter(sorted_quantiles(ordered[some], [tail, 1.0 - tail], n_defined[some]).tolist())
    sides = np.minimum(np.count_nonzero(ordered <= 0, axis=1), np.count_nonzero(ordered >= 0, axis=1))
    smaller = iter((sides[some] / n_defined[some]).tolist())  # np.mean's float: the count over the defined draws
    undefined = (stacked.shape[1] - n_defined).tolist()
    rows = []
    for index, (a, b) in enumerate(pairs):
        estimate = estimates[a] - estimates[b]
        if some[index]:
            low, high = next(quantiles)
            difference = {"estimate": float(estimate), "low": low, "high": high, "n_undefined": undefined[index]}
            p_value = min(1.0, 2.0 * next(smaller))
        else:
            difference = estimate_with_interval(estimate, stacked[index], level, corrected=False)
            p_value = two_sided_p(stacked[index])
        rows.append({"encoders": [a, b], "difference": difference, "p_value": p_value})
    return rows, ordered, stacked.mean(axis=1)


def _all_finite(ordered: FloatArray) -> NDArray[np.bool_]:
    """Which ascending rows (NaN last) are all finite: their ends are."""
    finite: NDArray[np.bool_] = np.isfinite(ordered[:, 0]) & np.isfinite(ordered[:, -1])
    return finite


def _encoder_eers(
    estimates: Mapping[str, float], draws: Mapping[str, FloatArray], level: float
) -> list[dict[str, Any]]:
    """Each encoder's EER with its bias-corrected interval, the best first, from one sort of the encoders' stacked
    draws (``bias_corrected_rows``: the same values as ``estimate_with_interval``); an encoder without a defined
    draw or a finite estimate from ``estimate_with_interval``."""
    order = sorted(estimates, key=lambda model: (estimates[model], model))
    values = np.array([estimates[model] for model in order], dtype=float)
    ordered, n_defined = _ascending(np.vstack([draws[model] for model in order]))
    some = (n_defined > 0) & np.isfinite(values)
    bounds = iter(bias_corrected_rows(ordered[some], values[some], level, n_defined[some]).tolist())
    undefined = (ordered.shape[1] - n_defined).tolist()
    eers = []
    for at, model in enumerate(order):
        if some[at]:
            low, high = next(bounds)
            eer = {"estimate": float(values[at]), "low": low, "high": high, "n_undefined": undefined[at]}
        else:
            eer = estimate_with_interval(estimates[model], draws[model], level, corrected=True)
        eers.append({"model": model, "eer": eer})
    return eers


def _ascending(draws: FloatArray) -> tuple[FloatArray, IntArray]:
    """Each row of draws ascending, its draws that are not finite (undefined) made NaN and put last, and how many are
    defined: the rows ``sorted_quantiles`` reads."""
    finite = np.isfinite(draws)
    n_defined = np.count_nonzero(finite, axis=1)
    ordered: FloatArray = np.sort(draws, axis=1)  # NaN last already; a copy through np.where cost more than the sort
    some = n_defined < draws.shape[1]
    if some.any():  # an infinite draw sorts to an end: these rows again, every undefined draw NaN
        ordered[some] = np.sort(np.where(finite[some], draws[some], np.nan), axis=1)
    return ordered, n_defined


def _decide(pairs: list[dict[str, Any]], ordered: FloatArray, means: FloatArray, alpha: float) -> dict[str, Any]:
    """Holm over one family's pairs (each marked ``separable``) and the family's MDD from their draws (ascending,
    and their means: ``_pairs``); the family's summary."""
    p_values = [pair["p_value"] for pair in pairs]
    rejected = holm_rejections(p_values, alpha)
    for rank, index in enumerate(np.argsort(p_values, kind="stable")):
        pairs[index]["separable"] = rank < rejected
    sizes = _sorted_mdd(ordered, means, alpha / len(pairs))
    defined = sizes[np.isfinite(sizes)]
    return {
        "n_pairs": len(pairs),
        "n_separable": rejected,
        "mdd": float(np.median(defined)) if defined.size else None,
        "mdd_range": [float(defined.min()), float(defined.max())] if defined.size else None,
        "power": POWER,
        "n_simulated": int(ordered.shape[1]),
    }


def minimum_detectable_differences(draws: FloatArray, level: float, power: float = POWER) -> FloatArray:
    """Per row of difference draws (pairs x resamples): the smallest true difference whose pair the two-sided test
    ``two_sided_p < level`` finds, on the right side of 0, ``power`` of the time, by simulation on the draws: each
    resample's deviation ``e_s`` from the row's mean is one data set's estimation error, whose draws are the centred
    draws ``e`` moved to its estimate ``d + e_s``. A positive estimate ``x`` is rejected when fewer than
    ``level / 2`` of ``e + x`` lie at or below 0, i.e. when ``x`` exceeds ``-e_(m)`` (``m = ceil(level K / 2) - 1``,
    ascending order statistics of the K errors); ``d + e_s`` does so for at least ``power`` of the data sets from
    ``d = -e_(m) - e_(K - ceil(power K))``. A difference found with the wrong sign is not found. The larger of the
    two directions is given (the other: the same on ``-e``); NaN for a row with undefined draws.

    Example:
        Errors N(0, 0.01): the 2.5 % order statistic is about -0.0196 and the 20 % one about -0.0084, so a
        difference must be about 0.028 to be found 80 % of the time at level 0.05:

        >>> errors = np.random.default_rng(0).normal(0.0, 0.01, (1, 20000))
        >>> round(float(minimum_detectable_differences(errors, 0.05)[0]), 3)
        0.028
    """
    rows = np.asarray(draws, dtype=float)
    return _sorted_mdd(np.sort(rows, axis=1), rows.mean(axis=1), level, power)


def _sorted_mdd(ordered: FloatArray, means: FloatArray, level: float, power: float = POWER) -> FloatArray:
    """``minimum_detectable_differences`` of rows of draws given ascending (NaN last) and their means: the errors'
    order statistics are the sorted draws' less the mean (subtracting a constant keeps the order, rounding too),
    so the pairs' draws, sorted once for their intervals, need no second sort."""
    sizes = np.full(ordered.shape[0], np.nan)
    usable = _all_finite(ordered) & (ordered.shape[1] > 1)
    if not usable.any():
        return sizes
    k = ordered.shape[1]
    m = max(math.ceil(level * k / 2.0) - 1, 0)
    found = k - math.ceil(power * k)
    mean = means[usable]
    errors = [ordered[usable, column] - mean for column in (m, found, k - 1 - m, k - 1 - found)]
    # the order statistics of -e are e's from the other end, negated
    sizes[usable] = np.maximum(-errors[0] - errors[1], errors[2] + errors[3])
    return sizes


def paired_rankings(
    settings: Sequence[RankingInput],
    shared: SpeakerDraws,
    *,
    family: str = "condition",
    level: float = 0.95,
    alpha: float = 0.05,
    eer_method: EerMethod = EerMethod.INTERP,
    cache: DrawCache | None = None,
) -> dict[str, Any]:
    """Paired encoder comparisons of every setting, Holm over the declared ``family``, the MDD by simulation on these
    draws, the macro ranking, and a headline row per setting of two or more encoders. JSON-able; see the module
    docstring.

    Example:
        Two encoders on 12 speakers, the second's target scores 1.5 lower: their difference is found:

        >>> rng = np.random.default_rng(0)
        >>> speakers = np.repeat(np.arange(12), 20)
        >>> labels = np.tile([1, 0, 0, 0], 60)
        >>> partner = np.where(labels == 1, speakers, (speakers + 1 + rng.integers(0, 11, 240)) % 12)
        >>> noise = rng.normal(size=(2, 240))
        >>> scores = {"good": 3.0 * labels + noise[0], "worse": 1.5 * labels + noise[1]}
        >>> setting = RankingInput({"condition": "clean"}, scores, labels, speakers, partner)
        >>> draws = SpeakerDraws.of([speakers, partner], 500, 1)
        >>> result = paired_rankings([setting], draws)
        >>> pair = result["settings"][0]["pairs"][0]
        >>> pair["encoders"], pair["separable"], result["headline"][0]["verdict"]
        (['good', 'worse'], True, 'every pair separable')
    """
    cache = cache or DrawCache()
    drawn, skipped = [], []
    for setting in settings:  # a setting without an EER (one class) is named with why, never stops the others
        try:
            drawn.append(_drawn(setting, shared, eer_method, cache))
        except StatisticsInputError as error:
            skipped.append({"key": dict(setting.key), "reason": str(error)})
    families: dict[str, list[tuple[int, int]]] = defaultdict(list)  # family -> (setting, pair) positions
    results: list[dict[str, Any]] = []
    all_draws: list[tuple[FloatArray, FloatArray]] = []  # per setting, its pairs' ascending draws and their means
    for index, d in enumerate(drawn):
        pairs, ordered, means = _pairs(d.estimates, d.draws, level)
        all_draws.append((ordered, means))
        results.append(
            {
                "key": dict(d.setting.key),
                "family": d.setting.family(family),
                "n_speakers": d.n_speakers,
                "n_trials": d.n_trials,
                "n_unscored_dropped": d.n_dropped,
                "encoders": _encoder_eers(d.estimates, d.draws, level),
                "pairs": pairs,
            }
        )
        families[d.setting.family(family)] += [(index, position) for position in range(len(pairs))]
    summaries: dict[str, dict[str, Any] | None] = {}
    for name, members in sorted(families.items()):
        pairs = [results[i]["pairs"][j] for i, j in members]
        ordered, means = [all_draws[i][0][j] for i, j in members], [all_draws[i][1][j] for i, j in members]
        summaries[name] = _decide(pairs, np.vstack(ordered), np.array(means), alpha) if pairs else None
    for result in results:
        result["mdd"] = (summaries.get(result["family"]) or {}).get("mdd")
    macro = _macro(drawn, level, alpha)
    return {
        "rule": RANKING_RULE,
        "family": family,
        "alpha": alpha,
        "level": level,
        "eer_method": eer_method,
        "n_resamples": shared.weights.rows,
        "seed": shared.seed,
        "power": POWER,
        "settings": results,
        "families": {name: summary for name, summary in summaries.items() if summary is not None},
        "macro": macro,
        "headline": [_headline_row(result) for result in results if len(result["encoders"]) > 1],
        "skipped": skipped,
    }


def _macro(drawn: Sequence[_Drawn], level: float, alpha: float) -> dict[str, Any]:
    """Table 7's macro EER per encoder (records -> conditions -> experiments, each an unweighted mean) on the point
    estimates and on every draw alike; its pairs with Holm over all of them."""
    cells: dict[str, dict[tuple[str, str], list[tuple[float, FloatArray]]]] = defaultdict(lambda: defaultdict(list))
    for d in drawn:
        cell = (str(d.setting.key.get("experiment", "")), str(d.setting.key.get("condition", "")))
        for model, estimate in d.estimates.items():
            cells[model][cell].append((estimate, d.draws[model]))
    estimates, draws, covered, left_out = {}, {}, {}, {}
    for model, by_cell in cells.items():
        left_out[model] = int(sum(np.count_nonzero(~np.isfinite(row)) for rows in by_cell.values() for _, row in rows))
        experiments: dict[str, list[tuple[float, FloatArray]]] = defaultdict(list)
        for (experiment, _), values in sorted(by_cell.items()):
            experiments[experiment].append(_mean(values))
        estimates[model], draws[model] = _mean([_mean(values) for values in experiments.values()])
        covered[model] = sorted(by_cell)
    pairs, ordered, means = _pairs(estimates, draws, level)
    summary = _decide(pairs, ordered, means, alpha) if pairs else {"mdd": None}
    order = sorted(estimates, key=lambda model: (estimates[model], model))
    return {
        "family": MACRO_FAMILY,
        "encoders": [
            {
                "model": model,
                "macro_eer": estimates[model],
                "undefined_record_draws_left_out": left_out[model],
            }
            for model in order
        ],
        "pairs": pairs,
        "summary": summary,
        "same_cells": len({tuple(cells) for cells in covered.values()}) <= 1,
    }


def _mean(values: Sequence[tuple[float, FloatArray]]) -> tuple[float, FloatArray]:
    """The unweighted mean of estimates and, draw by draw, of their defined draws: a record whose EER a draw leaves
    undefined (a class drawn with no weight) is left out of that draw's mean, not the whole draw (which would keep
    only the draws where every small record has both classes, a biased few); NaN only where none is defined."""
    stacked = np.vstack([row for _, row in values])
    defined = np.isfinite(stacked)
    with np.errstate(invalid="ignore"):
        means = np.where(defined, stacked, 0.0).sum(axis=0) / defined.sum(axis=0)
    return float(np.mean([value for value, _ in values])), means


def _headline_row(result: Mapping[str, Any]) -> dict[str, Any]:
    """A setting in one row: its encoders best first with their EERs, and which pairs are separable."""
    return {
        **result["key"],
        "speakers": result["n_speakers"],
        "encoders (EER, best first)": ", ".join(
            f"{entry['model']} {format_number(entry['eer']['estimate'], 3)}" for entry in result["encoders"]
        ),
        "verdict": ranking_verdict(result["pairs"], result["n_speakers"], result["mdd"]),
    }


def ranking_verdict(pairs: Sequence[Mapping[str, Any]], n_speakers: int, mdd: float | None) -> str:
    """'every pair separable', 'not separable at N speakers (MDD x)', or the separable pairs and that phrase for
    the rest.

    >>> pairs = [{"encoders": ["a", "b"], "separable": True}, {"encoders": ["a", "c"], "separable": False}]
    >>> ranking_verdict(pairs, 7, 0.0412)
    'separable: a < b; the other pairs not separable at 7 speakers (MDD 0.041)'
    >>> ranking_verdict(pairs[1:], 7, None)
    'not separable at 7 speakers (MDD not computable)'
    """
    separable = [pair for pair in pairs if pair.get("separable")]
    detectable = f"MDD {format_number(mdd, 3)}" if mdd is not None else "MDD not computable"
    not_separable = f"not separable at {n_speakers} speakers ({detectable})"
    if len(separable) == len(pairs):
        return "every pair separable"
    if not separable:
        return not_separable
    found = ", ".join(" < ".join(pair["encoders"]) for pair in separable)
    return f"separable: {found}; the other pairs {not_separable}"


def speaker_ids(settings: Sequence[RankingInput]) -> list[NDArray[Any]]:
    """Every speaker column of the settings, for the shared draws."""
    return [
        np.asarray(ids)
        for setting in settings
        for ids in (setting.enrol_speaker, setting.test_speaker)
        if ids is not None
    ]


PAIR_COLUMNS = ("pair", "EER difference", "p (two-sided)", "Holm", "speakers", "MDD (80%)")  # after the setting's key
MAX_PAIR_ROWS = 1000  # the rows the report shows (reports.document.MAX_TABLE_ROWS); every pair is in the statistics


def rankings_section(rankings: Mapping[str, Any], interval_text: Callable[[Any], str]) -> dict[str, Any]:
    """The report section of the paired comparisons: how they were made, the macro ranking, and one row per pair, of
    which the table keeps the first ``MAX_PAIR_ROWS`` as text (``n_rows`` counts them all; every pair's numbers are
    in ``statistics.rankings.settings``, once)."""
    macro = rankings["macro"]
    macro_eers = ", ".join(f"{e['model']} {format_number(e['macro_eer'], 3)}" for e in macro["encoders"])
    macro_pairs = "; ".join(
        f"{' - '.join(pair['encoders'])} {interval_text(pair['difference'])} "
        f"({'separable' if pair.get('separable') else 'not separable'})"
        for pair in macro["pairs"]
    )
    mdd = macro["summary"].get("mdd")
    lines = [
        f"Every pair of encoders that scored one trial list in one setting: the EER difference (the better first, "
        f"{rankings['eer_method']}; estimate [{rankings['level']:.0%} percentile interval]) from the same two-way "
        f"speaker draws for both encoders ({rankings['n_resamples']} resamples, seed {rankings['seed']}, shared "
        f'with the contrasts). Holm over the family declared in [analysis] ranking_family = "{rankings["family"]}" at '
        f"familywise alpha {rankings['alpha']}: {RANKING_RULE}.",
        "MDD: the smallest true EER difference that a pair's test finds, with the right sign and at Holm's first-step "
        f"level (enough for Holm to reject it), {rankings['power']:.0%} of the time (the median over the family's "
        "pairs), by simulation on this run's own draws (its speakers, trials and encoders), not a formula. 'not "
        "separable at N speakers' says no more than that a difference below the MDD would more likely be missed "
        "than found.",
        f"Macro EER (paper Table 7: records -> conditions -> experiments, unweighted means, on every draw alike): "
        f"{macro_eers} (no interval on a single macro: each record's resampled EER carries the estimator's small "
        "bias, which adds up over hundreds of records, and on a difference of two encoders it largely cancels). "
        f"Differences (Holm over {count(len(macro['pairs']), 'macro pair')}"
        + (f", MDD {format_number(mdd, 3)}" if mdd is not None else "")
        + f"): {macro_pairs or 'none (one encoder)'}."
        + ("" if macro["same_cells"] else " The encoders cover different conditions: their macros average others."),
    ]
    if rankings["skipped"]:
        reasons = "; ".join(entry["reason"] for entry in rankings["skipped"][:3])
        lines.append(f"{count(len(rankings['skipped']), 'setting')} without a comparison: {reasons}.")
    compared = [result for result in rankings["settings"] if result["pairs"]]
    columns = list(dict.fromkeys(c for result in compared for c in (*result["key"], *PAIR_COLUMNS)))
    rows = (
        {
            **result["key"],
            "pair": " - ".join(pair["encoders"]),
            "EER difference": interval_text(pair["difference"]),
            "p (two-sided)": p_text(pair["p_value"], rankings["n_resamples"]),
            "Holm": "separable" if pair.get("separable") else "not separable",
            "speakers": result["n_speakers"],
            "MDD (80%)": format_number(result["mdd"], 3),
        }
        for result in compared
        for pair in result["pairs"]
    )
    table = {
        "columns": columns,
        "rows": [[row.get(column) for column in columns] for row in itertools.islice(rows, MAX_PAIR_ROWS)],
        "n_rows": sum(len(result["pairs"]) for result in compared),
        "all_rows_in": "statistics.rankings.settings",
    }
    return {
        "id": "encoder-rankings",
        "title": "Paired encoder comparisons",
        "status": "info",
        "lines": lines,
        "table": table,
    }
