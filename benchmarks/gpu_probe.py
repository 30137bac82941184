"""GPU first contact, per torch label: load time, GPU-vs-CPU cosine, batched-vs-single cosine, two reruns bitwise,
peak memory; and an out-of-memory probe. Run by ``benchmarks/gpu_check.sh`` on the lent device.

Usage: ``python benchmarks/gpu_probe.py --checkpoints-root DIR --clips DIR --out FILE [--labels ...] [--device
cuda] [--oom-label wavlm-large] [--long-seconds 145]``.

Clips are the 16-bit WAV files of ``--clips`` (real speech of the carried corpus; read with the standard library,
since the device has no soundfile). The probe of each label embeds 8 clips on the device as one batch, one at a
time and as the batch again, and on the CPU: the smallest cosine between the device's and the CPU's rows, between
the batch's and the single ones', and whether the rerun gave the same bytes. The out-of-memory probe embeds one
``--long-seconds`` clip with ``--oom-label`` (WavLM Large) and records whether it fitted and its peak memory; then
it caps torch's allocator at the peak of one 20 s clip and hands 8 such clips to ``runner.encoders.failures``,
which must split the batch, record the sizes that fitted and return the same vectors as the uncapped batch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import wave
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from runner.encoders import EncoderSpec, load_roster  # noqa: E402  (the checkout's runner, not an install)
from runner.encoders.failures import MemoryLog, embed_each  # noqa: E402

RATE = 16_000


def read_clips(folder: Path, count: int) -> list[np.ndarray]:
    """The first ``count`` 16 kHz 16-bit mono WAV files under ``folder`` (sorted), as float32."""
    waves = []
    for path in sorted(folder.rglob("*.wav"))[:count]:
        with wave.open(str(path)) as reader:
            assert reader.getframerate() == RATE and reader.getsampwidth() == 2 and reader.getnchannels() == 1, path
            data = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
        waves.append((data / 32768.0).astype(np.float32))
    if len(waves) < count:
        raise SystemExit(f"gpu_probe: {folder} holds {len(waves)} WAV files, {count} wanted")
    return waves


def min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.min(np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))))


def probe_label(spec: EncoderSpec, clips: list[np.ndarray], device: str) -> dict[str, Any]:
    import torch

    on_cuda = device.startswith("cuda")
    started = time.perf_counter()
    encoder = spec.load(device=device)
    loaded = time.perf_counter() - started
    if on_cuda:
        torch.cuda.reset_peak_memory_stats()
    batched = encoder.embed(clips, RATE)
    single = np.stack([encoder.embed([clip], RATE)[0] for clip in clips])
    again = encoder.embed(clips, RATE)
    peak = torch.cuda.max_memory_allocated() / 1e9 if on_cuda else None
    del encoder
    if on_cuda:
        torch.cuda.empty_cache()
    reference = spec.load(device="cpu").embed(clips, RATE)
    return {
        "label": spec.label,
        "device": device,
        "load_s": round(loaded, 2),
        "device_vs_cpu_min_cosine": min_cosine(batched, reference),
        "batched_vs_single_min_cosine": min_cosine(batched, single),
        "rerun_bitwise": batched.tobytes() == again.tobytes(),
        "peak_gb": None if peak is None else round(peak, 3),
    }


def probe_memory(spec: EncoderSpec, clips: list[np.ndarray], device: str, long_seconds: float) -> dict[str, Any]:
    """One long clip alone, then a batch of 20 s clips under a cap of one clip's peak (see the module)."""
    import torch

    encoder = spec.load(device=device)
    joined = np.concatenate(clips)
    long = np.resize(joined, int(long_seconds * RATE)).astype(np.float32)
    result: dict[str, Any] = {"label": spec.label, "long_seconds": long_seconds}
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    memory = MemoryLog()
    (outcome,) = embed_each(encoder, [long], RATE, memory)
    result["long_clip"] = {
        "fitted": not isinstance(outcome, str),
        "outcome": outcome if isinstance(outcome, str) else "embedded",
        "seconds": round(time.perf_counter() - started, 2),
        "peak_gb": round(torch.cuda.max_memory_allocated() / 1e9, 3),
    }
    batch = [np.resize(np.roll(joined, 4000 * k), 20 * RATE).astype(np.float32) for k in range(8)]
    free = encoder.embed(batch, RATE)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    encoder.embed(batch[:1], RATE)
    one_clip = torch.cuda.max_memory_allocated()
    total = torch.cuda.get_device_properties(torch.device(device)).total_memory
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(min(1.0, one_clip * 1.5 / total), torch.device(device))
    memory = MemoryLog()
    capped = embed_each(encoder, batch, RATE, memory)
    torch.cuda.set_per_process_memory_fraction(1.0, torch.device(device))
    embedded = [i for i, row in enumerate(capped) if not isinstance(row, str)]
    result["capped_batch"] = {
        "cap_gb": round(one_clip * 1.5 / 1e9, 3),
        "memory": memory.as_dict(),
        "failed": [row for row in capped if isinstance(row, str)],
        "min_cosine_to_uncapped": min_cosine(np.stack([capped[i] for i in embedded]), free[embedded])
        if embedded
        else None,
    }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints-root", type=Path, required=True)
    parser.add_argument("--roster", type=Path, default=ROOT / "configs" / "encoders.toml")
    parser.add_argument("--clips", type=Path, required=True)
    parser.add_argument("--labels", nargs="+", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--oom-label", default="wavlm-large")
    parser.add_argument("--long-seconds", type=float, default=145.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    specs = {spec.label: spec for spec in load_roster(args.roster, args.checkpoints_root)}
    clips = read_clips(args.clips, 8)
    results: dict[str, Any] = {"clips_s": [round(len(c) / RATE, 2) for c in clips], "labels": [], "errors": {}}
    for label in args.labels:
        try:
            results["labels"].append(probe_label(specs[label], clips, args.device))
        except Exception as error:  # one label's failure is a finding of the check, not the end of it
            results["errors"][label] = f"{type(error).__name__}: {error}"
        print(
            json.dumps(results["labels"][-1] if label not in results["errors"] else {label: results["errors"][label]})
        )
        args.out.write_text(json.dumps(results, indent=2))
    if args.device.startswith("cuda") and args.oom_label in specs:
        try:
            results["memory_probe"] = probe_memory(specs[args.oom_label], clips, args.device, args.long_seconds)
        except Exception as error:
            results["errors"]["memory_probe"] = f"{type(error).__name__}: {error}"
        print(json.dumps(results.get("memory_probe", results["errors"].get("memory_probe"))))
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
