"""configs/full.toml, the paper's registry: it loads and validates against fake corpora of the six adapters and
tiny random-weight checkpoints, and a reduced copy (every experiment kept, budgets of a few trials, two tiny
encoders) runs end to end into a signed bundle that `audit verify --bundle` passes, apart from the error flags
the design predicts: population-contrast warnings for the contrasts whose metadata levels select different
utterances, and no error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from runner.design.config import load_config
from schemas.errors import InputError
from tests.runner.fake_corpora import write_text, write_tone
from tests.runner.synthesised_roster import write_synthesised_roster

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from tests.runner.encoders.test_torch import write_tiny_ecapa  # noqa: E402  (a tiny speechbrain ECAPA folder)
from tests.runner.encoders.test_transformers import TINY, save  # noqa: E402  (a tiny transformers folder)

pytestmark = pytest.mark.runner

ROOT = Path(__file__).resolve().parents[3]
FULL = ROOT / "configs" / "full.toml"
PAPER_IDS = ["E01", "E02", "E03", "E04", "E05", "E06", "E07", "E08", "E10", "E11"]
PAPER_IDS += ["E13", "E14", "E15", "E16", "E17", "E18", "E20"]
# Experiments whose factor levels are populations (metadata selections): their contrasts' terms cannot share one
# trial list; each level pairs its terms on one list, which the audit reports as population-contrast (a warning).
METADATA_CONTRASTS = {"E13", "E14", "E15", "E17", "E18", "E20"}
TWO_ENCODERS = ["ecapa-tdnn", "wav2vec2-base"]


# ---- fake corpora, each following its corpus's real layout and naming, large enough for every selection --------


def tone(path: Path, speaker: int, position: int) -> None:
    write_tone(path, hz=150.0 + 40.0 * speaker + 7.0 * position)


def make_ravdess(root: Path) -> None:
    """Three actors; every emotion in both statements (neutral has no strong intensity)."""
    for actor in (1, 2, 3):
        for emotion in range(1, 9):
            for statement in (1, 2):
                name = f"03-01-{emotion:02d}-01-{statement:02d}-01-{actor:02d}.wav"
                tone(root / f"Actor_{actor:02d}" / name, actor, emotion * 2 + statement)


def make_torgo(root: Path) -> None:
    """Two dysarthric and two control speakers, two sessions of two head-microphone prompts each."""
    for speaker, code in enumerate(("F01", "M01", "FC01", "MC01")):
        for session in ("Session1", "Session2"):
            for prompt in (1, 2):
                tone(root / code / session / "wav_headMic" / f"{prompt:04d}.wav", speaker, prompt)
                write_text(root / code / session / "prompts" / f"{prompt:04d}.txt", "yes")


def make_ears(root: Path) -> None:
    """Three speakers reading two passages in each of the seven styles."""
    statistics = {f"p00{n}": {"age": "26-35", "gender": "female", "native language": "english"} for n in (1, 2, 3)}
    write_text(root / "speaker_statistics.json", json.dumps(statistics))
    write_text(root / "transcripts.json", "{}")
    for speaker in (1, 2, 3):
        for position, style in enumerate(("regular", "loud", "whisper", "highpitch", "lowpitch", "fast", "slow")):
            tone(root / f"p00{speaker}" / f"rainbow_01_{style}.wav", speaker, position)
            tone(root / f"p00{speaker}" / f"sentences_01_{style}.wav", speaker, position + 10)


AGES = ("teens", "twenties", "thirties", "fourties", "fifties", "sixties")


def make_common_voice(root: Path) -> None:
    """Two speakers per published age bin, two MP3 clips each, listed in validated.tsv."""
    lines = ["client_id\tpath\tsentence\tup_votes\tdown_votes\tage\tgender\taccents\tlocale"]
    for index, age in enumerate(AGES):
        for twin, gender in enumerate(("male_masculine", "female_feminine")):
            speaker = 2 * index + twin
            for clip in (1, 2):
                name = f"common_voice_en_{speaker}{clip}.mp3"
                tone(root / "clips" / name, speaker, clip)
                lines.append(f"client{speaker:02d}\t{name}\tA sentence.\t2\t0\t{age}\t{gender}\t\ten")
    write_text(root / "validated.tsv", "\n".join(lines) + "\n")


def make_l2_arctic(root: Path) -> None:
    """Two speakers of each first language (the published speaker table), two scripted prompts each."""
    for speaker, code in enumerate(
        ("ABA", "SKA", "BWC", "LXC", "ASI", "TNI", "HJK", "HKK", "EBVS", "NJS", "PNV", "TLV")
    ):
        for prompt in (1, 2):
            tone(root / code / "wav" / f"arctic_a000{prompt}.wav", speaker, prompt)


def make_voxceleb1(root: Path) -> None:
    """Three male and three female celebrities of the test split, three segments of one video each, with
    vox1_meta.csv, and a two-target, two-non-target VoxCeleb1-O (cleaned) under WeSpeaker's name (E05, E06)."""
    meta = ["VoxCeleb1 ID\tVGGFace1 ID\tGender\tNationality\tSet"]
    for speaker in range(6):
        identity = f"id1000{speaker}"
        meta.append(f"{identity}\tName_{speaker}\t{'mf'[speaker % 2]}\tIreland\ttest")
        for segment in (1, 2, 3):
            tone(root / "wav" / identity / "video00000a" / f"0000{segment}.wav", speaker, segment)
    write_text(root / "vox1_meta.csv", "\n".join(meta) + "\n")
    segment = "id1000{}/video00000a/0000{}.wav".format
    listed = [(1, segment(0, 1), segment(0, 2)), (0, segment(0, 1), segment(1, 1))]
    listed += [(1, segment(3, 3), segment(3, 1)), (0, segment(4, 2), segment(5, 2))]
    write_text(root / "trials" / "vox1-O(cleaned).txt", "".join(f"{label} {a} {b}\n" for label, a, b in listed))


