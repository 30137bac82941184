"""Bootstrap of interaction contrasts: the four terms of a contrast (and its subgroups) resampled jointly through
their speakers."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import blake3
import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics import MetricInputError, ResampleWeights, distinct_rows, eer, eer_and_draws, weighted_eer
from audit.statistics.draws import (
    FloatArray,
    IntArray,
    StatisticsInputError,
    _positions,
    bias_corrected_interval,
    draw_cluster_weights,
    pair_codes,
    percentile_interval,
)
from audit.table import TERMS
from schemas import EerMethod

# Contrasts


@dataclass(frozen=True)
class ContrastInput:
    """One contrast with per-trial scores.

    ``scores`` maps each of ``clean``, ``a``, ``b``, ``ab`` to its score array (NaN where a trial was not
    scored). ``labels`` (1 target, 0 non-target), ``clusters`` (the enrolment speaker of each trial),
    ``test_speakers`` (optional: the test speaker of each trial, for the two-way bootstrap) and ``subgroups``
    (optional, e.g. the enrolment speaker's gender: per-subgroup EERs and gaps) are either one array shared by
    the four terms (they score the same trials, in the same order) or a mapping from term to array: a
    *population contrast*, whose terms score different trial lists (E13, E14, E17, E20), resampled jointly
    through their speakers. ``key`` identifies the contrast in the report (experiment, model, corpus, factor
    levels...); ``family`` is the group of contrasts a family verdict covers (e.g. the experiment);
    ``held_out`` marks settings declared held out before the run.
    """

    key: Mapping[str, str]
    family: str
    scores: Mapping[str, ArrayLike]
    labels: ArrayLike | Mapping[str, ArrayLike]
    clusters: ArrayLike | Mapping[str, ArrayLike]
    subgroups: ArrayLike | Mapping[str, ArrayLike] | None = None
    held_out: bool = False
    model: str = ""
    test_speakers: ArrayLike | Mapping[str, ArrayLike] | None = None
    records: Mapping[str, str] | None = None  # term -> record id: a record's draws are computed once per audit
    caveats: tuple[str, ...] = ()  # the audit's flags on this contrast (``Contrast.caveats``), shown in summaries
    # term -> the EER of its record over every trial it scored, in the bootstrap's method, when the caller has it
    # (the audit's re-scoring of verified scores): the term's point estimate when it keeps every scored trial
    point_eers: Mapping[str, float] | None = None

    @property
    def population(self) -> bool:
        """The terms score different trial lists."""
        fields = (self.labels, self.clusters, self.subgroups, self.test_speakers)
        return any(isinstance(value, Mapping) for value in fields)


@dataclass(frozen=True)
class SpeakerDraws:
    """Speaker multiplicities drawn once and shared by every contrast, encoder and trial list that involves
    these speakers: ``index`` the sorted speaker ids, ``weights`` the resamples x speakers of
    ``draw_cluster_weights`` in the compiled loops' layout (made once). A speaker id must name one speaker
    across the whole set (qualify it by corpus where two corpora could reuse an id)."""

    index: NDArray[np.str_]
    weights: ResampleWeights
    seed: int
    _codes: dict[tuple[int, int], tuple[Any, Any, tuple[IntArray, IntArray | None]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _distinct: dict[bytes, tuple[FloatArray, IntArray]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, speaker_ids: Sequence[ArrayLike], n_resamples: int, seed: int) -> SpeakerDraws:
        distinct = {id(ids): ids for ids in speaker_ids}.values()  # a trial list's column, given once per term
        seen: set[Any] = set()
        for ids in distinct:  # hashed, not sorted per array: thousands of columns at paper scale (2 s against 0.1)
            seen.update(np.asarray(ids).tolist())
        index = np.unique(np.array(list(seen), dtype=object).astype(str)) if seen else np.array([], dtype=str)
        return cls(index, ResampleWeights.of(draw_cluster_weights(index.size, n_resamples, seed)), seed)

    def codes(self, enrol: NDArray[Any], test: NDArray[Any] | None) -> tuple[IntArray, IntArray | None]:
        """``pair_codes`` of these speaker arrays, computed once per pair of array objects: the terms of many
        contrasts share a trial list's columns (the cache holds the arrays, so their ids stay theirs)."""
        key = (id(enrol), id(test))
        if key not in self._codes:
            self._codes[key] = (enrol, test, pair_codes(self.index, enrol, test, self.positions))
        return self._codes[key][2]

    @functools.cached_property
    def multiplicities(self) -> FloatArray:
        """Resamples x (speakers + 1) multiplicities out of the compiled loops' tiles (the last column weighs 1, a
        trial of one speaker's partner): for statistics computed per draw in numpy rather than in those loops."""
        tiles = self.weights.tiles
        dense: FloatArray = tiles.transpose(0, 2, 1).reshape(-1, tiles.shape[1])[: self.weights.rows]
        return dense

    def trial_weights(self, enrol: NDArray[Any], test: NDArray[Any]) -> FloatArray:
        """Resamples x trials: each trial's weight in each draw, its enrolment speaker's multiplicity times its test
        speaker's (a trial of one speaker: that speaker's)."""
        codes, partners = self.codes(enrol, test)
        assert partners is not None
        weights: FloatArray = self.multiplicities[:, codes] * self.multiplicities[:, partners]
        return weights

    def distinct_trial_weights(self, enrol: IntArray, partner: IntArray) -> tuple[FloatArray, IntArray]:
        """Distinct draws x trials: each trial's weight (as ``trial_weights`` weighs it) in each distinct draw of the
        speakers these codes name (``distinct``), and each draw's row among them: a statistic of the weights alone,
        measured on these rows and repeated, is its value on every draw."""
        rows, enrol_local, partner_local, repeated = self.distinct(enrol, partner)
        weights: FloatArray = rows[:, enrol_local] * rows[:, partner_local]
        return weights, repeated

    def distinct(self, enrol: IntArray, partner: IntArray) -> tuple[FloatArray, IntArray, IntArray, IntArray]:
        """The distinct draws of the speakers that these codes (``codes``) name: the distinct rows of
        ``multiplicities`` on those speakers' columns (``distinct_rows``, found once per set of speakers), the codes
        among those columns, and each draw's row among the distinct ones. Draws that give the speakers the same
        multiplicities give the trials the same weights, so a statistic of the trial weights is measured once per
        distinct row and repeated (a bootstrap of few speakers repeats itself: 386 of 1,000 draws of 7 speakers are
        distinct on 5 of them)."""
        used, local = np.unique(np.concatenate([enrol, partner]), return_inverse=True)
        key = used.tobytes()
        if key not in self._distinct:
            self._distinct[key] = distinct_rows(self.multiplicities[:, used])
        rows, repeated = self._distinct[key]
        return rows, local[: enrol.size], local[enrol.size :], repeated

    @functools.cached_property
    def positions(self) -> dict[str, int]:
        """Each speaker id's position in ``index``, for ``pair_codes``."""
        return _positions(self.index)


@dataclass(frozen=True)
class TermTrials:
    """One term's scored trials."""

    scores: FloatArray
    labels: NDArray[np.bool_]
    enrol: NDArray[Any]
    test: NDArray[Any] | None
    subgroups: NDArray[Any] | None
    all_scored: bool  # every trial its record scored is kept (the record's own EER is the term's)

    def speakers(self) -> list[NDArray[Any]]:
        return [self.enrol] if self.test is None else [self.enrol, self.test]


@dataclass
class _ContrastDraws:
    """Bootstrap draws of one contrast (one row per resample) and its point estimates."""

    estimate: dict[str, float]
    draws: dict[str, FloatArray]
    summary: dict[str, Any]


def contrast_values(terms: Mapping[str, Any]) -> dict[str, Any]:
    prediction = terms["a"] + terms["b"] - terms["clean"]
    return {**terms, "prediction": prediction, "ie": terms["ab"] - prediction}


def _per_term(value: Any, term: str) -> Any:
    if value is None:
        return None
    return np.asarray(value[term] if isinstance(value, Mapping) else value)


def scored_trials(contrast: ContrastInput) -> tuple[dict[str, TermTrials], int]:
    """Each term's scored trials, and how many trials were dropped because a term did not score them.

    On one shared trial list a trial is kept only when all four terms scored it (the terms stay paired); in a
    population contrast each term drops its own unscored trials."""
    missing = [term for term in TERMS if term not in contrast.scores]
    if missing:
        raise StatisticsInputError(f"contrast {dict(contrast.key)}: missing term(s) {', '.join(missing)}")
    fields = ("labels", "clusters", "test_speakers", "subgroups")
    raw = {
        term: {
            "scores": np.asarray(contrast.scores[term], dtype=float),
            **{name: _per_term(getattr(contrast, name), term) for name in fields},
        }
        for term in TERMS
    }
    for term, arrays in raw.items():
        lengths = {value.size for value in arrays.values() if value is not None}
        if len(lengths) != 1:
            raise StatisticsInputError(
                f"contrast {dict(contrast.key)}: term {term}'s scores, labels, clusters, test speakers and "
                f"subgroups must cover the same trials, got lengths {sorted(lengths)}"
            )
    if not contrast.population and len({arrays["scores"].size for arrays in raw.values()}) != 1:
        raise StatisticsInputError(
            f"contrast {dict(contrast.key)}: the four terms must cover the same trials, got lengths "
            f"{sorted({arrays['scores'].size for arrays in raw.values()})}"
        )
    if contrast.population:
        kept = {term: np.isfinite(arrays["scores"]) for term, arrays in raw.items()}
    else:
        shared = np.logical_and.reduce([np.isfinite(arrays["scores"]) for arrays in raw.values()])
        kept = dict.fromkeys(TERMS, shared)
    trials = {
        term: TermTrials(
            scores=_kept(arrays["scores"], kept[term]),
            labels=_kept(arrays["labels"], kept[term]).astype(bool),
            enrol=_kept(arrays["clusters"], kept[term]),
            test=_kept(arrays["test_speakers"], kept[term]),
            subgroups=_kept(arrays["subgroups"], kept[term]),
            all_scored=contrast.population or int(kept[term].sum()) == int(np.isfinite(arrays["scores"]).sum()),
        )
        for term, arrays in raw.items()
    }
    if contrast.population:
        n_unscored = sum(int(mask.size - mask.sum()) for mask in kept.values())
    else:
        n_unscored = int(kept["clean"].size - kept["clean"].sum())
    return trials, n_unscored


class DrawCache:
    """Values computed once per audit for one record's trials (or a part of them, e.g. one subgroup): a record
    is a term of many contrasts. Keyed by record id, the part, and the scores themselves (their digest), so a
    record scored differently in two places is never served the other's value."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str, int, bytes], Any] = {}

    def merge(self, other: DrawCache) -> None:
        """Take the values ``other`` computed (e.g. in a forked process) that this cache lacks."""
        for key, value in other._values.items():
            self._values.setdefault(key, value)

    @staticmethod
    def key(record: str, part: str, scores: FloatArray) -> tuple[str, str, int, bytes]:
        """The key of a record's part and scores (BLAKE3 of their bytes read in place: a paper-scale audit keys
        about 100 MB of scores many times over, and BLAKE2b of a copy took 0.8 s of it)."""
        return (record, part, scores.size, blake3.blake3(np.ascontiguousarray(scores).view(np.uint8)).digest())

    def get(self, record: str | None, part: str, scores: FloatArray, compute: Callable[..., Any], *args: Any) -> Any:
        """``compute(*args)``, or its value for this record, part and scores when computed before."""
        if record is None:
            return compute(*args)
        key = self.key(record, part, scores)
        if key not in self._values:
            self._values[key] = compute(*args)
        return self._values[key]


def _kept(values: Any, kept: NDArray[np.bool_]) -> Any:
    """The kept trials' values: the array itself when every trial is kept (shared arrays stay shared)."""
    if values is None or kept.all():
        return values
    return values[kept]


