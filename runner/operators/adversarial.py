"""Transfer adversarial perturbations: FGSM and PGD crafted against a declared surrogate encoder.

The perturbation pushes a test utterance's surrogate embedding away from its enrolment speaker's embedding
(minimising the cosine between them); the perturbed audio is what every encoder of the run then scores, so all
encoders see the same realisation and the transfer from the surrogate to each of them is measured.

- Reference: the mean surrogate embedding of the same speaker's other utterances in the bound corpus table (the
  enrolment speaker of every target trial): the first ``reference_utterances`` of them in ``utt_id`` order, so
  that the reference is fixed per speaker and its embeddings are computed once per process (memoised by file).
  The clean utterance's own embedding would not do: the cosine to it is at its maximum, where the gradient
  vanishes and FGSM would step along rounding noise.
- Budget: ``epsilon_db`` is the perturbation's size relative to the signal in the attack's norm:
  ||delta||_inf = 10^(epsilon_db / 20) max|x| for ``linf`` (relative to the peak, Carlini and Wagner's dB_x),
  ||delta||_2 = 10^(epsilon_db / 20) ||x||_2 for ``l2`` (an SNR of -epsilon_db: 40 dB at -40 dB). An L-inf budget is
  therefore not an SNR: FGSM fills the box, so its SNR is -epsilon_db less the utterance's peak-to-RMS ratio in dB
  (24-28 dB at -40 dB on speech). Every realisation records its SNR, ``snr_db_realised`` = 10 log10(sum x^2 / sum
  delta^2) of the perturbation as written (after float32 rounding), and its peak-relative size
  ``perturbation_db_linf``.
- FGSM: one step of the budget's size along the gradient's sign (L-inf) or its direction (L2), so the norm equals
  the budget. PGD: a random start inside the budget (drawn from the passed generator), ``steps`` steps of size
  2.5 epsilon / steps, each projected back onto the budget (Madry et al.).
- Surrogate (``surrogate``): ``mfcc-stats``, a torch (float64, autograd) implementation of the MFCC-statistics
  encoder of ``runner/encoders/mfcc.py`` at its default configuration; or ``resemblyzer``, the shipped
  VoiceEncoder's front end (librosa's mel spectrogram as a torch STFT and the same mel matrix) and LSTM in float64
  torch. Each equals its encoder to rounding (tested); the reference embeddings come from the encoder itself.
  ``surrogate_blake3`` must be that encoder's checkpoint digest: it makes the surrogate part of the chain's id and
  therefore of the embedding cache key, and a spec naming another digest is rejected (and a loaded surrogate with
  another digest fails the utterance).
- Matched-noise control (``matched_noise``, the same kwargs): draws from the attack's own stream (its
  ``stream_spec`` is the attack's spec), so it crafts the very perturbation ``adversarial`` adds to the utterance,
  PGD's random start included, and adds instead a perturbation of that size in a random direction, drawn from the
  same stream after the attack's draws. ``l2``: a Gaussian direction (uniform on the sphere) scaled to the attack's
  L2 norm. ``linf``: the attack's sample magnitudes in a random order with random signs, so the L-inf norm and the
  energy (the SNR) are both the attack's (for FGSM a uniformly drawn vertex of the L-inf box). A configuration puts
  each attack beside its control; the attack's effect beyond noise of its size is the difference between the two.

Computed on the CPU in float64 with one torch thread, so the realisation does not depend on the machine's thread
count. torch is imported when an attack runs, never when the operators are imported.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from runner.encoders.base import Encoder
from runner.encoders.checkpoint import resolve_config, resolve_file
from runner.encoders.mfcc import MfccConfig, MfccStatsEncoder, mel_filterbank
from runner.operators.base import BOUND, Operator, Outcome, Result, package_version, register
from runner.operators.sources import MissingMaterialError, NoiseSources

if TYPE_CHECKING:
    import torch

    from runner.encoders.resemblyzer import ResemblyzerEncoder

PGD_STEP_SCALE = 2.5


def surrogate_blake3(surrogate: str) -> str:
    """The checkpoint digest of a surrogate, as its encoder records it (found without importing torch)."""
    if surrogate == "mfcc-stats":
        return resolve_config(asdict(MfccConfig())).checkpoint_blake3
    if surrogate == "resemblyzer":
        spec = importlib.util.find_spec("resemblyzer")
        if spec is None or not spec.submodule_search_locations:
            raise ValueError("the resemblyzer surrogate needs the resemblyzer package (extra `runner`)")
        return resolve_file(Path(next(iter(spec.submodule_search_locations))) / "pretrained.pt").checkpoint_blake3
    raise ValueError(f"unknown surrogate {surrogate!r}")


@dataclass(frozen=True)
class Surrogate:
    """A surrogate: the encoder of the run it stands for (reference embeddings) and its torch forward pass."""

    encoder: Encoder
    forward: Callable[[torch.Tensor], torch.Tensor]


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


class TorchResemblyzer:
    """Resemblyzer's front end (volume to -30 dBFS, increase only; librosa's power mel spectrogram, 1.6 s partials)
    and its LSTM, in float64 torch, on a copy of the encoder's model; the mean of the partial embeddings."""

    def __init__(self, encoder: ResemblyzerEncoder) -> None:
        import copy

        import librosa
        import torch
        from resemblyzer import hparams

        self.encoder = encoder
        self.model = copy.deepcopy(encoder.model).double()
        self.n_fft = int(hparams.sampling_rate * hparams.mel_window_length / 1000)
        self.hop = int(hparams.sampling_rate * hparams.mel_window_step / 1000)
        self.window = torch.hann_window(self.n_fft, periodic=True, dtype=torch.float64)
        basis = librosa.filters.mel(sr=hparams.sampling_rate, n_fft=self.n_fft, n_mels=hparams.mel_n_channels)
        self.basis = torch.from_numpy(basis.astype(np.float64))

    def __call__(self, wave: torch.Tensor) -> torch.Tensor:
        import torch

        options = self.encoder.options
        if options["normalize_volume"]:
            change = options["target_dbfs"] - 10.0 * torch.log10(torch.mean(wave**2))
            wave = wave * torch.where(change > 0, 10.0 ** (change / 20.0), torch.ones_like(change))
        wave_slices, mel_slices = self.encoder.model.compute_partial_slices(
            len(wave), options["partials_rate"], options["min_coverage"]
        )
        needed = wave_slices[-1].stop
        if needed >= len(wave):
            wave = torch.nn.functional.pad(wave, (0, needed - len(wave)))
        spectrum = torch.stft(
            wave, self.n_fft, self.hop, window=self.window, center=True, pad_mode="constant", return_complex=True
        )
        mel = (self.basis @ spectrum.abs() ** 2).T
        return self.model(torch.stack([mel[piece] for piece in mel_slices])).mean(dim=0)