def make_spoof_folders(root: Path) -> None:
    """spoofs/tts (two systems) and spoofs/vc (one system): one file per system imitating each VoxCeleb1 speaker."""
    tts = ["path,system,system_version,target_speaker"]
    vc = ["path,system,system_version,target_speaker,source_speaker"]
    for speaker in range(6):
        target, source = f"id1000{speaker}", f"id1000{(speaker + 1) % 6}"
        for system in ("VITS", "YourTTS"):
            tone(root / "spoofs" / "tts" / system / f"{target}.wav", speaker, 20)
            tts.append(f"{system}/{target}.wav,{system},1.0 (fake),{target}")
        tone(root / "spoofs" / "vc" / f"{target}_from_{source}.wav", speaker, 21)
        vc.append(f"{target}_from_{source}.wav,kNN-VC,2023-06 (fake),{target},{source}")
    write_text(root / "spoofs" / "tts" / "manifest.csv", "\n".join(tts) + "\n")
    write_text(root / "spoofs" / "vc" / "manifest.csv", "\n".join(vc) + "\n")


SPOOF_CORPORA = {"tts_spoofs": Path("spoofs") / "tts", "vc_spoofs": Path("spoofs") / "vc"}
CORPORA = {
    "ravdess": make_ravdess,
    "torgo": make_torgo,
    "ears": make_ears,
    "common_voice": make_common_voice,
    "l2_arctic": make_l2_arctic,
    "voxceleb1": make_voxceleb1,
}


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """INTERBIAS_CORPORA and INTERBIAS_CHECKPOINTS folders: six fake corpora and two tiny checkpoints."""
    root = tmp_path_factory.mktemp("full")
    for name, make in CORPORA.items():
        make(root / "corpora" / name)
    make_spoof_folders(root / "corpora")
    write_tiny_ecapa(root / "checkpoints" / "speechbrain" / "spkrec-ecapa-voxceleb")
    import torch

    torch.manual_seed(0)
    model = transformers.Wav2Vec2Model(transformers.Wav2Vec2Config(**TINY)).eval()
    save(root / "checkpoints" / "facebook" / "wav2vec2-base", model)
    return root


