"""Channel responses against independent oracles.

Band limits: the analytic magnitude of a Butterworth band-pass after the bilinear transform with prewarping,
|H(f)|^2 = 1 / (1 + ((W^2 - W0^2) / (W B))^(2N)), W = 2 fs tan(pi f / fs), squared again for the forward-backward
run, against the attenuation of steady tones. Device responses: the declared table's value at each test tone.
Resampling chains: the ideal band-limited resampler (scipy's FFT ``resample``, exact for a periodic band-limited
signal) on multitone signals with whole periods.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import resample as fft_resample

from runner.operators import operator_from_spec, rng_for
from runner.operators.channels import DEVICE_RESPONSES

pytestmark = pytest.mark.runner

SR = 16000


def tone(frequency: float, seconds: float = 1.0, sr: int = SR) -> np.ndarray:
    return (0.3 * np.sin(2 * np.pi * frequency * np.arange(int(seconds * sr)) / sr)).astype(np.float32)


def gain_db(operator_spec: dict, frequency: float, sr: int = SR) -> float:
    """Steady-state gain of a tone through the operator, measured over the middle half (edges excluded)."""
    operator = operator_from_spec(operator_spec)
    wave = tone(frequency, sr=sr)
    out, out_sr, outcome = operator(wave, sr, rng_for(0, "tone", operator))
    assert outcome.status == "applied" and out_sr == sr, outcome.reason
    middle = slice(len(wave) // 4, 3 * len(wave) // 4)
    rms_in = np.sqrt(np.mean(wave[middle].astype(np.float64) ** 2))
    rms_out = np.sqrt(np.mean(out[middle].astype(np.float64) ** 2))
    return float(20 * np.log10(rms_out / rms_in))


def butterworth_bandpass_db(frequency: float, low: float, high: float, order: int, sr: int) -> float:
    """Analytic gain in dB of the zero-phase (forward-backward) digital Butterworth band-pass."""

    def warp(hz: float) -> float:
        return 2 * sr * np.tan(np.pi * hz / sr)

    omega, w1, w2 = warp(frequency), warp(low), warp(high)
    x = (omega**2 - w1 * w2) / (omega * (w2 - w1))
    return float(-20 * np.log10(1 + x ** (2 * order)))


@pytest.mark.parametrize(
    ("low", "high", "frequencies"),
    [
        (300.0, 3400.0, [100.0, 200.0, 300.0, 1000.0, 3400.0, 4000.0, 5000.0]),
        (50.0, 7000.0, [25.0, 50.0, 1000.0, 6000.0, 7000.0, 7500.0]),
    ],
    ids=["telephone", "wideband"],
)
def test_band_limit_attenuation_matches_the_butterworth_response(low: float, high: float, frequencies: list) -> None:
    from runner.operators.channels import half_power_design_band

    spec = {"name": "band_limit", "kwargs": {"low_hz": low, "high_hz": high, "order": 4}}
    design = half_power_design_band(SR, (low, high), 4)
    for frequency in frequencies:
        expected = butterworth_bandpass_db(frequency, *design, 4, SR)
        assert gain_db(spec, frequency) == pytest.approx(expected, abs=0.2 + 0.02 * abs(expected)), frequency
    # The declared edges are the -3 dB points of the zero-phase filter, analytically and as measured on tones.
    for edge in (low, high):
        assert butterworth_bandpass_db(edge, *design, 4, SR) == pytest.approx(-3.01, abs=0.01)
        assert gain_db(spec, edge) == pytest.approx(-3.01, abs=0.2)


def test_band_limit_above_nyquist_fails() -> None:
    operator = operator_from_spec({"name": "band_limit", "kwargs": {"low_hz": 50, "high_hz": 7000}})
    wave = tone(1000.0, sr=8000)
    out, _, outcome = operator(wave, 8000, rng_for(0, "u", operator))
    assert outcome.status == "failed" and "not below" in outcome.reason
    assert out is wave


@pytest.mark.parametrize("kind", ["microphone", "loudspeaker"])
def test_device_response_follows_its_declared_table(kind: str) -> None:
    for model, points in DEVICE_RESPONSES[kind].items():
        spec = {"name": kind, "kwargs": {"model": model}}
        for frequency, declared in points:
            if frequency < 150:  # 1025 taps at 16 kHz resolve the curve from about 150 Hz up
                continue
            # At the sampling rate's Nyquist edge a linear-phase FIR of odd length is free; stay below it.
            if frequency >= SR / 2:
                continue
            assert gain_db(spec, frequency) == pytest.approx(declared, abs=1.0), (model, frequency)
        assert operator_from_spec(spec).describe()["approximation"] is True


def test_device_response_is_aligned() -> None:
    rng = np.random.default_rng(1)
    wave = (0.1 * rng.standard_normal(SR)).astype(np.float32)
    operator = operator_from_spec({"name": "microphone", "kwargs": {"model": "headset"}})
    out, _, outcome = operator(wave, SR, rng_for(0, "u", operator))
    lags = np.arange(-40, 41)
    correlation = [np.dot(out[40:-40], np.roll(wave, lag)[40:-40]) for lag in lags]
    assert outcome.status == "applied" and int(lags[int(np.argmax(correlation))]) == 0


def multitone(frequencies: list[float], seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (0.1 * sum(np.sin(2 * np.pi * f * t + f / 1000) for f in frequencies)).astype(np.float32)


@pytest.mark.parametrize("resampler", ["soxr", "poly"])
def test_resample_chain_matches_the_ideal_resampler(resampler: str) -> None:
    # Whole periods in one second, all below 3.4 kHz: the ideal 8 kHz round trip returns the signal itself.
    inside = [220.0, 1000.0, 2500.0, 3300.0]
    wave = multitone([*inside, 5000.0, 6500.0])
    reference = fft_resample(fft_resample(wave.astype(np.float64), 8000), SR)
    operator = operator_from_spec({"name": "resample_chain", "kwargs": {"rate": 8000, "resampler": resampler}})
    out, sr, outcome = operator(wave, SR, rng_for(0, "u", operator))
    assert outcome.status == "applied" and sr == SR and len(out) == len(wave)
    middle = slice(SR // 10, -SR // 10)
    error = out[middle] - reference[middle]
    error_db = 10 * np.log10(np.sum(error**2) / np.sum(reference[middle] ** 2))
    assert error_db < -40.0
    # What lies above 4 kHz is gone (at least 40 dB down past the transition band).
    spectrum = np.abs(np.fft.rfft(out[: SR // 2 * 2])) / np.abs(np.fft.rfft(wave[: SR // 2 * 2])).max()
    assert np.max(spectrum[np.fft.rfftfreq(SR, 1 / SR) > 4600]) < 10 ** (-40 / 20)


@pytest.mark.parametrize("resampler", ["soxr", "poly"])
@pytest.mark.parametrize("ratio", [1.02, 1.1, 1.5])
def test_resample_chain_stops_tones_above_the_intermediate_nyquist(resampler: str, ratio: float) -> None:
    # A tone just above 4 kHz neither passes nor aliases back below it: the whole output (the tone, and its alias
    # at 8 kHz minus the tone) lies under the declared stop band (poly: 80 dB; soxr HQ: at least as far).
    from runner.operators.channels import POLY_STOP_BAND_DB

    wave = tone(4000.0 * ratio)
    operator = operator_from_spec({"name": "resample_chain", "kwargs": {"rate": 8000, "resampler": resampler}})
    out, _, outcome = operator(wave, SR, rng_for(0, "u", operator))
    assert outcome.status == "applied"
    middle = slice(SR // 10, -SR // 10)
    left_db = 10 * np.log10(np.sum(out[middle].astype(np.float64) ** 2) / np.sum(wave[middle].astype(np.float64) ** 2))
    assert left_db < -POLY_STOP_BAND_DB + 3.0, left_db
    if resampler == "poly":
        assert operator.describe()["stop_band_db"] == POLY_STOP_BAND_DB


def test_resample_chain_needs_a_lower_rate() -> None:
    operator = operator_from_spec({"name": "resample_chain", "kwargs": {"rate": 16000}})
    _, _, outcome = operator(tone(440.0), SR, rng_for(0, "u", operator))
    assert outcome.status == "failed" and "not below" in outcome.reason
