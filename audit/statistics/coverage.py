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
    _member_draws,
    contrast_values,
    scored_trials,
)
from audit.statistics.draws import FloatArray, percentile_interval
from audit.table.contrasts import TERMS
from schemas.eer_method import EerMethod

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
    eer_method: EerMethod = EerMethod.INTERP,
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
    dataset: ContrastInput, n_resamples: int, seed: int, level: float, eer_method: EerMethod
) -> dict[str, dict[str, Any]]:
    """The intervals a coverage count scores, for one simulated dataset: the clean EER, IE and the clean term's
    gap M minus F, from the draws ``bootstrap_contrast`` makes for them (the same speaker draws, codes and
    weighted EERs; tested equal), without the point estimates and summaries a coverage count does not use."""
    trials, _ = scored_trials(dataset)
    draws = SpeakerDraws.of([ids for t in trials.values() for ids in t.speakers()], n_resamples, seed)

    def eer_draws(t: TermTrials, member: NDArray[np.bool_]) -> FloatArray:
        return _member_draws(t, draws.codes(t.enrol, t.test), draws.weights, eer_method, member)

    terms = contrast_values({term: eer_draws(t, np.ones(t.labels.size, dtype=bool)) for term, t in trials.items()})
    groups = np.asarray(trials["clean"].subgroups).astype(str)
    gap = eer_draws(trials["clean"], groups == "M") - eer_draws(trials["clean"], groups == "F")
    return {
        "clean": percentile_interval(terms["clean"], level),
        "ie": percentile_interval(terms["ie"], level),
        "gap": percentile_interval(gap, level),
    }
