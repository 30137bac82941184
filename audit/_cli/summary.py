"""What a report prints: the verdict line and one line per flag, or the report as JSON; then its exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from schemas import cases_of, count, describe_case

__all__ = ["finish", "summary_lines", "verdict_line"]


def _binding_notes(report: dict[str, Any]) -> list[str]:
    """What the binding did that a reader must know with the verdict: the key, rounding, columns not compared, the
    mapping file's respellings."""
    trust, notes = report.get("trust") or {}, []
    if trust.get("key") and trust["key"] != ["record_id"]:
        notes.append(f"rows bound by {', '.join(trust['key'])}")
    if trust.get("precision"):
        notes.append(
            "compared at printed precision: "
            + ", ".join(f"{column} {count(decimals, 'decimal')}" for column, decimals in trust["precision"].items())
        )
    if trust.get("not_compared"):
        notes.append(f"not compared: {', '.join(trust['not_compared'])}")
    if report["source"].get("renamed_columns"):
        notes.append(f"{count(len(report['source']['renamed_columns']), 'column')} renamed by the mapping file")
    mapping = {what: n for what, n in (report["source"].get("mapping") or {}).items() if what != "eer_scale"}
    if mapping:
        notes.append("mapping applied: " + ", ".join(f"{what} {n}" for what, n in mapping.items()))
    return notes


def verdict_line(report: dict[str, Any]) -> str:
    """PASS / FAIL / UNAUTHENTICATED first; on FAIL its cause in one sentence; what was and was not checked."""
    flags, source, trust = report["flags"], report["source"], report.get("trust") or {}
    tally = ", ".join(
        count(sum(f["severity"] == severity for f in flags), severity, plural)
        for severity, plural in (("error", None), ("warning", None), ("info", "info"))
    )
    verdict = report["verdict"].upper()
    if report.get("checked") == "table only":
        verdict += " (table checks only: no signature, digests or scores were checked)"
    elif report["verdict"] == "pass" and trust.get("subset"):
        subset = trust["subset"]
        verdict += f", subset: {subset['rows']} of {subset['signed_rows']} signed rows ({subset['expression']})"
    model = f", model {source['model']}" if source.get("model") else ""  # the first of audit scores --by-model
    cause, what = report.get("cause"), f"{source['path']}{model} ({count(source['n_rows'], 'row')})"
    line = (
        f"{verdict}: {cause['flag']}: {cause['message']} [{what}: {tally}]" if cause else f"{verdict}: {what}: {tally}"
    )
    if report["verdict"] == "unauthenticated":
        line += (
            f"; the bundle verifies only under its own enclosed key (key id {trust.get('key_id')}), which proves "
            "integrity, not authorship: pass the authors' public key with --key AUTHOR.pub "
            "(or its key id in --trusted-keys FILE)"
        )
    elif trust.get("trusted"):
        line += f"; signed by trusted key id {trust.get('key_id')}"
    notes = _binding_notes(report)
    return line + (f"; {'; '.join(notes)}" if notes else "")


def summary_lines(report: dict[str, Any]) -> list[str]:
    """A short human summary: the verdict line, then one line per flag, errors first, each error with its first
    failing cases (record, column, audited against signed value, or file), then the claim counts."""
    from audit.result import CASES_SHOWN  # here: the command line's start imports no pandas

    lines = [verdict_line(report), *report.get("headline", [])]
    for flag in report["flags"]:
        lines.append(f"  {flag['severity']:<7} {flag['id']}: {flag['message']}")
        if flag["severity"] == "error":
            cases = cases_of(flag.get("details") or {})
            lines += [f"      {describe_case(case)}" for case in cases[:CASES_SHOWN]]
            if len(cases) > CASES_SHOWN:
                lines.append(f"      ... {len(cases) - CASES_SHOWN} more in report.json")
    if report["claims"]:
        statuses = [c["status"] for c in report["claims"]]
        tally = ", ".join(f"{statuses.count(s)} {s}" for s in ("reproduced", "not reproduced", "not computable"))
        lines.append(f"claims: {tally}")
    return lines


def finish(report: dict[str, Any], written: list[Path], as_json: bool) -> None:
    """Print the report (JSON or the summary and the files written) and exit with its code."""
    from audit.result import exit_code

    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        typer.echo("\n".join(summary_lines(report)))
        for path in written:
            typer.echo(f"wrote {path}")
    raise typer.Exit(exit_code(report))
