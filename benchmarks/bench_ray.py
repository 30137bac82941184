"""The Ray executor against the local one on the same work, and a projection to the full registry on N GPUs.

Runs a reduced copy of the embedded default (``configs/default.toml`` with ``--per-speaker`` utterances per speaker
and ``--trials`` target and non-target trials per list: the full default takes about 6 minutes a run on a 2-core
machine, and this benchmark makes seven), after an untimed warm-up run, with: the local executor with 1 and 2
operator processes, and the Ray executor on a local cluster of 1 and 2 nodes of one CPU each
(``ray.cluster_utils.Cluster``), and on the 2 nodes with a pool of 2 actors per encoder label, each from an empty
cache. It checks that every run wrote the same ``results.csv`` bytes, and prints the ratios (Ray against the local
executor on the same CPUs; 2 workers against 1), the cluster start, the per-label throughput the actors measured,
the driver's cost per cache entry (read + verify) and per trial (the scoring arithmetic), and a projection: with the
default pools (max(1, N // labels) one-GPU actors per label), the embedding stage takes max(slowest label / its
pool, sum over labels / N GPUs); the operator stage R realisations / CPUs; the driver its per-entry and per-trial
costs. The counts come from ``--plan`` (``interbias plan configs/full.toml --json``) or, without it, from this run;
per-label GPU throughputs from ``--throughput`` (JSON ``{label: utterances per second on one GPU}``), else this
machine's CPU figures, else ``--assume-utt-per-s`` (printed as assumed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # the local cluster's nodes on 127.0.0.1

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runner.cache import EmbeddingCache  # noqa: E402
from runner.design.config import load_config  # noqa: E402
from runner.execution import LocalExecutor, RayExecutor  # noqa: E402
from runner.pipeline import RunOptions, run  # noqa: E402

OBJECT_STORE = 200 * 1024**2


def reduced_config(source: Path, folder: Path, per_speaker: int, trials: int) -> Path:
    """The configuration with fewer utterances per speaker and trials per list (everything else as it is)."""
    text = source.read_text()
    text = re.sub(r"(?m)^utterances_per_speaker = \d+", f"utterances_per_speaker = {per_speaker}", text)
    text = re.sub(r"(?m)^(nontarget_trials|target_trials) = \d+", rf"\1 = {trials}", text)
    text = re.sub(r'(?m)^roster = "([^"/]+)"', lambda m: f'roster = "{source.parent / m.group(1)}"', text)
    path = folder / "bench.toml"
    path.write_text(text)
    return path


def timed_run(config_path: Path, folder: Path, executor: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    summary = run(
        load_config(config_path),
        folder / "out",
        RunOptions(cache_root=folder / "cache", progress=False, executor=executor),
    )
    return time.perf_counter() - started, summary


def ray_cluster(nodes: int) -> Any:
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": OBJECT_STORE, "include_dashboard": False},
    )
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
    cluster.wait_for_nodes()
    return cluster


def verify_rate(cache_root: Path) -> tuple[int, float]:
    """Entries in a cache and the driver's seconds per entry to read and verify them."""
    cache = EmbeddingCache(cache_root / "embeddings")
    keys = [path.stem for path in sorted((cache_root / "embeddings").glob("*/*.emb"))]
    started = time.perf_counter()
    for key in keys:
        cache.read(key)
    return len(keys), (time.perf_counter() - started) / max(len(keys), 1)


def scoring_seconds(trials: int = 100_000, dim: int = 256) -> float:
    """Seconds per trial of the driver's scoring: the cosine of two embeddings as ``runner.pipeline._score_record``
    computes it, trial by trial (the run's own loop needs a planned run; this is its arithmetic)."""
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((2, dim)).astype(np.float32)
    enrol, test = vectors[0], vectors[1]
    started = time.perf_counter()
    for _ in range(trials):
        float(np.dot(enrol, test) / (np.linalg.norm(enrol) * np.linalg.norm(test)))
    return (time.perf_counter() - started) / trials


