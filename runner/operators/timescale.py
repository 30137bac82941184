"""Time-scale changes: ``speed`` (resampling: duration and pitch both change) and ``tempo`` (pitch kept).

``speed`` by factor f plays the utterance f times faster: polyphase resampling by the rational approximation
p/q of f (denominator at most 1000), read at the original rate, so durations shrink and frequencies grow by f.
``tempo`` runs FFmpeg's ``atempo`` filter (WSOLA-style overlap-add) through a PyAV filter graph in memory.
Both record the realised duration ratio (output / input) in the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import av
import numpy as np

from runner.operators.audio import ffmpeg_versions, frame_to_float
from runner.operators.base import Operator, Outcome, Result, register

MAX_DENOMINATOR = 1000


@register
@dataclass(frozen=True)
class Speed(Operator):
    """Play ``factor`` times faster by resampling (``factor`` > 1 shortens and raises pitch)."""

    name = "speed"
    factor: float = 1.1

    def check(self) -> None:
        if not 0.25 <= self.factor <= 4.0 or self.factor == 1.0:
            raise ValueError(f"factor must be within [0.25, 4] and not 1, got {self.factor}")

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        # on first use: a run whose embeddings are all cached imports no scipy.signal
        from scipy.signal import resample_poly

        ratio = Fraction(self.factor).limit_denominator(MAX_DENOMINATOR)
        out = resample_poly(wave, ratio.denominator, ratio.numerator).astype(np.float32)
        realised = len(out) / len(wave)
        reason = f"speed x{self.factor:g} by resampling {ratio.denominator}/{ratio.numerator} (pitch changes)"
        return out, sr, Outcome.applied(reason, duration_ratio=realised)


@register
@dataclass(frozen=True)
class Tempo(Operator):
    """Play ``factor`` times faster with the pitch kept, by FFmpeg's ``atempo`` filter."""

    name = "tempo"
    factor: float = 1.1

    def check(self) -> None:
        if not 0.5 <= self.factor <= 2.0 or self.factor == 1.0:
            raise ValueError(f"factor must be within [0.5, 2] and not 1, got {self.factor}")

    def describe(self) -> dict[str, Any]:
        return {**self.spec(), "filter": "atempo", **ffmpeg_versions()}

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        try:
            out = atempo(wave, sr, self.factor)
        except av.error.FFmpegError as error:
            return wave, sr, Outcome.failed(f"atempo filter: {type(error).__name__}: {error}")
        if len(out) == 0:
            return wave, sr, Outcome.failed("atempo filter returned no samples")
        realised = len(out) / len(wave)
        return (
            out,
            sr,
            Outcome.applied(f"tempo x{self.factor:g} by FFmpeg atempo (pitch kept)", duration_ratio=realised),
        )


def atempo(wave: np.ndarray, sr: int, factor: float) -> np.ndarray:
    """Run ``wave`` through an in-memory abuffer -> atempo -> abuffersink graph and collect all its output."""
    graph = av.filter.Graph()
    source = graph.add_abuffer(format="flt", sample_rate=sr, layout="mono", time_base=Fraction(1, sr))
    stretch = graph.add("atempo", f"{factor!r}")
    sink = graph.add("abuffersink")
    source.link_to(stretch)
    stretch.link_to(sink)
    graph.configure()
    frame = av.AudioFrame.from_ndarray(wave[np.newaxis, :], format="flt", layout="mono")
    frame.sample_rate = sr
    frame.pts = 0
    frame.time_base = Fraction(1, sr)
    graph.push(frame)
    graph.push(None)
    chunks = []
    while True:
        try:
            chunks.append(frame_to_float(cast(av.AudioFrame, graph.pull())))
        except (av.error.EOFError, av.error.BlockingIOError):
            break
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
