"""The whole loop in one call: build the corpus, run, sign, audit the bundle, write the report.

A run is always signed: with the reviewer's or author's key when one is given, else with a throwaway key pair
made for this run and kept outside the bundle (beside it, in ``<out>.keys/``), and the loop says so.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from runner.corpora.base import UTTERANCES_FILE
from runner.corpora.world_proxy import BUILD_MANIFEST
from runner.design.config import RunConfig, load_config

if TYPE_CHECKING:
    from runner.encoders.base import Dtype
    from runner.execution import Executor

REPORT_FOLDER = "report"


def _say(message: str) -> None:
    typer.echo(f"[reproduce] {message}", err=True)


def _ensure_corpus(config: RunConfig, dry_run: bool) -> None:
    """Build the embedded default corpus, and the WORLD proxy spoof folder made from it, when the configuration
    names them and they are not built yet."""
    genuine = next((choice for choice in config.corpora.values() if choice.adapter == "asterisk"), None)
    if genuine is None:
        return
    proxies = [
        choice.root
        for choice in config.corpora.values()
        if choice.adapter == "world_proxy" and not (choice.root / BUILD_MANIFEST).is_file()
    ]
    if dry_run:
        for what, folder in [("the default corpus", genuine.root)] + [("its WORLD proxy", root) for root in proxies]:
            _say(f"would build (or reuse) {what} in {folder}")
        return
    if not (genuine.root / UTTERANCES_FILE).is_file():
        from runner.corpora.asterisk import build_default_corpus

        started = time.perf_counter()
        table = build_default_corpus(genuine.root)
        _say(f"corpus: {len(table.frame)} utterances in {genuine.root} ({time.perf_counter() - started:.1f} s)")
    for root in proxies:
        from runner.corpora.world_proxy import build_world_proxy

        started = time.perf_counter()
        table = build_world_proxy(genuine.root, root)
        _say(f"WORLD proxy: {len(table.frame)} spoof files in {root} ({time.perf_counter() - started:.1f} s)")


def _signing_key(out: Path, key: Path | None) -> Path:
    """The key to sign with: the given one, or a throwaway pair made beside the bundle (never inside it)."""
    if key is not None:
        return key
    from provenance import generate_keypair

    folder = out.parent / f"{out.name}.keys"
    private, public = folder / "run.key", folder / "run.pub"
    if not private.is_file():
        key_id = generate_keypair(private, public)
        _say(f"no --key given: signed with a throwaway key made for this run, key id {key_id} ({private})")
    else:
        _say(f"no --key given: signed with this run's throwaway key {private}")
    return private


def check_run_inputs(config: RunConfig, device: str, image_digest: str | None, dtype: str = "fp32") -> None:
    """What would otherwise fail late is checked before a run starts: the device and the precision for every
    encoder of the configuration, and the form of the image digest that environment.json records."""
    from provenance import check_image_digest
    from runner.encoders.preflight import check_devices, check_precision

    if image_digest is not None:
        check_image_digest(image_digest)
    models = [*config.encoders, *([config.countermeasure.spec] if config.countermeasure else [])]
    labels = [(spec.label, spec.kind) for spec in models]
    check_devices(device, labels)
    check_precision(device, dtype, labels)


def reproduce(
    config_path: Path,
    out: Path,
    *,
    cache_root: Path | None = None,
    key: Path | None = None,
    image_digest: str | None = None,
    dry_run: bool = False,
    claims: Path | None = None,
    executor: Executor | None = None,
    device: str = "cpu",
    dtype: Dtype = "fp32",
) -> int:
    """Run the loop and return the audit's exit code (0 pass, 1 findings, 2 input error). ``claims``: published
    numbers to check in the audit, read (and refused when malformed) before the run starts; ``executor`` computes
    the embeddings (default: this machine; a ``RayExecutor`` without an address starts a local Ray cluster for the
    run and stops it after)."""
    from audit import (
        AuditRequest,
        attestation_pointer,
        audit_table,
        exit_code,
        finish_audit,
        write_audit_attestation,
    )
    from audit.table import read_claims
    from provenance import key_id, load_private_key
    from reports import finish_report

    claim_count = len(read_claims(claims)) if claims is not None else 0
    config = load_config(config_path)
    check_run_inputs(config, device, image_digest, dtype)
    _ensure_corpus(config, dry_run)
    if dry_run:
        labels = ", ".join(choice.label for choice in config.encoders)
        _say(f"would run {config.source} ({len(config.experiments)} experiments; encoders {labels}) into {out}")
        with_claims = f" and {claim_count} claims of {claims}" if claims is not None else ""
        _say(f"device {device}: available for every encoder; dtype {dtype}")
        _say(
            f"would sign with {key or 'a throwaway key'}, audit {out / 'results.csv'} with --bundle {out}{with_claims}"
        )
        return 0
    from runner.pipeline import RunOptions, run

    started = time.perf_counter()
    signing_key = _signing_key(out, key)
    options = RunOptions(
        cache_root=cache_root,
        signing_key=signing_key,
        image_digest=image_digest,
        command_line=sys.argv,
        device=device,
        dtype=dtype,
        executor=executor,
    )
    summary = run(config, out, options)
    _say(
        f"run {summary.run_id}: {summary.n_records} records, {summary.n_trials} trials, "
        f"{summary.forward_passes} embeddings computed, {summary.embeddings_cached} cached "
        f"({time.perf_counter() - started:.1f} s)"
    )
    report_dir = out / REPORT_FOLDER
    # The loop signed the bundle itself, so it trusts exactly that key: the throwaway key's public half, or the
    # key id of the given private key (never merely the key the bundle carries).
    trusted = signing_key.with_suffix(".pub") if key is None else None
    trusted_ids = frozenset() if key is None else frozenset({key_id(load_private_key(key).public_key())})
    request = AuditRequest(out / "results.csv", claims=claims, bundle=out, key=trusted, trusted_ids=trusted_ids)
    table = audit_table(request)
    report = finish_audit(table)
    # The loop attests its own audit with the run's key: a verdict anyone can check later (audit verify-attestation).
    attesting_key = load_private_key(signing_key)
    report["attestation"] = attestation_pointer(report_dir, request, attesting_key)
    finish_report(report, report_dir)
    write_audit_attestation(report_dir, report, table.verified, request, attesting_key)
    _say(f"report: {report_dir / 'report.html'} (also report.md, report.json, the signed attestation.intoto.jsonl)")
    _say(f"verdict: {report['verdict']} ({sum(f['severity'] == 'error' for f in report['flags'])} error flags)")
    return exit_code(report)
