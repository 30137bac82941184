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
so their convolutional feature encoder runs on each utterance's own samples (``PerUtteranceFeatureEncoder``, a
small share of the compute) and only the transformer, which honours the mask, sees a padded batch. The
positional convolution sees zeros past each utterance's end either way (masked frames are zeroed before it),
so padded batches give the one-at-a-time embeddings within float rounding for both kinds.
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


class PerUtteranceFeatureEncoder(torch.nn.Module):
    """A convolutional feature encoder run on each utterance's own samples, its frames zero-padded to the batch.

    ``lengths`` (samples of each row) is set for each batch by ``HFAudioModel.forward``; unset, it is the
    wrapped encoder itself.
    """

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner
        self.lengths: list[int] | None = None

    def forward(self, input_values: torch.Tensor) -> torch.Tensor:
        if self.lengths is None:
            return self.inner(input_values)
        outputs = [self.inner(input_values[row : row + 1, :length]) for row, length in enumerate(self.lengths)]
        frames = max(output.shape[-1] for output in outputs)
        return torch.cat([torch.nn.functional.pad(output, (0, frames - output.shape[-1])) for output in outputs])


class HFAudioModel:
    """A frozen transformers audio model with its feature extractor, device and precision."""

    def __init__(self, model: Any, feature_extractor: Any, device: torch.device, dtype: str) -> None:
        self.model = model
        self.feature_extractor = feature_extractor
        self.device = device
        self.dtype = dtype
        self.config = model.config
        self.group_norm = getattr(model.config, "feat_extract_norm", "layer") != "layer"
        self.per_utterance: PerUtteranceFeatureEncoder | None = None
        if self.group_norm:
            base = model.base_model
            self.per_utterance = PerUtteranceFeatureEncoder(base.feature_extractor)
            base.feature_extractor = self.per_utterance
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
        if self.per_utterance is not None:
            self.per_utterance.lengths = [len(wave) for wave in waves]
        try:
            with inference(self.device, self.dtype):
                return self.model(**inputs)
        finally:
            if self.per_utterance is not None:
                self.per_utterance.lengths = None


def load_hf_audio(
    auto_class_name: str, label: str, checkpoint: Path | None, device: str, dtype: str
) -> tuple[HFAudioModel, Path, dict[str, Any]]:
    """Load ``transformers.<auto_class_name>`` and its feature extractor from the folder, offline, frozen."""
    folder = require_transformers_folder(checkpoint, label)
    resolved_device = torch_device(device, label)
    runtime = deterministic_settings(resolved_device, dtype)
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
    resolved = resolve_folder(folder)
    model = loaded.model
    record = CheckpointRecord(
        label=label,
        kind=kind,
        class_name=f"{type(model).__module__}.{type(model).__qualname__}",
        config={
            "model_type": loaded.config.model_type,
            "model_config": {k: v for k, v in loaded.config.to_diff_dict().items() if k != "transformers_version"},
            "feature_extractor": loaded.feature_extractor.to_dict(),
            "unused_checkpoint_keys": loaded.unused_keys,
        },
        files=resolved.files,
        checkpoint_blake3=resolved.checkpoint_blake3,
        path=resolved.path,
        runtime={**runtime, "batching": {**policy.as_dict(), "padding": padding}},
    )
    return record, policy
