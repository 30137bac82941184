"""Resemblyzer's ``VoiceEncoder`` (GE2E, 3-layer LSTM, 256-d) with the weights file shipped inside its wheel.

The embedded default encoder. The shipped ``pretrained.pt`` is resolved to its path in the installed package
and digested like any other checkpoint. Front end as in ``resemblyzer.preprocess_wav`` with one declared
difference: volume is normalised to -30 dBFS (increase only), but webrtcvad silence trimming is off by default
(``trim_silence=False``), because trimming would make the encoder see other audio than every other encoder.

An utterance is cut into 1.6 s partials (160 mel frames, rate 1.3 per second, last partial kept at 75 %
coverage); the utterance embedding is the normalised mean of its partial embeddings. Partials all have the
same length, so the partials of a whole batch of utterances go through the LSTM together without any padding,
and batched embeddings equal one-at-a-time ones within float rounding (tested to 1e-5).
"""

from __future__ import annotations

import importlib.resources
import warnings
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy, WaveformError
from runner.encoders.checkpoint import CheckpointError, CheckpointRecord, require_file, resolve_file
from runner.encoders.torch_runtime import deterministic_settings, freeze, inference, torch_device

TARGET_DBFS = -30


def shipped_weights() -> Path:
    """Path of the ``pretrained.pt`` inside the installed resemblyzer package."""
    return Path(str(importlib.resources.files("resemblyzer").joinpath("pretrained.pt")))


class ResemblyzerEncoder(Encoder):
    """Resemblyzer ``VoiceEncoder``; ``checkpoint=None`` means the weights shipped in the package."""

    kind: ClassVar[str] = "resemblyzer"

    def __init__(self, record: CheckpointRecord, model: Any, options: dict[str, Any], policy: BatchPolicy) -> None:
        from resemblyzer import hparams

        super().__init__(record, hparams.sampling_rate, policy, min_samples=hparams.sampling_rate // 40)
        self.model = model
        self.options = options
        self.device = torch.device(record.runtime["device"])
        self.dtype = record.runtime["dtype"]

    @classmethod
    def load(
        cls,
        label: str,
        checkpoint: Path | None,
        device: str,
        dtype: Dtype,
        policy: BatchPolicy,
        *,
        normalize_volume: bool = True,
        trim_silence: bool = False,
        partials_rate: float = 1.3,
        min_coverage: float = 0.75,
    ) -> ResemblyzerEncoder:
        with warnings.catch_warnings():  # webrtcvad's own pkg_resources import warns once per process
            warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
            from resemblyzer import VoiceEncoder

        weights = require_file(shipped_weights() if checkpoint is None else checkpoint, label)
        resolved_device = torch_device(device, label)
        runtime = deterministic_settings(resolved_device, dtype, label)
        try:
            model = VoiceEncoder(device=resolved_device, verbose=False, weights_fpath=weights)
            # VoiceEncoder loads with strict=False; a partial weights file must fail here instead. The shipped
            # file also holds the GE2E loss scale and bias, which inference does not use: they are recorded.
            state = torch.load(weights, map_location="cpu")["model_state"]
        except Exception as error:  # torch.load raises many types for unreadable files
            raise CheckpointError(weights, f"not a readable VoiceEncoder weights file: {error!r}") from error
        incompatible = model.load_state_dict(state, strict=False)
        if incompatible.missing_keys:
            raise CheckpointError(weights, f"weights lack VoiceEncoder parameters {incompatible.missing_keys}")
        freeze(model)
        resolved = resolve_file(weights)
        options = {
            "normalize_volume": normalize_volume,
            "target_dbfs": TARGET_DBFS,
            "trim_silence": trim_silence,
            "partials_rate": partials_rate,
            "min_coverage": min_coverage,
        }
        record = CheckpointRecord(
            label=label,
            kind=cls.kind,
            class_name="resemblyzer.VoiceEncoder",
            config={
                "shipped_with_package": checkpoint is None,
                "unused_checkpoint_keys": sorted(incompatible.unexpected_keys),
                **options,
            },
            files=resolved.files,
            checkpoint_blake3=resolved.checkpoint_blake3,
            name=resolved.name,
            runtime={**runtime, "resemblyzer": _package_version(), "batching": policy.as_dict()},
        )
        return cls(record, model, options, policy)

    def _preprocess(self, index: int, wave: np.ndarray) -> np.ndarray:
        """Volume normalisation and, if asked for, webrtcvad trimming (before batches are planned)."""
        from resemblyzer import audio

        if self.options["normalize_volume"]:  # digital silence never gets here (``checked_waves``)
            wave = audio.normalize_volume(wave, TARGET_DBFS, increase_only=True)
        if self.options["trim_silence"]:
            wave = audio.trim_long_silences(wave)
            if wave.size < self.min_samples:
                raise WaveformError(index, "no voiced audio left after webrtcvad silence trimming")
        return np.asarray(wave, dtype=np.float32)

    def _partials(self, wave: np.ndarray) -> np.ndarray:
        """The mel spectrograms of one utterance's partials, shape (n_partials, 160, 40)."""
        from resemblyzer import audio

        wave_slices, mel_slices = self.model.compute_partial_slices(
            len(wave), self.options["partials_rate"], self.options["min_coverage"]
        )
        needed = wave_slices[-1].stop
        if needed >= len(wave):
            wave = np.pad(wave, (0, needed - len(wave)))
        mel = audio.wav_to_mel_spectrogram(wave)
        return np.stack([mel[s] for s in mel_slices])

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        partials = [self._partials(w) for w in waves]
        mels = torch.from_numpy(np.concatenate(partials)).to(self.device)
        with inference(self.device, self.dtype):
            partial_embeddings = self.model(mels).float().cpu().numpy()
        bounds = np.cumsum([len(p) for p in partials])[:-1]
        return np.stack([chunk.mean(axis=0) for chunk in np.split(partial_embeddings, bounds)])


def _package_version() -> str:
    from importlib.metadata import version

    return version("resemblyzer")
