"""Exported encoders (CAM++, ERes2Net, ECAPA exports, RawNet3) run through onnxruntime.

The checkpoint folder holds the ``.onnx`` file (``model_file``). The graph must have one input and one output,
or name the embedding among its outputs with ``output_name`` (a graph that also returns logits, say: taking the
first output would be a silent guess). The input is either
``(batch, samples)`` waveforms (``input="waveform"``) or ``(batch, frames, mel bins)`` Kaldi filterbanks
(``input="fbank"``), computed here with ``torchaudio.compliance.kaldi.fbank`` (no dither) and, with ``cmn``,
the per-utterance mean removed, as WeSpeaker and 3D-Speaker do before export. Their conventions differ
(WeSpeaker scales samples to the int16 range and uses a Hamming window, 3D-Speaker keeps [-1, 1] with the
Povey window), so ``waveform_scale`` and ``window_type`` are options written to the record.

Such graphs take no padding mask and pool over every frame they get, so only utterances of equal length share
a batch: batched embeddings equal one-at-a-time ones within float rounding. ``--device cuda`` means the
``CUDAExecutionProvider`` alone (the ``gpu`` extra's onnxruntime-gpu): a build without it, or a session that
does not actually run on it, is an error naming the label and the providers offered, never a silent CPU run.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy
from runner.encoders.checkpoint import (
    CheckpointError,
    CheckpointRecord,
    EncoderConfigError,
    require_folder,
    resolve_folder,
)
from runner.encoders.device import (
    PROVIDERS,
    check_node_placement,
    check_session_provider,
    onnx_provider,
    profiled_placement,
)


class OnnxEncoder(Encoder):
    """An onnxruntime session over waveforms or Kaldi filterbanks."""

    kind: ClassVar[str] = "onnx"

    def __init__(self, record: CheckpointRecord, session: Any, frontend: dict[str, Any], policy: BatchPolicy) -> None:
        frame_samples = int(frontend["sample_rate"] * frontend["frame_length_ms"] / 1000)
        super().__init__(record, frontend["sample_rate"], policy, min_samples=frame_samples)
        self.session = session
        self.frontend = frontend
        self.input_name = session.get_inputs()[0].name

    @classmethod
    def load(
        cls,
        label: str,
        checkpoint: Path | None,
        device: str,
        dtype: Dtype,
        policy: BatchPolicy,
        *,
        model_file: str = "model.onnx",
        input: Literal["waveform", "fbank"] = "fbank",
        output_name: str | None = None,
        sample_rate: int = 16000,
        num_mel_bins: int = 80,
        frame_length_ms: float = 25.0,
        frame_shift_ms: float = 10.0,
        window_type: str = "hamming",
        waveform_scale: float = 1.0,
        cmn: bool = True,
    ) -> OnnxEncoder:
        import onnxruntime as ort

        folder = require_folder(checkpoint, label, [model_file])
        if input not in ("waveform", "fbank"):
            raise EncoderConfigError(label, f"input must be 'waveform' or 'fbank', got {input!r}")
        provider, provider_options = onnx_provider(device, label)
        options = ort.SessionOptions()
        options.use_deterministic_compute = True
        options.log_severity_level = 3
        profiles = None
        if provider != PROVIDERS["cpu"]:  # where each node runs, read from onnxruntime's profile of a probe run
            profiles = tempfile.TemporaryDirectory(prefix="interbias-onnx-")
            options.enable_profiling = True
            options.profile_file_prefix = str(Path(profiles.name) / "placement")
        try:
            session = ort.InferenceSession(
                str(folder / model_file), options, providers=[provider], provider_options=provider_options
            )
        except Exception as error:  # onnxruntime raises its own untyped errors for unreadable graphs
            raise CheckpointError(folder / model_file, f"onnxruntime cannot load the graph: {error}") from error
        check_session_provider(session, provider, label)
        if len(session.get_inputs()) != 1:
            names = [i.name for i in session.get_inputs()]
            raise CheckpointError(folder / model_file, f"expected a graph with one input, found {names}")
        outputs = [o.name for o in session.get_outputs()]
        if output_name is None and len(outputs) > 1:
            problem = f"graph has {len(outputs)} outputs {outputs}; name the embedding with the option output_name"
            raise CheckpointError(folder / model_file, problem)
        if output_name is not None and output_name not in outputs:
            raise CheckpointError(folder / model_file, f"graph has no output {output_name!r}; it has {outputs}")
        frontend = {
            "input": input,
            "input_name": session.get_inputs()[0].name,
            "output_name": output_name or outputs[0],
            "sample_rate": sample_rate,
            "num_mel_bins": num_mel_bins,
            "frame_length_ms": frame_length_ms,
            "frame_shift_ms": frame_shift_ms,
            "window_type": window_type,
            "waveform_scale": waveform_scale,
            "cmn": cmn,
        }
        policy = replace(policy, equal_length_only=True)
        placement = None if profiles is None else _probe_placement(session, frontend, provider, label, profiles)
        resolved = resolve_folder(folder)
        record = CheckpointRecord(
            label=label,
            kind=cls.kind,
            class_name="onnxruntime.InferenceSession",
            config={"model_file": model_file, **frontend},
            files=resolved.files,
            checkpoint_blake3=resolved.checkpoint_blake3,
            name=resolved.name,
            runtime={
                "device": device,
                "dtype": "fp32",  # the graph's own precision, whatever the run asks for
                **({"requested_dtype": dtype} if dtype != "fp32" else {}),
                "provider": provider,
                **({"provider_options": provider_options[0]} if provider_options else {}),
                "session_providers": list(session.get_providers()),
                **({"node_placement": placement} if placement is not None else {}),
                "onnxruntime": ort.__version__,
                "use_deterministic_compute": True,
                "intra_op_num_threads": options.intra_op_num_threads,
                "graph_optimization_level": str(options.graph_optimization_level),
                "batching": policy.as_dict(),
            },
        )
        return cls(record, session, frontend, policy)

    def _features(self, wave: np.ndarray) -> np.ndarray:
        return graph_input(self.frontend, wave)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        batch = np.stack([self._features(w) for w in waves]).astype(np.float32)
        (embeddings,) = self.session.run([self.frontend["output_name"]], {self.input_name: batch})
        return np.asarray(embeddings, dtype=np.float32).reshape(len(waves), -1)


def graph_input(frontend: dict[str, Any], wave: np.ndarray) -> np.ndarray:
    """The graph input for one utterance: scaled samples, or (frames, mel bins) filterbanks."""
    scaled = wave * np.float32(frontend["waveform_scale"])
    if frontend["input"] == "waveform":
        return scaled
    import torch
    from torchaudio.compliance import kaldi

    fbank = kaldi.fbank(
        torch.from_numpy(scaled)[None],
        num_mel_bins=frontend["num_mel_bins"],
        frame_length=frontend["frame_length_ms"],
        frame_shift=frontend["frame_shift_ms"],
        dither=0.0,
        sample_frequency=float(frontend["sample_rate"]),
        window_type=frontend["window_type"],
    ).numpy()
    return fbank - fbank.mean(axis=0, keepdims=True) if frontend["cmn"] else fbank


def _probe_placement(
    session: Any, frontend: dict[str, Any], provider: str, label: str, profiles: tempfile.TemporaryDirectory[str]
) -> dict[str, Any]:
    """Run one second of a tone through the profiling session, read where each node ran and check it
    (``device.check_node_placement``); the profile is removed. onnxruntime's log of node placements is not
    readable from Python, its profile is."""
    with profiles:
        tone = (0.1 * np.sin(np.arange(frontend["sample_rate"]) * 0.05)).astype(np.float32)
        session.run([frontend["output_name"]], {frontend["input_name"]: graph_input(frontend, tone)[None]})
        placement = profiled_placement(Path(session.end_profiling()))
    return check_node_placement(placement, provider, label)
