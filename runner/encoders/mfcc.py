"""MFCC-statistics baseline: the mean and standard deviation of each cepstral coefficient over an utterance.

No weights: the record's ``checkpoint_blake3`` is the digest of the configuration below. Front end:
pre-emphasis, frames of 25 ms every 10 ms, periodic Hamming window, power spectrum, HTK-scale triangular mel
filters (unnormalised), natural log with a 1e-6 floor, orthonormal DCT-II. c0 (log energy) is dropped by
default so that the vector does not follow the recording level. Each utterance is computed on its own:
stacking all frames of a batch into one FFT and one matrix product was slower on CPU (0.63x of a plain loop
over 24 clips of 1.5-4 s, ``benchmarks/bench_encoders.py``), as the stacked arrays leave the cache.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from scipy.fft import dct, rfft

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import CheckpointRecord, EncoderConfigError, resolve_config

LOG_FLOOR = 1e-6


@dataclass(frozen=True)
class MfccConfig:
    """Front-end parameters of the MFCC-statistics encoder (all recorded)."""

    sample_rate: int = 16000
    frame_length: int = 400
    frame_shift: int = 160
    n_fft: int = 512
    n_mels: int = 40
    n_mfcc: int = 20
    f_min: float = 20.0
    f_max: float = 7600.0
    preemphasis: float = 0.97
    include_c0: bool = False

    def __post_init__(self) -> None:
        if self.n_fft < self.frame_length:
            raise ValueError(f"n_fft {self.n_fft} is shorter than the frame length {self.frame_length}")
        if not 0 <= self.f_min < self.f_max <= self.sample_rate / 2:
            raise ValueError(f"mel range {self.f_min}-{self.f_max} Hz does not fit {self.sample_rate} Hz")
        if not 0 < self.n_mfcc <= self.n_mels:
            raise ValueError(f"n_mfcc must be in 1..n_mels, got {self.n_mfcc}")


def hz_to_mel(hz: np.ndarray | float) -> np.ndarray:
    """HTK mel scale: 2595 log10(1 + f / 700)."""
    return np.asarray(2595.0 * np.log10(1.0 + np.asarray(hz) / 700.0))


def mel_to_hz(mel: np.ndarray) -> np.ndarray:
    return np.asarray(700.0 * (10.0 ** (np.asarray(mel) / 2595.0) - 1.0))


def mel_filterbank(config: MfccConfig) -> np.ndarray:
    """Triangular filters of shape (n_fft // 2 + 1, n_mels), equally spaced on the HTK mel scale."""
    fft_hz = np.linspace(0.0, config.sample_rate / 2, config.n_fft // 2 + 1)
    edges = mel_to_hz(np.linspace(hz_to_mel(config.f_min), hz_to_mel(config.f_max), config.n_mels + 2))
    left, centre, right = edges[:-2], edges[1:-1], edges[2:]
    rising = (fft_hz[:, None] - left) / (centre - left)
    falling = (right - fft_hz[:, None]) / (right - centre)
    return np.maximum(0.0, np.minimum(rising, falling))


def frames_of(wave: np.ndarray, config: MfccConfig) -> np.ndarray:
    """Pre-emphasised, windowed frames (n_frames, frame_length); the tail shorter than a frame is dropped."""
    from scipy.signal import get_window  # on first use: the operators import this module, a cached run needs none

    emphasised = np.concatenate([wave[:1], wave[1:] - config.preemphasis * wave[:-1]]).astype(np.float64)
    framed = np.lib.stride_tricks.sliding_window_view(emphasised, config.frame_length)[:: config.frame_shift]
    return framed * get_window("hamming", config.frame_length, fftbins=True)


def cepstra(frames: np.ndarray, filterbank: np.ndarray, config: MfccConfig) -> np.ndarray:
    """MFCCs c0..c(n_mfcc-1) of windowed frames, shape (n_frames, n_mfcc)."""
    power = np.abs(rfft(frames, n=config.n_fft, axis=-1)) ** 2
    log_mel = np.log(power @ filterbank + LOG_FLOOR)
    return np.asarray(dct(log_mel, type=2, norm="ortho", axis=-1)[:, : config.n_mfcc])


class MfccStatsEncoder(Encoder):
    """Mean and standard deviation of MFCCs (c1.. by default): a weight-free baseline."""

    kind: ClassVar[str] = "mfcc"

    def __init__(self, record: CheckpointRecord, config: MfccConfig, policy: BatchPolicy) -> None:
        super().__init__(record, config.sample_rate, policy, min_samples=config.frame_length)
        self.config = config
        self.filterbank = mel_filterbank(config)

    @classmethod
    def load(
        cls,
        label: str,
        checkpoint: Path | None,
        device: str,
        dtype: Dtype,
        policy: BatchPolicy,
        **config_options: Any,
    ) -> MfccStatsEncoder:
        """``config_options`` are fields of ``MfccConfig``; there is no checkpoint to give."""
        if checkpoint is not None:
            raise EncoderConfigError(label, f"the mfcc encoder has no weights, but checkpoint {checkpoint} was given")
        try:
            config = MfccConfig(**config_options)
        except (TypeError, ValueError) as error:
            raise EncoderConfigError(label, f"bad mfcc option: {error}") from error
        resolved = resolve_config(asdict(config))
        record = CheckpointRecord(
            label=label,
            kind=cls.kind,
            class_name=f"{cls.__module__}.{cls.__qualname__}",
            config=asdict(config),
            files=resolved.files,
            checkpoint_blake3=resolved.checkpoint_blake3,
            name=None,
            runtime={
                "device": "cpu",
                "requested_device": device,  # numpy has no accelerator path: the run's device does not apply
                "dtype": "fp32",  # float64 numpy, whatever the run asks for
                **({"requested_dtype": dtype} if dtype != "fp32" else {}),
                "numpy": np.__version__,
                "batching": policy.as_dict(),
            },
        )
        return cls(record, config, policy)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        return np.stack([self._statistics(w) for w in waves])

    def _statistics(self, wave: np.ndarray) -> np.ndarray:
        """Mean and (population) standard deviation of the kept coefficients over the utterance's frames."""
        coefficients = cepstra(frames_of(wave, self.config), self.filterbank, self.config)
        if not self.config.include_c0:
            coefficients = coefficients[:, 1:]
        return np.concatenate([coefficients.mean(axis=0), coefficients.std(axis=0)])
