"""Build, write and (optionally) sign the manifest of a finished bundle.

``write_manifest`` digests every file of a bundle on disk (all regular files outside ``provenance/`` and
``report/``); the runner's ``provenance.writer.BundleWriter`` hands ``run_statement`` the digests of the bytes it
wrote and the objects it wrote them from instead. Either way the statement binds each results row to the trial list,
scores file and checkpoint it names, and writes ``provenance/statement.json`` (canonical JSON, the exact bytes
that are signed). With a key it writes the DSSE envelope ``provenance/run.intoto.jsonl`` and the public key
and key id beside it; without one it writes ``provenance/UNSIGNED.txt`` saying so. An inconsistent bundle is
an ``InputError``: a manifest is never written over files that do not agree with each other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pandas as pd

from provenance.atomic import atomic_write_bytes, atomic_write_text, is_temporary
from provenance.canonical import canonical_json
from provenance.digests import Digest, file_digest
from provenance.dsse import sign_envelope
from provenance.keys import key_id, load_private_key, public_key_pem
from provenance.statement import RecordBinding, build_predicate, build_statement
from schemas import (
    CHECKPOINTS_FILE,
    ENVELOPE_FILE,
    KEY_ID_FILE,
    NOT_SUBJECTS,
    OPERATORS_FILE,
    PUBLIC_KEY_FILE,
    REQUIRED_FILES,
    RESULTS_FILE,
    STATEMENT_FILE,
    TRIAL_LIST_ID_LENGTH,
    TRIALS_DIR,
    UNSIGNED_FILE,
    InputError,
    scores_name,
    tool_version,
)

__all__ = [
    "PROVENANCE_COLUMNS",
    "UNSIGNED_NOTICE",
    "ManifestResult",
    "build_run_statement",
    "bundle_files",
    "read_json_object",
    "run_statement",
    "write_manifest",
    "write_statement",
]

PROVENANCE_COLUMNS = ("record_id", "model", "trial_list_id", "scores_blake3", "checkpoint_blake3", "run_id")
UNSIGNED_NOTICE = (
    "This bundle is UNSIGNED. provenance/statement.json lists the digest of every file, but no key\n"
    "vouches for it: anyone could have rewritten the files and the statement together.\n"
    "Re-run with a signing key to sign it.\n"
)


@dataclass(frozen=True)
class ManifestResult:
    """What ``write_manifest`` wrote: statement, envelope and key id when signed, number of subjects."""

    statement_path: Path
    envelope_path: Path | None
    key_id: str | None
    n_subjects: int

    @property
    def signed(self) -> bool:
        return self.envelope_path is not None


def bundle_files(bundle_dir: Path) -> list[str]:
    """Relative POSIX paths of every regular file that must be a subject (symlinks refused; the temporary
    files of an interrupted atomic write are never subjects)."""
    names = []
    for path in sorted(bundle_dir.rglob("*")):
        relative = path.relative_to(bundle_dir)
        if relative.parts[0] in NOT_SUBJECTS or is_temporary(path.name):  # a killed writer's leftover
            continue
        if path.is_symlink():
            raise InputError(str(path), "symbolic links are not allowed in a bundle; copy the file in")
        if path.is_file():
            names.append(relative.as_posix())
    return names


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON file whose top level is an object; anything else is an InputError naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:  # ValueError: also bad UTF-8, a 5000-digit number
        raise InputError(str(path), f"expected a JSON object: {type(error).__name__}: {str(error)[:200]}") from error
    if not isinstance(data, dict):
        raise InputError(str(path), "expected a JSON object at the top level")
    return data


def _read_results(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={column: str for column in PROVENANCE_COLUMNS}, keep_default_na=False)


def _checked_provenance(results: pd.DataFrame, results_path: Path) -> pd.DataFrame:
    """The provenance columns of ``results`` as text, each present and never empty."""
    for column in PROVENANCE_COLUMNS:
        if column not in results.columns:
            raise InputError(str(results_path), "missing provenance column", column=column)
    text = results[list(PROVENANCE_COLUMNS)].astype(str)
    for column in PROVENANCE_COLUMNS:
        empty = text.index[text[column].str.len() == 0]
        if len(empty):
            raise InputError(str(results_path), "empty value", row=int(empty[0]) + 1, column=column)
    return text


def _trial_lists(bundle_dir: Path, digests: dict[str, Digest]) -> dict[str, tuple[str, Digest]]:
    """trial_list_id -> (path, digest); each file's name must be the first 16 hex of its BLAKE3."""
    lists = {}
    for name, digest in digests.items():
        if name.startswith(f"{TRIALS_DIR}/"):
            list_id = Path(name).stem
            if digest.blake3[:TRIAL_LIST_ID_LENGTH] != list_id:
                raise InputError(
                    str(bundle_dir / name),
                    f"trial_list_id {list_id!r} is not the first 16 hex of the file's BLAKE3 {digest.blake3}",
                )
            lists[list_id] = (name, digest)
    return lists


