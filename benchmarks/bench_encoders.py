"""Encoder throughput and memory: utterances per second, batched against one at a time, and peak memory per label.

Usage: ``python benchmarks/bench_encoders.py [--labels resemblyzer mfcc-stats] [--roster PATH]
[--checkpoints-root DIR] [--utterances 16] [--lengths random|equal] [--repeats 1] [--device cpu]
[--dtype fp32] [--save FILE] [--json]``.

At the real sizes: ``interbias checkpoints synthesise DIR`` writes every paper label's folder at its published
size (random weights), then ``--checkpoints-root DIR`` measures them. Every roster label whose checkpoint is
present is measured (an absent one is listed as skipped, never replaced). Each label runs in its own process,
so its peak memory is its own: the process's peak resident set (model, activations and the Python/torch
runtime, about 0.4 GB of it), and on CUDA the peak of ``torch.cuda.max_memory_allocated``. Clips are seeded
noise of 2-6 s (``random``; mean 4 s) or all 4 s (``equal``). Both paths embed the same clips after one
warm-up call; the table shows utterances per second, the batched/loop ratio, and the smallest cosine between
the two paths' embeddings. ``--save FILE`` writes the figures (with the machine and the date) for
``interbias plan --throughput FILE``. On a shared machine use ``--repeats 3``: the best run is shown.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from runner.encoders import Encoder, EncoderSpec, load_roster  # noqa: E402  (the checkout's runner, not an install)

SAMPLE_RATE = 16000


def clips(count: int, lengths: str) -> list[np.ndarray]:
    """Seeded noise clips at 16 kHz (content does not change an encoder's cost)."""
    rng = np.random.default_rng(20261130)
    durations = np.full(count, 4.0) if lengths == "equal" else rng.uniform(2.0, 6.0, count)
    return [(rng.standard_normal(int(d * SAMPLE_RATE)) * 0.1).astype(np.float32) for d in durations]


def measure(encoder: Encoder, waves: list[np.ndarray], repeats: int) -> dict[str, Any]:
    """Best-of-``repeats`` wall time, batched and one at a time, and the smallest cosine between them."""
    encoder.embed(waves[:2], SAMPLE_RATE)  # warm-up: lazy imports, JIT, allocator
    batched_s = loop_s = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        batched = encoder.embed(waves, SAMPLE_RATE)
        batched_s = min(batched_s, time.perf_counter() - start)
        start = time.perf_counter()
        loop = np.stack([encoder.embed([wave], SAMPLE_RATE)[0] for wave in waves])
        loop_s = min(loop_s, time.perf_counter() - start)
    return {
        "label": encoder.label,
        "kind": encoder.checkpoint.kind,
        "utterances": len(waves),
        "audio_seconds": round(sum(len(w) for w in waves) / SAMPLE_RATE, 2),
        "batched_utt_per_s": len(waves) / batched_s,
        "loop_utt_per_s": len(waves) / loop_s,
        "speedup": loop_s / batched_s,
        "min_cosine": float(np.min(np.sum(batched * loop, axis=1))),
        "equal_length_only": encoder.checkpoint.runtime["batching"]["equal_length_only"],
    }


def available(specs: list[EncoderSpec], labels: list[str] | None) -> tuple[list[EncoderSpec], list[str]]:
    """The specs to measure, and a line for each label skipped because its checkpoint is absent."""
    chosen = [s for s in specs if labels is None or s.label in labels]
    unknown = sorted(set(labels or []) - {s.label for s in specs})
    if unknown:
        raise SystemExit(f"labels not in the roster: {unknown}")
    present = [s for s in chosen if s.checkpoint is None or s.checkpoint.exists()]
    skipped = [f"{s.label}: no checkpoint at {s.checkpoint}" for s in chosen if s not in present]
    return present, skipped


def worker(args: argparse.Namespace) -> None:
    """Measure one label in this process and print its row as one JSON line."""
    (spec,) = [s for s in load_roster(args.roster, args.checkpoints_root) if s.label == args.worker]
    started = time.perf_counter()
    encoder = spec.load(args.device, args.dtype)
    load_s = time.perf_counter() - started
    row = measure(encoder, clips(args.utterances, args.lengths), args.repeats)
    row["load_s"] = load_s
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes
    if args.device.startswith("cuda"):
        import torch

        row["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
    print(json.dumps(row))


def machine(device: str) -> str:
    """The CPU model and core count, or the GPU name."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    return f"{model}, {os.cpu_count()} logical cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", nargs="*", help="roster labels (default: every one with a checkpoint)")
    parser.add_argument("--roster", type=Path, default=ROOT / "configs" / "encoders.toml")
    parser.add_argument("--checkpoints-root", type=Path, default=None)
    parser.add_argument("--utterances", type=int, default=16)
    parser.add_argument("--lengths", choices=["random", "equal"], default="random")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each path; the best is shown")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32")
    parser.add_argument("--save", type=Path, help="write the figures as JSON (interbias plan --throughput)")
    parser.add_argument("--json", action="store_true", help="also print one JSON line with the figures")
    parser.add_argument("--quick", action="store_true", help="4 clips, one repeat")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.utterances, args.repeats = 4, 1
    if args.worker:
        worker(args)
        return
    specs, skipped = available(load_roster(args.roster, args.checkpoints_root), args.labels)
    rows = []
    for spec in specs:
        command = [sys.executable, __file__, "--worker", spec.label, *sys.argv[1:]]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            skipped.append(f"{spec.label}: failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        rows.append(row := json.loads(done.stdout.strip().splitlines()[-1]))
        print(
            f"  measured {spec.label}: {row['batched_utt_per_s']:.2f} utt/s batched, {row['loop_utt_per_s']:.2f} "
            "in a loop",
            file=sys.stderr,
            flush=True,
        )
    where = machine(args.device)
    print(f"{args.utterances} clips ({args.lengths} lengths), device {args.device} ({where}), {args.dtype}")
    header = f"  {'label':<20} {'batched utt/s':>14} {'loop utt/s':>11} {'ratio':>6} {'peak MB':>8} {'min cos':>10}"
    print(header)
    for row in rows:
        peak = row.get("peak_cuda_mb", row["peak_rss_mb"])
        print(
            f"  {row['label']:<20} {row['batched_utt_per_s']:14.2f} {row['loop_utt_per_s']:11.2f} "
            f"{row['speedup']:5.2f}x {peak:8.0f} {row['min_cosine']:10.7f}"
        )
    for line in skipped:
        print(f"  skipped {line}")
    figures = {
        "device": args.device,
        "dtype": args.dtype,
        "lengths": args.lengths,
        "machine": where,
        "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
        "command": " ".join(["python", "benchmarks/bench_encoders.py", *sys.argv[1:]]),
        "encoders": rows,
        "skipped": skipped,
    }
    if args.save:
        args.save.write_text(json.dumps(figures, indent=2) + "\n")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