def _cluster_description(trials: Mapping[str, TermTrials]) -> str:
    if any(term.test is not None for term in trials.values()):
        return "enrolment and test speakers (two-way)"
    return "enrolment speaker"


def bootstrap_contrast(
    contrast: ContrastInput,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    eer_method: EerMethod = EerMethod.INTERP,
) -> dict[str, Any]:
    """Point estimates and speaker-cluster bootstrap intervals for one contrast: each term's EER, the
    prediction, IE and (with subgroups) per-subgroup EERs and gaps. JSON-able; see the module docstring.

    Args:
        contrast: the four terms' per-trial scores, labels and speakers.
        n_resamples: bootstrap resamples of the speakers.
        seed: the resampling seed (the same seed gives the same intervals).
        level: the intervals' nominal coverage.
        eer_method: the EER variant of every estimate.

    Returns:
        ``estimates`` (per term, ``prediction`` and ``ie``: ``estimate``, ``low``, ``high``, ``n_undefined``), the
        counts of trials and speakers, and the settings used.

    Example:
        Eight enrolment speakers, ten trials each, two degradations that each cost the same separation:

        >>> import numpy as np
        >>> labels, speakers = np.tile([1, 0], 40), np.repeat(np.arange(8), 10)
        >>> rng = np.random.default_rng(0)
        >>> shift = {"clean": 2.0, "a": 1.5, "b": 1.5, "ab": 1.0}
        >>> scores = {term: labels * d + rng.normal(size=80) for term, d in shift.items()}
        >>> summary = bootstrap_contrast(
        ...     ContrastInput({"experiment": "E01"}, "E01", scores, labels, speakers), n_resamples=200, seed=1
        ... )
        >>> ie = summary["estimates"]["ie"]
        >>> round(ie["estimate"], 3), ie["low"] < ie["estimate"] < ie["high"], summary["n_clusters"]
        (-0.025, True, 8)
    """
    return draw_contrast(contrast, n_resamples, seed, level, eer_method, None).summary


