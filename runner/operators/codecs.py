"""Lossy codecs and the telephone channel, run in-process through PyAV on in-memory (BytesIO) containers.

Each codec round trip: resample to the codec's rate, round to 16-bit PCM (clipped samples are counted), encode
into a container in memory, demux and decode, bring the decoded audio back to the codec's rate, remove the
encoder delay the container did not remove, trim or pad the end to the input length, resample to the input
rate.

Delay handling per container, measured on real speech with PyAV 18.1 / FFmpeg 8 and checked by the tests
(cross-correlation lag 0 after compensation): Ogg Opus carries the encoder's pre-skip and MP3 carries LAME's
delay tag, so FFmpeg removes the priming itself; ADTS AAC keeps the encoder's 1024 priming samples; raw AMR-NB
output lags by 38 samples at 8 kHz (measured by cross-correlation over prompts; near the encoder's 5 ms,
40-sample look-ahead); raw G.722 lags by the 22 samples of its QMF analysis and synthesis filters; G.711 in
WAV has no delay. What remains after removing the delay is the padding of the last codec frame and, for
encoders that drain their look-ahead with one more frame (libopencore_amrnb at some input lengths), that frame:
less than two frames longer, less than one frame shorter, else the round trip fails. The outcome records how
many samples were trimmed or padded at the end, the realised bit rate over the container bytes, and the decoder
used.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Literal, cast

import av
import numpy as np

from runner.operators.audio import ffmpeg_versions, fit_length, frame_to_float, resample, to_int16
from runner.operators.base import Operator, Outcome, Result, register
from runner.operators.channels import TooShortError, zero_phase_band_pass
from schemas import Error

CodecName = Literal["opus", "amr_nb", "mp3", "g722", "aac"]
AMR_NB_MODES = (4750, 5150, 5900, 6700, 7400, 7950, 10200, 12200)
MP3_MPEG1_RATES = (32000, 44100, 48000)
MP3_MPEG1_BITRATES = (32000, 40000, 48000, 56000, 64000, 80000, 96000, 112000, 128000, 160000, 192000, 224000)
MP3_MPEG2_BITRATES = (8000, 16000, 24000, 32000, 40000, 48000, 56000, 64000, 80000, 96000, 112000, 128000)


@dataclass(frozen=True)
class CodecProfile:
    """How a codec is run: encoder, container, rates (first = default), bit rates, residual delay."""

    encoder: str
    container: str
    rates: tuple[int, ...]
    bitrate_range: tuple[int, int]
    delay: int  # samples at the codec rate that the decoded stream lags behind the input

    def allowed_bitrates(self, rate: int) -> tuple[int, ...] | None:
        """The discrete bit rates the encoder offers at ``rate``, or None when any value in the range is
        valid."""
        if self.encoder == "libopencore_amrnb":
            return AMR_NB_MODES
        if self.encoder == "libmp3lame":
            return MP3_MPEG1_BITRATES if rate in MP3_MPEG1_RATES else MP3_MPEG2_BITRATES
        if self.encoder == "g722":
            return (64000,)
        return None


PROFILES: dict[str, CodecProfile] = {
    "opus": CodecProfile("libopus", "ogg", (48000, 24000, 16000, 12000, 8000), (6000, 510000), 0),
    "amr_nb": CodecProfile("libopencore_amrnb", "amr", (8000,), (4750, 12200), 38),
    "mp3": CodecProfile("libmp3lame", "mp3", (16000, 22050, 24000, 32000, 44100, 48000), (8000, 320000), 0),
    "g722": CodecProfile("g722", "g722", (16000,), (64000, 64000), 22),
    "aac": CodecProfile("aac", "adts", (16000, 22050, 24000, 32000, 44100, 48000), (8000, 256000), 1024),
}
G711_ENCODERS = {"mulaw": "pcm_mulaw", "alaw": "pcm_alaw"}
TELEPHONE_RATE = 8000
TELEPHONE_BAND_HZ = (300.0, 3400.0)
TELEPHONE_FILTER_ORDER = 4


@dataclass(frozen=True)
class RoundTrip:
    """Decoded audio of one encode/decode round trip and what it cost."""

    decoded: np.ndarray
    decoded_rate: int
    encoded_bytes: int
    frame_size: int
    decoder: str


class CodecUnavailableError(Error):
    """The encoder is not compiled into this PyAV build."""


def round_trip(pcm: np.ndarray, rate: int, encoder: str, container: str, bitrate: int) -> RoundTrip:
    """Encode 16-bit mono ``pcm`` at ``rate`` into ``container`` in memory, then demux and decode all of it.

    Raises CodecUnavailableError when the encoder is missing and av.error.FFmpegError when FFmpeg rejects the data.
    """
    try:
        av.codec.Codec(encoder, "w")
    except av.codec.codec.UnknownCodecError as error:
        raise CodecUnavailableError(f"encoder {encoder!r} is not available in this PyAV build") from error
    buffer = io.BytesIO()
    with av.open(buffer, "w", format=container) as output:
        stream = cast(av.audio.stream.AudioStream, output.add_stream(encoder, rate=rate, layout="mono"))
        if bitrate:
            stream.codec_context.bit_rate = bitrate
        frame = av.AudioFrame.from_ndarray(pcm[np.newaxis, :], format="s16", layout="mono")
        frame.sample_rate = rate
        frame.pts = 0
        for packet in stream.encode(frame):
            output.mux(packet)
        for packet in stream.encode(None):
            output.mux(packet)
        frame_size = max(1, stream.codec_context.frame_size)
    encoded = buffer.getvalue()
    with av.open(io.BytesIO(encoded), "r", format=container) as source:
        decoded_stream = source.streams.audio[0]
        chunks = [frame_to_float(decoded) for decoded in source.decode(decoded_stream)]
        decoded_rate = decoded_stream.codec_context.sample_rate
        decoder = decoded_stream.codec_context.name
    decoded = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
    return RoundTrip(decoded, int(decoded_rate), len(encoded), frame_size, decoder)


def codec_channel(
    wave: np.ndarray,
    sr: int,
    *,
    encoder: str,
    container: str,
    rate: int,
    bitrate: int,
    delay: int,
    label: str,
) -> Result:
    """Run ``wave`` through one codec round trip, aligned and of the input's length (see module docstring)."""
    at_codec_rate = resample(wave, sr, rate)
    pcm, clipped = to_int16(at_codec_rate)
    try:
        trip = round_trip(pcm, rate, encoder, container, bitrate)
    except CodecUnavailableError as error:
        return wave, sr, Outcome.failed(f"{label}: {error}")
    except av.error.FFmpegError as error:
        return wave, sr, Outcome.failed(f"{label} ({encoder}): {type(error).__name__}: {error}")
    decoded = resample(trip.decoded, trip.decoded_rate, rate)[delay:]
    length_error = len(decoded) - len(at_codec_rate)
    if len(decoded) == 0 or not -trip.frame_size < length_error <= 2 * trip.frame_size:
        return (
            wave,
            sr,
            Outcome.failed(
                f"{label}: decoded {len(decoded)} samples after removing {delay} delay samples, expected "
                f"{len(at_codec_rate)} to within two {trip.frame_size}-sample frames"
            ),
        )
    out = fit_length(resample(fit_length(decoded, len(at_codec_rate)), rate, sr), len(wave))
    seconds = len(at_codec_rate) / rate
    clipping = f"; {clipped} samples clipped at 16-bit full scale" if clipped else ""
    return (
        out.astype(np.float32),
        sr,
        Outcome.applied(
            label + clipping,
            encoder=encoder,
            decoder=trip.decoder,
            codec_rate=rate,
            frame_size=trip.frame_size,
            kbps_realised=round(trip.encoded_bytes * 8 / seconds / 1000, 3),
            delay_removed=delay,
            end_samples_trimmed=length_error,
            clipped_samples=clipped,
        ),
    )


