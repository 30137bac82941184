"""Audio helpers shared by the operators: decoding files with PyAV, resampling, 16-bit conversion, length
fitting."""

from __future__ import annotations

from math import gcd
from pathlib import Path

import av
import numpy as np

from schemas import Error

# Raw codec files that carry no container header: PyAV must be told their format.
RAW_FORMATS = {".g722": "g722", ".ul": "mulaw", ".ulaw": "mulaw", ".al": "alaw", ".alaw": "alaw"}


class AudioReadError(Error):
    """A file that cannot be decoded to audio; the message names the file and the decoder's complaint."""


def read_audio(path: Path) -> tuple[np.ndarray, int]:
    """Decode a file with PyAV to float32 mono (channels averaged) at its own sample rate."""
    path = Path(path)
    try:
        with av.open(str(path), format=RAW_FORMATS.get(path.suffix.lower())) as container:
            if not container.streams.audio:
                raise AudioReadError(f"{path}: no audio stream")
            stream = container.streams.audio[0]
            chunks = [frame_to_float(frame) for frame in container.decode(stream)]
            rate = stream.codec_context.sample_rate
    except av.error.FFmpegError as error:
        raise AudioReadError(f"{path}: {error}") from error
    if not chunks:
        raise AudioReadError(f"{path}: no audio samples decoded")
    return np.concatenate(chunks), int(rate)


def ffmpeg_versions() -> dict[str, str]:
    """PyAV's version and the FFmpeg libraries it bundles: codec and filter output depends on them."""
    libraries = {name: ".".join(map(str, version)) for name, version in av.library_versions.items()}
    return {"pyav": av.__version__, **{name: libraries[name] for name in ("libavcodec", "libavfilter")}}


def frame_to_float(frame: av.AudioFrame) -> np.ndarray:
    """One decoded frame as float32 mono in [-1, 1): integers are scaled by their full range, channels
    averaged."""
    data = frame.to_ndarray()
    channels = len(frame.layout.channels)
    if data.shape[0] == 1 and channels > 1:  # packed layout: interleaved samples in one row
        data = data.reshape(-1, channels).T
    if data.dtype == np.int16:
        data = data.astype(np.float32) / 32768.0
    elif data.dtype == np.int32:
        data = (data.astype(np.float64) / 2147483648.0).astype(np.float32)
    elif data.dtype == np.uint8:
        data = (data.astype(np.float32) - 128.0) / 128.0
    return data.astype(np.float32).mean(axis=0, dtype=np.float32)


def resample(wave: np.ndarray, from_sr: int, to_sr: int) -> np.ndarray:
    """Polyphase resampling (zero-phase FIR, so no delay) between integer rates, float32 out."""
    if from_sr == to_sr:
        return wave.astype(np.float32, copy=False)
    # on first use: a run whose embeddings are all cached imports no scipy.signal
    from scipy.signal import resample_poly

    common = gcd(from_sr, to_sr)
    return resample_poly(wave, to_sr // common, from_sr // common).astype(np.float32)


def to_int16(wave: np.ndarray) -> tuple[np.ndarray, int]:
    """Round to 16-bit PCM; samples beyond full scale are clipped and counted (second value)."""
    scaled = np.round(np.asarray(wave, dtype=np.float64) * 32768.0)
    clipped = int(np.count_nonzero((scaled > 32767) | (scaled < -32768)))
    return np.clip(scaled, -32768, 32767).astype(np.int16), clipped


def fit_length(wave: np.ndarray, length: int) -> np.ndarray:
    """Trim the end, or pad it with zeros, to exactly ``length`` samples."""
    if len(wave) >= length:
        return wave[:length]
    return np.concatenate([wave, np.zeros(length - len(wave), dtype=wave.dtype)])


def loop_to_length(wave: np.ndarray, length: int, start: int) -> np.ndarray:
    """``length`` samples read circularly from ``wave`` starting at ``start`` (for noise material)."""
    return np.take(wave, np.arange(start, start + length) % len(wave))
