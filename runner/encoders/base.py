"""The encoder interface and ``load_encoder``, which turns (kind, label, checkpoint) into a frozen encoder.

Every adapter implements ``_embed_batch`` on waveforms already checked, resampled to its own rate and passed
through its optional per-utterance ``_preprocess``;
``Encoder.embed`` does the rest the same way for all of them: validation, resampling (see
``batching.resample``), length-bucketed batching, putting the rows back in input order, and L2 normalisation.
Adapters are imported only when their kind is loaded, so reading a roster needs none of torch, speechbrain,
transformers or onnxruntime.
"""

from __future__ import annotations

import importlib
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import numpy as np

from runner.encoders.batching import BatchPolicy, checked_waves, plan_batches, resample
from runner.encoders.checkpoint import CheckpointRecord, EncoderConfigError, verify_pin
from schemas import Error

Dtype = Literal["fp32", "bf16", "fp16"]
DTYPES: tuple[str, ...] = ("fp32", "bf16", "fp16")

# kind -> "module:Class"; the single list of loader kinds (the roster validates against it).
ENCODER_KINDS: dict[str, str] = {
    "resemblyzer": "runner.encoders.resemblyzer:ResemblyzerEncoder",
    "speechbrain": "runner.encoders.speechbrain:SpeechBrainEncoder",
    "campplus": "runner.encoders.campplus:CampplusEncoder",
    "transformers_xvector": "runner.encoders.transformers_xvector:TransformersXVectorEncoder",
    "transformers_ssl": "runner.encoders.transformers_ssl:TransformersSSLEncoder",
    "mfcc": "runner.encoders.mfcc:MfccStatsEncoder",
    "onnx": "runner.encoders.onnx:OnnxEncoder",
    "aasist": "runner.encoders.aasist:AasistCountermeasure",  # a countermeasure: scores, not embeddings
}


class EncoderHandle(Protocol):
    """What a run uses of an encoder: its checkpoint record and its forward pass (an ``Encoder``, or a wrapper
    that loads one when first needed)."""

    @property
    def checkpoint(self) -> CheckpointRecord: ...

    def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray: ...


class Encoder(ABC):
    """A frozen speaker (or SSL) encoder: waveforms in, L2-normalised float32 embeddings out."""

    kind: ClassVar[str]

    def __init__(self, record: CheckpointRecord, sample_rate: int, policy: BatchPolicy, min_samples: int = 1) -> None:
        self._record = record
        self.sample_rate = sample_rate
        self.policy = policy
        self.min_samples = min_samples

    # Each adapter defines the classmethod
    # ``load(label, checkpoint, device, dtype, policy, *, <its own options>) -> Self``.
    load: ClassVar[Callable[..., Encoder]]

    @property
    def checkpoint(self) -> CheckpointRecord:
        return self._record

    @property
    def label(self) -> str:
        return self._record.label

    def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray:
        """Embeddings of ``waves`` (all at rate ``sr``), shape (n, d), float32, each row of unit L2 norm.

        Inputs at another rate than the model's are resampled first (``batching.resample``).
        """
        if len(waves) == 0:
            raise ValueError("embed() needs at least one waveform")
        model_waves = [resample(w, sr, self.sample_rate) for w in checked_waves(waves, 1)]
        model_waves = [self._preprocess(i, w) for i, w in enumerate(checked_waves(model_waves, self.min_samples))]
        rows: list[np.ndarray | None] = [None] * len(model_waves)
        for batch in plan_batches([len(w) for w in model_waves], self.policy, self.sample_rate):
            vectors = self._embed_batch([model_waves[i] for i in batch])
            for index, vector in zip(batch, vectors, strict=True):
                rows[index] = vector
        return l2_normalise(np.stack([r for r in rows if r is not None]))

    def _preprocess(self, index: int, wave: np.ndarray) -> np.ndarray:
        """Per-utterance front end before batching (``index`` is the input position, for errors)."""
        return wave

    @abstractmethod
    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        """Raw (unnormalised) embeddings, one row per waveform, of waveforms at ``self.sample_rate``."""


class EmbeddingValueError(Error, FloatingPointError):
    """Rows of an encoder's output that are zero or not finite (``rows``: their input positions)."""

    reason = "the encoder produced a zero or non-finite embedding"

    def __init__(self, rows: list[int]) -> None:
        super().__init__(f"the encoder produced zero or non-finite embeddings for rows {rows}")
        self.rows = rows


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (float32); an all-zero row is an error, never a silent NaN."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if not np.all(np.isfinite(vectors)) or np.any(norms == 0):
        raise EmbeddingValueError(np.flatnonzero(~np.isfinite(vectors).all(axis=1) | (norms[:, 0] == 0)).tolist())
    return (vectors / norms).astype(np.float32)


def encoder_class(kind: str, label: str) -> type[Encoder]:
    """The adapter class of ``kind`` (imported on demand)."""
    if kind not in ENCODER_KINDS:
        raise EncoderConfigError(label, f"unknown loader kind {kind!r}; expected one of {sorted(ENCODER_KINDS)}")
    module_name, class_name = ENCODER_KINDS[kind].split(":")
    cls: type[Encoder] = getattr(importlib.import_module(module_name), class_name)
    return cls


def load_encoder(
    kind: str,
    label: str,
    checkpoint: Path | None,
    device: str = "cpu",
    dtype: Dtype = "fp32",
    *,
    max_batch_size: int = 32,
    max_batch_seconds: float = 320.0,
    expected_blake3: str | None = None,
    **options: Any,
) -> Encoder:
    """Load the encoder ``label`` of loader ``kind`` from ``checkpoint``; frozen, in eval mode, no gradients.

    ``max_batch_seconds`` bounds the padded audio per forward pass. Options an adapter
    does not declare are an error rather than ignored. A missing or partial checkpoint raises
    ``CheckpointError`` naming the path, and so does a checkpoint whose digest is not ``expected_blake3``
    when the roster pins one.
    """
    cls = encoder_class(kind, label)
    if dtype not in DTYPES:
        raise EncoderConfigError(label, f"unknown dtype {dtype!r}; expected one of {list(DTYPES)}")
    parameters = inspect.signature(cls.load).parameters.values()
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):  # else the adapter checks them
        accepted = {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
        unknown = sorted(set(options) - accepted)
        if unknown:
            raise EncoderConfigError(label, f"options {unknown} are not options of kind {kind!r} {sorted(accepted)}")
    policy = BatchPolicy(max_batch_size=max_batch_size, max_batch_seconds=max_batch_seconds)
    encoder = cls.load(label, None if checkpoint is None else Path(checkpoint), device, dtype, policy, **options)
    verify_pin(encoder.checkpoint, expected_blake3, None if checkpoint is None else Path(checkpoint))
    return encoder
