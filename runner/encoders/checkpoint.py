"""What an encoder was loaded from: resolved files with their digests, class, config and runtime settings.

A checkpoint is either a folder (speechbrain, transformers, ONNX exports), one file (resemblyzer's weights) or
nothing at all (MFCC statistics, whose record digests its configuration instead). Every file that the loader
reads is listed with ``{sha256, blake3, size}``; ``checkpoint_blake3`` is the folder digest, the file digest,
or the configuration digest, so a results row binds to exactly one checkpoint. The record names the checkpoint
by its file or folder name, never by where it lies: a bundle is the same bytes on every machine.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from provenance import (
    Digest,
    canonical_json,
    checked_path,
    derived_digest,
    file_digest,
    tree_digest,
    tree_listing,
)
from schemas import InputError


class CheckpointError(InputError):
    """A checkpoint that is missing, partial or not what the roster pins: never replaced by a fallback."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(str(path), problem)
        self.path = Path(path)


class EncoderConfigError(InputError):
    """An unknown encoder kind, option, device or dtype for the encoder ``label``."""

    def __init__(self, label: str, problem: str) -> None:
        super().__init__(f"encoder {label!r}", problem)


@dataclass(frozen=True)
class CheckpointRecord:
    """The provenance of one loaded encoder, written to ``checkpoints.json`` under its label."""

    label: str
    kind: str
    class_name: str
    config: dict[str, Any]
    files: dict[str, Digest]
    checkpoint_blake3: str
    name: str | None  # the checkpoint's file or folder name (None: no weights)
    runtime: dict[str, Any] = field(default_factory=dict)

    @property
    def cache_key(self) -> str:
        """BLAKE3 of everything that changes the embeddings: weights, kind, config and numeric dtype.

        The weights digest alone is not enough for an embedding cache: the same weights in bf16, or with
        another front-end option, give other vectors. Batching is left out (``runtime``): it changes
        embeddings only within the tolerance each adapter states.
        """
        identity = {
            "checkpoint_blake3": self.checkpoint_blake3,
            "kind": self.kind,
            "config": self.config,
            "dtype": self.runtime.get("dtype"),
        }
        return derived_digest(canonical_json(identity))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckpointRecord:
        """The record that ``as_dict`` gave ``data``; a ``cache_key`` that is not the record's is a ValueError."""
        record = cls(
            label=data["label"],
            kind=data["kind"],
            class_name=data["class"],
            config=data["config"],
            files={name: Digest(**digest) for name, digest in data["files"].items()},
            checkpoint_blake3=data["checkpoint_blake3"],
            name=data["name"],
            runtime=data["runtime"],
        )
        if record.cache_key != data["cache_key"]:
            raise ValueError(f"cache_key {data['cache_key']} is not the record's {record.cache_key}")
        return record

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "class": self.class_name,
            "config": self.config,
            "name": self.name,
            "files": {name: digest.as_dict() for name, digest in self.files.items()},
            "checkpoint_blake3": self.checkpoint_blake3,
            "cache_key": self.cache_key,
            "runtime": self.runtime,
        }


def require_folder(path: Path | None, label: str, required: Iterable[str]) -> Path:
    """The checkpoint folder, after checking that it and every ``required`` file in it exist."""
    if path is None:
        raise CheckpointError(f"encoder {label!r}", "needs a checkpoint folder and none was given")
    folder = Path(path)
    if not os.path.lexists(folder):
        raise CheckpointError(folder, f"checkpoint folder of encoder {label!r} does not exist")
    _checked(folder, "folder", label)
    for name in required:
        if not os.path.lexists(folder / name):
            raise CheckpointError(folder / name, f"required checkpoint file of encoder {label!r} is missing")
        _checked(folder / name, "file", label)
    return folder


def _checked(path: Path, kind: Literal["file", "folder"], label: str) -> None:
    """A folder where a file should be, a FIFO or a dangling link, named as such before a loader opens it."""
    try:
        checked_path(path, kind, f"the checkpoint {kind} of encoder {label!r}")
    except InputError as error:
        raise CheckpointError(path, error.problem) from None


def require_regular_files(folder: Path, label: str) -> None:
    """Every file of a checkpoint folder, links followed, is a regular file. Links are fine (the Hugging Face cache's
    ``snapshots/<rev>/`` and SpeechBrain's ``pretrained_models/<name>/`` are folders of links to blobs elsewhere:
    their content is what the record digests, under the link names); a link to nothing, or anything that is not a
    regular file (a FIFO, a device), would be read by a loader but never digested, and is refused."""
    for path in sorted(Path(folder).rglob("*")):
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise CheckpointError(path, f"checkpoint file of encoder {label!r} is a link to nothing") from None
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise CheckpointError(path, f"checkpoint file of encoder {label!r} is not a regular file (links followed)")


def require_file(path: Path, label: str) -> Path:
    """``path`` itself, after checking that it is an existing file."""
    if not Path(path).is_file():
        raise CheckpointError(path, f"checkpoint file of encoder {label!r} is missing")
    return Path(path)


@dataclass(frozen=True)
class ResolvedFiles:
    """The digests of what a loader read: each file, and the one digest that stands for all of them."""

    files: dict[str, Digest]
    checkpoint_blake3: str
    name: str | None


def resolve_folder(folder: Path) -> ResolvedFiles:
    """Digest every regular file in a checkpoint folder (the folder digest covers them all)."""
    files = dict(tree_listing(folder))
    return ResolvedFiles(files, tree_digest(folder).blake3, Path(os.path.abspath(folder)).name)


def resolve_file(path: Path) -> ResolvedFiles:
    """Digest a single-file checkpoint."""
    digest = file_digest(path)
    return ResolvedFiles({Path(path).name: digest}, digest.blake3, Path(path).name)


def resolve_config(config: Mapping[str, Any]) -> ResolvedFiles:
    """A weight-free encoder: its checkpoint digest is the digest of its canonical configuration."""
    return ResolvedFiles({}, derived_digest(canonical_json(dict(config))), None)


def verify_pin(record: CheckpointRecord, expected_blake3: str | None, checkpoint: Path | None) -> None:
    """Fail when the roster pins a checkpoint digest and the loaded ``checkpoint`` has another one."""
    if expected_blake3 is not None and expected_blake3 != record.checkpoint_blake3:
        raise CheckpointError(
            checkpoint or f"encoder {record.label!r}",
            f"checkpoint BLAKE3 {record.checkpoint_blake3} differs from the pinned {expected_blake3}",
        )
