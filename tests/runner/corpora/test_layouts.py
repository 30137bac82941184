"""The corpus adapters on folders laid out as each corpus is distributed and as peers' recipes read it, not as this
project's fixtures assume: TORGO's group archives, VoxCeleb1 merged or split with the trial lists under either name,
RAVDESS from Zenodo (speech and song archives in one folder) and from Kaggle (every file twice), folders of links
(per-speaker links, loops, broken links, a FIFO), and a folder whose files all break the layout.

Each test names its layout's source. Expected rows are written out by hand from the corpus's naming.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from provenance.digests import DigestIndex, digest_index
from runner.corpora import CorpusError, load_corpus
from runner.corpora.voxceleb1 import official_list_path, official_trials
from tests.runner.fake_corpora import write_text, write_tone

pytestmark = pytest.mark.runner


def problems(table: object) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in table.problems:  # type: ignore[attr-defined]
        found.setdefault(problem.path, []).append(problem.reason)
    return found


def write_torgo_speaker(root: Path, speaker: str, prompts: dict[str, str]) -> None:
    """One session of ``speaker`` under ``root``: each prompt recorded by both microphones, with its prompt file."""
    session = root / speaker / "Session1"
    for number, (stem, text) in enumerate(prompts.items()):
        for mic in ("wav_arrayMic", "wav_headMic"):
            write_tone(session / mic / f"{stem}.wav", hz=200.0 + 20 * number)
        write_text(session / "prompts" / f"{stem}.txt", text + "\n")


def test_torgo_as_its_group_archives_unpack(tmp_path: Path) -> None:
    """https://www.cs.toronto.edu/~complingweb/data/TORGO/torgo.html distributes F.tar.bz2, FC.tar.bz2, M.tar.bz2
    and MC.tar.bz2, unpacking to F/F01/Session1/wav_arrayMic/0001.wav and so on."""
    grouped, merged = tmp_path / "grouped", tmp_path / "merged"
    speakers = {"F": "F01", "FC": "FC01", "M": "M01", "MC": "MC01"}
    prompts = {"0001": "Stick", "0002": "[relax your mouth in its normal position]", "0003": "xxx"}
    prompts |= {"0004": "input/images/photo1.jpg", "0005": "The quick brown fox jumps over the lazy dog."}
    for group, speaker in speakers.items():
        write_torgo_speaker(grouped / group, speaker, prompts)
        write_torgo_speaker(merged, speaker, prompts)
    write_tone(grouped / "M" / "FC02" / "Session1" / "wav_headMic" / "0001.wav")  # a control filed under M/
    table = load_corpus("torgo", grouped)
    assert len(table.frame) == 4 * 5 * 2
    rows = table.frame.set_index("utt_id")
    assert rows.loc["F01_Session1_headMic_0001", "path"] == "F/F01/Session1/wav_headMic/0001.wav"
    assert rows.loc["MC01_Session1_arrayMic_0005", ["condition", "gender"]].tolist() == ["control", "M"]
    styles = rows[rows["speaker"] == "F01"].groupby("transcript")["style"].first().to_dict()
    assert styles == {
        "Stick": "lexical",
        "The quick brown fox jumps over the lazy dog.": "lexical",
        "[relax your mouth in its normal position]": "instruction",
        "xxx": "unlabelled",
        "input/images/photo1.jpg": "picture-description",
    }
    assert problems(table) == {
        "M/FC02/Session1/wav_headMic/0001.wav": ["skipped: speaker FC02 is filed under the group folder M/"]
    }
    # the speaker folders at the root (the archives merged) give the same utterances
    same = load_corpus("torgo", merged).frame
    assert same.drop(columns="path").equals(table.frame.drop(columns="path"))


def write_vox_segment(base: Path, utt: str, hz: float) -> None:
    write_tone(base.joinpath(*utt.split("/")), hz=hz)


VOX_META = "VoxCeleb1 ID\tVGGFace1 ID\tGender\tNationality\tSet\nid10001\tA_B\tm\tUSA\tdev\nid10270\tC_D\tf\tUK\ttest\n"
VOX_DEV = ("id10001/1zcIwhmdeo4/00001.wav", "id10001/1zcIwhmdeo4/00002.wav")
VOX_TEST = ("id10270/5r0dWxy17C8/00001.wav", "id10270/x6uYqmx31kE/00001.wav")
VOX_LIST = "1 id10270/5r0dWxy17C8/00001.wav id10270/x6uYqmx31kE/00001.wav\n"


def test_voxceleb1_split_as_kaldi_and_wespeaker_unzip_it_equals_the_merged_layout(tmp_path: Path) -> None:
    """Kaldi egs/voxceleb/v2/local/make_voxceleb1_v2.pl reads <voxceleb1>/{dev,test}/wav/<id>/<video>/<NNNNN>.wav;
    WeSpeaker examples/voxceleb/v2/local/prepare_data.sh unzips vox1_{dev,test}_wav.zip into voxceleb1/{dev,test}/
    and saves veri_test2.txt as data/vox1/trials/vox1-O(cleaned).txt. lhotse's prepare_voxceleb reads the merged
    <voxceleb1>/wav/ that both zips unpack to, with veri_test2.txt named as on the VoxCeleb site."""
    split, merged = tmp_path / "split", tmp_path / "merged"
    for number, utt in enumerate(VOX_DEV):
        write_vox_segment(split / "dev" / "wav", utt, 200 + number)
        write_vox_segment(merged / "wav", utt, 200 + number)
    for number, utt in enumerate(VOX_TEST):
        write_vox_segment(split / "test" / "wav", utt, 300 + number)
        write_vox_segment(merged / "wav", utt, 300 + number)
    for root in (split, merged):
        write_text(root / "vox1_meta.csv", VOX_META)
    write_text(split / "trials" / "vox1-O(cleaned).txt", VOX_LIST)
    write_text(merged / "veri_test2.txt", VOX_LIST)
    from_split, from_merged = load_corpus("voxceleb1", split), load_corpus("voxceleb1", merged)
    assert list(from_split.frame["utt_id"]) == sorted(VOX_DEV + VOX_TEST)
    assert list(from_split.frame["path"][:1]) == ["dev/wav/id10001/1zcIwhmdeo4/00001.wav"]
    assert list(from_split.frame["split"]) == ["dev", "dev", "test", "test"]
    assert from_split.frame.drop(columns="path").equals(from_merged.frame.drop(columns="path"))
    published = "1 trials (1 target) where VoxCeleb1-O (cleaned) has 37,611 (18,802) as published"
    assert problems(from_split) == {"trials/vox1-O(cleaned).txt": [published]}
    assert official_trials(split).equals(official_trials(merged))
    assert official_list_path(split, "list_test_hard2") is None
    write_text(split / "veri_test2.txt", VOX_LIST.replace("1 ", "0 ", 1))  # a second copy that differs
    with pytest.raises(CorpusError, match=r"\(cleaned\)\.txt: differs from .*veri_test2\.txt: two copies of Vox"):
        load_corpus("voxceleb1", split)


def test_ravdess_from_zenodo_speech_and_song_in_one_folder(tmp_path: Path) -> None:
    """https://zenodo.org/record/1188976: Audio_Speech_Actors_01-24.zip and Audio_Song_Actors_01-24.zip both unpack
    to Actor_NN/; the vocal channel (second field, 01 speech, 02 song) tells them apart."""
    write_tone(tmp_path / "Actor_01" / "03-01-05-01-01-01-01.wav")
    write_tone(tmp_path / "Actor_01" / "03-02-05-01-01-01-01.wav")
    table = load_corpus("ravdess", tmp_path)
    assert dict(zip(table.frame["utt_id"], table.frame["style"], strict=True)) == {
        "03-01-05-01-01-01-01": "speech",
        "03-02-05-01-01-01-01": "song",
    }


def test_ravdess_from_kaggle_keeps_each_file_once(tmp_path: Path) -> None:
    """https://www.kaggle.com/datasets/uwrfkaggler/ravdess-emotional-speech-audio holds every speech file under
    Actor_NN/ and again under audio_speech_actors_01-24/Actor_NN/."""
    for folder in (tmp_path / "Actor_02", tmp_path / "audio_speech_actors_01-24" / "Actor_02"):
        write_tone(folder / "03-01-03-01-01-01-02.wav", hz=300.0)
        write_tone(folder / "03-01-04-01-01-01-02.wav", hz=400.0)
    table = load_corpus("ravdess", tmp_path)
    assert list(table.frame["path"]) == ["Actor_02/03-01-03-01-01-01-02.wav", "Actor_02/03-01-04-01-01-01-02.wav"]
    copy = "audio_speech_actors_01-24/Actor_02/03-01-03-01-01-01-02.wav"
    assert problems(table)[copy] == ["skipped: the same bytes as Actor_02/03-01-03-01-01-01-02.wav (one copy kept)"]
    write_tone(tmp_path / copy, hz=999.0)  # now another recording under the same name
    with pytest.raises(CorpusError) as caught:
        load_corpus("ravdess", tmp_path)
    line = caught.value.line()
    assert "'03-01-03-01-01-01-02' is both Actor_02/03-01-03-01-01-01-02.wav and " + copy in line
    assert line.count("\n") == 0


def test_per_speaker_links_are_followed_and_digested_by_their_real_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A corpus merged from per-speaker links (L2-ARCTIC's <SPEAKER>/wav/arctic_a0001.wav, speakers elsewhere)."""
    import provenance.digests

    store = tmp_path / "store"
    for speaker in ("ABA", "SKA"):
        write_tone(store / speaker / "wav" / "arctic_a0001.wav", hz=180.0 if speaker == "ABA" else 260.0)
        write_text(store / speaker / "transcript" / "arctic_a0001.txt", "Author of the danger trail.")
        (tmp_path / "corpus").mkdir(exist_ok=True)
        (tmp_path / "corpus" / speaker).symlink_to(store / speaker, target_is_directory=True)
    (tmp_path / "corpus" / "ABA" / "wav" / "loop").symlink_to(tmp_path / "corpus", target_is_directory=True)
    (tmp_path / "corpus" / "ABA" / "wav" / "arctic_a0002.wav").symlink_to(store / "nowhere.wav")
    os.mkfifo(store / "SKA" / "wav" / "arctic_a0003.wav")
    monkeypatch.setattr(provenance.digests, "RACY_SECONDS", -1.0)  # record entries for files written just now
    with digest_index(DigestIndex()) as index:
        table = load_corpus("l2_arctic", tmp_path / "corpus")
    assert list(table.frame["path"]) == ["ABA/wav/arctic_a0001.wav", "SKA/wav/arctic_a0001.wav"]
    assert index is not None and sorted(index.entries) == [
        str((store / speaker / "wav" / "arctic_a0001.wav").resolve()) for speaker in ("ABA", "SKA")
    ]
    assert problems(table) == {
        "ABA/wav/arctic_a0002.wav": ["skipped: link to nothing (broken link)"],
        "ABA/wav/loop": ["skipped: folder already walked (a link loop, or a second link to it)"],
        "SKA/wav/arctic_a0003.wav": ["skipped: not a regular file"],
    }


