"""Verify an artefact bundle end to end and return a :class:`~audit.bundle.verified.VerifiedBundle`.

In-toto style, one straight line of small ``verify_*`` steps: signature, statement, subject names, digests (each
file read once, its verified bytes kept), every file covered, the files parsed against their schemas, the bundle's
Croissant card against the verified files, the signed
rows bound to the statement, the audited table bound to the signed rows, scores following their trial lists,
re-scored metrics, shared trial lists, trial utterances, operator outcomes, coverage. Each step returns what later
steps need, or raises one :class:`~audit.bundle.BundleError` (a flag) with whatever partial result later steps can
still use; each adds one report section ``{id, title, status, lines, table}``.

When the signature fails (or the bundle is unsigned) nothing in the payload is parsed: every later step is
reported as "not run: unauthenticated". A bundle that verifies only under the key it carries is checked in full
but stays unauthenticated (``VerifiedBundle.authentication``): the verdict, not a flag, says so.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from audit.bundle.binding import RowStatus, verify_rows
from audit.bundle.card import verify_croissant_card
from audit.bundle.rescore import verify_rescored_metrics, verify_scores_follow_trial_lists
from audit.bundle.rescore_beyond import verify_beyond_eer_metrics
from audit.bundle.signature import verify_signature, verify_statement, verify_statement_copy
from audit.bundle.source import BundleArchive, BundleFolder, BundleSource, open_bundle
from audit.bundle.subjects import (
    VerifiedBytes,
    load_files,
    verify_every_file_is_subject,
    verify_subject_digests,
    verify_subject_names,
)
from audit.bundle.table_binding import Subset, verify_table_binding
from audit.bundle.trial_checks import verify_shared_trial_lists, verify_trial_utterances
from audit.bundle.verified import (
    Authentication,
    BundleError,
    LoadedFiles,
    OperatorFailuresError,
    Step,
    TableBinding,
    Trust,
    VerifiedBundle,
)
from provenance import ReviewerKey, bytes_digest
from schemas import OPERATORS_FILE, Flag, Forked, Severity

NOT_RUN_UNAUTHENTICATED = "Not run: unauthenticated (the signature step failed, so nothing in the bundle is trusted)."
NOT_RUN_NO_STATEMENT = "Not run: there is no usable in-toto statement to check against."
FORKED_UTTERANCE_TRIALS = 1 << 16  # trials from which the trial utterances' check (0.4 s on 194 k trials) is forked
LATER_STEPS = (
    ("statement", "Statement and predicate type"),
    ("subject-names", "Subject names stay in the bundle"),
    ("subject-digests", "Subject digests (SHA-256, BLAKE3)"),
    ("subject-coverage", "Every bundle file is a subject"),
    ("files", "Bundle files parsed against their schemas"),
    ("croissant", "The Croissant card agrees with the bundle"),
    ("rows", "Signed rows bound to the statement"),
    ("table-binding", "Audited table bound to the signed table"),
    ("trial-order", "Scores follow their trial lists"),
    ("rescore", "Re-scored metrics"),
    ("beyond-eer", "Calibrated and spoofing-aware metrics re-derived"),
    ("shared-trials", "Same trial list across contrast terms and encoders"),
    ("trial-utterances", "Trials name the bundle's utterances (spoof trials disclosed)"),
    ("operators", "Operator outcomes"),
)
TITLES = dict(LATER_STEPS)


@dataclass
class _Verification:
    """Flags and sections collected along the line of steps."""

    flags: list[Flag] = field(default_factory=list)
    sections: list[dict[str, Any]] = field(default_factory=list)

    def run(self, section_id: str, title: str, step: Callable[..., tuple[Any, Step]], *args: Any) -> Any:
        """Run one step; record its section and, on a BundleError, its flag. Returns the (partial) result."""
        try:
            value, report = step(*args)
            status = "pass"
        except BundleError as error:
            self.flags.append(error.flag())
            value = error.partial
            report = Step([error.message, *error.lines], error.failures[:200])
            status = "warning" if error.severity is Severity.WARNING else "fail"
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

    def step(self, section_id: str, step: Callable[..., tuple[Any, Step]], *args: Any) -> Any:
        return self.run(section_id, TITLES[section_id], step, *args)

    def skip(self, section_ids: list[str], why: str) -> None:
        for section_id in section_ids:
            self.sections.append(
                {
                    "id": f"bundle-{section_id}",
                    "title": TITLES[section_id],
                    "status": "skipped",
                    "lines": [why],
                    "table": [],
                }
            )


def verify_operator_outcomes(files: LoadedFiles) -> tuple[None, Step]:
    """Report operator applied/failed/fallback counts per chain, and per encoder the sides it could not embed;
    failures or fallbacks raise a warning."""
    operators = files.operators or {}
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
    table += [
        {
            "chain": f"encoder {label}",
            "spec": "sides the encoder could not embed",
            "applied": None,
            "failed": encoder.get("failed", 0),
            "fallback": 0,
            "reasons": ", ".join(f"{reason}: {n}" for reason, n in sorted(encoder.get("reasons", {}).items())),
        }
        for label, encoder in sorted(operators.get("encoders", {}).items())
        if encoder.get("failed", 0)
    ]
    troubled = [row for row in table if row["failed"] or row["fallback"]]
    lines = [f"Declared policy for failed operators and encoders: {policy}."]
    if troubled:
        records = tuple(
            record_id
            for record_id, outcome in sorted(operators.get("records", {}).items())
            if outcome.get("failed", 0) or outcome.get("fallback", 0)
        )
        raise OperatorFailuresError(
            "operator-outcomes",
            f"{len(troubled)} operator chain(s) or encoder(s) failed or fell back "
            f"({sum(r['failed'] for r in troubled)} failed, {sum(r['fallback'] for r in troubled)} "
            "fallback); "
            "the affected records were not scored under the nominal condition for those trials.",
            records=records,
            failures=table,
            lines=lines,
        )
    return None, Step([*lines, f"All {len(table)} operator chains applied without failure or fallback."], table)


def coverage_section(
    statuses: dict[str, RowStatus], n_rows: int, audited: Sequence[str | None], agreeing: Collection[str]
) -> dict[str, Any]:
    """Rows with a verified checkpoint digest, trial list and scores, and rows whose metrics re-score to their signed
    values: of the signed rows (``n_rows``), and of the audited table's rows (``audited``: each row's signed record
    when it binds to it and equals it, else None), which a declared subset or a table that differs makes fewer."""

    def fraction(count: int, total: int) -> str:
        return f"{count}/{total} ({count / total:.1%})" if total else "0/0"

    checks: dict[str, Callable[[str], bool]] = {
        "a verified checkpoint digest": lambda record: statuses[record].checkpoint,
        "a verified trial list": lambda record: statuses[record].trial_list,
        "verified per-trial scores": lambda record: statuses[record].scores,
        "all three verified": lambda record: all(astuple(statuses[record])),
        "metrics that re-score to the signed values": lambda record: record in agreeing,
    }
    signed = {what: sum(map(check, statuses)) for what, check in checks.items()}
    bound = [record for record in audited if record is not None and record in statuses]
    in_table = {what: sum(map(check, bound)) for what, check in checks.items()}
    lines = [f"Signed rows with {what}: {fraction(n, n_rows)}." for what, n in signed.items()]
    if in_table != signed or len(audited) != n_rows:
        lines.append(
            f"Of the {len(audited)} audited rows, {len(bound)} bind to a signed row and equal it; audited rows with "
            + "; ".join(f"{what}: {fraction(n, len(audited))}" for what, n in in_table.items())
            + "."
        )
    return {
        "id": "bundle-coverage",
        "title": "Provenance coverage of the results rows",
        "status": "pass" if n_rows and signed["all three verified"] == n_rows else "fail",
        "lines": lines,
        "table": [
            {
                "binding": what,
                "rows": n,
                "fraction": n / n_rows if n_rows else 0.0,
                "audited_rows": in_table[what],
                "audited_fraction": in_table[what] / len(audited) if audited else 0.0,
            }
            for what, n in signed.items()
        ],
    }


def audited_records(binding: TableBinding | None, flags: list[Flag], n_table: int) -> list[str | None]:
    """Per audited row, the signed record it binds to and equals, else None; no row counts when a column or a value
    map of the table passes for a signed one (its values were never compared)."""
    if binding is None:
        return [None] * n_table
    failures = [case for flag in flags if flag.id == "table-binding" for case in flag.details["failures"]]
    if any(case.get("row") is None and case.get("record_id") is None for case in failures):
        return [None] * n_table
    differing = {case["row"] for case in failures if case.get("row") is not None}
    return [None if number in differing else record for number, record in enumerate(binding.record_ids, start=1)]


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
    table: pd.DataFrame,
    bundle: Path | BundleSource,
    trusted_key: ReviewerKey | Path | None,
    *,
    trusted_ids: frozenset[str] = frozenset(),
    subset: Subset | None = None,
    value_maps: dict[str, dict[str, str]] | None = None,
) -> VerifiedBundle:
    """Verify ``bundle_dir`` and bind the audited ``table`` to its signed results; see the module docstring.

    Args:
        table: the audited results table (validated); its rows are bound to the signed ones.
        bundle: the bundle folder, or an archive of it (``.zip``, ``.tar``, ``.tar.gz``) read in place.
        trusted_key: the reviewer's public key (its PEM file is read once), or None to check the signature against
            the bundle's own key.
        trusted_ids: key ids the reviewer trusts besides ``trusted_key``.
        subset: the audited table is the rows of the signed one that this selection names.
        value_maps: the value maps a mapping file applied to the table (a map that swaps signed values fails).

    Returns:
        The :class:`~audit.bundle.verified.VerifiedBundle`: how it was authenticated, the verified files, each
        record re-scored, the flags and the report's sections. A step that fails stops the line: what follows is
        reported as skipped, and nothing that failed authentication is parsed.

    Example:
        A folder without a signed statement authenticates nothing; every later step says it was skipped:

        >>> import pathlib, tempfile
        >>> import pandas as pd
        >>> verified = verify_bundle(pd.DataFrame({"record_id": ["r1"]}), pathlib.Path(tempfile.mkdtemp()), None)
        >>> str(verified.authentication.trust), [flag.id for flag in verified.flags]
        ('none', ['bad-signature'])
    """
    source = bundle if isinstance(bundle, BundleFolder | BundleArchive) else open_bundle(Path(bundle))
    if trusted_key is not None and not isinstance(trusted_key, ReviewerKey):
        trusted_key = ReviewerKey.load(trusted_key)
    check = _Verification()
    signature = check.run("signature", "Signature (DSSE, ed25519)", verify_signature, source, trusted_key, trusted_ids)
    later = [section_id for section_id, _ in LATER_STEPS]

    def stop(
        authentication: Authentication, statement: dict[str, Any] | None, skipped: list[str], why: str
    ) -> VerifiedBundle:
        check.skip(skipped, why)
        check.sections.append(coverage_section({}, len(table), [None] * len(table), ()))
        return VerifiedBundle(
            Path(source.label), authentication, statement, {}, LoadedFiles(), None, merge_flags(check.flags),
            check.sections, archive=source.archive,
        )  # fmt: skip

    if signature is None:
        return stop(Authentication(Trust.NONE), None, later, NOT_RUN_UNAUTHENTICATED)
    statement = check.step("statement", verify_statement, signature.payload)
    if statement is None:
        return stop(signature.authentication, None, later[1:], NOT_RUN_NO_STATEMENT)
    check.run(
        "statement-copy", "statement.json is the signed payload", verify_statement_copy, source, signature.payload
    )
    subjects = check.step("subject-names", verify_subject_names, source, statement)
    verified: VerifiedBytes = check.step("subject-digests", verify_subject_digests, source, subjects)
    check.step("subject-coverage", verify_every_file_is_subject, source, subjects)
    files: LoadedFiles = check.step("files", load_files, verified)
    # The trial utterances' check reads only the parsed files: on long lists it runs in a fork beside the steps
    # before it (which leave the second core idle), its outcome taken in its place in the line.
    n_trials = sum(map(len, files.trial_lists.values()))
    with Forked(verify_trial_utterances, files, fork=n_trials >= FORKED_UTTERANCE_TRIALS) as utterances:
        check.step("croissant", verify_croissant_card, verified)
        statuses = check.step("rows", verify_rows, files, statement, verified.digests)
        binding = check.step("table-binding", verify_table_binding, table, files, subset, value_maps)
        check.step("trial-order", verify_scores_follow_trial_lists, files)
        rescored = check.step("rescore", verify_rescored_metrics, files)
        beyond = check.step("beyond-eer", verify_beyond_eer_metrics, files) or {}
        rescored = {record: metrics | beyond.get(record, {}) for record, metrics in (rescored or {}).items()}
        check.step("shared-trials", verify_shared_trial_lists, files)
        check.step("trial-utterances", Forked.result, utterances)
    if files.operators is None:  # the step that lost it has raised its flag
        check.skip(["operators"], f"Not run: {OPERATORS_FILE} is missing, does not verify or breaks its shape.")
    else:
        check.step("operators", verify_operator_outcomes, files)
    n_signed = 0 if files.results is None else len(files.results)
    mismatched = {record for flag in check.flags if flag.id == "score-mismatch" for record in flag.records}
    audited = audited_records(binding, check.flags, len(table))
    check.sections.append(coverage_section(statuses or {}, n_signed, audited, set(rescored or {}) - mismatched))
    return VerifiedBundle(
        Path(source.label),
        signature.authentication,
        statement,
        verified.digests,
        files,
        binding,
        merge_flags(check.flags),
        check.sections,
        rescored or {},
        archive=source.archive,
        statement_digest=bytes_digest(signature.payload),
    )
