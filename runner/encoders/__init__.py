"""Speaker encoders: one interface over resemblyzer, speechbrain, transformers, ONNX and MFCC statistics.

``load_encoder(kind, label, checkpoint, device="cpu", dtype="fp32", **options) -> Encoder``;
``Encoder.embed(waves, sr) -> (n, d) float32`` with unit-norm rows;
``Encoder.checkpoint -> CheckpointRecord``. ``load_roster(path) -> list[EncoderSpec]`` reads
``configs/encoders.toml``. Importing this package imports no torch: each adapter is imported when its kind
is loaded.
"""

from runner.encoders.base import DTYPES, ENCODER_KINDS, Dtype, Encoder, EncoderHandle, load_encoder
from runner.encoders.batching import BatchPolicy, WaveformError, plan_batches, resample
from runner.encoders.checkpoint import CheckpointError, CheckpointRecord, EncoderConfigError
from runner.encoders.deferred import DeferredEncoder, RecordStore
from runner.encoders.device import execution_summary, label_device_class
from runner.encoders.failures import MemoryLog
from runner.encoders.roster import FAMILIES, EncoderSpec, RosterError, load_roster
from runner.encoders.weights import weights_origin

__all__ = [
    "DTYPES",
    "ENCODER_KINDS",
    "FAMILIES",
    "BatchPolicy",
    "CheckpointError",
    "CheckpointRecord",
    "DeferredEncoder",
    "Dtype",
    "Encoder",
    "EncoderConfigError",
    "EncoderHandle",
    "EncoderSpec",
    "MemoryLog",
    "RecordStore",
    "RosterError",
    "WaveformError",
    "execution_summary",
    "label_device_class",
    "load_encoder",
    "load_roster",
    "plan_batches",
    "resample",
    "weights_origin",
]
