"""Uncertainty and beyond-the-paper statistics for bundles with per-trial scores (issue 7, DESIGN.md 4).

Everything here is pure numpy and returns JSON-able dicts (floats, ints, strings, lists).

**Clusters: two-way speaker bootstrap.** A non-target trial involves two speakers, each with its own effect on
the score, so both are resampled: speakers are drawn with replacement (multiplicities, ``draw_cluster_weights``)
and a trial between speakers s and t counts ``m_s * m_t`` times, a trial of one speaker (a target) ``m_s``
times: every pair whose two speakers are drawn is kept, once per drawn copy of each (the "pigeonhole"
bootstrap of crossed data). Resampling only the enrolment speaker left the test side's effect out and its
intervals under-covered (0.87 for a single EER at 30 speakers). Measured coverage of the 95 % intervals on a
simulation with known truth (``CoverageDesign``: speaker effects on both sides of non-target trials,
speaker-by-condition effects; 1,000 datasets at 30 speakers): single EER 0.93, IE 0.97, subgroup gap 0.96.
The scheme is mildly conservative for IE (the pair-level noise is counted more than once), never narrow.
Given no test speakers, one-way clustering on the enrolment speaker is used and said (``cluster``).

**One draw, shared.** ``bundle_statistics`` draws the speaker multiplicities once, over every speaker of every
contrast and subgroup setting (``SpeakerDraws``), and every term, contrast, encoder, trial list, subgroup gap and
fixed-threshold setting uses the same rows: the four terms of a contrast, family summaries and population
contrasts are resampled jointly. A population contrast (terms
on different trial lists: E13, E14, E17, E20) is resampled through its speakers: a drawn speaker keeps all
its trials in every list.

**EER variant.** Bootstrap draws and their point estimates use one EER variant of ``audit.metrics``, named
``eer_method`` in every result (the bundle path takes the rows' own, and a term's point estimate from the
re-scoring of its record's verified scores): ``interp``, ``legacy`` (the paper's routine, bit for bit) or
``rocch`` (BOSARIS' convex hull). For a resample, each equals
``audit.metrics.eer`` of the trials repeated as often as their weight (``audit.weighted_roc``, tested).

**Few speakers.** Below ``FEW_SPEAKERS`` (30) speakers a contrast's result carries the coverage that the same
bootstrap achieved on a matched simulation, and the report warns.

**Intervals** are percentile intervals of the bootstrap draws (``numpy.quantile``, linear interpolation), at
the declared ``level``; ``n_resamples`` and ``seed`` are recorded beside them. A draw in which a subset has no
target or no non-target trial has no EER: it is counted (``n_undefined``), never filled in.
"""

from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.contrasts import TERMS
from audit.forked import Forked
from audit.metrics import EER_METHODS, EerMethod, MetricInputError, eer
from audit.weighted_roc import ResampleWeights, weighted_eer, weighted_sums

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Verdict = Literal["additive within margin", "non-additive", "undetermined"]
BootstrapEerMethod = EerMethod
BOOTSTRAP_EER_METHODS = EER_METHODS


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


def pair_codes(
    index: NDArray[Any], enrol: ArrayLike, test: ArrayLike | None, positions: Mapping[str, int] | None = None
) -> tuple[IntArray, IntArray | None]:
    """Speaker codes of each trial in the sorted speaker ``index``: the enrolment speaker, and the partner
    (the test speaker of a trial between two speakers; ``len(index)``, a column of weight 1, for a trial of one
    speaker). ``test`` None: one-way clustering on the enrolment speaker (no partner). ``positions`` (id ->
    position in ``index``, made here when not given) is a hashed lookup: ids are compared as text, and an id
    missing from the index is refused."""
    positions = positions if positions is not None else _positions(index)
    enrol_codes = _codes_of(positions, enrol)
    if test is None:
        return enrol_codes, None
    test_codes = _codes_of(positions, test)
    return enrol_codes, np.where(test_codes == enrol_codes, len(positions), test_codes)


def _positions(index: NDArray[Any]) -> dict[str, int]:
    return {str(speaker): position for position, speaker in enumerate(np.asarray(index).tolist())}


