"""Reverberation: rooms simulated by the image-source method (pyroomacoustics), and measured impulse responses.

Both convolve the utterance with a room impulse response (RIR), cut the result so that the direct path lands at
lag 0 (no time shift against the clean audio), keep the input's length and bring the output to the input's RMS
level. The outcome records the realised reverberation time and direct-to-reverberant ratio of the RIR used:

- ``rt60_s_realised``: the Schroeder backward-integration T30 (pyroomacoustics' ``measure_rt60``: the energy decay
  curve's least-squares slope from -5 to -35 dB, extrapolated to 60 dB) measured on the RIR itself. A simulated
  room is solved until this figure is within ``rt60_tolerance`` of its drawn target ``rt60_s_target`` (see
  ``RoomReverb``): Sabine's formula alone, which sets the wall absorption, missed the T30 by -18 % to +44 % over
  100 default rooms with targets 0.15-0.6 s (faster than the target below about 0.25 s, where the absorption is
  high and Eyring's decay applies; slower above, where the image-source shoebox's decay is not diffuse).
- ``drr_db``: energy from the direct path's arrival to 2.5 ms after it, over the energy after that (what the
  output holds: the part of the RIR before the direct path is cut off with the delay).

The simulated room uses the image-source method only (no ray tracing, no randomised images), so pyroomacoustics
draws nothing itself: every random figure (room size, target RT60, microphone and source positions) comes from
the generator passed in.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from provenance import file_digest
from runner.operators.base import Operator, Outcome, Result, package_version, register
from runner.operators.sources import MissingMaterialError, decoded_audio, read_listing
from schemas import count

DIRECT_WINDOW_S = 0.0025
POSITION_DRAWS = 100
MANIFEST_COLUMNS = ("path", "blake3")


@dataclass(frozen=True)
class RoomFigures:
    """What one impulse response realised: its RT60 (Schroeder, T30) and direct-to-reverberant ratio."""

    rt60_s: float
    drr_db: float


def rir_figures(rir: np.ndarray, direct: int, sr: int) -> RoomFigures:
    """RT60 by pyroomacoustics' Schroeder integration (T30 extrapolated) and the DRR from sample ``direct`` on."""
    from pyroomacoustics.experimental import measure_rt60

    energy = rir.astype(np.float64) ** 2
    half = round(DIRECT_WINDOW_S * sr)
    direct_energy = float(energy[direct : direct + half + 1].sum())
    late_energy = float(energy[direct + half + 1 :].sum())
    drr = 10.0 * np.log10(direct_energy / late_energy) if late_energy > 0 else float("inf")
    return RoomFigures(float(measure_rt60(rir, fs=sr, decay_db=30)), float(drr))


def reverberate(wave: np.ndarray, rir: np.ndarray, direct: int) -> np.ndarray:
    """``wave`` convolved with ``rir``, the direct path moved to lag 0, the input's length and RMS level."""
    # on first use: a run whose embeddings are all cached imports no scipy.signal
    from scipy.signal import fftconvolve

    wet = fftconvolve(wave.astype(np.float64), rir.astype(np.float64))[direct : direct + len(wave)]
    level_in, level_out = np.sqrt(np.mean(wave.astype(np.float64) ** 2)), np.sqrt(np.mean(wet**2))
    return (wet * (level_in / level_out)).astype(np.float32)


