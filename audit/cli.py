"""The ``audit`` command line: thin wrappers that call the audit and print or write its report.

Exit codes (``schemas.errors``): 0 pass, 1 an error-severity flag, 2 usage error or unreadable input, the latter
as one line on stderr and never a traceback.
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from typing import Any

import typer

from provenance.atomic import check_writable_folder
from schemas.errors import EXIT_INPUT, InputError

app = typer.Typer(
    name="audit",
    help="Audit speaker-verification benchmark results (InterBias-SV).\n\n"
    "Exit codes: 0 pass, 1 fail or unauthenticated, 2 usage error or unreadable input (one line on stderr).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def show_version(value: bool) -> None:
    if value:
        from audit.result import tool_version

        typer.echo(f"audit (interbias-sv) {tool_version()}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=show_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Audit speaker-verification benchmark results (InterBias-SV).

    Exit codes: 0 pass, 1 fail or unauthenticated, 2 usage error or unreadable input (one line on stderr).
    """


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
    lines = [first]
    lines += [f"  {f['severity']:<7} {f['id']}: {f['message']}" for f in flags]
    if report["claims"]:
        statuses = [c["status"] for c in report["claims"]]
        tally = ", ".join(f"{statuses.count(s)} {s}" for s in ("reproduced", "not reproduced", "not computable"))
        lines.append(f"claims: {tally}")
    return lines


def import_quietly() -> None:
    """Import the audit (pandas, pandera: most of a run's time) with the cyclic garbage collector paused.

    Nothing those imports allocate becomes garbage, so collections during the import only cost time; freezing
    the result afterwards also keeps later collections from re-scanning it (about 0.3 s less per run here).
    """
    gc.disable()
    try:
        import audit.verify  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()


def audit_results(
    results: Path,
    *,
    columns: Path | None = None,
    claims: Path | None = None,
    bundle: Path | None = None,
    key: Path | None = None,
    trusted_ids: frozenset[str] = frozenset(),
    subset: str | None = None,
    out: Path | None = None,
    roster: Path | None = None,
) -> tuple[dict[str, Any], list[Path]]:
    """The audit in its two phases, the figures drawn in a forked process between them when ``out`` is given;
    the artefact-evaluation summary added and the report written to ``out``."""
    import_quietly()
    from audit.statistics.forked import Forked
    from audit.table.flags import AuditConfig
    from audit.table.reading import read_training_corpora
    from audit.verify import audit_table, finish_audit
    from reports import finish_report
    from reports.figures import render_figures

    config = AuditConfig(training_corpora=read_training_corpora(roster)) if roster is not None else None
    table = audit_table(
        results, columns=columns, claims=claims, config=config, bundle=bundle, key=key, trusted_ids=trusted_ids,
        subset=subset,
    )  # fmt: skip
    drawing = Forked(render_figures, table.figure_data) if out is not None and table.verified is not None else None
    try:
        report = finish_audit(table)
        figures = drawing.result() if drawing is not None else None
    finally:
        if drawing is not None:
            drawing.close()
    return report, finish_report(report, out, figures)


def check_options(out: Path | None, bundle: Path | None, key: Path | None) -> None:
    """What can be checked before the audit runs: ``--key`` is a usable public key (and comes with ``--bundle``);
    ``--out`` can be written and is not inside the bundle (the report would change what it audits)."""
    if key is not None:
        if bundle is None:
            raise InputError(str(key), "--key names the key trusted for a bundle's signature; give --bundle too")
        from provenance.keys import load_public_key

        load_public_key(key)
    if out is None:
        return
    if bundle is not None:
        folder, root = out.resolve(), bundle.resolve()
        if folder == root or root in folder.parents:
            raise InputError(str(out), f"is inside the bundle folder {bundle}; the report must be written elsewhere")
    check_writable_folder(out, out)


def read_trusted_ids(path: Path) -> frozenset[str]:
    """Key ids (64 hex characters, as ``audit keygen`` prints them), one per line; ``#`` starts a comment."""
    from audit.table.reading import read_text

    ids = set()
    for number, line in enumerate(read_text(Path(path), "a file of trusted key ids").splitlines(), start=1):
        entry = line.split("#")[0].strip()
        if not entry:
            continue
        if not re.fullmatch(r"[0-9a-f]{64}", entry):
            raise InputError(str(path), "expected a key id of 64 lowercase hex characters", row=number)
        ids.add(entry)
    if not ids:
        raise InputError(str(path), "no key id in the file")
    return frozenset(ids)


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


