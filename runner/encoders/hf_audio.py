"""What the two transformers adapters share: offline loading from a local folder, preprocessing and masks.

A checkpoint folder needs ``config.json``, ``preprocessor_config.json`` (it fixes the sample rate and whether
each utterance is normalised to zero mean and unit variance, so it is required rather than guessed) and the
weights (``model.safetensors``, ``pytorch_model.bin`` or a sharded index with all its shards). Loading uses
``local_files_only=True`` with the hub switched off. Weights that lack a parameter of the model are an error:
transformers would otherwise initialise it at random with only a log line. Unused checkpoint keys (such as
a pre-training quantiser) are recorded.

Padding: every model gets length-bucketed padded batches with an attention mask. Models whose convolutional
feature encoder uses layer norm (``feat_extract_norm == "layer"``: the large wav2vec 2.0 / HuBERT / WavLM,
data2vec-audio) take the padded samples as they are. Models with group norm in the first convolution (the base
models) would normalise each channel over time including the padding (transformers advises not to pad them),
so their convolutional feature encoder runs on each utterance's own samples (``PerUtterance``, a small share of
the compute) and only the transformer, which honours the mask, sees a padded batch. A single positional
convolution sees zeros past each utterance's end either way (masked frames are zeroed before it);
data2vec-audio's stack of five does not, and runs per utterance as well. Padded batches then give the
one-at-a-time embeddings within float rounding (checked per family, and on the real-size checkpoints).
"""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import CheckpointError, CheckpointRecord, require_folder, resolve_folder
from runner.encoders.torch_runtime import deterministic_settings, force_offline, freeze, inference, torch_device

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
SHARD_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def require_transformers_folder(checkpoint: Path | None, label: str) -> Path:
    """The checkpoint folder after checking its config, preprocessor config and every weights file."""
    folder = require_folder(checkpoint, label, ["config.json", "preprocessor_config.json"])
    if any((folder / name).is_file() for name in WEIGHT_FILES):
        return folder
    for index_name in SHARD_INDEXES:
        index = folder / index_name
        if index.is_file():
            shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            for shard in shards:
                if not (folder / shard).is_file():
                    raise CheckpointError(folder / shard, f"weights shard of encoder {label!r} is missing")
            return folder
    raise CheckpointError(folder / WEIGHT_FILES[0], f"no weights file ({', '.join(WEIGHT_FILES)}) for {label!r}")


def conv_output_frames(lengths: np.ndarray, config: Any) -> np.ndarray:
    """Frames the convolutional feature encoder makes of ``lengths`` samples: L <- floor((L - k) / s) + 1."""
    frames = np.asarray(lengths, dtype=np.int64)
    for kernel, stride in zip(config.conv_kernel, config.conv_stride, strict=True):
        frames = (frames - kernel) // stride + 1
    return frames


def receptive_field(config: Any, frames: int = 1) -> int:
    """Samples the feature encoder needs for ``frames`` output frames (400 for one, usual stack)."""
    needed = frames
    for kernel, stride in reversed(list(zip(config.conv_kernel, config.conv_stride, strict=True))):
        needed = (needed - 1) * stride + kernel
    return needed


class PerUtterance(torch.nn.Module):
    """A module run on each row's own length along time, its outputs zero-padded back to the batch.

    ``lengths`` (valid steps of each row along input dimension ``time_in``) is set for each batch by
    ``HFAudioModel.forward``; unset, it is the wrapped module itself. Outputs are padded along ``time_out``.
    """

    def __init__(self, inner: torch.nn.Module, time_in: int, time_out: int) -> None:
        super().__init__()
        self.inner = inner
        self.time_in, self.time_out = time_in, time_out
        self.lengths: list[int] | None = None

    def forward(self, values: torch.Tensor) -> torch.Tensor:
        if self.lengths is None:
            return self.inner(values)
        outputs = [
            self.inner(values[row : row + 1].narrow(self.time_in, 0, length)) for row, length in enumerate(self.lengths)
        ]
        steps = max(output.shape[self.time_out] for output in outputs)
        padded = []
        for output in outputs:
            widths = [0, 0] * (output.dim() - self.time_out - 1) + [0, steps - output.shape[self.time_out]]
            padded.append(torch.nn.functional.pad(output, widths))
        return torch.cat(padded)