@pytest.fixture
def env(environment: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("INTERBIAS_CORPORA", str(environment / "corpora"))
    monkeypatch.setenv("INTERBIAS_CHECKPOINTS", str(environment / "checkpoints"))
    return environment


def test_the_full_registry_loads_with_every_published_experiment(env: Path) -> None:
    config = load_config(FULL)
    assert [e.id for e in config.experiments] == PAPER_IDS
    assert config.registry["absent"] == ("E09", "E12", "E19") and config.registry["removed"] == ("E21",)
    assert {e.corpus for e in config.experiments} == set(CORPORA) == set(config.corpora) - set(SPOOF_CORPORA)
    roots = {env / "corpora" / name for name in CORPORA} | {env / "corpora" / path for path in SPOOF_CORPORA.values()}
    assert {c.root for c in config.corpora.values()} == roots
    assert config.experiments_using("tts_spoofs") == ["E10"] and config.experiments_using("vc_spoofs") == ["E11"]
    assert len(config.encoders) == 12 and all(spec.paper for spec in config.encoders)
    uses = {e.id: e.use for e in config.experiments}
    assert uses["E15"] == uses["E18"] == uses["E20"] == "descriptive"
    assert {i for i, use in uses.items() if use == "interaction"} == {"E13", "E14", "E17"}
    assert uses["E16"] == "subgroup-gap" and config.experiments[PAPER_IDS.index("E16")].subgroup == "gender"
    e01 = config.experiment_cells(config.experiments[0])
    assert len(e01) == 64 and e01[5].condition == "emo-neutral->emo-fearful"
    speech = ("style", ("speech",))  # E01's population: the speech channel, on both sides
    assert e01[5].enrol_select == (("emotion", ("neutral",)), speech)
    assert e01[5].test_select == (("emotion", ("fearful",)), speech)
    # E17 degrades the test side only: its reference population (first session) selects the test side only; its
    # own population (head microphone, lexical prompts) both sides.
    e17 = {c.condition: c for c in config.experiment_cells(config.experiments[PAPER_IDS.index("E17")])}
    population = (("microphone", ("headMic",)), ("style", ("lexical",)))
    assert e17["loss-random-10"].enrol_select == population and e17["loss-random-10"].enrol_chain == ()
    assert e17["loss-random-10"].test_select == (population[0], ("session", ("Session1",)), population[1])
    later = ("session", ("Session2", "Session2_3", "Session3"))
    assert e17["session-later+loss-random-10"].test_select == (population[0], later, population[1])
    designs = {e.id: e for e in config.experiments}
    assert designs["E05"].trial_list == designs["E06"].trial_list == "veri_test2"
    assert {designs[e].select for e in ("E10", "E11", "E16")} == {(("split", ("test",)),)}
    assert {designs[e].select for e in ("E01", "E14", "E20")} == {(("style", ("speech",)),)}
    assert designs["E16"].budget("clean") == (2500, 2500) and designs["E16"].budget("pink-0dB") == (278, 277)


def test_a_registry_that_disagrees_with_the_experiments_is_refused(env: Path, tmp_path: Path) -> None:
    text = FULL.read_text().replace('absent = ["E09", "E12", "E19"]', 'absent = ["E09", "E12", "E19", "E20"]')
    (tmp_path / "encoders.toml").write_bytes((ROOT / "configs" / "encoders.toml").read_bytes())
    (tmp_path / "full.toml").write_text(text)
    with pytest.raises(InputError, match="E20 is listed more than once"):
        load_config(tmp_path / "full.toml")


def reduced_copy(folder: Path) -> Path:
    """Every experiment kept; budgets of two target and two non-target trials; two encoders, synthesised; two
    development speakers of the fake VoxCeleb1."""
    text = re.sub(r"(?m)^(target_trials|nontarget_trials) = \d+", r"\1 = 2", FULL.read_text())
    text = re.sub(r"(?m)^budgets = \{ clean = \[\d+, \d+\] \}", "budgets = { clean = [2, 2] }", text)
    text = re.sub(r"(?s)labels = \[.*?\]", f"labels = {json.dumps(TWO_ENCODERS)}", text, count=1)
    # the development speakers among the fake test split's (a run refuses ones its corpora do not have)
    text = re.sub(r"(?s)dev_speakers = \[.*?\]", 'dev_speakers = ["id10000", "id10001"]', text, count=1)
    write_synthesised_roster(folder)  # random-weight syntheses under the real labels' names
    (folder / "full.toml").write_text(text)
    return folder / "full.toml"


def test_a_missing_corpus_names_the_folder_and_its_adapter(env: Path, tmp_path: Path) -> None:
    from runner.pipeline import RunOptions, run

    config = load_config(reduced_copy(tmp_path / "config"))
    (env / "corpora" / "torgo").rename(env / "corpora" / "torgo-elsewhere")
    try:
        with pytest.raises(InputError) as caught:
            run(config, tmp_path / "out", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    finally:
        (env / "corpora" / "torgo-elsewhere").rename(env / "corpora" / "torgo")
    line = caught.value.line()
    assert f"{env / 'corpora' / 'torgo'} (the torgo corpus, [corpora.torgo], for E02, E07, E15, E17)" in line
    assert "ravdess" not in line


def test_a_missing_spoof_folder_names_the_folder_and_the_experiment(env: Path, tmp_path: Path) -> None:
    from runner.pipeline import RunOptions, run

    config = load_config(reduced_copy(tmp_path / "config"))
    folder = env / "corpora" / "spoofs" / "vc"
    folder.rename(folder.with_name("vc-elsewhere"))
    try:
        with pytest.raises(InputError) as caught:
            run(config, tmp_path / "out", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    finally:
        folder.with_name("vc-elsewhere").rename(folder)
    assert f"{folder} (the spoof corpus, [corpora.vc_spoofs], for E11)" in caught.value.line()


@pytest.mark.slow
def test_the_reduced_registry_runs_end_to_end_and_its_bundle_verifies(env: Path, tmp_path: Path) -> None:
    from audit.cli import audit_results
    from audit.verify import AuditRequest
    from provenance.keys import generate_keypair
    from runner.pipeline import RunOptions, run

    config = load_config(reduced_copy(tmp_path / "config"))
    generate_keypair(tmp_path / "keys" / "run.key", tmp_path / "keys" / "run.pub")
    bundle = tmp_path / "bundle"
    summary = run(
        config,
        bundle,
        RunOptions(cache_root=tmp_path / "cache", signing_key=tmp_path / "keys" / "run.key", progress=False, workers=0),
    )
    results = pd.read_csv(bundle / "results.csv")
    assert sorted(results["experiment"].unique()) == PAPER_IDS
    assert set(results["model"]) == set(TWO_ENCODERS)
    cells = sum(len(config.experiment_cells(e)) * (2 if e.subgroup else 1) for e in config.experiments)
    assert summary.n_records == len(results) == 2 * cells
    assert dict(zip(results["experiment"], results["corpus"], strict=False))["E13"] == "common_voice"
    assert ((results["n_target"] == 2) & (results["n_nontarget"] == 2)).all()
    for name in CORPORA:
        assert (bundle / "corpus" / name / "utterances.csv").is_file()
    assert_spoof_trials_imitate_their_enrolment_speaker(bundle, results, env / "corpora")

    report, _ = audit_results(AuditRequest(bundle / "results.csv", bundle=bundle, key=tmp_path / "keys" / "run.pub"))
    errors = [flag for flag in report["flags"] if flag["severity"] == "error"]
    assert errors == [], [(f["id"], f["message"]) for f in errors]
    population = next(flag for flag in report["flags"] if flag["id"] == "population-contrast")
    # E15 and E18 are cross-corpus by design: excluded from the interaction tables, so no contrast to flag.
    assert {record.split(".")[0] for record in population["records"]} == METADATA_CONTRASTS - {"E15", "E18"}
    sections = {section["id"]: section for section in report["sections"]}
    assert sections["bundle-signature"]["status"] == "pass" and sections["bundle-rescore"]["status"] == "pass"


def assert_spoof_trials_imitate_their_enrolment_speaker(bundle: Path, results: pd.DataFrame, corpora: Path) -> None:
    """E10's spoof cell: the clean cell's target pairs, and spoof files whose manifest target is the enrolment
    speaker, read from the fake manifest (not from the runner's tables)."""
    lists = dict(zip(results["condition"] + "/" + results["experiment"], results["trial_list_id"], strict=False))
    clean = pd.read_csv(bundle / "trials" / f"{lists['clean->clean/E10']}.csv")
    spoofed = pd.read_csv(bundle / "trials" / f"{lists['clean->spoof-tts/E10']}.csv")
    assert "trial_kind" not in clean.columns
    assert list(spoofed["trial_kind"].value_counts().sort_index().items()) == [("spoof", 2), ("target", 2)]
    targets = spoofed[spoofed["trial_kind"] == "target"]
    assert set(zip(targets["enrol_utt"], targets["test_utt"], strict=True)) == set(
        zip(clean["enrol_utt"][clean["label"] == 1], clean["test_utt"][clean["label"] == 1], strict=True)
    )
    assert (targets["test_corpus"] == "voxceleb1").all()
    manifest = pd.read_csv(corpora / "spoofs" / "tts" / "manifest.csv")
    imitated = dict(zip(manifest["path"].str.removesuffix(".wav"), manifest["target_speaker"], strict=True))
    spoofs = spoofed[spoofed["trial_kind"] == "spoof"]
    assert (spoofs["label"] == 0).all() and (spoofs["test_corpus"] == "tts_spoofs").all()
    assert [imitated[utt] for utt in spoofs["test_utt"]] == [utt.split("/")[0] for utt in spoofs["enrol_utt"]]
    operators = json.loads((bundle / "operators.json").read_text())
    record = results.loc[results["condition"] == "clean->spoof-tts", "record_id"].iloc[0]
    assert any(chain.startswith("tts_spoofs:") for chain in operators["records"][record]["chains"])
