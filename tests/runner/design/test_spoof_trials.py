"""Spoof trials (E10, E11): spoof conditions in a configuration, the spoof-trial sampler against hand-enumerated
pair sets, and a run whose spoof files reuse the genuine corpus's utterance ids (scores recomputed from the spoof
folder's own audio)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from runner.design import trials as trials_module
from runner.design.config import load_config
from runner.design.experiments import SpoofSource
from runner.design.trials import SpoofTargetError, TrialBudgetError, add_spoof_trials, sample_selected_trials
from runner.encoders import load_encoder
from runner.execution.jobs import read_clean_wave
from runner.pipeline import RunOptions, run
from schemas.errors import InputError
from tests.runner.fake_corpora import write_text, write_tone

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"

# ---- the sampler against hand-enumerated pairs -------------------------------------------------------------------

# Genuine: speaker A a1 a2 a3, speaker B b1 b2, speaker C c1 c2. Spoofs: system X imitates A twice and B once,
# system Y imitates C once.
GENUINE = pd.DataFrame(
    {
        "utt_id": ["a1", "a2", "a3", "b1", "b2", "c1", "c2"],
        "speaker": ["A", "A", "A", "B", "B", "C", "C"],
        "emotion": ["neutral", "angry", "neutral", "neutral", "angry", "neutral", "neutral"],
    }
)
SPOOFS = pd.DataFrame(
    {
        "utt_id": ["x/A1", "x/A2", "x/B1", "y/C1"],
        "speaker": ["A", "A", "B", "C"],
        "spoof_system": ["X", "X", "X", "Y"],
    }
)
# Every (genuine enrolment, spoof file imitating its speaker): 3 x 2 + 2 x 1 + 2 x 1 = 10 pairs.
ALL_SPOOF_PAIRS = {(a, s) for a in ("a1", "a2", "a3") for s in ("x/A1", "x/A2")}
ALL_SPOOF_PAIRS |= {("b1", "x/B1"), ("b2", "x/B1"), ("c1", "y/C1"), ("c2", "y/C1")}


def genuine_list() -> trials_module.TrialList:
    return sample_selected_trials(
        GENUINE, experiment_id="E10", n_target=3, n_nontarget=4, seed=2, enrol_select=(), test_select=()
    )


def spoof_list(
    n_spoof: int, pool: pd.DataFrame = GENUINE, spoofs: pd.DataFrame = SPOOFS, **overrides: object
) -> pd.DataFrame:
    arguments: dict[str, object] = {
        "experiment_id": "E10",
        "corpus": "genuine",
        "spoof_corpus": "tts",
        "n_spoof": n_spoof,
        "seed": 2,
        "enrol_select": (),
        "spoof_select": (),
        **overrides,
    }
    return add_spoof_trials(genuine_list(), pool, spoofs, **arguments).frame  # type: ignore[arg-type]


def kind_pairs(frame: pd.DataFrame, kind: str) -> set[tuple[str, str]]:
    rows = frame[frame["trial_kind"] == kind]
    return set(zip(rows["enrol_utt"], rows["test_utt"], strict=True))


@pytest.mark.parametrize("limit", [trials_module.ENUMERATION_LIMIT, 0])  # enumeration, then rejection sampling
def test_spoof_trials_pair_each_enrolment_with_files_imitating_its_speaker(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(trials_module, "ENUMERATION_LIMIT", limit)
    genuine = genuine_list().frame
    frame = spoof_list(10)
    assert kind_pairs(frame, "spoof") == ALL_SPOOF_PAIRS
    targets = genuine[genuine["label"] == 1]
    assert kind_pairs(frame, "target") == set(zip(targets["enrol_utt"], targets["test_utt"], strict=True))
    assert list(frame["trial_index"]) == list(range(13)) and "nontarget" not in set(frame["trial_kind"])
    spoofs = frame[frame["trial_kind"] == "spoof"]
    assert (spoofs["label"] == 0).all() and (spoofs["enrol_speaker"] == spoofs["test_speaker"]).all()
    assert set(spoofs["test_corpus"]) == {"tts"} and set(frame.loc[frame["label"] == 1, "test_corpus"]) == {"genuine"}
    assert kind_pairs(spoof_list(6), "spoof") < ALL_SPOOF_PAIRS
    with pytest.raises(TrialBudgetError, match="11 spoof trials, the selected utterances allow 10"):
        spoof_list(11)


def test_selections_restrict_the_spoof_files_and_the_enrolments() -> None:
    only_x = spoof_list(8, spoof_select=(("spoof_system", ("X",)),))
    assert kind_pairs(only_x, "spoof") == {pair for pair in ALL_SPOOF_PAIRS if pair[1].startswith("x/")}
    neutral = spoof_list(5, enrol_select=(("emotion", ("neutral",)),))
    # Neutral enrolments a1, a3, b1, c1, c2: 2 x 2 + 1 + 2 = 7 pairs; asking 5 draws 5 of them.
    assert kind_pairs(neutral, "spoof") <= {p for p in ALL_SPOOF_PAIRS if p[0] in ("a1", "a3", "b1", "c1", "c2")}
    assert len(kind_pairs(neutral, "spoof")) == 5
    with pytest.raises(TrialBudgetError, match=r"spoofs:tts:spoof_system=Y.*3 spoof trials, the selected .* allow 2"):
        spoof_list(3, spoof_select=(("spoof_system", ("Y",)),))


def test_the_spoof_list_is_seeded_by_the_design_only() -> None:
    shuffled = spoof_list(4, GENUINE.sample(frac=1.0, random_state=1), SPOOFS.sample(frac=1.0, random_state=2))
    assert shuffled.equals(spoof_list(4))
    assert not spoof_list(4, seed=3).equals(spoof_list(4)) or not spoof_list(4, seed=4).equals(spoof_list(4))


def test_spoofs_imitating_speakers_the_corpus_lacks_are_refused() -> None:
    strangers = pd.concat([SPOOFS, pd.DataFrame({"utt_id": ["y/Z1"], "speaker": ["Z"], "spoof_system": ["Y"]})])
    with pytest.raises(SpoofTargetError, match=r"imitating 1 speaker\(s\) that 'genuine' lacks \(Z\)"):
        spoof_list(1, spoofs=strangers)


# ---- configuration and a run -------------------------------------------------------------------------------------

CONFIG = """
[run]
name = "spoofing"
seed = 4