class HFAudioModel:
    """A frozen transformers audio model with its feature extractor, device and precision."""

    def __init__(self, model: Any, feature_extractor: Any, device: torch.device, dtype: str) -> None:
        self.model = model
        self.feature_extractor = feature_extractor
        self.device = device
        self.dtype = dtype
        self.config = model.config
        base = model.base_model
        self.group_norm = getattr(model.config, "feat_extract_norm", "layer") != "layer"
        self.per_utterance: PerUtterance | None = None
        if self.group_norm:  # (batch, samples) -> (batch, channels, frames)
            self.per_utterance = PerUtterance(base.feature_extractor, time_in=1, time_out=2)
            base.feature_extractor = self.per_utterance
        # data2vec-audio's positional embedding stacks five convolutions with layer norms: padding that the
        # first one turns non-zero reaches valid frames through the next. Run it per utterance too.
        self.per_utterance_positions: PerUtterance | None = None
        if model.config.model_type == "data2vec-audio":  # (batch, frames, channels) -> same
            self.per_utterance_positions = PerUtterance(base.encoder.pos_conv_embed, time_in=1, time_out=1)
            base.encoder.pos_conv_embed = self.per_utterance_positions
        self.sample_rate = int(feature_extractor.sampling_rate)
        self.unused_keys: list[str] = []

    def inputs(self, waves: list[np.ndarray]) -> dict[str, torch.Tensor]:
        """Padded input values, normalised per the preprocessor config over each utterance, and the mask."""
        features = self.feature_extractor(
            waves,
            sampling_rate=self.sample_rate,
            padding=True,
            return_attention_mask=True,
            return_tensors="pt",
        )
        return {
            "input_values": features["input_values"].to(self.device),
            "attention_mask": features["attention_mask"].to(self.device),
        }

    def forward(self, waves: list[np.ndarray]) -> Any:
        """The model's outputs on a padded batch of ``waves`` (no gradients; bf16 autocast when asked for)."""
        inputs = self.inputs(waves)
        samples = [len(wave) for wave in waves]
        if self.per_utterance is not None:
            self.per_utterance.lengths = samples
        if self.per_utterance_positions is not None:
            self.per_utterance_positions.lengths = conv_output_frames(np.array(samples), self.config).tolist()
        try:
            with inference(self.device, self.dtype):
                return self.model(**inputs)
        finally:
            for wrapper in (self.per_utterance, self.per_utterance_positions):
                if wrapper is not None:
                    wrapper.lengths = None


def load_hf_audio(
    auto_class_name: str, label: str, checkpoint: Path | None, device: str, dtype: str
) -> tuple[HFAudioModel, Path, dict[str, Any]]:
    """Load ``transformers.<auto_class_name>`` and its feature extractor from the folder, offline, frozen."""
    folder = require_transformers_folder(checkpoint, label)
    resolved_device = torch_device(device, label)
    runtime = deterministic_settings(resolved_device, dtype, label)
    force_offline()
    import transformers
    from safetensors import SafetensorError

    transformers.utils.logging.disable_progress_bar()
    auto_class = getattr(transformers, auto_class_name)
    try:
        feature_extractor = transformers.AutoFeatureExtractor.from_pretrained(folder, local_files_only=True)
        model, loading = auto_class.from_pretrained(folder, local_files_only=True, output_loading_info=True)
    except (OSError, ValueError, RuntimeError, SafetensorError, pickle.UnpicklingError) as error:
        raise CheckpointError(folder, f"transformers could not load encoder {label!r}: {error}") from error
    # transformers initialises absent weights at random and only logs it: here that is a partial checkpoint.
    missing = sorted(loading.get("missing_keys", ())) + sorted(loading.get("mismatched_keys", ()))
    if missing:
        raise CheckpointError(folder, f"weights lack or mismatch parameters of {label!r}: {missing[:5]}")
    freeze(model).to(resolved_device)
    runtime["transformers"] = transformers.__version__
    loaded = HFAudioModel(model, feature_extractor, resolved_device, dtype)
    loaded.unused_keys = sorted(loading.get("unexpected_keys", ()))
    return loaded, folder, runtime


def hf_record(
    kind: str, label: str, folder: Path, loaded: HFAudioModel, runtime: dict[str, Any], policy: BatchPolicy
) -> tuple[CheckpointRecord, BatchPolicy]:
    """The checkpoint record of a loaded transformers encoder, and its batch policy (see module docstring)."""
    policy = replace(policy, equal_length_only=False)
    padding = "per-utterance feature encoder, masked transformer" if loaded.group_norm else "attention mask"
    if loaded.per_utterance_positions is not None:
        padding += ", per-utterance positional convolutions"
    resolved = resolve_folder(folder)
    model = loaded.model
    record = CheckpointRecord(
        label=label,
        kind=kind,
        class_name=f"{type(model).__module__}.{type(model).__qualname__}",
        config={
            "model_type": loaded.config.model_type,
            "model_config": _recorded_config(loaded.config),
            "feature_extractor": loaded.feature_extractor.to_dict(),
            "unused_checkpoint_keys": loaded.unused_keys,
        },
        files=resolved.files,
        checkpoint_blake3=resolved.checkpoint_blake3,
        name=resolved.name,
        runtime={**runtime, "batching": {**policy.as_dict(), "padding": padding}},
    )
    return record, policy


def _recorded_config(config: Any) -> dict[str, Any]:
    """The model configuration as its config.json writes it (what differs from the defaults, ``id2label``'s keys
    as strings: transformers holds them as integers, which the record's canonical JSON refuses), without the
    transformers version that wrote it."""
    written = json.loads(config.to_json_string(use_diff=True))
    return {key: value for key, value in written.items() if key != "transformers_version"}
