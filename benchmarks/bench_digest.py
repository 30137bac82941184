"""Digest throughput: ``provenance.digests.file_digest`` (SHA-256 + BLAKE3 in one streamed pass) in MB/s,
side by side with a plain ``sha256sum`` of the same file (the physical reference a reviewer would use).

Usage: ``python benchmarks/bench_digest.py [--size-mb 256] [--repeats 3]``. The file is written first, so
every reader sees it in the page cache: this measures hashing, not the disk. The best of ``--repeats`` runs
is shown.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3

from provenance.digests import CHUNK_SIZE, file_digest


def _streamed(path: Path, make_hasher: Callable[[], Any]) -> str:
    """One algorithm alone over the same chunked reads, to show what each costs inside file_digest."""
    hasher = make_hasher()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_SIZE):
            hasher.update(chunk)
    return hasher.hexdigest()


def _best_seconds(action: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=256, help="size of the test file in MiB")
    parser.add_argument("--repeats", type=int, default=3, help="runs per reader; the best is shown")
    parser.add_argument("--quick", action="store_true", help="a 16 MiB file, one run per reader")
    args = parser.parse_args()
    if args.quick:
        args.size_mb, args.repeats = 16, 1
    sha256sum = shutil.which("sha256sum")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "payload.bin"
        with path.open("wb") as handle:
            for _ in range(args.size_mb):
                handle.write(os.urandom(1 << 20))
        megabytes = path.stat().st_size / 1e6
        digest = file_digest(path)
        readers: dict[str, Callable[[], object]] = {
            "file_digest (SHA-256 + BLAKE3)": lambda: file_digest(path),
            "streamed SHA-256 only (hashlib)": lambda: _streamed(path, hashlib.sha256),
            "streamed BLAKE3 only": lambda: _streamed(path, blake3.blake3),
        }
        if sha256sum is not None:
            reference = subprocess.run([sha256sum, str(path)], capture_output=True, text=True, check=True)
            if reference.stdout.split()[0] != digest.sha256:
                raise SystemExit("sha256sum and file_digest disagree: the benchmark is meaningless")
            readers["sha256sum (coreutils)"] = lambda: subprocess.run(
                [sha256sum, str(path)], capture_output=True, check=True
            )
        print(f"file: {megabytes:.0f} MB, chunk {CHUNK_SIZE >> 10} KiB, best of {args.repeats}", flush=True)
        for name, action in readers.items():
            seconds = _best_seconds(action, args.repeats)
            print(f"{name:34s} {seconds:7.3f} s {megabytes / seconds:9.1f} MB/s", flush=True)
        if sha256sum is None:
            print("sha256sum not found: no coreutils reference")


if __name__ == "__main__":
    main()
