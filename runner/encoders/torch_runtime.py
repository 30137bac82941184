"""Device, numeric precision and determinism for the torch-based adapters (the only torch import point here).

fp32 is the default. ``bf16`` and ``fp16`` run the forward pass under ``torch.autocast`` (weights stay fp32,
matmuls and convolutions run in bfloat16 or float16); they are opt-in (``--dtype``) and written to the checkpoint
record, whose cache key they change. fp16 is refused on the CPU (oneDNN has no float16 LSTM, among others).
Loading an encoder switches torch to deterministic kernels where they exist (cuDNN deterministic, no benchmark
autotuning, no TF32) and records those settings with the thread count and versions, so a run's numbers can be traced
to its settings.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import torch

from runner.encoders.checkpoint import EncoderConfigError
from runner.encoders.device import device_type

HUB_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def force_offline() -> None:
    """Forbid model-hub access before speechbrain or transformers (and so huggingface_hub) are imported."""
    for name in HUB_OFFLINE_VARIABLES:
        os.environ[name] = "1"


def torch_device(device: str, label: str) -> torch.device:
    """The requested device; a CUDA device that is not there is an error, never a silent CPU fallback."""
    device_type(device, label)
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        seen = f"torch {torch.__version__} sees no CUDA device"
        raise EncoderConfigError(label, f"device {device!r} was requested but CUDA is not available ({seen})")
    if resolved.index is not None and resolved.index >= torch.cuda.device_count():
        raise EncoderConfigError(label, f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
    return resolved


AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def deterministic_settings(device: torch.device, dtype: str, label: str) -> dict[str, Any]:
    """Switch torch to deterministic kernels and return what is in force, for the checkpoint record."""
    if dtype == "fp16" and device.type == "cpu":
        raise EncoderConfigError(label, "dtype 'fp16' needs CUDA; on the CPU use bf16 or fp32")
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    settings: dict[str, Any] = {
        "device": str(device),
        "dtype": dtype,
        "precision": "fp32" if dtype == "fp32" else f"torch.autocast({str(AUTOCAST[dtype]).removeprefix('torch.')})",
        "torch": torch.__version__,
        "num_threads": torch.get_num_threads(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "cudnn_deterministic": torch.backends.cudnn.deterministic,
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "tf32": False,
        "grad_enabled_in_forward": False,
    }
    if device.type == "cuda":
        settings["cuda"] = torch.version.cuda
        settings["cudnn"] = torch.backends.cudnn.version()
        settings["gpu"] = torch.cuda.get_device_name(device)
    return settings


@contextlib.contextmanager
def inference(device: torch.device, dtype: str, onednn: bool = True) -> Iterator[None]:
    """No gradients, bf16 or fp16 autocast when asked for, and on the CPU oneDNN's kernels only where ``onednn``.

    oneDNN builds its convolution primitives for each input shape: for CAM++ on utterances that each have a
    length of their own, torch's native convolutions were measured faster (``campplus.CPU_ONEDNN``).
    """
    previous = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = onednn or device.type != "cpu"
    try:
        with torch.inference_mode():
            if dtype in AUTOCAST:
                with torch.autocast(device_type=device.type, dtype=AUTOCAST[dtype]):
                    yield
            else:
                yield
    finally:
        torch.backends.mkldnn.enabled = previous


def freeze(module: torch.nn.Module) -> torch.nn.Module:
    """Eval mode and ``requires_grad=False`` on every parameter: encoders are never trained here."""
    module.eval()
    for parameter in module.parameters():
        parameter.requires_grad_(False)
    return module