def projection(counts: dict[str, Any], speeds: dict[str, float], costs: dict[str, float], gpus: list[int]) -> list[str]:
    """Hours per stage on N GPUs (the default pools: max(1, N // labels) actors of one GPU per label) and which
    stage bounds the run."""
    per_label = {label: counts["embeddings_per_label"] / speed for label, speed in speeds.items()}
    lines = [
        f"projection for {counts['source']}: {counts['embeddings_per_label']:,} embeddings per label x "
        f"{len(speeds)} labels, {counts['realisations']:,} realisations, {counts['trials']:,} trials",
        f"  {'GPUs':>5} {'embed h':>9} {'operators h':>12} {'driver h':>9} {'bound by':>12}",
    ]
    driver = (
        counts["embeddings_per_label"] * len(speeds) * costs["verify_s"] + counts["trials"] * costs["trial_s"]
    ) / 3600
    for n in gpus:
        pool = max(1, n // len(per_label))
        embed = max(max(per_label.values()) / pool, sum(per_label.values()) / n) / 3600
        operators = counts["realisations"] * costs["realise_s"] / max(costs["cpus_per_gpu"] * n, 1) / 3600
        stages = {"embedding": embed, "operators": operators, "driver": driver}
        bound = max(stages, key=lambda stage: stages[stage])
        if bound == "embedding" and embed * 3600 == max(per_label.values()) / pool:
            bound = f"label {max(per_label, key=lambda label: per_label[label])}"
        lines.append(f"  {n:>5} {embed:>9.2f} {operators:>12.2f} {driver:>9.2f} {bound:>12}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "default.toml")
    parser.add_argument("--per-speaker", type=int, default=3, help="utterances per speaker (default 30)")
    parser.add_argument("--trials", type=int, default=3, help="target and non-target trials per list")
    parser.add_argument("--plan", type=Path, help="`interbias plan CONFIG --json` output to project")
    parser.add_argument("--throughput", type=Path, help="JSON {label: utterances/s on one GPU}")
    parser.add_argument("--assume-utt-per-s", type=float, help="stand-in figure for labels with none (say so)")
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 2, 4, 8, 12, 16, 24, 48, 96])
    parser.add_argument("--cpus-per-gpu", type=int, default=8, help="operator CPUs per GPU in the projection")
    parser.add_argument("--quick", action="store_true", help="2 utterances per speaker, 1 trial of each kind per list")
    args = parser.parse_args()
    if args.quick:
        args.per_speaker, args.trials = 2, 1

    from runner.corpora.asterisk import build_default_corpus

    work = Path(tempfile.mkdtemp(prefix="bench_ray_"))
    try:
        config_path = reduced_config(args.config, work, args.per_speaker, args.trials)
        config = load_config(config_path)
        if not (config.corpus.root / "utterances.csv").is_file():
            build_default_corpus(config.corpus.root, progress=False)
        timed_run(config_path, work / "warm-up", LocalExecutor(0))  # imports, model files, decoded music: not timed
        walls: dict[str, float] = {}
        results: dict[str, bytes] = {}
        summaries: dict[str, Any] = {}
        for workers in (1, 2):
            name = f"local, {workers} operator process(es)"
            walls[name], summaries[name] = timed_run(config_path, work / f"local{workers}", LocalExecutor(workers))
            print(f"  {name}: {walls[name]:.1f} s", flush=True)
            results[name] = (work / f"local{workers}" / "out" / "results.csv").read_bytes()
        environment: dict[str, Any] = {}
        starts: dict[int, float] = {}
        for nodes, pool in ((1, None), (2, None), (2, 2)):
            started = time.perf_counter()
            cluster = ray_cluster(nodes)
            starts.setdefault(nodes, time.perf_counter() - started)  # the first start of each size
            try:
                name = f"ray, {nodes} node(s) x 1 CPU" + (f", {pool} actors/label" if pool else "")
                folder = work / f"ray{nodes}-{pool or 'default'}"
                walls[name], summaries[name] = timed_run(
                    config_path, folder, RayExecutor(cluster.address, actors_per_label=pool)
                )
                print(f"  {name}: {walls[name]:.1f} s (cluster start {starts[nodes]:.1f} s)", flush=True)
                results[name] = (folder / "out" / "results.csv").read_bytes()
                if pool is None:  # the per-actor figures of the default pool (one actor per label here)
                    environment = json.loads((folder / "out" / "environment.json").read_text())["executor"]
            finally:
                cluster.shutdown()
        started = time.perf_counter()
        cached = run(config, work / "local1" / "out", RunOptions(cache_root=work / "local1" / "cache", progress=False))
        rerun = time.perf_counter() - started
        n_entries, verify_s = verify_rate(work / "local1" / "cache")

        first = next(iter(summaries.values()))
        print(f"work: {first.n_utterances} utterances, {first.n_trials:,} trials, {first.forward_passes:,} embeddings")
        print(f"same results.csv bytes in all {len(results)} runs: {len(set(results.values())) == 1}")
        base = walls["local, 1 operator process(es)"]
        for name, wall in walls.items():
            print(f"  {name:<42} {wall:7.1f} s   {wall / base:5.2f}x of local/1")
        print(
            f"  ray overhead on 1 CPU: {walls['ray, 1 node(s) x 1 CPU'] / base:.2f}x; 2 nodes vs 1: "
            f"{walls['ray, 1 node(s) x 1 CPU'] / walls['ray, 2 node(s) x 1 CPU']:.2f}x faster; 2 actors/label vs 1: "
            f"{walls['ray, 2 node(s) x 1 CPU'] / walls['ray, 2 node(s) x 1 CPU, 2 actors/label']:.2f}x faster; "
            f"cluster start {starts[1]:.1f} s (1 node), {starts[2]:.1f} s (2 nodes)"
        )
        print(
            f"  fully cached rerun (driver only): {rerun:.1f} s; {n_entries:,} entries read and verified at "
            f"{verify_s * 1e3:.2f} ms each"
        )
        speeds = {  # per actor: the pool's forward passes over its members' busy seconds
            label: sum(actor["forward_passes"] for actor in pool) / sum(actor["busy_s"] for actor in pool)
            for label, pool in environment.get("actors", {}).items()
            if any(actor.get("busy_s") for actor in pool)
        }
        for label, speed in speeds.items():
            print(f"  actor {label}: {speed:.1f} utt/s on this CPU")
        if args.throughput:
            speeds = {label: float(value) for label, value in json.loads(args.throughput.read_text()).items()}
        trial_s = scoring_seconds()
        print(
            f"  driver: cached rerun {rerun:.1f} s for {cached.n_trials} trials (fixed cost); scoring "
            f"{trial_s * 1e6:.1f} us/trial; one driver verifies at most {1 / verify_s:,.0f} entries/s"
        )
        realised = environment["stages"]["realise"]
        realise_s = realised["seconds"] * environment["cpus"] / max(realised["sides"], 1)  # an upper bound
        if args.plan:
            plan = json.loads(args.plan.read_text())
            counts = {
                "source": str(args.plan),
                "embeddings_per_label": plan["total"]["embeddings_per_label"],
                "realisations": plan["total"]["operator_realisations"],
                "trials": plan["total"]["trials"],
            }
            missing = sorted(set(plan["labels"]) - set(speeds))
            if missing and args.assume_utt_per_s:
                print(f"  ASSUMED {args.assume_utt_per_s:g} utt/s per actor for {', '.join(missing)} (no figure)")
                speeds |= dict.fromkeys(missing, args.assume_utt_per_s)
            elif missing:
                print(f"  no throughput figure for {', '.join(missing)} (--throughput): left out of the projection")
            speeds = {label: speed for label, speed in speeds.items() if label in plan["labels"]}
        else:
            counts = {
                "source": "this reduced run",
                "embeddings_per_label": realised["sides"],
                "realisations": realised["sides"],
                "trials": first.n_trials,
            }
        costs = {"verify_s": verify_s, "trial_s": trial_s, "realise_s": realise_s, "cpus_per_gpu": args.cpus_per_gpu}
        print(
            f"  costs: realise {realise_s * 1e3:.1f} ms CPU/side, driver {verify_s * 1e3:.2f} ms/entry, "
            f"{trial_s * 1e6:.1f} us/trial"
        )
        if speeds:
            print("\n".join(projection(counts, speeds, costs, args.gpus)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