@register
@dataclass(frozen=True)
class Codec(Operator):
    """A lossy codec round trip at a declared bit rate (bit/s) and codec rate (0: the default)."""

    name = "codec"
    codec: CodecName
    bitrate: int
    sample_rate: int = 0

    def check(self) -> None:
        profile = PROFILES[self.codec]
        rate = self.codec_rate
        if rate not in profile.rates:
            raise ValueError(f"{self.codec} runs at {list(profile.rates)} Hz, not {rate}")
        allowed = profile.allowed_bitrates(rate)
        low, high = profile.bitrate_range
        if allowed is not None and self.bitrate not in allowed:
            raise ValueError(f"{self.codec} at {rate} Hz offers bit rates {list(allowed)}, not {self.bitrate}")
        if not low <= self.bitrate <= high:
            raise ValueError(f"{self.codec} bit rate must be within [{low}, {high}], got {self.bitrate}")

    def describe(self) -> dict[str, Any]:
        profile = PROFILES[self.codec]
        return {
            **self.spec(),
            "encoder": profile.encoder,
            "container": profile.container,
            **ffmpeg_versions(),
        }

    @property
    def codec_rate(self) -> int:
        return self.sample_rate or PROFILES[self.codec].rates[0]

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        profile = PROFILES[self.codec]
        return codec_channel(
            wave,
            sr,
            encoder=profile.encoder,
            container=profile.container,
            rate=self.codec_rate,
            bitrate=self.bitrate,
            delay=profile.delay,
            label=f"{self.codec} at {self.bitrate / 1000:g} kbit/s, {self.codec_rate} Hz",
        )


@register
@dataclass(frozen=True)
class Telephony(Operator):
    """The narrowband telephone channel: 8 kHz, 300-3400 Hz band, G.711 (mu-law or A-law) round trip.

    The band limit is a Butterworth band-pass of order 4 run forwards and backwards (zero phase, so no delay,
    effective order 8), an approximation of the G.712 channel mask; the G.711 companding is FFmpeg's
    ``pcm_mulaw`` / ``pcm_alaw`` in a WAV container.
    """

    name = "telephony"
    law: Literal["mulaw", "alaw"] = "mulaw"

    def describe(self) -> dict[str, Any]:
        return {**self.spec(), "encoder": G711_ENCODERS[self.law], "container": "wav", **ffmpeg_versions()}

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        narrowband = resample(wave, sr, TELEPHONE_RATE)
        try:
            band_limited = zero_phase_band_pass(narrowband, TELEPHONE_RATE, TELEPHONE_BAND_HZ, TELEPHONE_FILTER_ORDER)
        except TooShortError as error:
            return wave, sr, Outcome.failed(f"telephony needs {error}")
        out, _, outcome = codec_channel(
            band_limited,
            TELEPHONE_RATE,
            encoder=G711_ENCODERS[self.law],
            container="wav",
            rate=TELEPHONE_RATE,
            bitrate=0,
            delay=0,
            label=f"telephone channel: 300-3400 Hz at 8 kHz, G.711 {self.law}",
        )
        if outcome.status != "applied":
            return wave, sr, outcome
        return fit_length(resample(out, TELEPHONE_RATE, sr), len(wave)), sr, outcome
