"""Waveform checks, resampling to the model's rate, and length-bucketed batch plans.

Batches are formed from the utterances sorted by length, so each batch pads as little as possible; a batch
is closed when it reaches ``max_batch_size`` utterances or when its padded size (utterances x longest length)
would pass ``max_batch_seconds`` of audio at the model's rate. Models that cannot take a padding mask get
``equal_length_only`` batches, in which no utterance is padded at all, so their batched embeddings equal the
one-at-a-time ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from math import gcd
from typing import Any

import numpy as np

from schemas import Error

# Operators may push a signal a little past full scale (noise at low SNR); integer PCM left unscaled is
# thousands of times larger. Anything above this peak is refused rather than embedded.
MAX_PEAK = 4.0


class WaveformError(Error, ValueError):
    """A waveform handed to ``Encoder.embed`` that is not a finite 1-D float signal of usable length.

    ``reason`` is the problem without what varies from one waveform to the next (its length, its peak): the words
    a run counts a failed side under (``runner.encoders.failures``)."""

    def __init__(self, index: int, problem: str, reason: str | None = None) -> None:
        super().__init__(f"waveform {index}: {problem}")
        self.index = index
        self.reason = reason or problem


@dataclass(frozen=True)
class BatchPolicy:
    """How utterances are grouped into forward passes (recorded in the checkpoint record's config)."""

    max_batch_size: int = 32
    max_batch_seconds: float = 320.0
    equal_length_only: bool = False

    def __post_init__(self) -> None:
        if self.max_batch_size < 1 or self.max_batch_seconds <= 0:
            raise ValueError(f"batch limits must be positive, got {self}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_batches(lengths: Sequence[int], policy: BatchPolicy, sample_rate: int) -> list[list[int]]:
    """Indices of ``lengths`` (samples at ``sample_rate``) grouped into batches of similar length.

    An utterance longer than ``max_batch_seconds`` gets a batch of its own rather than being cut.
    """
    max_batch_samples = policy.max_batch_seconds * sample_rate
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current:
            longest = lengths[index]  # sorted: the newcomer is the longest
            full = len(current) >= policy.max_batch_size
            too_big = (len(current) + 1) * longest > max_batch_samples
            new_length = policy.equal_length_only and lengths[current[-1]] != longest
            if full or too_big or new_length:
                batches.append(current)
                current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def checked_waves(waves: Sequence[np.ndarray], min_samples: int) -> list[np.ndarray]:
    """The waveforms as contiguous float32 arrays, after checking shape, dtype, finiteness and length."""
    checked = []
    for index, wave in enumerate(waves):
        array = np.asarray(wave)
        if array.ndim != 1:
            raise WaveformError(index, f"expected a 1-D (mono) array, got shape {array.shape}")
        if not np.issubdtype(array.dtype, np.floating):
            raise WaveformError(index, f"expected floating-point samples in [-1, 1], got {array.dtype}")
        if array.size < min_samples:
            shorter = f"shorter than the encoder's minimum of {min_samples} samples"
            raise WaveformError(index, f"{array.size} samples, the encoder needs at least {min_samples}", shorter)
        if not np.all(np.isfinite(array)):
            raise WaveformError(index, "contains NaN or infinite samples")
        peak = float(np.max(np.abs(array)))
        if peak == 0:
            raise WaveformError(index, "digital silence (every sample is zero)")
        if peak > MAX_PEAK:
            integer_pcm = f"peak above {MAX_PEAK:g}: looks like integer PCM"
            raise WaveformError(index, f"peak {peak:g} looks like integer PCM; expected floats in [-1, 1]", integer_pcm)
        checked.append(np.ascontiguousarray(array, dtype=np.float32))
    return checked


def resample(wave: np.ndarray, source_rate: int, target_rate: int) -> np.ndarray:
    """``wave`` at ``target_rate``: polyphase FIR resampling (scipy ``resample_poly``, Kaiser window, beta 5).

    The rational factor is reduced by the greatest common divisor, so 44.1 kHz -> 16 kHz is up 160, down 441.
    """
    if source_rate == target_rate:
        return wave
    if source_rate <= 0:
        raise ValueError(f"sample rate must be positive, got {source_rate}")
    from scipy.signal import resample_poly  # on the first resampling: a run with no forward pass needs none

    common = gcd(source_rate, target_rate)
    resampled = resample_poly(wave, target_rate // common, source_rate // common)
    return np.asarray(resampled, dtype=np.float32)