[corpora.actors]
adapter = "ravdess"
root = "{actors}"

[corpora.converted]
adapter = "spoof"
root = "{converted}"

[encoders]
roster = "{roster}"
labels = ["mfcc-stats"]

[conditions]
neutral = {{ select = {{ emotion = "neutral" }} }}
"spoof-vc" = {{ spoofs = "converted" }}
"spoof-x" = {{ spoofs = "converted", select = {{ spoof_system = "X" }} }}
"white-10dB" = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}]

[[experiments]]
id = "E11"
title = "voice conversion"
corpus = "actors"
use = "descriptive"
target_trials = 2
nontarget_trials = 4
enrol_conditions = ["neutral"]
test_conditions = ["neutral", "spoof-vc"]

[[experiments]]
id = "E10"
title = "spoofing x noise"
corpus = "actors"
use = "descriptive"
target_trials = 2
nontarget_trials = 2
factor_a = {{ name = "spoof", levels = ["spoof-x"] }}
factor_b = {{ name = "noise", levels = ["white-10dB"] }}
"""
ACTORS = {
    "Actor_01": ["03-01-01-01-01-01-01", "03-01-01-01-02-01-01", "03-01-05-01-01-01-01"],
    "Actor_02": ["03-01-01-01-01-01-02", "03-01-01-01-02-01-02", "03-01-05-01-01-01-02"],
}


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    """Two RAVDESS actors, and a conversion folder whose files keep the genuine file names (and so the genuine
    utterance ids): each imitates the actor of its name with another tone."""
    manifest = ["path,system,system_version,target_speaker,source_speaker"]
    for actor, (folder, stems) in enumerate(ACTORS.items()):
        for position, stem in enumerate(stems):
            write_tone(tmp_path / "actors" / folder / f"{stem}.wav", hz=200.0 + 80 * actor + 15 * position)
            write_tone(tmp_path / "converted" / f"{stem}.wav", hz=900.0 - 60 * actor - 20 * position)
            system = "X" if position < 2 else "Y"
            manifest.append(f"{stem}.wav,{system},0.1,{folder},{list(ACTORS)[1 - actor]}")
    write_text(tmp_path / "converted" / "manifest.csv", "\n".join(manifest) + "\n")
    path = tmp_path / "run.toml"
    path.write_text(CONFIG.format(actors=tmp_path / "actors", converted=tmp_path / "converted", roster=ROSTER))
    return path


def test_spoof_conditions_become_test_side_cells(config_path: Path) -> None:
    config = load_config(config_path)
    assert config.spoofs == {
        "spoof-vc": SpoofSource("converted", ()),
        "spoof-x": SpoofSource("converted", (("spoof_system", ("X",)),)),
    }
    assert "spoof-x" not in config.selections and config.experiments_using("converted") == ["E11", "E10"]
    mismatch = config.experiment_cells(config.experiments[0])
    assert [(c.condition, c.spoof) for c in mismatch] == [
        ("neutral->neutral", None),
        ("neutral->spoof-vc", config.spoofs["spoof-vc"]),
    ]
    # The spoof cell's genuine targets test the enrolment population, as neutral->neutral does.
    assert (
        mismatch[1].enrol_select == mismatch[1].test_select == mismatch[0].test_select == config.selections["neutral"]
    )
    factorial = {c.condition: c for c in config.experiment_cells(config.experiments[1])}
    assert factorial["spoof-x+white-10dB"].spoof == config.spoofs["spoof-x"]
    assert factorial["spoof-x+white-10dB"].test_chain == config.conditions["white-10dB"]
    assert factorial["white-10dB"].spoof is None and factorial["spoof-x+white-10dB"].enrol_chain == ()


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: s.replace('spoofs = "converted" }', 'spoofs = "actors" }'), "conditions.spoof-vc.spoofs: expected"),
        (
            lambda s: s.replace('corpus = "actors"\nuse = "descriptive"\ntarget_trials = 2', 'corpus = "converted"'),
            "experiments[0].corpus: 'converted' is a spoof folder",
        ),
        (lambda s: s.replace('enrol_conditions = ["neutral"]', 'enrol_conditions = ["spoof-vc"]'), "not an enrolment"),
        (lambda s: s.replace('levels = ["white-10dB"]', 'levels = ["spoof-vc"]'), "one per cell"),
        (lambda s: s.replace("nontarget_trials = 2\n", 'nontarget_trials = 2\ndegrade = "both"\n'), "test side only"),
    ],
)
def test_misused_spoof_conditions_name_the_key(config_path: Path, edit: object, expected: str) -> None:
    path = config_path.parent / "edited.toml"
    path.write_text(edit(config_path.read_text()))  # type: ignore[operator]
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert expected in caught.value.line()


def test_a_run_scores_spoof_files_from_the_spoof_folder_even_under_genuine_ids(
    config_path: Path, tmp_path: Path
) -> None:
    config = load_config(config_path)
    run(config, tmp_path / "out", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    results = pd.read_csv(tmp_path / "out" / "results.csv").set_index("record_id")
    record = "E11.mfcc-stats.neutral_to_spoof-vc"
    trials = pd.read_csv(tmp_path / "out" / "trials" / f"{results.loc[record, 'trial_list_id']}.csv")
    scores = pd.read_parquet(tmp_path / "out" / "scores" / f"{record}.parquet")
    assert (results.loc[record, "n_target"], results.loc[record, "n_nontarget"]) == (2, 4)
    genuine = pd.read_csv(
        tmp_path / "out" / "trials" / f"{results.loc['E11.mfcc-stats.neutral_to_neutral', 'trial_list_id']}.csv"
    )
    assert kind_pairs(trials, "target") == kind_pairs(
        genuine.assign(trial_kind=genuine["label"].map({1: "target"})), "target"
    )
    # Oracle: MFCC-statistics cosines computed here, the enrolment from the actors' file, the test from the file
    # of the folder its trial names (a spoof file has the same relative path as a genuine one).
    encoder = load_encoder("mfcc", "mfcc-stats", None)
    for row, score in zip(trials.itertuples(), scores["score"], strict=True):
        enrol = read_clean_wave(next((tmp_path / "actors").rglob(f"{row.enrol_utt}.wav")))[0]
        test = read_clean_wave(next((tmp_path / str(row.test_corpus)).rglob(f"{row.test_utt}.wav")))[0]
        a, b = encoder.embed([enrol, test], 16000)
        assert score == pytest.approx(float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))), abs=1e-6)
    assert set(trials["test_corpus"]) == {"actors", "converted"}
    genuine_ids = {stem for stems in ACTORS.values() for stem in stems}
    assert set(trials.loc[trials["trial_kind"] == "spoof", "test_utt"]) <= genuine_ids  # the same ids, other audio
    # The factorial design's spoof level: the clean list's targets, spoofs of system X only, through white noise.
    e10 = {condition: results[results["condition"] == condition].iloc[0] for condition in results["condition"]}
    spoofed = pd.read_csv(tmp_path / "out" / "trials" / f"{e10['spoof-x+white-10dB']['trial_list_id']}.csv")
    clean = pd.read_csv(tmp_path / "out" / "trials" / f"{e10['clean']['trial_list_id']}.csv")
    assert kind_pairs(spoofed, "target") == kind_pairs(
        clean.assign(trial_kind=clean["label"].map({1: "target"})), "target"
    )
    system_x = {stem for stems in ACTORS.values() for stem in stems[:2]}
    assert set(spoofed.loc[spoofed["trial_kind"] == "spoof", "test_utt"]) <= system_x


# ---- configs/asvspoof2019.toml on a fake LA folder ---------------------------------------------------------------

ATTACKS = ("A07", "A08", "A09", "A10", "A11", "A12", "A13", "A14", "A15", "A16", "A17", "A18", "A19")


def make_la(root: Path) -> Path:
    """Four evaluation speakers: three bona fide trial files and one enrolment file each, one file per attack."""
    cm, female, male = [], [], []
    for speaker in range(4):
        code = f"LA_00{40 + speaker}"
        files = [f"LA_E_{speaker}00000{n}" for n in range(3)]
        cm += [f"{code} {file} - - bonafide" for file in files]
        cm += [f"{code} LA_E_{speaker}1{index:05d} - {attack} spoof" for index, attack in enumerate(ATTACKS)]
        (female if speaker % 2 else male).append(f"{code} LA_E_{speaker}9000000")
        names = [*files, f"LA_E_{speaker}9000000", *(f"LA_E_{speaker}1{i:05d}" for i in range(len(ATTACKS)))]
        for position, name in enumerate(names):
            write_tone(root / "ASVspoof2019_LA_eval" / "flac" / f"{name}.flac", hz=150.0 + 50 * speaker + 9 * position)
    write_text(root / "ASVspoof2019_LA_cm_protocols" / "ASVspoof2019.LA.cm.eval.trl.txt", "\n".join(cm) + "\n")
    asv = root / "ASVspoof2019_LA_asv_protocols"
    write_text(asv / "ASVspoof2019.LA.asv.eval.female.trn.txt", "\n".join(female) + "\n")
    write_text(asv / "ASVspoof2019.LA.asv.eval.male.trn.txt", "\n".join(male) + "\n")
    return root


@pytest.mark.slow
def test_the_asvspoof2019_config_runs_every_attack_against_genuine_enrolments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from audit.cli import audit_results
    from audit.verify import AuditRequest

    make_la(tmp_path / "corpora" / "asvspoof2019" / "LA")
    monkeypatch.setenv("INTERBIAS_CORPORA", str(tmp_path / "corpora"))
    text = (ROOT / "configs" / "asvspoof2019.toml").read_text()
    text = re.sub(r"(?m)^(target_trials|nontarget_trials) = \d+", r"\1 = 2", text)
    text = re.sub(r"(?ms)^labels = \[.*?\]", 'labels = ["mfcc-stats"]', text, count=1)
    text = text.replace('checkpoints_root = "$INTERBIAS_CHECKPOINTS"\n', "")
    (tmp_path / "encoders.toml").write_bytes(ROSTER.read_bytes())
    (tmp_path / "asvspoof2019.toml").write_text(text)
    config = load_config(tmp_path / "asvspoof2019.toml")
    from provenance.keys import generate_keypair

    generate_keypair(tmp_path / "keys" / "run.pem", tmp_path / "keys" / "run.pub")
    run(
        config,
        tmp_path / "out",
        RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0, signing_key=tmp_path / "keys" / "run.pem"),
    )
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert len(results) == 11 + 4 and ((results["n_target"] == 2) & (results["n_nontarget"] == 2)).all()
    protocol = (tmp_path / "corpora" / "asvspoof2019" / "LA" / "ASVspoof2019_LA_cm_protocols").glob("*.txt")
    attack_of = {line.split()[1]: line.split()[3] for path in protocol for line in path.read_text().splitlines()}
    for row in results[results["condition"] != "eval-bonafide->eval-bonafide"].itertuples():
        trials = pd.read_csv(tmp_path / "out" / "trials" / f"{row.trial_list_id}.csv")
        spoofs = trials[trials["trial_kind"] == "spoof"]
        # Oracle: the protocol's attack column for every spoof file, and its speaker column for the target.
        assert {attack_of[utt] for utt in spoofs["test_utt"]} == {row.condition.split("->")[1].split("-")[0]}
        assert (spoofs["enrol_speaker"] == spoofs["test_speaker"]).all()
    report, _ = audit_results(
        AuditRequest(tmp_path / "out" / "results.csv", bundle=tmp_path / "out", key=tmp_path / "keys" / "run.pub")
    )
    assert report["verdict"] == "pass"
    sections = {section["id"]: section for section in report["sections"]}
    assert sections["bundle-rescore"]["status"] == sections["bundle-trial-utterances"]["status"] == "pass"
    assert len(sections["bundle-trial-utterances"]["table"]) == 13  # one spoof list per attack and experiment
