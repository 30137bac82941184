"""SpeechBrain ``EncoderClassifier`` (ECAPA-TDNN, x-vector, ResNet and friends) from a local folder, offline.

The folder holds ``hyperparams.yaml`` and the files its ``pretrainer`` loads (``embedding_model.ckpt`` and
so on). It is loaded through ``EncoderClassifier.from_hparams(source=folder, savedir=<fresh temp dir>)`` with
network fetching disabled and ``LocalStrategy.NO_LINK``, so every file is read from the folder itself: a
hyperparams file that names a hub id as ``pretrained_path`` is overridden to the folder, and any pretrainer
path outside the folder is a ``CheckpointError``, and so is a checkpoint file that lacks any parameter of its
module (speechbrain itself only logs that and keeps the random initialisation). The folder may be made of links
(the Hugging Face cache's ``snapshots/<rev>/``, SpeechBrain's own ``pretrained_models/<name>/``): each must lead to
a regular file, whose content the record digests under the link's name. ``unused_checkpoint_keys`` lists, per
module, the keys of its file that its SpeechBrain loader does not read: the state dict's for a module loaded by
``load_state_dict``, the statistics ``_load_statistics_dict`` reads for an ``InputNormalization`` (``_load``). A fresh
savedir matters: speechbrain reuses whatever file it finds in a savedir, which would let stale weights stand
in for the folder's.

Batching: ECAPA-TDNN and the x-vector batch padded, length-bucketed utterances, and the batched embeddings equal
the one-at-a-time ones within float rounding (checked on tiny and real-size checkpoints). speechbrain's own
``encode_batch(wavs, wav_lens)`` does not give that: a padded row's filterbank has frames past the
utterance's end that still overlap its last samples (and take part in the row's 80 dB log-mel floor), relative
lengths taken on samples miscount frames, and even exact ``frames / longest`` in float32, times ``longest``,
lands above ``frames`` for about one pair in twenty, which lets one padding frame into the masks; its "same"
convolutions reflect each row at the batch's end rather than the row's own. So here: the filterbank runs on each
utterance alone and the features are zero-padded; lengths are relative frame counts, stepped down by one float32
ulp where needed (``relative_lengths``), so the sentence normalisation, the masked SE and attentive pooling and
the x-vector's statistics pooling all count each row's own frames; and forward pre-hooks on every padded
convolution (``ReflectPastEnd``) write past each row's end the reflection speechbrain gives that row alone, so
no valid frame ever sees another row's padding. The x-vector's statistics pooling adds Gaussian dither of 1e-5
to 9e-5 to the pooled means, even at inference, drawn over the whole batch and from the global RNG: it is drawn
here once per forward from a fixed seed for one row and added to every row (speechbrain's own draw, for one
utterance), so embeddings are reproducible and independent of their batch. Other embedding models (not checked
here) batch only utterances of equal length. The choice is recorded in the checkpoint record.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import (
    CheckpointError,
    CheckpointRecord,
    require_folder,
    require_regular_files,
    resolve_folder,
)
from runner.encoders.torch_runtime import (
    deterministic_settings,
    force_offline,
    freeze,
    inference,
    torch_device,
)

# Embedding models whose padded batches are made exact here; their input normalisation must be per sentence or
# global (a "batch" normalisation mixes the rows of a batch whatever the padding).
EXACT_PADDING_MODELS = ("speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN", "speechbrain.lobes.models.Xvector.Xvector")
ROW_NORMALISATIONS = ("sentence", "global")
PADDING = "per-utterance filterbank, relative frame lengths, each row reflected at its own end"
POOLING_NOISE_SEED = 0
CHECKPOINT_FOLDER = "$CHECKPOINT"  # how the record writes the checkpoint folder an override points to


class SpeechBrainEncoder(Encoder):
    """``EncoderClassifier`` embeddings (before any classifier head), batched as the module docstring says."""

    kind: ClassVar[str] = "speechbrain"

    def __init__(self, record: CheckpointRecord, classifier: Any, sample_rate: int, policy: BatchPolicy) -> None:
        super().__init__(record, sample_rate, policy, min_samples=sample_rate // 10)
        self.classifier = classifier
        self.device = torch.device(record.runtime["device"])
        self.dtype = record.runtime["dtype"]
        # Equal-length batches never pad, and models not checked here may hold convolutions the hooks cannot fix.
        self.padding = None if policy.equal_length_only else ReflectPastEnd(classifier.mods.embedding_model)

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
    ) -> SpeechBrainEncoder:
        folder = require_folder(checkpoint, label, [hparams_file]).resolve()
        require_regular_files(folder, label)
        resolved_device = torch_device(device, label)
        runtime = deterministic_settings(resolved_device, dtype, label)
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
            if not Path(os.path.abspath(path)).is_relative_to(folder):  # the link's place, not its target's
                raise CheckpointError(path, f"pretrainer file {name!r} lies outside the checkpoint folder")
        unused = _verify_complete(pretrainer)
        freeze(classifier)
        sample_rate = _sample_rate(classifier)
        resolved = resolve_folder(folder)
        model = classifier.mods.embedding_model
        class_name = f"{type(model).__module__}.{type(model).__qualname__}"
        normalisation = getattr(classifier.mods.mean_var_norm, "norm_type", None)
        exact = class_name in EXACT_PADDING_MODELS and normalisation in ROW_NORMALISATIONS
        policy = replace(policy, equal_length_only=not exact)
        batching = {**policy.as_dict(), "padding": PADDING if exact else "none: equal lengths only"}
        if _seed_pooling_noise(model):
            batching["statistics_pooling_noise"] = f"one draw for one row, seed {POOLING_NOISE_SEED}, every row"
        record = CheckpointRecord(
            label=label,
            kind=cls.kind,
            class_name=class_name,
            config={
                "interface": "speechbrain.inference.speaker.EncoderClassifier",
                "hparams_file": hparams_file,
                "overrides": {key: CHECKPOINT_FOLDER for key in overrides},  # the folder, wherever it lies
                "loadables": sorted(pretrainer.loadables),
                "unused_checkpoint_keys": unused,
                "sample_rate": sample_rate,
            },
            files=resolved.files,
            checkpoint_blake3=resolved.checkpoint_blake3,
            name=resolved.name,
            runtime={**runtime, "speechbrain": _package_version(), "batching": batching},
        )
        return cls(record, classifier, sample_rate, policy)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        """``encode_batch``'s three steps (features, input normalisation, embedding model) on a padded batch."""
        mods = self.classifier.mods
        with inference(self.device, self.dtype):
            feats = [mods.compute_features(torch.from_numpy(wave)[None].to(self.device))[0] for wave in waves]
            frames = [len(f) for f in feats]
            relative = relative_lengths(frames).to(self.device)
            batch = mods.mean_var_norm(torch.nn.utils.rnn.pad_sequence(feats, batch_first=True), relative)
            with self.padding.past(frames) if self.padding else contextlib.nullcontext():
                embeddings = mods.embedding_model(batch, relative)
        return embeddings.float().squeeze(1).cpu().numpy()


