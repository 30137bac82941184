"""CPU seconds per audio second of ECAPA-TDNN and CAM++ on a machine other jobs share, per torch thread policy.

Usage: ``python benchmarks/bench_shared_cores.py [--loads 0 2 4] [--rounds 2] [--seconds 30] [--quick] [--json]``.

The same real utterances of the default corpus (``interbias corpus build``'s cache: the first prompts of each
speaker, 2-8 s long, taken in turn until ``--seconds`` of audio) are embedded by each encoder through the runner's
path (``EncoderSpec.load().embed``) in a process of its own per configuration, since the wait policy is read when
torch loads. Policies:

- ``default``: torch as it starts (one thread per CPU of the affinity mask, libgomp spinning before it sleeps);
- ``cores``: ``torch.set_num_threads`` to the cores available (affinity capped by a cgroup quota);
- ``passive``: ``OMP_WAIT_POLICY=PASSIVE`` in the environment before torch loads, default threads;
- ``runner``: ``ThreadPolicy.for_this_machine()`` applied as a run applies it (``apply``, ``loader``);
- ``one``: ``torch.set_num_threads(1)``.

Each load level (``--loads``: busy-loop processes the bench starts at nice 0, pinned to nothing, and stops after
the level) runs every policy ``--rounds`` times, the order rotated each round so that the policies see the same
load. CPU seconds are the worker's user+sys of all its threads over the timed ``embed`` call only (after one
warm-up call); wall seconds beside. Each configuration prints its line as it finishes, with the load average
before it; the table gives the median CPU s per audio s, idle (load 0: nothing started by the bench; the machine
may still be shared) and at each load, and their ratio. The embeddings of every configuration are compared with
the first one's (max abs difference, min cosine). ``--quick``: 10 s of audio, loads 0 and 2, one round.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLE_RATE = 16_000
LABELS = ("ecapa-tdnn", "campplus-zh-en")
POLICIES = ("default", "cores", "passive", "runner", "one")
BUSY_LOOP = "while True: pass"


def utterances(seconds: float) -> list[Path]:
    """The first 2-8 s prompts of each speaker of the default corpus, taken in turn until ``seconds`` of audio."""
    import pandas as pd

    from runner.design import default_cache_root

    folder = default_cache_root() / "corpora" / "asterisk"
    table = pd.read_csv(folder / "utterances.csv").sort_values("utt_id")
    table = table[table["duration_s"].between(2.0, 8.0)]
    queues = [list(group.itertuples()) for _, group in table.groupby("speaker", sort=True)]
    chosen: list[Path] = []
    total = 0.0
    while total < seconds:
        for queue in queues:
            if queue and total < seconds:
                row = queue.pop(0)
                chosen.append(folder / row.path)
                total += row.duration_s
    return chosen


def worker(policy: str, seconds: float, out: Path) -> None:
    """Embed the clips with each label under ``policy`` (its environment was set by the parent); one JSON line."""
    import soundfile

    from runner.execution.threads import ThreadPolicy, available_cores, cgroup_quota

    runner = ThreadPolicy.for_this_machine()
    if policy == "runner":
        runner.apply()
    import torch

    if policy == "cores":
        torch.set_num_threads(available_cores(quota=cgroup_quota()))
    elif policy == "one":
        torch.set_num_threads(1)
    from runner.design import default_checkpoints_root
    from runner.encoders import load_roster

    specs = {s.label: s for s in load_roster(ROOT / "configs" / "encoders.toml", default_checkpoints_root())}
    clips = [soundfile.read(path, dtype="float32")[0] for path in utterances(seconds)]
    audio = sum(len(clip) for clip in clips) / SAMPLE_RATE
    rows = {}
    load = runner.loader(lambda spec, device: spec.load(device)) if policy == "runner" else None
    for label in LABELS:
        encoder = load(specs[label], "cpu") if load else specs[label].load()
        encoder.embed(clips[:2], SAMPLE_RATE)  # warm-up: lazy imports, allocator, oneDNN primitives
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        vectors = np.asarray(encoder.embed(clips, SAMPLE_RATE))
        wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        np.save(out / f"{policy}-{label}.npy", vectors)
        rows[label] = {"cpu_s": cpu, "wall_s": wall}
    print(json.dumps({"threads": torch.get_num_threads(), "audio_s": audio, "clips": len(clips), "labels": rows}))


def environment(policy: str) -> dict[str, str]:
    """The worker's environment: the parent's without thread variables, plus the policy's."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "GOMP_SPINCOUNT")}
    if policy == "passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env | {"PYTHONPATH": str(ROOT)}


