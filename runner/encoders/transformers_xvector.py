"""Speaker-verification heads from transformers: ``AutoModelForAudioXVector`` (``WavLMForXVector`` and the
other ``*ForXVector`` classes) from a local folder; the embedding is the model's ``embeddings`` output.

The x-vector head pools statistics over the frames it believes valid, but transformers'
``_get_tdnn_output_lengths`` ignores the TDNN dilations (``(L - k) // 1 + 1`` per layer), so with any dilation
above 1 (the published heads use 1, 2, 3, 1, 1) a padded utterance's statistics take in frames computed from
padding. Such heads, and group-norm (base) models (see ``hf_audio``), get equal-length batches only; padded
batches are used only for layer-norm models with undilated heads, where they match unbatched within rounding.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import CheckpointRecord
from runner.encoders.hf_audio import HFAudioModel, hf_record, load_hf_audio, receptive_field
from runner.encoders.torch_runtime import inference


class TransformersXVectorEncoder(Encoder):
    """The ``embeddings`` output of a ``*ForXVector`` model."""

    kind: ClassVar[str] = "transformers_xvector"

    def __init__(self, record: CheckpointRecord, loaded: HFAudioModel, policy: BatchPolicy) -> None:
        config = loaded.config
        tdnn_frames = 1 + sum((k - 1) * d for k, d in zip(config.tdnn_kernel, config.tdnn_dilation, strict=True))
        super().__init__(record, loaded.sample_rate, policy, min_samples=receptive_field(config, tdnn_frames))
        self.loaded = loaded

    @classmethod
    def load(
        cls, label: str, checkpoint: Path | None, device: str, dtype: Dtype, policy: BatchPolicy
    ) -> TransformersXVectorEncoder:
        loaded, folder, runtime = load_hf_audio("AutoModelForAudioXVector", label, checkpoint, device, dtype)
        undilated = all(d == 1 for d in loaded.config.tdnn_dilation)
        record, policy = hf_record(cls.kind, label, folder, loaded, runtime, policy, head_honours_mask=undilated)
        return cls(record, loaded, policy)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        inputs = self.loaded.inputs(waves)
        with inference(self.loaded.device, self.loaded.dtype):
            embeddings = self.loaded.model(**inputs).embeddings
        return embeddings.float().cpu().numpy()