@functools.lru_cache(maxsize=2)
def load_surrogate(name: str) -> Surrogate:
    """The named surrogate on the CPU (its encoder loaded once per process)."""
    from runner.encoders.batching import BatchPolicy

    if name == "mfcc-stats":
        mfcc = MfccStatsEncoder.load("surrogate", None, "cpu", "fp32", BatchPolicy())
        return Surrogate(mfcc, TorchMfccStats(mfcc.config))
    from runner.encoders.resemblyzer import ResemblyzerEncoder

    resemblyzer = ResemblyzerEncoder.load("surrogate", None, "cpu", "fp32", BatchPolicy())
    return Surrogate(resemblyzer, TorchResemblyzer(resemblyzer))


@register
@dataclass(frozen=True)
class AdversarialPerturbation(Operator):
    """FGSM or PGD (``epsilon_db`` of the peak for L-inf, of the signal's L2 norm for L2) against ``surrogate``,
    away from the reference; the realised SNR in ``snr_db_realised``."""

    name = "adversarial"
    attack: Literal["fgsm", "pgd"] = "fgsm"
    norm: Literal["linf", "l2"] = "linf"
    epsilon_db: float = -40.0
    steps: int = 10
    reference_utterances: int = 8
    surrogate: Literal["mfcc-stats", "resemblyzer"] = "mfcc-stats"
    surrogate_blake3: str = ""
    sources: NoiseSources | None = field(default=None, compare=False, repr=False, metadata=BOUND)

    def check(self) -> None:
        if not -80.0 <= self.epsilon_db <= 0.0:
            raise ValueError(f"epsilon_db must be within [-80, 0], got {self.epsilon_db}")
        if not 1 <= self.steps <= 1000:
            raise ValueError(f"steps must be within [1, 1000], got {self.steps}")
        if not 1 <= self.reference_utterances <= 1000:
            raise ValueError(f"reference_utterances must be within [1, 1000], got {self.reference_utterances}")
        expected = surrogate_blake3(self.surrogate)
        if self.surrogate_blake3 != expected:
            raise ValueError(
                f"surrogate_blake3 {self.surrogate_blake3!r} is not the {self.surrogate} surrogate's checkpoint "
                f"digest {expected}"
            )

    def describe(self) -> dict[str, Any]:
        return {**self.spec(), "torch": package_version("torch"), "budget": self.budget_text()}

    def budget_text(self) -> str:
        """The budget in words, with the SNR it gives (see the module docstring)."""
        if self.norm == "l2":
            return (
                f"||delta||_2 = {self.epsilon_db:g} dB of ||x||_2: an SNR of {-self.epsilon_db:g} dB (PGD inside "
                "the ball: at least that); the realised SNR is snr_db_realised in each outcome"
            )
        return (
            f"||delta||_inf = {self.epsilon_db:g} dB of the peak max|x|, not an SNR: FGSM's SNR is "
            f"{-self.epsilon_db:g} dB less the utterance's peak-to-RMS ratio in dB (PGD's at least that); the "
            "realised SNR is snr_db_realised in each outcome"
        )

    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        surrogate = load_surrogate(self.surrogate)
        encoder = surrogate.encoder
        if encoder.checkpoint.checkpoint_blake3 != self.surrogate_blake3:
            found = encoder.checkpoint.checkpoint_blake3
            return (
                wave,
                sr,
                Outcome.failed(f"the {self.surrogate} surrogate loaded has BLAKE3 {found}, not the declared one"),
            )
        if sr != encoder.sample_rate:
            return (
                wave,
                sr,
                Outcome.failed(f"the {self.surrogate} surrogate runs at {encoder.sample_rate} Hz, not {sr}"),
            )
        if len(wave) < encoder.min_samples:
            return (
                wave,
                sr,
                Outcome.failed(f"the {self.surrogate} surrogate needs at least {encoder.min_samples} samples"),
            )
        try:
            reference, label = self._reference(sr, utt_id)
        except MissingMaterialError as error:
            return wave, sr, Outcome.failed(f"adversarial reference: {error}")
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            delta, figures = self._perturbation(wave, reference, rng, surrogate.forward)
        finally:
            torch.set_num_threads(threads)
        signal = wave.astype(np.float64)
        out = (signal + delta).astype(np.float32)
        realised = out.astype(np.float64) - signal
        if not np.any(realised):
            return wave, sr, Outcome.failed(f"{self._label()}: the perturbation is zero after float32 rounding")
        snr = snr_db(signal, realised)
        reason = f"{self._label()}: {snr:.2f} dB SNR, against {self.surrogate}, away from {label}"
        return (
            out,
            sr,
            Outcome.applied(
                reason,
                **figures,
                snr_db_realised=snr,
                perturbation_db_linf=_db(float(np.abs(realised).max() / np.abs(signal).max())),
                surrogate_blake3=self.surrogate_blake3,
            ),
        )

    def _label(self) -> str:
        reference = "the peak" if self.norm == "linf" else "the signal's L2 norm"
        return f"{self.attack.upper()} {self.norm} at {self.epsilon_db:g} dB of {reference}"

    def _perturbation(
        self,
        wave: np.ndarray,
        reference: np.ndarray,
        rng: np.random.Generator,
        surrogate: Callable[[torch.Tensor], torch.Tensor],
    ) -> tuple[np.ndarray, dict[str, float]]:
        """The perturbation to add, and the surrogate's cosines to the reference before and after it."""
        delta, before, after = self._craft(wave, reference, rng, surrogate)
        return delta, {"surrogate_cosine_before": before, "surrogate_cosine_after": after}

    def budget(self, wave: np.ndarray) -> float:
        """The perturbation's allowed norm for this wave (see the module docstring)."""
        signal = wave.astype(np.float64)
        size = np.abs(signal).max() if self.norm == "linf" else np.linalg.norm(signal)
        return float(size * 10.0 ** (self.epsilon_db / 20.0))

    def _reference(self, sr: int, utt_id: str | None) -> tuple[np.ndarray, str]:
        """The enrolment speaker's mean surrogate embedding over the speaker's other utterances, and a label."""
        if self.sources is None:
            raise MissingMaterialError(
                "the enrolment speaker's embedding needs the corpus utterance table; none is bound"
            )
        speaker = self.sources.speaker_of(utt_id, "corpus")
        table = self.sources.corpus_table()
        rows = table[(table["speaker"] == speaker) & (table["utt_id"] != utt_id)].head(self.reference_utterances)
        if rows.empty:
            raise MissingMaterialError(f"speaker {speaker!r} has no other utterance to enrol from")
        vectors = [_embedding(self.surrogate, self.sources, str(path), sr) for path in rows["path"]]
        return np.mean(vectors, axis=0), f"speaker {speaker!r} ({len(vectors)} other utterances)"

    def _craft(
        self,
        wave: np.ndarray,
        reference: np.ndarray,
        rng: np.random.Generator,
        surrogate: Callable[[torch.Tensor], torch.Tensor],
    ) -> tuple[np.ndarray, float, float]:
        """The perturbation, and the surrogate cosine to the reference before and after it."""
        import torch

        x = torch.from_numpy(wave.astype(np.float64))
        epsilon = self.budget(wave)
        cosine = functools.partial(_surrogate_cosine, surrogate, x, torch.from_numpy(reference.astype(np.float64)))

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


