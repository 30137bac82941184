"""``interbias reproduce``: the whole loop (corpus, run, sign, audit, report) with the audit's verdict as exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from runner._cli.options import (
    ActorsOpt,
    AddressOpt,
    CacheOpt,
    DeviceOpt,
    DigestOpt,
    DtypeOpt,
    ExecutorOpt,
    GpusOpt,
    KeyOpt,
    check_targets,
    commands,
    make_executor,
)

__all__ = ["reproduce"]


@commands
def reproduce(
    config: Annotated[Path, typer.Option("--config", help="Run configuration.")] = Path("configs/default.toml"),
    out: Annotated[Path, typer.Option("--out", help="Bundle folder.")] = Path("out/default"),
    cache: CacheOpt = None,
    key: KeyOpt = None,
    image_digest: DigestOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the steps and check inputs only.")] = False,
    claims: Annotated[
        Path | None, typer.Option("--claims", help="TOML file of published numbers the audit checks.")
    ] = None,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    gpus_per_actor: GpusOpt = 0.0,
    actors_per_label: ActorsOpt = None,
    device: DeviceOpt = "cpu",
    dtype: DtypeOpt = "fp32",
) -> None:
    """The whole loop: build the corpus, run, sign, audit the bundle, write the report.

    Exit codes: 0 the audit passed, 1 an audit finding or a run that could not finish, 2 usage or input error.
    """
    check_targets(out=out, cache=cache)
    from runner.reproduce import reproduce as reproduce_loop

    chosen, driver_device = make_executor(
        executor,
        workers=2,
        address=address,
        gpus_per_actor=gpus_per_actor,
        device=device,
        actors_per_label=actors_per_label,
        dtype=dtype,
    )
    code = reproduce_loop(
        config,
        out,
        cache_root=cache,
        key=key,
        image_digest=image_digest,
        dry_run=dry_run,
        claims=claims,
        executor=chosen,
        device=driver_device,
        dtype=dtype,
    )
    raise typer.Exit(code)
