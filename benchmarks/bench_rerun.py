"""What a rerun costs: ``interbias run`` of a configuration cold (empty cache), then unchanged (same cache, same
--out: a resume with nothing left to do) and into a fresh --out (same cache), side by side.

Usage: ``python benchmarks/bench_rerun.py [--config configs/default.toml] [--work DIR]``. The configuration's
corpus must be built already (``interbias corpus build`` for the default). Each run is a fresh process, imports
included, as a user would see it; wall and CPU seconds (user + system of the child) are shown, with the embeddings
computed and the input files hashed (the rest come from the digest index).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def timed_run(config: Path, out: Path, cache: Path) -> dict[str, Any]:
    """One ``interbias run`` in a child process: its summary, wall seconds and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "runner.cli", "run", str(config), "--out", str(out), "--cache", str(cache)]
    result = subprocess.run([*command, "--json", "--no-progress"], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"interbias run failed ({result.returncode}): {result.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, **json.loads(result.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/default.toml"))
    parser.add_argument("--work", type=Path, default=None, help="Folder for the bundles and the cache (kept).")
    parser.add_argument("--quick", action="store_true", help="the cold run and the unchanged rerun only")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-rerun-"))
    cache = work / "cache"
    shutil.rmtree(work / "out", ignore_errors=True)
    shutil.rmtree(cache / "embeddings", ignore_errors=True)
    shutil.rmtree(cache / "checkpoints", ignore_errors=True)  # the records of loaded encoders
    (cache / "digests.json").unlink(missing_ok=True)
    runs = [("cold (empty cache)", work / "out"), ("unchanged rerun", work / "out")]
    runs += [] if args.quick else [("rerun into a fresh --out", work / "out2")]
    print(f"{args.config}: {os.cpu_count()} CPUs", flush=True)
    print(f"{'run':<26}{'wall s':>8}{'CPU s':>8}{'embedded':>10}{'cached':>8}{'hashed':>8}{'indexed':>9}", flush=True)
    rows = []
    for name, out in runs:  # each run's line as it finishes: a cold run takes many minutes
        rows.append((name, row := timed_run(args.config, out, cache)))
        print(
            f"{name:<26}{row['wall_s']:>8.1f}{row['cpu_s']:>8.1f}{row['forward_passes']:>10}"
            f"{row['embeddings_cached']:>8}{row['files_hashed']:>8}{row['digests_reused']:>9}",
            flush=True,
        )
    print(f"unchanged rerun / cold: {rows[1][1]['wall_s'] / rows[0][1]['wall_s']:.3f} (wall)")


if __name__ == "__main__":
    main()
