"""``interbias``: run a configuration, build the default corpus, reproduce the whole loop.

Thin commands over ``runner.pipeline`` and ``runner.reproduce``. Exit codes as documented in ``audit.errors``:
0 done (or audit passed), 1 an audit finding or a run that could not finish, 2 a usage or input error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer

from audit.errors import EXIT_FINDING, EXIT_INPUT, InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
corpus_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Corpus tables.")
app.add_typer(corpus_app, name="corpus")

if TYPE_CHECKING:
    from runner.pipeline import Executor

F = TypeVar("F", bound=Callable[..., Any])


def one_line_errors(command: F) -> F:
    """Turn input errors into one stderr line with exit 2, and run errors into one line with exit 1."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from runner.pipeline import RunError

        try:
            return command(*args, **kwargs)
        except InputError as error:
            typer.echo(f"error: {error.line()}", err=True)
            raise typer.Exit(EXIT_INPUT) from None
        except RunError as error:
            typer.echo(f"run failed: {error}", err=True)
            raise typer.Exit(EXIT_FINDING) from None

    return wrapper  # type: ignore[return-value]


ConfigArg = Annotated[Path, typer.Argument(help="Run configuration (TOML).")]
OutOpt = Annotated[Path, typer.Option("--out", help="Bundle folder to write (or resume).")]
CacheOpt = Annotated[Path | None, typer.Option("--cache", help="Embedding cache folder.")]
KeyOpt = Annotated[Path | None, typer.Option("--key", help="ed25519 private key (PEM) to sign the bundle.")]
DigestOpt = Annotated[str | None, typer.Option("--image-digest", help="Container image digest to record.")]
ExecutorOpt = Annotated[
    Literal["local", "ray"],
    typer.Option("--executor", help="Where the embeddings are computed: this machine, or a Ray cluster (extra ray)."),
]
AddressOpt = Annotated[
    str | None,
    typer.Option("--address", help="Ray cluster to use (--executor ray); default: a local one started for the run."),
]
GpusOpt = Annotated[
    float, typer.Option("--gpus-per-actor", min=0, help="GPUs per encoder actor (--executor ray), e.g. 0.25.")
]
DeviceOpt = Annotated[str, typer.Option(help="torch device for the encoders (on Ray: the actors').")]


def make_executor(
    executor: str, *, workers: int, address: str | None, gpus_per_actor: float, device: str
) -> tuple[Executor, str]:
    """The executor, and the device the driver loads the encoders on (on Ray it only reads their records)."""
    if executor == "ray":
        from runner.ray_executor import RayExecutor

        return RayExecutor(address=address, gpus_per_actor=gpus_per_actor, device=device), "cpu"
    if address is not None or gpus_per_actor:
        raise InputError("--executor local", "--address and --gpus-per-actor are options of --executor ray")
    from runner.pipeline import LocalExecutor

    return LocalExecutor(workers), device


@app.command()
@one_line_errors
def run(
    config: ConfigArg,
    out: OutOpt,
    cache: CacheOpt = None,
    key: KeyOpt = None,
    image_digest: DigestOpt = None,
    device: DeviceOpt = "cpu",
    workers: Annotated[int, typer.Option(min=0, help="Processes that apply the operators (0: in-process).")] = 2,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    gpus_per_actor: GpusOpt = 0.0,
    json_output: Annotated[bool, typer.Option("--json", help="Print the run summary as JSON.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Run CONFIG and write its artefact bundle into --out."""
    from runner.config import load_config
    from runner.pipeline import run as run_pipeline

    chosen, driver_device = make_executor(
        executor, workers=workers, address=address, gpus_per_actor=gpus_per_actor, device=device
    )
    summary = run_pipeline(
        load_config(config),
        out,
        cache_root=cache,
        signing_key=key,
        image_digest=image_digest,
        command_line=sys.argv,
        progress=progress,
        device=driver_device,
        workers=workers,
        executor=chosen,
    )
    if json_output:
        typer.echo(json.dumps({**asdict(summary), "out": str(summary.out)}, indent=2))
    else:
        typer.echo(
            f"{summary.n_records} records, {summary.n_trials} trials in {summary.n_trial_lists} lists, "
            f"{summary.forward_passes} embeddings computed, {summary.embeddings_cached} from cache -> {summary.out}"
        )


@corpus_app.command("build")
@one_line_errors
def corpus_build(
    out: Annotated[Path | None, typer.Option("--out", help="Corpus folder (default: the cache).")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Build the embedded default corpus from Debian's asterisk prompt packages."""
    from runner.config import default_cache_root
    from runner.corpora.asterisk import build_default_corpus

    folder = out or default_cache_root() / "corpora" / "asterisk"
    table = build_default_corpus(folder, progress=progress)
    frame = table.frame
    hours = frame["duration_s"].sum() / 3600
    typer.echo(
        f"{len(frame)} utterances, {frame['speaker'].nunique()} speakers, {hours:.2f} h, "
        f"{len(table.problems)} problems -> {folder}"
    )


@corpus_app.command("check")
@one_line_errors
def corpus_check(
    adapter: Annotated[str, typer.Argument(help="Corpus adapter: ravdess, torgo, ears, common_voice, l2_arctic, ...")],
    root: Annotated[Path, typer.Argument(help="The corpus folder (only read).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary and every problem as JSON.")] = False,
    shown: Annotated[int, typer.Option("--problems", min=0, help="How many problems to print.")] = 20,
) -> None:
    """Read a corpus (or spoof) folder with its adapter, as a run would, and say what it holds and could not use."""
    from runner.corpora import load_corpus

    table = load_corpus(adapter, root)
    frame = table.frame
    summary = {
        "adapter": adapter,
        "root": str(root),
        "utterances": len(frame),
        "speakers": int(frame["speaker"].nunique()),
        "hours": round(float(frame["duration_s"].sum()) / 3600, 4),
        "problems": [problem._asdict() for problem in table.problems],
    }
    if json_output:
        typer.echo(json.dumps(summary, indent=2))
        return
    typer.echo(
        f"{adapter} {root}: {summary['utterances']} utterances, {summary['speakers']} speakers, "
        f"{summary['hours']:.2f} h, {len(table.problems)} problems"
    )
    for problem in table.problems[:shown]:
        typer.echo(f"  {problem.path}: {problem.reason}")
    if len(table.problems) > shown:
        typer.echo(f"  ... {len(table.problems) - shown} more (--problems N, or --json)")


@app.command()
@one_line_errors
def reproduce(
    config: Annotated[Path, typer.Option("--config", help="Run configuration.")] = Path("configs/default.toml"),
    out: Annotated[Path, typer.Option("--out", help="Bundle folder.")] = Path("out/default"),
    cache: CacheOpt = None,
    key: KeyOpt = None,
    image_digest: DigestOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the steps and check inputs only.")] = False,
    executor: ExecutorOpt = "local",
    address: AddressOpt = None,
    gpus_per_actor: GpusOpt = 0.0,
    device: DeviceOpt = "cpu",
) -> None:
    """The whole loop: build the corpus, run, sign, audit the bundle, write the report."""
    from runner.reproduce import reproduce as reproduce_loop

    chosen, driver_device = make_executor(
        executor, workers=2, address=address, gpus_per_actor=gpus_per_actor, device=device
    )
    code = reproduce_loop(
        config,
        out,
        cache_root=cache,
        key=key,
        image_digest=image_digest,
        dry_run=dry_run,
        executor=chosen,
        device=driver_device,
    )
    raise typer.Exit(code)


if __name__ == "__main__":
    app()