@register
@dataclass(frozen=True)
class MatchedNoise(AdversarialPerturbation):
    """The control of an attack: noise of the attack's size (L2 and L-inf norms) in a random direction."""

    name = "matched_noise"

    def stream_spec(self) -> dict[str, Any]:
        """The attack's spec: the control draws the attack's own stream, so it crafts the very perturbation the
        attack adds to this utterance (PGD's random start included) before it draws its direction."""
        return {**self.spec(), "name": AdversarialPerturbation.name}

    def _label(self) -> str:
        return f"random-direction noise of the size of {super()._label()}"

    def _perturbation(
        self,
        wave: np.ndarray,
        reference: np.ndarray,
        rng: np.random.Generator,
        surrogate: Callable[[torch.Tensor], torch.Tensor],
    ) -> tuple[np.ndarray, dict[str, float]]:
        """Random-direction noise of the attack's size, the surrogate's cosines after it and after the attack, and
        the cosine between the two perturbations."""
        import torch

        attack, before, attacked = self._craft(wave, reference, rng, surrogate)
        noise = matched_noise(attack, self.norm, rng)
        x, target = torch.from_numpy(wave.astype(np.float64)), torch.from_numpy(reference.astype(np.float64))
        with torch.no_grad():
            after = float(_surrogate_cosine(surrogate, x, target, torch.from_numpy(noise)))
        return noise, {
            "surrogate_cosine_before": before,
            "surrogate_cosine_after": after,
            "attack_surrogate_cosine_after": attacked,
            "attack_direction_cosine": _cosine(noise, attack),
        }


