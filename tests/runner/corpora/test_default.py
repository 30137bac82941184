"""The embedded default corpus, built from the installed asterisk prompt packages on a small slice.

Oracles: durations from the source byte counts (G.722 at 64 kbit/s is 8,000 bytes a second; GSM 06.10 is 33
bytes per 20 ms frame; PCM WAV read with libsndfile), WAV headers read with the standard ``wave`` module, and
the speaker/gender/language table written out by hand from the package descriptions.
"""

from __future__ import annotations

import json
import shutil
import time
import wave
from pathlib import Path

import blake3
import numpy as np
import pytest
import soundfile

from runner.corpora import CorpusError, asterisk, build_default_corpus, debian, load_corpus
from runner.corpora.asterisk import VOICES
from runner.corpora.debian import MANIFEST_FILE, installed_package

PACKAGES = [package.name for voice in VOICES for package in voice.packages]


def _all_installed() -> bool:
    try:
        return all(installed_package(name) for name in PACKAGES)
    except CorpusError:
        return False


pytestmark = pytest.mark.skipif(
    shutil.which("dpkg-query") is None or not _all_installed(),
    reason="the asterisk prompt packages of configs/system-packages.txt are not installed",
)

SLICE = 3
EXPECTED_SPEAKERS = {
    "allison-smith": ("F", {"en-US", "es-MX"}),
    "june-wallack": ("F", {"fr-CA"}),
    "carlo-flora": ("M", {"it-IT"}),
    "ivrvoice-ru": ("F", {"ru-RU"}),
    "paola-dal-zot": ("F", {"it-IT"}),
    "armelle-desjardins": (None, {"fr"}),
    "july-jimenez": (None, {"es-CO"}),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("default") / "corpus"
    build_default_corpus(out, max_per_speaker=SLICE, progress=False)
    return out


def source_seconds(path: Path) -> float:
    """Duration of a source prompt from its size or header, without decoding it."""
    if path.suffix == ".g722":
        return path.stat().st_size / 8000
    if path.suffix == ".gsm":
        return path.stat().st_size / 33 * 0.020
    return soundfile.info(str(path)).duration


def test_seven_speakers_with_documented_gender_and_languages(built: Path) -> None:
    frame = load_corpus("asterisk", built).frame
    seen = {}
    for speaker, rows in frame.groupby("speaker"):
        genders = set(rows["gender"].dropna())
        seen[speaker] = (genders.pop() if genders else None, set(rows["language"]))
        assert len(rows) == SLICE
    assert seen == EXPECTED_SPEAKERS
    merged = frame[frame["speaker"] == "allison-smith"]["source_package"]
    assert set(merged) == {"asterisk-core-sounds-en-g722", "asterisk-core-sounds-es-g722"}
    assert frame["source_version"].notna().all() and frame["transcript"].isna().all()


def test_audio_is_16k_mono_16bit_and_matches_table_and_source(built: Path) -> None:
    frame = load_corpus("asterisk", built).frame
    for item in frame.itertuples(index=False):
        wav_path = built / item.path
        with wave.open(str(wav_path)) as reader:
            assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (1, 2, 16000)
            assert reader.getnframes() / 16000 == pytest.approx(item.duration_s, abs=1e-9)
            samples = np.frombuffer(reader.readframes(reader.getnframes()), "<i2").astype(np.float64)
        assert item.sample_rate == 16000
        assert item.blake3 == blake3.blake3(wav_path.read_bytes()).hexdigest()
        assert item.duration_s >= asterisk.DEFAULT_MIN_DURATION_S
        assert np.sqrt(np.mean(samples**2)) > 100  # speech, not silence or a zeroed buffer
        source = asterisk.SOUNDS_ROOT / item.utt_id.split("/", 1)[1]
        matches = [p for p in Path(source.parent).glob(source.name + ".*") if p.suffix in asterisk.AUDIO_SUFFIXES]
        assert len(matches) == 1
        assert item.duration_s == pytest.approx(source_seconds(matches[0]), abs=0.01)


def test_short_prompts_are_counted_not_dropped_silently(built: Path) -> None:
    table = load_corpus("asterisk", built)
    short = [p for p in table.problems if "shorter than the declared minimum 1.0 s" in p.reason]
    assert short, "the slice starts with short prompts (activated, added): they must be listed"
    for problem in short:
        assert source_seconds(Path(problem.path)) < 1.0 + 0.01
    manifest = json.loads((built / MANIFEST_FILE).read_text())
    assert sum(p["too_short"] for p in manifest["packages"].values()) == len(short)
    assert manifest["totals"] == {
        "speakers": 7,
        "utterances": 7 * SLICE,
        "seconds": manifest["totals"]["seconds"],
        "problems": len(table.problems),
    }
    assert manifest["packages"]["asterisk-core-sounds-en-g722"]["version"] == installed_package(PACKAGES[0]).version


def test_rebuild_is_byte_identical(built: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_default_corpus(again, max_per_speaker=SLICE, progress=False)
    for name in ("utterances.csv", "problems.csv", MANIFEST_FILE):
        assert (again / name).read_bytes() == (built / name).read_bytes()
    wavs = sorted(p.relative_to(built) for p in (built / "audio").rglob("*.wav"))
    assert wavs == sorted(p.relative_to(again) for p in (again / "audio").rglob("*.wav"))
    assert all((built / p).read_bytes() == (again / p).read_bytes() for p in wavs)


@pytest.mark.slow
def test_cache_skips_decoding_and_rebuilds_when_inputs_or_outputs_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "corpus"
    first = build_default_corpus(out, max_per_speaker=2, progress=False)
    calls = 0
    decode = debian.decode_16k  # every build decodes through it

    def counting(path: Path, demuxer: str | None) -> np.ndarray:
        nonlocal calls
        calls += 1
        return decode(path, demuxer)

    monkeypatch.setattr(debian, "decode_16k", counting)
    started = time.perf_counter()
    cached = build_default_corpus(out, max_per_speaker=2, progress=False)
    assert calls == 0 and time.perf_counter() - started < 10
    assert cached.utterances_csv() == first.utterances_csv()

    (out / "utterances.csv").write_bytes(first.utterances_csv().replace(b"allison", b"alison", 1))
    build_default_corpus(out, max_per_speaker=2, progress=False)
    assert calls > 0  # a tampered table is not trusted
    assert (out / "utterances.csv").read_bytes() == first.utterances_csv()

    calls = 0
    truncated = out / first.frame["path"].iloc[0]
    truncated.write_bytes(truncated.read_bytes()[:-2])
    build_default_corpus(out, max_per_speaker=2, progress=False)
    assert calls > 0  # a truncated WAV is not trusted either

    smaller = build_default_corpus(out, max_per_speaker=1, progress=False)
    assert len(smaller.frame) == 7
    assert len(list((out / "audio").rglob("*.wav"))) == 7  # WAVs of the larger build are removed


def test_missing_package_names_it_and_the_install_command() -> None:
    with pytest.raises(CorpusError) as caught:
        installed_package("asterisk-core-sounds-xx-g722")
    assert caught.value.source == "asterisk-core-sounds-xx-g722"
    assert "apt-get install asterisk-core-sounds-xx-g722" in caught.value.problem


def test_unbuilt_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="interbias corpus build"):
        load_corpus("asterisk", tmp_path)


def test_progress_off_a_terminal_is_stage_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Redirected stderr (a CI log) gets plain stage lines, never a progress bar's carriage returns."""
    table = build_default_corpus(tmp_path / "corpus", max_per_speaker=2, progress=True)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert "\r" not in err and lines and all(line.startswith("stage 1/1 default corpus: ") for line in lines)
    assert lines[-1].startswith(f"stage 1/1 default corpus: {len(table.frame)} utterances kept (")
