"""Encoder throughput: utterances per second, length-bucketed batches against a plain one-at-a-time loop.

Usage: ``python benchmarks/bench_encoders.py [--labels resemblyzer mfcc-stats] [--roster PATH]
[--checkpoints-root DIR] [--utterances 24] [--lengths random|equal] [--repeats 1] [--device cpu]
[--dtype fp32] [--json]``.

Every roster label whose checkpoint is present is measured (labels whose checkpoint folder is absent are
listed as skipped, never replaced); on a machine without downloaded checkpoints that is ``resemblyzer`` and
``mfcc-stats``. Clips are seeded noise of 1.5-4 s (``random``) or all 3 s (``equal``: what encoders limited
to equal-length batches need to gain anything). Both paths embed the same clips after one warm-up call; the
table shows utterances per second, the batched/loop ratio, and the largest difference between the two
paths' embeddings, which must stay within the tolerance each adapter states. On a shared machine use
``--repeats 3``: the best run is shown.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from runner.encoders import Encoder, EncoderSpec, load_roster

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_RATE = 16000


def clips(count: int, lengths: str) -> list[np.ndarray]:
    """Seeded noise clips at 16 kHz (content does not change an encoder's cost)."""
    rng = np.random.default_rng(20261130)
    durations = np.full(count, 3.0) if lengths == "equal" else rng.uniform(1.5, 4.0, count)
    return [(rng.standard_normal(int(d * SAMPLE_RATE)) * 0.1).astype(np.float32) for d in durations]


def measure(encoder: Encoder, waves: list[np.ndarray], repeats: int) -> dict[str, Any]:
    """Best-of-``repeats`` wall time, batched and one at a time, and the largest difference between them."""
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
        "audio_seconds": round(sum(len(w) for w in waves) / SAMPLE_RATE, 1),
        "batched_utt_per_s": len(waves) / batched_s,
        "loop_utt_per_s": len(waves) / loop_s,
        "speedup": loop_s / batched_s,
        "max_abs_difference": float(np.max(np.abs(batched - loop))),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", nargs="*", help="roster labels (default: every one with a checkpoint)")
    parser.add_argument("--roster", type=Path, default=ROOT / "configs" / "encoders.toml")
    parser.add_argument("--checkpoints-root", type=Path, default=None)
    parser.add_argument("--utterances", type=int, default=24)
    parser.add_argument("--lengths", choices=["random", "equal"], default="random")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each path; the best is shown")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--json", action="store_true", help="also print one JSON line with the figures")
    args = parser.parse_args()
    specs, skipped = available(load_roster(args.roster, args.checkpoints_root), args.labels)
    waves = clips(args.utterances, args.lengths)
    rows = [measure(spec.load(args.device, args.dtype), waves, args.repeats) for spec in specs]
    print(f"{args.utterances} clips ({args.lengths} lengths), device {args.device}, {args.dtype}")
    print(f"  {'label':<20} {'batched utt/s':>14} {'loop utt/s':>11} {'ratio':>6} {'max |diff|':>11}")
    for row in rows:
        print(
            f"  {row['label']:<20} {row['batched_utt_per_s']:14.1f} {row['loop_utt_per_s']:11.1f} "
            f"{row['speedup']:5.2f}x {row['max_abs_difference']:11.2e}"
        )
    for line in skipped:
        print(f"  skipped {line}")
    if args.json:
        figures = {"device": args.device, "dtype": args.dtype, "lengths": args.lengths, "encoders": rows}
        print(json.dumps({**figures, "skipped": skipped}))


if __name__ == "__main__":
    main()
