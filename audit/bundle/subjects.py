"""Bundle verification after the statement: subject names, digests, coverage of every file, and the tables parsed
from the verified bytes.

Each subject is read once: its bytes are digested and, when they match the statement, the same bytes are parsed
(no second read that a concurrent writer could change). A file that fails its digest is never parsed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from audit.bundle.source import BundleSource
from audit.bundle.verified import BundleSchemaError, DigestMismatchError, LoadedFiles, Step, SubjectEscapeError
from provenance import Digest, bytes_digest
from schemas import (
    CHECKPOINTS_FILE,
    CONFIG_FILE,
    CORPUS_DIR,
    CROISSANT_FILE,
    ENVIRONMENT_FILE,
    NOT_SUBJECTS,
    OPERATORS_FILE,
    PROVENANCE_DIR,
    PROVENANCE_FILES,
    REQUIRED_FILES,
    RESULTS_FILE,
    SCORES_DIR,
    TRIAL_LIST_ID_LENGTH,
    TRIALS_DIR,
    UTTERANCES_FILE,
    BundleFileError,
    RecordScores,
    parse_checkpoints,
    parse_environment,
    parse_operators,
    parse_results,
    parse_score_files,
    parse_toml,
    parse_trial_list,
    parse_utterances,
    unsafe_name_reason,
)


def _escape_reason(source: BundleSource, name: Any) -> str | None:
    """Why a subject name is unsafe, or None when it names a path inside the bundle."""
    if (reason := unsafe_name_reason(name)) is not None:
        return reason
    return source.link_escape(name)


def _shown(name: object) -> str:
    """A subject name as the report may print it: as written when printable, else escaped; at most 200
    characters."""
    return (name if isinstance(name, str) and name.isprintable() else ascii(name))[:200]


def verify_subject_names(source: BundleSource, statement: dict[str, Any]) -> tuple[list[tuple[str, dict]], Step]:
    """Refuse subject names that escape the bundle: absolute, ``..``, or links pointing outside."""
    safe: list[tuple[str, dict[str, Any]]] = []
    failures, seen = [], set()
    for entry in statement["subject"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        reason = _escape_reason(source, name)
        if reason is None and name in seen:
            reason = "named twice"
        if reason is not None:
            failures.append({"subject": _shown(name), "problem": reason})
            continue
        seen.add(name)
        digest = entry.get("digest")
        safe.append((str(name), digest if isinstance(digest, dict) else {}))
    if failures:
        raise SubjectEscapeError(
            "path-escape",
            f"{len(failures)} subject name(s) are unsafe and were refused (path traversal, links out of the bundle, "
            "control or format characters, overlong names).",
            failures=failures,
            partial=safe,
        )
    return safe, Step([f"All {len(safe)} subject names stay inside the bundle."])


def _parsed_later(name: str) -> bool:
    """Files whose verified bytes are kept for parsing."""
    return (
        name in (RESULTS_FILE, OPERATORS_FILE, CHECKPOINTS_FILE, CONFIG_FILE, ENVIRONMENT_FILE, CROISSANT_FILE)
        or name.startswith((f"{TRIALS_DIR}/", f"{SCORES_DIR}/"))
        or (name.startswith(f"{CORPUS_DIR}/") and name.endswith(UTTERANCES_FILE))
    )


@dataclass(frozen=True)
class VerifiedBytes:
    """Digests of the subjects that match the statement, and the bytes of those that are parsed later."""

    digests: dict[str, Digest]
    contents: dict[str, bytes]


def verify_subject_digests(source: BundleSource, subjects: list[tuple[str, dict]]) -> tuple[VerifiedBytes, Step]:
    """Read each subject once (regular files only), compare SHA-256 and BLAKE3 with the statement."""
    digests: dict[str, Digest] = {}
    contents: dict[str, bytes] = {}
    failures = []
    for name, expected in subjects:
        try:
            data = source.read(name)
        except BundleFileError as error:
            failures.append({"subject": name, "problem": error.problem})
            continue
        actual = bytes_digest(data)
        wrong = [algo for algo in ("sha256", "blake3") if expected.get(algo) != getattr(actual, algo)]
        if wrong:
            failures.append({"subject": name, "problem": f"{' and '.join(wrong)} differ"})
            continue
        digests[name] = actual
        if _parsed_later(name):
            contents[name] = data
    verified = VerifiedBytes(digests, contents)
    if failures:
        raise DigestMismatchError(
            "digest",
            f"{len(failures)} of {len(subjects)} bundle file(s) do not match their digests in the statement; "
            "they are not read further.",
            failures=failures,
            partial=verified,
        )
    return verified, Step([f"All {len(digests)} subjects match their SHA-256 and BLAKE3 digests."])


def verify_every_file_is_subject(source: BundleSource, subjects: list[tuple[str, dict]]) -> tuple[None, Step]:
    """Every file of the bundle is a subject (provenance/ holds only the manifest's own files), the required files
    are among them, and no link leads out. ``report/`` is the audit written after signing: never read."""
    names = {name for name, _ in subjects}
    failures = []
    for entry in source.entries():
        if entry.problem is not None:
            failures.append({"file": entry.name, "problem": entry.problem})
        elif entry.name.split("/")[0] == PROVENANCE_DIR:
            if entry.name not in PROVENANCE_FILES:
                failures.append({"file": entry.name, "problem": f"not a file of the manifest ({PROVENANCE_DIR}/)"})
        elif entry.name not in names:
            failures.append({"file": entry.name, "problem": "not a subject of the statement"})
    failures += [
        {"file": name, "problem": "required file is not a subject"} for name in REQUIRED_FILES if name not in names
    ]
    if failures:
        error = SubjectEscapeError if any("outside" in f["problem"] for f in failures) else DigestMismatchError
        raise error(
            "unlisted-file", f"{len(failures)} bundle file(s) are not covered by the statement.", failures=failures
        )
    return None, Step(
        [
            f"Every file of the bundle is one of the {len(names)} subjects or a file of the manifest; "
            f"{'/'.join(NOT_SUBJECTS[1:])}/ (the audit report) is not part of the signed bundle and is not read."
        ]
    )


def _corpus_name(name: str) -> str:
    """``corpus/utterances.csv`` -> "" (the single corpus), ``corpus/<name>/utterances.csv`` -> <name>."""
    parts = name.split("/")
    return "" if len(parts) == 2 else parts[1]


def load_files(verified: VerifiedBytes) -> tuple[LoadedFiles, Step]:
    """Parse every verified file the later steps need, each against its schema (``schemas.bundle``)."""
    failures: list[dict[str, Any]] = []

    def parse(name: str, parser: Any) -> Any:
        try:
            return parser(name, verified.contents[name])
        except BundleFileError as error:
            failures.append({"file": name, "problem": error.problem})
            return None

    contents = verified.contents
    trial_lists = {}
    scores: dict[str, RecordScores] = {}
    corpus_tables: dict[str, pd.DataFrame] = {}
    for name in sorted(contents):
        if name.startswith(f"{TRIALS_DIR}/"):
            list_id = name.removeprefix(f"{TRIALS_DIR}/").removesuffix(".csv")
            if len(list_id) != TRIAL_LIST_ID_LENGTH or verified.digests[name].blake3[:TRIAL_LIST_ID_LENGTH] != list_id:
                failures.append({"file": name, "problem": "the name is not the first 16 hex of the file's BLAKE3"})
            elif (frame := parse(name, parse_trial_list)) is not None:
                trial_lists[list_id] = frame
    # No score file is longer than the longest trial list: a longer one is refused before it is decoded.
    score_files = parse_score_files(
        {name: data for name, data in contents.items() if name.startswith(f"{SCORES_DIR}/")},
        max_rows=max((len(frame) for frame in trial_lists.values()), default=0),
    )
    for name in sorted(contents):
        if name.startswith(f"{SCORES_DIR}/"):
            if isinstance(record := score_files[name], BundleFileError):
                failures.append({"file": name, "problem": record.problem})
            else:
                scores[name.removeprefix(f"{SCORES_DIR}/").removesuffix(".parquet")] = record
        elif name.startswith(f"{CORPUS_DIR}/") and (table := parse(name, parse_utterances)) is not None:
            corpus_tables[_corpus_name(name)] = table
    files = LoadedFiles(
        results=parse(RESULTS_FILE, parse_results) if RESULTS_FILE in contents else None,
        trial_lists=trial_lists,
        scores=scores,
        corpus_tables=corpus_tables,
        operators=parse(OPERATORS_FILE, parse_operators) if OPERATORS_FILE in contents else None,
        checkpoints=parse(CHECKPOINTS_FILE, parse_checkpoints) if CHECKPOINTS_FILE in contents else None,
        config=parse(CONFIG_FILE, parse_toml) if CONFIG_FILE in contents else None,
        environment=parse(ENVIRONMENT_FILE, parse_environment) if ENVIRONMENT_FILE in contents else None,
    )
    if files.results is not None and "record_id" not in files.results.columns:
        failures.append({"file": RESULTS_FILE, "problem": "no record_id column"})
        files = replace(files, results=None)
    if failures:
        raise BundleSchemaError(
            "bundle-schema",
            f"{len(failures)} signed bundle file(s) cannot be parsed or break their schema; they are not used.",
            failures=failures,
            partial=files,
        )
    return files, Step(
        [
            f"Parsed from the verified bytes, each against its schema: {RESULTS_FILE}, {len(trial_lists)} trial "
            f"lists, {len(scores)} score files, {len(corpus_tables)} corpus table(s)."
        ]
    )
