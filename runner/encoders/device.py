"""Where encoders run: the device a run asks for, checked against this machine before any work is done.

``--device cuda`` (or ``cuda:N``) means CUDA for every encoder that has an accelerator path: torch's CUDA for
the torch loaders, onnxruntime's ``CUDAExecutionProvider`` for exported graphs (the ``gpu`` extra installs
``onnxruntime-gpu``, whose build offers it). A device that is not there is an error naming the labels and
what this machine offers, never a silent CPU run. The MFCC baseline is numpy only: it runs on the CPU
whatever the run asks for and records the request (see ``mfcc``).

Also here: the CUDA execution provider's options for variable-length graphs, the check that every node of an
exported graph runs where it was asked to (from onnxruntime's own profile of a probe run), and the device class
(``cpu``, or the CUDA device's name and capability) that keeps vectors of different devices apart in the cache.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.encoders.checkpoint import EncoderConfigError

PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}
TORCH_KINDS = frozenset(
    {"aasist", "campplus", "resemblyzer", "speechbrain", "transformers_xvector", "transformers_ssl"}
)
ONNX_KINDS = frozenset({"onnx"})
# The CUDA execution provider's options for graphs whose input length changes with every utterance: cuDNN picks a
# convolution algorithm by heuristics (EXHAUSTIVE, the default, benchmarks every algorithm again for each new
# shape), and the memory arena grows by what is asked for, up to a share of the device (the default doubles, and
# one arena per session could take the memory the torch encoders of the same run need).
ONNX_CUDA_OPTIONS = {"cudnn_conv_algo_search": "HEURISTIC", "arena_extend_strategy": "kSameAsRequested"}
ONNX_ARENA_FRACTION = 0.25
# Operators whose work is heavy: placed on the CPU under --device cuda, the graph would run (slowly) on the CPU.
# Other operators onnxruntime places on the CPU by design (shape arithmetic) are recorded, not refused.
HEAVY_OPS = frozenset(
    {
        "Attention",
        "BatchNormalization",
        "Conv",
        "ConvTranspose",
        "Einsum",
        "FusedConv",
        "FusedMatMul",
        "GRU",
        "Gemm",
        "InstanceNormalization",
        "LSTM",
        "LayerNormalization",
        "MatMul",
        "MultiHeadAttention",
        "RNN",
        "Softmax",
    }
)


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
    if provider == PROVIDERS["cpu"]:
        return provider, [{"device_id": int(index)}] if index else None
    options: dict[str, Any] = {"device_id": int(index or 0), **ONNX_CUDA_OPTIONS}
    total = _cuda_total_memory(int(index or 0))
    if total is not None:
        options["gpu_mem_limit"] = int(total * ONNX_ARENA_FRACTION)
    return provider, [options]


def _cuda_total_memory(index: int) -> int | None:
    """The CUDA device's memory in bytes, as torch sees it; None where torch has no CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or index >= torch.cuda.device_count():
        return None
    return int(torch.cuda.get_device_properties(index).total_memory)


def device_class(device: str) -> str:
    """What an embedding's bytes depend on besides the model: ``cpu``, or the CUDA device's name and compute
    capability (``cuda NVIDIA H200 sm_90``). Vectors of one class are never mixed with another's in the cache."""
    if device_type(device, "the run") == "cpu":
        return "cpu"
    import torch

    index = torch.device(device).index or 0
    if not torch.cuda.is_available() or index >= torch.cuda.device_count():
        raise EncoderConfigError("the run", f"device {device!r}: torch {torch.__version__} sees no such CUDA device")
    major, minor = torch.cuda.get_device_capability(index)
    return f"cuda {torch.cuda.get_device_name(index)} sm_{major}{minor}"


def label_device_class(kind: str, run_class: str) -> str:
    """The device class of one label's embeddings: the run's for torch and onnx kinds, ``cpu`` for a numpy one
    (it runs on the CPU whatever the run asks for)."""
    return run_class if kind in TORCH_KINDS | ONNX_KINDS else "cpu"


def profiled_placement(profile: Path) -> dict[str, Counter[str]]:
    """Provider -> operator type -> nodes, from an onnxruntime profile (``SessionOptions.enable_profiling``): every
    node that ran, with the execution provider it ran on."""
    events = json.loads(profile.read_text(encoding="utf-8"))
    seen: dict[str, tuple[str, str]] = {}
    for event in events if isinstance(events, list) else []:
        args = event.get("args") if isinstance(event, dict) else None
        if event.get("cat") == "Node" and isinstance(args, dict) and "provider" in args and "op_name" in args:
            seen[str(event.get("name", "")).removesuffix("_kernel_time")] = (
                str(args["provider"]),
                str(args["op_name"]),
            )
    placement: dict[str, Counter[str]] = {}
    for provider, op in seen.values():
        placement.setdefault(provider, Counter())[op] += 1
    return placement


def check_node_placement(placement: Mapping[str, Counter[str]], provider: str, label: str) -> dict[str, Any]:
    """Every node of a graph run for ``provider``: heavy operators on another provider are an error (the graph
    would run there, slowly, never silently); the rest placed elsewhere by design are the finding returned, for the
    checkpoint record (nodes per provider, and the operator types placed off ``provider``)."""
    if not placement:
        raise EncoderConfigError(label, "the onnxruntime profile of the probe run lists no node")
    elsewhere = {name: ops for name, ops in placement.items() if name != provider}
    heavy = sorted({op for ops in elsewhere.values() for op in ops if op in HEAVY_OPS})
    if heavy:
        where = ", ".join(f"{name}: {sum(ops.values())} nodes" for name, ops in sorted(elsewhere.items()))
        raise EncoderConfigError(label, f"asked for {provider}, but nodes {heavy} run elsewhere ({where})")
    return {
        "nodes": {name: sum(ops.values()) for name, ops in sorted(placement.items())},
        "elsewhere": {name: dict(sorted(ops.items())) for name, ops in sorted(elsewhere.items())},
    }


def check_session_provider(session: Any, provider: str, label: str) -> None:
    """A session whose first provider is not the one asked for would run elsewhere: an error, not a fallback."""
    running = list(session.get_providers())
    if not running or running[0] != provider:
        raise EncoderConfigError(label, f"asked for {provider}, but the onnxruntime session runs on {running}")


def execution_summary(runtimes: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Label -> where it ran (device, and the execution provider of an exported graph), for environment.json."""
    keys = ("device", "requested_device", "provider", "node_placement", "dtype", "requested_dtype")
    return {label: {key: runtime[key] for key in keys if key in runtime} for label, runtime in runtimes.items()}
