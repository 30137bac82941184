"""Channel responses: band limits, microphone and loudspeaker frequency responses, and resampling chains.

- ``band_limit``: a Butterworth band-pass (order ``order`` per edge, run forwards and backwards, so zero phase and
  a magnitude response of |H(f)|^2) whose declared edges are the -3 dB points of that zero-phase response (the
  Butterworth design edges are widened so; designed at the declared edges, they were -6 dB points and the -3 dB
  band of "300-3400 Hz" was 332-3168 Hz); ``low_hz=300, high_hz=3400`` is the telephone band, ``50-7000`` the
  wideband (G.722) one.
- ``microphone`` and ``loudspeaker``: a linear-phase FIR (``scipy.signal.firwin2``, 1025 taps, delay removed) that
  follows a response curve from ``DEVICE_RESPONSES``. The curves are APPROXIMATIONS in the style of published
  measurements of device classes (laptop and smartphone MEMS microphones, a headset boom microphone, smartphone,
  laptop and small Bluetooth loudspeakers): smooth shapes with the classes' low-frequency roll-off, presence
  peak and high-frequency drop, not the measurement of any one product. Between the listed points the curve is
  linear in dB over log frequency; outside them it holds the nearest point's value.
- ``resample_chain``: down to ``rate`` and back through the declared resampler (``soxr`` at its HQ setting, or
  ``poly``: scipy's polyphase ``resample_poly`` with a Kaiser-window anti-alias and anti-image FIR whose stop
  band starts at ``rate / 2`` and reaches ``POLY_STOP_BAND_DB``, its pass band ending at ``POLY_PASS_SHARE`` of
  it), so everything above ``rate / 2`` is lost. scipy's default filter has its -6 dB point at ``rate / 2``: a tone
  at 1.02 times it passed at -16 dB and aliased at -12 dB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from runner.operators.audio import fit_length
from runner.operators.base import Operator, Outcome, Result, package_version, register
from schemas import Error

FIR_TAPS = 1025
DESIGN_POINTS = 512
POLY_STOP_BAND_DB = 80.0  # the poly resampler's declared stop-band attenuation, from the lower rate's Nyquist up
POLY_PASS_SHARE = 0.9  # its pass band ends at this share of the lower rate's Nyquist

# (frequency in Hz, response in dB) per device class; approximations (see the module docstring).
DEVICE_RESPONSES: dict[str, dict[str, tuple[tuple[float, float], ...]]] = {
    "microphone": {
        "laptop": ((50, -18), (100, -10), (200, -4), (400, 0), (1000, 0), (3000, 2), (5000, 4), (7000, 0), (8000, -6)),
        "headset": ((50, -8), (100, -3), (200, 0), (4000, 0), (6000, 2), (8000, -3)),
        "smartphone": ((50, -20), (100, -12), (200, -5), (500, 0), (2000, 0), (4000, 3), (6000, 1), (8000, -4)),
    },
    "loudspeaker": {
        "smartphone": (
            (100, -30),
            (200, -20),
            (400, -8),
            (800, -2),
            (1000, 0),
            (3000, 2),
            (5000, 3),
            (7000, -2),
            (8000, -8),
        ),
        "laptop": ((100, -24), (200, -14), (400, -5), (700, 0), (4000, 0), (6000, -3), (8000, -10)),
        "bluetooth": ((60, -15), (100, -6), (200, 0), (5000, 0), (7000, -3), (8000, -6)),
    },
}


def curve_db(points: tuple[tuple[float, float], ...], frequencies: np.ndarray) -> np.ndarray:
    """The response curve at ``frequencies``: linear in dB over log frequency, held flat beyond the points."""
    table = np.asarray(points, dtype=np.float64)
    return np.interp(np.log(np.maximum(frequencies, 1e-3)), np.log(table[:, 0]), table[:, 1])


class TooShortError(Error, ValueError):
    """A wave too short for the zero-phase filter's edge padding; the message says how many samples it needs."""


def zero_phase_band_pass(wave: np.ndarray, sr: int, band: tuple[float, float], order: int) -> np.ndarray:
    """Butterworth band-pass of ``order`` run forwards and backwards (no delay, magnitude |H|^2), float32."""
    # on first use: a run whose embeddings are all cached imports no scipy.signal
    from scipy.signal import butter, sosfiltfilt

    sos = butter(order, band, btype="bandpass", fs=sr, output="sos")
    minimum = 3 * (2 * len(sos) + 1)  # sosfiltfilt's edge padding
    if len(wave) <= minimum:
        raise TooShortError(f"more than {minimum} samples at {sr} Hz")
    return sosfiltfilt(sos, wave.astype(np.float64)).astype(np.float32)


