"""What a report prints: the verdict line and one line per flag, or the report as JSON; then its exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from audit.result import exit_code

__all__ = ["finish", "summary_lines"]


def summary_lines(report: dict[str, Any]) -> list[str]:
    """A short human summary: the verdict line (with the key that signed and any declared subset), one line per
    flag, claim counts."""
    flags = report["flags"]
    counts = {severity: sum(f["severity"] == severity for f in flags) for severity in ("error", "warning", "info")}
    source, trust = report["source"], report.get("trust") or {}
    verdict = report["verdict"].upper()
    if report["verdict"] == "pass" and trust.get("subset"):
        subset = trust["subset"]
        verdict += f", subset: {subset['rows']} of {subset['signed_rows']} signed rows ({subset['expression']})"
    first = (
        f"{verdict}: {source['path']} ({source['n_rows']} rows): "
        f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
    )
    if report["verdict"] == "unauthenticated":
        first += (
            f"; the bundle verifies only under its own enclosed key (key id {trust.get('key_id')}), which proves "
            "integrity, not authorship: pass the authors' public key with --key AUTHOR.pub "
            "(or its key id in --trusted-keys FILE)"
        )
    elif trust.get("trusted"):
        first += f"; signed by trusted key id {trust.get('key_id')}"
    lines = [first, *report.get("headline", [])]
    lines += [f"  {f['severity']:<7} {f['id']}: {f['message']}" for f in flags]
    if report["claims"]:
        statuses = [c["status"] for c in report["claims"]]
        tally = ", ".join(f"{statuses.count(s)} {s}" for s in ("reproduced", "not reproduced", "not computable"))
        lines.append(f"claims: {tally}")
    return lines


def finish(report: dict[str, Any], written: list[Path], as_json: bool) -> None:
    """Print the report (JSON or the summary and the files written) and exit with its code."""
    if as_json:
        typer.echo(json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        typer.echo("\n".join(summary_lines(report)))
        for path in written:
            typer.echo(f"wrote {path}")
    raise typer.Exit(exit_code(report))
