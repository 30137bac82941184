"""Coverage of the bootstrap intervals, by simulation with known truth."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from audit.statistics.contrasts import (
    ContrastInput,
    SpeakerDraws,
    TermTrials,
    _eer_and_draws,
    _member_draws,
    contrast_values,
    estimate_with_interval,
    scored_trials,
)
from audit.statistics.draws import FloatArray, percentile_interval
from audit.table import TERMS
from schemas import EerMethod

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
    ``subgroup_shift`` is added to ``mu`` for subgroup F (a true gap). ``count_spread`` > 0 gives speakers unequal
    numbers of trials: each speaker's target and non-target counts are drawn uniformly within ``1 +- count_spread``
    times the means (at least one); counts independent of the effects leave the truth unchanged.
    """

    n_speakers: int
    targets_per_speaker: int = 10
    nontargets_per_speaker: int = 20
    means: tuple[float, float, float, float] = (2.4, 2.0, 1.9, 1.2)  # clean, a, b, ab
    target_sd: float = 0.6
    condition_sd: float = 0.4
    nontarget_sd: float = 0.5
    subgroup_shift: float = 0.4
    count_spread: float = 0.0

    def true_eer(self, mu: float, shifted_share: float = 0.0) -> float:
        """The EER of the population: targets a mixture of N(mu + shift, s_t) (share ``shifted_share``) and
        N(mu, s_t), non-targets N(0, s_n); the threshold where the miss and false-alarm rates meet, found by
        bisection to the last bit (their difference rises with the threshold; scipy.optimize's root finder cost
        every bundle audit the import of scipy.optimize, about 0.15 s)."""
        from scipy.special import ndtr  # the normal CDF (scipy.stats.norm's, without importing scipy.stats)

        target = np.sqrt(1.0 + self.target_sd**2 + self.condition_sd**2)
        nontarget = np.sqrt(1.0 + 2.0 * self.nontarget_sd**2)

        def miss(x: float) -> float:
            shifted = ndtr((x - mu - self.subgroup_shift) / target)
            return float(shifted_share * shifted + (1 - shifted_share) * ndtr((x - mu) / target))

        low, high = -20.0, 20.0
        while low < (middle := 0.5 * (low + high)) < high:  # until no float lies between the two
            low, high = (middle, high) if miss(middle) < ndtr(-middle / nontarget) else (low, middle)
        return float(ndtr(-high / nontarget))

    def truth(self) -> dict[str, float]:
        """True clean EER, IE (half the speakers in the shifted subgroup) and clean-term gap F minus M."""
        clean, a, b, ab = (self.true_eer(mu, 0.5) for mu in self.means)
        gap = self.true_eer(self.means[0], 1.0) - self.true_eer(self.means[0], 0.0)
        return {"clean": clean, "ie": ab - (a + b - clean), "gap": gap}

    def dataset(self, rng: np.random.Generator, two_way: bool = True) -> ContrastInput:
        """One simulated contrast (all four terms on one trial list)."""
        n = self.n_speakers
        per_t, per_n = self._counts(rng, self.targets_per_speaker), self._counts(rng, self.nontargets_per_speaker)
        speakers = np.arange(n)
        female = speakers % 2 == 0
        enrol_t, enrol_n = np.repeat(speakers, per_t), np.repeat(speakers, per_n)
        enrol = np.concatenate([enrol_t, enrol_n])
        other = (enrol_n + rng.integers(1, n, enrol_n.size)) % n
        test = np.concatenate([enrol_t, other])
        labels = np.r_[np.ones(enrol_t.size, dtype=int), np.zeros(enrol_n.size, dtype=int)]
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

    def _counts(self, rng: np.random.Generator, mean: int) -> int | NDArray[np.int64]:
        """Trials per speaker: ``mean`` each, or (``count_spread``) drawn per speaker."""
        if self.count_spread <= 0:
            return mean
        spread = rng.uniform(1.0 - self.count_spread, 1.0 + self.count_spread, self.n_speakers)
        return np.maximum(1, np.round(mean * spread)).astype(np.int64)


