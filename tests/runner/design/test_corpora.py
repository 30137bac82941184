"""Several corpora in one run and metadata conditions: configuration checks, the cells' selections, the selected
trial sampler against hand-enumerated pair sets, plans that share lists, and a run on two corpora whose utterance
ids repeat (scores recomputed from each corpus's own audio)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from runner.design import trials as trials_module
from runner.design.config import load_config
from runner.design.trials import TrialBudgetError, sample_selected_trials, sample_trials
from runner.encoders import load_encoder
from runner.execution.jobs import read_clean_wave
from runner.pipeline import RunOptions, run
from runner.plan import plan_run
from schemas.errors import InputError
from tests.runner.fake_corpora import write_tone

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"

CONFIG = """
[run]
name = "two-corpora"
seed = 3

[corpora.first]
adapter = "ravdess"
root = "{first}"

[corpora.second]
adapter = "ravdess"
root = "{second}"

[encoders]
roster = "{roster}"
labels = ["mfcc-stats"]

[conditions]
neutral = {{ select = {{ emotion = "neutral" }} }}
angry = {{ select = {{ emotion = ["angry"] }} }}
angry-white = {{ select = {{ emotion = "angry" }}, operators = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}] }}
"white-10dB" = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}]

[[experiments]]
id = "E01"
title = "emotion mismatch"
corpus = "first"
use = "mismatch"
target_trials = 2
nontarget_trials = 3
enrol_conditions = ["neutral"]
test_conditions = ["neutral", "angry", "angry-white"]

