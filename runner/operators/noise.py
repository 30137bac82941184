"""Additive noise at a target SNR: synthetic white and pink, babble from other corpus speakers, real music.

SNR is measured on the whole utterance: 10 log10(sum speech^2 / sum added_noise^2), pauses included, with the
noise scaled so that this figure equals ``snr_db``. The realised value (after float32 rounding of the mixture)
is in the outcome's details as ``snr_db_measured``. The mixture is not clipped or renormalised; a later 16-bit
codec counts any clipping in its own outcome.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy.fft import irfft, next_fast_len

from runner.operators.audio import loop_to_length
from runner.operators.base import BOUND, Operator, Outcome, Result, register
from runner.operators.sources import MissingMaterialError, NoiseSources


@dataclass(frozen=True)
class NoiseMaterial:
    """Noise drawn for one utterance, with a label for the outcome and the realisation's figures."""

    samples: np.ndarray
    label: str
    details: dict[str, str | int | float | bool] = field(default_factory=dict)


@dataclass(frozen=True)
class AdditiveNoise(Operator):
    """Adds noise scaled to ``snr_db`` (whole-utterance powers); subclasses supply the noise."""

    synthetic: ClassVar[bool] = False
    snr_db: float = 10.0

    def check(self) -> None:
        if not -30.0 <= self.snr_db <= 60.0:
            raise ValueError(f"snr_db must be within [-30, 60] dB, got {self.snr_db}")

    def describe(self) -> dict[str, Any]:
        return {**self.spec(), "synthetic": self.synthetic}

    @abstractmethod
    def draw(self, length: int, sr: int, rng: np.random.Generator, utt_id: str | None) -> NoiseMaterial:
        """``length`` samples of noise at ``sr``; MissingMaterialError when there is nothing to draw from."""

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        speech = wave.astype(np.float64)
        speech_energy = float(np.dot(speech, speech))
        if speech_energy == 0.0:
            return wave, sr, Outcome.failed("input audio is silent: SNR is undefined")
        try:
            material = self.draw(len(wave), sr, rng, utt_id)
        except MissingMaterialError as error:
            return wave, sr, Outcome.failed(str(error))
        noise = material.samples.astype(np.float64)
        noise_energy = float(np.dot(noise, noise))
        if noise_energy == 0.0:
            return wave, sr, Outcome.failed(f"{material.label} is silent over this utterance")
        gain = np.sqrt(speech_energy / (noise_energy * 10.0 ** (self.snr_db / 10.0)))
        mixture = (speech + gain * noise).astype(np.float32)
        added = mixture.astype(np.float64) - speech
        measured = float(10.0 * np.log10(speech_energy / float(np.dot(added, added))))
        reason = f"{material.label} added at {self.snr_db:g} dB SNR (whole-utterance power)"
        return (
            mixture,
            sr,
            Outcome.applied(reason, snr_db_measured=measured, synthetic=self.synthetic, **material.details),
        )


@register
@dataclass(frozen=True)
class WhiteNoise(AdditiveNoise):
    """Synthetic white Gaussian noise."""

    name = "white"
    synthetic = True

    def draw(self, length: int, sr: int, rng: np.random.Generator, utt_id: str | None) -> NoiseMaterial:
        return NoiseMaterial(rng.standard_normal(length), "synthetic white Gaussian noise")


@register
@dataclass(frozen=True)
class PinkNoise(AdditiveNoise):
    """Synthetic pink noise (power spectral density proportional to 1/f) by spectral shaping.

    Method: draw a complex Gaussian spectrum (independent real and imaginary parts) on the rFFT grid of the
    utterance length, scale bin k > 0 by 1/sqrt(f_k) so that power falls as 1/f, zero the DC bin, inverse
    rFFT. The result is Gaussian with an exact 1/f expected spectrum down to the lowest bin (no filter
    approximation).
    """

    name = "pink"
    synthetic = True

    def draw(self, length: int, sr: int, rng: np.random.Generator, utt_id: str | None) -> NoiseMaterial:
        return NoiseMaterial(pink_noise(length, rng), "synthetic pink (1/f) Gaussian noise")


