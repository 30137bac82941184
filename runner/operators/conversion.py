"""Voice conversion PROXY: WORLD vocoder analysis and resynthesis with the pitch and the formants moved.

This is signal processing, not a spoofing system: no model of the target speaker is involved, and every outcome
and description says ``proxy``. It gives the embedded default a conversion-like condition (E11's kind) without
any VC or TTS model. Analysis is ``pyworld`` (DIO + StoneMask F0, CheapTrick spectral envelope, D4C
aperiodicity, 5 ms frames); the F0 is multiplied by ``pitch_ratio`` and the envelope's frequency axis is scaled by
``formant_ratio`` (an envelope feature at f Hz moves to ``formant_ratio * f`` Hz); the result is synthesised,
cut or zero-padded to the input length and brought to the input's RMS level.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from runner.operators.base import Operator, Outcome, Result, package_version, register

FRAME_PERIOD_MS = 5.0


def warp_envelope(envelope: np.ndarray, ratio: float) -> np.ndarray:
    """Scale the frequency axis of a (frames, bins) spectral envelope by ``ratio`` (linear interpolation).

    Bin k of the output takes the input's value at bin ``k / ratio``; past the last input bin the last value holds.
    """
    bins = envelope.shape[1]
    source = np.arange(bins) / ratio
    low = np.minimum(np.floor(source).astype(int), bins - 1)
    high = np.minimum(low + 1, bins - 1)
    weight = np.clip(source - low, 0.0, 1.0)
    return np.ascontiguousarray(envelope[:, low] * (1.0 - weight) + envelope[:, high] * weight)


@register
@dataclass(frozen=True)
class WorldConversion(Operator):
    """Pitch x ``pitch_ratio`` and formants x ``formant_ratio`` through WORLD: a conversion proxy."""

    name = "world_conversion"
    pitch_ratio: float = 1.2
    formant_ratio: float = 1.1
    f0_floor: float = 71.0
    f0_ceil: float = 800.0

    def check(self) -> None:
        if not 0.5 <= self.pitch_ratio <= 2.0:
            raise ValueError(f"pitch_ratio must be within [0.5, 2], got {self.pitch_ratio}")
        if not 0.7 <= self.formant_ratio <= 1.4:
            raise ValueError(f"formant_ratio must be within [0.7, 1.4], got {self.formant_ratio}")
        if self.pitch_ratio == 1.0 and self.formant_ratio == 1.0:
            raise ValueError("pitch_ratio and formant_ratio are both 1: nothing would be converted")
        if not 0.0 < self.f0_floor < self.f0_ceil:
            raise ValueError(f"expected 0 < f0_floor < f0_ceil, got {self.f0_floor}, {self.f0_ceil}")

    def describe(self) -> dict[str, Any]:
        return {**self.spec(), "proxy": True, "vocoder": "WORLD", "pyworld": package_version("pyworld")}

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        with warnings.catch_warnings():  # pyworld imports pkg_resources, which warns once per process
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
            try:
                import pyworld
            except ImportError:
                return wave, sr, Outcome.failed("pyworld is not installed (extra `conversion`): no conversion proxy")

        signal = wave.astype(np.float64)
        f0, times = pyworld.dio(signal, sr, f0_floor=self.f0_floor, f0_ceil=self.f0_ceil, frame_period=FRAME_PERIOD_MS)
        f0 = pyworld.stonemask(signal, f0, times, sr)
        voiced = f0 > 0
        if not voiced.any():
            return wave, sr, Outcome.failed("WORLD conversion proxy: no voiced frame found, nothing to convert")
        envelope = pyworld.cheaptrick(signal, f0, times, sr, f0_floor=self.f0_floor)
        aperiodicity = pyworld.d4c(signal, f0, times, sr)
        converted = pyworld.synthesize(
            f0 * self.pitch_ratio, warp_envelope(envelope, self.formant_ratio), aperiodicity, sr, FRAME_PERIOD_MS
        )
        out = np.zeros(len(wave))
        out[: min(len(wave), len(converted))] = converted[: len(wave)]
        level_in, level_out = np.sqrt(np.mean(signal**2)), np.sqrt(np.mean(out**2))
        if level_out == 0.0:
            return wave, sr, Outcome.failed("WORLD conversion proxy: synthesis returned silence")
        out *= level_in / level_out
        reason = (
            f"WORLD conversion proxy (not a spoofing system): F0 x{self.pitch_ratio:g}, "
            f"formants x{self.formant_ratio:g}"
        )
        return (
            out.astype(np.float32),
            sr,
            Outcome.applied(
                reason,
                proxy=True,
                voiced_fraction=float(voiced.mean()),
                f0_median_in=float(np.median(f0[voiced])),
                f0_median_out=float(np.median(f0[voiced]) * self.pitch_ratio),
            ),
        )
