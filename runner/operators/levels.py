"""Gain to a declared level in dBFS, with clipping at digital full scale counted.

The utterance is scaled so that its peak (``reference = "peak"``) or its RMS (``"rms"``, whole utterance) sits at
``dbfs`` (0 dBFS = full scale, a sample of magnitude 1). With ``clip`` (the default), samples beyond full scale
are hard-clipped to +-1, as a converter or a 16-bit file would do; the clipped fraction is in the outcome.
A hot level (``reference = "rms", dbfs = -6``, say) is how clipping distortion is declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from runner.operators.base import Operator, Outcome, Result, register


@register
@dataclass(frozen=True)
class Gain(Operator):
    """Scale the ``reference`` level (peak or RMS) to ``dbfs``; clip at full scale when ``clip``."""

    name = "gain"
    dbfs: float = -6.0
    reference: Literal["peak", "rms"] = "peak"
    clip: bool = True

    def check(self) -> None:
        if not -60.0 <= self.dbfs <= 20.0:
            raise ValueError(f"dbfs must be within [-60, 20], got {self.dbfs}")

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        signal = wave.astype(np.float64)
        level = float(np.abs(signal).max()) if self.reference == "peak" else float(np.sqrt(np.mean(signal**2)))
        if level == 0.0:
            return wave, sr, Outcome.failed("input audio is silent: no level to scale")
        gain_db = self.dbfs - 20.0 * np.log10(level)
        scaled = signal * 10.0 ** (gain_db / 20.0)
        over = np.abs(scaled) > 1.0
        clipped = int(np.count_nonzero(over)) if self.clip else 0
        out = np.clip(scaled, -1.0, 1.0) if self.clip else scaled
        reason = f"{self.reference} level set to {self.dbfs:g} dBFS" + (
            f", {clipped} samples clipped" if clipped else ""
        )
        return (
            out.astype(np.float32),
            sr,
            Outcome.applied(
                reason,
                gain_db=float(gain_db),
                clip_fraction=clipped / len(wave),
                peak_dbfs_out=float(20.0 * np.log10(np.abs(out).max())),
            ),
        )
