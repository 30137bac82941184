"""The Fish Fillets NG corpus, built from the installed fillets-ng-data-cs and -nl packages on a small slice.

Oracles: each decoded line's duration against its Ogg source read with libsndfile (22.05 kHz), the speakers and
the left-out codes written out by hand from the packages' file names, and a second build giving the same bytes.
``nox -s tests`` installs the packages (as root, ``FILLETS_PACKAGES`` in noxfile.py); a pytest run on a machine
without them skips these tests, with that reason.
"""

from __future__ import annotations

import json
import shutil
import wave
from pathlib import Path

import pytest
import soundfile

from runner.corpora import CorpusError, load_corpus
from runner.corpora.debian import MANIFEST_FILE, installed_package
from runner.corpora.fillets import LANGUAGES, SOUND_ROOT, build_fillets_corpus


def _installed() -> bool:
    try:
        return all(installed_package(language.package) for language in LANGUAGES)
    except CorpusError:
        return False


pytestmark = pytest.mark.skipif(
    shutil.which("dpkg-query") is None or not _installed(),
    reason="fillets-ng-data-cs and fillets-ng-data-nl are not installed (apt-get install them as root)",
)

SLICE = 3


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fillets") / "corpus"
    build_fillets_corpus(out, max_per_speaker=SLICE, progress=False)
    return out


def test_the_two_fish_of_each_language_are_the_speakers(built: Path) -> None:
    table = load_corpus("fillets", built)
    frame = table.frame
    assert sorted(frame["speaker"].unique()) == ["cs-m", "cs-v", "nl-m", "nl-v"]
    assert (frame.groupby("speaker").size() == SLICE).all()
    assert dict(zip(frame["speaker"], frame["language"], strict=True)) == {
        "cs-m": "cs",
        "cs-v": "cs",
        "nl-m": "nl",
        "nl-v": "nl",
    }
    assert frame["gender"].isna().all() and frame["transcript"].isna().all()
    assert set(frame["source_package"]) == {"fillets-ng-data-cs", "fillets-ng-data-nl"}
    assert set(frame["source_version"]) == {installed_package("fillets-ng-data-cs").version}
    for row in frame.itertuples():
        speaker, level_path = row.utt_id.split("/", 1)
        source = Path(SOUND_ROOT) / f"{level_path}.ogg"
        code = source.stem.split("-")[1] if source.stem.count("-") >= 2 else source.stem.rsplit("-", 1)[1]
        assert speaker == f"{source.parent.name}-{code}"
        info = soundfile.info(str(source))
        assert info.samplerate == 22050
        with wave.open(str(built / row.path)) as wav:
            assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16000, 1, 2)
            assert wav.getnframes() / 16000 == pytest.approx(row.duration_s)
        assert row.duration_s == pytest.approx(info.frames / info.samplerate, abs=0.002)


def test_minor_characters_are_left_out_and_counted(built: Path) -> None:
    manifest = json.loads((built / MANIFEST_FILE).read_text())
    czech = manifest["packages"]["fillets-ng-data-cs"]
    # codes of other characters in the Czech file names (bathyscaph/cs/bat-p-0.ogg, barrel/cs/bar-x-vypr.ogg, ...)
    assert {"p", "s", "x", "pap", "hs", "c"} <= set(czech["minor_characters"])
    problems = {problem.path: problem.reason for problem in load_corpus("fillets", built).problems}
    assert "left out: minor character 'p'" in problems[f"{SOUND_ROOT}/bathyscaph/cs/bat-p-0.ogg"]
    assert "left out: minor character 'x'" in problems[f"{SOUND_ROOT}/barrel/cs/bar-x-vypr.ogg"]
    assert "no speaker is identified" in problems[f"{SOUND_ROOT}/briefcase/cs/help1.ogg"]
    assert manifest["inputs"]["packages"]["fillets-ng-data-nl"]["source_files"] > 1000
    assert [speaker["speaker"] for speaker in manifest["speakers"]] == ["cs-m", "cs-v", "nl-m", "nl-v"]


def test_a_rebuild_gives_the_same_bytes_and_a_changed_file_is_named(built: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_fillets_corpus(again, max_per_speaker=SLICE, progress=False)
    for name in ("utterances.csv", "problems.csv", MANIFEST_FILE):
        assert (again / name).read_bytes() == (built / name).read_bytes()
    wav = next((again / "audio").rglob("*.wav"))
    wav.write_bytes(wav.read_bytes()[:-2] + b"\x00\x01")
    with pytest.raises(CorpusError, match="rebuild it with `interbias corpus build --corpus fillets`"):
        load_corpus("fillets", again)