def relative_lengths(frames: Sequence[int]) -> torch.Tensor:
    """``frames / longest`` in float32, one ulp lower where ``relative * longest`` would exceed ``frames``.

    speechbrain turns relative lengths back into frames as ``relative * steps``, then rounds it (input
    normalisation, statistics pooling) or compares ``arange(steps) < relative * steps`` (ECAPA's masks): the
    product must lie in ``(frames - 0.5, frames]`` for every consumer to count exactly ``frames``.
    """
    counts = torch.tensor(frames, dtype=torch.float32)
    longest = int(max(frames))
    relative = counts / longest
    return torch.where(relative * longest > counts, torch.nextafter(relative, torch.zeros(())), relative)


class ReflectPastEnd:
    """Forward pre-hooks on a model's "same"-padded speechbrain convolutions that give each row of a padded batch
    the reflect padding it would get alone: its first frames past its own end become the reflection of its last
    ones (a convolution's outputs at valid frames read no further than that). Inactive outside ``past``.
    """

    def __init__(self, model: torch.nn.Module) -> None:
        from speechbrain.nnet.CNN import Conv1d

        self.frames: list[int] | None = None
        for conv in model.modules():
            if isinstance(conv, Conv1d) and conv.padding == "same" and conv.kernel_size > 1:
                if conv.padding_mode != "reflect" or conv.stride != 1:
                    raise ValueError(f"{conv}: only stride-1 reflect-padded convolutions keep padded batches exact")
                conv.register_forward_pre_hook(self._reflect)

    @contextlib.contextmanager
    def past(self, frames: list[int]) -> Iterator[None]:
        """Active for one forward pass over rows of ``frames`` valid steps each."""
        self.frames = frames
        try:
            yield
        finally:
            self.frames = None

    def _reflect(self, conv: Any, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...] | None:
        values = args[0]
        steps = values.shape[-1 if conv.skip_transpose else 1]
        short = [(row, n) for row, n in enumerate(self.frames or []) if n < steps]
        if not short:
            return None
        width = conv.dilation * (conv.kernel_size - 1) // 2
        values = values.clone()
        view = values if conv.skip_transpose else values.transpose(1, 2)  # (batch, channels, time)
        for row, n in short:
            reach = min(width, steps - n)
            view[row, :, n : n + reach] = view[row, :, n - 1 - reach : n - 1].flip(-1)
        return (values, *args[1:])