def _bind_record(
    row: dict[str, Any],
    line: int,
    results_path: Path,
    digests: dict[str, Digest],
    trial_lists: dict[str, tuple[str, Digest]],
    checkpoints: dict[str, Any],
    operator_records: dict[str, Any],
) -> RecordBinding:
    """The RecordBinding of one results row, after checking it against the files it names."""
    record_id = row["record_id"]
    scores_path = scores_name(record_id)
    if "/" in record_id or record_id.startswith(".") or scores_path not in digests:
        raise InputError(
            str(results_path), f"no scores file {scores_path} for this record", row=line, column="record_id"
        )
    scores = digests[scores_path]
    if scores.blake3 != row["scores_blake3"]:
        raise InputError(
            str(results_path), f"{scores_path} has BLAKE3 {scores.blake3}", row=line, column="scores_blake3"
        )
    if row["trial_list_id"] not in trial_lists:
        raise InputError(str(results_path), f"no such file under {TRIALS_DIR}/", row=line, column="trial_list_id")
    trial_path, trial_digest = trial_lists[row["trial_list_id"]]
    checkpoint = checkpoints.get(row["model"])
    if not isinstance(checkpoint, dict) or checkpoint.get("checkpoint_blake3") != row["checkpoint_blake3"]:
        raise InputError(
            str(results_path),
            "differs from checkpoints.json for this model",
            row=line,
            column="checkpoint_blake3",
        )
    outcome = operator_records.get(record_id)
    if not isinstance(outcome, dict):
        raise InputError(
            str(results_path),
            "operators.json has no 'records' entry for this record",
            row=line,
            column="record_id",
        )
    return RecordBinding(
        record_id=record_id,
        trial_list_id=row["trial_list_id"],
        trial_list_path=trial_path,
        trial_list_blake3=trial_digest.blake3,
        scores_path=scores_path,
        scores_sha256=scores.sha256,
        scores_blake3=scores.blake3,
        model=row["model"],
        checkpoint_blake3=row["checkpoint_blake3"],
        operator_chains=tuple(outcome.get("chains", ())),
        applied=int(outcome.get("applied", 0)),
        failed=int(outcome.get("failed", 0)),
        fallback=int(outcome.get("fallback", 0)),
    )


def build_run_statement(bundle_dir: Path, run_config: dict[str, Any]) -> dict[str, Any]:
    """The statement of a bundle on disk: every file digested, results, checkpoints and operators read back."""
    bundle_dir = Path(bundle_dir)
    for name in REQUIRED_FILES:
        if not (bundle_dir / name).is_file():
            raise InputError(str(bundle_dir / name), "required bundle file is missing")
    return run_statement(
        bundle_dir,
        {name: file_digest(bundle_dir / name) for name in bundle_files(bundle_dir)},
        results=_read_results(bundle_dir / RESULTS_FILE),
        checkpoints=read_json_object(bundle_dir / CHECKPOINTS_FILE),
        operators=read_json_object(bundle_dir / OPERATORS_FILE),
        run_config=run_config,
    )


