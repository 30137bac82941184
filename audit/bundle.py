"""Verify an artefact bundle end to end: signature, statement, subjects, rows, re-scores, trial matching.

``verify_bundle`` is a straight line of small ``verify_*`` steps (in-toto style). Each step returns what later
steps need, or raises one named ``BundleError`` that carries its flag id, a reason code, the failing cases and
whatever partial result later steps can still use. Every step adds one report section ``{id, title, status,
lines, table}``.

Steps after a failed signature still run, so that the reviewer sees every problem at once, but their sections
say that the statement they rely on is not authenticated. A statement that cannot be parsed stops the bundle
checks.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from audit.contrasts import derive_contrasts, trial_matching
from audit.findings import Flag, Severity
from audit.metrics import grouped_metrics
from provenance.digests import Digest, file_digest
from provenance.dsse import IN_TOTO_PAYLOAD_TYPE, EnvelopeError, parse_envelope, verify_envelope
from provenance.keys import load_public_key
from provenance.manifest import (
    ENVELOPE_FILE,
    KEY_ID_FILE,
    NOT_SUBJECTS,
    PUBLIC_KEY_FILE,
    REQUIRED_FILES,
    STATEMENT_FILE,
    TRIAL_LIST_ID_LENGTH,
    read_json_object,
)
from provenance.statement import (
    BUILD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    PredicateShapeError,
    RecordBinding,
    read_bindings,
    read_checkpoints,
)

# Declared tolerance for a re-scored metric against the table (absolute, on fractions).
METRIC_TOLERANCE = 1e-6
DEFAULT_COSTS = {
    "p_target": 0.01,
    "c_miss": 1.0,
    "c_fa": 1.0,
}  # DESIGN.md section 4, used when a row has none
EER_KEYS = {"legacy": "eer_legacy", "rocch": "eer_rocch", "interp": "eer_interp"}
UNAUTHENTICATED = "The statement behind this check is not authenticated (see the signature section)."


class BundleError(Exception):
    """One named failure of one verification step; ``partial`` is what later steps may still use."""

    flag_id: ClassVar[str]
    severity: ClassVar[Severity] = Severity.ERROR

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        records: tuple[str, ...] = (),
        failures: list[dict[str, Any]] | None = None,
        lines: list[str] | None = None,
        partial: Any = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.records = records
        self.failures = failures or []
        self.lines = lines or []
        self.partial = partial

    def flag(self) -> Flag:
        details = {"reason": self.reason, "failures": self.failures}
        return Flag(self.flag_id, self.severity, self.message, self.records, details)


class BadSignatureError(BundleError):
    """The envelope is missing (unsigned bundle), unreadable, or does not verify under the trusted key."""

    flag_id = "bad-signature"


class StatementError(BundleError):
    """The signed payload is not an in-toto Statement v1 with our predicate: the manifest does not verify."""

    flag_id = "bad-signature"


class DigestMismatchError(BundleError):
    """A file differs from its subject digest, is missing, is not a subject, or a row names other digests."""

    flag_id = "digest-mismatch"


class SubjectEscapeError(DigestMismatchError):
    """A subject name or a link in the bundle leads outside the bundle folder."""


class ScoreMismatchError(BundleError):
    """A row's metric differs from the one recomputed from its per-trial scores."""

    flag_id = "score-mismatch"


class UnmatchedTrialsError(BundleError):
    """Scores not in trial-list order, or contrast terms / encoders that used different trial lists."""

    flag_id = "unmatched-trials"


class TrialUtterancesError(BundleError):
    """A trial names an utterance its corpus table lacks, or a speaker the table does not give that utterance."""

    flag_id = "trial-utterances"


class OperatorFailuresError(BundleError):
    """Operators failed or fell back; the counts are disclosed, so this is a warning."""

    flag_id = "operator-failures"
    severity = Severity.WARNING


@dataclass
class _Step:
    """The report section of one step."""

    lines: list[str]
    table: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class SignatureCheck:
    """The exact payload bytes, and whether a trusted key authenticated them."""

    payload: bytes
    authenticated: bool


@dataclass
class _Verification:
    """Flags and sections collected along the line of steps."""

    flags: list[Flag] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)
    authenticated: bool = True

    def run(self, section_id: str, title: str, step: Callable[..., tuple[Any, _Step]], *args: Any) -> Any:
        """Run one step; record its section and, on a BundleError, its flag. Returns the (partial) result."""
        try:
            value, report = step(*args)
            status = "pass"
        except BundleError as error:
            self.flags.append(error.flag())
            value = error.partial
            report = _Step([error.message, *error.lines], error.failures)
            status = "warning" if error.severity is Severity.WARNING else "fail"
        if not self.authenticated and section_id not in ("signature",):
            report.lines.append(UNAUTHENTICATED)
        self.sections.append(
            {
                "id": f"bundle-{section_id}",
                "title": title,
                "status": status,
                "lines": report.lines,
                "table": report.table,
            }
        )
        return value

    def skip(self, section_id: str, title: str, why: str) -> None:
        self.sections.append(
            {"id": f"bundle-{section_id}", "title": title, "status": "skipped", "lines": [why], "table": []}
        )


