"""Echo and gain against independent oracles: the echo's delay and level found back by autocorrelation of white
noise put through it; peak, RMS and clipped fraction computed here from the declared dBFS."""

from __future__ import annotations

import numpy as np
import pytest

from runner.operators import operator_from_spec, rng_for

pytestmark = pytest.mark.runner

SR = 16000


def white(seconds: float, seed: int = 0) -> np.ndarray:
    return (0.1 * np.random.default_rng(seed).standard_normal(int(seconds * SR))).astype(np.float32)


@pytest.mark.parametrize(("delay_ms", "decay_db"), [(50.0, -3.0), (137.5, -6.0), (400.0, -10.0)])
def test_echo_delay_and_level_found_by_autocorrelation(delay_ms: float, decay_db: float) -> None:
    operator = operator_from_spec({"name": "echo", "kwargs": {"delay_ms": delay_ms, "decay_db": decay_db}})
    wave = white(3.0)
    out, _, outcome = operator(wave, SR, rng_for(0, "u", operator))
    assert outcome.status == "applied" and len(out) == len(wave)
    signal = out.astype(np.float64) - out.mean()
    spectrum = np.fft.rfft(signal, n=2 * len(signal))
    autocorrelation = np.fft.irfft(np.abs(spectrum) ** 2)[: len(signal)]
    lag = int(np.argmax(autocorrelation[10:])) + 10
    assert lag == round(delay_ms * SR / 1000) == outcome.details["delay_samples"]
    # One echo of gain g on white noise: normalised autocorrelation g / (1 + g^2) at the delay.
    g = 10 ** (decay_db / 20)
    unbiased = autocorrelation[lag] / (len(signal) - lag) / (autocorrelation[0] / len(signal))
    assert unbiased == pytest.approx(g / (1 + g**2), abs=0.03)


def test_echo_taps_decay_geometrically() -> None:
    operator = operator_from_spec({"name": "echo", "kwargs": {"delay_ms": 10.0, "decay_db": -6.0, "taps": 3}})
    wave = np.zeros(SR // 10, dtype=np.float32)
    wave[0] = 1.0
    out, _, _ = operator(wave, SR, rng_for(0, "u", operator))
    g = 10 ** (-6 / 20)
    assert np.flatnonzero(out).tolist() == [0, 160, 320, 480]
    assert out[[0, 160, 320, 480]] == pytest.approx([1.0, g, g**2, g**3], rel=1e-6)


def test_echo_longer_than_the_utterance_fails() -> None:
    operator = operator_from_spec({"name": "echo", "kwargs": {"delay_ms": 500.0}})
    _, _, outcome = operator(white(0.2), SR, rng_for(0, "u", operator))
    assert outcome.status == "failed" and "not shorter" in outcome.reason


@pytest.mark.parametrize("dbfs", [-20.0, -6.0, -1.0])
def test_peak_gain_lands_on_the_declared_dbfs(dbfs: float) -> None:
    operator = operator_from_spec({"name": "gain", "kwargs": {"dbfs": dbfs}})
    out, _, outcome = operator(white(1.0), SR, rng_for(0, "u", operator))
    assert 20 * np.log10(np.abs(out.astype(np.float64)).max()) == pytest.approx(dbfs, abs=1e-4)
    assert outcome.details["clip_fraction"] == 0.0


def test_hot_rms_level_clips_the_counted_fraction() -> None:
    wave = white(1.0, seed=3)
    operator = operator_from_spec({"name": "gain", "kwargs": {"dbfs": -6.0, "reference": "rms"}})
    out, _, outcome = operator(wave, SR, rng_for(0, "u", operator))
    # Gaussian samples at RMS -6 dBFS (sigma 0.501): |x| > 1 about 4.6 % of the time (two-sided 1.996 sigma).
    scaled = wave.astype(np.float64) * 10 ** (-6 / 20) / np.sqrt(np.mean(wave.astype(np.float64) ** 2))
    expected = np.mean(np.abs(scaled) > 1.0)
    assert outcome.details["clip_fraction"] == pytest.approx(expected, abs=1e-9)
    assert 0.035 < expected < 0.058
    assert np.abs(out).max() == 1.0
    assert np.mean(np.abs(out) == 1.0) == pytest.approx(expected, abs=1e-9)


def test_unclipped_gain_keeps_samples_beyond_full_scale() -> None:
    operator = operator_from_spec({"name": "gain", "kwargs": {"dbfs": 6.0, "clip": False}})
    out, _, outcome = operator(white(0.5), SR, rng_for(0, "u", operator))
    assert np.abs(out).max() == pytest.approx(10 ** (6 / 20), rel=1e-5)
    assert outcome.details["clip_fraction"] == 0.0


def test_gain_of_silence_fails() -> None:
    operator = operator_from_spec({"name": "gain", "kwargs": {"dbfs": -6.0}})
    _, _, outcome = operator(np.zeros(100, dtype=np.float32), SR, rng_for(0, "u", operator))
    assert outcome.status == "failed" and "silent" in outcome.reason
