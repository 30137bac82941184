"""``interbias rehearse``: a registry's whole analysis path on a synthetic signed bundle, audited."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from runner._cli.options import check_targets, commands

__all__ = ["rehearse"]


@commands
def rehearse(
    config: Annotated[Path, typer.Argument(help="Run configuration whose registry to rehearse.")] = Path(
        "configs/full.toml"
    ),
    out: Annotated[Path, typer.Option("--out", help="Bundle folder to create (keys beside it: OUT.key, OUT.pub).")] = (
        Path("out/rehearsal")
    ),
    scale: Annotated[
        float, typer.Option(help="Multiplier on the paper-size trial budgets (1.0: ~12 M with --pad).")
    ] = 0.01,
    labels: Annotated[int, typer.Option(min=1, help="The first N encoder labels of the configuration.")] = 12,
    experiments: Annotated[
        str | None, typer.Option(help="Comma-separated subset of the configuration's designs (default: all).")
    ] = None,
    pad: Annotated[bool, typer.Option(help="Pad to the paper's 339 cells per label with replicate draws.")] = False,
    same_list: Annotated[
        bool, typer.Option(help="Score every cell of a two-factor design on one list (no population contrasts).")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic pools, trial lists and scores.")] = 7,
) -> None:
    """Rehearse CONFIG's whole analysis path without corpora or checkpoints: a synthetic signed bundle, audited.

    Exit codes: 0 the audit passed, 1 an audit finding, 2 usage or input error (one line on stderr).
    """
    check_targets(out=out)
    from runner.rehearsal import rehearse as rehearse_registry

    done = rehearse_registry(
        config,
        out,
        scale=scale,
        labels=labels,
        experiments=experiments.split(",") if experiments else None,
        pad=pad,
        same_list_contrasts=same_list,
        seed=seed,
    )
    typer.echo("\n".join(done.lines()))
    raise typer.Exit(done.exit_code)
