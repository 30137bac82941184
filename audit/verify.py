"""`audit verify`: a straight line of small steps from a results table to a JSON-able report.

read -> validate -> keep the usable rows -> derive contrasts -> recompute aggregates -> raise flags -> check
claims -> assemble the report. Unreadable input raises :class:`~schemas.errors.InputError` before any step runs;
everything else (schema failures included) becomes a flag in the report, whose ``verdict`` is ``fail`` when
any flag is an error. The report's shape is the contract of the renderer in ``reports/``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from audit.result import assemble_report
from audit.table import (
    AuditConfig,
    Claim,
    ContrastSet,
    GapPair,
    ResultsSource,
    UnpairedGender,
    check_claims,
    derive_contrasts,
    flag_claims,
    gender_gap_pairs,
    provenance_coverage,
    raise_flags,
    read_claims,
    read_results,
    recompute_aggregates,
    record_facts,
)
from schemas import Flag, ValidatedResults, json_safe, one_per_id, validate_results, with_all_columns

if TYPE_CHECKING:
    from audit.bundle import VerifiedBundle
    from provenance import ReviewerKey


@dataclass(frozen=True)
class AuditRequest:
    """What to audit and whom to trust: the results table, what comes with it, and the reviewer's keys.

    ``columns``: a TOML map renaming a legacy table's columns; ``claims``: a TOML file of published numbers to check
    against the recomputation; ``config``: the audit's thresholds (default ``AuditConfig()``); ``bundle``: the
    artefact bundle the table came from (a folder or its archive: signature, digests, re-scoring, statistics);
    ``key``: the public key the reviewer trusts, or ``trusted_ids``, key ids they trust instead (a bundle signed by
    no trusted key is ``unauthenticated``); ``subset``: which signed rows the table covers, e.g.
    ``"experiment in [E13] and model = CAM++"``.
    """

    results: Path
    columns: Path | None = None
    claims: Path | None = None
    config: AuditConfig | None = None
    bundle: Path | None = None
    key: Path | ReviewerKey | None = None
    trusted_ids: frozenset[str] = frozenset()
    subset: str | None = None


@dataclass(frozen=True)
class Rows:
    """The rows at each stage: all read, passing the schema, and usable (fractions) for aggregates."""

    table: pd.DataFrame
    validated: ValidatedResults
    valid: pd.DataFrame
    usable: pd.DataFrame


def completed_from_bundle(source: ResultsSource, verified: VerifiedBundle) -> ResultsSource:
    """The audited table with the columns it lacks (``record_id``, provenance, counts) taken from the signed rows its
    rows bound to by their key. When the binding failed (its flag says why, first), the rows that did bind are still
    completed, so that the table's own checks report what the table prints, not the columns a paper never prints;
    a row that bound to no signed row keeps those columns empty."""
    binding, signed = verified.binding, verified.files.results
    if binding is None or not binding.from_bundle or signed is None:
        return source
    rows = signed.set_index(signed["record_id"].astype(str), drop=False)
    rows = rows[~rows.index.duplicated()]  # a signed record id held twice is the rows step's finding
    record_ids = list(binding.record_ids)
    filled = {
        column: pd.Series(
            [None if record is None else rows.at[record, column] for record in record_ids],
            index=source.frame.index,
            dtype=object,
        )
        for column in binding.from_bundle
    }
    return replace(source, frame=source.frame.assign(**filled))


def select_rows(source: ResultsSource, config: AuditConfig) -> Rows:
    """Validate, then keep rows on the fraction scale; without the required columns nothing is usable."""
    validated = validate_results(source.frame)
    valid = with_all_columns(validated.valid)
    usable = valid[valid["eer"] <= config.percent_scale_above]
    return Rows(source.frame, validated, valid, usable)


def derive(rows: Rows, config: AuditConfig) -> tuple[ContrastSet, list[GapPair], list[UnpairedGender]]:
    """Contrasts (same-corpus four-term settings) and gender-gap pairs of the usable rows."""
    contrast_set = derive_contrasts(rows.usable, config.reference_level, config.cross_corpus_experiments)
    return (contrast_set, *gender_gap_pairs(rows.usable))


def table_facts(rows: Rows, config: AuditConfig) -> dict[str, Any]:
    """Whole-table counts a claim can name: records, trial evaluations, rows with each provenance field."""
    coverage = provenance_coverage(rows.table, (*config.provenance_columns, "scores_blake3"))
    n_trials = int((rows.valid["n_target"] + rows.valid["n_nontarget"]).sum()) if len(rows.valid) else 0
    return {"n_records": len(rows.table), "n_trials": n_trials} | {c: v["present"] for c, v in coverage.items()}


NO_SCORES_SECTION = {
    "id": "per-trial-statistics",
    "title": "Per-trial statistics",
    "status": "skipped",
    "lines": [
        "A results table carries no per-trial scores, so confidence intervals (speaker-cluster "
        "bootstrap), equivalence tests of additivity and re-scored EERs cannot be computed; they "
        "need an artefact bundle with scores/<record_id>.parquet (audit verify --bundle DIR)."
    ],
    "table": None,
}


def sections(rows: Rows, with_bundle: bool) -> list[dict[str, Any]]:
    """Sections a results table alone gives: the rows used and, without a bundle, why per-trial statistics are
    absent."""
    n_invalid = len(rows.table) - len(rows.valid)
    n_percent = len(rows.valid) - len(rows.usable)
    rows_used = {
        "id": "rows-used",
        "title": "Rows used",
        "status": "info",
        "lines": [
            f"{len(rows.table)} rows read; {n_invalid} left out for schema failures; {n_percent} left "
            f"out as percent-scale EERs; {len(rows.usable)} used for the aggregates and contrasts."
        ],
        "table": None,
    }
    return [rows_used] if with_bundle else [rows_used, NO_SCORES_SECTION]


@dataclass
class TableAudit:
    """The first phase of an audit: the table's findings and, with a bundle, its verification and curves.

    ``figure_data`` (the aggregates and curves, JSON-safe) is all the report's figures read: a caller can draw
    them while :func:`finish_audit` runs the bundle's statistics, the longest step.
    """

    source: ResultsSource
    config: AuditConfig
    rows: Rows
    contrast_set: ContrastSet
    aggregates: dict[str, Any]
    flags: list[Flag]
    claim_results: list[dict[str, Any]]
    sections: list[dict[str, Any]]
    verified: VerifiedBundle | None = None
    curves: Any = None

    @property
    def figure_data(self) -> dict[str, Any]:
        return {"aggregates": self.aggregates, "curves": self.curves}


def audit_table(request: AuditRequest) -> TableAudit:
    """Phase one of :func:`verify`: read and check the table (and verify the bundle); no statistics yet.

    Raises InputError for unreadable input.
    """
    config = request.config or AuditConfig()
    bundle, bundle_source, declared_subset = request.bundle, None, None
    if bundle is not None or request.subset is not None:  # the bundle's wing (and its metrics) only for a bundle
        from audit.bundle import open_bundle, parse_subset

        bundle_source = open_bundle(Path(bundle)) if bundle is not None else None  # a folder, or an archive in place
        declared_subset = parse_subset(request.subset) if request.subset is not None else None
    source = read_results(Path(request.results), request.columns)
    claim_list: list[Claim] = read_claims(request.claims) if request.claims is not None else []
    verified = None
    if bundle_source is not None:
        from audit.bundle import verify_bundle

        verified = verify_bundle(
            source.frame, bundle_source, request.key, trusted_ids=request.trusted_ids, subset=declared_subset,
            value_maps=source.value_maps,
        )  # fmt: skip
        source = completed_from_bundle(source, verified)
    rows = select_rows(source, config)
    contrast_set, pairs, unpaired = derive(rows, config)
    aggregates = recompute_aggregates(
        rows.usable,
        contrast_set,
        pairs,
        clean_labels=config.clean_labels,
        emotion_experiment=config.emotion_experiment,
        reference_emotion=config.reference_emotion,
        near_chance_eer=config.near_chance_eer,
        cross_corpus_experiments=config.cross_corpus_experiments,
    )
    flags = raise_flags(
        rows.table, rows.validated, rows.valid, rows.usable, contrast_set, pairs, unpaired, aggregates, config
    )
    claim_results = []
    if claim_list:  # the facts a claim can name, gathered only for claims to check
        facts = {**aggregates, "table": table_facts(rows, config), "records": record_facts(rows.usable)}
        claim_results = check_claims(claim_list, facts)
        flags.extend(flag_claims(claim_results))
    done = TableAudit(
        source,
        config,
        rows,
        contrast_set,
        json_safe(aggregates),
        flags,
        claim_results,
        sections(rows, bundle is not None),
    )
    if verified is not None:
        from audit.bundle import curves_of_bundle

        done.verified = verified
        done.flags.extend(verified.flags)
        done.sections.extend(verified.sections)
        done.curves = json_safe(curves_of_bundle(rows.usable, verified, config.clean_labels, config.reference_level))
    return done


def finish_audit(table: TableAudit) -> dict[str, Any]:
    """Phase two of :func:`verify`: the bundle's statistics (when there is one), then the report assembled."""
    flags, report_sections, statistics = list(table.flags), list(table.sections), None
    if table.verified is not None:
        from audit.statistics import statistics_of_bundle

        contrasts = [*table.contrast_set.contrasts, *table.contrast_set.complement]
        statistics, statistics_sections, statistics_flags = statistics_of_bundle(
            table.rows.usable, contrasts, table.verified, table.config.near_chance_eer, table.curves or ()
        )
        flags.extend(statistics_flags)
        report_sections.extend(statistics_sections)
    report = assemble_report(
        table.source, table.config, one_per_id(flags), table.aggregates, table.claim_results, report_sections,
        table.verified,
    )  # fmt: skip
    if statistics is not None:
        report["statistics"] = json_safe(statistics)
    if table.verified is not None:
        report["curves"] = table.curves
    return report


def verify(request: AuditRequest) -> dict[str, Any]:
    """Audit one results table (and, with ``bundle``, the artefact bundle it came from) and return the report.

    Args:
        request: the table and what comes with it (:class:`AuditRequest`).

    Returns:
        The report, a JSON-safe dict whose ``verdict`` is ``pass``, ``fail`` or ``unauthenticated``.

    Raises:
        InputError: unreadable input (one line, exit 2).

    Example:
        >>> import pathlib, tempfile
        >>> table = pathlib.Path(tempfile.mkdtemp()) / "results.csv"
        >>> _ = table.write_text("experiment,model,condition,eer\\nE01,m1,clean,0.05\\n")
        >>> report = verify(AuditRequest(table))
        >>> report["source"]["n_rows"], report["verdict"] in {"pass", "fail"}
        (1, True)
    """
    table = audit_table(request)
    return finish_audit(table)
