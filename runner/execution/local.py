"""The executor of this machine: operator worker processes degrade sides a few batches ahead of the encoders,
which run in this process."""

from __future__ import annotations

import multiprocessing
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from runner.cache import CachedEmbedding, EmbeddingCache
from runner.design.config import RunConfig
from runner.encoders.deferred import DeferredEncoder
from runner.encoders.device import device_class
from runner.encoders.failures import MemoryLog
from runner.execution.jobs import Degraded, DegradeJob, EmbedJob, EmbedWork, degrade, embed_realised, init_worker
from runner.operators import NoiseSources
from runner.stages import StageLog

LOOKAHEAD_BATCHES = 2


def ahead(pool: ProcessPoolExecutor, jobs: list[DegradeJob], window: int) -> Iterator[Degraded]:
    """``degrade`` of each job in order, with at most ``window`` jobs submitted and not yet taken."""
    pending: deque[Future[Degraded]] = deque(pool.submit(degrade, job) for job in jobs[:window])
    for job in jobs[window:]:
        done = pending.popleft().result()
        pending.append(pool.submit(degrade, job))
        yield done
    while pending:
        yield pending.popleft().result()


class LocalExecutor:
    """The default: operators in ``workers`` local processes (0: in this process) ahead of the encoders, which
    run in this process in batches of the run's ``batch_size``."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.forward_passes = 0
        self.label_seconds: dict[str, dict[str, float | None]] = {}
        self.memory: dict[str, MemoryLog] = {}

    def describe(self) -> dict[str, Any]:
        return {"name": "local", "workers": self.workers}

    def device_class(self, device: str) -> str:
        return device_class(device)

    def compute(self, work: EmbedWork) -> list[dict[str, CachedEmbedding]]:
        computed: list[dict[str, CachedEmbedding]] = []
        degrade_jobs = [job.degrade for job in work.jobs]
        with (
            work.stages.part("embeddings", "sides embedded", len(work.jobs)) as bar,
            self._degraded(work.config, work.sources, degrade_jobs, work.stages) as done,
        ):
            batch: list[tuple[EmbedJob, Degraded]] = []
            for job, realised in zip(work.jobs, done, strict=True):
                batch.append((job, realised))
                if len(batch) == work.config.batch_size:
                    computed.extend(self._embed_batch(work.encoders, work.cache, batch, work.stages))
                    bar.advance(len(batch))
                    batch = []
            computed.extend(self._embed_batch(work.encoders, work.cache, batch, work.stages))
            bar.advance(len(batch))
        return computed

    @contextmanager
    def _degraded(
        self, config: RunConfig, sources: dict[str, NoiseSources], jobs: list[DegradeJob], stages: StageLog
    ) -> Iterator[Iterable[Degraded]]:
        """The degraded audio of each job, in order, computed ahead by the worker processes: at most
        ``LOOKAHEAD_BATCHES`` of the run's batches ahead of the encoders, so that the workers do not take the cores
        from the first forward passes (the first progress line then comes after one batch, not after every
        degradation of the run)."""
        if self.workers == 0 or len(jobs) < 2:
            init_worker(config.seed, sources)
            yield map(degrade, jobs)
            return
        context = multiprocessing.get_context("spawn")  # no fork of a process that holds torch threads
        stages.note("embeddings", f"... starting {self.workers} operator worker processes (spawn) ...")
        with ProcessPoolExecutor(
            self.workers, context, initializer=init_worker, initargs=(config.seed, sources)
        ) as pool:
            try:
                yield ahead(pool, jobs, LOOKAHEAD_BATCHES * config.batch_size)
            except BaseException:
                pool.shutdown(cancel_futures=True)
                raise

    def _embed_batch(
        self,
        encoders: dict[str, DeferredEncoder],
        cache: EmbeddingCache,
        batch: list[tuple[EmbedJob, Degraded]],
        stages: StageLog,
    ) -> list[dict[str, CachedEmbedding]]:
        computed: list[dict[str, CachedEmbedding]] = [{} for _ in batch]
        for label, encoder in encoders.items():
            held = [index for index, (job, _) in enumerate(batch) if label in job.keys]
            if held and not encoder.loaded:  # before the clock starts: a label's seconds are its forward passes'
                stages.note("embeddings", f"... loading encoder {label} ({encoder.spec.kind}) ...")
                started = time.perf_counter()
                encoder.load()
                stages.note("embeddings", f"encoder {label} loaded in {time.perf_counter() - started:.1f} s")
            started, started_cpu = time.perf_counter(), time.process_time()
            embedded = embed_realised(encoder, [(batch[i][0].keys[label], batch[i][1]) for i in held])
            spent = self.label_seconds.setdefault(label, {"wall_s": 0.0, "cpu_s": 0.0})
            spent["wall_s"] = (spent["wall_s"] or 0.0) + time.perf_counter() - started
            spent["cpu_s"] = (spent["cpu_s"] or 0.0) + time.process_time() - started_cpu
            self.forward_passes += embedded.passes
            self.memory.setdefault(label, MemoryLog()).merge(embedded.memory)
            for index, (key, entry) in zip(held, embedded.entries, strict=True):
                cache.put(key, entry)
                computed[index][label] = entry
        return computed