def matched_noise(attack: np.ndarray, norm: Literal["linf", "l2"], rng: np.random.Generator) -> np.ndarray:
    """A random-direction perturbation of ``attack``'s size: for ``l2`` a Gaussian direction scaled to its L2 norm;
    for ``linf`` its magnitudes in a random order with random signs (its L-inf norm, its energy, every norm kept).

    Example:
        >>> attack = np.array([0.5, -0.5, 0.25, 0.0])
        >>> noise = matched_noise(attack, "linf", np.random.default_rng(0))
        >>> sorted(np.abs(noise).tolist()) == sorted(np.abs(attack).tolist())
        True
        >>> noise = matched_noise(attack, "l2", np.random.default_rng(0))
        >>> bool(np.isclose(np.linalg.norm(noise), np.linalg.norm(attack)))
        True
    """
    if norm == "l2":
        direction = rng.standard_normal(len(attack))
        return direction * (np.linalg.norm(attack) / np.linalg.norm(direction))
    signs = rng.integers(0, 2, len(attack)) * 2.0 - 1.0
    return signs * rng.permutation(np.abs(attack))


def snr_db(signal: np.ndarray, perturbation: np.ndarray) -> float:
    """10 log10 of the signal's energy over the perturbation's (inf for no perturbation).

    >>> round(snr_db(np.ones(4), np.full(4, 0.1)), 6)
    20.0
    """
    energy = float(np.dot(perturbation, perturbation))
    return float(10.0 * np.log10(float(np.dot(signal, signal)) / energy)) if energy > 0 else float("inf")


def _cosine(first: np.ndarray, second: np.ndarray) -> float:
    """The cosine between two vectors (0 when either is zero)."""
    size = float(np.linalg.norm(first) * np.linalg.norm(second))
    return float(first @ second) / size if size > 0 else 0.0


def _surrogate_cosine(
    surrogate: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, target: torch.Tensor, delta: torch.Tensor
) -> torch.Tensor:
    """The cosine between the surrogate embedding of ``x + delta`` and ``target``."""
    import torch

    return torch.nn.functional.cosine_similarity(surrogate(x + delta), target, dim=0)


@functools.lru_cache(maxsize=4096)
def _embedding(surrogate: str, sources: NoiseSources, path: str, sr: int) -> np.ndarray:
    """The surrogate encoder's embedding of one corpus utterance (memoised: references repeat per speaker)."""
    return load_surrogate(surrogate).encoder.embed([sources.corpus_audio(path, sr)], sr)[0]


def _db(ratio: float) -> float:
    return float(20.0 * np.log10(ratio)) if ratio > 0 else float("-inf")
