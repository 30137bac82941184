"""SpeechBrain ``EncoderClassifier`` (ECAPA-TDNN, x-vector, ResNet and friends) from a local folder, offline.

The folder holds ``hyperparams.yaml`` and the files its ``pretrainer`` loads (``embedding_model.ckpt`` and
so on). It is loaded through ``EncoderClassifier.from_hparams(source=folder, savedir=<fresh temp dir>)`` with
network fetching disabled and ``LocalStrategy.NO_LINK``, so every file is read from the folder itself: a
hyperparams file that names a hub id as ``pretrained_path`` is overridden to the folder, and any pretrainer
path that still resolves outside the folder is a ``CheckpointError``, and so is a checkpoint file that lacks
any parameter of its module (speechbrain itself only logs that and keeps the random initialisation). A fresh
savedir matters: speechbrain reuses whatever file it finds in a savedir, which would let stale weights stand
in for the folder's.

Batching: by default only utterances of equal length share a forward pass, so batched embeddings equal the
one-at-a-time ones (within float rounding) and an embedding never depends on which other utterances were in
its batch. ``padded_batches=True`` opts in to speechbrain's own recipe practice: zero-padded batches with
relative lengths (``wav_lens``), which the sentence normalisation and the pooling honour but the STFT, the
80 dB floor of the log-mel and the reflect-padded convolutions do not, so embeddings near a padding boundary
change (a tiny random ECAPA gave cosines down to 0.79 against unbatched; trained models differ less). The
choice is recorded.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy, pad_batch
from runner.encoders.checkpoint import CheckpointError, CheckpointRecord, require_folder, resolve_folder
from runner.encoders.torch_runtime import (
    deterministic_settings,
    force_offline,
    freeze,
    inference,
    torch_device,
)


class SpeechBrainEncoder(Encoder):
    """``EncoderClassifier.encode_batch`` embeddings (before any classifier head)."""

    kind: ClassVar[str] = "speechbrain"

    def __init__(self, record: CheckpointRecord, classifier: Any, sample_rate: int, policy: BatchPolicy) -> None:
        super().__init__(record, sample_rate, policy, min_samples=sample_rate // 10)
        self.classifier = classifier
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
        hparams_file: str = "hyperparams.yaml",
        padded_batches: bool = False,
    ) -> SpeechBrainEncoder:
        policy = replace(policy, equal_length_only=not padded_batches)
        folder = require_folder(checkpoint, label, [hparams_file]).resolve()
        resolved_device = torch_device(device, label)
        runtime = deterministic_settings(resolved_device, dtype)
        force_offline()
        from speechbrain.inference.speaker import EncoderClassifier
        from speechbrain.utils.fetching import FetchConfig, LocalStrategy

        hparams_text = (folder / hparams_file).read_text(encoding="utf-8")
        overrides = {"pretrained_path": str(folder)} if re.search(r"^pretrained_path\s*:", hparams_text, re.M) else {}
        with tempfile.TemporaryDirectory(prefix="speechbrain-savedir-") as savedir:
            try:
                classifier = EncoderClassifier.from_hparams(
                    source=str(folder),
                    hparams_file=hparams_file,
                    overrides=overrides,
                    savedir=savedir,
                    local_strategy=LocalStrategy.NO_LINK,
                    fetch_config=FetchConfig(allow_network=False),
                    run_opts={"device": str(resolved_device)},
                    freeze_params=True,
                )
            except FileNotFoundError as error:
                missing = error.filename or folder
                raise CheckpointError(missing, f"checkpoint file of encoder {label!r} is missing") from error
            except Exception as error:  # torch.load and hyperpyyaml raise many types for unreadable files
                problem = f"speechbrain could not load encoder {label!r}: {error!r}"
                raise CheckpointError(folder, problem) from error
        pretrainer = classifier.hparams.pretrainer
        for name, path in pretrainer.paths.items():
            if not Path(path).resolve().is_relative_to(folder):
                raise CheckpointError(path, f"pretrainer file {name!r} resolves outside the checkpoint folder")
        unused = _verify_complete(pretrainer)
        freeze(classifier)
        sample_rate = _sample_rate(classifier)
        resolved = resolve_folder(folder)
        model = classifier.mods.embedding_model
        record = CheckpointRecord(
            label=label,
            kind=cls.kind,
            class_name=f"{type(model).__module__}.{type(model).__qualname__}",
            config={
                "interface": "speechbrain.inference.speaker.EncoderClassifier",
                "hparams_file": hparams_file,
                "overrides": overrides,
                "loadables": sorted(pretrainer.loadables),
                "unused_checkpoint_keys": unused,
                "sample_rate": sample_rate,
            },
            files=resolved.files,
            checkpoint_blake3=resolved.checkpoint_blake3,
            path=resolved.path,
            runtime={**runtime, "speechbrain": _package_version(), "batching": policy.as_dict()},
        )
        return cls(record, classifier, sample_rate, policy)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        padded, lengths = pad_batch(waves)
        relative = torch.from_numpy(lengths / lengths.max()).float()
        with inference(self.device, self.dtype):
            embeddings = self.classifier.encode_batch(torch.from_numpy(padded), relative)
        return embeddings.float().squeeze(1).cpu().numpy()


def _verify_complete(pretrainer: Any) -> dict[str, list[str]]:
    """Fail if a module's checkpoint file lacks any of its parameters; return the keys nothing used.

    speechbrain transfers parameters with ``strict=False`` and only logs what is missing, which would leave
    those parameters at their random initialisation.
    """
    from speechbrain.utils.checkpoints import torch_patched_state_dict_load

    unused: dict[str, list[str]] = {}
    for name, module in pretrainer.loadables.items():
        if not isinstance(module, torch.nn.Module):
            continue
        path = pretrainer.paths[name]
        saved = set(torch_patched_state_dict_load(path, "cpu"))
        expected = set(module.state_dict())
        if expected - saved:
            raise CheckpointError(path, f"lacks parameters of {name!r}: {sorted(expected - saved)[:5]}")
        if saved - expected:
            unused[name] = sorted(saved - expected)
    return unused


def _sample_rate(classifier: Any) -> int:
    """The rate the model expects: ``sample_rate`` in the hyperparameters, else its Fbank front end's rate."""
    declared = getattr(classifier.hparams, "sample_rate", None)
    if declared is not None:
        return int(declared)
    return int(classifier.mods.compute_features.compute_STFT.sample_rate)


def _package_version() -> str:
    from importlib.metadata import version

    return version("speechbrain")