def _codes_of(positions: Mapping[str, int], ids: ArrayLike) -> IntArray:
    array = np.asarray(ids)
    keys = array.tolist() if array.dtype.kind in "UO" else array.astype(str).tolist()
    try:
        return np.fromiter(map(positions.__getitem__, keys), dtype=np.int64, count=len(keys))
    except (KeyError, TypeError):
        pass
    try:  # objects other than text (e.g. numbers) are compared as their text
        return np.fromiter(map(positions.__getitem__, map(str, keys)), dtype=np.int64, count=len(keys))
    except KeyError as error:
        raise StatisticsInputError(f"speaker {error} is not among the drawn speakers") from None


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
    def positions(self) -> dict[str, int]:
        """Each speaker id's position in ``index``, for ``pair_codes``."""
        return _positions(self.index)


@dataclass(frozen=True)
class _TermTrials:
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


def _contrast_values(terms: Mapping[str, Any]) -> dict[str, Any]:
    prediction = terms["a"] + terms["b"] - terms["clean"]
    return {**terms, "prediction": prediction, "ie": terms["ab"] - prediction}


def _per_term(value: Any, term: str) -> Any:
    if value is None:
        return None
    return np.asarray(value[term] if isinstance(value, Mapping) else value)


def _scored_trials(contrast: ContrastInput) -> tuple[dict[str, _TermTrials], int]:
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
        term: _TermTrials(
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


class _DrawCache:
    """Values computed once per audit for one record's trials (or a part of them, e.g. one subgroup): a record
    is a term of many contrasts. Keyed by record id, the part, and the scores themselves (their digest), so a
    record scored differently in two places is never served the other's value."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str, int, bytes], Any] = {}

    def get(self, record: str | None, part: str, scores: FloatArray, compute: Callable[..., Any], *args: Any) -> Any:
        """``compute(*args)``, or its value for this record, part and scores when computed before."""
        if record is None:
            return compute(*args)
        key = (record, part, scores.size, hashlib.blake2b(scores.tobytes()).digest())
        if key not in self._values:
            self._values[key] = compute(*args)
        return self._values[key]


def _kept(values: Any, kept: NDArray[np.bool_]) -> Any:
    """The kept trials' values: the array itself when every trial is kept (shared arrays stay shared)."""
    if values is None or kept.all():
        return values
    return values[kept]


def _cluster_description(trials: Mapping[str, _TermTrials]) -> str:
    if any(term.test is not None for term in trials.values()):
        return "enrolment and test speakers (two-way)"
    return "enrolment speaker"


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
    return _bootstrap_contrast(contrast, n_resamples, seed, level, eer_method, None).summary


def _bootstrap_contrast(
    contrast: ContrastInput,
    n_resamples: int,
    seed: int,
    level: float,
    eer_method: BootstrapEerMethod,
    shared: SpeakerDraws | None,
    cache: _DrawCache | None = None,
) -> _ContrastDraws:
    trials, n_unscored = _scored_trials(contrast)
    speakers = [ids for term in trials.values() for ids in term.speakers()]
    draws_of = shared if shared is not None else SpeakerDraws.of(speakers, n_resamples, seed)
    codes = {term: draws_of.codes(t.enrol, t.test) for term, t in trials.items()}
    cache = cache or _DrawCache()
    records = dict(contrast.records) if contrast.records is not None else dict.fromkeys(TERMS)

    def term_draws(term: str, t: _TermTrials) -> tuple[float, FloatArray]:
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
    estimate = _contrast_values({term: value[0] for term, value in computed.items()})
    draws = _contrast_values({term: value[1] for term, value in computed.items()})
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
        "estimates": {name: _interval(estimate[name], draws[name], level) for name in estimate},
    }
    if all(t.subgroups is not None for t in trials.values()):
        summary["subgroups"] = _subgroup_gaps(trials, codes, draws_of.weights, level, eer_method, cache, records)
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
    t: _TermTrials,
    enrol: IntArray,
    partner: IntArray | None,
    weights: ResampleWeights,
    eer_method: BootstrapEerMethod,
    point: float | None,
) -> tuple[float, FloatArray]:
    """The term's EER (``point`` when the caller computed it) and its draws."""
    estimate = eer(t.scores, t.labels, eer_method) if point is None else point
    return estimate, weighted_eer(t.scores, t.labels, enrol, weights, eer_method, partner)


