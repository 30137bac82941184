"""Packet loss on fixed frames (20 ms by default): random (Bernoulli) and bursty (Gilbert-Elliott).

The utterance is cut into consecutive frames (the last one may be short); each frame is lost or received
according to the loss model, and lost frames are concealed as declared:

- ``zero``: the frame is replaced by silence;
- ``repeat``: the last received frame is played again (silence if nothing was received yet);
- ``fade``: as ``repeat``, with the gain halved (-6 dB) for each further consecutive lost frame.

The outcome records the realised loss rate and mean burst length beside the model's expected values. A
realisation with no lost frame leaves the audio as it was: that is a valid draw of the model, reported as
applied with 0 frames lost.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Literal

import numpy as np

from runner.operators.base import Operator, Outcome, Result, register

Concealment = Literal["zero", "repeat", "fade"]
FADE_PER_FRAME = 0.5


def bernoulli_losses(frames: int, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Independent losses: each frame is lost with probability ``rate``."""
    return rng.random(frames) < rate


def gilbert_elliott_losses(
    frames: int,
    p_good_to_bad: float,
    p_bad_to_good: float,
    loss_good: float,
    loss_bad: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Losses from a two-state Markov chain; the first state is drawn from the stationary distribution.

    The chain is simulated by its sojourn times: a stay in the good state lasts Geometric(p_good_to_bad)
    frames, one in the bad state Geometric(p_bad_to_good) frames; within a state each frame is lost with that
    state's loss probability.
    """
    bad = np.zeros(frames, dtype=bool)
    in_bad = rng.random() < p_good_to_bad / (p_good_to_bad + p_bad_to_good)
    position = 0
    while position < frames:
        stay = int(rng.geometric(p_bad_to_good if in_bad else p_good_to_bad))
        bad[position : position + stay] = in_bad
        position += stay
        in_bad = not in_bad
    loss_probability = np.where(bad, loss_bad, loss_good)
    return rng.random(frames) < loss_probability


def burst_lengths(lost: np.ndarray) -> np.ndarray:
    """Lengths of the runs of consecutive lost frames."""
    padded = np.concatenate([[False], lost, [False]]).astype(np.int8)
    edges = np.diff(padded)
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


def conceal(wave: np.ndarray, frame_length: int, lost: np.ndarray, concealment: Concealment) -> np.ndarray:
    """Replace the lost frames of ``wave`` as ``concealment`` says (see module docstring)."""
    out = wave.copy()
    last_received = np.zeros(frame_length, dtype=wave.dtype)
    gain = 1.0
    for index, is_lost in enumerate(lost):
        start = index * frame_length
        frame = wave[start : start + frame_length]
        if not is_lost:
            if len(frame) == frame_length:
                last_received = frame
            gain = 1.0
            continue
        if concealment == "zero":
            out[start : start + len(frame)] = 0.0
            continue
        out[start : start + len(frame)] = gain * last_received[: len(frame)]
        if concealment == "fade":
            gain *= FADE_PER_FRAME
    return out


@dataclass(frozen=True)
class PacketLoss(Operator):
    """Frame-wise loss with declared concealment; subclasses give the loss model."""

    unchanged_output_allowed = True
    concealment: Concealment = "zero"
    frame_ms: float = 20.0

    def check(self) -> None:
        if not 2.5 <= self.frame_ms <= 120.0:
            raise ValueError(f"frame_ms must be within [2.5, 120], got {self.frame_ms}")

    @abstractmethod
    def losses(self, frames: int, rng: np.random.Generator) -> np.ndarray:
        """One boolean per frame: True when the frame is lost."""

    @abstractmethod
    def expected_loss_rate(self) -> float:
        """The long-run loss rate of the model."""

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        frame_length = round(sr * self.frame_ms / 1000.0)
        if frame_length < 1:
            return wave, sr, Outcome.failed(f"{self.frame_ms} ms frames are shorter than a sample at {sr} Hz")
        frames = -(-len(wave) // frame_length)
        lost = self.losses(frames, rng)
        bursts = burst_lengths(lost)
        out = conceal(wave, frame_length, lost, self.concealment)
        realised = float(lost.mean())
        reason = (
            f"{self.name}: {int(lost.sum())} of {frames} {self.frame_ms:g} ms frames lost (realised rate "
            f"{realised:.3f}, model {self.expected_loss_rate():.3f}), concealment {self.concealment}"
        )
        return (
            out,
            sr,
            Outcome.applied(
                reason,
                frames=frames,
                frames_lost=int(lost.sum()),
                loss_rate_realised=realised,
                mean_burst_realised=float(bursts.mean()) if len(bursts) else 0.0,
            ),
        )


@register
@dataclass(frozen=True)
class RandomPacketLoss(PacketLoss):
    """Independent (Bernoulli) frame losses at ``rate``."""

    name = "packet_loss_random"
    rate: float = 0.1

    def check(self) -> None:
        super().check()
        if not 0.0 < self.rate < 1.0:
            raise ValueError(f"rate must be within (0, 1), got {self.rate}")

    def losses(self, frames: int, rng: np.random.Generator) -> np.ndarray:
        return bernoulli_losses(frames, self.rate, rng)

    def expected_loss_rate(self) -> float:
        return self.rate


@register
@dataclass(frozen=True)
class BurstyPacketLoss(PacketLoss):
    """Gilbert-Elliott bursty losses: good/bad states with transition and per-state loss probabilities.

    Stationary bad-state probability pi_b = p_good_to_bad / (p_good_to_bad + p_bad_to_good); long-run loss
    rate (1 - pi_b) loss_good + pi_b loss_bad; with loss_good = 0 and loss_bad = 1 (the Gilbert model) the
    mean burst length is 1 / p_bad_to_good.
    """

    name = "packet_loss_bursty"
    p_good_to_bad: float = 0.05
    p_bad_to_good: float = 0.5
    loss_good: float = 0.0
    loss_bad: float = 1.0

    def check(self) -> None:
        super().check()
        for label, value in (("p_good_to_bad", self.p_good_to_bad), ("p_bad_to_good", self.p_bad_to_good)):
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{label} must be within (0, 1], got {value}")
        for label, value in (("loss_good", self.loss_good), ("loss_bad", self.loss_bad)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{label} must be within [0, 1], got {value}")
        if self.loss_bad <= self.loss_good:
            raise ValueError("loss_bad must exceed loss_good")

    def losses(self, frames: int, rng: np.random.Generator) -> np.ndarray:
        return gilbert_elliott_losses(
            frames, self.p_good_to_bad, self.p_bad_to_good, self.loss_good, self.loss_bad, rng
        )

    def expected_loss_rate(self) -> float:
        bad = self.p_good_to_bad / (self.p_good_to_bad + self.p_bad_to_good)
        return (1.0 - bad) * self.loss_good + bad * self.loss_bad
