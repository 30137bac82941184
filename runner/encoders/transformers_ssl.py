"""Self-supervised models (wav2vec 2.0, HuBERT, WavLM, data2vec-audio) mean-pooled over the last hidden layer.

As in the benchmark: ``AutoModel`` from a local folder, ``last_hidden_state``, and the temporal mean over the
frames that belong to the utterance (the padding mask is carried down to frames with the convolution length
formula). No trained speaker head: these are SSL baselines, family ``ssl`` in the roster.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import CheckpointRecord
from runner.encoders.hf_audio import (
    HFAudioModel,
    conv_output_frames,
    hf_record,
    load_hf_audio,
    receptive_field,
)


class TransformersSSLEncoder(Encoder):
    """Mean of the final hidden layer over the utterance's frames."""

    kind: ClassVar[str] = "transformers_ssl"

    def __init__(self, record: CheckpointRecord, loaded: HFAudioModel, policy: BatchPolicy) -> None:
        super().__init__(record, loaded.sample_rate, policy, min_samples=receptive_field(loaded.config))
        self.loaded = loaded

    @classmethod
    def load(
        cls, label: str, checkpoint: Path | None, device: str, dtype: Dtype, policy: BatchPolicy
    ) -> TransformersSSLEncoder:
        loaded, folder, runtime = load_hf_audio("AutoModel", label, checkpoint, device, dtype)
        record, policy = hf_record(cls.kind, label, folder, loaded, runtime, policy)
        record.config["pooling"] = "mean of last_hidden_state over valid frames"
        return cls(record, loaded, policy)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        hidden = self.loaded.forward(waves).last_hidden_state.float()
        frames = conv_output_frames(np.array([len(w) for w in waves]), self.loaded.config)
        positions = torch.arange(hidden.shape[1], device=hidden.device)
        mask = (positions[None, :] < torch.from_numpy(frames).to(hidden.device)[:, None]).float()
        pooled = (hidden * mask[..., None]).sum(dim=1) / mask.sum(dim=1, keepdim=True)
        return pooled.cpu().numpy()
