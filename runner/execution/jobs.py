"""The work an executor does and the interface it does it behind.

``degrade`` realises one side's chain on its clean audio (in an operator worker process or a cluster task),
``embed_realised`` embeds a chunk of realised sides with one encoder, and :class:`Executor` is what a run hands
that work to (this machine's :class:`~runner.execution.local.LocalExecutor` or the Ray cluster's).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import soundfile

from runner.cache import CachedEmbedding, EmbeddingCache, encoder_outcome
from runner.design.config import RunConfig
from runner.design.experiments import ChainSpecs
from runner.encoders import EncoderHandle
from runner.encoders.deferred import DeferredEncoder
from runner.encoders.failures import MemoryLog, embed_each
from runner.operators import Chain, NoiseSources
from runner.plan import Side
from runner.stages import StageLog
from schemas import InputError


@dataclass(frozen=True)
class DegradeJob:
    """What a worker needs to degrade one side: the chain's specs and the clean audio's path."""

    side: Side
    specs: ChainSpecs
    path: Path


Degraded = tuple[np.ndarray | None, int, list[dict[str, Any]]]


_worker_context: dict[str, Any] = {}


def init_worker(seed: int, sources: dict[str, NoiseSources]) -> None:
    """Bind the run's seed and noise material for ``degrade`` in this process (a pool or cluster worker)."""
    _worker_context.update(seed=seed, sources=sources)
    if multiprocessing.parent_process() is not None:  # a worker: end with the run, even when it is killed
        threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """Poll the parent process; once it is gone (killed run), leave at once instead of lingering."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def read_clean_wave(path: Path) -> tuple[np.ndarray, int]:
    """A corpus utterance as mono float32; unreadable audio is an InputError naming the file."""
    try:
        wave, sr = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, OSError) as error:
        raise InputError(str(path), f"unreadable audio ({error})") from None
    if wave.shape[0] == 0:
        raise InputError(str(path), "audio holds no samples")
    return np.ascontiguousarray(wave.mean(axis=1), dtype=np.float32), int(sr)


def degrade(job: DegradeJob) -> Degraded:
    """Apply a side's chain to its clean audio (in a worker process); a failed chain gives no wave."""
    wave, sr = read_clean_wave(job.path)
    if not job.specs:
        return wave, sr, []
    chain = Chain.from_specs(list(job.specs), sources=_worker_context["sources"][job.side.corpus])
    result = chain(wave, sr, seed=_worker_context["seed"], utt_id=job.side.utt_id)
    outcomes = [outcome.as_dict() for outcome in result.outcomes]
    return (None if result.status == "failed" else result.wave), result.sr, outcomes


@dataclass(frozen=True)
class EmbedJob:
    """One side to realise once, and the cache key under which each encoder still lacking it stores its entry."""

    degrade: DegradeJob
    keys: dict[str, str]


@dataclass(frozen=True)
class Embedded:
    """What ``embed_realised`` gives: each (key, entry) in the given order, the sides handed to the encoder (its
    forward passes), and what running out of memory cost it."""

    entries: list[tuple[str, CachedEmbedding]]
    passes: int
    memory: MemoryLog


def embed_realised(encoder: EncoderHandle, items: list[tuple[str, Degraded]]) -> Embedded:
    """Each (key, realised side) as a cache entry of ``encoder``.

    One ``embed`` call per sample rate, in the given order (the encoder buckets by length inside it): every
    executor hands the same items in the same order, so the vectors are the same bytes wherever they are computed.
    A side whose chain failed gets an entry without a vector; so does a side the encoder cannot embed
    (``failures.embed_each``: too short, silent, not finite, out of memory even alone), its outcomes ending with the
    encoder's, which names the label and the reason.
    """
    usable = [(index, wave, sr) for index, (_, (wave, sr, _)) in enumerate(items) if wave is not None]
    results: dict[int, np.ndarray | str] = {}
    memory = MemoryLog()
    for rate in sorted({sr for _, _, sr in usable}):
        same_rate = [(index, wave) for index, wave, sr in usable if sr == rate]
        embedded = embed_each(encoder, [wave for _, wave in same_rate], rate, memory)
        results.update(zip([index for index, _ in same_rate], embedded, strict=True))
    label = encoder.checkpoint.label
    entries = []
    for index, (key, (_, _, outcomes)) in enumerate(items):
        result = results.get(index)
        if isinstance(result, str):
            entry = CachedEmbedding(None, [*outcomes, encoder_outcome(label, result)])
        else:
            entry = CachedEmbedding(result, outcomes)
        entries.append((key, entry))
    return Embedded(entries, len(usable), memory)


@dataclass(frozen=True)
class EmbedWork:
    """What an executor is handed: the run's configuration (seed, batch size, encoder specs), the driver's
    encoders (their cache keys; the local executor runs them), the cache, each corpus's noise material, the jobs,
    and the run's stage log (the embedding stage's progress goes through it)."""

    config: RunConfig
    encoders: dict[str, DeferredEncoder]
    cache: EmbeddingCache
    sources: dict[str, NoiseSources]
    jobs: list[EmbedJob]
    stages: StageLog


class Executor(Protocol):
    """Where the work of ``Embedder`` runs: realise each job's chain, embed it with each encoder it lacks, and
    store each entry in the cache under its key; then return the entries, verified, in job order."""

    forward_passes: int
    label_seconds: dict[str, dict[str, float | None]]  # per label: wall_s and cpu_s (None where not measured)
    memory: dict[str, MemoryLog]  # per label: what running out of memory cost (``failures.MemoryLog``)

    def compute(self, work: EmbedWork) -> list[dict[str, CachedEmbedding]]: ...

    def device_class(self, device: str) -> str:
        """What the encoders will run on (``runner.encoders.device.device_class``): part of every embedding key."""
        ...

    def describe(self) -> dict[str, Any]:
        """What executed the run, for ``environment.json``."""
        ...