@register
@dataclass(frozen=True)
class RoomReverb(Operator):
    """A shoebox room by the image-source method whose RIR's T30 is within ``rt60_tolerance`` of a drawn target.

    Per utterance: length, width and height uniform in their ranges; the target RT60 uniform in
    ``[rt60_min, rt60_max]``; the microphone uniform in the room at least ``wall_margin`` m from every wall; the
    source at a distance uniform in ``[distance_min, distance_max]`` in a uniform direction, redrawn (up to 100
    times) until it too is ``wall_margin`` from the walls. The wall absorption (one coefficient) and the image
    order come from Sabine's formula (``pyroomacoustics.inverse_sabine``) for a Sabine RT60 that starts at the
    target and is re-solved, the room's size and positions kept, until the RIR's measured T30 is within
    ``rt60_tolerance`` (relative) of the target: after the first attempt the Sabine RT60 is scaled by target over
    T30, after that a secant step on log T30 against log Sabine RT60. Every realisation that is applied meets
    the tolerance; ``rt60_attempts`` counts the RIRs computed, and a room that does not get there in
    ``max_attempts`` (or needs an absorption above 1) fails the utterance, counted, with its figures.
    """

    name = "room_reverb"
    rt60_min: float = 0.3
    rt60_max: float = 0.6
    length_min: float = 4.0
    length_max: float = 7.0
    width_min: float = 3.0
    width_max: float = 5.0
    height_min: float = 2.5
    height_max: float = 3.2
    distance_min: float = 1.0
    distance_max: float = 2.5
    wall_margin: float = 0.5
    rt60_tolerance: float = 0.05
    max_attempts: int = 5

    def check(self) -> None:
        if not 0.1 <= self.rt60_min <= self.rt60_max <= 1.5:
            raise ValueError(f"expected 0.1 <= rt60_min <= rt60_max <= 1.5 s, got {self.rt60_min}, {self.rt60_max}")
        for axis in ("length", "width", "height"):
            low, high = getattr(self, f"{axis}_min"), getattr(self, f"{axis}_max")
            if not 2 * self.wall_margin < low <= high <= 30.0:
                raise ValueError(f"expected 2 * wall_margin < {axis}_min <= {axis}_max <= 30 m, got {low}, {high}")
        if not 0.1 <= self.distance_min <= self.distance_max:
            raise ValueError(
                f"expected 0.1 <= distance_min <= distance_max, got {self.distance_min}, {self.distance_max}"
            )
        if self.wall_margin < 0.1:
            raise ValueError(f"wall_margin must be at least 0.1 m, got {self.wall_margin}")
        if not 0.005 <= self.rt60_tolerance <= 0.5:
            raise ValueError(f"rt60_tolerance must be within [0.005, 0.5] (relative), got {self.rt60_tolerance}")
        if not 1 <= self.max_attempts <= 20:
            raise ValueError(f"max_attempts must be within [1, 20], got {self.max_attempts}")

    def describe(self) -> dict[str, Any]:
        return {
            **self.spec(),
            "simulator": "image-source (ShoeBox)",
            "pyroomacoustics": package_version("pyroomacoustics"),
            "realised": (
                f"every applied room's RIR has a Schroeder T30 (-5 to -35 dB, extrapolated to 60 dB) within "
                f"{self.rt60_tolerance:.0%} of a target drawn uniform in {self.rt60_min:g}-{self.rt60_max:g} s "
                f"(the absorption re-solved up to {self.max_attempts} times; a room that does not get there fails "
                "the utterance); per utterance rt60_s_target, rt60_s_realised and rt60_attempts in the outcome"
            ),
        }

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        if importlib.util.find_spec("pyroomacoustics") is None:
            return wave, sr, Outcome.failed("pyroomacoustics is not installed (extra `rooms`): no simulated room")
        rt60 = float(rng.uniform(self.rt60_min, self.rt60_max))
        dims = np.array(
            [
                rng.uniform(getattr(self, f"{axis}_min"), getattr(self, f"{axis}_max"))
                for axis in ("length", "width", "height")
            ]
        )
        mic = rng.uniform(self.wall_margin, dims - self.wall_margin)
        source = None
        for _ in range(POSITION_DRAWS):
            direction = rng.standard_normal(3)
            candidate = mic + rng.uniform(self.distance_min, self.distance_max) * direction / np.linalg.norm(direction)
            if np.all(candidate >= self.wall_margin) and np.all(candidate <= dims - self.wall_margin):
                source = candidate
                break
        room_text = "x".join(f"{side:.2f}" for side in dims)
        if source is None:
            span = f"{self.distance_min}-{self.distance_max} m"
            return wave, sr, Outcome.failed(f"no source position {span} from the microphone fits room {room_text} m")
        distance = float(np.linalg.norm(source - mic))
        placed = f"image-source room {room_text} m, source {distance:.2f} m from the microphone"
        try:
            solved = solve_room(dims, mic, source, sr, rt60, self.rt60_tolerance, self.max_attempts)
        except ValueError as error:
            return wave, sr, Outcome.failed(f"{placed}: {error}", rt60_s_target=rt60)
        figures: dict[str, float | int | str | bool] = {
            "rt60_s_target": rt60,
            "rt60_s_realised": solved.figures.rt60_s,
            "rt60_attempts": solved.attempts,
            "sabine_rt60_s": solved.sabine_rt60_s,
            "drr_db": solved.figures.drr_db,
            "room_m": room_text,
            "mic_m": ",".join(f"{value:.4f}" for value in mic),
            "source_m": ",".join(f"{value:.4f}" for value in source),
            "absorption": solved.absorption,
            "max_order": solved.max_order,
            "source_distance_m": distance,
            "rir_samples": len(solved.rir),
        }
        realised = f"T30 {solved.figures.rt60_s:.3f} s for the target RT60 {rt60:.3f} s"
        if not within(solved.figures.rt60_s, rt60, self.rt60_tolerance):
            tolerance = f"{self.rt60_tolerance:.0%}"
            reason = f"{placed}: {realised} after {count(solved.attempts, 'attempt')}, not within {tolerance}"
            return wave, sr, Outcome.failed(reason, **figures)
        reason = f"{placed}, {realised} ({count(solved.attempts, 'attempt')})"
        return reverberate(wave, solved.rir, solved.direct), sr, Outcome.applied(reason, **figures)


@dataclass(frozen=True)
class SolvedRoom:
    """The last RIR computed for a room, its figures and what it took."""

    rir: np.ndarray
    direct: int
    figures: RoomFigures
    attempts: int
    sabine_rt60_s: float
    absorption: float
    max_order: int


