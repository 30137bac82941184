"""Per-speaker EERs of the speakers under stress (audit.statistics.menagerie.speaker_eers): the definition against a
hand count on a tiny trial set, the minimum of trials naming each speaker left out, and the intervals' coverage on a
generator of this module's own with known truth.

The generator (``simulate``): per speaker a target effect ``t_s`` and an enrolment-side non-target effect ``e_s``,
per impostor a test-side effect ``w_j`` (each N(0, 0.5^2)); a speaker's 20 target trials are 10 test utterances,
each with its own effect ``u`` (N(0, 0.5^2)), against two enrolment utterances: ``M + t_s + u + e``; its non-targets
are 4 trials against every other speaker: ``-M + e_s + w_j + e`` (``e`` N(0, 1)). The speaker's population EER
(its targets N(M + t_s, 1.25) against impostors drawn from the population, N(-M + e_s, 1.25)) is
``Phi(-(2 M + t_s - e_s) / (2 sqrt(1.25)))``. Measured coverage of the 95 % intervals (12 speakers, 400
resamples, 500 data sets: 6,000 speaker intervals, ``benchmarks/bench_speaker_eers.py``, benchmarks/RESULTS.md):
0.943 in interp and 0.959 in legacy (percentile intervals), 0.848 in rocch (bias-corrected; the hull is optimistic
on 20 targets), Monte-Carlo SE 0.003-0.005. The test runs interp on 20 data sets (240 intervals).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

from audit.metrics import eer
from audit.statistics import ScoredRecord
from audit.statistics.contrasts import SpeakerDraws
from audit.statistics.menagerie import speaker_eers
from schemas import EerMethod

MEAN = 0.75  # targets at +M, non-targets at -M: per-speaker EERs around 0.25
EFFECT = 0.5
N_SPEAKERS = 12
TEST_UTTERANCES, ENROL_UTTERANCES, PER_IMPOSTOR = 10, 2, 4


def test_the_eer_of_the_trials_enrolled_on_the_speaker_by_hand() -> None:
    """a enrolled: targets 0.9, 0.8, 0.3 and non-targets 0.7, 0.2, 0.1: the ROC's hull runs from (Pfa, Pmiss) =
    (0, 1/3) to (1/3, 0) and meets Pfa = Pmiss at 1/6. b's trials as test side of a (0.95, a non-target enrolled on b)
    and b's own are not a's; b has 1 target and 1 non-target, fewer than 3 and 3, so it is left out, with its counts.
    """
    record = ScoredRecord(
        {},
        np.array([0.9, 0.8, 0.3, 0.7, 0.2, 0.1, 0.95, 0.5]),
        np.array([1, 1, 1, 0, 0, 0, 0, 1], bool),
        np.array(["a"] * 6 + ["b", "b"]),
        np.array(["a", "a", "a", "b", "c", "c", "a", "b"]),
    )
    draws = SpeakerDraws.of([record.enrol_speaker, record.test_speaker], 50, 1)
    result = speaker_eers(record, draws, 0.95, EerMethod.ROCCH, min_trials=(3, 3))
    assert set(result["eers"]) == {"a"} and result["left_out"] == {"b": "1 target and 1 non-target trials"}
    a = result["eers"]["a"]
    assert a["estimate"] == pytest.approx(1 / 6)
    assert (a["n_target"], a["n_nontarget"], a["n_impostors"], a["n_target_utterances"]) == (3, 3, 2, 3)
    assert a["low"] is not None and 0.0 <= a["low"] <= a["high"] <= 1.0


def test_one_test_utterance_among_the_targets_withholds_the_interval() -> None:
    """Every target of a scored against one test utterance: nothing varies on the target side to resample."""
    record = ScoredRecord(
        {},
        np.array([0.9, 0.8, 0.3, 0.7, 0.2, 0.1]),
        np.array([1, 1, 1, 0, 0, 0], bool),
        np.array(["a"] * 6),
        np.array(["a", "a", "a", "b", "c", "c"]),
        np.array(["u1", "u1", "u1", "v", "w", "x"]),
    )
    draws = SpeakerDraws.of([record.enrol_speaker, record.test_speaker], 20, 1)
    a = speaker_eers(record, draws, 0.95, EerMethod.ROCCH, min_trials=(3, 3))["eers"]["a"]
    assert a["low"] is None and "one test utterance" in a["withheld"]


def test_a_speakers_utterance_draws_are_kept_for_the_next_record() -> None:
    """The draws of a speaker's target utterances depend on the seed, the speaker and how many utterances it has:
    kept by ``utterance_draws``, a second record's EERs are those computed afresh, and a record of the speaker's
    with another number of utterances draws its own."""
    rng = np.random.default_rng(4)
    first, _ = simulate(rng)
    second, _ = simulate(rng)
    assert first.test_utterance is not None
    kept_trials = ~np.char.endswith(first.test_utterance.astype(str), "-0")  # each speaker's first utterance dropped
    fewer = ScoredRecord({}, *(np.asarray(column)[kept_trials] for column in (
        first.scores, first.labels, first.enrol_speaker, first.test_speaker, first.test_utterance)))  # fmt: skip
    draws = SpeakerDraws.of([first.enrol_speaker, first.test_speaker], 60, 2)
    kept: dict[tuple[str, int], np.ndarray] = {}
    for record in (first, second, fewer):
        assert speaker_eers(record, draws, 0.95, EerMethod.INTERP, utterance_draws=kept) == speaker_eers(
            record, draws, 0.95, EerMethod.INTERP
        )
    assert set(kept) == {(name, n) for name in np.unique(first.enrol_speaker) for n in (TEST_UTTERANCES, 9)}


def test_the_scored_trials_of_a_scored_record_are_the_record() -> None:
    """``scored`` drops unscored trials and writes speakers and utterances as text; on its own result it returns
    that record, which holds the same trials."""
    record = ScoredRecord(
        {}, np.array([0.3, np.nan, 0.1]), np.array([1, 0, 0]), np.array([1, 2, 3]), np.array([4, 5, 6]),
        np.array([7, 8, 9]),
    )  # fmt: skip
    scored = record.scored()
    assert scored.scored() is scored and scored.enrol_speaker.tolist() == ["1", "3"] and scored.labels.dtype == bool
    integer_labels = ScoredRecord(
        {}, scored.scores, scored.labels.astype(int), scored.enrol_speaker, scored.test_speaker
    )
    assert integer_labels.scored().labels.dtype == bool


def simulate(rng: np.random.Generator) -> tuple[ScoredRecord, dict[str, float]]:
    """One data set of the module's generator and each speaker's population EER."""
    names = np.array([f"s{s:02d}" for s in range(N_SPEAKERS)])
    target_effect, enrol_effect, test_effect = (rng.normal(0.0, EFFECT, N_SPEAKERS) for _ in range(3))
    scores, labels, enrol, test, utterances = [], [], [], [], []
    for s in range(N_SPEAKERS):
        utterance_effect = rng.normal(0.0, EFFECT, TEST_UTTERANCES)
        for _ in range(ENROL_UTTERANCES):
            scores.append(MEAN + target_effect[s] + utterance_effect + rng.normal(0.0, 1.0, TEST_UTTERANCES))
            labels.append(np.ones(TEST_UTTERANCES, bool))
            enrol.append(np.repeat(names[s], TEST_UTTERANCES))
            test.append(np.repeat(names[s], TEST_UTTERANCES))
            utterances.append(np.array([f"{names[s]}-{u}" for u in range(TEST_UTTERANCES)]))
        others = np.repeat(np.delete(np.arange(N_SPEAKERS), s), PER_IMPOSTOR)
        scores.append(-MEAN + enrol_effect[s] + test_effect[others] + rng.normal(0.0, 1.0, others.size))
        labels.append(np.zeros(others.size, bool))
        enrol.append(np.repeat(names[s], others.size))
        test.append(names[others])
        utterances.append(np.array([f"{names[o]}-imp{i}" for i, o in enumerate(others)]))
    spread = 2.0 * math.sqrt(1.0 + EFFECT**2)
    truth = {
        str(name): float(ndtr(-(2.0 * MEAN + target_effect[s] - enrol_effect[s]) / spread))
        for s, name in enumerate(names)
    }
    record = ScoredRecord(
        {}, *(np.concatenate(parts) for parts in (scores, labels, enrol, test)), np.concatenate(utterances)
    )
    return record, truth


def coverage(datasets: int, resamples: int, seed: int, method: EerMethod = EerMethod.ROCCH) -> tuple[float, int]:
    """The share of speaker intervals (95 %) that hold the speaker's population EER, and how many there were."""
    rng = np.random.default_rng(seed)
    covered = total = 0
    for dataset in range(datasets):
        record, truth = simulate(rng)
        draws = SpeakerDraws.of([record.enrol_speaker, record.test_speaker], resamples, seed + dataset)
        for speaker, value in speaker_eers(record, draws, 0.95, method)["eers"].items():
            covered += value["low"] <= truth[speaker] <= value["high"]
            total += 1
    return covered / total, total


def test_the_generator_draws_what_its_docstring_says() -> None:
    """Each speaker has 20 targets and 44 non-targets enrolled on it; pooled over many data sets the point EER
    tracks the population EER (mean error within the estimator's few-trial bias)."""
    rng = np.random.default_rng(5)
    errors = []
    for _ in range(10):
        record, truth = simulate(rng)
        for speaker, value in truth.items():
            own = record.enrol_speaker == speaker
            assert (record.labels[own].sum(), (~record.labels[own]).sum()) == (20, 44)
            errors.append(eer(record.scores[own], record.labels[own], EerMethod.INTERP) - value)
    assert abs(float(np.mean(errors))) < 0.03


def test_speaker_intervals_cover_the_population_eer() -> None:
    """Sized down (20 data sets, 200 resamples, interp: percentile intervals): coverage of the nominal 95 % within
    a few Monte-Carlo SEs."""
    rate, total = coverage(20, 200, 11, EerMethod.INTERP)
    assert total == 20 * N_SPEAKERS
    assert 0.88 <= rate <= 0.99