def half_power_design_band(sr: int, band: tuple[float, float], order: int) -> tuple[float, float]:
    """The Butterworth design edges whose forward-backward run is -3 dB at ``band``'s edges.

    After the bilinear transform (W = 2 sr tan(pi f / sr)) a band-pass of centre W0^2 = W1 W2 and width B has
    |H|^2 = 1 / (1 + x^(2 order)), x = (W^2 - W0^2) / (W B); run twice, the gain is -3 dB where
    x = (sqrt(2) - 1)^(1 / (2 order)) < 1. Keeping W0 and widening B by 1 / x puts those points at the band's
    edges."""
    warped = [2.0 * sr * np.tan(np.pi * f / sr) for f in band]
    width = (warped[1] - warped[0]) / (np.sqrt(2.0) - 1.0) ** (1.0 / (2 * order))
    low = (-width + np.sqrt(width**2 + 4.0 * warped[0] * warped[1])) / 2.0
    design = (low, low + width)
    return float(sr / np.pi * np.arctan(design[0] / (2 * sr))), float(sr / np.pi * np.arctan(design[1] / (2 * sr)))


def level_change_db(before: np.ndarray, after: np.ndarray) -> float:
    """Output energy over input energy in dB."""
    energy_in = float(np.dot(before.astype(np.float64), before.astype(np.float64)))
    energy_out = float(np.dot(after.astype(np.float64), after.astype(np.float64)))
    return float(10.0 * np.log10(energy_out / energy_in)) if energy_out > 0 else float("-inf")


@register
@dataclass(frozen=True)
class BandLimit(Operator):
    """A zero-phase Butterworth band-pass whose -3 dB points are ``low_hz`` and ``high_hz`` (default: the telephone
    band)."""

    name = "band_limit"
    low_hz: float = 300.0
    high_hz: float = 3400.0
    order: int = 4

    def check(self) -> None:
        if not 0.0 < self.low_hz < self.high_hz:
            raise ValueError(f"expected 0 < low_hz < high_hz, got {self.low_hz}, {self.high_hz}")
        if not 1 <= self.order <= 12:
            raise ValueError(f"order must be within [1, 12], got {self.order}")

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        if self.high_hz >= sr / 2:
            return wave, sr, Outcome.failed(f"band_limit: high_hz {self.high_hz:g} is not below {sr} Hz / 2")
        design = half_power_design_band(sr, (self.low_hz, self.high_hz), self.order)
        if design[1] >= sr / 2:
            return wave, sr, Outcome.failed(f"band_limit: the -3 dB edge {self.high_hz:g} Hz is too close to {sr} / 2")
        try:
            out = zero_phase_band_pass(wave, sr, design, self.order)
        except TooShortError as error:
            return wave, sr, Outcome.failed(f"band_limit needs {error}")
        reason = (
            f"Butterworth band-pass, -3 dB at {self.low_hz:g} and {self.high_hz:g} Hz (zero phase, order {self.order} "
            f"run twice; design edges {design[0]:.1f}-{design[1]:.1f} Hz)"
        )
        return (
            out,
            sr,
            Outcome.applied(
                reason,
                level_change_db=level_change_db(wave, out),
                edges="-3 dB",
                design_low_hz=design[0],
                design_high_hz=design[1],
            ),
        )