def draw_contrast(
    contrast: ContrastInput,
    n_resamples: int,
    seed: int,
    level: float,
    eer_method: EerMethod,
    shared: SpeakerDraws | None,
    cache: DrawCache | None = None,
) -> _ContrastDraws:
    trials, n_unscored = scored_trials(contrast)
    speakers = [ids for term in trials.values() for ids in term.speakers()]
    draws_of = shared if shared is not None else SpeakerDraws.of(speakers, n_resamples, seed)
    codes = {term: draws_of.codes(t.enrol, t.test) for term, t in trials.items()}
    cache = cache or DrawCache()
    records = dict(contrast.records) if contrast.records is not None else dict.fromkeys(TERMS)

    def term_draws(term: str, t: TermTrials) -> tuple[float, FloatArray]:
        """A term's EER and draws, once per (record, scored trials) when the contrast names its records."""
        enrol, partner = codes[term]
        point = (contrast.point_eers or {}).get(term) if t.all_scored else None
        return cast(
            tuple[float, FloatArray],
            cache.get(
                records[term],
                "all trials",
                t.scores,
                _eer_and_draws,
                t,
                enrol,
                partner,
                draws_of.weights,
                eer_method,
                point,
            ),
        )

    try:
        computed = {term: term_draws(term, t) for term, t in trials.items()}
    except MetricInputError as error:
        raise StatisticsInputError(f"contrast {dict(contrast.key)}: {error}") from error
    estimate = contrast_values({term: value[0] for term, value in computed.items()})
    draws = contrast_values({term: value[1] for term, value in computed.items()})
    summary: dict[str, Any] = {
        "key": dict(contrast.key),
        "family": contrast.family,
        "model": contrast.model,
        "held_out": contrast.held_out,
        "population_contrast": contrast.population,
        "eer_method": eer_method,
        "cluster": _cluster_description(trials),
        "n_trials": {term: int(t.labels.size) for term, t in trials.items()}
        if contrast.population
        else int(trials["clean"].labels.size),
        "n_unscored_dropped": n_unscored,
        "n_target_clean": int(trials["clean"].labels.sum()),
        "n_nontarget_clean": int((~trials["clean"].labels).sum()),
        "n_clusters": _n_speakers(codes.values(), draws_of.index.size),
        "n_resamples": draws_of.weights.rows,
        "seed": draws_of.seed,
        "level": level,
        "estimates": {
            name: estimate_with_interval(estimate[name], draws[name], level, corrected=name in BIAS_CORRECTED)
            for name in estimate
        },
    }
    if all(t.subgroups is not None for t in trials.values()):
        summary["subgroups"] = subgroup_gap_draws(trials, codes, draws_of.weights, level, eer_method, cache, records)
    return _ContrastDraws(estimate=estimate, draws=draws, summary=summary)