def _member_draws(
    t: _TermTrials,
    codes: tuple[IntArray, IntArray | None],
    weights: ResampleWeights,
    eer_method: BootstrapEerMethod,
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


def _interval(estimate: float, draws: FloatArray, level: float) -> dict[str, Any]:
    return {"estimate": float(estimate), **percentile_interval(draws, level)}


def _subgroup_gaps(
    trials: Mapping[str, _TermTrials],
    codes: Mapping[str, tuple[IntArray, IntArray | None]],
    weights: ResampleWeights,
    level: float,
    eer_method: BootstrapEerMethod,
    cache: _DrawCache | None = None,
    records: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """Per term, each subgroup's EER and its signed gap to the first subgroup (sorted), plus the range
    (largest minus smallest subgroup EER), all with intervals from the same resamples. A subgroup whose EER
    is undefined in some term (one class) is left out of every term and listed with why. With ``records``,
    each record's subgroup values are computed once per audit (``cache``)."""
    cache = cache or _DrawCache()
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
    record: SubgroupInput, draws: SpeakerDraws, level: float, eer_method: BootstrapEerMethod
) -> dict[str, Any]:
    """Each subgroup's EER, its gap to the first subgroup (sorted) and the range, with two-way intervals from
    the shared ``draws``, and the number of speakers behind each subgroup (a subgroup of one speaker says so)."""
    scores = np.asarray(record.scores, dtype=float)
    scored = np.isfinite(scores)
    trials = _TermTrials(
        scores=scores[scored],
        labels=np.asarray(record.labels)[scored].astype(bool),
        enrol=np.asarray(record.enrol_speaker)[scored],
        test=np.asarray(record.test_speaker)[scored],
        subgroups=np.asarray(record.subgroups).astype(str)[scored],
        all_scored=True,
    )
    codes = {"eer": pair_codes(draws.index, trials.enrol, trials.test, draws.positions)}
    gaps = _subgroup_gaps({"eer": trials}, codes, draws.weights, level, eer_method)
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


def family_summary(
    ie_estimates: Sequence[float], ie_draws: FloatArray, verdicts: Sequence[str], level: float
) -> dict[str, Any]:
    """A family of contrasts, summarised so that opposite interactions cannot cancel.

    ``verdict`` is ``additive within margin`` only when every contrast is, ``non-additive`` when any contrast
    is, else ``undetermined``; the per-contrast verdict counts stand beside it. ``mean_abs_ie`` and
    ``max_abs_ie`` (over contrasts, with intervals from the joint draws, ``ie_draws`` contrasts x resamples)
    cannot cancel; ``mean_ie`` (signed) is kept for the paper's tables and can.
    """
    estimates = np.asarray(ie_estimates, dtype=float)
    counts = {v: list(verdicts).count(v) for v in ("additive within margin", "non-additive", "undetermined")}
    if counts["additive within margin"] == len(verdicts):
        verdict: Verdict = "additive within margin"
    elif counts["non-additive"]:
        verdict = "non-additive"
    else:
        verdict = "undetermined"
    with np.errstate(invalid="ignore"):
        return {
            "n_contrasts": int(estimates.size),
            "verdict": verdict,
            "contrast_verdicts": counts,
            "mean_abs_ie": _interval(float(np.mean(np.abs(estimates))), np.mean(np.abs(ie_draws), axis=0), level),
            "max_abs_ie": _interval(float(np.max(np.abs(estimates))), np.max(np.abs(ie_draws), axis=0), level),
            "mean_ie": _interval(float(np.mean(estimates)), np.mean(ie_draws, axis=0), level),
        }


# --------------------------------------------------------------------------------------------------------
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
    eer_method: BootstrapEerMethod = "interp",
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
    eer_method: BootstrapEerMethod,
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
        "far": _interval(point[0] / point[1], far_draws, level) if point[1] else None,
        "frr": _interval(point[2] / point[3], frr_draws, level) if point[3] else None,
        "eer": None,
    }
    if point[1] and point[3]:
        result["eer"] = _interval(
            eer(scores, labels, eer_method),
            weighted_eer(scores, labels, codes[0], weights, eer_method, codes[1]),
            level,
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
    them negatively correlated. The measured estimates already carry their noise once, so none is added
    again: with each contrast's bootstrap covariance of (prediction, IE), averaged over contrasts
    (``noise_cov``, ``noise_var_prediction``, ``noise_var_ie``), and the observed spread of the predictions
    across contrasts (signal plus noise), the expected correlation is
    ``noise_cov / sqrt(max(spread, noise_var_prediction) * noise_var_ie)``. Its range for this many
    contrasts: per draw ``s``, the predictions' centres shrunk to the signal spread plus their draw-``s``
    deviations, against IE = the draw-``s`` deviations of IE, correlated across contrasts.
    """
    if len(estimates) < 3:
        return {"n_contrasts": len(estimates), "observed": None, "expected_under_additivity": None}
    point = {term: np.array([e[term] for e in estimates]) for term in TERMS}
    prediction, ie = _prediction_and_ie(point)
    observed = _correlation(prediction, ie)
    stacked = {term: np.vstack([d[term] for d in draws]) for term in TERMS}  # contrasts x resamples
    prediction_draws, ie_draws = _prediction_and_ie(stacked)
    usable = np.all(np.isfinite(prediction_draws) & np.isfinite(ie_draws), axis=0)
    if usable.sum() < 2 or not np.all(np.isfinite(prediction)):
        return {"n_contrasts": len(estimates), "observed": observed, "expected_under_additivity": None}
    d_prediction = prediction_draws[:, usable] - prediction_draws[:, usable].mean(axis=1, keepdims=True)
    d_ie = ie_draws[:, usable] - ie_draws[:, usable].mean(axis=1, keepdims=True)
    noise_cov = float(np.mean(np.mean(d_prediction * d_ie, axis=1)))
    noise_var_prediction = float(np.mean(np.mean(d_prediction**2, axis=1)))
    noise_var_ie = float(np.mean(np.mean(d_ie**2, axis=1)))
    spread = float(np.var(prediction))
    denominator = np.sqrt(max(spread, noise_var_prediction) * noise_var_ie)
    shrink = np.sqrt(max(spread - noise_var_prediction, 0.0) / spread) if spread > 0 else 0.0
    centres = prediction.mean() + (prediction - prediction.mean()) * shrink
    simulated = centres[:, None] + d_prediction
    correlations = np.array(
        [_correlation(simulated[:, s], d_ie[:, s]) for s in range(d_ie.shape[1])], dtype=float
    )  # NaN where a draw has no spread: counted as n_undefined
    return {
        "n_contrasts": len(estimates),
        "observed": observed,
        "expected_under_additivity": {
            "r": float(noise_cov / denominator) if denominator > 0 else None,
            "median": float(np.nanmedian(correlations)) if np.isfinite(correlations).any() else None,
            **percentile_interval(correlations, level),
            "n_simulations": int(np.isfinite(correlations).sum()),
            "noise_share_of_prediction_spread": float(min(1.0, noise_var_prediction / spread)) if spread else 1.0,
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


def _fixed_threshold_or_reason(
    record: FixedThresholdInput,
    operating_point: Literal["eer"] | float,
    n_resamples: int,
    seed: int,
    level: float,
    eer_method: BootstrapEerMethod,
    draws: SpeakerDraws | None,
) -> dict[str, Any]:
    """One record's fixed-threshold analysis, or why it has none (e.g. its development trials lack a class):
    one record cannot stop the others, and the reason is written, not dropped."""
    try:
        return fixed_threshold_analysis(
            record,
            operating_point=operating_point,
            n_resamples=n_resamples,
            seed=seed,
            level=level,
            eer_method=eer_method,
            draws=draws,
        )
    except StatisticsInputError as error:
        return {"key": dict(record.key), "skipped": str(error)}


FEW_SPEAKERS = 30  # below this many speakers a contrast's intervals carry a matched-simulation warning


def small_sample_warnings(
    summaries: Sequence[dict[str, Any]], eer_method: BootstrapEerMethod, level: float, *, n_datasets: int = 100
) -> list[str]:
    """One warning per speaker count below ``FEW_SPEAKERS``, stating the coverage that the same bootstrap
    achieved on a matched simulation (``CoverageDesign`` with that many speakers and the contrasts' median
    target and non-target trials per speaker); each summary gets its ``matched_coverage``."""
    by_size: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for summary in summaries:
        if summary["n_clusters"] < FEW_SPEAKERS:
            by_size[summary["n_clusters"]].append(summary)
    warnings = []
    for n_speakers, members in sorted(by_size.items()):
        design = CoverageDesign(
            n_speakers=max(n_speakers, 2),
            targets_per_speaker=max(1, int(np.median([m["n_target_clean"] for m in members]) // n_speakers)),
            nontargets_per_speaker=max(1, int(np.median([m["n_nontarget_clean"] for m in members]) // n_speakers)),
        )
        achieved = simulated_coverage(
            design, n_datasets=n_datasets, n_resamples=100, level=level, eer_method=eer_method
        )
        for member in members:
            member["matched_coverage"] = achieved
        rates = achieved["coverage"]
        warnings.append(
            f"Warning: {len(members)} contrast(s) rest on {n_speakers} speakers (fewer than {FEW_SPEAKERS}); on a "
            f"matched simulation ({n_datasets} datasets) the {level:.0%} intervals covered the truth "
            f"{rates['clean']:.0%} of the time for a single EER, {rates['ie']:.0%} for IE and {rates['gap']:.0%} "
            "for a subgroup gap."
        )
    return warnings


def bundle_statistics(
    contrasts: Sequence[ContrastInput],
    *,
    margin: float,
    acceptable_error: float | None = None,
    fixed_threshold: Sequence[FixedThresholdInput] = (),
    subgroup_settings: Sequence[SubgroupInput] = (),
    operating_point: Literal["eer"] | float = "eer",
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    alpha: float = 0.05,
    eer_method: BootstrapEerMethod = "interp",
    matched_simulations: int = 100,
) -> dict[str, Any]:
    """Every issue-7 statistic of a bundle, JSON-able, for ``report.json`` (section ``statistics``).

    ``contrasts``: one :class:`ContrastInput` per contrast with per-trial scores (four terms' score arrays,
    shared labels, enrolment-speaker clusters, optional subgroups, family, held-out marker). ``margin``: the
    practical equivalence margin declared before the run (EER units). ``acceptable_error``: the predeclared
    error for held-out predictions (held-out validation is skipped when None). ``fixed_threshold``: records
    for the common-threshold subgroup analysis. ``subgroup_settings``: pooled subgroup records whose gaps get
    intervals (``subgroup_gap_intervals``). ``matched_simulations``: datasets of the matched simulation
    behind each few-speakers warning. The speaker draws are made once, over every speaker of every contrast,
    and shared by all of them.
    """
    speaker_ids = [
        ids for contrast in contrasts for term in _scored_trials(contrast)[0].values() for ids in term.speakers()
    ]
    settings = [*subgroup_settings, *fixed_threshold]
    speaker_ids += [np.asarray(ids) for s in settings for ids in (s.enrol_speaker, s.test_speaker)]
    shared = SpeakerDraws.of(speaker_ids, n_resamples, seed) if speaker_ids else None
    # The subgroup settings' statistics feed nothing else here: they run beside the contrasts (audit.forked).
    with Forked(
        _settings_statistics,
        subgroup_settings,
        fixed_threshold,
        shared,
        operating_point,
        n_resamples,
        seed,
        level,
        eer_method,
        fork=bool(settings),
    ) as beside:
        result = _contrast_statistics(
            contrasts,
            shared,
            margin,
            acceptable_error,
            n_resamples,
            seed,
            level,
            alpha,
            eer_method,
            matched_simulations,
        )
        result["subgroup_gaps"], result["fixed_threshold"] = beside.result()
    return result


def _contrast_statistics(
    contrasts: Sequence[ContrastInput],
    shared: SpeakerDraws | None,
    margin: float,
    acceptable_error: float | None,
    n_resamples: int,
    seed: int,
    level: float,
    alpha: float,
    eer_method: BootstrapEerMethod,
    matched_simulations: int,
) -> dict[str, Any]:
    """``bundle_statistics`` of the contrasts: intervals, verdicts, families, coupling, held-out validation."""
    cache = _DrawCache()
    contrast_draws = [_bootstrap_contrast(c, n_resamples, seed, level, eer_method, shared, cache) for c in contrasts]
    summaries = [{**r.summary, "tost": tost_verdict(r.draws["ie"], margin, alpha)} for r in contrast_draws]
    families: dict[str, list[int]] = defaultdict(list)
    for index, contrast in enumerate(contrasts):
        families[contrast.family].append(index)

    def summary_of(members: list[int]) -> dict[str, Any]:
        return family_summary(
            [contrast_draws[i].estimate["ie"] for i in members],
            np.vstack([contrast_draws[i].draws["ie"] for i in members]),
            [summaries[i]["tost"]["verdict"] for i in members],
            level,
        )

    family_results = {}
    for family, members in sorted(families.items()):
        unflagged = [i for i in members if not contrasts[i].caveats]
        family_results[family] = summary_of(members) | {
            "n_population_contrasts": sum(contrasts[i].population for i in members),
            "n_flagged": len(members) - len(unflagged),
            "unflagged": summary_of(unflagged) if unflagged and len(unflagged) < len(members) else None,
        }
    for summary, contrast in zip(summaries, contrasts, strict=True):
        summary["caveats"] = list(contrast.caveats)
    result: dict[str, Any] = {
        "coverage_warnings": small_sample_warnings(summaries, eer_method, level, n_datasets=matched_simulations),
        "eer_method": eer_method,
        "cluster": "enrolment and test speakers (two-way) where test speakers are given, else enrolment speaker",
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
    return result


def _settings_statistics(
    subgroup_settings: Sequence[SubgroupInput],
    fixed_threshold: Sequence[FixedThresholdInput],
    shared: SpeakerDraws | None,
    operating_point: Literal["eer"] | float,
    n_resamples: int,
    seed: int,
    level: float,
    eer_method: BootstrapEerMethod,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``bundle_statistics`` of the subgroup settings: their gap intervals and fixed-threshold analyses."""
    gaps = [subgroup_gap_intervals(setting, shared, level, eer_method) for setting in subgroup_settings if shared]
    fixed = [
        _fixed_threshold_or_reason(record, operating_point, n_resamples, seed, level, eer_method, shared)
        for record in fixed_threshold
    ]
    return gaps, fixed


# --------------------------------------------------------------------------------------------------------
# Coverage of the intervals, by simulation with known truth


@dataclass(frozen=True)
class CoverageDesign:
    """A simulated verification design whose true EERs are known in closed form.

    ``n_speakers`` speakers, half in subgroup F and half in M; each enrols ``targets_per_speaker`` target trials
    (score ``mu + u_s + v_{s,term} + e``) and ``nontargets_per_speaker`` non-target trials against a random
    other speaker t (score ``c_s + c_t + e``): speaker effects on both sides of non-target trials (``c``, SD
    ``nontarget_sd``), a speaker effect on targets (``u``, ``target_sd``) and a speaker-by-condition effect
    (``v``, ``condition_sd``), unit trial noise. Pooled over the population of speakers the classes are
    normal, so a term's true EER is ``Phi(-mu / (s_target + s_nontarget))``; ``means`` gives ``mu`` per term,
    ``subgroup_shift`` is added to ``mu`` for subgroup F (a true gap).
    """

    n_speakers: int
    targets_per_speaker: int = 10
    nontargets_per_speaker: int = 20
    means: tuple[float, float, float, float] = (2.4, 2.0, 1.9, 1.2)  # clean, a, b, ab
    target_sd: float = 0.6
    condition_sd: float = 0.4
    nontarget_sd: float = 0.5
    subgroup_shift: float = 0.4

    def true_eer(self, mu: float, shifted_share: float = 0.0) -> float:
        """The EER of the population: targets a mixture of N(mu + shift, s_t) (share ``shifted_share``) and
        N(mu, s_t), non-targets N(0, s_n); the threshold where the miss and false-alarm rates meet."""
        from scipy.optimize import brentq
        from scipy.special import ndtr  # the normal CDF (scipy.stats.norm's, without importing scipy.stats)

        target = np.sqrt(1.0 + self.target_sd**2 + self.condition_sd**2)
        nontarget = np.sqrt(1.0 + 2.0 * self.nontarget_sd**2)

        def miss(x: float) -> float:
            shifted = ndtr((x - mu - self.subgroup_shift) / target)
            return float(shifted_share * shifted + (1 - shifted_share) * ndtr((x - mu) / target))

        threshold = brentq(lambda x: miss(x) - ndtr(-x / nontarget), -20.0, 20.0, xtol=1e-14)
        return float(ndtr(-threshold / nontarget))

    def truth(self) -> dict[str, float]:
        """True clean EER, IE (half the speakers in the shifted subgroup) and clean-term gap F minus M."""
        clean, a, b, ab = (self.true_eer(mu, 0.5) for mu in self.means)
        gap = self.true_eer(self.means[0], 1.0) - self.true_eer(self.means[0], 0.0)
        return {"clean": clean, "ie": ab - (a + b - clean), "gap": gap}

    def dataset(self, rng: np.random.Generator, two_way: bool = True) -> ContrastInput:
        """One simulated contrast (all four terms on one trial list)."""
        n, per_t, per_n = self.n_speakers, self.targets_per_speaker, self.nontargets_per_speaker
        speakers = np.arange(n)
        female = speakers % 2 == 0
        enrol = np.concatenate([np.repeat(speakers, per_t), np.repeat(speakers, per_n)])
        other = (np.repeat(speakers, per_n) + rng.integers(1, n, n * per_n)) % n
        test = np.concatenate([np.repeat(speakers, per_t), other])
        labels = np.r_[np.ones(n * per_t, dtype=int), np.zeros(n * per_n, dtype=int)]
        target_effect = rng.normal(0.0, self.target_sd, n)
        nontarget_effect = rng.normal(0.0, self.nontarget_sd, n)
        scores = {}
        for term, mu in zip(TERMS, self.means, strict=True):
            condition_effect = rng.normal(0.0, self.condition_sd, n)
            target_mean = mu + self.subgroup_shift * female + target_effect + condition_effect
            mean = np.where(labels == 1, target_mean[enrol], nontarget_effect[enrol] + nontarget_effect[test])
            scores[term] = mean + rng.normal(0.0, 1.0, labels.size)
        return ContrastInput(
            key={"simulation": str(n)},
            family="simulation",
            scores=scores,
            labels=labels,
            clusters=enrol,
            test_speakers=test if two_way else None,
            subgroups=np.where(female[enrol], "F", "M"),
        )


def simulated_coverage(
    design: CoverageDesign,
    *,
    n_datasets: int = 200,
    n_resamples: int = 200,
    level: float = 0.95,
    eer_method: BootstrapEerMethod = "interp",
    two_way: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """Share of ``level`` intervals that cover the truth, for the clean EER, IE and the clean-term gap."""
    rng = np.random.default_rng(seed)
    truth = design.truth()
    covered = dict.fromkeys(truth, 0)
    for index in range(n_datasets):
        intervals = _simulated_intervals(design.dataset(rng, two_way), n_resamples, index, level, eer_method)
        for name, interval in intervals.items():
            # the gap is M minus F (F is the reference): the truth is its negative
            value = -truth[name] if name == "gap" else truth[name]
            covered[name] += interval["low"] is not None and interval["low"] <= value <= interval["high"]
    return {
        "n_speakers": design.n_speakers,
        "n_datasets": n_datasets,
        "n_resamples": n_resamples,
        "level": level,
        "eer_method": eer_method,
        "cluster": "two-way" if two_way else "enrolment speaker",
        "coverage": {name: hits / n_datasets for name, hits in covered.items()},
    }


def _simulated_intervals(
    dataset: ContrastInput, n_resamples: int, seed: int, level: float, eer_method: BootstrapEerMethod
) -> dict[str, dict[str, Any]]:
    """The intervals a coverage count scores, for one simulated dataset: the clean EER, IE and the clean term's
    gap M minus F, from the draws ``bootstrap_contrast`` makes for them (the same speaker draws, codes and
    weighted EERs; tested equal), without the point estimates and summaries a coverage count does not use."""
    trials, _ = _scored_trials(dataset)
    draws = SpeakerDraws.of([ids for t in trials.values() for ids in t.speakers()], n_resamples, seed)

    def eer_draws(t: _TermTrials, member: NDArray[np.bool_]) -> FloatArray:
        return _member_draws(t, draws.codes(t.enrol, t.test), draws.weights, eer_method, member)

    terms = _contrast_values({term: eer_draws(t, np.ones(t.labels.size, dtype=bool)) for term, t in trials.items()})
    groups = np.asarray(trials["clean"].subgroups).astype(str)
    gap = eer_draws(trials["clean"], groups == "M") - eer_draws(trials["clean"], groups == "F")
    return {
        "clean": percentile_interval(terms["clean"], level),
        "ie": percentile_interval(terms["ie"], level),
        "gap": percentile_interval(gap, level),
    }
