"""Transfer adversarial perturbations: FGSM and PGD crafted against a declared surrogate encoder.

The perturbation pushes a test utterance's surrogate embedding away from its enrolment speaker's embedding
(minimising the cosine between them); the perturbed audio is what every encoder of the run then scores, so all
encoders see the same realisation and the transfer from the surrogate to each of them is measured.

- Reference: the mean surrogate embedding of the same speaker's other utterances in the bound corpus table (the
  enrolment speaker of every target trial). The clean utterance's own embedding would not do: the cosine to it is
  at its maximum, where the gradient vanishes and FGSM would step along rounding noise.
- Budget: ``epsilon_db`` is the perturbation's size relative to the signal in the attack's norm:
  ||delta||_inf = 10^(epsilon_db / 20) max|x| for ``linf``, ||delta||_2 = 10^(epsilon_db / 20) ||x||_2 for ``l2``
  (so an L2 budget of -40 dB is a perturbation 40 dB below the speech).
- FGSM: one step of the budget's size along the gradient's sign (L-inf) or its direction (L2), so the norm equals
  the budget. PGD: a random start inside the budget (drawn from the passed generator), ``steps`` steps of size
  2.5 epsilon / steps, each projected back onto the budget (Madry et al.).
- Surrogate (``surrogate``): ``mfcc-stats``, a torch (float64, autograd) implementation of the MFCC-statistics
  encoder of ``runner/encoders/mfcc.py`` at its default configuration, equal to it to rounding (tested).
  ``surrogate_blake3`` must be that encoder's checkpoint digest: it makes the surrogate part of the chain's id and
  therefore of the embedding cache key, and a spec naming another digest is rejected.

Computed on the CPU in float64 with one torch thread, so the realisation does not depend on the machine's thread
count. torch is imported when an attack runs, never when the operators are imported.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from runner.encoders.checkpoint import resolve_config
from runner.encoders.mfcc import MfccConfig, MfccStatsEncoder, mel_filterbank
from runner.operators.base import BOUND, Operator, Outcome, Result, register
from runner.operators.sources import MissingMaterial, NoiseSources

if TYPE_CHECKING:
    import torch

PGD_STEP_SCALE = 2.5


def surrogate_blake3(surrogate: str) -> str:
    """The checkpoint digest of a surrogate, as its encoder records it."""
    if surrogate != "mfcc-stats":
        raise ValueError(f"unknown surrogate {surrogate!r}")
    return resolve_config(asdict(MfccConfig())).checkpoint_blake3


class TorchMfccStats:
    """The MFCC-statistics embedding (mean and population std of c1..c19) as a differentiable torch function."""

    def __init__(self, config: MfccConfig) -> None:
        import torch
        from scipy.fft import dct
        from scipy.signal import get_window

        self.config = config
        self.window = torch.from_numpy(get_window("hamming", config.frame_length, fftbins=True))
        self.filterbank = torch.from_numpy(mel_filterbank(config))
        self.dct = torch.from_numpy(dct(np.eye(config.n_mels), type=2, norm="ortho", axis=-1)[:, : config.n_mfcc])

    def __call__(self, wave: torch.Tensor) -> torch.Tensor:
        import torch

        config = self.config
        emphasised = torch.cat([wave[:1], wave[1:] - config.preemphasis * wave[:-1]])
        frames = emphasised.unfold(0, config.frame_length, config.frame_shift) * self.window
        power = torch.fft.rfft(frames, n=config.n_fft, dim=-1).abs() ** 2
        coefficients = torch.log(power @ self.filterbank + 1e-6) @ self.dct
        if not config.include_c0:
            coefficients = coefficients[:, 1:]
        mean = coefficients.mean(dim=0)
        std = torch.sqrt(((coefficients - mean) ** 2).mean(dim=0))
        return torch.cat([mean, std])


@functools.lru_cache(maxsize=1)
def _reference_encoder() -> MfccStatsEncoder:
    from runner.encoders.batching import BatchPolicy

    return MfccStatsEncoder.load("surrogate", None, "cpu", "fp32", BatchPolicy())


@register
@dataclass(frozen=True)
class AdversarialPerturbation(Operator):
    """FGSM or PGD (L-inf or L2, ``epsilon_db`` below the signal) against ``surrogate``, away from the reference."""

    name = "adversarial"
    attack: Literal["fgsm", "pgd"] = "fgsm"
    norm: Literal["linf", "l2"] = "linf"
    epsilon_db: float = -40.0
    steps: int = 10
    surrogate: Literal["mfcc-stats"] = "mfcc-stats"
    surrogate_blake3: str = ""
    sources: NoiseSources | None = field(default=None, compare=False, repr=False, metadata=BOUND)

    def check(self) -> None:
        if not -80.0 <= self.epsilon_db <= 0.0:
            raise ValueError(f"epsilon_db must be within [-80, 0], got {self.epsilon_db}")
        if not 1 <= self.steps <= 1000:
            raise ValueError(f"steps must be within [1, 1000], got {self.steps}")
        expected = surrogate_blake3(self.surrogate)
        if self.surrogate_blake3 != expected:
            raise ValueError(
                f"surrogate_blake3 {self.surrogate_blake3!r} is not the {self.surrogate} surrogate's checkpoint "
                f"digest {expected}"
            )

    def describe(self) -> dict[str, Any]:
        import importlib.metadata

        return {**self.spec(), "surrogate_config": asdict(MfccConfig()), "torch": importlib.metadata.version("torch")}

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        config = MfccConfig()
        if sr != config.sample_rate:
            return wave, sr, Outcome.failed(f"the {self.surrogate} surrogate runs at {config.sample_rate} Hz, not {sr}")
        if len(wave) < config.frame_length:
            return (
                wave,
                sr,
                Outcome.failed(f"the {self.surrogate} surrogate needs at least {config.frame_length} samples"),
            )
        try:
            reference, label = self._reference(sr, utt_id)
        except MissingMaterial as error:
            return wave, sr, Outcome.failed(f"adversarial reference: {error}")
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            delta, before, after = self._craft(wave, reference, rng, TorchMfccStats(config))
        finally:
            torch.set_num_threads(threads)
        out = (wave.astype(np.float64) + delta).astype(np.float32)
        realised = out.astype(np.float64) - wave.astype(np.float64)
        reason = (
            f"{self.attack.upper()} {self.norm} at {self.epsilon_db:g} dB against {self.surrogate}, away from {label}"
        )
        return (
            out,
            sr,
            Outcome.applied(
                reason,
                surrogate_cosine_before=before,
                surrogate_cosine_after=after,
                perturbation_db_l2=_db(np.linalg.norm(realised) / np.linalg.norm(wave.astype(np.float64))),
                perturbation_db_linf=_db(np.abs(realised).max() / np.abs(wave.astype(np.float64)).max()),
                surrogate_blake3=self.surrogate_blake3,
            ),
        )

    def budget(self, wave: np.ndarray) -> float:
        """The perturbation's allowed norm for this wave (see the module docstring)."""
        signal = wave.astype(np.float64)
        size = np.abs(signal).max() if self.norm == "linf" else np.linalg.norm(signal)
        return float(size * 10.0 ** (self.epsilon_db / 20.0))

    def _reference(self, sr: int, utt_id: str | None) -> tuple[np.ndarray, str]:
        """The enrolment speaker's mean surrogate embedding over the speaker's other utterances, and a label."""
        if self.sources is None:
            raise MissingMaterial("the enrolment speaker's embedding needs the corpus utterance table; none is bound")
        speaker = self.sources.speaker_of(utt_id, "corpus")
        table = self.sources.corpus_table()
        rows = table[(table["speaker"] == speaker) & (table["utt_id"] != utt_id)]
        if rows.empty:
            raise MissingMaterial(f"speaker {speaker!r} has no other utterance to enrol from")
        waves = [self.sources.corpus_audio(path, sr) for path in rows["path"]]
        centroid = _reference_encoder().embed(waves, sr).mean(axis=0)
        return centroid, f"speaker {speaker!r} ({len(waves)} other utterances)"

    def _craft(
        self, wave: np.ndarray, reference: np.ndarray, rng: np.random.Generator, surrogate: TorchMfccStats
    ) -> tuple[np.ndarray, float, float]:
        """The perturbation, and the surrogate cosine to the reference before and after it."""
        import torch

        x = torch.from_numpy(wave.astype(np.float64))
        target = torch.from_numpy(reference.astype(np.float64))
        epsilon = self.budget(wave)

        def cosine(delta: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.cosine_similarity(surrogate(x + delta), target, dim=0)

        def gradient(delta: torch.Tensor) -> torch.Tensor:
            delta = delta.detach().requires_grad_(True)
            (grad,) = torch.autograd.grad(-cosine(delta), delta)
            return grad

        if self.attack == "fgsm":
            delta = self._step(gradient(torch.zeros_like(x)), epsilon)
        else:
            delta = self._project(torch.from_numpy(self._random_start(len(wave), epsilon, rng)), epsilon)
            step = PGD_STEP_SCALE * epsilon / self.steps
            for _ in range(self.steps):
                delta = self._project(delta + self._step(gradient(delta), step), epsilon)
        with torch.no_grad():
            before, after = float(cosine(torch.zeros_like(x))), float(cosine(delta))
        return delta.detach().numpy(), before, after

    def _step(self, grad: torch.Tensor, size: float) -> torch.Tensor:
        """A step of norm ``size`` that increases the loss fastest to first order in the attack's norm."""
        import torch

        if self.norm == "linf":
            return size * torch.sign(grad)
        return size * grad / torch.clamp(torch.linalg.vector_norm(grad), min=1e-30)

    def _project(self, delta: torch.Tensor, epsilon: float) -> torch.Tensor:
        import torch

        if self.norm == "linf":
            return torch.clamp(delta, -epsilon, epsilon)
        norm = float(torch.linalg.vector_norm(delta))
        return delta * (epsilon / norm) if norm > epsilon else delta

    def _random_start(self, length: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        """Uniform in the L-inf box, or a Gaussian direction scaled to a uniform radius in the L2 ball."""
        if self.norm == "linf":
            return rng.uniform(-epsilon, epsilon, length)
        direction = rng.standard_normal(length)
        return direction / np.linalg.norm(direction) * epsilon * float(rng.uniform())


def _db(ratio: float) -> float:
    return float(20.0 * np.log10(ratio)) if ratio > 0 else float("-inf")
