"""What a corpus's audio files hold, beyond their headers: files with no speech in them at all.

A file whose every sample is within one 16-bit step of zero is digitally silent; a file whose long-term spectrum is
flat (spectral flatness of the averaged power spectrum near 1) and whose level never moves (frame levels within a
few dB) is white noise. Both parse as audio and would be counted, embedded and scored as utterances of their
speaker; ``interbias corpus check`` names them as problems. Speech is neither: its spectrum falls with frequency
and has formants (flatness well below 0.5), and its level moves with syllables and pauses by tens of dB. Files are
read in blocks, never whole.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import soundfile

from runner.corpora.base import Problem

SILENT_PEAK = 2.0**-15  # one step of 16-bit audio: at or below it a file holds no signal
FRAME = 512  # samples per analysis frame
BLOCK_FRAMES = 256  # frames read at once
WHITE_FLATNESS = 0.9  # white noise averages to about 1; speech, tones and coloured noise stay far below
STEADY_DB = 3.0  # the standard deviation of frame levels (dB) below which a level never moves
MIN_FRAMES = 16  # fewer frames say too little about a spectrum or a level to call a file noise


def content_problems(root: Path, paths: Iterable[str]) -> list[Problem]:
    """One problem per file (``paths`` under ``root``, as an utterance table names them) that holds no speech or
    whose samples cannot be read past its header."""
    found = []
    for name in paths:
        try:
            reason = content_problem(Path(root) / name)
        except (soundfile.LibsndfileError, RuntimeError, OSError) as error:
            reason = f"samples unreadable past the header ({getattr(error, 'error_string', None) or error})"
        if reason is not None:
            found.append(Problem(name, f"kept, but {reason}"))
    return found


def content_problem(path: Path) -> str | None:
    """Why the audio file at ``path`` holds no speech (digitally silent, or white noise), or None."""
    window = np.hanning(FRAME)
    spectrum = np.zeros(FRAME // 2 + 1)
    levels: list[np.ndarray] = []
    peak = 0.0
    with soundfile.SoundFile(str(path)) as audio:
        for block in audio.blocks(blocksize=FRAME * BLOCK_FRAMES, dtype="float64", always_2d=True):
            mono = block.mean(axis=1)
            peak = max(peak, float(np.abs(mono).max(initial=0.0)))
            frames = mono[: len(mono) // FRAME * FRAME].reshape(-1, FRAME)
            if len(frames):
                spectrum += (np.abs(np.fft.rfft(frames * window, axis=1)) ** 2).sum(axis=0)
                levels.append(np.mean(frames**2, axis=1))
    if peak <= SILENT_PEAK:
        shown = "-inf" if peak == 0 else f"{20 * math.log10(peak):.0f}"
        return f"digitally silent (peak {shown} dBFS): no speech in it, yet counted as an utterance"
    power = np.concatenate(levels) if levels else np.zeros(0)
    if len(power) < MIN_FRAMES:
        return None
    bins = spectrum[1:-1]
    flatness = float(np.exp(np.mean(np.log(bins + 1e-300))) / np.mean(bins)) if bins.any() else 0.0
    spread = float(np.std(10 * np.log10(power + 1e-20)))
    if flatness >= WHITE_FLATNESS and spread <= STEADY_DB:
        return (
            f"white noise (spectral flatness {flatness:.2f}, level steady within {spread:.1f} dB): no speech in it, "
            "yet counted as an utterance"
        )
    return None