@dataclass(frozen=True)
class DeviceResponse(Operator):
    """A device's frequency response from ``DEVICE_RESPONSES[kind][model]`` as a linear-phase FIR."""

    kind: ClassVar[str]
    model: str = ""

    def check(self) -> None:
        models = DEVICE_RESPONSES[self.kind]
        if self.model not in models:
            raise ValueError(f"{self.kind} model must be one of {sorted(models)}, got {self.model!r}")

    def describe(self) -> dict[str, Any]:
        points = [list(point) for point in DEVICE_RESPONSES[self.kind][self.model]]
        return {**self.spec(), "response_db": points, "approximation": True, "fir_taps": FIR_TAPS}

    def taps(self, sr: int) -> np.ndarray:
        """The FIR (``FIR_TAPS`` long, linear phase) whose magnitude follows the curve up to ``sr / 2``."""
        grid = np.concatenate([[0.0], np.geomspace(10.0, sr / 2, DESIGN_POINTS)])
        gains = 10.0 ** (curve_db(DEVICE_RESPONSES[self.kind][self.model], grid) / 20.0)
        from scipy.signal import firwin2

        return firwin2(FIR_TAPS, grid, gains, fs=sr)

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        from scipy.signal import fftconvolve

        delay = (FIR_TAPS - 1) // 2
        out = fftconvolve(wave.astype(np.float64), self.taps(sr))[delay : delay + len(wave)].astype(np.float32)
        reason = f"{self.model} {self.kind} response (an approximation of the device class), linear-phase FIR"
        return out, sr, Outcome.applied(reason, level_change_db=level_change_db(wave, out), approximation=True)


@register
@dataclass(frozen=True)
class Microphone(DeviceResponse):
    """A microphone class's response (``laptop``, ``headset``, ``smartphone``): an approximation."""

    name = "microphone"
    kind = "microphone"
    model: Literal["laptop", "headset", "smartphone"] = "laptop"


@register
@dataclass(frozen=True)
class Loudspeaker(DeviceResponse):
    """A loudspeaker class's response (``smartphone``, ``laptop``, ``bluetooth``): an approximation."""

    name = "loudspeaker"
    kind = "loudspeaker"
    model: Literal["smartphone", "laptop", "bluetooth"] = "smartphone"


def poly_resample(wave: np.ndarray, from_sr: int, to_sr: int) -> np.ndarray:
    """Polyphase resampling whose FIR (zero phase) passes up to ``POLY_PASS_SHARE`` of the lower rate's Nyquist
    and attenuates from that Nyquist on by ``POLY_STOP_BAND_DB`` (Kaiser window, length from ``kaiserord``)."""
    from math import gcd

    from scipy.signal import firwin, kaiserord, resample_poly

    common = gcd(from_sr, to_sr)
    up, down = to_sr // common, from_sr // common
    filter_rate = from_sr * up  # the FIR runs after upsampling
    stop = min(from_sr, to_sr) / 2.0
    passed = POLY_PASS_SHARE * stop
    taps, beta = kaiserord(POLY_STOP_BAND_DB, (stop - passed) / (filter_rate / 2.0))
    window = firwin(taps | 1, (passed + stop) / 2.0, window=("kaiser", beta), fs=filter_rate)
    return resample_poly(wave.astype(np.float64), up, down, window=window).astype(np.float32)


@register
@dataclass(frozen=True)
class ResampleChain(Operator):
    """Down to ``rate`` Hz and back to the input's rate through ``resampler`` (``soxr`` HQ or ``poly``: scipy's
    polyphase resampler with the declared anti-alias filter, ``poly_resample``)."""

    name = "resample_chain"
    rate: int = 8000
    resampler: Literal["soxr", "poly"] = "soxr"

    def check(self) -> None:
        if not 1000 <= self.rate <= 192000:
            raise ValueError(f"rate must be within [1000, 192000] Hz, got {self.rate}")

    def describe(self) -> dict[str, Any]:
        library = "soxr" if self.resampler == "soxr" else "scipy"
        declared = {"stop_band_db": POLY_STOP_BAND_DB, "pass_share": POLY_PASS_SHARE} if library == "scipy" else {}
        return {**self.spec(), library: package_version(library), **declared}

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        if self.rate >= sr:
            return wave, sr, Outcome.failed(f"resample_chain: {self.rate} Hz is not below the utterance's {sr} Hz")
        if self.resampler == "soxr":
            try:
                import soxr
            except ImportError:
                return wave, sr, Outcome.failed("soxr is not installed: no soxr resampling chain")
            low = soxr.resample(wave, sr, self.rate, quality="HQ")
            back = soxr.resample(low, self.rate, sr, quality="HQ")
        else:
            back = poly_resample(poly_resample(wave, sr, self.rate), self.rate, sr)
        out = fit_length(np.asarray(back, dtype=np.float32), len(wave))
        reason = f"resampled to {self.rate} Hz and back to {sr} Hz ({self.resampler})"
        return out, sr, Outcome.applied(reason, rate=self.rate, level_change_db=level_change_db(wave, out))
