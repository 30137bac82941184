"""Reverberation: rooms simulated by the image-source method (pyroomacoustics), and measured impulse responses.

Both convolve the utterance with a room impulse response (RIR), cut the result so that the direct path lands at
lag 0 (no time shift against the clean audio), keep the input's length and bring the output to the input's RMS
level. The outcome records the realised reverberation time and direct-to-reverberant ratio of the RIR used:

- ``rt60_s_realised``: pyroomacoustics' Schroeder backward-integration estimate (the T30 decay, -5 to -35 dB,
  extrapolated to 60 dB) measured on the RIR itself; for a simulated room it differs from the Sabine target
  ``rt60_s_target`` that set the wall absorption (the image-source RIR of a shoebox decays more slowly than
  Sabine's formula says, by about 10-40 % for these rooms), so both are recorded.
- ``drr_db``: energy from the direct path's arrival to 2.5 ms after it, over the energy after that (what the
  output holds: the part of the RIR before the direct path is cut off with the delay).

The simulated room uses the image-source method only (no ray tracing, no randomised images), so pyroomacoustics
draws nothing itself: every random figure (room size, target RT60, microphone and source positions) comes from
the generator passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from provenance.digests import file_digest
from runner.operators.base import Operator, Outcome, Result, package_version, register
from runner.operators.sources import MissingMaterialError, decoded_audio, read_listing

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
    """A shoebox room by the image-source method: size, target RT60 and positions drawn from declared ranges.

    Per utterance: length, width and height uniform in their ranges; the target RT60 uniform in
    ``[rt60_min, rt60_max]``, turned into one wall absorption coefficient and an image order by Sabine's formula
    (``pyroomacoustics.inverse_sabine``); the microphone uniform in the room at least ``wall_margin`` m from every
    wall; the source at a distance uniform in ``[distance_min, distance_max]`` in a uniform direction, redrawn (up
    to 100 times) until it too is ``wall_margin`` from the walls.
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

    def describe(self) -> dict[str, Any]:
        return {
            **self.spec(),
            "simulator": "image-source (ShoeBox)",
            "pyroomacoustics": package_version("pyroomacoustics"),
        }

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        try:
            import pyroomacoustics as pra
        except ImportError:
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
        try:
            absorption, max_order = pra.inverse_sabine(rt60, dims)
        except ValueError as error:
            return wave, sr, Outcome.failed(f"room {room_text} m cannot reach RT60 {rt60:.2f} s: {error}")
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
        reason = (
            f"image-source room {room_text} m, target RT60 {rt60:.2f} s, source {distance:.2f} m from the microphone"
        )
        return (
            reverberate(wave, rir, direct),
            sr,
            Outcome.applied(
                reason,
                rt60_s_target=rt60,
                rt60_s_realised=figures.rt60_s,
                drr_db=figures.drr_db,
                room_m=room_text,
                mic_m=",".join(f"{value:.4f}" for value in mic),
                source_m=",".join(f"{value:.4f}" for value in source),
                absorption=float(absorption),
                max_order=int(max_order),
                source_distance_m=distance,
                rir_samples=len(rir),
            ),
        )


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
