"""The signed results rows bound to the statement's records: each row's trial list, scores and checkpoint digests
and its run id are the statement's (the audited table is bound to these rows by ``audit.bundle.table_binding``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audit.bundle.verified import (
    DigestMismatchError,
    LoadedFiles,
    StatementError,
    Step,
)
from provenance import Digest, PredicateShapeError, RecordBinding, read_bindings, read_checkpoints
from schemas import TRIAL_LIST_ID_LENGTH, cell_text, scores_name, trial_list_name


@dataclass(frozen=True)
class RowStatus:
    """Which of a row's three bindings verified: checkpoint digest, trial list, scores."""

    checkpoint: bool
    trial_list: bool
    scores: bool


def _row_problems(
    row: dict[str, Any],
    binding: RecordBinding | None,
    checkpoints: dict[str, str],
    bundle_checkpoints: dict[str, Any],
    verified: dict[str, Digest],
    run_id: Any,
) -> tuple[RowStatus, list[str]]:
    if binding is None:
        return RowStatus(False, False, False), ["record not in the statement"]
    problems = []
    trial_digest = verified.get(trial_list_name(str(row.get("trial_list_id"))))
    trial_ok = (
        row.get("trial_list_id") == binding.trial_list_id
        and binding.trial_list_path == trial_list_name(binding.trial_list_id)
        and trial_digest is not None
        and trial_digest.blake3 == binding.trial_list_blake3
        and trial_digest.blake3[:TRIAL_LIST_ID_LENGTH] == binding.trial_list_id
    )
    if not trial_ok:
        problems.append("trial list differs from the statement or does not verify")
    scores_digest = verified.get(scores_name(str(row.get("record_id"))))
    scores_ok = (
        row.get("scores_blake3") == binding.scores_blake3
        and scores_digest is not None
        and scores_digest.blake3 == binding.scores_blake3
    )
    if not scores_ok:
        problems.append("scores_blake3 differs from the statement or the scores file does not verify")
    model = str(row.get("model") or "")
    entry = bundle_checkpoints.get(model)
    checkpoint_ok = (
        row.get("checkpoint_blake3") == binding.checkpoint_blake3
        and checkpoints.get(model) == binding.checkpoint_blake3
        and isinstance(entry, dict)
        and entry.get("checkpoint_blake3") == binding.checkpoint_blake3
        and model == binding.model
    )
    if not checkpoint_ok:
        problems.append("checkpoint_blake3 differs from the statement or checkpoints.json")
    if row.get("run_id") != run_id:
        problems.append(f"run_id differs from the statement's invocation id {str(run_id)[:80]!r}")
    return RowStatus(checkpoint_ok, trial_ok, scores_ok), problems


def verify_rows(
    files: LoadedFiles, statement: dict[str, Any], verified: dict[str, Digest]
) -> tuple[dict[str, RowStatus], Step]:
    """Each signed results row against the predicate: its trial list, scores and checkpoint digests, and run id."""
    try:
        bindings = read_bindings(statement["predicate"])
        checkpoints = read_checkpoints(statement["predicate"])
        run_id = statement["predicate"]["runDetails"]["metadata"]["invocationId"]
    except (PredicateShapeError, KeyError, TypeError) as error:
        raise StatementError("predicate-shape", f"The predicate cannot be read: {error}", partial={}) from error
    if files.results is None:
        raise DigestMismatchError("row-binding", "No verified results.csv to bind to the statement.", partial={})
    rows = files.signed_rows
    statuses: dict[str, RowStatus] = {}
    failures = []
    for number, row in enumerate(rows, start=1):
        record_id = cell_text(row.get("record_id")) or f"row {number}"
        status, problems = _row_problems(
            {key: cell_text(value) for key, value in row.items()},
            bindings.get(record_id),
            checkpoints,
            files.checkpoints or {},
            verified,
            run_id,
        )
        statuses[record_id] = status
        failures += [{"row": number, "record_id": record_id, "problem": problem} for problem in problems]
    unlisted = sorted(set(bindings) - set(statuses))
    failures += [
        {"row": None, "record_id": record, "problem": "record of the statement not in results.csv"}
        for record in unlisted
    ]
    if failures:
        records = tuple(dict.fromkeys(str(f["record_id"]) for f in failures))
        raise DigestMismatchError(
            "row-binding",
            f"{len(records)} signed results row(s) or statement record(s) are not bound to verified files.",
            records=records,
            failures=failures,
            partial=statuses,
        )
    return statuses, Step([f"All {len(rows)} signed rows are bound to verified trial lists, scores and checkpoints."])