def configuration(policy: str, seconds: float, out: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", policy, "--seconds", str(seconds), "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=environment(policy))
    if done.returncode != 0:
        raise SystemExit(f"{policy}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(folder: Path, reference: dict[str, np.ndarray]) -> tuple[float, float]:
    """Max abs difference and min cosine of the vectors in ``folder`` to ``reference``'s, per row."""
    worst_abs, worst_cos = 0.0, 1.0
    for path in folder.glob("*.npy"):
        label = path.stem.split("-", 1)[1]
        vectors, first = np.load(path), reference.setdefault(label, np.load(path))
        worst_abs = max(worst_abs, float(np.max(np.abs(vectors - first))))
        cosines = np.sum(vectors * first, 1) / np.linalg.norm(vectors, axis=1) / np.linalg.norm(first, axis=1)
        worst_cos = min(worst_cos, float(np.min(cosines)))
    return worst_abs, worst_cos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, nargs="+", default=[0, 2, 4], help="busy-loop processes per level")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30.0, help="audio seconds per configuration")
    parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
    parser.add_argument("--quick", action="store_true", help="10 s of audio, loads 0 and 2, one round")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", choices=POLICIES, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.seconds, args.out)
        return
    if args.quick:
        args.seconds, args.loads, args.rounds = 10.0, [0, 2], 1
    if 0 not in args.loads:
        print("--loads must include 0 (the idle reference)", file=sys.stderr)
        raise SystemExit(2)
    print(f"{len(os.sched_getaffinity(0))} CPUs; policies {' '.join(args.policies)}; {args.seconds:g} s of audio")
    rows: list[dict[str, Any]] = []
    reference: dict[str, np.ndarray] = {}
    worst = (0.0, 1.0)
    for load in args.loads:
        hogs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(load)]
        try:
            time.sleep(2.0 if load else 0.0)
            for round_ in range(args.rounds):
                shift = round_ % len(args.policies)
                for policy in args.policies[shift:] + args.policies[:shift]:
                    uptime = os.getloadavg()
                    with tempfile.TemporaryDirectory() as folder:
                        result = configuration(policy, args.seconds, Path(folder))
                        found = compare(Path(folder), reference)
                    worst = (max(worst[0], found[0]), min(worst[1], found[1]))
                    for label, spent in result["labels"].items():
                        row = {"load": load, "policy": policy, "label": label, "loadavg": uptime[0]}
                        rows.append(row | spent | {"threads": result["threads"], "audio_s": result["audio_s"]})
                    cells = "  ".join(
                        f"{label} {s['cpu_s'] / result['audio_s']:.3f} cpu/audio {s['wall_s']:.1f} s wall"
                        for label, s in result["labels"].items()
                    )
                    print(
                        f"  load {load} round {round_ + 1} {policy:<8} {result['threads']} threads  {cells}  "
                        f"(load average {uptime[0]:.2f})",
                        flush=True,
                    )
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    audio = rows[0]["audio_s"]
    print(f"{rows[0]['audio_s']:.1f} s of audio per configuration; median CPU s per audio s (wall s), loaded/idle:")
    print(f"  {'policy':<8} {'label':<16}" + "".join(f"{'load ' + str(n):>20}" for n in args.loads))
    for policy in args.policies:
        for label in LABELS:

            def median(load: int, key: str, policy: str = policy, label: str = label) -> float:
                return statistics.median(
                    r[key] for r in rows if (r["load"], r["policy"], r["label"]) == (load, policy, label)
                )

            idle = median(0, "cpu_s")
            cells = "".join(
                f"{median(n, 'cpu_s') / audio:>7.3f} ({median(n, 'wall_s'):5.1f}) "
                + (f"{median(n, 'cpu_s') / idle:4.2f}x" if n else "     ")
                for n in args.loads
            )
            print(f"  {policy:<8} {label:<16}{cells}")
    print(f"embeddings across configurations: max abs difference {worst[0]:.2e}, min cosine {worst[1]:.8f}")
    if args.json:
        print(json.dumps({"rows": rows, "max_abs_difference": worst[0], "min_cosine": worst[1]}))


if __name__ == "__main__":
    main()
