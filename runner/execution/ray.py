"""The Ray executor: operator realisations as Ray tasks, embeddings in a pool of Ray actors per encoder label.

``interbias run CONFIG --executor ray [--address ADDR] [--gpus-per-actor F] [--actors-per-label N]``. Only the
embeddings move to the cluster: the driver plans, looks the cache up, and hands each missing (utterance, chain)
side to a CPU task that realises its chain (``jobs.degrade``); the realised audio stays in Ray's object store
and goes to an actor of each encoder that lacks it. Each actor holds its model once (``num_gpus=F``, fractional
allowed) and embeds whole chunks of ``batch_size`` sides, the same chunks as the local executor
(``jobs.embed_realised``; the encoder buckets each chunk by length), chunk ``c`` going to actor ``c mod N`` of
the label's pool, so the vectors are the same bytes whichever actor computed them. The actor writes each entry to
the shared cache folder; the driver then reads every entry back and verifies it (``EmbeddingCache.read``) before
it counts: a worker's word is never taken. Trials, scoring, the bundle and its signature stay on the driver.

What every node must share, at the same paths: the corpus and music folders and the checkpoints (read), the cache
folder (written). The driver stages each corpus's utterance table (babble material) in the cache folder under its
BLAKE3, and a worker checks the digest before it uses one. A killed worker is retried by Ray (tasks
``max_retries``; actors ``max_restarts`` / ``max_task_retries``, the model reloaded); a killed driver resumes from
the entries already in the cache. Resources are checked before any work: an actor needing a GPU that no node has
is one line, not a hang.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from provenance import atomic_write_bytes, bytes_digest, derived_digest, file_digest
from runner.cache import CachedEmbedding, CacheEntryRejectedError, EmbeddingCache
from runner.design.config import RunConfig
from runner.encoders import Encoder, EncoderSpec
from runner.encoders.base import Dtype
from runner.encoders.device import device_class, device_type
from runner.encoders.failures import MemoryLog
from runner.execution.jobs import Degraded, DegradeJob, EmbedJob, EmbedWork, degrade, embed_realised, init_worker
from runner.operators import NoiseSources
from runner.stages import StagePart
from schemas import InputError, RunError

TABLES_FOLDER = "tables"
TASK_RETRIES = 3  # a realisation task whose worker process died is run again (Ray's max_retries)
ACTOR_RESTARTS = 3  # an encoder actor whose process died is restarted, its model reloaded, its calls retried
ACTOR_READY_S = 900.0  # loading the largest checkpoint; past this an actor that is not placed is an error
LOCAL_OBJECT_STORE = 256 * 1024**2  # a cluster started for one run holds only the chunks in flight
PROBE_S = 10.0  # a head that takes no TCP connection in this time is not there
CPU_ACTORS_PER_LABEL = 4  # the default pool of a CPU encoder at most: each actor holds its own copy of the model


def pool_size(nodes: list[dict[str, Any]], n_labels: int, gpus_per_actor: float, chunks: int) -> int:
    """The default number of actors per encoder label: the cluster's actor slots shared by the labels (each node's
    GPUs / ``gpus_per_actor``, or on CPU its CPUs, at most ``CPU_ACTORS_PER_LABEL``), at least one, and never more
    than the run's chunks (an actor without a chunk would only load its model)."""
    if gpus_per_actor > 0:
        slots = gpu_slots(nodes, gpus_per_actor)
        size = slots // max(n_labels, 1)
    else:
        size = min(int(sum(node["cpus"] for node in nodes)) // max(n_labels, 1), CPU_ACTORS_PER_LABEL)
    return max(1, min(size, chunks))


def gpu_slots(nodes: list[dict[str, Any]], gpus_per_actor: float) -> int:
    """How many actors of ``gpus_per_actor`` GPUs the nodes hold (an actor is never split across nodes)."""
    return sum(int(node["gpus"] / gpus_per_actor + 1e-9) for node in nodes)


def _alive_nodes(ray: Any) -> list[dict[str, Any]]:
    """The cluster's live nodes: address, id, CPUs and GPUs, in a stable order."""
    return sorted(
        (
            {
                "address": node["NodeManagerAddress"],
                "node_id": node["NodeID"],
                "cpus": node["Resources"].get("CPU", 0.0),
                "gpus": node["Resources"].get("GPU", 0.0),
            }
            for node in ray.nodes()
            if node["Alive"]
        ),
        key=lambda node: (node["address"], node["node_id"]),
    )


@dataclass(frozen=True)
class StagedTable:
    """A corpus's utterance table as staged in the shared cache folder, with the material it points to."""

    path: Path
    blake3: str
    audio_root: Path
    music_dir: Path | None


@dataclass(frozen=True)
class WorkerContext:
    """What a realisation task needs besides its job: the seed and each corpus's staged noise material."""

    token: str
    seed: int
    tables: dict[str, StagedTable]


_bound: dict[str, bool] = {}


def _bind(context: WorkerContext) -> None:
    """Verify the staged tables and bind the noise material in this worker process, once per run."""
    if context.token in _bound:
        return
    sources = {}
    for name, table in context.tables.items():
        if not table.path.is_file() or file_digest(table.path).blake3 != table.blake3:
            raise RunError(f"staged utterance table {table.path} is absent or altered on this node")
        sources[name] = NoiseSources(utterances=table.path, audio_root=table.audio_root, music_dir=table.music_dir)
    init_worker(context.seed, sources)
    _bound.clear()
    _bound[context.token] = True


def _realise(context: WorkerContext, job: DegradeJob) -> Degraded:
    """A Ray task: the side's chain applied to its clean audio (``jobs.degrade``)."""
    _bind(context)
    return degrade(job)


class EncoderActor:
    """A Ray actor holding one encoder: embeds realised sides and writes their entries to the shared cache.

    The model is loaded on first use (so a restarted actor reloads it) and must have the driver's cache key:
    a checkpoint that differs on this node is refused rather than mixed into the run.
    """

    def __init__(self, spec: EncoderSpec, device: str, dtype: Dtype, cache_key: str, cache_root: Path) -> None:
        self.spec = spec
        self.device = device
        self.dtype = dtype
        self.cache_key = cache_key
        self.cache = EmbeddingCache(cache_root)
        self.encoder: Encoder | None = None

    def _loaded(self) -> Encoder:
        if self.encoder is None:
            encoder = self.spec.load(device=self.device, dtype=self.dtype)
            if encoder.checkpoint.cache_key != self.cache_key:
                raise RunError(
                    f"encoder {self.spec.label} on node {_node()} has cache key {encoder.checkpoint.cache_key}, "
                    f"the driver's is {self.cache_key}: checkpoint {self.spec.checkpoint} differs between nodes"
                )
            self.encoder = encoder
        return self.encoder

    def ready(self) -> dict[str, Any]:
        """Load the model; where it runs, its device class and its runtime record."""
        encoder = self._loaded()
        return {
            "node": _node(),
            "pid": os.getpid(),
            "device_class": device_class(self.device),
            "runtime": encoder.checkpoint.runtime,
        }

    def embed(self, keys: list[str], *realised: Degraded) -> tuple[int, float, MemoryLog]:
        """Embed the realised sides (audio copied out of the read-only object store), store each entry under its
        key; the number of forward passes, the seconds they took (the label's throughput) and what running out of
        memory cost."""
        started = time.perf_counter()
        items = [
            (key, (None if wave is None else np.array(wave), sr, outcomes))
            for key, (wave, sr, outcomes) in zip(keys, realised, strict=True)
        ]
        embedded = embed_realised(self._loaded(), items)
        for key, entry in embedded.entries:
            self.cache.put(key, entry)
        return embedded.passes, time.perf_counter() - started, embedded.memory


def _node() -> str:
    import ray

    return str(ray.util.get_node_ip_address())


def _probe(address: str) -> None:
    """Refuse, in one line, an address that is not ``HOST:PORT`` (or ``ray://HOST:PORT``, or ``auto``) or whose port
    takes no connection: Ray itself would retry such an address for minutes."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--address {address}", "expected HOST:PORT (the head's GCS port, e.g. 10.0.0.1:6379)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_S).close()
    except OSError as error:
        raise InputError(f"--address {address}", f"no Ray cluster answers there ({error})") from None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("--executor ray", "needs the ray extra: pip install 'interbias-sv[ray]'") from None
    return ray


def _cause(error: BaseException) -> BaseException:
    """The application error inside Ray's wrappers (a task error raised in a task the call depended on)."""
    while getattr(error, "cause", None) is not None and isinstance(error.cause, BaseException):  # type: ignore[attr-defined]
        error = error.cause  # type: ignore[attr-defined]
    return error


@dataclass
class RayExecutor:
    """Runs the embedding work of a run on the Ray cluster at ``address`` (None: a local one started for the
    run and stopped after). ``device`` is the actors' torch device; a GPU device needs ``gpus_per_actor``.
    ``actors_per_label``: the size of each label's pool (None: ``pool_size``)."""

    address: str | None = None
    gpus_per_actor: float = 0.0
    device: str = "cpu"
    dtype: Dtype = "fp32"
    actors_per_label: int | None = None
    forward_passes: int = 0
    label_seconds: dict[str, dict[str, float | None]] = field(default_factory=dict)
    memory: dict[str, MemoryLog] = field(default_factory=dict)
    _device_class: str | None = None
    _owned: bool = False
    _description: dict[str, Any] = field(default_factory=dict)
    _session_dir: str | None = None

    def __post_init__(self) -> None:
        if self.gpus_per_actor < 0:
            raise InputError("--gpus-per-actor", f"must be 0 or more, got {self.gpus_per_actor:g}")
        if self.actors_per_label is not None and self.actors_per_label < 1:
            raise InputError("--actors-per-label", f"must be 1 or more, got {self.actors_per_label}")
        on_gpu = self.device.startswith("cuda")
        if on_gpu != (self.gpus_per_actor > 0):
            needs = "--gpus-per-actor above 0" if on_gpu else "--device cuda (else the GPU stays idle)"
            raise InputError(
                "--executor ray", f"--device {self.device} with --gpus-per-actor {self.gpus_per_actor:g}: needs {needs}"
            )

    def describe(self) -> dict[str, Any]:
        return {"name": "ray", **self._description}

    def device_class(self, device: str) -> str:
        """The actors' device class, asked of one GPU task on the cluster (``device`` is the driver's; the actors
        run on ``self.device``); each actor checks its own against it when it is ready."""
        if device_type(self.device, "--executor ray") == "cpu":
            self._device_class = "cpu"
            return self._device_class
        ray = _import_ray()
        if not ray.is_initialized():
            self._connect(ray)
            self._owned = True
        self._check_gpu_slots(_alive_nodes(ray), 1)  # a probe no node can place would wait ACTOR_READY_S
        probe = ray.remote(num_cpus=0, num_gpus=self.gpus_per_actor)(device_class)
        self._device_class = str(self._get(ray, [probe.remote(self.device)], ACTOR_READY_S)[0])
        return self._device_class

    def compute(self, work: EmbedWork) -> list[dict[str, CachedEmbedding]]:
        ray = _import_ray()
        owned = self._owned or not ray.is_initialized()
        if not ray.is_initialized():
            self._connect(ray)
        try:
            self._describe_cluster(ray, len(work.encoders) * (self.actors_per_label or 1))
            if not work.jobs:
                return []
            return self._compute(ray, work)
        finally:
            if owned:
                ray.shutdown()  # a cluster started for the run stops with it; a given one is only left
                self._owned = False

    def _connect(self, ray: Any) -> None:
        options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if self.address is None:
            options.update(address="local", include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE)
        else:
            _probe(self.address)
            options.update(address=self.address)
        try:
            context = ray.init(**options)
        except ConnectionError as error:
            raise InputError(f"--address {self.address}", f"no Ray cluster answers ({error})") from None
        if self.address is None:
            self._session_dir = str(context.address_info["session_dir"])

    def _check_gpu_slots(self, nodes: list[dict[str, Any]], n_actors: int) -> None:
        """Refuse, before any work, ``n_actors`` actors of ``gpus_per_actor`` GPUs that the nodes cannot hold."""
        if self.gpus_per_actor > 0 and gpu_slots(nodes, self.gpus_per_actor) < n_actors:
            gpus = ", ".join(f"{node['gpus']:g}" for node in nodes)
            raise InputError(
                f"ray cluster {self.address or 'local (started for the run)'}",
                f"{n_actors} encoder actor(s) of {self.gpus_per_actor:g} GPU each do not fit its nodes' GPUs "
                f"({gpus}); lower --gpus-per-actor or --actors-per-label, or run fewer encoders",
            )

    def _describe_cluster(self, ray: Any, n_actors: int) -> None:
        """Record the cluster and refuse, before any work, actors that no node (or not all nodes) can hold."""
        nodes = _alive_nodes(ray)
        self._description = {
            "ray_version": ray.__version__,
            "address": self.address or "local (started for the run)",
            **({"session_dir": self._session_dir} if self._session_dir else {}),
            "nodes": nodes,
            "cpus": sum(node["cpus"] for node in nodes),
            "gpus": sum(node["gpus"] for node in nodes),
            "gpus_per_actor": self.gpus_per_actor,
            "device": self.device,
            "dtype": self.dtype,
        }
        self._check_gpu_slots(nodes, n_actors)
        if not any(node["cpus"] >= 1 for node in nodes):
            raise InputError(f"ray cluster {self._description['address']}", "no node has a CPU for the operators")

    def _stage_tables(self, cache: EmbeddingCache, sources: dict[str, NoiseSources]) -> dict[str, StagedTable]:
        """Copy each utterance table into the shared cache folder under its digest (the bundle is the driver's)."""
        staged = {}
        for name, bound in sources.items():
            if bound.utterances is None:
                raise RunError(f"corpus {name} has no utterance table to stage for the workers")
            data = Path(bound.utterances).read_bytes()
            digest = bytes_digest(data).blake3
            path = cache.root.parent / TABLES_FOLDER / f"{digest}.csv"
            if not path.is_file() or file_digest(path).blake3 != digest:
                atomic_write_bytes(path, data)
            audio_root = Path(bound.audio_root or Path(bound.utterances).parent).resolve()
            music = None if bound.music_dir is None else Path(bound.music_dir).resolve()
            staged[name] = StagedTable(path, digest, audio_root, music)
        return staged

    def _compute(self, ray: Any, work: EmbedWork) -> list[dict[str, CachedEmbedding]]:
        config, jobs = work.config, work.jobs
        shared = EmbeddingCache(work.cache.root.resolve())
        tables = self._stage_tables(shared, work.sources)
        token = derived_digest(repr((config.seed, sorted(tables.items()))).encode())
        context = ray.put(WorkerContext(token, config.seed, tables))
        realise = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(_realise)
        # An actor takes no CPU slot (Ray would hold one per actor for its lifetime): with more labels than CPUs the
        # operator tasks would never run. CPU encoders share the cores with the tasks; the GPU is the actor's.
        actor_class = ray.remote(max_restarts=ACTOR_RESTARTS, max_task_retries=ACTOR_RESTARTS)(EncoderActor)
        specs = {label: encoder.spec for label, encoder in work.encoders.items()}  # a countermeasure too
        chunks = -(-len(jobs) // config.batch_size)
        size = self.actors_per_label or pool_size(
            self._description["nodes"], len(work.encoders), self.gpus_per_actor, chunks
        )
        self._description["actors_per_label"] = size
        pools = {
            label: [
                actor_class.options(num_cpus=0, num_gpus=self.gpus_per_actor).remote(
                    specs[label], self.device, self.dtype, encoder.checkpoint.cache_key, shared.root
                )
                for _ in range(size)
            ]
            for label, encoder in work.encoders.items()
        }
        try:
            ready = self._get(ray, [actor.ready.remote() for pool in pools.values() for actor in pool], ACTOR_READY_S)
            self._description["actors"] = {label: ready[n * size : (n + 1) * size] for n, label in enumerate(pools)}
            if self._device_class is not None and self.device != "cpu":
                others = sorted({a["device_class"] for a in ready} - {self._device_class})
                if others:  # vectors of another device would be cached under this one's keys
                    raise RunError(f"actors run on {others}, the run's embedding keys are for {self._device_class}")
            lacking = {f"embed {label}": sum(label in job.keys for job in jobs) for label in work.encoders}
            totals = {"realise": len(jobs)} | {stage: total for stage, total in lacking.items() if total}
            where = f"{len(self._description['nodes'])} node(s), {self._description['cpus']:g} CPU(s)"
            whats = {"realise": f"sides realised on {where}"}
            whats |= {f"embed {label}": f"sides embedded by {label} ({size} actor(s))" for label in pools}
            parts = {
                stage: work.stages.part("embeddings", whats[stage], total, position)
                for position, (stage, total) in enumerate(totals.items())
            }
            try:
                return self._pipelined(ray, config, shared, jobs, context, realise, pools, parts)
            finally:
                for part in parts.values():
                    part.close()
                self._description["stages"] = {
                    stage: {"sides": part.total, "seconds": None if part.seconds is None else round(part.seconds, 3)}
                    for stage, part in parts.items()
                }
        finally:
            for pool in pools.values():
                for actor in pool:
                    ray.kill(actor)

    def _pipelined(
        self,
        ray: Any,
        config: RunConfig,
        cache: EmbeddingCache,
        jobs: list[EmbedJob],
        context: Any,
        realise: Any,
        pools: dict[str, list[Any]],
        parts: dict[str, StagePart],
    ) -> list[dict[str, CachedEmbedding]]:
        """Submit chunk after chunk (a bounded window in flight; chunk ``c`` to actor ``c mod N`` of each label's
        pool), collect them in order."""
        results: list[dict[str, CachedEmbedding]] = [{} for _ in jobs]
        window = max(2, 2 * int(self._description["cpus"]))
        inflight: deque[tuple[int, dict[str, tuple[int, list[int], Any]]]] = deque()
        realising: list[Any] = []
        for number, start in enumerate(range(0, len(jobs), config.batch_size)):
            chunk = jobs[start : start + config.batch_size]
            refs = [realise.remote(context, job.degrade) for job in chunk]
            realising.extend(refs)
            calls = {}
            for label, pool in pools.items():
                held = [index for index, job in enumerate(chunk) if label in job.keys]
                if held:
                    keys = [chunk[index].keys[label] for index in held]
                    member = number % len(pool)
                    calls[label] = (member, held, pool[member].embed.remote(keys, *[refs[index] for index in held]))
            inflight.append((start, calls))
            while len(inflight) > window:
                realising = self._collect(ray, cache, jobs, results, inflight.popleft(), realising, parts)
        while inflight:
            realising = self._collect(ray, cache, jobs, results, inflight.popleft(), realising, parts)
        return results

    def _collect(
        self,
        ray: Any,
        cache: EmbeddingCache,
        jobs: list[EmbedJob],
        results: list[dict[str, CachedEmbedding]],
        chunk: tuple[int, dict[str, tuple[int, list[int], Any]]],
        realising: list[Any],
        parts: dict[str, StagePart],
    ) -> list[Any]:
        """Wait for one chunk's actor calls, then read back and verify every entry they wrote."""
        start, calls = chunk
        for label, (member, held, call) in calls.items():
            passes, seconds, memory = self._get(ray, [call], None)[0]
            self.forward_passes += passes
            self.memory.setdefault(label, MemoryLog()).merge(memory)
            spent = self.label_seconds.setdefault(label, {"wall_s": 0.0, "cpu_s": None})  # actor CPU: not measured
            spent["wall_s"] = (spent["wall_s"] or 0.0) + seconds
            actor = self._description["actors"][label][member]
            actor["forward_passes"] = actor.get("forward_passes", 0) + passes
            actor["busy_s"] = round(actor.get("busy_s", 0.0) + seconds, 3)
            if realising:
                done, realising = ray.wait(realising, num_returns=len(realising), timeout=0, fetch_local=False)
                parts["realise"].advance(len(done))
            for index in held:
                job = jobs[start + index]
                try:
                    results[start + index][label] = cache.read(job.keys[label])
                except CacheEntryRejectedError as error:
                    raise RunError(
                        f"the entry an encoder actor wrote for {job.degrade.side.corpus}/{job.degrade.side.utt_id} "
                        f"is not good on the driver ({error}); --cache must be a folder every node shares"
                    ) from None
            parts[f"embed {label}"].advance(len(held))
        return realising

    def _get(self, ray: Any, refs: list[Any], timeout: float | None) -> list[Any]:
        """``ray.get`` with the application's error re-raised as itself, and Ray's own failures as one RunError."""
        try:
            return list(ray.get(refs, timeout=timeout))
        except ray.exceptions.GetTimeoutError:
            raise RunError(
                f"encoder actors not ready after {timeout:g} s; free resources: {ray.available_resources()}"
            ) from None
        except ray.exceptions.RayError as error:
            cause = _cause(error)
            if cause is not error:
                raise cause from None
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise RunError(f"the Ray cluster could not finish the work: {first}") from None