def _text(value: Any) -> str | None:
    """A cell as text, None when empty or missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    text = str(value)
    return text or None


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as dicts keyed by column name."""
    return cast(list[dict[str, Any]], frame.to_dict("records"))


def _column(results: pd.DataFrame, name: str) -> list[str | None]:
    return [_text(value) for value in results[name]] if name in results.columns else [None] * len(results)


# --- the steps ----------------------------------------------------------------------------------------------


def verify_signature(bundle_dir: Path, trusted_key: Path | None) -> tuple[SignatureCheck, _Step]:
    """Verify the DSSE envelope over the exact payload bytes, before anything is parsed."""
    envelope_path = bundle_dir / ENVELOPE_FILE
    statement_path = bundle_dir / STATEMENT_FILE
    if not envelope_path.is_file():
        if not statement_path.is_file():
            raise BadSignatureError("no-statement", f"{bundle_dir} has neither {ENVELOPE_FILE} nor {STATEMENT_FILE}")
        raise BadSignatureError(
            "unsigned",
            f"The bundle is UNSIGNED: no {ENVELOPE_FILE}; nothing vouches that its files were not "
            "changed together with the statement.",
            partial=SignatureCheck(statement_path.read_bytes(), authenticated=False),
        )
    lines = [line for line in envelope_path.read_bytes().splitlines() if line.strip()]
    if len(lines) != 1:
        raise BadSignatureError("envelope", f"{ENVELOPE_FILE} holds {len(lines)} envelopes, expected exactly one")
    try:
        envelope = parse_envelope(lines[0])
    except EnvelopeError as error:
        raise BadSignatureError("envelope", f"{ENVELOPE_FILE}: {error}") from error
    if trusted_key is not None:
        key_path, source = trusted_key, "the reviewer's key (--key)"
    else:
        key_path, source = bundle_dir / PUBLIC_KEY_FILE, "the bundle's own public key"
    if trusted_key is None and not key_path.is_file():
        raise BadSignatureError(
            "no-key",
            f"The bundle is signed but has no {PUBLIC_KEY_FILE} and no --key was given: "
            "nothing to verify the signature with.",
            partial=SignatureCheck(envelope.payload, authenticated=False),
        )
    public_key = load_public_key(key_path)  # an unreadable reviewer key is an InputError (exit 2)
    try:
        trusted_id = verify_envelope(envelope, public_key, IN_TOTO_PAYLOAD_TYPE)
    except EnvelopeError as error:
        raise BadSignatureError(
            "signature",
            f"The signature does not verify under {source} {key_path}: {error}.",
            partial=SignatureCheck(envelope.payload, authenticated=False),
        ) from error
    report = [f"The DSSE envelope verifies under {source}: {key_path}, key id {trusted_id}."]
    if trusted_key is None:
        report.append(
            "The key was taken from the bundle itself: this proves the files are unchanged since signing, "
            "not who "
            "signed them. Pass --key with a public key obtained from the authors to establish that."
        )
    recorded_id_path = bundle_dir / KEY_ID_FILE
    if recorded_id_path.is_file() and recorded_id_path.read_text().strip() != trusted_id:
        report.append(f"Note: {KEY_ID_FILE} names key id {recorded_id_path.read_text().strip()}, not the trusted one.")
    return SignatureCheck(envelope.payload, authenticated=True), _Step(report)


def verify_statement(payload: bytes) -> tuple[dict[str, Any], _Step]:
    """Parse the payload and check the statement type, predicate type and build type."""
    try:
        statement = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise StatementError("statement-json", f"The signed payload is not JSON: {error}") from error
    if not isinstance(statement, dict):
        raise StatementError("statement-type", "The signed payload is not a JSON object")
    predicate = statement.get("predicate")
    found = {
        "_type": (statement.get("_type"), STATEMENT_TYPE),
        "predicateType": (statement.get("predicateType"), PREDICATE_TYPE),
        "buildType": (
            predicate.get("buildDefinition", {}).get("buildType") if isinstance(predicate, dict) else None,
            BUILD_TYPE,
        ),
    }
    wrong = [{"field": name, "found": got, "expected": want} for name, (got, want) in found.items() if got != want]
    if wrong or not isinstance(statement.get("subject"), list):
        raise StatementError(
            "statement-type",
            "The statement is not an in-toto v1 statement of an interbias-sv run",
            failures=wrong,
        )
    return statement, _Step([f"in-toto {STATEMENT_TYPE}, predicate {PREDICATE_TYPE}, build type {BUILD_TYPE}."])


def verify_statement_copy(bundle_dir: Path, payload: bytes) -> tuple[None, _Step]:
    """``provenance/statement.json`` must be byte-identical to the verified payload."""
    path = bundle_dir / STATEMENT_FILE
    if not path.is_file() or path.read_bytes() != payload:
        raise DigestMismatchError(
            "statement-copy",
            f"{STATEMENT_FILE} is missing or differs from the signed payload; the payload was used.",
        )
    return None, _Step([f"{STATEMENT_FILE} is byte-identical to the verified payload."])


