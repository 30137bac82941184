"""The playback chain preset: codec -> loudspeaker -> room -> microphone -> noise, as one named operator.

This is the replay condition of carrier-agnostic evaluations (audio sent through a codec, played on a device's
loudspeaker in a room and picked up by another device's microphone in background noise). Each stage is the
registered operator of that name with the preset's kwargs, drawing from its own child stream spawned from the
passed generator (``Generator.spawn``), so the preset is as reproducible as any operator. The outcome carries
every stage's realised figures, prefixed with the stage (``codec.kbps_realised``, ``room.rt60_s_realised``,
``room.drr_db``, ``noise.snr_db_measured``, ...). A failed stage fails the preset and names the stage; a stage
that fell back makes the preset's outcome a fallback with the stage's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from runner.operators.base import Operator, Outcome, Result, register
from runner.operators.channels import Loudspeaker, Microphone
from runner.operators.codecs import Codec, CodecName
from runner.operators.noise import PinkNoise, WhiteNoise
from runner.operators.rooms import RoomReverb


@register
@dataclass(frozen=True)
class PlaybackChain(Operator):
    """Codec, loudspeaker, image-source room, microphone and additive noise, every stage's figures recorded."""

    name = "playback_chain"
    codec: CodecName = "opus"
    bitrate: int = 16000
    codec_rate: int = 16000
    loudspeaker: Literal["smartphone", "laptop", "bluetooth"] = "smartphone"
    rt60_min: float = 0.3
    rt60_max: float = 0.6
    distance_min: float = 1.0
    distance_max: float = 2.5
    microphone: Literal["laptop", "headset", "smartphone"] = "laptop"
    noise: Literal["white", "pink"] = "pink"
    snr_db: float = 20.0

    def check(self) -> None:
        self.stages()  # each stage checks its own kwargs

    def stages(self) -> tuple[tuple[str, Operator], ...]:
        """The five stages in order, each a registered operator."""
        room = RoomReverb(
            rt60_min=self.rt60_min,
            rt60_max=self.rt60_max,
            distance_min=self.distance_min,
            distance_max=self.distance_max,
        )
        noise = (PinkNoise if self.noise == "pink" else WhiteNoise)(snr_db=self.snr_db)
        return (
            ("codec", Codec(codec=self.codec, bitrate=self.bitrate, sample_rate=self.codec_rate)),
            ("loudspeaker", Loudspeaker(model=self.loudspeaker)),
            ("room", room),
            ("microphone", Microphone(model=self.microphone)),
            ("noise", noise),
        )

    def describe(self) -> dict[str, Any]:
        return {**self.spec(), "stages": [{"stage": stage, **operator.describe()} for stage, operator in self.stages()]}

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        stages = self.stages()
        details: dict[str, float | int | str | bool] = {}
        fallbacks = []
        out, out_sr = wave, sr
        for (stage, operator), stream in zip(stages, rng.spawn(len(stages)), strict=True):
            out, out_sr, outcome = operator(out, out_sr, stream, utt_id=utt_id)
            if outcome.status == "failed":
                return wave, sr, Outcome.failed(f"playback chain, {stage} stage: {outcome.reason}", **details)
            if outcome.status == "fallback":
                fallbacks.append(f"{stage} stage: {outcome.reason}")
            details.update({f"{stage}.{key}": value for key, value in outcome.details.items()})
        if fallbacks:
            return out, out_sr, Outcome.fallback("playback chain, " + "; ".join(fallbacks), **details)
        reason = (
            f"playback chain: {self.codec} {self.bitrate / 1000:g} kbit/s, {self.loudspeaker} loudspeaker, "
            f"room, {self.microphone} microphone, {self.noise} noise at {self.snr_db:g} dB SNR"
        )
        return out, out_sr, Outcome.applied(reason, **details)