@app.command()
def verify(
    results: Path = typer.Argument(..., help="results.csv to audit"),
    columns: Path | None = typer.Option(None, "--columns", help="TOML map renaming legacy column names"),
    claims: Path | None = typer.Option(None, "--claims", help="TOML file of published numbers to check"),
    bundle: Path | None = typer.Option(
        None, "--bundle", help="artefact bundle the table came from: signature, digests, re-scoring"
    ),
    key: Path | None = typer.Option(
        None, "--key", help="the authors' public key (PEM) you trust for the bundle's signature"
    ),
    trusted_keys: Path | None = typer.Option(
        None, "--trusted-keys", help="file of key ids you trust (one per line), instead of --key"
    ),
    subset: str | None = typer.Option(
        None, "--subset", help='the signed rows TABLE covers, e.g. "experiment in [E13, E14] and model = CAM++"'
    ),
    out: Path | None = typer.Option(None, "--out", help="folder for report.md, report.html, report.json, figures"),
    roster: Path | None = typer.Option(
        None, "--roster", help="encoder roster (TOML) whose training_corpora flag training-overlap"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON instead of a summary"),
) -> None:
    """Validate a results table, recompute its aggregates, raise flags and check published claims.

    With --bundle: verify the signed bundle and bind TABLE to its signed results.

    Exit codes: 0 PASS (no error flag and, for a bundle, signed by a key you trust), 1 FAIL (an error flag) or
    UNAUTHENTICATED (the bundle verifies only under its own key), 2 unusable input (one line on stderr).
    """
    try:
        check_options(out, bundle, key)
        report, written = audit_results(
            results,
            columns=columns,
            claims=claims,
            bundle=bundle,
            key=key,
            trusted_ids=read_trusted_ids(trusted_keys) if trusted_keys is not None else frozenset(),
            subset=subset,
            out=out,
            roster=roster,
        )
    except InputError as error:
        typer.echo(error.line(), err=True)
        raise typer.Exit(EXIT_INPUT) from None
    finish(report, written, as_json)


SCORE_FORMAT_HELP = "score-file layout (detected from the first line when not given)"


@app.command()
def scores(
    trials: Path = typer.Argument(
        ..., help="trial list: VoxCeleb '<1|0> <enrol> <test>' or Kaldi '<enrol> <test> target|nontarget'"
    ),
    score_file: Path = typer.Argument(
        ..., metavar="SCORES", help="score file: kaldi, voxceleb, wespeaker or speechbrain layout"
    ),
    score_format: str | None = typer.Option(
        None, "--format", help=SCORE_FORMAT_HELP + ": kaldi|voxceleb|wespeaker|speechbrain"
    ),
    speakers: Path | None = typer.Option(
        None, "--speakers", help="utt2spk map '<utterance> <speaker>' (default: VoxCeleb ids idNNNNN/...)"
    ),
    subgroups: Path | None = typer.Option(None, "--subgroups", help="'<speaker> <subgroup>' map (spk2gender style)"),
    conditions: Path | None = typer.Option(
        None, "--conditions", help="'<utterance> <condition>' map (of the test side)"
    ),
    p_target: float = typer.Option(0.01, "--p-target", help="minDCF target prior"),
    c_miss: float = typer.Option(1.0, "--c-miss", help="minDCF miss cost"),
    c_fa: float = typer.Option(1.0, "--c-fa", help="minDCF false-alarm cost"),
    resamples: int = typer.Option(1000, "--resamples", help="speaker-cluster bootstrap resamples"),
    seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
    out: Path | None = typer.Option(None, "--out", help="folder for report.md, report.html, report.json, figures"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON instead of a summary"),
) -> None:
    """Audit a trial list and its score file: join, EERs (three variants), minDCF, AUC, speaker-bootstrap intervals.

    Exit codes: 0 pass, 1 an error-severity finding (unscored, duplicated or mislabelled trials), 2 usage error or
    unreadable input (one line on stderr).
    """
    from audit.scores.files import SCORE_FORMATS

    if score_format is not None and score_format not in SCORE_FORMATS:
        typer.echo(f"--format: expected one of {', '.join(SCORE_FORMATS)}, got {score_format!r}", err=True)
        raise typer.Exit(EXIT_INPUT)
    try:
        from audit.scores.scoring import ScoringConfig, audit_scores

        config = ScoringConfig(p_target=p_target, c_miss=c_miss, c_fa=c_fa, n_resamples=resamples, seed=seed)
        report = audit_scores(
            trials, score_file, score_format=score_format, speakers=speakers, subgroups=subgroups,
            conditions=conditions, config=config,
        )  # fmt: skip
        from reports import write_report

        written = write_report(report, out) if out is not None else []
    except InputError as error:
        typer.echo(error.line(), err=True)
        raise typer.Exit(EXIT_INPUT) from None
    finish(report, written, as_json)


@app.command()
def seeds(
    results: list[Path] = typer.Argument(..., help="results.csv of runs that differ only in their seed"),
    as_json: bool = typer.Option(False, "--json", help="print every record's and contrast's spread as JSON"),
) -> None:
    """The spread of every EER and IE across seeds (trial sampling and degradation)."""
    from audit.table.seeds import read_seed_tables, seed_spread

    try:
        spread = seed_spread(read_seed_tables(results))
    except InputError as error:
        typer.echo(error.line(), err=True)
        raise typer.Exit(EXIT_INPUT) from None
    if as_json:
        typer.echo(json.dumps(spread, indent=2, allow_nan=False))
        return
    typer.echo(
        f"{len(spread['seeds'])} seeds ({', '.join(map(str, spread['seeds']))}): {len(spread['eer'])} records, "
        f"largest EER range {spread['largest_eer_range']}; {len(spread['ie'])} contrasts, largest IE range "
        f"{spread['largest_ie_range']}"
    )


@app.command()
def keygen(
    private: Path = typer.Argument(..., help="private key file to write (mode 0600; never inside a bundle)"),
    public: Path = typer.Argument(..., help="public key file to write (PEM), for reviewers"),
) -> None:
    """Write an ed25519 key pair for signing run bundles, and print its key id.

    Exit codes: 0 written, 2 usage error or a path that cannot be written (one line on stderr).
    """
    from provenance.keys import generate_keypair

    try:
        key_id = generate_keypair(private, public)
    except InputError as error:
        typer.echo(error.line(), err=True)
        raise typer.Exit(EXIT_INPUT) from None
    typer.echo(f"key id {key_id}: private {private}, public {public}")


if __name__ == "__main__":
    app()