def test_a_folder_whose_files_break_the_layout_is_one_line_naming_it(tmp_path: Path) -> None:
    """TORGO one folder too deep (a wrapper around the group folders): every file is found, none parses."""
    for number in range(4):
        write_tone(tmp_path / "TORGO" / "data" / "F" / "F01" / "Session1" / "wav_headMic" / f"000{number}.wav")
    command = [sys.executable, "-m", "runner.cli", "corpus", "check", "torgo", str(tmp_path / "TORGO")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert "4 audio file(s) found but none parsed: expected [F|FC|M|MC/]<speaker>/Session<N>/" in done.stderr
    assert "first seen: data/F/F01/Session1/wav_headMic/0000.wav, data/F/F01/Session1/wav_headMic/0001.wav" in (
        done.stderr
    )
    assert "(of 4)" in done.stderr and "Traceback" not in done.stderr


def test_corpus_build_names_the_corpora_it_builds(tmp_path: Path) -> None:
    """`interbias corpus build --corpus` builds the Debian-package corpora only: another name is one line."""
    command = [sys.executable, "-m", "runner.cli", "corpus", "build", "--corpus", "timit", "--out", str(tmp_path / "t")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--corpus: expected one of asterisk, fillets, world-proxy, got 'timit'" in done.stderr
    assert not (tmp_path / "t").exists()
