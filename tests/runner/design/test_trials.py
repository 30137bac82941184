"""Trial sampling: exact budgets, distinct pairs, labels from speakers, subgroups, and independence from models."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from runner.design.trials import TrialBudgetError, sample_trials, select_pool


def utterances(speakers: dict[str, int], genders: dict[str, str] | None = None) -> pd.DataFrame:
    rows = [
        {"utt_id": f"{speaker}-{i:03d}", "speaker": speaker, "gender": (genders or {}).get(speaker)}
        for speaker, count in speakers.items()
        for i in range(count)
    ]
    return pd.DataFrame(rows)


def test_budget_labels_and_distinct_pairs() -> None:
    table = utterances({"a": 5, "b": 4, "c": 3})
    trials = sample_trials(table, experiment_id="D01", n_target=12, n_nontarget=30, seed=7)
    frame = trials.frame
    assert (frame["label"] == 1).sum() == 12 and (frame["label"] == 0).sum() == 30
    assert list(frame["trial_index"]) == list(range(42))
    same = frame["enrol_utt"].str[0] == frame["test_utt"].str[0]
    assert (same == (frame["label"] == 1)).all()
    pairs = {frozenset(p) for p in zip(frame["enrol_utt"], frame["test_utt"], strict=True)}
    assert len(pairs) == 42


def test_whole_population_when_budget_equals_pairs() -> None:
    # a: C(3,2)=3 target pairs, b: C(2,2)=1; non-target pairs 3*2=6 (hand count).
    table = utterances({"a": 3, "b": 2})
    frame = sample_trials(table, experiment_id="D01", n_target=4, n_nontarget=6, seed=1).frame
    assert len(frame) == 10
    with pytest.raises(TrialBudgetError, match="allow 4"):
        sample_trials(table, experiment_id="D01", n_target=5, n_nontarget=6, seed=1)
    with pytest.raises(TrialBudgetError, match="allow 6"):
        sample_trials(table, experiment_id="D01", n_target=1, n_nontarget=7, seed=1)


def test_same_inputs_same_bytes_and_seed_changes_them() -> None:
    table = utterances({"a": 6, "b": 6, "c": 6})
    first = sample_trials(table, experiment_id="D01", n_target=10, n_nontarget=10, seed=3)
    shuffled = table.sample(frac=1.0, random_state=0)
    again = sample_trials(shuffled, experiment_id="D01", n_target=10, n_nontarget=10, seed=3)
    assert first.csv_bytes == again.csv_bytes and first.trial_list_id == again.trial_list_id
    other = sample_trials(table, experiment_id="D01", n_target=10, n_nontarget=10, seed=4)
    assert other.trial_list_id != first.trial_list_id
    assert len(first.trial_list_id) == 16


def test_subgroup_keeps_both_sides_inside() -> None:
    table = utterances({"f1": 4, "f2": 4, "m1": 4, "m2": 4}, {"f1": "F", "f2": "F", "m1": "M", "m2": "M"})
    frame = sample_trials(table, experiment_id="D04", n_target=6, n_nontarget=8, seed=0, subgroup=("gender", "F")).frame
    assert set(frame["enrol_speaker"]) | set(frame["test_speaker"]) <= {"f1", "f2"}
    assert (frame["subgroup"] == "gender=F").all()


def test_rejection_sampler_matches_budget_on_a_large_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.design import trials

    monkeypatch.setattr(trials, "ENUMERATION_LIMIT", 10)
    table = utterances({f"s{i}": 20 for i in range(30)})
    frame = sample_trials(table, experiment_id="D01", n_target=300, n_nontarget=300, seed=5).frame
    pairs = {frozenset(p) for p in zip(frame["enrol_utt"], frame["test_utt"], strict=True)}
    assert len(pairs) == 600
    assert (frame["label"] == (frame["enrol_speaker"] == frame["test_speaker"]).astype(int)).all()


def test_enrolment_side_is_balanced() -> None:
    table = utterances({"a": 30, "b": 30})
    frame = sample_trials(table, experiment_id="D01", n_target=400, n_nontarget=400, seed=2).frame
    first_is_enrol = (frame["enrol_utt"] < frame["test_utt"]).mean()
    assert abs(first_is_enrol - 0.5) < 0.06  # 800 fair coin flips: sd 0.018


def test_pool_takes_at_most_n_per_speaker_deterministically() -> None:
    table = utterances({"a": 10, "b": 3})
    pool = select_pool(table, 4, seed=9)
    assert pool["speaker"].value_counts().to_dict() == {"a": 4, "b": 3}
    assert pool.equals(select_pool(table.iloc[::-1], 4, seed=9))
    assert np.all(pool["utt_id"].to_numpy()[:-1] <= pool["utt_id"].to_numpy()[1:])


def test_enrolment_side_subgroup_for_a_single_speaker_group() -> None:
    # One male speaker: within-M non-targets do not exist, enrolment-side ones do (4 * 8 = 32 ordered pairs).
    table = utterances({"m1": 4, "f1": 4, "f2": 4}, {"m1": "M", "f1": "F", "f2": "F"})
    with pytest.raises(TrialBudgetError, match="allow 0"):
        sample_trials(table, experiment_id="D04", n_target=2, n_nontarget=2, seed=0, subgroup=("gender", "M"))
    frame = sample_trials(
        table,
        experiment_id="D04",
        n_target=6,
        n_nontarget=32,
        seed=0,
        subgroup=("gender", "M"),
        subgroup_side="enrol",
    ).frame
    assert (frame["enrol_speaker"] == "m1").all()
    assert set(frame.loc[frame["label"] == 1, "test_speaker"]) == {"m1"}
    assert set(frame.loc[frame["label"] == 0, "test_speaker"]) == {"f1", "f2"}
    assert len({(e, t) for e, t in zip(frame["enrol_utt"], frame["test_utt"], strict=True)}) == 38
