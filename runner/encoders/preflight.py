"""The pre-flight check of a run's device: every encoder's device asked of torch or onnxruntime before any corpus
is read or model loaded (it imports both runtimes' modules, which themselves import ``runner.encoders.device``)."""

from __future__ import annotations

from collections.abc import Iterable

from runner.encoders.checkpoint import EncoderConfigError
from runner.encoders.device import ONNX_KINDS, TORCH_KINDS, device_type, onnx_provider
from schemas import InputError


def check_devices(device: str, labels_by_kind: Iterable[tuple[str, str]]) -> None:
    """Fail, before any corpus is read or model loaded, when ``device`` is not there for some encoder.

    ``labels_by_kind`` is (label, loader kind) pairs. Every label that cannot have the device is named in
    one line, with what torch and onnxruntime offer here.
    """
    problems: list[str] = []
    for label, kind in labels_by_kind:
        try:
            if device_type(device, label) == "cpu":
                continue
            if kind in TORCH_KINDS:
                from runner.encoders.torch_runtime import torch_device

                torch_device(device, label)
            elif kind in ONNX_KINDS:
                onnx_provider(device, label)
        except EncoderConfigError as error:
            problems.append(f"{label} ({error.problem})")
    if problems:
        raise InputError(f"device {device!r}", "not available for " + "; ".join(problems))


def check_precision(device: str, dtype: str, labels_by_kind: Iterable[tuple[str, str]]) -> None:
    """Fail, before any work, when ``dtype`` cannot run on ``device`` for a torch encoder (fp16 on the CPU: oneDNN
    has no float16 LSTM, among others); numpy and onnx kinds run in their own precision and record the request."""
    torch_labels = [label for label, kind in labels_by_kind if kind in TORCH_KINDS]
    if dtype == "fp16" and device_type(device, "the run") == "cpu" and torch_labels:
        raise InputError(f"--dtype {dtype}", f"needs CUDA for {', '.join(torch_labels)}; on the CPU use bf16 or fp32")