def _seed_pooling_noise(model: torch.nn.Module) -> bool:
    """Make each ``StatisticsPooling``'s dither one seeded draw for one row, added to every row; True if any."""
    from speechbrain.nnet.pooling import StatisticsPooling

    poolings = [m for m in model.modules() if isinstance(m, StatisticsPooling) and m.return_mean]
    for pooling in poolings:
        draw = pooling._get_gauss_noise

        def seeded(shape: torch.Size, device: Any = "cpu", draw: Any = draw) -> torch.Tensor:
            cuda = [device] if torch.device(device).type == "cuda" else []
            with torch.random.fork_rng(devices=cuda):
                torch.manual_seed(POOLING_NOISE_SEED)
                row = draw((1, *shape[1:]), device=device)
            return row.expand(shape)

        setattr(pooling, "_get_gauss_noise", seeded)  # noqa: B010  (an instance override of speechbrain's method)
    return bool(poolings)


def _verify_complete(pretrainer: Any) -> dict[str, list[str]]:
    """Fail if a module's checkpoint file lacks any of its parameters; return the keys nothing used.

    speechbrain transfers parameters with ``strict=False`` and only logs what is missing, which would leave
    those parameters at their random initialisation. A module SpeechBrain loads through its own ``_load`` (an
    ``InputNormalization``: ``torch.load`` then ``_load_statistics_dict``) uses the statistics that method reads.
    """
    from speechbrain.utils.checkpoints import torch_patched_state_dict_load

    unused: dict[str, list[str]] = {}
    for name, module in pretrainer.loadables.items():
        if not isinstance(module, torch.nn.Module):
            continue
        path = pretrainer.paths[name]
        saved = torch_patched_state_dict_load(path, "cpu")
        expected = set(module.state_dict())
        if hasattr(module, "_load_statistics_dict"):
            expected |= _statistics_read(module, saved)
        if expected - set(saved):
            raise CheckpointError(path, f"lacks parameters of {name!r}: {sorted(expected - set(saved))[:5]}")
        if set(saved) - expected:
            unused[name] = sorted(set(saved) - expected)
    return unused


class _ReadKeys(dict[str, Any]):
    """A dict that remembers which keys were read."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


def _statistics_read(module: torch.nn.Module, saved: dict[str, Any]) -> set[str]:
    """The keys of a statistics file that ``module._load_statistics_dict`` reads, on a copy (the module keeps what
    the pretrainer loaded; a key the file lacks has already failed that load)."""
    keys = _ReadKeys(saved)
    loader: Any = copy.deepcopy(module)  # speechbrain's InputNormalization, untyped
    loader._load_statistics_dict(keys)
    return keys.read


def _sample_rate(classifier: Any) -> int:
    """The rate the model expects: ``sample_rate`` in the hyperparameters, else its Fbank front end's rate."""
    declared = getattr(classifier.hparams, "sample_rate", None)
    if declared is not None:
        return int(declared)
    return int(classifier.mods.compute_features.compute_STFT.sample_rate)


def _package_version() -> str:
    from importlib.metadata import version

    return version("speechbrain")
