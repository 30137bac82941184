"""The six corpus adapters on fake folders that follow each corpus's real layout and naming.

Expected fields are written out by hand from each corpus's documented convention; digests come from the blake3
library on the file bytes and durations from the number of samples written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import blake3
import pandas as pd
import pytest

from runner.corpora import CorpusError, CorpusTable, load_corpus
from runner.corpora.voxceleb1 import official_trials
from tests.runner.fake_corpora import (
    make_asvspoof2019_la,
    make_common_voice,
    make_ears,
    make_l2_arctic,
    make_ravdess,
    make_spoofs,
    make_torgo,
    make_voxceleb1,
)

UNREADABLE = "skipped: unreadable audio"


def records(table: CorpusTable, *columns: str) -> dict[str, tuple[object, ...]]:
    """utt_id -> the chosen columns, nulls as None."""
    frame = table.frame.set_index("utt_id")[list(columns)].astype(object)
    frame = frame.where(frame.notna(), None)
    return {utt: tuple(values) for utt, values in zip(frame.index, frame.itertuples(index=False), strict=True)}


def problems(table: CorpusTable) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in table.problems:
        found.setdefault(problem.path, []).append(problem.reason)
    return found


def assert_audio_columns(table: CorpusTable, root: Path) -> None:
    for item in table.frame.itertuples(index=False):
        assert item.blake3 == blake3.blake3((root / item.path).read_bytes()).hexdigest()
        assert item.sample_rate == 16000
        assert "/" not in item.path[:1] and "\\" not in item.path


def test_ravdess(tmp_path: Path) -> None:
    root = make_ravdess(tmp_path / "RAVDESS")
    table = load_corpus("ravdess", root)
    assert records(table, "speaker", "gender", "emotion", "intensity", "style", "transcript", "duration_s") == {
        "03-01-01-01-01-01-01": (
            "Actor_01",
            "M",
            "neutral",
            "normal",
            "speech",
            "Kids are talking by the door",
            0.25,
        ),
        "03-01-05-02-02-01-02": (
            "Actor_02",
            "F",
            "angry",
            "strong",
            "speech",
            "Dogs are sitting by the door",
            0.5,
        ),
        "03-02-03-01-01-02-02": (
            "Actor_02",
            "F",
            "happy",
            "normal",
            "song",
            "Kids are talking by the door",
            0.25,
        ),
    }
    assert_audio_columns(table, root)
    found = problems(table)
    assert set(found) == {
        "Actor_01/03-01-01-02-01-01-01.wav",
        "Actor_01/03-01-09-01-01-01-01.wav",
        "Actor_01/notes.wav",
        "Actor_02/03-01-02-01-01-01-03.wav",
        "Actor_02/03-01-04-01-01-01-02.wav",
    }
    assert found["Actor_01/03-01-01-02-01-01-01.wav"] == ["skipped: neutral has no strong intensity in RAVDESS"]
    assert found["Actor_01/03-01-09-01-01-01-01.wav"] == ["skipped: unknown emotion code 09"]
    assert found["Actor_02/03-01-04-01-01-01-02.wav"][0].startswith(UNREADABLE)
    assert str(tmp_path) not in found["Actor_02/03-01-04-01-01-01-02.wav"][0]  # portable problems.csv


def test_torgo(tmp_path: Path) -> None:
    root = make_torgo(tmp_path / "TORGO")
    table = load_corpus("torgo", root)
    assert records(table, "speaker", "gender", "session", "microphone", "condition", "transcript") == {
        "F01_Session1_arrayMic_0001": ("F01", "F", "Session1", "arrayMic", "dysarthric", "Stick"),
        "F01_Session1_headMic_0001": ("F01", "F", "Session1", "headMic", "dysarthric", "Stick"),
        "FC01_Session2_headMic_0002": ("FC01", "F", "Session2", "headMic", "control", None),
        "M01_Session2_3_arrayMic_0003": (
            "M01",
            "M",
            "Session2_3",
            "arrayMic",
            "dysarthric",
            "input/images/photo1.jpg",
        ),
    }
    assert_audio_columns(table, root)
    found = problems(table)
    assert found["FC01/Session2/wav_headMic/0002.wav"] == ["kept without transcript: no prompts/<file>.txt"]
    assert found["F01/Session1/wav_arrayMic/0004.wav"][0].startswith(UNREADABLE)
    assert len(found["F01/Session1/wav_arrayMic/0004.wav"]) == 1
    assert "speaker folder 'X99'" in found["X99/Session1/wav_headMic/0001.wav"][0]
    assert "session folder 'Extra'" in found["F01/Extra/wav_headMic/0001.wav"][0]
    assert "wav_otherMic" in found["F01/Session1/wav_otherMic/0001.wav"][0]
    assert len(table.problems) == 5


def test_ears(tmp_path: Path) -> None:
    root = make_ears(tmp_path / "EARS")
    table = load_corpus("ears", root)
    assert records(table, "speaker", "gender", "age_bin", "l1", "condition", "emotion", "style") == {
        "p001_emo_anger_sentences": ("p001", "M", "36-45", "german", "emotional-reading", "anger", None),
        "p001_rainbow_03_whisper": ("p001", "M", "36-45", "german", "reading", None, "whisper"),
        "p001_freeform_speech_01": ("p001", "M", "36-45", "german", "freeform", None, None),
        "p002_sentences_12_highpitch": ("p002", "F", "18-25", None, "reading", None, "highpitch"),
        "p002_nonverbal_laughing": ("p002", "F", "18-25", None, "nonverbal", None, None),
        "p003_rainbow_01_regular": ("p003", None, None, None, "reading", None, "regular"),
    }
    transcripts = records(table, "transcript")
    assert transcripts["p001_rainbow_03_whisper"] == ("People look, but no one ever finds it.",)
    assert transcripts["p002_nonverbal_laughing"] == (None,)
    found = problems(table)
    assert found["p003"] == ["kept without speaker metadata: p003 not in speaker_statistics.json"]
    assert "matches no EARS task" in found["p002/rainbow_01_shouting.wav"][0]
    assert found["p002/emo_fear_freeform.wav"][0].startswith(UNREADABLE)


def test_ears_without_metadata_keeps_audio_and_says_so(tmp_path: Path) -> None:
    table = load_corpus("ears", make_ears(tmp_path / "EARS", with_metadata=False))
    assert len(table.frame) == 6
    assert table.frame["gender"].isna().all()
    found = problems(table)
    assert found["speaker_statistics.json"] == ["missing: the fields it provides are left empty"]
    assert found["transcripts.json"] == ["missing: the fields it provides are left empty"]


def test_ears_broken_metadata_json_is_a_named_error(tmp_path: Path) -> None:
    root = make_ears(tmp_path / "EARS")
    (root / "speaker_statistics.json").write_text('{"p001": {"age": \n')
    with pytest.raises(CorpusError) as caught:
        load_corpus("ears", root)
    assert caught.value.source == str(root / "speaker_statistics.json")
    assert "not valid JSON" in caught.value.problem


def test_common_voice(tmp_path: Path) -> None:
    root = make_common_voice(tmp_path / "cv-corpus-17.0" / "en")
    table = load_corpus("common_voice", root)
    assert records(table, "speaker", "gender", "age_bin", "accent", "language", "transcript", "duration_s") == {
        "common_voice_en_1": (
            "aaa1",
            "M",
            "twenties",
            "United States English",
            "en",
            'He said "hello" twice.',
            0.5,
        ),
        "common_voice_en_2": ("bbb2", "F", "fourties", None, "en", "A second sentence.", 0.5),
        "common_voice_en_3": ("ccc3", None, "teens", "Scottish English", "en", "A third sentence.", 0.5),
        "common_voice_en_6": ("fff6", None, None, None, "en", "Unknown age bin.", 0.5),
    }
    assert_audio_columns(table, root)
    found = problems(table)
    assert found["clips/common_voice_en_3.mp3"] == ["kept with gender empty: published gender 'non-binary' is not M/F"]
    assert found["clips/common_voice_en_4.mp3"] == ["skipped: listed in validated.tsv row 4 but the clip is missing"]
    assert found["clips/common_voice_en_5.mp3"][0].startswith(UNREADABLE)
    assert found["clips/common_voice_en_6.mp3"] == [
        "kept with age_bin empty: unknown age 'young' in validated.tsv row 6"
    ]


def test_common_voice_needs_validated_tsv(tmp_path: Path) -> None:
    root = make_common_voice(tmp_path / "en")
    (root / "validated.tsv").unlink()
    with pytest.raises(CorpusError, match=r"needs validated\.tsv"):
        load_corpus("common_voice", root)


def test_l2_arctic(tmp_path: Path) -> None:
    root = make_l2_arctic(tmp_path / "l2arctic_release_v5.0")
    table = load_corpus("l2_arctic", root)
    assert records(table, "speaker", "gender", "l1", "condition", "transcript", "duration_s") == {
        "ABA_arctic_a0001": (
            "ABA",
            "M",
            "Arabic",
            "scripted",
            "Author of the danger trail, Philip Steels, etc.",
            0.25,
        ),
        "ABA_suitcase": ("ABA", "M", "Arabic", "suitcase", "so the suitcase story", 1.0),
        "SKA_arctic_b0002": ("SKA", "F", "Arabic", "scripted", None, 0.25),
        "XYZ_arctic_a0003": ("XYZ", None, None, "scripted", None, 0.25),
    }
    assert_audio_columns(table, root)
    found = problems(table)
    assert len(found["ABA/wav/arctic_a0002.wav"]) == 1  # unreadable only, not also "without transcript"
    assert found["ABA/wav/arctic_a0002.wav"][0].startswith(UNREADABLE)
    assert found["ABA/annotation/arctic_a0001.wav"] == ["skipped: not at <SPEAKER>/wav/<file>.wav"]
    assert found["ABA/wav/readme.wav"] == ["skipped: scripted file name is not arctic_a0001/arctic_b0001-style"]
    assert sorted(found["XYZ/wav/arctic_a0003.wav"]) == [
        "kept without gender and L1: XYZ is not in the published speaker table",
        "kept without transcript: no transcript/<file>.txt",
    ]


def test_voxceleb1_and_its_official_trials(tmp_path: Path) -> None:
    root = make_voxceleb1(tmp_path / "VoxCeleb1")
    table = load_corpus("voxceleb1", root)
    assert records(table, "speaker", "session", "gender", "split", "path") == {
        "id10001/1zcIwhmdeo4/00001.wav": (
            "id10001",
            "1zcIwhmdeo4",
            "M",
            "dev",
            "wav/id10001/1zcIwhmdeo4/00001.wav",
        ),
        "id10001/1zcIwhmdeo4/00002.wav": (
            "id10001",
            "1zcIwhmdeo4",
            "M",
            "dev",
            "wav/id10001/1zcIwhmdeo4/00002.wav",
        ),
        "id10002/abcdEFGhijk/00001.wav": (
            "id10002",
            "abcdEFGhijk",
            "F",
            "test",
            "wav/id10002/abcdEFGhijk/00001.wav",
        ),
        "id10003/Q1w2E3r4T5y/00001.wav": (
            "id10003",
            "Q1w2E3r4T5y",
            None,
            None,
            "wav/id10003/Q1w2E3r4T5y/00001.wav",
        ),
    }
    assert_audio_columns(table, root)
    found = problems(table)
    assert found["veri_test2.txt"] == [
        "3 trials (1 target) where VoxCeleb1-O (cleaned) has 37,611 (18,802) as published",
        "trial list names id10009/zzzzzzzzzzz/00001.wav but the corpus folder lacks it",
    ]
    assert found["wav/id10003/Q1w2E3r4T5y/00001.wav"] == ["kept without gender and split: id10003 not in vox1_meta.csv"]
    assert found["wav/id10001/1zcIwhmdeo4/clip.wav"] == ["skipped: not at id<NNNNN>/<video>/<NNNNN>.wav"]
    trials = official_trials(root)
    assert list(trials["label"]) == [1, 0, 0]
    assert set(trials["enrol_utt"][:2]) <= set(table.frame["utt_id"])  # trial names are utt_ids as-is


def test_relative_corpus_root_gives_the_same_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_torgo(tmp_path / "TORGO")
    absolute = load_corpus("torgo", tmp_path / "TORGO")
    monkeypatch.chdir(tmp_path)
    relative = load_corpus("torgo", Path("TORGO"))
    assert relative.utterances_csv() == absolute.utterances_csv()
    assert relative.problems_csv() == absolute.problems_csv()


def test_voxceleb1_without_metadata(tmp_path: Path) -> None:
    table = load_corpus("voxceleb1", make_voxceleb1(tmp_path / "vox", with_metadata=False))
    assert len(table.frame) == 4
    assert table.frame["gender"].isna().all()
    assert problems(table)["vox1_meta.csv"] == ["missing: gender and split are left empty"]


def test_spoof_folder_rows_name_system_version_and_target(tmp_path: Path) -> None:
    root = make_spoofs(tmp_path / "spoofs")
    table = load_corpus("spoof", root)
    columns = ("speaker", "spoof_system", "spoof_system_version", "spoof_source_speaker", "path", "duration_s")
    assert records(table, *columns) == {
        "knnvc/id10002_from_id10001": (
            "id10002",
            "kNN-VC",
            "2023-06",
            "id10001",
            "knnvc/id10002_from_id10001.flac",
            0.5,
        ),
        "vits/id10001_001": ("id10001", "VITS", "1.0.0 (vctk)", None, "vits/id10001_001.wav", 0.25),
    }
    assert_audio_columns(table, root)
    found = problems(table)
    assert found.pop("vits/broken.wav")[0].startswith(UNREADABLE)
    assert found == {
        ".": ["release not recorded: the spoof folder does not show it; declare it (release = ...)"],
        "manifest.csv:3": ["skipped: empty system_version"],
        "manifest.csv:4": ["skipped: vits/missing.wav does not exist"],
        "manifest.csv:6": ["skipped: path '../outside.wav' is not relative to the spoof folder"],
        "manifest.csv:7": ["skipped: vits/id10001_001.wav is listed twice"],
        "vits/id10002_001.wav": ["not used: not listed in manifest.csv"],
        "vits/unlisted.wav": ["not used: not listed in manifest.csv"],
    }


def test_a_spoof_folder_without_its_manifest_or_a_column_is_one_error(tmp_path: Path) -> None:
    root = make_spoofs(tmp_path / "spoofs")
    (root / "manifest.csv").write_text("path,system,target_speaker\nvits/id10001_001.wav,VITS,id10001\n")
    with pytest.raises(CorpusError, match=r"manifest\.csv, column 'system_version': spoof manifest lacks column"):
        load_corpus("spoof", root)
    (root / "manifest.csv").unlink()
    with pytest.raises(CorpusError, match=r"spoof manifest not found: expected manifest\.csv with columns path"):
        load_corpus("spoof", root)


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("ravdess", make_ravdess),
        ("torgo", make_torgo),
        ("ears", make_ears),
        ("common_voice", make_common_voice),
        ("l2_arctic", make_l2_arctic),
        ("voxceleb1", make_voxceleb1),
        ("spoof", make_spoofs),
    ],
)
def test_every_file_is_a_row_or_a_problem_and_output_is_stable(tmp_path: Path, name: str, make: object) -> None:
    root = make(tmp_path / name)  # type: ignore[operator]
    first, second = load_corpus(name, root), load_corpus(name, root)
    assert first.utterances_csv() == second.utterances_csv()
    assert first.problems_csv() == second.problems_csv()
    audio = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in {".wav", ".mp3"}}
    accounted = set(first.frame["path"]) | {p.path for p in first.problems}
    assert audio <= accounted
    assert pd.Index(first.frame["utt_id"]).is_monotonic_increasing


LA_CM = "ASVspoof2019_LA_cm_protocols/ASVspoof2019.LA.cm."


def test_asvspoof2019_la_bona_fide_speech_with_enrolment_files_and_gender(tmp_path: Path) -> None:
    root = make_asvspoof2019_la(tmp_path / "LA")
    table = load_corpus("asvspoof2019_la", root)
    assert records(table, "speaker", "gender", "split", "condition", "path") == {
        "LA_E_2000001": ("LA_0039", "F", "eval", "bonafide", "ASVspoof2019_LA_eval/flac/LA_E_2000001.flac"),
        "LA_E_2000003": ("LA_0040", "M", "eval", "bonafide", "ASVspoof2019_LA_eval/flac/LA_E_2000003.flac"),
        "LA_E_3000001": ("LA_0039", "F", "eval", "bonafide", "ASVspoof2019_LA_eval/flac/LA_E_3000001.flac"),
        "LA_E_3000002": ("LA_0039", "F", "eval", "bonafide", "ASVspoof2019_LA_eval/flac/LA_E_3000002.flac"),
        "LA_T_1000001": ("LA_0079", None, "train", "bonafide", "ASVspoof2019_LA_train/flac/LA_T_1000001.flac"),
        "LA_T_1000003": ("LA_0080", None, "train", "bonafide", "ASVspoof2019_LA_train/flac/LA_T_1000003.flac"),
    }
    assert_audio_columns(table, root)
    found = problems(table)
    assert found.pop("ASVspoof2019_LA_eval/flac/LA_E_3000003.flac")[0].startswith(UNREADABLE)
    assert found == {
        f"{LA_CM}dev.trl.txt": ["missing: the dev partition is not read"],
        f"{LA_CM}train.trn.txt": ["kept with gender empty: not published for train"],
        f"{LA_CM}train.trn.txt:5": ["skipped: expected 'SPEAKER FILE - ATTACK bonafide|spoof'"],
        f"{LA_CM}eval.trl.txt:6": ["skipped: expected 'SPEAKER FILE - ATTACK bonafide|spoof'"],
        "ASVspoof2019_LA_eval/flac/LA_E_2000009.flac": ["not used: in no protocol or enrolment list"],
    }


def test_asvspoof2019_la_attacks_are_a_spoof_table_of_their_targets(tmp_path: Path) -> None:
    root = make_asvspoof2019_la(tmp_path / "LA")
    table = load_corpus("asvspoof2019_la_spoofs", root)
    assert records(table, "speaker", "spoof_system", "spoof_system_version", "split") == {
        "LA_E_2000002": ("LA_0039", "A17", "ASVspoof 2019 LA (VC)", "eval"),
        "LA_E_2000004": ("LA_0040", "A99", "ASVspoof 2019 LA (kind not published)", "eval"),
        "LA_T_1000002": ("LA_0079", "A01", "ASVspoof 2019 LA (TTS)", "train"),
        "LA_T_1000004": ("LA_0080", "A05", "ASVspoof 2019 LA (VC)", "train"),
    }
    found = problems(table)
    assert found[f"{LA_CM}eval.trl.txt:4"] == ["kept: attack 'A99' is not one of the published A01-A19"]
    assert found[f"{LA_CM}eval.trl.txt:5"] == ["skipped: ASVspoof2019_LA_eval/flac/LA_E_2000005.flac does not exist"]
    assert "ASVspoof2019_LA_eval/flac/LA_E_2000009.flac" not in found  # bona fide files are the other adapter's
    bona_fide = load_corpus("asvspoof2019_la", root)
    accounted = {p.path for t in (table, bona_fide) for p in t.problems} | set(table.frame["path"])
    accounted |= set(bona_fide.frame["path"])
    assert {p.relative_to(root).as_posix() for p in root.rglob("*.flac")} <= accounted


def test_an_la_folder_without_its_protocols_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "LA").mkdir()
    with pytest.raises(CorpusError, match="countermeasure protocol folder not found"):
        load_corpus("asvspoof2019_la_spoofs", tmp_path / "LA")


@pytest.mark.slow
def test_corpus_check_says_what_a_folder_holds_and_what_it_could_not_use(tmp_path: Path) -> None:
    def check(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "runner.cli", "corpus", "check", *args]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    root = make_spoofs(tmp_path / "spoofs")
    before = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
    shown = check("spoof", str(root), "--release", "tts-2026-11", "--problems", "2")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"spoof {root}: release tts-2026-11, 2 utterances, 2 speakers, 0.00 h, 7 problems"
    assert lines[1:] == [
        "  manifest.csv:3: skipped: empty system_version",
        "  manifest.csv:4: skipped: vits/missing.wav does not exist",
        "  ... 5 more (--problems N, or --json)",
    ]
    summary = json.loads(check("spoof", str(root), "--json").stdout)
    assert (summary["utterances"], summary["speakers"], len(summary["problems"])) == (2, 2, 8)  # + the release
    assert summary["release"] is None
    assert summary["hours"] == round(0.75 / 3600, 4)
    assert {path: path.read_bytes() for path in root.rglob("*") if path.is_file()} == before  # only read
    missing = check("spoof", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "corpus folder not found" in missing.stderr


# The release each adapter reads, as its publisher names it (written out by hand, not read from the adapters).
PUBLISHED_RELEASES = {
    "ravdess": (make_ravdess, "RAVDESS", "1.0.0"),
    "torgo": (make_torgo, "TORGO", "2012"),
    "ears": (make_ears, "EARS", "2024"),
    "l2_arctic": (make_l2_arctic, "L2-ARCTIC", "5.0"),
    "voxceleb1": (make_voxceleb1, "VoxCeleb1", "1.1"),
}


@pytest.mark.parametrize("adapter", sorted(PUBLISHED_RELEASES))
def test_every_row_records_the_release_its_adapter_reads(tmp_path: Path, adapter: str) -> None:
    make, package, version = PUBLISHED_RELEASES[adapter]
    table = load_corpus(adapter, make(tmp_path / adapter))
    assert len(table.frame) > 0
    assert set(zip(table.frame["source_package"], table.frame["source_version"], strict=True)) == {(package, version)}
    assert load_corpus(adapter, tmp_path / adapter, version, "here").frame.equals(table.frame)  # the same pin: kept
    with pytest.raises(CorpusError) as error:
        load_corpus(adapter, tmp_path / adapter, "0.9", "full.toml (corpus x, release)")
    assert str(error.value) == (
        f"full.toml (corpus x, release): release '0.9' is declared but the {adapter} folder holds release '{version}'"
    )


def test_common_voice_records_the_release_its_folder_shows_or_the_one_declared(tmp_path: Path) -> None:
    shown = make_common_voice(tmp_path / "cv-corpus-17.0-2024-03-15" / "en")
    table = load_corpus("common_voice", shown)
    assert set(table.frame["source_version"]) == {"17.0"} and set(table.frame["source_package"]) == {"Common Voice"}
    with pytest.raises(
        CorpusError, match=r"release '16\.1' is declared but the common_voice folder holds release '17\.0'"
    ):
        load_corpus("common_voice", shown, "16.1")
    linked = tmp_path / "corpora" / "common_voice"  # as full.toml names it, a link to the release folder
    linked.parent.mkdir()
    linked.symlink_to(shown, target_is_directory=True)
    assert set(load_corpus("common_voice", linked).frame["source_version"]) == {"17.0"}
    unnamed = make_common_voice(tmp_path / "plain" / "en")
    declared = load_corpus("common_voice", unnamed, "16.1")
    assert set(declared.frame["source_version"]) == {"16.1"} and set(declared.frame["source_package"]) == {
        "Common Voice"
    }
    assert "." not in problems(declared)
    undeclared = load_corpus("common_voice", unnamed)
    assert undeclared.frame["source_version"].isna().all()
    assert problems(undeclared)["."] == [
        "release not recorded: the common_voice folder does not show it; declare it (release = ...)"
    ]


def test_corpus_check_refuses_another_release_in_one_line(tmp_path: Path) -> None:
    root = make_voxceleb1(tmp_path / "vox")
    command = [sys.executable, "-m", "runner.cli", "corpus", "check", "voxceleb1", str(root), "--release", "2.0"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: --release: release '2.0' is declared but the voxceleb1 folder holds release '1.1'\n"