def _escape_reason(bundle_root: Path, name: Any) -> str | None:
    """Why a subject name is unsafe, or None when it names a path inside the bundle."""
    if not isinstance(name, str) or not name:
        return "not a non-empty string"
    posix = PurePosixPath(name)
    if posix.is_absolute() or "\\" in name or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    if any(part in ("..", ".", "") for part in name.split("/")):
        return "'..', '.' or an empty segment"
    if not (bundle_root / name).resolve().is_relative_to(bundle_root):
        return "resolves (through a link) outside the bundle"
    return None


def verify_subject_names(bundle_dir: Path, statement: dict[str, Any]) -> tuple[list[tuple[str, dict]], _Step]:
    """Refuse subject names that escape the bundle: absolute, ``..``, or links pointing outside."""
    root = bundle_dir.resolve()
    safe: list[tuple[str, dict[str, Any]]] = []
    failures, seen = [], set()
    for entry in statement["subject"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        reason = _escape_reason(root, name)
        if reason is None and name in seen:
            reason = "named twice"
        if reason is not None:
            failures.append({"subject": str(name), "problem": reason})
            continue
        seen.add(name)
        safe.append((str(name), entry.get("digest", {})))
    if failures:
        raise SubjectEscapeError(
            "path-escape",
            f"{len(failures)} subject name(s) are unsafe and were refused (path traversal or links out of the bundle).",
            failures=failures,
            partial=safe,
        )
    return safe, _Step([f"All {len(safe)} subject names stay inside the bundle."])


def verify_subject_digests(bundle_dir: Path, subjects: list[tuple[str, dict]]) -> tuple[dict[str, Digest], _Step]:
    """Recompute SHA-256 and BLAKE3 of every subject (streamed) and compare with the statement."""
    verified: dict[str, Digest] = {}
    failures = []
    for name, expected in subjects:
        path = bundle_dir / name
        if not path.is_file():
            failures.append({"subject": name, "problem": "missing file"})
            continue
        actual = file_digest(path)
        wrong = [algo for algo in ("sha256", "blake3") if expected.get(algo) != getattr(actual, algo)]
        if wrong:
            failures.append({"subject": name, "problem": f"{' and '.join(wrong)} differ"})
        else:
            verified[name] = actual
    if failures:
        raise DigestMismatchError(
            "digest",
            f"{len(failures)} of {len(subjects)} bundle file(s) do not match their digests in the statement.",
            failures=failures,
            partial=verified,
        )
    return verified, _Step([f"All {len(verified)} subjects match their SHA-256 and BLAKE3 digests."])


def _bundle_entries(bundle_dir: Path) -> list[tuple[str, Path]]:
    """Every file and link under the bundle outside provenance/ and report/, links not followed."""
    entries = []
    for folder, dirs, files in os.walk(bundle_dir):
        relative = Path(folder).relative_to(bundle_dir)
        if relative.parts and relative.parts[0] in NOT_SUBJECTS:
            continue
        links = [name for name in dirs if (Path(folder) / name).is_symlink()]
        for name in sorted(files + links):
            path = Path(folder) / name
            entries.append(((relative / name).as_posix(), path))
    return entries


def verify_every_file_is_subject(bundle_dir: Path, subjects: list[tuple[str, dict]]) -> tuple[None, _Step]:
    """Every file of the bundle is a subject, the required files are among them, and no link leads out."""
    names = {name for name, _ in subjects}
    root = bundle_dir.resolve()
    failures = []
    for name, path in _bundle_entries(bundle_dir):
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            failures.append({"file": name, "problem": "link pointing outside the bundle"})
        elif name not in names:
            failures.append({"file": name, "problem": "not a subject of the statement"})
    failures += [
        {"file": name, "problem": "required file is not a subject"} for name in REQUIRED_FILES if name not in names
    ]
    if failures:
        error = SubjectEscapeError if any("outside" in f["problem"] for f in failures) else DigestMismatchError
        raise error(
            "unlisted-file",
            f"{len(failures)} bundle file(s) are not covered by the statement.",
            failures=failures,
        )
    return None, _Step([f"Every file of the bundle is one of the {len(names)} subjects."])


@dataclass(frozen=True)
class RowStatus:
    """Which of a row's three bindings verified: checkpoint digest, trial list, scores."""

    checkpoint: bool
    trial_list: bool
    scores: bool


def _row_problems(
    row: dict[str, str | None],
    binding: RecordBinding | None,
    checkpoints: dict[str, str],
    bundle_checkpoints: dict[str, Any],
    verified: dict[str, Digest],
    run_id: Any,
) -> tuple[RowStatus, list[str]]:
    if binding is None:
        return RowStatus(False, False, False), ["record not in the statement"]
    problems = []
    trial_digest = verified.get(binding.trial_list_path)
    trial_ok = (
        row["trial_list_id"] == binding.trial_list_id
        and trial_digest is not None
        and trial_digest.blake3 == binding.trial_list_blake3
        and trial_digest.blake3[:TRIAL_LIST_ID_LENGTH] == binding.trial_list_id
    )
    if not trial_ok:
        problems.append("trial list differs from the statement or does not verify")
    scores_digest = verified.get(binding.scores_path)
    scores_ok = (
        row["scores_blake3"] == binding.scores_blake3
        and scores_digest is not None
        and scores_digest.blake3 == binding.scores_blake3
    )
    if not scores_ok:
        problems.append("scores_blake3 differs from the statement or the scores file does not verify")
    entry = bundle_checkpoints.get(row["model"] or "")
    checkpoint_ok = (
        row["checkpoint_blake3"] == binding.checkpoint_blake3
        and checkpoints.get(row["model"] or "") == binding.checkpoint_blake3
        and isinstance(entry, dict)
        and entry.get("checkpoint_blake3") == binding.checkpoint_blake3
        and row["model"] == binding.model
    )
    if not checkpoint_ok:
        problems.append("checkpoint_blake3 differs from the statement or checkpoints.json")
    if row["run_id"] != run_id:
        problems.append(f"run_id differs from the statement's invocation id {run_id!r}")
    return RowStatus(checkpoint_ok, trial_ok, scores_ok), problems


def verify_rows(
    results: pd.DataFrame, bundle_dir: Path, statement: dict[str, Any], verified: dict[str, Digest]
) -> tuple[dict[str, RowStatus], _Step]:
    """Each results row against the predicate: its trial list, scores and checkpoint digests, and run id."""
    try:
        bindings = read_bindings(statement["predicate"])
        checkpoints = read_checkpoints(statement["predicate"])
        run_id = statement["predicate"]["runDetails"]["metadata"]["invocationId"]
    except (PredicateShapeError, KeyError, TypeError) as error:
        raise StatementError("predicate-shape", f"The predicate cannot be read: {error}", partial={}) from error
    bundle_checkpoints: dict[str, Any] = {}
    if "checkpoints.json" in verified:
        bundle_checkpoints = read_json_object(bundle_dir / "checkpoints.json")
    columns = ("record_id", "model", "trial_list_id", "scores_blake3", "checkpoint_blake3", "run_id")
    rows = [
        dict(zip(columns, values, strict=True)) for values in zip(*(_column(results, c) for c in columns), strict=True)
    ]
    statuses: dict[str, RowStatus] = {}
    failures = []
    for number, row in enumerate(rows, start=1):
        record_id = row["record_id"] or f"row {number}"
        binding = bindings.get(row["record_id"] or "")
        status, problems = _row_problems(row, binding, checkpoints, bundle_checkpoints, verified, run_id)
        statuses[record_id] = status
        failures += [{"row": number, "record_id": record_id, "problem": problem} for problem in problems]
    unlisted = sorted(set(bindings) - {row["record_id"] for row in rows})
    lines = [f"{len(unlisted)} record(s) of the statement are not in this results table."] if unlisted else []
    if failures:
        records = tuple(dict.fromkeys(str(f["record_id"]) for f in failures))
        raise DigestMismatchError(
            "row-binding",
            f"{len(records)} of {len(rows)} results row(s) are not bound to verified files by the statement.",
            records=records,
            failures=failures,
            lines=lines,
            partial=statuses,
        )
    return statuses, _Step([f"All {len(rows)} rows are bound to verified trial lists, scores and checkpoints.", *lines])


@dataclass(frozen=True)
class RecordScores:
    """The scored trials of one record (NaN and failed trials removed) and the trial labels in list order."""

    scores: np.ndarray
    labels: np.ndarray
    trial_labels: np.ndarray
    trial_list_labels: np.ndarray | None


def _trial_list_labels(bundle_dir: Path, trial_list_id: str) -> np.ndarray | None:
    """The label column of ``trials/<id>.csv``, or None when the file is absent or leaves the bundle."""
    name = f"trials/{trial_list_id}.csv"
    if _escape_reason(bundle_dir.resolve(), name) is not None or not (bundle_dir / name).is_file():
        return None
    return pd.read_csv(bundle_dir / name, usecols=["label"])["label"].to_numpy()


def _load_record_scores(
    bundle_dir: Path, record_id: str, trial_list_id: str | None, trial_cache: dict[str, np.ndarray | None]
) -> RecordScores:
    """One scores file, read with pyarrow (thousands of files per bundle), and its trial list's labels."""
    table = pq.read_table(
        bundle_dir / "scores" / f"{record_id}.parquet", columns=["trial_index", "label", "score", "status"]
    )
    if trial_list_id is not None and trial_list_id not in trial_cache:
        trial_cache[trial_list_id] = _trial_list_labels(bundle_dir, trial_list_id)
    labels = table.column("label").to_numpy()
    scores = table.column("score").to_numpy().astype(np.float64)
    trial_labels = labels
    if not np.array_equal(table.column("trial_index").to_numpy(), np.arange(table.num_rows)):
        trial_labels = np.full(table.num_rows, -1)  # not in trial-list order: cannot match any trial list
    scored = pc.equal(table.column("status"), "scored").to_numpy(zero_copy_only=False) & np.isfinite(scores)
    return RecordScores(
        scores=scores[scored],
        labels=labels[scored].astype(np.int8),
        trial_labels=trial_labels,
        trial_list_labels=trial_cache.get(trial_list_id) if trial_list_id else None,
    )


def load_scores(results: pd.DataFrame, bundle_dir: Path) -> tuple[dict[str, RecordScores], _Step]:
    """Read every record's scores file in the bundle, verified or not (re-scoring shows any tampering)."""
    loaded: dict[str, RecordScores] = {}
    failures = []
    trial_cache: dict[str, np.ndarray | None] = {}
    root = bundle_dir.resolve()
    for record_id, trial_list_id in zip(_column(results, "record_id"), _column(results, "trial_list_id"), strict=True):
        if record_id is None:
            continue
        if _escape_reason(root, f"scores/{record_id}.parquet") is not None:
            failures.append({"record_id": record_id, "problem": "scores path leaves the bundle"})
            continue
        try:
            loaded[record_id] = _load_record_scores(bundle_dir, record_id, trial_list_id, trial_cache)
        except (OSError, ValueError, KeyError, pa.ArrowException) as error:
            failures.append({"record_id": record_id, "problem": f"scores file unreadable: {error}"})
    if failures:
        raise ScoreMismatchError(
            "unreadable-scores",
            f"{len(failures)} record(s) have no readable scores file to re-score from.",
            records=tuple(f["record_id"] for f in failures),
            failures=failures,
            partial=loaded,
        )
    return loaded, _Step([f"Read per-trial scores of {len(loaded)} records."])


def verify_scores_follow_trial_lists(loaded: dict[str, RecordScores]) -> tuple[None, _Step]:
    """Each scores file has one row per trial of its trial list, in order, with the same labels."""
    failures = [
        {"record_id": record_id, "problem": "scores do not follow the trial list (order, length or labels)"}
        for record_id, record in loaded.items()
        if record.trial_list_labels is None or not np.array_equal(record.trial_labels, record.trial_list_labels)
    ]
    if failures:
        raise UnmatchedTrialsError(
            "scores-vs-trial-list",
            f"{len(failures)} scores file(s) do not follow their trial list trial by trial.",
            records=tuple(f["record_id"] for f in failures),
            failures=failures,
        )
    return None, _Step([f"All {len(loaded)} scores files follow their trial lists trial by trial."])


def _number(value: Any) -> float | None:
    """A cell as a float, None when empty or not a number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _row_costs(row: dict[str, Any]) -> tuple[float, float, float]:
    values = [_number(row.get(name)) for name in DEFAULT_COSTS]
    p_target, c_miss, c_fa = (
        default if value is None else value for value, default in zip(values, DEFAULT_COSTS.values(), strict=True)
    )
    return p_target, c_miss, c_fa


def _compare(row: dict[str, Any], recomputed: dict[str, float]) -> list[str]:
    """Differences between a row and the metrics recomputed for it, as plain phrases."""
    problems = []
    method = _text(row.get("eer_method"))
    eer = _number(row.get("eer"))
    if method not in EER_KEYS:
        problems.append(f"eer_method {method!r} does not name an EER variant (legacy, rocch, interp)")
    elif eer is None or abs(eer - recomputed[EER_KEYS[method]]) > METRIC_TOLERANCE:
        problems.append(f"eer {row.get('eer')} but {method} recomputes to {recomputed[EER_KEYS[method]]:.6f}")
    for count in ("n_target", "n_nontarget"):
        if _number(row.get(count)) != recomputed[count]:
            problems.append(f"{count} {row.get(count)} but {int(recomputed[count])} trials were scored")
    for metric in ("min_dcf", "auc"):
        value = _number(row.get(metric))
        if value is not None and abs(value - recomputed[metric]) > METRIC_TOLERANCE:
            problems.append(f"{metric} {value} but recomputes to {recomputed[metric]:.6f}")
    return problems


def _scorable(record: RecordScores) -> bool:
    """The metrics are defined: both classes present (constant scores give the chance values)."""
    return bool(record.labels.any() and (record.labels == 0).any())


def verify_rescored_metrics(results: pd.DataFrame, loaded: dict[str, RecordScores]) -> tuple[None, _Step]:
    """Re-score every record from its per-trial scores (one grouped pass per cost setting) and compare."""
    rows = [row for row in _records(results) if _text(row.get("record_id")) in loaded]
    failures = [
        {
            "record_id": str(row["record_id"]),
            "problem": "cannot be scored: needs both classes and two distinct scores",
        }
        for row in rows
        if not _scorable(loaded[str(row["record_id"])])
    ]
    by_costs: dict[tuple[float, float, float], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if _scorable(loaded[str(row["record_id"])]):
            by_costs[_row_costs(row)].append(row)
    table = []
    for (p_target, c_miss, c_fa), group in by_costs.items():
        scored = [loaded[str(row["record_id"])] for row in group]
        metrics = grouped_metrics(
            np.concatenate([record.scores for record in scored]),
            np.concatenate([record.labels for record in scored]),
            np.repeat(np.arange(len(scored)), [len(record.scores) for record in scored]),
            len(scored),
            p_target=p_target,
            c_miss=c_miss,
            c_fa=c_fa,
        )
        for position, row in enumerate(group):
            recomputed = {key: float(np.asarray(values)[position]) for key, values in metrics.items()}
            problems = _compare(row, recomputed)
            failures += [{"record_id": str(row["record_id"]), "problem": problem} for problem in problems]
            table.append(
                {
                    "record_id": str(row["record_id"]),
                    "eer": row["eer"],
                    "eer_method": row.get("eer_method"),
                    **{key: recomputed[key] for key in (*EER_KEYS.values(), "min_dcf", "auc")},
                }
            )
    if failures:
        records = tuple(dict.fromkeys(f["record_id"] for f in failures))
        raise ScoreMismatchError(
            "rescore",
            f"{len(records)} of {len(rows)} re-scored record(s) differ from the table (tolerance {METRIC_TOLERANCE}).",
            records=records,
            failures=failures,
        )
    return None, _Step(
        [
            f"All {len(rows)} records re-score to the table's EER (the row's eer_method), counts, minDCF "
            "and AUC "
            f"within {METRIC_TOLERANCE}."
        ],
        table,
    )


def _contrast_frame(results: pd.DataFrame) -> pd.DataFrame:
    """The results with the columns derive_contrasts reads (absent optional ones as empty)."""
    frame = results.copy()
    for column in ("subgroup", "factor_a", "level_a", "factor_b", "level_b", "model_family", "trial_list_id"):
        if column not in frame.columns:
            frame[column] = None
    return frame


def verify_shared_trial_lists(results: pd.DataFrame) -> tuple[None, _Step]:
    """The four terms of every contrast, and all encoders of one condition, share one trial list."""
    frame = _contrast_frame(results)
    failures = []
    by_record = dict(zip(_column(frame, "record_id"), _column(frame, "trial_list_id"), strict=True))
    contrasts = derive_contrasts(frame).contrasts
    population = 0
    for contrast in contrasts:
        lists = {by_record.get(record) for record in contrast.records}
        matching = trial_matching(tuple(by_record.get(record) for record in contrast.records))
        population += matching.startswith("population")
        if matching in ("unmatched", "unverifiable"):
            failures.append(
                {
                    "group": f"{contrast.experiment} {contrast.model} {contrast.factor_a}={contrast.level_a} "
                    f"x {contrast.factor_b}={contrast.level_b}",
                    "records": list(contrast.records),
                    "trial_lists": sorted(map(str, lists)),
                }
            )
    keys = ("experiment", "corpus", "subgroup", "condition")
    groups: dict[tuple[str | None, ...], dict[str | None, list[str]]] = defaultdict(lambda: defaultdict(list))
    for values in zip(*(_column(frame, c) for c in (*keys, "trial_list_id", "record_id")), strict=True):
        groups[values[:4]][values[4]].append(str(values[5]))
    for key, lists_found in groups.items():
        if len(lists_found) > 1 or None in lists_found:
            failures.append(
                {
                    "group": " ".join(str(k) for k in key if k is not None),
                    "records": sorted(r for rs in lists_found.values() for r in rs),
                    "trial_lists": sorted(map(str, lists_found)),
                }
            )
    if failures:
        records = tuple(dict.fromkeys(r for f in failures for r in f["records"]))
        raise UnmatchedTrialsError(
            "shared-trial-list",
            f"{len(failures)} contrast(s) or experiment condition(s) mix trial lists: their terms or "
            "encoders were "
            "not scored on the same pairs.",
            records=records,
            failures=failures,
        )
    return None, _Step(
        [
            f"{len(contrasts) - population} contrasts and {len(groups)} experiment conditions each use one "
            "trial list for all terms and encoders"
            + (
                f"; {population} contrasts have a population factor, each level's pair of terms on one list"
                if population
                else ""
            )
            + "."
        ]
    )


def _corpus_tables(bundle_dir: Path, names: set[str]) -> dict[str, pd.DataFrame | None]:
    """Each named corpus's utterance table in the bundle (``corpus/`` alone, or ``corpus/<name>/``), by utt_id."""
    single = bundle_dir / "corpus" / "utterances.csv"
    tables: dict[str, pd.DataFrame | None] = {}
    for name in sorted(names):
        path = single if single.is_file() else bundle_dir / "corpus" / name / "utterances.csv"
        if not path.is_file():
            tables[name] = None
            continue
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        if "spoof_system" not in frame.columns:
            frame["spoof_system"] = None
        tables[name] = frame.set_index("utt_id")[["speaker", "spoof_system"]]
    return tables


def _trial_problems(trials: pd.DataFrame, corpus: str, tables: dict[str, pd.DataFrame | None]) -> list[str]:
    """What is wrong with one trial list's utterances and speakers against the corpus tables (empty: nothing)."""
    test_corpora = trials["test_corpus"] if "test_corpus" in trials.columns else pd.Series(corpus, trials.index)
    sides = [("enrol", trials["enrol_utt"], trials["enrol_speaker"], pd.Series(corpus, trials.index))]
    sides.append(("test", trials["test_utt"], trials["test_speaker"], test_corpora))
    problems = []
    for side, utterances, speakers, corpora in sides:
        for name, rows in utterances.groupby(corpora.to_numpy()):
            table = tables.get(str(name))
            if table is None:
                problems.append(f"{side} utterances of corpus {name!r}: no corpus table in the bundle")
                continue
            known = rows.isin(table.index)
            if not known.all():
                problems.append(
                    f"{int((~known).sum())} {side} utterance(s) not in corpus {name!r}, e.g. {rows[~known].iloc[0]!r}"
                )
                continue
            wrong = table.loc[rows.to_numpy(), "speaker"].to_numpy() != speakers[rows.index].to_numpy()
            if wrong.any():
                problems.append(f"{int(wrong.sum())} {side} speaker(s) differ from corpus {name!r}")
    if "trial_kind" in trials.columns:
        spoofs = trials[trials["trial_kind"] == "spoof"]
        for name, rows in spoofs["test_utt"].groupby(spoofs["test_corpus"].to_numpy()):
            table = tables.get(str(name))
            if (
                table is not None
                and rows.isin(table.index).all()
                and table.loc[rows.to_numpy(), "spoof_system"].isna().any()
            ):
                problems.append(f"spoof trials test files of corpus {name!r} that name no spoof system")
    return problems


def verify_trial_utterances(results: pd.DataFrame, bundle_dir: Path, verified: dict[str, Digest]) -> tuple[None, _Step]:
    """Every trial names utterances of the bundle's corpus tables, with their speakers; spoof trials name files of a
    spoof folder. Reports which lists hold spoof trials, since their records' non-targets are spoofs."""
    corpus_of = {
        str(list_id): str(corpus)
        for list_id, corpus in zip(_column(results, "trial_list_id"), _column(results, "corpus"), strict=True)
        if list_id is not None and corpus is not None and f"trials/{list_id}.csv" in verified
    }
    lists, failures = {}, []
    for list_id in sorted(corpus_of):
        try:
            trials = pd.read_csv(bundle_dir / "trials" / f"{list_id}.csv", dtype=str, keep_default_na=False)
        except (ValueError, UnicodeDecodeError) as error:  # pandas' ParserError is a ValueError
            failures.append({"trial_list": list_id, "problem": f"unreadable trial list ({error})"})
            continue
        missing = {"enrol_utt", "test_utt", "enrol_speaker", "test_speaker"} - set(trials.columns)
        if missing:
            failures.append({"trial_list": list_id, "problem": f"trial list lacks {', '.join(sorted(missing))}"})
        else:
            lists[list_id] = trials
    names = set(corpus_of.values())
    names |= {str(c) for trials in lists.values() if "test_corpus" in trials.columns for c in trials["test_corpus"]}
    tables = _corpus_tables(bundle_dir, names)
    failures += [
        {"trial_list": list_id, "problem": problem}
        for list_id, trials in lists.items()
        for problem in _trial_problems(trials, corpus_of[list_id], tables)
    ]
    if failures:
        raise TrialUtterancesError(
            "trial-utterances",
            f"{len({f['trial_list'] for f in failures})} trial list(s) name utterances or speakers that the bundle's "
            "corpus tables do not hold.",
            failures=failures,
        )
    spoofed = [
        {
            "trial_list": list_id,
            "spoof_trials": int((trials["trial_kind"] == "spoof").sum()),
            "spoof_folders": ", ".join(sorted(set(trials.loc[trials["trial_kind"] == "spoof", "test_corpus"]))),
        }
        for list_id, trials in sorted(lists.items())
        if "trial_kind" in trials.columns
    ]
    n_trials = sum(map(len, lists.values()))
    lines = [f"All {n_trials} trials of {len(lists)} trial lists name the bundle's utterances with their speakers."]
    if spoofed:
        spoof_ids = {row["trial_list"] for row in spoofed}
        records = sum(1 for list_id in _column(results, "trial_list_id") if list_id in spoof_ids)
        lines.append(
            f"{len(spoofed)} trial list(s), used by {records} record(s), hold spoof trials: their non-target trials "
            "test the enrolment speaker against files imitating that speaker, so n_nontarget counts spoof trials "
            "and the EER is genuine targets against spoofs."
        )
    return None, _Step(lines, spoofed)


def verify_operator_outcomes(bundle_dir: Path, verified: dict[str, Digest]) -> tuple[None, _Step]:
    """Report operator applied/failed/fallback counts per chain; failures or fallbacks raise a warning."""
    if "operators.json" not in verified:
        raise DigestMismatchError("operators", "operators.json is missing or does not verify; counts not reported.")
    operators = read_json_object(bundle_dir / "operators.json")
    policy = operators.get("policy", "not declared")
    table = [
        {
            "chain": chain_id,
            "spec": json.dumps(chain.get("spec")),
            "applied": chain.get("applied", 0),
            "failed": chain.get("failed", 0),
            "fallback": chain.get("fallback", 0),
            "reasons": ", ".join(f"{reason}: {n}" for reason, n in sorted(chain.get("reasons", {}).items())),
        }
        for chain_id, chain in sorted(operators.get("chains", {}).items())
    ]
    troubled = [row for row in table if row["failed"] or row["fallback"]]
    lines = [f"Declared policy for failed operators: {policy}."]
    if troubled:
        records = tuple(
            record_id
            for record_id, outcome in sorted(operators.get("records", {}).items())
            if outcome.get("failed", 0) or outcome.get("fallback", 0)
        )
        raise OperatorFailuresError(
            "operator-outcomes",
            f"{len(troubled)} operator chain(s) failed or fell back "
            f"({sum(r['failed'] for r in troubled)} failed, {sum(r['fallback'] for r in troubled)} "
            "fallback); "
            "the affected records were not scored under the nominal condition for those trials.",
            records=records,
            failures=table,
            lines=lines,
        )
    return None, _Step([*lines, f"All {len(table)} operator chains applied without failure or fallback."], table)


def coverage_section(statuses: dict[str, RowStatus], n_rows: int) -> dict[str, Any]:
    """Rows with a verified checkpoint digest, trial list and scores, as fractions of all rows."""

    def fraction(count: int) -> str:
        return f"{count}/{n_rows} ({count / n_rows:.1%})" if n_rows else "0/0"

    counts = {
        "a verified checkpoint digest": sum(s.checkpoint for s in statuses.values()),
        "a verified trial list": sum(s.trial_list for s in statuses.values()),
        "verified per-trial scores": sum(s.scores for s in statuses.values()),
        "all three verified": sum(s.checkpoint and s.trial_list and s.scores for s in statuses.values()),
    }
    return {
        "id": "bundle-coverage",
        "title": "Provenance coverage of the results rows",
        "status": "pass" if n_rows and counts["all three verified"] == n_rows else "fail",
        "lines": [f"Rows with {what}: {fraction(count)}." for what, count in counts.items()],
        "table": [
            {"binding": what, "rows": count, "fraction": count / n_rows if n_rows else 0.0}
            for what, count in counts.items()
        ],
    }


def merge_flags(flags: list[Flag]) -> list[Flag]:
    """One flag per id, as the rest of the audit reports them: records, reasons and failure cases pooled."""
    merged: dict[str, list[Flag]] = defaultdict(list)
    for flag in flags:
        merged[flag.id].append(flag)
    return [
        Flag(
            flag_id,
            same[0].severity,
            " ".join(flag.message for flag in same),
            tuple(dict.fromkeys(record for flag in same for record in flag.records)),
            {
                "reasons": [flag.details["reason"] for flag in same],
                "failures": [
                    {"reason": flag.details["reason"], **failure}
                    for flag in same
                    for failure in flag.details["failures"]
                ],
            },
        )
        for flag_id, same in merged.items()
    ]


def verify_bundle(
    results: pd.DataFrame, bundle_dir: Path, trusted_key: Path | None
) -> tuple[list[Flag], list[dict[str, Any]]]:
    """Verify ``bundle_dir`` against the results table; return flags and report sections."""
    bundle_dir = Path(bundle_dir)
    check = _Verification()
    signature = check.run("signature", "Signature (DSSE, ed25519)", verify_signature, bundle_dir, trusted_key)
    check.authenticated = signature is not None and signature.authenticated
    statement = None
    if signature is not None:
        statement = check.run("statement", "Statement and predicate type", verify_statement, signature.payload)
    if statement is None:
        for section_id, title in (
            ("subjects", "Subjects"),
            ("rows", "Rows"),
            ("rescore", "Re-scored metrics"),
        ):
            check.skip(section_id, title, "Not run: there is no readable in-toto statement to check against.")
        check.sections.append(coverage_section({}, len(results)))
        return merge_flags(check.flags), check.sections
    if check.authenticated:
        check.run(
            "statement-copy",
            "statement.json is the signed payload",
            verify_statement_copy,
            bundle_dir,
            signature.payload,
        )
    subjects = check.run(
        "subject-names", "Subject names stay in the bundle", verify_subject_names, bundle_dir, statement
    )
    verified = check.run(
        "subject-digests", "Subject digests (SHA-256, BLAKE3)", verify_subject_digests, bundle_dir, subjects
    )
    check.run(
        "subject-coverage",
        "Every bundle file is a subject",
        verify_every_file_is_subject,
        bundle_dir,
        subjects,
    )
    statuses = check.run(
        "rows", "Results rows bound to the statement", verify_rows, results, bundle_dir, statement, verified
    )
    loaded = check.run("scores", "Per-trial scores read", load_scores, results, bundle_dir)
    check.run("trial-order", "Scores follow their trial lists", verify_scores_follow_trial_lists, loaded)
    check.run("rescore", "Re-scored metrics", verify_rescored_metrics, results, loaded)
    check.run(
        "shared-trials",
        "Same trial list across contrast terms and encoders",
        verify_shared_trial_lists,
        results,
    )
    check.run(
        "trial-utterances",
        "Trials name the bundle's utterances (spoof trials disclosed)",
        verify_trial_utterances,
        results,
        bundle_dir,
        verified,
    )
    check.run("operators", "Operator outcomes", verify_operator_outcomes, bundle_dir, verified)
    check.sections.append(coverage_section(statuses, len(results)))
    return merge_flags(check.flags), check.sections
