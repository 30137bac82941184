"""``interbias plan``: what a configuration will cost before any work, and its registry beside the paper's counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from runner._cli.options import ConfigArg, commands
from schemas import InputError

__all__ = ["plan"]


@commands
def plan(
    config: ConfigArg,
    sizes: Annotated[
        Path | None, typer.Option("--sizes", help="Declared corpus sizes (default: corpus_sizes.toml beside CONFIG).")
    ] = None,
    corpora: Annotated[bool, typer.Option("--corpora", help="Read the corpora and draw the real trial lists.")] = False,
    throughput: Annotated[
        Path | None,
        typer.Option(
            "--throughput", help="bench_encoders.py --save file (default: throughput-cpu.json beside CONFIG)."
        ),
    ] = None,
    throughput_from: Annotated[
        Path | None,
        typer.Option("--throughput-from", help="A bundle whose timings.json gives each label's measured throughput."),
    ] = None,
    paper: Annotated[
        Path | None,
        typer.Option(
            "--paper", help="The paper's counts to reconcile with (default: paper_counts.toml beside CONFIG)."
        ),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """What CONFIG will cost before any work: utterances, trials, records, embeddings, disk and time; for a
    registry of the paper's experiments, its records and trial evaluations beside the paper's."""
    import contextlib

    from runner.design import load_config, placeholder_roots
    from runner.plan import estimate_plan, load_bundle_throughput, load_corpus_sizes, load_throughput

    if throughput is not None and throughput_from is not None:
        raise InputError("--throughput-from", "give either --throughput FILE or --throughput-from BUNDLE, not both")

    # Declared sizes: the corpus and checkpoint folders are never read, and need not be set.
    with contextlib.nullcontext() if corpora else placeholder_roots("/nonexistent/plan"):
        loaded = load_config(config)
    beside = Path(config).resolve().parent
    speeds_file = throughput or (beside / "throughput-cpu.json")
    speeds = load_throughput(speeds_file) if throughput is not None or speeds_file.is_file() else None
    if throughput_from is not None:
        speeds = load_bundle_throughput(throughput_from)
    if corpora:
        from runner.plan import load_corpora

        tables = {name: table.frame for name, table in load_corpora(loaded).items()}
        estimate = estimate_plan(loaded, tables=tables, throughput=speeds)
    else:
        estimate = estimate_plan(loaded, load_corpus_sizes(sizes or beside / "corpus_sizes.toml"), throughput=speeds)
    counts_file = paper or beside / "paper_counts.toml"
    if loaded.registry and (paper is not None or counts_file.is_file()):
        from runner.plan.reconciliation import load_paper_counts

        estimate.reconcile_with(load_paper_counts(counts_file))
    if json_output:
        typer.echo(json.dumps(estimate.as_dict(), indent=2))
    else:
        typer.echo("\n".join(estimate.lines()))
