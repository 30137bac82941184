"""A simulated verification design for paired encoder comparisons whose true EERs are known in closed form (issue 41).

Written for the tests and ``benchmarks/bench_rankings.py``, independently of the code under test: several encoders
score one trial list of ``n_speakers`` speakers. Encoder k's target trial of speaker s scores
``mu_k + u_s + v_{s,k} + w + e_k`` and its non-target trial of s against t ``c_s + c_t + w + e_k``: a speaker effect on
targets shared by the encoders (``u``, ``target_sd``), a speaker-by-encoder effect (``v``, ``condition_sd``: a speaker
who suits one encoder less than another), speaker effects on both sides of non-target trials (``c``, ``nontarget_sd``),
a trial effect every encoder shares (``w``, ``shared_trial_sd``: the recording's difficulty) and the encoder's own
noise (``e``) with unit total trial variance. Pooled over the speakers each class is normal (targets
``N(mu_k, s_t)``, non-targets ``N(0, s_n)``), so encoder k's population EER is ``Phi(-mu_k / (s_t + s_n))``, and
``mu_k`` is set from the EER asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from audit.statistics.rankings import RankingInput


@dataclass(frozen=True)
class PairedDesign:
    """``eers``: each encoder's true EER (its name ``e0``, ``e1``, ...)."""

    n_speakers: int = 30
    eers: tuple[float, ...] = (0.1, 0.1)
    targets_per_speaker: int = 8
    nontargets_per_speaker: int = 16
    target_sd: float = 0.6
    condition_sd: float = 0.4
    nontarget_sd: float = 0.5
    shared_trial_sd: float = 0.6

    def means(self) -> list[float]:
        """Each encoder's target mean for its EER: ``mu = -Phi^-1(EER) (s_t + s_n)``."""
        s_target = np.sqrt(1.0 + self.target_sd**2 + self.condition_sd**2)
        s_nontarget = np.sqrt(1.0 + 2.0 * self.nontarget_sd**2)
        return [float(-ndtri(eer) * (s_target + s_nontarget)) for eer in self.eers]

    def dataset(self, rng: np.random.Generator, key: str = "simulation") -> RankingInput:
        n = self.n_speakers
        speakers = np.arange(n)
        enrol_t = np.repeat(speakers, self.targets_per_speaker)
        enrol_n = np.repeat(speakers, self.nontargets_per_speaker)
        other = (enrol_n + rng.integers(1, n, enrol_n.size)) % n
        enrol, test = np.concatenate([enrol_t, enrol_n]), np.concatenate([enrol_t, other])
        labels = np.r_[np.ones(enrol_t.size, dtype=int), np.zeros(enrol_n.size, dtype=int)]
        u, c = rng.normal(0.0, self.target_sd, n), rng.normal(0.0, self.nontarget_sd, n)
        shared = rng.normal(0.0, self.shared_trial_sd, labels.size)
        own_sd = np.sqrt(1.0 - self.shared_trial_sd**2)
        scores = {}
        for k, mu in enumerate(self.means()):
            v = rng.normal(0.0, self.condition_sd, n)
            mean = np.where(labels == 1, (mu + u + v)[enrol], c[enrol] + c[test])
            scores[f"e{k}"] = mean + shared + rng.normal(0.0, own_sd, labels.size)
        names = np.array([f"s{s:03d}" for s in speakers])
        return RankingInput({"condition": key}, scores, labels, names[enrol], names[test])
