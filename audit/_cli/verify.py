"""``audit verify``: a results table (and its bundle) audited in two phases, the figures drawn between them."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from audit._cli.attest import check_attest
from audit._cli.summary import finish
from schemas import InputError, announce, one_line_errors

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from audit.verify import AuditRequest, TableAudit
    from provenance import ReviewerKey
    from reports import FigureOutcome, Figures
    from schemas import Forked

__all__ = ["audit_results", "check_card", "check_options", "read_trusted_ids", "verify"]


def import_quietly(bundle: bool = False) -> None:
    """Import the audit (pandas, pandera: most of a run's time) with the cyclic garbage collector paused; for a
    bundle's audit, also its bundle wing and numba, started (``audit.metrics.start_numba``).

    Nothing those imports allocate becomes garbage, so collections during the import only cost time; freezing
    the result afterwards also keeps later collections from re-scanning it (about 0.3 s less per run here). Numba
    started amid the table audit (its first ROCCH EER) set off two more full collections there (default bundle:
    0.12 -> 0.01 s of collections in the table audit).
    """
    with _collector_paused():
        import audit.verify

        if bundle:
            import audit.bundle  # noqa: F401
            from audit.metrics import start_numba

            start_numba()
        gc.freeze()


def audit_results(
    request: AuditRequest,
    out: Path | None = None,
    attest: Ed25519PrivateKey | None = None,
    card: bool = False,
    drawer: Forked[dict[str, list[FigureOutcome]]] | None = None,
) -> tuple[dict[str, Any], list[Path]]:
    """The audit in its two phases, the figures drawn in a forked process beside it when ``out`` is given; the
    artefact-evaluation summary added and the report written to ``out``; with ``attest`` (and ``out``), the
    auditor's signed attestation of the finished audit beside it; with ``card`` (and ``out``), the table's Croissant
    card. What an earlier audit left beside the report and this one does not write is removed. ``drawer``: a table
    audit's ``table_drawer``, forked by the caller before it imported the audit (one is forked here otherwise)."""
    if drawer is None and out is not None and request.bundle is None:
        drawer = table_drawer()
    try:
        report, figures, table = _audited(request, out, drawer)
        from audit.attestation import attestation_pointer, write_audit_attestation
        from provenance import write_table_card
        from reports import finish_report, remove_stale_beside

        if out is not None and attest is not None:
            report["attestation"] = attestation_pointer(out, request, attest)
        written = finish_report(report, out, figures)  # a table's drawer joined once the JSON is encoded
    finally:
        if drawer is not None:
            drawer.close()
    if out is not None and attest is not None:
        written += write_audit_attestation(out, report, table.verified, request, attest)
    if out is not None and card:
        source = table.source
        written.append(write_table_card(out, source.path, source.digest, report["tool"]["version"], source.renamed))
    if out is not None:
        remove_stale_beside(out, written)
    return report, written


def table_drawer() -> Forked[dict[str, list[FigureOutcome]]]:
    """A table audit's figure drawer, forked before the audit's imports: it imports the report's figures and
    matplotlib beside them and draws once given the table's figure data (half in a fork of itself), while this
    process finishes the audit and encodes the report."""
    from schemas import Forked

    return Forked.awaiting(_draw_figures, _import_drawing)


def _import_drawing() -> None:
    """The drawer's preparation, in its process: ``reports`` (with pandas, through ``schemas``) and matplotlib."""
    from reports import import_drawing

    import_drawing()


# Drawn in a fork of the drawer beside the others (the IE, interaction and gap figures): the heatmap's parts are most
# of the drawing of a 4,068-row table (0.16-0.19 s of 0.25 s CPU, its figures as plain shapes). The audited table's
# figures are then drawn on both cores while this process encodes the report.
FORKED_FIGURES = ("eer_heatmap",)


def _draw_figures(figure_data: dict[str, Any], names: tuple[str, ...]) -> dict[str, list[FigureOutcome]]:
    """The drawer's work: ``reports.draw_figures`` (imported by ``_import_drawing`` in its process), those of
    ``FORKED_FIGURES`` in a fork of it, which starts with matplotlib imported."""
    from reports import draw_figures
    from schemas import Forked

    with Forked(draw_figures, figure_data, [name for name in names if name in FORKED_FIGURES]) as forked:
        drawn = draw_figures(figure_data, [name for name in names if name not in FORKED_FIGURES])
        return {**drawn, **forked.result()}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused in this process (forks collect as usual): the audit makes few reference
    cycles, and reference counting frees the rest as before. A paper-scale audit's 1,500 collections cost 0.45 s of
    CPU here and found 79 objects."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@_collector_paused()
def _audited(
    request: AuditRequest, out: Path | None, drawer: Forked[dict[str, list[FigureOutcome]]] | None
) -> tuple[dict[str, Any], Figures | None, TableAudit]:
    """Both phases of the audit, the collector paused, and, with ``out``, the report's figures as a function that
    waits for them (the report is encoded meanwhile): a table's by ``drawer``, a bundle's in a fork made once the table
    is audited (those needing no statistics) and in one made after the statistics (the DET figures with their bands,
    the menagerie)."""
    import_quietly(bundle=request.bundle is not None)
    from audit.verify import audit_table, finish_audit
    from reports import EARLY_FIGURES, add_statistics_figures, import_drawing, render_figures
    from schemas import Forked

    table = audit_table(request)
    # The audited table (and bundle) lives to the end: frozen, it is not scanned again by every full collection that
    # the statistics' and figures' allocations set off here and in the forks (default bundle 6.34 -> 6.15 s CPU).
    gc.freeze()
    if drawer is not None:
        drawer.give(table.figure_data, EARLY_FIGURES)
        report = finish_audit(table)
        forked = drawer
        return report, lambda: render_figures(report, drawn=forked.result()), table
    if table.verified is not None and table.verified.intact:  # the statistics will run their compiled loops
        from audit.metrics import prepare_kernels

        prepare_kernels(announce)
    if out is None or table.verified is None:
        return finish_audit(table), None, table
    import_drawing()
    with Forked(render_figures, table.figure_data, True) as drawing:
        report = finish_audit(table)
        gc.freeze()  # the report and its statistics too: alive to the end, not scanned by the figures' collections
        early = drawing.result()
    # The figures that need the statistics are drawn in a fork too, while the report's JSON is encoded here.
    finishing = Forked(add_statistics_figures, early, report)
    return report, finishing.result, table


def check_card(croissant: bool, out: Path | None, bundle: Path | None, results: Path) -> None:
    """``--croissant`` comes with ``--out`` (the card lies beside the report), without ``--bundle`` (a bundle
    carries its own signed ``croissant.json``, which the audit checks) and for a UTF-8 table (the encoding
    Croissant readers read CSV in; the audit also reads UTF-16). A table that cannot be read is left to the audit
    to name."""
    if not croissant:
        return
    if out is None:
        raise InputError("--croissant", "writes the table's card beside the report; give --out too")
    if bundle is not None:
        from schemas import CROISSANT_FILE

        raise InputError(
            str(bundle),
            "--croissant writes a card for a table audited without a bundle; the bundle carries its own signed "
            f"{CROISSANT_FILE}, which the audit checks",
        )
    from audit.table import text_encoding
    from provenance import read_regular_file

    try:
        encoding = text_encoding(read_regular_file(results, "a results CSV"))
    except InputError:
        return
    if encoding.startswith("utf-16"):
        raise InputError(
            str(results),
            "--croissant describes a UTF-8 table, as Croissant readers read CSV; save this UTF-16 one as UTF-8",
        )


def check_options(out: Path | None, bundle: Path | None, key: Path | None) -> ReviewerKey | None:
    """What can be checked before the audit runs: ``--key`` is a usable public key (and comes with ``--bundle``),
    read here once and returned; ``--out`` can be written and is the bundle's ``report/`` or outside the bundle
    (anywhere else the report would change what it audits)."""
    reviewer_key = None
    if key is not None:
        if bundle is None:
            raise InputError(str(key), "--key names the key trusted for a bundle's signature; give --bundle too")
        from provenance import ReviewerKey

        reviewer_key = ReviewerKey.load(key)
    if out is not None:
        _check_out(out, bundle)
    return reviewer_key


def _check_out(out: Path, bundle: Path | None) -> None:
    """``--out`` may be the bundle's own ``report/`` (which the audit never reads, and where ``interbias
    reproduce`` writes), or any folder outside the bundle; anywhere else inside it would change what is audited."""
    if bundle is not None:
        from schemas import REPORT_DIR

        folder, root = out.resolve(), bundle.resolve()
        if (folder == root or root in folder.parents) and folder != root / REPORT_DIR:
            raise InputError(
                str(out),
                f"is inside the bundle folder {bundle}; write the report to {bundle / REPORT_DIR} (never read by the "
                "audit) or outside the bundle",
            )
    from provenance import check_writable_folder
    from reports import check_report_folder

    check_report_folder(out)
    check_writable_folder(out, out)


def read_trusted_ids(path: Path) -> frozenset[str]:
    """Key ids (64 hex characters, as ``audit keygen`` prints them), one per line; ``#`` starts a comment."""
    from audit.table import read_text

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


@one_line_errors()
def verify(
    results: Annotated[Path, typer.Argument(help="results.csv to audit")],
    columns: Annotated[Path | None, typer.Option("--columns", help="TOML map renaming legacy column names")] = None,
    claims: Annotated[Path | None, typer.Option("--claims", help="TOML file of published numbers to check")] = None,
    bundle: Annotated[
        Path | None,
        typer.Option(
            "--bundle",
            help="artefact bundle the table came from, a folder or its .zip/.tar.gz: signature, digests, re-scoring",
        ),
    ] = None,
    key: Annotated[
        Path | None, typer.Option("--key", help="the authors' public key (PEM) you trust for the bundle's signature")
    ] = None,
    trusted_keys: Annotated[
        Path | None, typer.Option("--trusted-keys", help="file of key ids you trust (one per line), instead of --key")
    ] = None,
    subset: Annotated[
        str | None,
        typer.Option(
            "--subset", help='the signed rows TABLE covers, e.g. "experiment in [E13, E14] and model = CAM++"'
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="folder for report.md, report.html, report.json, figures")
    ] = None,
    roster: Annotated[
        Path | None,
        typer.Option("--roster", help="encoder roster (TOML) whose training_corpora flag training-overlap"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON instead of a summary")] = False,
    attest: Annotated[
        Path | None,
        typer.Option(
            "--attest",
            help="your private key (PEM): sign the finished audit's verdict, written beside the report",
        ),
    ] = None,
    croissant: Annotated[
        bool,
        typer.Option(
            "--croissant",
            help="write croissant.json beside the report: a Croissant 1.1 card of TABLE alone (needs --out; refused "
            "with --bundle, which carries its own signed card)",
        ),
    ] = False,
) -> None:
    """Validate a results table, recompute its aggregates, raise flags and check published claims.

    With --bundle: verify the signed bundle and bind TABLE to its signed results.

    Exit codes: 0 PASS (no error flag and, for a bundle, signed by a key you trust), 1 FAIL (an error flag) or
    UNAUTHENTICATED (the bundle verifies only under its own key), 2 unusable input (one line on stderr).
    """
    drawer = table_drawer() if out is not None and bundle is None else None  # before any heavy import
    try:
        import_quietly()
        check_card(croissant, out, bundle, results)
        reviewer_key = check_options(out, bundle, key)
        auditor_key = check_attest(attest, out)
        from audit.table import AuditConfig, read_training_corpora
        from audit.verify import AuditRequest

        request = AuditRequest(
            results,
            columns=columns,
            claims=claims,
            config=AuditConfig(training_corpora=read_training_corpora(roster)) if roster is not None else None,
            bundle=bundle,
            key=reviewer_key,
            trusted_ids=read_trusted_ids(trusted_keys) if trusted_keys is not None else frozenset(),
            subset=subset,
        )
        report, written = audit_results(request, out, auditor_key, croissant, drawer)
    finally:
        if drawer is not None:
            drawer.close()
    finish(report, written, as_json)
