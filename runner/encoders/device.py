"""Where encoders run: the device a run asks for, checked against this machine before any work is done.

``--device cuda`` (or ``cuda:N``) means CUDA for every encoder that has an accelerator path: torch's CUDA for
the torch loaders, onnxruntime's ``CUDAExecutionProvider`` for exported graphs (the ``gpu`` extra installs
``onnxruntime-gpu``, whose build offers it). A device that is not there is an error naming the labels and
what this machine offers, never a silent CPU run. The MFCC baseline is numpy only: it runs on the CPU
whatever the run asks for and records the request (see ``mfcc``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.encoders.checkpoint import EncoderConfigError

PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}
TORCH_KINDS = frozenset(
    {"aasist", "campplus", "resemblyzer", "speechbrain", "transformers_xvector", "transformers_ssl"}
)
ONNX_KINDS = frozenset({"onnx"})


def device_type(device: str, label: str) -> str:
    """``cpu`` or ``cuda`` for ``cpu``, ``cuda`` or ``cuda:N``; anything else is an EncoderConfigError."""
    kind, colon, index = device.partition(":")
    if kind == "cpu" and not colon:
        return kind
    if kind == "cuda" and (not colon or index.isdigit()):
        return kind
    raise EncoderConfigError(label, f"device {device!r} is not supported (cpu, cuda or cuda:N)")


def onnx_provider(device: str, label: str) -> tuple[str, list[dict[str, Any]] | None]:
    """The onnxruntime execution provider (and its options) for ``device``, after checking this build offers it."""
    provider = PROVIDERS[device_type(device, label)]
    try:
        import onnxruntime as ort
    except ImportError as error:
        raise EncoderConfigError(label, "onnxruntime is not installed (the `cpu` or `gpu` extra)") from error
    if provider != PROVIDERS["cpu"] and hasattr(ort, "preload_dlls"):
        ort.preload_dlls()  # CUDA and cuDNN from the nvidia-* wheels that torch also uses, before any session
    offered = list(ort.get_available_providers())
    if provider not in offered:
        hint = " (install the `gpu` extra: onnxruntime-gpu)" if provider != PROVIDERS["cpu"] else ""
        raise EncoderConfigError(
            label, f"device {device!r} needs {provider}; this onnxruntime {ort.__version__} offers {offered}{hint}"
        )
    index = device.partition(":")[2]
    return provider, [{"device_id": int(index)}] if index else None


def check_session_provider(session: Any, provider: str, label: str) -> None:
    """A session whose first provider is not the one asked for would run elsewhere: an error, not a fallback."""
    running = list(session.get_providers())
    if not running or running[0] != provider:
        raise EncoderConfigError(label, f"asked for {provider}, but the onnxruntime session runs on {running}")


def execution_summary(runtimes: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Label -> where it ran (device, and the execution provider of an exported graph), for environment.json."""
    return {
        label: {key: runtime[key] for key in ("device", "requested_device", "provider", "dtype") if key in runtime}
        for label, runtime in runtimes.items()
    }
