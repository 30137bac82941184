"""``interbias run``: a configuration run into its artefact bundle (or one bundle per seed)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from runner._cli.options import (
    ActorsOpt,
    AddressOpt,
    CacheOpt,
    ConfigArg,
    DeviceOpt,
    DigestOpt,
    DtypeOpt,
    ExecutorOpt,
    GpusOpt,
    KeyOpt,
    OutOpt,
    check_targets,
    commands,
    make_executor,
)
from schemas import count

__all__ = ["run"]


@commands
def run(
    config: ConfigArg,
    out: OutOpt,
    cache: CacheOpt = None,
    key: KeyOpt = None,
    image_digest: DigestOpt = None,
    device: DeviceOpt = "cpu",
    dtype: DtypeOpt = "fp32",
    workers: Annotated[int, typer.Option(min=0, help="Processes that apply the operators (0: in-process).")] = 2,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    gpus_per_actor: GpusOpt = 0.0,
    actors_per_label: ActorsOpt = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the run summary as JSON.")] = False,
    progress: Annotated[
        bool,
        typer.Option(help="Progress bars on a terminal; else a line per stage (and through a long one) on stderr."),
    ] = True,
    seeds: Annotated[
        int,
        typer.Option(
            min=1,
            help="Repeat with N seeds (the config's seed, +1, ...): one bundle per seed in --out/seed-<seed>; "
            "then `audit seeds --out/seed-*/results.csv` gives the spread of every EER and IE.",
        ),
    ] = 1,
) -> None:
    """Run CONFIG and write its artefact bundle into --out.

    Exit codes: 0 done, 1 a run that could not finish, 2 usage or input error (one line on stderr).
    """
    check_targets(out=out, cache=cache)
    from runner.design.config import load_config
    from runner.pipeline import RunOptions
    from runner.pipeline import run as run_pipeline
    from runner.reproduce import check_run_inputs

    chosen, driver_device = make_executor(
        executor,
        workers=workers,
        address=address,
        gpus_per_actor=gpus_per_actor,
        device=device,
        actors_per_label=actors_per_label,
        dtype=dtype,
    )

    def run_one(path: Path, folder: Path) -> Any:
        loaded = load_config(path)
        check_run_inputs(loaded, driver_device, image_digest, dtype)  # on Ray the actors' device is checked by Ray
        options = RunOptions(
            cache_root=cache,
            signing_key=key,
            image_digest=image_digest,
            command_line=sys.argv,
            progress=progress,  # stage lines go to stderr: stdout keeps the summary (--json) alone
            device=driver_device,
            dtype=dtype,
            workers=workers,
            executor=chosen,
        )
        return run_pipeline(loaded, folder, options)

    if seeds > 1:
        from runner.design.seeds import seed_configs

        first = load_config(config).seed
        for seed, path in seed_configs(config, [first + k for k in range(seeds)]):
            typer.echo(f"seed {seed}: {run_one(path, out / f'seed-{seed}').n_records} records -> {out}/seed-{seed}")
        typer.echo(f"spread across seeds: audit seeds {out}/seed-*/results.csv")
        return
    summary = run_one(config, out)
    if json_output:
        typer.echo(json.dumps({**asdict(summary), "out": str(summary.out)}, indent=2))
    else:
        rejected = f", {summary.cache_rejected} cache entries rejected and recomputed" if summary.cache_rejected else ""
        typer.echo(
            f"{count(summary.n_records, 'record')}, {count(summary.n_trials, 'trial')} in "
            f"{count(summary.n_trial_lists, 'list')}, {count(summary.forward_passes, 'embedding')} computed, "
            f"{summary.embeddings_cached} from cache{rejected} "
            f"-> {summary.out}"
        )
        for note in summary.notes:
            typer.echo(f"note: {note}")