def pink_noise(length: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian noise with a 1/f power spectrum, made by spectral shaping (see ``PinkNoise``).

    The spectrum is drawn for the next FFT-friendly length and the result cut to ``length``: an FFT of a
    length with a large prime factor is many times slower, and a stretch of a stationary 1/f process is 1/f.
    """
    fft_length = next_fast_len(length, real=True)
    bins = fft_length // 2 + 1
    spectrum = rng.standard_normal(bins) + 1j * rng.standard_normal(bins)
    frequency = np.arange(bins, dtype=np.float64)
    spectrum[1:] /= np.sqrt(frequency[1:])
    spectrum[0] = 0.0
    return irfft(spectrum, n=fft_length)[:length]


@register
@dataclass(frozen=True)
class BabbleNoise(AdditiveNoise):
    """Babble: one utterance from each of ``talkers`` distinct other corpus speakers, summed at equal power.

    Never uses the target utterance's speaker (looked up by ``utt_id`` in the bound utterance table, so the
    utterance must be in it). Each talker's utterance is chosen at random, read circularly from a random start
    to cover the target's length, and normalised to unit RMS before summing.
    """

    name = "babble"
    talkers: int = 4
    sources: NoiseSources | None = field(default=None, compare=False, repr=False, metadata=BOUND)

    def check(self) -> None:
        super().check()
        if not 1 <= self.talkers <= 64:
            raise ValueError(f"talkers must be within [1, 64], got {self.talkers}")

    def draw(self, length: int, sr: int, rng: np.random.Generator, utt_id: str | None) -> NoiseMaterial:
        if self.sources is None:
            raise MissingMaterialError("babble needs noise sources (a corpus utterance table); none are bound")
        target = self.sources.speaker_of(utt_id, "babble")
        table = self.sources.corpus_table()
        others = table[table["speaker"] != target]
        speakers = sorted(others["speaker"].unique())
        if len(speakers) < self.talkers:
            raise MissingMaterialError(f"babble needs {self.talkers} other speakers, the table has {len(speakers)}")
        chosen = rng.choice(len(speakers), size=self.talkers, replace=False)
        babble = np.zeros(length, dtype=np.float64)
        used = []
        for index in chosen:
            rows = others[others["speaker"] == speakers[index]]
            row = rows.iloc[int(rng.integers(len(rows)))]
            talker = self.sources.corpus_audio(row["path"], sr).astype(np.float64)
            rms = np.sqrt(np.mean(talker**2))
            if rms == 0.0:
                raise MissingMaterialError(f"babble utterance {row['utt_id']!r} is silent")
            babble += loop_to_length(talker, length, int(rng.integers(len(talker)))) / rms
            used.append(str(row["utt_id"]))
        label = f"babble of {self.talkers} other corpus speakers"
        return NoiseMaterial(babble, label, {"babble_utterances": " ".join(used)})

    def describe(self) -> dict[str, Any]:
        material = self.sources.describe()["corpus"] if self.sources else {"problem": "no noise sources bound"}
        return {**super().describe(), "material": material}


@register
@dataclass(frozen=True)
class MusicNoise(AdditiveNoise):
    """Real music from the bound folder: a random file, read circularly from a random start."""

    name = "music"
    sources: NoiseSources | None = field(default=None, compare=False, repr=False, metadata=BOUND)

    def draw(self, length: int, sr: int, rng: np.random.Generator, utt_id: str | None) -> NoiseMaterial:
        if self.sources is None:
            raise MissingMaterialError("music needs noise sources (a music folder); none are bound")
        files = self.sources.music_files()
        path = files[int(rng.integers(len(files)))]
        music = self.sources.music_audio(path, sr)
        start = int(rng.integers(len(music)))
        label = f"music {path.name!r} from {start / sr:.2f} s"
        return NoiseMaterial(loop_to_length(music, length, start), label, {"music_file": path.name})

    def describe(self) -> dict[str, Any]:
        material = self.sources.describe()["music"] if self.sources else {"problem": "no noise sources bound"}
        return {**super().describe(), "material": material}