[[experiments]]
id = "E14"
title = "emotion x noise"
corpus = "second"
use = "interaction"
degrade = "both"
target_trials = 2
nontarget_trials = 4
factor_a = {{ name = "emotion", levels = ["angry"], reference = "neutral" }}
factor_b = {{ name = "noise", levels = ["white-10dB"] }}
"""

# Two actors, each with two neutral and two angry speech files (statement 1 and 2); actor 01 is male.
FILES = {
    "Actor_01": ["03-01-01-01-01-01-01", "03-01-01-01-02-01-01", "03-01-05-01-01-01-01", "03-01-05-01-02-01-01"],
    "Actor_02": ["03-01-01-01-01-01-02", "03-01-01-01-02-01-02", "03-01-05-01-01-01-02", "03-01-05-01-02-01-02"],
}


def make_corpus(root: Path, base_hz: float) -> Path:
    """A RAVDESS-named tree; every file a different tone, so each corpus's audio differs from the other's."""
    for actor, (folder, stems) in enumerate(FILES.items()):
        for position, stem in enumerate(stems):
            write_tone(root / folder / f"{stem}.wav", hz=base_hz + 90 * actor + 17 * position)
    return root


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    first = make_corpus(tmp_path / "first", 180.0)
    second = make_corpus(tmp_path / "second", 410.0)
    path = tmp_path / "run.toml"
    path.write_text(CONFIG.format(first=first, second=second, roster=ROSTER))
    return path


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "edited.toml"
    path.write_text(text)
    return path


def test_corpora_tables_experiment_corpus_and_selections_load(config_path: Path) -> None:
    config = load_config(config_path)
    assert sorted(config.corpora) == ["first", "second"]
    assert {c.adapter for c in config.corpora.values()} == {"ravdess"}
    assert [e.corpus for e in config.experiments] == ["first", "second"]
    assert config.selections["angry"] == (("emotion", ("angry",)),)
    assert config.conditions["angry"] == () and config.conditions["angry-white"][0]["name"] == "white"
    mismatch = config.experiment_cells(config.experiments[0])
    assert [(c.condition, c.enrol_select, c.test_select) for c in mismatch] == [
        ("neutral->neutral", (("emotion", ("neutral",)),), (("emotion", ("neutral",)),)),
        ("neutral->angry", (("emotion", ("neutral",)),), (("emotion", ("angry",)),)),
        ("neutral->angry-white", (("emotion", ("neutral",)),), (("emotion", ("angry",)),)),
    ]
    factorial = config.experiment_cells(config.experiments[1])
    neutral, angry = (("emotion", ("neutral",)),), (("emotion", ("angry",)),)
    # degrade = "both": both sides select; the reference level selects the factor's reference population.
    assert [(c.condition, c.enrol_select, c.test_select) for c in factorial] == [
        ("clean", neutral, neutral),
        ("white-10dB", neutral, neutral),
        ("angry", angry, angry),
        ("angry+white-10dB", angry, angry),
    ]
    with pytest.raises(InputError, match="single corpus"):
        _ = config.corpus


def test_test_side_selection_when_only_the_test_side_is_degraded(config_path: Path) -> None:
    text = config_path.read_text().replace('degrade = "both"\n', "").replace(', reference = "neutral"', "")
    config = load_config(write(config_path.parent, text))
    cells = config.experiment_cells(config.experiments[1])
    assert [(c.condition, c.enrol_select, c.test_select) for c in cells] == [
        ("clean", (), ()),
        ("white-10dB", (), ()),
        ("angry", (), (("emotion", ("angry",)),)),
        ("angry+white-10dB", (), (("emotion", ("angry",)),)),
    ]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: s.replace('corpus = "second"', 'corpus = "third"'), "experiments[1].corpus: unknown corpus 'third'"),
        (lambda s: s.replace('adapter = "ravdess"', 'adapter = "timit"', 1), "corpora.first.adapter: unknown"),
        (lambda s: s + '\n[corpus]\nname = "asterisk"\nroot = "."\n', "either one [corpus] table or"),
        (lambda s: s.replace('emotion = ["angry"]', 'mood = "angry"'), "conditions.angry.select.mood"),
        (lambda s: s.replace('emotion = ["angry"]', "emotion = []"), "conditions.angry.select.emotion"),
        (lambda s: s.replace('emotion = ["angry"]', "emotion = true"), "conditions.angry.select.emotion"),
        (lambda s: s.replace('reference = "neutral"', 'reference = "white-10dB"'), "factor_a.reference"),
        (lambda s: s.replace('levels = ["white-10dB"]', 'levels = ["neutral"]'), "both select column 'emotion'"),
        (lambda s: s.replace("[run]", '[registry]\nexperiments = ["E01"]\n\n[run]'), "unlisted ['E14']"),
        (
            lambda s: s.replace("[run]", '[registry]\nexperiments = ["E01", "E14"]\nabsent = ["E14"]\n\n[run]'),
            "E14 is listed more than once",
        ),
        (lambda s: s.replace("[run]", '[registry]\nexperiments = ["E01", "E14"]\nremoved = ["E30"]\n\n[run]'), "E30"),
        (
            lambda s: s.replace('adapter = "ravdess"\n', 'adapter = "ravdess"\nrelease = " "\n', 1),
            "corpora.first.release: expected the name of a corpus release, got an empty string",
        ),
        (
            lambda s: s.replace('adapter = "ravdess"\n', 'adapter = "ravdess"\nrelease = 1.0\n', 1),
            "corpora.first.release: expected",
        ),
    ],
)
def test_bad_corpora_and_metadata_conditions_name_the_key(config_path: Path, edit: object, expected: str) -> None:
    path = write(config_path.parent, edit(config_path.read_text()))  # type: ignore[operator]
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert expected in caught.value.line()


# ---- the selected-trial sampler against hand-enumerated pairs ---------------------------------------------------

# Speaker A: a1 angry, a2 neutral, a3 angry; speaker B: b1 angry, b2 neutral; speaker C: c1 neutral.
TABLE = pd.DataFrame(
    {
        "utt_id": ["a1", "a2", "a3", "b1", "b2", "c1"],
        "speaker": ["A", "A", "A", "B", "B", "C"],
        "emotion": ["angry", "neutral", "angry", "angry", "neutral", "neutral"],
        "gender": ["F", "F", "F", "M", "M", "F"],
    }
)
NEUTRAL, ANGRY = (("emotion", ("neutral",)),), (("emotion", ("angry",)),)
# Enrolment neutral -> test angry, written out by hand.
TARGETS = {("a2", "a1"), ("a2", "a3"), ("b2", "b1")}
NONTARGETS = {("a2", "b1"), ("b2", "a1"), ("b2", "a3"), ("c1", "a1"), ("c1", "a3"), ("c1", "b1")}


def pairs(frame: pd.DataFrame, label: int) -> set[tuple[str, str]]:
    rows = frame[frame["label"] == label]
    return set(zip(rows["enrol_utt"], rows["test_utt"], strict=True))


@pytest.mark.parametrize("limit", [trials_module.ENUMERATION_LIMIT, 0])  # enumeration, then rejection sampling
def test_selected_sides_draw_exactly_the_allowed_pairs(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr(trials_module, "ENUMERATION_LIMIT", limit)
    common = {"experiment_id": "E01", "seed": 5, "enrol_select": NEUTRAL, "test_select": ANGRY}
    frame = sample_selected_trials(TABLE, n_target=3, n_nontarget=6, **common).frame  # type: ignore[arg-type]
    assert pairs(frame, 1) == TARGETS and pairs(frame, 0) == NONTARGETS
    assert list(frame["trial_index"]) == list(range(9))
    partial = sample_selected_trials(TABLE, n_target=2, n_nontarget=4, **common).frame  # type: ignore[arg-type]
    assert pairs(partial, 1) < TARGETS and pairs(partial, 0) < NONTARGETS
    with pytest.raises(TrialBudgetError, match="4 target trials, the selected utterances allow 3"):
        sample_selected_trials(TABLE, n_target=4, n_nontarget=1, **common)  # type: ignore[arg-type]
    with pytest.raises(TrialBudgetError, match="7 non-target trials, the selected utterances allow 6"):
        sample_selected_trials(TABLE, n_target=1, n_nontarget=7, **common)  # type: ignore[arg-type]


def test_selected_sides_are_seeded_by_the_design_only() -> None:
    common = {"experiment_id": "E01", "n_target": 2, "n_nontarget": 3, "enrol_select": NEUTRAL, "test_select": ANGRY}
    first = sample_selected_trials(TABLE, seed=1, **common)  # type: ignore[arg-type]
    shuffled = TABLE.sample(frac=1.0, random_state=0)
    assert sample_selected_trials(shuffled, seed=1, **common).csv_bytes == first.csv_bytes  # type: ignore[arg-type]
    others = {sample_selected_trials(TABLE, seed=s, **common).trial_list_id for s in range(2, 8)}  # type: ignore[arg-type]
    assert len(others | {first.trial_list_id}) > 1


def test_same_selection_on_both_sides_is_the_unordered_sampler_on_the_selection() -> None:
    frame = sample_selected_trials(
        TABLE, experiment_id="E14", n_target=1, n_nontarget=2, seed=0, enrol_select=ANGRY, test_select=ANGRY
    ).frame
    unordered = {frozenset(pair) for pair in pairs(frame, 1)}, {frozenset(pair) for pair in pairs(frame, 0)}
    assert unordered == ({frozenset({"a1", "a3"})}, {frozenset({"a1", "b1"}), frozenset({"a3", "b1"})})
    with pytest.raises(TrialBudgetError, match="emotion=angry"):
        sample_selected_trials(
            TABLE, experiment_id="E14", n_target=2, n_nontarget=1, seed=0, enrol_select=ANGRY, test_select=ANGRY
        )


@pytest.mark.parametrize(("subgroup", "side"), [(None, "both"), (("gender", "F"), "both"), (("gender", "M"), "enrol")])
def test_without_selections_the_sampler_is_the_default_one_bit_for_bit(subgroup: object, side: str) -> None:
    design = {"experiment_id": "D04", "n_target": 1, "n_nontarget": 2, "seed": 9, "subgroup": subgroup}
    plain = sample_trials(TABLE, subgroup_side=side, **design)  # type: ignore[arg-type]
    chosen = sample_selected_trials(TABLE, enrol_select=(), test_select=(), subgroup_side=side, **design)  # type: ignore[arg-type]
    assert chosen.csv_bytes == plain.csv_bytes


def test_subgroup_restricts_the_enrolment_side_and_with_both_the_test_side() -> None:
    frame = sample_selected_trials(
        TABLE,
        experiment_id="E16",
        n_target=2,
        n_nontarget=2,
        seed=0,
        enrol_select=NEUTRAL,
        test_select=ANGRY,
        subgroup=("gender", "F"),
    ).frame
    # Enrolment a2 or c1 (neutral, F), test a1 or a3 (angry, F): targets a2->a1, a2->a3; non-targets c1->a1, c1->a3.
    assert pairs(frame, 1) == {("a2", "a1"), ("a2", "a3")} and pairs(frame, 0) == {("c1", "a1"), ("c1", "a3")}
    assert set(frame["subgroup"]) == {"gender=F"}


# ---- plans and a run over two corpora ----------------------------------------------------------------------------


def pools_of(config_path: Path) -> dict[str, pd.DataFrame]:
    from runner.corpora import load_corpus

    config = load_config(config_path)
    return {name: load_corpus(c.adapter, c.root).frame for name, c in config.corpora.items()}


def test_plans_share_lists_per_selection_pair_and_use_their_corpus(config_path: Path) -> None:
    config = load_config(config_path)
    plans = plan_run(config, pools_of(config_path))
    lists = {p.cell.condition: p.trials.trial_list_id for p in plans if p.experiment.id == "E01"}
    # neutral->angry and neutral->angry-white select the same sides: one list; neutral->neutral another.
    assert lists["neutral->angry"] == lists["neutral->angry-white"] != lists["neutral->neutral"]
    factorial = {p.cell.condition: p.trials.trial_list_id for p in plans if p.experiment.id == "E14"}
    assert factorial["clean"] == factorial["white-10dB"] != factorial["angry"] == factorial["angry+white-10dB"]
    angry = next(p.trials.frame for p in plans if p.cell.condition == "angry")
    assert set(angry["enrol_utt"]) | set(angry["test_utt"]) <= {
        "03-01-05-01-01-01-01",
        "03-01-05-01-02-01-01",
        "03-01-05-01-01-01-02",
        "03-01-05-01-02-01-02",
    }


def test_a_run_over_two_corpora_scores_each_corpus_own_audio(config_path: Path, tmp_path: Path) -> None:
    config = load_config(config_path)
    summary = run(config, tmp_path / "out", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert dict(zip(results["experiment"], results["corpus"], strict=False)) == {"E01": "first", "E14": "second"}
    recorded = pd.read_csv(tmp_path / "out" / "corpus" / "first" / "utterances.csv")
    assert set(zip(recorded["source_package"], recorded["source_version"].astype(str), strict=True)) == {
        ("RAVDESS", "1.0.0")  # the release the ravdess adapter reads, recorded in the bundle's corpus table
    }
    operators = json.loads((tmp_path / "out" / "operators.json").read_text())
    assert sorted(operators["sources"]) == ["first", "second"]
    assert all(key.split(":")[0] in ("first", "second") for key in operators["chains"])
    # Oracle: the cosine of MFCC-statistics embeddings computed here from each corpus's files.
    encoder = load_encoder("mfcc", "mfcc-stats", None)
    for corpus, record in (("first", "E01.mfcc-stats.neutral_to_neutral"), ("second", "E14.mfcc-stats.clean")):
        row = results[results["record_id"] == record].iloc[0]
        trials = pd.read_csv(tmp_path / "out" / "trials" / f"{row['trial_list_id']}.csv")
        scores = pd.read_parquet(tmp_path / "out" / "scores" / f"{record}.parquet")
        root = config.corpora[corpus].root
        first = trials.iloc[0]
        waves = [read_clean_wave(next(root.rglob(f"{utt}.wav")))[0] for utt in (first["enrol_utt"], first["test_utt"])]
        enrol, test = encoder.embed(waves, 16000)
        expected = float(np.dot(enrol, test) / (np.linalg.norm(enrol) * np.linalg.norm(test)))
        assert scores["score"].iloc[0] == pytest.approx(expected, abs=1e-6)
    assert summary.n_records == len(results)


def test_a_missing_corpus_folder_names_the_folder_and_the_adapter(config_path: Path, tmp_path: Path) -> None:
    text = config_path.read_text().replace(str(tmp_path / "second"), str(tmp_path / "absent"))
    config = load_config(write(tmp_path, text))
    with pytest.raises(InputError) as caught:
        run(config, tmp_path / "out", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    line = caught.value.line()
    assert str(tmp_path / "absent") in line and "the ravdess corpus" in line and "[corpora.second], for E14" in line


def test_an_unset_environment_variable_in_a_path_is_named(config_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("INTERBIAS_NOWHERE", raising=False)
    text = config_path.read_text().replace(f'root = "{config_path.parent / "first"}"', 'root = "$INTERBIAS_NOWHERE/x"')
    with pytest.raises(InputError) as caught:
        load_config(write(config_path.parent, text))
    assert "corpora.first.root: environment variable INTERBIAS_NOWHERE in '$INTERBIAS_NOWHERE/x' is not set" in (
        caught.value.line()
    )


def test_same_speaker_pairs_are_listed_in_full_enumeration_order_without_n_squared_memory() -> None:
    speakers = np.random.default_rng(0).integers(0, 7, size=40)
    positions = np.arange(40)
    # Oracle: the full (i, j) enumeration, filtered, in row-major order.
    i, j = np.triu_indices(40, k=1)
    same = speakers[i] == speakers[j]
    unordered = trials_module._same_speaker_pair_codes(speakers, positions, positions, ordered=False)
    np.testing.assert_array_equal(unordered, i[same] * 40 + j[same])
    enrol, test = positions[::2], positions[5:]
    i, j = np.repeat(enrol, len(test)), np.tile(test, len(enrol))
    same = (speakers[i] == speakers[j]) & (i != j)
    ordered = trials_module._same_speaker_pair_codes(speakers, enrol, test, ordered=True)
    np.testing.assert_array_equal(ordered, i[same] * 40 + j[same])
    # 60,000 utterances of 3,000 speakers: a full enumeration would hold 1.8e9 pairs; the targets need 570,000.
    large = pd.DataFrame(
        {"utt_id": [f"u{k:05d}" for k in range(60_000)], "speaker": [f"s{k // 20}" for k in range(60_000)]}
    )
    frame = sample_trials(large, experiment_id="E13", n_target=50, n_nontarget=50, seed=1).frame
    targets = frame[frame["label"] == 1]
    assert (targets["enrol_speaker"] == targets["test_speaker"]).all()
    assert (targets["enrol_utt"] != targets["test_utt"]).all()


def test_a_pinned_release_the_folder_does_not_hold_is_one_line_before_any_work(
    config_path: Path, tmp_path: Path
) -> None:
    text = config_path.read_text().replace('adapter = "ravdess"\n', 'adapter = "ravdess"\nrelease = "1.0.0"\n', 1)
    text = text.replace(
        '[corpora.second]\nadapter = "ravdess"\n', '[corpora.second]\nadapter = "ravdess"\nrelease = "2.0"\n'
    )
    config = load_config(write(tmp_path, text))
    assert (config.corpora["first"].release, config.corpora["second"].release) == ("1.0.0", "2.0")
    with pytest.raises(InputError) as caught:
        run(config, tmp_path / "out", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    assert caught.value.line() == (
        f"{tmp_path / 'edited.toml'} (corpus second, release): release '2.0' is declared but the ravdess folder "
        "holds release '1.0.0'"
    )
    assert not (tmp_path / "out").exists()
