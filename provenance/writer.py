"""The one writer of an artefact bundle (DESIGN.md section 3): the runner and the rehearsal write through it.

Every file goes through :class:`~schemas.bundle.BundleLayout`'s names and is written atomically; its digest is
taken from the bytes handed to the write, never read back. :meth:`BundleWriter.seal` builds the statement from
those digests and from the results, checkpoints and operator records it writes itself, so what is signed is
exactly what this invocation computed. A file in the folder that this writer did not write (a note, an edited
leftover of another tool) stops the seal instead of being signed.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from provenance.atomic import atomic_write_bytes, remove_temporaries
from provenance.digests import Digest, bytes_digest
from provenance.manifest import ManifestResult, bundle_files, run_statement, write_statement
from schemas import (
    CHECKPOINTS_FILE,
    CROISSANT_FILE,
    OPERATORS_FILE,
    RESULTS_FILE,
    RUN_FILE,
    BundleLayout,
    InputError,
    csv_file_bytes,
    json_file_bytes,
    tool_version,
)

__all__ = [
    "STRAY_NAMES_SHOWN",
    "BundleWriter",
]

STRAY_NAMES_SHOWN = 3


@dataclass
class BundleWriter:
    """Writes one bundle folder and remembers the digest of every file it wrote (bundle-relative name -> digest)."""

    layout: BundleLayout
    written: dict[str, Digest] = field(default_factory=dict)

    @classmethod
    def resume(cls, root: Path, run_id: str) -> BundleWriter:
        """A writer for ``root``, which is empty, absent or holds this run (a resumed run rewrites every file).

        Another run's folder, a ``root`` that is a file, an unreadable run marker or a folder that cannot be
        written is an InputError, before any work; a killed writer's temporary files are removed.
        """
        if root.exists() and not root.is_dir():
            raise InputError(str(root), "--out is a file, not a folder; choose a folder (it is created if absent)")
        if root.is_dir() and any(root.iterdir()):
            previous = _marked_run(root / RUN_FILE)
            if previous != run_id:
                problem = f"output folder holds another run (run_id {previous}); choose an empty --out"
                raise InputError(str(root), problem)
        try:
            root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=root):
                pass
        except OSError as error:
            raise InputError(str(root), f"cannot write to --out ({error.strerror}); choose a writable folder") from None
        remove_temporaries(root)
        return cls(BundleLayout(root))

    @classmethod
    def create(cls, root: Path) -> BundleWriter:
        """A writer for a new folder ``root`` (its parents are made; an existing ``root`` is an error)."""
        root.mkdir(parents=True)
        return cls(BundleLayout(root))

    def write(self, name: str, data: bytes) -> Digest:
        """Write ``data`` as the bundle file ``name`` (atomically) and return its digest."""
        atomic_write_bytes(self.layout.path(name), data)
        self.written[name] = digest = bytes_digest(data)
        return digest

    def write_json(self, name: str, value: dict[str, Any]) -> Digest:
        return self.write(name, json_file_bytes(value))

    def write_csv(self, name: str, frame: pd.DataFrame) -> Digest:
        return self.write(name, csv_file_bytes(frame))

    def seal(
        self,
        *,
        results: pd.DataFrame,
        checkpoints: dict[str, Any],
        operators: dict[str, Any],
        run_config: dict[str, Any],
        signing_key: Path | None,
    ) -> ManifestResult:
        """Write the results, checkpoints and operator records and the Croissant card of them all, then the statement
        over every file written (signed when given a private key). Files in the folder that were not written here are
        refused, named."""
        self.write_csv(RESULTS_FILE, results)
        self.write_json(CHECKPOINTS_FILE, checkpoints)
        self.write_json(OPERATORS_FILE, operators)
        self.write_card(results, operators)
        stray = [name for name in bundle_files(self.layout.root) if name not in self.written]
        if stray:
            more = len(stray) - STRAY_NAMES_SHOWN
            shown = ", ".join(stray[:STRAY_NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")
            raise InputError(
                str(self.layout.root),
                f"holds {len(stray)} file(s) this run did not write ({shown}); they would not be signed: "
                "remove them or choose an empty --out",
            )
        statement = run_statement(
            self.layout.root,
            self.written,
            results=results,
            checkpoints=checkpoints,
            operators=operators,
            run_config=run_config,
        )
        return write_statement(self.layout.root, statement, signing_key)

    def write_card(self, results: pd.DataFrame, operators: dict[str, Any]) -> Digest:
        """The bundle's Croissant card (``provenance.croissant``) over every file written so far."""
        from provenance.croissant import card_bytes, croissant_card

        run_ids = sorted({str(run_id) for run_id in results.get("run_id", [])})
        run_id = run_ids[0] if len(run_ids) == 1 else "unknown"
        card = croissant_card(self.layout.root, self.written, run_id, tool_version(), operators)
        return self.write(CROISSANT_FILE, card_bytes(card))


def _marked_run(marker: Path) -> str | None:
    """The run id a folder's ``run.json`` names, None without one; an unreadable marker is an InputError."""
    if not marker.exists():
        return None
    try:
        return str(json.loads(marker.read_text(encoding="utf-8"))["run_id"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        problem = f"not a run marker ({type(error).__name__}: {error})"
        raise InputError(str(marker), f"{problem}; remove the folder or choose an empty --out") from None