def simulated_coverage(
    design: CoverageDesign,
    *,
    n_datasets: int = 200,
    n_resamples: int = 200,
    level: float = 0.95,
    eer_method: EerMethod = EerMethod.INTERP,
    two_way: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """Share of ``level`` intervals that cover the truth, for the clean EER, IE and the clean-term gap: the
    intervals the audit gives (``coverage``; bias-corrected for the single EER) and, beside them, the percentile
    intervals of the same draws (``coverage_percentile``), each with its Monte-Carlo standard error
    ``sqrt(p (1 - p) / n_datasets)``."""
    rng = np.random.default_rng(seed)
    truth = design.truth()
    covered = {kind: dict.fromkeys(truth, 0) for kind in ("audit", "percentile")}
    for index in range(n_datasets):
        intervals = _simulated_intervals(design.dataset(rng, two_way), n_resamples, index, level, eer_method)
        for (kind, name), interval in intervals.items():
            # the gap is M minus F (F is the reference): the truth is its negative
            value = -truth[name] if name == "gap" else truth[name]
            covered[kind][name] += interval["low"] is not None and interval["low"] <= value <= interval["high"]
    rates = {kind: {name: hits / n_datasets for name, hits in counts.items()} for kind, counts in covered.items()}
    return {
        "n_speakers": design.n_speakers,
        "n_datasets": n_datasets,
        "n_resamples": n_resamples,
        "level": level,
        "eer_method": eer_method,
        "cluster": "two-way" if two_way else "enrolment speaker",
        "coverage": rates["audit"],
        "coverage_percentile": rates["percentile"],
        "mc_se": {name: float(np.sqrt(p * (1.0 - p) / n_datasets)) for name, p in rates["audit"].items()},
    }


def _simulated_intervals(
    dataset: ContrastInput, n_resamples: int, seed: int, level: float, eer_method: EerMethod
) -> dict[tuple[str, str], dict[str, Any]]:
    """The intervals a coverage count scores, for one simulated dataset: the clean EER, IE and the clean term's
    gap M minus F as ``bootstrap_contrast`` gives them (``("audit", name)``: the same speaker draws, codes,
    weighted EERs and intervals; tested equal), and the percentile intervals of the same draws
    (``("percentile", name)``), without the estimates and summaries a coverage count does not use."""
    trials, _ = scored_trials(dataset)
    draws = SpeakerDraws.of([ids for t in trials.values() for ids in t.speakers()], n_resamples, seed)

    def eer_draws(t: TermTrials, member: NDArray[np.bool_]) -> FloatArray:
        return _member_draws(t, draws.codes(t.enrol, t.test), draws.weights, eer_method, member)

    clean = trials["clean"]
    # the clean EER and its draws from one sort of its scores, as bootstrap_contrast takes them
    codes = draws.codes(clean.enrol, clean.test)
    estimate, clean_draws = _eer_and_draws(clean, *codes, draws.weights, eer_method, None)
    others = {term: eer_draws(t, np.ones(t.labels.size, dtype=bool)) for term, t in trials.items() if term != "clean"}
    terms = contrast_values({"clean": clean_draws, **others})
    groups = np.asarray(clean.subgroups).astype(str)
    gap = eer_draws(clean, groups == "M") - eer_draws(clean, groups == "F")
    audit = estimate_with_interval(estimate, terms["clean"], level, corrected=True)
    ie, gap_interval = percentile_interval(terms["ie"], level), percentile_interval(gap, level)  # either kind's
    return {
        ("audit", "clean"): {key: audit[key] for key in ("low", "high", "n_undefined")},
        ("audit", "ie"): ie,
        ("audit", "gap"): gap_interval,
        ("percentile", "clean"): percentile_interval(terms["clean"], level),
        ("percentile", "ie"): ie,
        ("percentile", "gap"): gap_interval,
    }


# The coverage of the audit's 95 % intervals measured by ``benchmarks/coverage_table.py`` (its defaults: 1,000
# datasets of 1,000 resamples per cell, ``CoverageDesign`` with 8 target and 16 non-target trials per speaker on
# average, counts within +-60 %): variant, speakers, datasets, then the coverage and Monte-Carlo standard error of
# a single EER (bias-corrected), IE and a subgroup gap, and the single EER's percentile coverage on the same draws.
MEASURED_COVERAGE: tuple[tuple[str, int, int, float, float, float, float, float, float, float], ...] = (
    ("interp", 7, 1000, 0.871, 0.011, 0.976, 0.005, 0.954, 0.007, 0.867),
    ("interp", 15, 1000, 0.928, 0.008, 0.985, 0.004, 0.97, 0.005, 0.918),
    ("interp", 30, 1000, 0.949, 0.007, 0.981, 0.004, 0.963, 0.006, 0.95),
    ("interp", 60, 1000, 0.96, 0.006, 0.983, 0.004, 0.969, 0.005, 0.962),
    ("legacy", 7, 1000, 0.867, 0.011, 0.984, 0.004, 0.959, 0.006, 0.889),
    ("legacy", 15, 1000, 0.921, 0.009, 0.988, 0.003, 0.973, 0.005, 0.922),
    ("legacy", 30, 1000, 0.944, 0.007, 0.984, 0.004, 0.965, 0.006, 0.949),
    ("legacy", 60, 1000, 0.959, 0.006, 0.984, 0.004, 0.971, 0.005, 0.963),
    ("rocch", 7, 1000, 0.821, 0.012, 0.963, 0.006, 0.926, 0.008, 0.772),
    ("rocch", 15, 1000, 0.897, 0.01, 0.976, 0.005, 0.959, 0.006, 0.844),
    ("rocch", 30, 1000, 0.932, 0.008, 0.972, 0.005, 0.958, 0.006, 0.904),
    ("rocch", 60, 1000, 0.958, 0.006, 0.978, 0.005, 0.955, 0.007, 0.938),
)


def measured_coverage(eer_method: str, n_speakers: int, level: float = 0.95) -> dict[str, Any] | None:
    """The row of ``MEASURED_COVERAGE`` for this variant at the largest tabulated speaker count not above
    ``n_speakers`` (the smallest when below every count); None for another level or an unknown variant."""
    rows = [row for row in MEASURED_COVERAGE if row[0] == eer_method]
    if level != 0.95 or not rows:
        return None
    fitting = [row for row in rows if row[1] <= n_speakers] or rows[:1]
    names = ("eer_method", "n_speakers", "n_datasets", "clean", "clean_se", "ie", "ie_se", "gap", "gap_se")
    return dict(zip((*names, "clean_percentile"), fitting[-1], strict=True))
