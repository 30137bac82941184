"""Speaker-verification heads from transformers: ``AutoModelForAudioXVector`` (``WavLMForXVector`` and the
other ``*ForXVector`` classes) from a local folder; the embedding is the model's ``embeddings`` output.

The x-vector head pools statistics over the frames it believes valid, but transformers'
``_get_tdnn_output_lengths`` ignores the TDNN dilations (``(L - k) // 1 + 1`` per layer), so with any dilation
above 1 (the published heads use 1, 2, 3, 1, 1) a padded utterance's statistics would take in frames computed
from padding. The loaded model's formula is replaced by the dilated one, ``L - (k - 1) d`` per layer, which
is the number of frames the TDNN layers actually give: one utterance alone is pooled over all its frames
either way (its embedding is unchanged), and padded batches (see ``hf_audio``) give the one-at-a-time
embeddings within float rounding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import CheckpointRecord
from runner.encoders.hf_audio import HFAudioModel, hf_record, load_hf_audio, receptive_field


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
        config = loaded.config
        spans = [(k - 1) * d for k, d in zip(config.tdnn_kernel, config.tdnn_dilation, strict=True)]

        def tdnn_output_lengths(lengths: Any) -> Any:
            return lengths - sum(spans)

        loaded.model._get_tdnn_output_lengths = tdnn_output_lengths
        record, policy = hf_record(cls.kind, label, folder, loaded, runtime, policy)
        record.runtime["batching"]["tdnn_lengths"] = "L - sum((kernel - 1) * dilation)"
        return cls(record, loaded, policy)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        return self.loaded.forward(waves).embeddings.float().cpu().numpy()
