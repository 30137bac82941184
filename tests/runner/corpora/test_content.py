"""Files that parse as audio but hold no speech (issue 44): digitally silent and white-noise files are named by
``interbias corpus check``; tones, speech-like signals, speech in noise down to 0 dB SNR and coloured noise are not.

Every signal is generated here with a known truth: Gaussian and uniform white noise, all-zero and one-LSB files, a
sine tone, a harmonic source through three formant resonators under a syllable envelope with a pause, that signal in
white noise, and integrated (brown) noise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile
from scipy.signal import lfilter
from typer.testing import CliRunner

from runner.corpora import content_problems
from tests.runner.fake_corpora import make_ravdess

RATE = 16_000
SECONDS = 2.0


def _speech_like(rng: np.random.Generator) -> np.ndarray:
    """A 120 Hz harmonic source through formants at 500, 1500 and 2500 Hz, three syllables a second, one pause."""
    time = np.arange(int(RATE * SECONDS)) / RATE
    phase = 2 * np.pi * np.cumsum(120 + 20 * np.sin(2 * np.pi * 0.5 * time)) / RATE
    signal = sum(np.sin(k * phase) / k for k in range(1, 40))
    for centre, bandwidth in ((500, 80), (1500, 120), (2500, 150)):
        radius, angle = np.exp(-np.pi * bandwidth / RATE), 2 * np.pi * centre / RATE
        signal = lfilter([1 - radius], [1, -2 * radius * np.cos(angle), radius**2], signal)
    envelope = np.clip(np.sin(2 * np.pi * 3 * time), 0, None) ** 2
    envelope[(time > 0.8) & (time < 1.1)] = 0
    shaped = signal * envelope * (1 + 0.01 * rng.standard_normal(len(time)))
    return 0.3 * shaped / np.abs(shaped).max()


def _signals() -> dict[str, tuple[np.ndarray, str | None]]:
    rng = np.random.default_rng(44)
    n = int(RATE * SECONDS)
    speech = _speech_like(rng)
    noise = rng.standard_normal(n)

    def in_noise(snr_db: float) -> np.ndarray:
        return speech + noise * np.sqrt(np.mean(speech**2) / 10 ** (snr_db / 10))

    return {
        "gaussian-white.wav": (0.1 * noise, "white noise"),
        "uniform-white.flac": (rng.uniform(-0.5, 0.5, n), "white noise"),
        "zeros.wav": (np.zeros(n), "digitally silent (peak -inf dBFS)"),
        "one-lsb.wav": (np.round(rng.uniform(-1, 1, n)) / 32768, "digitally silent (peak -90 dBFS)"),
        "tone.wav": (0.3 * np.sin(2 * np.pi * 220 * np.arange(n) / RATE), None),
        "speech-like.wav": (speech, None),
        "speech-in-noise-20dB.wav": (in_noise(20), None),
        "speech-in-noise-0dB.wav": (in_noise(0), None),
        "brown-noise.wav": (np.cumsum(noise) * 1e-3, None),
    }


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("content")
    for name, (samples, _) in _signals().items():
        soundfile.write(root / name, np.clip(samples, -1, 1), RATE, subtype="PCM_16")
    return root


def test_silent_and_white_noise_files_are_named_and_speech_is_not(folder: Path) -> None:
    found = {problem.path: problem.reason for problem in content_problems(folder, sorted(_signals()))}
    expected = {name: what for name, (_, what) in _signals().items() if what is not None}
    assert sorted(found) == sorted(expected)
    for name, what in expected.items():
        assert found[name].startswith(f"kept, but {what}"), found[name]


def test_a_file_cut_short_after_its_header_is_a_problem_not_a_crash(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "cut.wav").write_bytes((folder / "tone.wav").read_bytes()[:44])
    [problem] = content_problems(tmp_path, ["cut.wav"])
    assert problem.path == "cut.wav" and problem.reason.startswith("kept, but ")


def test_corpus_check_reports_them_and_no_content_reads_headers_only(tmp_path: Path) -> None:
    from runner.cli import app

    root = make_ravdess(tmp_path / "RAVDESS")
    rng = np.random.default_rng(1)
    soundfile.write(root / "Actor_01" / "03-01-02-01-01-01-01.wav", 0.1 * rng.standard_normal(RATE), RATE)
    soundfile.write(root / "Actor_02" / "03-01-03-01-01-01-02.wav", np.zeros(RATE), RATE)
    shown = CliRunner().invoke(app, ["corpus", "check", "ravdess", str(root), "--problems", "20"])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0].endswith("5 utterances, 2 speakers, 0.00 h, 7 problems")
    assert "  Actor_01/03-01-02-01-01-01-01.wav: kept, but white noise (spectral flatness " in "\n".join(lines)
    assert "  Actor_02/03-01-03-01-01-01-02.wav: kept, but digitally silent (peak -inf dBFS)" in "\n".join(lines)
    headers_only = CliRunner().invoke(app, ["corpus", "check", "ravdess", str(root), "--no-content"])
    assert headers_only.stdout.splitlines()[0].endswith("5 utterances, 2 speakers, 0.00 h, 5 problems")