def _n_speakers(codes: Iterable[tuple[IntArray, IntArray | None]], n_index: int) -> int:
    """Distinct speakers behind these trials' codes (a partner code ``n_index`` is a target trial's own speaker)."""
    used = np.zeros(n_index + 1, dtype=bool)
    for pair in codes:
        for code in pair:
            if code is not None:
                used[code] = True
    return int(used[:n_index].sum())


def _eer_and_draws(
    t: TermTrials,
    enrol: IntArray,
    partner: IntArray | None,
    weights: ResampleWeights,
    eer_method: EerMethod,
    point: float | None,
) -> tuple[float, FloatArray]:
    """The term's EER (``point`` when the caller computed it) and its draws."""
    if point is None:
        return eer_and_draws(t.scores, t.labels, eer_method, enrol, partner, weights)
    return point, weighted_eer(t.scores, t.labels, enrol, weights, eer_method, partner)


def _member_draws(
    t: TermTrials,
    codes: tuple[IntArray, IntArray | None],
    weights: ResampleWeights,
    eer_method: EerMethod,
    member: NDArray[np.bool_],
) -> FloatArray:
    """The draws of the EER of the trials of ``t`` in ``member`` (a subgroup)."""
    enrol, partner = codes
    return weighted_eer(
        t.scores[member],
        t.labels[member],
        enrol[member],
        weights,
        eer_method,
        None if partner is None else partner[member],
    )