def run_statement(
    bundle_dir: Path,
    digests: dict[str, Digest],
    *,
    results: pd.DataFrame,
    checkpoints: dict[str, Any],
    operators: dict[str, Any],
    run_config: dict[str, Any],
) -> dict[str, Any]:
    """The statement over the files ``digests`` names, after checking that the results rows, the checkpoints and
    the operator records agree with those files and with each other (``bundle_dir`` names them in errors)."""
    results_path = bundle_dir / RESULTS_FILE
    provenance = _checked_provenance(results, results_path)
    run_ids = sorted(set(provenance["run_id"]))
    if len(run_ids) != 1:
        raise InputError(str(results_path), f"expected one run_id in a bundle, found {run_ids}", column="run_id")
    trial_lists = _trial_lists(bundle_dir, digests)
    records = [
        _bind_record(row, index + 1, results_path, digests, trial_lists, checkpoints, operators.get("records", {}))
        for index, row in enumerate(cast(list[dict[str, Any]], provenance.to_dict("records")))
    ]
    predicate = build_predicate(
        run_config=run_config,
        run_id=run_ids[0],
        builder_version=tool_version(),
        operator_policy=str(operators.get("policy", "not declared")),
        checkpoints={
            label: entry["checkpoint_blake3"]
            for label, entry in checkpoints.items()
            if isinstance(entry, dict) and "checkpoint_blake3" in entry
        },
        trial_lists=trial_lists,
        records=records,
    )
    return build_statement(list(digests.items()), predicate)


def _check_key_outside(bundle_dir: Path, signing_key: Path | None) -> None:
    """A private key inside the bundle it signs would become one of its subjects: refused."""
    if signing_key is not None and Path(signing_key).resolve().is_relative_to(Path(bundle_dir).resolve()):
        raise InputError(str(signing_key), "the private key lies inside the bundle it would sign; move it out")


def write_manifest(bundle_dir: Path, run_config: dict[str, Any], signing_key: Path | None) -> ManifestResult:
    """Write the statement of ``bundle_dir`` and, given a private key, its signed DSSE envelope."""
    return write_statement(Path(bundle_dir), build_run_statement(bundle_dir, run_config), signing_key)


def write_statement(bundle_dir: Path, statement: dict[str, Any], signing_key: Path | None) -> ManifestResult:
    """Write ``statement`` into ``bundle_dir/provenance/`` and, given a private key, its signed DSSE envelope."""
    _check_key_outside(bundle_dir, signing_key)
    payload = canonical_json(statement)
    atomic_write_bytes(bundle_dir / STATEMENT_FILE, payload)
    if signing_key is None:
        for stale in (ENVELOPE_FILE, PUBLIC_KEY_FILE, KEY_ID_FILE):
            (bundle_dir / stale).unlink(missing_ok=True)
        atomic_write_text(bundle_dir / UNSIGNED_FILE, UNSIGNED_NOTICE)
        return ManifestResult(bundle_dir / STATEMENT_FILE, None, None, len(statement["subject"]))
    private_key = load_private_key(Path(signing_key))
    public_key = private_key.public_key()
    atomic_write_bytes(bundle_dir / ENVELOPE_FILE, sign_envelope(payload, private_key))
    atomic_write_bytes(bundle_dir / PUBLIC_KEY_FILE, public_key_pem(public_key))
    atomic_write_text(bundle_dir / KEY_ID_FILE, key_id(public_key) + "\n")
    (bundle_dir / UNSIGNED_FILE).unlink(missing_ok=True)
    return ManifestResult(
        bundle_dir / STATEMENT_FILE, bundle_dir / ENVELOPE_FILE, key_id(public_key), len(statement["subject"])
    )
