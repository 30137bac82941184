"""The WORLD conversion proxy: pitch moved by the declared ratio (measured by autocorrelation, independently of
WORLD's own F0 tracker), the envelope warp on a hand-built case, determinism, length, and the proxy label."""

from __future__ import annotations

import numpy as np
import pytest

from runner.operators import OperatorSpecError, operator_from_spec
from runner.operators.conversion import warp_envelope

SR = 16000


def voiced(f0: float, seconds: float = 1.5) -> np.ndarray:
    """A sustained vowel-like sound: 20 harmonics of ``f0`` with a 1/k roll-off and a smooth onset and offset."""
    t = np.arange(int(seconds * SR)) / SR
    wave = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 21))
    envelope = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.05)
    return (0.1 * wave * envelope).astype(np.float32)


def autocorrelation_f0(wave: np.ndarray, low: float = 70.0, high: float = 500.0) -> float:
    """F0 of the middle half of ``wave`` from the highest autocorrelation peak between the given lags."""
    middle = wave[len(wave) // 4 : 3 * len(wave) // 4].astype(np.float64)
    middle -= middle.mean()
    spectrum = np.fft.rfft(middle, 2 * len(middle))
    correlation = np.fft.irfft(np.abs(spectrum) ** 2)[: len(middle)]
    lags = np.arange(int(SR / high), int(SR / low))
    return SR / lags[np.argmax(correlation[lags])]


CONVERT = {"name": "world_conversion", "kwargs": {"pitch_ratio": 1.25, "formant_ratio": 1.1}}


def test_pitch_moves_by_the_declared_ratio() -> None:
    source = voiced(140.0)
    assert autocorrelation_f0(source) == pytest.approx(140.0, rel=0.01)
    out, sr, outcome = operator_from_spec(CONVERT)(source, SR, np.random.default_rng(0))
    assert outcome.status == "applied" and sr == SR and len(out) == len(source)
    assert autocorrelation_f0(out) == pytest.approx(175.0, rel=0.03)
    assert outcome.details["proxy"] is True and "proxy" in outcome.reason and "not a spoofing system" in outcome.reason
    assert np.sqrt(np.mean(out.astype(float) ** 2)) == pytest.approx(np.sqrt(np.mean(source.astype(float) ** 2)))


def test_envelope_warp_moves_a_peak_by_the_ratio() -> None:
    envelope = np.ones((2, 41))
    envelope[:, 10] = 5.0  # a formant at bin 10
    warped = warp_envelope(envelope, 1.5)
    assert np.argmax(warped[0]) == 15 and warped[0, 15] == pytest.approx(5.0)
    assert warped[0, 40] == pytest.approx(1.0)  # beyond the source's last bin the last value holds
    assert np.array_equal(warp_envelope(envelope, 1.0), envelope)


def test_deterministic_and_described_as_a_proxy() -> None:
    operator = operator_from_spec(CONVERT)
    first = operator(voiced(120.0), SR, np.random.default_rng(1))[0]
    second = operator(voiced(120.0), SR, np.random.default_rng(2))[0]
    assert np.array_equal(first, second)
    assert operator.describe()["proxy"] is True


def test_unvoiced_input_fails_and_identity_ratios_are_refused() -> None:
    silence = np.zeros(SR, np.float32)
    _, _, outcome = operator_from_spec(CONVERT)(silence, SR, np.random.default_rng(0))
    assert outcome.status == "failed" and "no voiced frame" in outcome.reason
    with pytest.raises(OperatorSpecError, match="nothing would be converted"):
        operator_from_spec({"name": "world_conversion", "kwargs": {"pitch_ratio": 1.0, "formant_ratio": 1.0}})
