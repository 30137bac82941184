"""An encoder loaded on its first forward pass, so that a run whose embeddings are all cached loads no model.

A run needs two things of each encoder: its checkpoint record (the embedding cache keys, the run id,
``checkpoints.json``) and, for cache misses only, forward passes. ``DeferredEncoder`` gives the record without
loading the model when the cache folder holds the record that an earlier load of the same roster entry on the
same runtime wrote (``RecordStore``), and loads the model (importing torch) on the first ``embed``. The store is
keyed by everything the record follows from that is known without loading: the roster entry with its checkpoint
by content digest (through the digest index: no file is re-read), the device, the versions of the runtime's
distributions and its thread settings. A stored record is used only when it verifies (its key, its own cache
key, the checkpoint digest and the roster's pin); once the model is loaded its own record replaces it, and one
with another cache key than the record already used stops the run (the stale entry is removed).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from provenance import (
    NVIDIA_DRIVER_FILE,
    THREAD_ENV_VARS,
    atomic_write_bytes,
    canonical_json,
    derived_digest,
    installed_version,
    path_digest,
)
from runner.encoders.base import EncoderHandle
from runner.encoders.checkpoint import CheckpointError, CheckpointRecord, verify_pin
from runner.encoders.roster import EncoderSpec
from schemas import json_file_bytes

# The distributions whose versions a loaded record can reflect (the adapters' runtimes and this tool).
RUNTIME_DISTRIBUTIONS = (
    "interbias-sv",
    "numpy",
    "torch",
    "torchaudio",
    "resemblyzer",
    "speechbrain",
    "transformers",
    "onnxruntime",
    "onnxruntime-gpu",
)


def runtime_identity() -> dict[str, Any]:
    """What a loaded record's runtime settings follow from on this machine: Python, the runtime distributions'
    versions, the CPUs this process may use, the thread and device variables and the NVIDIA driver."""
    return {
        "python": platform.python_version(),
        "distributions": {name: installed_version(name) for name in RUNTIME_DISTRIBUTIONS},
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "environment_variables": {name: os.environ.get(name) for name in THREAD_ENV_VARS},
        "nvidia_driver": NVIDIA_DRIVER_FILE.read_text(errors="replace") if NVIDIA_DRIVER_FILE.exists() else None,
    }


class RecordStore:
    """Checkpoint records of loaded encoders, one JSON file each under ``root`` (``<cache>/checkpoints``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._runtime: dict[str, Any] | None = None

    def identity(self, spec: EncoderSpec, device: str, dtype: str = "fp32") -> dict[str, Any] | None:
        """The store key's content for ``spec`` on ``device`` in ``dtype``; None when its checkpoint is not there
        (loading then names what is missing)."""
        entry = spec.as_dict()
        del entry["checkpoint"]  # where it lies is no part of what it is
        if spec.checkpoint is not None:
            if not spec.checkpoint.exists():
                return None
            entry["checkpoint_blake3"] = path_digest(spec.checkpoint).blake3
        if self._runtime is None:
            self._runtime = runtime_identity()
        return {"entry": entry, "device": device, "dtype": dtype, "runtime": self._runtime}

    def path(self, identity: dict[str, Any]) -> Path:
        return self.root / f"{derived_digest(canonical_json(identity))}.json"

    def get(self, spec: EncoderSpec, identity: dict[str, Any]) -> CheckpointRecord | None:
        """The stored record of ``identity`` if it verifies; an entry that does not is removed."""
        path = self.path(identity)
        try:
            stored = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            stored = None
        try:
            if not isinstance(stored, dict) or stored.get("identity") != json.loads(json.dumps(identity)):
                raise ValueError("written under another identity")
            record = CheckpointRecord.from_dict(stored["record"])
            if record.label != spec.label or record.kind != spec.kind:
                raise ValueError("the record of another roster entry")
            if "checkpoint_blake3" in identity["entry"] and identity["entry"]["checkpoint_blake3"] != (
                record.checkpoint_blake3
            ):
                raise ValueError("the record of another checkpoint")
            verify_pin(record, spec.blake3, spec.checkpoint)
        except (CheckpointError, KeyError, TypeError, ValueError):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        return record

    def put(self, identity: dict[str, Any], record: CheckpointRecord) -> None:
        atomic_write_bytes(self.path(identity), json_file_bytes({"identity": identity, "record": record.as_dict()}))

    def remove(self, identity: dict[str, Any]) -> None:
        self.path(identity).unlink(missing_ok=True)


class DeferredEncoder:
    """The encoder of a roster entry, made by ``load`` on the first ``embed`` (or on the first ``checkpoint``
    when no stored record verifies); ``dtype`` is what ``load`` loads it in (part of the stored record's key)."""

    def __init__(
        self,
        spec: EncoderSpec,
        device: str,
        load: Callable[[EncoderSpec, str], EncoderHandle],
        store: RecordStore,
        dtype: str = "fp32",
    ) -> None:
        self.spec = spec
        self.device = device
        self._load = load
        self._store = store
        self._identity = store.identity(spec, device, dtype)
        self._record = None if self._identity is None else store.get(spec, self._identity)
        self._encoder: EncoderHandle | None = None

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def checkpoint(self) -> CheckpointRecord:
        if self._record is None:
            self.load()
        assert self._record is not None
        return self._record

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (``load`` has nothing left to do)."""
        return self._encoder is not None

    def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray:
        return self.load().embed(waves, sr)

    def load(self) -> EncoderHandle:
        """The encoder, loaded now if it is not yet (an executor loads it before it times forward passes); its
        record replaces the stored one, which must have had the same cache key."""
        if self._encoder is None:
            encoder = self._load(self.spec, self.device)
            record = encoder.checkpoint
            if self._identity is not None:
                if self._record is not None and record.cache_key != self._record.cache_key:
                    self._store.remove(self._identity)
                    raise CheckpointError(
                        self._store.path(self._identity),
                        f"the stored record of encoder {self.label!r} has cache key {self._record.cache_key}, the "
                        f"loaded encoder {record.cache_key}; the entry was removed, run again",
                    )
                self._store.put(self._identity, record)
            self._record, self._encoder = record, encoder
        return self._encoder
