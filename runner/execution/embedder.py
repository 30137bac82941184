"""The embeddings of a run's (utterance, chain) sides for every encoder: verified cache entries as they are, the rest
computed by an executor (``runner.execution.local`` or ``runner.execution.ray``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from runner.cache import CachedEmbedding, EmbeddingCache, embedding_key
from runner.design.config import RunConfig
from runner.design.experiments import ChainSpecs
from runner.encoders.deferred import DeferredEncoder
from runner.execution.jobs import DegradeJob, EmbedJob, EmbedWork, Executor
from runner.operators import Chain, NoiseSources
from runner.plan import Side
from runner.stages import StageLog


class Embedder:
    """Computes or fetches the embeddings of (utterance, chain) sides for every encoder of the run: verified
    cache entries are used as they are, the rest is computed by the ``executor``. ``tables`` are the corpora's
    utterance tables, which hold every utterance a side may name (a sampled pool's, and an official list's)."""

    def __init__(
        self,
        config: RunConfig,
        tables: dict[str, pd.DataFrame],
        encoders: dict[str, DeferredEncoder],
        cache: EmbeddingCache,
        sources: dict[str, NoiseSources],
        executor: Executor,
        device_classes: dict[str, str],
        only: dict[str, set[Side]] | None = None,
    ) -> None:
        self.config = config
        self.device_classes = device_classes
        self.encoders = encoders
        self.only = only or {}  # label -> the only sides it computes (a countermeasure: test sides)
        self.cache = cache
        self.sources = sources
        self.executor = executor
        self.rows = {name: pool.set_index("utt_id") for name, pool in tables.items()}
        self.audio_blake3 = {
            name: dict(zip(pool["utt_id"], pool["blake3"], strict=True)) for name, pool in tables.items()
        }
        self.durations = {
            name: dict(zip(pool["utt_id"], pool["duration_s"].astype(float), strict=True))
            for name, pool in tables.items()
        }
        self.cached = 0
        self.material: dict[tuple[str, str], str] = {}
        self.embedded: dict[str, dict[str, float]] = {}  # label -> sides embedded here and their clean audio seconds

    def _key(self, side: Side, label: str, encoder_key: str) -> str:
        """The cache key; the corpus qualifies the utterance id (babble noise draws from the side's corpus), the
        chain's fingerprint in that corpus covers the material its operators read, and the label's device class
        keeps one device's vectors from another's."""
        return embedding_key(
            audio_blake3=str(self.audio_blake3[side.corpus][side.utt_id]),
            chain_id=side.chain_id,
            seed=self.config.seed,
            utt_id=f"{side.corpus}/{side.utt_id}",
            encoder_key=encoder_key,
            device_class=self.device_classes[label],
            material=self.material[(side.corpus, side.chain_id)],
        )

    def _audio_path(self, side: Side) -> Path:
        return self.config.corpora[side.corpus].root / str(self.rows[side.corpus].at[side.utt_id, "path"])

    def embed_all(
        self, chains: dict[str, ChainSpecs], sides: Iterable[Side], stages: StageLog
    ) -> dict[tuple[Side, str], CachedEmbedding]:
        """Every side's embedding for every encoder; misses are realised, embedded in batches and cached."""
        results: dict[tuple[Side, str], CachedEmbedding] = {}
        jobs: list[EmbedJob] = []
        sides = set(sides)
        for corpus, identifier in sorted({(side.corpus, side.chain_id) for side in sides}):
            chain = Chain.from_specs(list(chains[identifier]), sources=self.sources[corpus])
            self.material[(corpus, identifier)] = chain.fingerprint()
        encoder_keys = {label: encoder.checkpoint.cache_key for label, encoder in self.encoders.items()}
        for side in sorted(sides, key=lambda side: (side.corpus, side.chain_id, side.utt_id)):
            missing = {}
            for label, encoder_key in encoder_keys.items():
                if label in self.only and side not in self.only[label]:
                    continue
                key = self._key(side, label, encoder_key)
                entry = self.cache.get(key)
                if entry is None:
                    missing[label] = key
                else:
                    results[(side, label)] = entry
                    self.cached += 1
            if missing:
                jobs.append(EmbedJob(DegradeJob(side, chains[side.chain_id], self._audio_path(side)), missing))
        computed = self.executor.compute(EmbedWork(self.config, self.encoders, self.cache, self.sources, jobs, stages))
        for job, entries in zip(jobs, computed, strict=True):
            side = job.degrade.side
            for label, entry in entries.items():
                results[(side, label)] = entry
                if entry.vector is not None:
                    done = self.embedded.setdefault(label, {"sides": 0, "audio_s": 0.0})
                    done["sides"] += 1
                    done["audio_s"] += self.durations[side.corpus][side.utt_id]
        return results
