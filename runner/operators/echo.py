"""Echo: delayed, attenuated copies of the utterance added to it (a multi-tap feed-forward comb).

``out[t] = x[t] + sum_{k=1..taps} g^k x[t - k D]`` with ``D = delay_ms`` (rounded to samples) and
``g = 10^(decay_db / 20)``: each echo is ``decay_db`` below the one before. The output keeps the input's length
(echoes past the end are cut) and is not renormalised; a later 16-bit codec counts any clipping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runner.operators.base import Operator, Outcome, Result, register


@register
@dataclass(frozen=True)
class Echo(Operator):
    """``taps`` echoes every ``delay_ms``, each ``decay_db`` below the previous one."""

    name = "echo"
    delay_ms: float = 150.0
    decay_db: float = -6.0
    taps: int = 1

    def check(self) -> None:
        if not 1.0 <= self.delay_ms <= 2000.0:
            raise ValueError(f"delay_ms must be within [1, 2000], got {self.delay_ms}")
        if not -60.0 <= self.decay_db < 0.0:
            raise ValueError(f"decay_db must be within [-60, 0), got {self.decay_db}")
        if not 1 <= self.taps <= 10:
            raise ValueError(f"taps must be within [1, 10], got {self.taps}")

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        delay = round(self.delay_ms * sr / 1000.0)
        if delay >= len(wave):
            return wave, sr, Outcome.failed(f"echo delay {delay} samples is not shorter than the utterance")
        gain = 10.0 ** (self.decay_db / 20.0)
        out = wave.astype(np.float64)
        for tap in range(1, self.taps + 1):
            if tap * delay >= len(wave):
                break
            out[tap * delay :] += gain**tap * wave[: len(wave) - tap * delay]
        reason = f"{self.taps} echo(es) every {self.delay_ms:g} ms, {self.decay_db:g} dB each"
        return out.astype(np.float32), sr, Outcome.applied(reason, delay_samples=delay, peak=float(np.abs(out).max()))