# A single EER, and the additive prediction (a sum of EERs with coefficients summing to one), carry
# the estimator's finite-sample bias (the convex hull EER's optimism): their intervals are bias-corrected. IE, gaps
# and ranges are differences whose coefficients sum to zero, the biases cancel, and the correction would only add
# the noise of its estimate: their intervals are percentile ones. Chosen by simulation (DESIGN section 4).
BIAS_CORRECTED = frozenset({*TERMS, "prediction"})
INTERVAL_RULE = (
    "bias-corrected percentile (BC) intervals for single EERs and additive predictions, percentile intervals for "
    "IE, gaps and ranges (differences whose estimator biases cancel) and for error rates at a fixed threshold"
)


def estimate_with_interval(estimate: float, draws: FloatArray, level: float, *, corrected: bool) -> dict[str, Any]:
    """The estimate and its interval: bias-corrected (``corrected``) or percentile (see ``BIAS_CORRECTED``)."""
    interval = bias_corrected_interval(draws, estimate, level) if corrected else percentile_interval(draws, level)
    return {"estimate": float(estimate), **interval}


ONE_SPEAKER = "one speaker: a value of that speaker, not of a population, so no interval"


def withheld_interval(estimate: float, reason: str) -> dict[str, Any]:
    """The estimate without an interval, and why (``withheld``): e.g. a subgroup of one speaker, whose resamples
    only reweigh that speaker's trials and give a narrow interval that would read as a population's."""
    return {"estimate": float(estimate), "low": None, "high": None, "n_undefined": 0, "withheld": reason}


def subgroup_gap_draws(
    trials: Mapping[str, TermTrials],
    codes: Mapping[str, tuple[IntArray, IntArray | None]],
    weights: ResampleWeights,
    level: float,
    eer_method: EerMethod,
    cache: DrawCache | None = None,
    records: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """Per term, each subgroup's EER and its signed gap to the first subgroup (sorted), plus the range
    (largest minus smallest subgroup EER), all with intervals from the same resamples. A subgroup whose EER
    is undefined in some term (one class) is left out of every term and listed with why. A subgroup of one
    enrolment speaker gets no interval, nor does a gap or range it takes part in (``withheld_interval``). With
    ``records``, each record's subgroup values are computed once per audit (``cache``)."""
    cache = cache or DrawCache()
    as_text = {term: np.asarray(t.subgroups, dtype=object).astype(str) for term, t in trials.items()}
    estimates: dict[str, dict[str, float]] = {term: {} for term in trials}
    undefined: dict[str, str] = {}

    def member_eer(term: str, name: str) -> float:
        t, member = trials[term], as_text[term] == name
        return float(eer(t.scores[member], t.labels[member], eer_method))

    for name in sorted(set().union(*(set(groups.tolist()) for groups in as_text.values()))):
        try:
            values = {
                term: cache.get((records or {}).get(term), f"subgroup {name} eer", t.scores, member_eer, term, name)
                for term, t in trials.items()
            }
        except MetricInputError as error:
            undefined[name] = str(error)
            continue
        for term, value in values.items():
            estimates[term][name] = value
    names = sorted(next(iter(estimates.values())))
    result: dict[str, Any] = {"reference": names[0] if names else None, "undefined": undefined, "terms": {}}
    for term in trials if names else ():
        t = trials[term]
        draws = {}
        for name in names:
            member = as_text[term] == name
            draws[name] = cache.get(
                (records or {}).get(term),
                f"subgroup {name} draws",
                t.scores,
                _member_draws,
                t,
                codes[term],
                weights,
                eer_method,
                member,
            )
        stacked = np.vstack([draws[name] for name in names])
        point = np.array([estimates[term][name] for name in names])
        reference = names[0]
        single = {name for name in names if np.unique(t.enrol[as_text[term] == name].astype(str)).size == 1}

        def interval(
            estimate: float, values: FloatArray, corrected: bool, *members: str, single: set[str] = single
        ) -> dict[str, Any]:
            if single.intersection(members):
                return withheld_interval(estimate, ONE_SPEAKER)
            return estimate_with_interval(estimate, values, level, corrected=corrected)

        result["terms"][term] = {
            "eer": {name: interval(estimates[term][name], draws[name], True, name) for name in names},
            "gap_to_reference": {
                name: interval(
                    estimates[term][name] - estimates[term][reference],
                    draws[name] - draws[reference],
                    False,
                    name,
                    reference,
                )
                for name in names[1:]
            },
            "range": interval(point.max() - point.min(), stacked.max(axis=0) - stacked.min(axis=0), False, *names),
        }
    return result