def solve_room(
    dims: np.ndarray, mic: np.ndarray, source: np.ndarray, sr: int, target: float, tolerance: float, attempts: int
) -> SolvedRoom:
    """The shoebox's RIR with the absorption re-solved (see ``RoomReverb``) until its T30 is within ``tolerance``
    of ``target``, or the last of ``attempts``; ValueError when Sabine's formula needs an absorption above 1."""
    import pyroomacoustics as pra

    sabine, tried = target, []
    for attempt in range(1, attempts + 1):
        try:
            absorption, max_order = pra.inverse_sabine(sabine, dims)
        except ValueError:
            raise ValueError(
                f"a Sabine RT60 of {sabine:.3f} s (attempt {attempt}, for the target {target:.3f} s) needs a wall "
                "absorption above 1"
            ) from None
        room = pra.ShoeBox(
            dims,
            fs=sr,
            materials=pra.Material(absorption),
            max_order=max_order,
            air_absorption=False,
            ray_tracing=False,
            use_rand_ism=False,
        )
        room.add_source(source)
        room.add_microphone(mic)
        room.compute_rir()
        rir = np.asarray(room.rir[0][0], dtype=np.float64)
        distance = float(np.linalg.norm(source - mic))
        direct = round(distance / pra.constants.get("c") * sr) + pra.constants.get("frac_delay_length") // 2
        figures = rir_figures(rir, direct, sr)
        solved = SolvedRoom(rir, direct, figures, attempt, sabine, float(absorption), int(max_order))
        if within(figures.rt60_s, target, tolerance) or figures.rt60_s <= 0.0:
            return solved
        tried.append((np.log(sabine), np.log(figures.rt60_s)))
        sabine = float(np.exp(_next_log_sabine(tried, np.log(target))))
    return solved


def within(t30: float, target: float, tolerance: float) -> bool:
    """Whether a realised T30 is within ``tolerance`` (relative) of the target."""
    return abs(t30 / target - 1.0) <= tolerance


def _next_log_sabine(tried: list[tuple[float, float]], log_target: float) -> float:
    """The next log Sabine RT60: T30 scaled onto the target after one attempt, then a secant step (its slope kept
    within [0.3, 3], so that one noisy pair of attempts cannot throw the next far off)."""
    log_sabine, log_t30 = tried[-1]
    slope = 1.0
    if len(tried) > 1 and tried[-2][0] != log_sabine:
        slope = float(np.clip((log_t30 - tried[-2][1]) / (log_sabine - tried[-2][0]), 0.3, 3.0))
    return log_sabine + (log_target - log_t30) / slope


@register
@dataclass(frozen=True)
class MeasuredRir(Operator):
    """A measured room impulse response drawn per utterance from the files a manifest lists.

    The manifest is a CSV with columns ``path`` (POSIX, relative to the manifest's folder) and ``blake3`` (of the
    file); every drawn file is checked against its digest before use. Any WAV (or other audio PyAV decodes) works;
    channels are averaged and the RIR resampled to the utterance's rate. The direct path is the RIR's largest
    absolute sample. A missing, unreadable, swapped or escaping file fails the utterance with the reason.
    """

    name = "rir_file"
    manifest: str = "rirs.csv"

    def describe(self) -> dict[str, Any]:
        path = Path(self.manifest)
        material = (
            {"path": str(path), "blake3": file_digest(path).blake3}
            if path.is_file()
            else {"path": str(path), "problem": "manifest does not exist"}
        )
        return {**self.spec(), "material": material}

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        try:
            table = read_rir_manifest(Path(self.manifest))
            row = table.iloc[int(rng.integers(len(table)))]
            rir = self._load(Path(self.manifest).parent, str(row["path"]), str(row["blake3"]), sr)
        except MissingMaterialError as error:
            return wave, sr, Outcome.failed(str(error))
        direct = int(np.argmax(np.abs(rir)))
        figures = rir_figures(rir, direct, sr)
        return (
            reverberate(wave, rir, direct),
            sr,
            Outcome.applied(
                f"measured RIR {row['path']!r}",
                rir_file=str(row["path"]),
                rt60_s_realised=figures.rt60_s,
                drr_db=figures.drr_db,
                rir_samples=len(rir),
            ),
        )

    @staticmethod
    def _load(root: Path, relative: str, expected_blake3: str, sr: int) -> np.ndarray:
        posix = PurePosixPath(relative)
        if posix.is_absolute() or ".." in posix.parts or not posix.parts:
            raise MissingMaterialError(f"RIR path {relative!r} is not relative to the manifest's folder")
        path = root.joinpath(*posix.parts)
        if not path.is_file():
            raise MissingMaterialError(f"RIR file {path} does not exist or is not a regular file")
        actual = file_digest(path).blake3
        if actual != expected_blake3:
            raise MissingMaterialError(f"RIR file {path} has BLAKE3 {actual}, the manifest says {expected_blake3}")
        rir = decoded_audio(str(path), sr)
        if not np.any(rir):
            raise MissingMaterialError(f"RIR file {path} is silent")
        return rir


def read_rir_manifest(path: Path) -> pd.DataFrame:
    """The manifest's ``path`` and ``blake3`` columns as strings; MissingMaterialError names what is wrong."""
    table = read_listing(path, MANIFEST_COLUMNS, "RIR manifest")
    if table.empty:
        raise MissingMaterialError(f"RIR manifest {path} lists no files")
    return table
