"""What the ``interbias`` commands share: the exit codes they document, their one-line failures (a missing
``[runner]`` extra named as such), the options several commands take, and the executor they choose."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from schemas import EXIT_INPUT, InputError, failure_line, one_line_errors

if TYPE_CHECKING:
    from runner.encoders import Dtype
    from runner.execution import Executor

__all__ = [
    "EXIT_CODES",
    "INPUT_PREFIX",
    "INSTALL_RUNNER",
    "RUNNER_EXTRA_MODULES",
    "ActorsOpt",
    "AddressOpt",
    "CacheOpt",
    "ConfigArg",
    "DeviceOpt",
    "DigestOpt",
    "DtypeOpt",
    "ExecutorOpt",
    "GpusOpt",
    "KeyOpt",
    "OutOpt",
    "check_targets",
    "commands",
    "extra_missing",
    "make_executor",
    "runner_failure_line",
]

EXIT_CODES = "Exit codes: 0 done, 1 an audit finding or a run that could not finish, 2 usage or input error."
# Top-level modules of the [runner] extra: without them the runner cannot work, and says so in one line.
RUNNER_EXTRA_MODULES = frozenset(
    {"torch", "torchaudio", "resemblyzer", "speechbrain", "transformers", "av", "soundfile", "tqdm", "onnxruntime"}
)
INSTALL_RUNNER = "pip install 'interbias-sv[runner]'"


def extra_missing(error: BaseException) -> tuple[str, int] | None:
    """One line naming the [runner] extra when ``error`` is a missing module of it (the light install); else None,
    and the failure is reported as any other."""
    if not isinstance(error, ModuleNotFoundError) or (error.name or "").partition(".")[0] not in RUNNER_EXTRA_MODULES:
        return None
    return f"error: the runner needs its extra (no module named {error.name!r}): {INSTALL_RUNNER}", EXIT_INPUT


INPUT_PREFIX = "error: "
commands = one_line_errors(input_prefix=INPUT_PREFIX, hook=extra_missing)  # every command's failures, one line each


def runner_failure_line(error: BaseException) -> tuple[str, int]:
    """The one stderr line and exit code of a failure: input errors exit 2, everything else that stops a run 1."""
    return failure_line(error, input_prefix=INPUT_PREFIX)


def check_targets(**options: Path | None) -> None:
    """Each folder a command writes into (``out=``, ``cache=``: the options without their dashes) is one, or can be
    made, before any work: a file, a FIFO or a dangling link there is one line naming the option, exit 2, not a
    file system failure that advises a rerun."""
    from provenance import check_writable_folder

    for name, path in options.items():
        if path is not None:
            check_writable_folder(path, f"--{name.replace('_', '-')} {path}")


ConfigArg = Annotated[Path, typer.Argument(help="Run configuration (TOML).")]
OutOpt = Annotated[Path, typer.Option("--out", help="Bundle folder to write (or resume).")]
CacheOpt = Annotated[Path | None, typer.Option("--cache", help="Embedding cache folder.")]
KeyOpt = Annotated[Path | None, typer.Option("--key", help="ed25519 private key (PEM) to sign the bundle.")]
DigestOpt = Annotated[
    str | None,
    typer.Option("--image-digest", help="Container image digest to record: sha256:<hex> or name@sha256:<hex>."),
]


def _device(value: str) -> str:
    """``--device`` is cpu, cuda or cuda:N: anything else is refused as an option value, before any encoder."""
    kind, colon, index = value.partition(":")
    if (kind == "cpu" and not colon) or (kind == "cuda" and (not colon or index.isdigit())):
        return value
    raise typer.BadParameter(f"{value!r} is not a device: expected cpu, cuda or cuda:N (a CUDA device index)")


DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        callback=_device,
        help="cpu, cuda or cuda:N for every encoder; CUDA that is not there is an error.",
    ),
]
DtypeOpt = Annotated[
    Literal["fp32", "bf16", "fp16"],
    typer.Option(
        "--dtype",
        help="Precision of the torch encoders (bf16/fp16: torch.autocast; fp16 needs CUDA). Exported graphs and the "
        "MFCC baseline run in their own precision and record the request. Part of every embedding's cache key.",
    ),
]
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
ActorsOpt = Annotated[
    int | None,
    typer.Option(
        "--actors-per-label",
        min=1,
        help="Encoder actors per label (--executor ray); default: the cluster's GPU slots (or CPUs) per label.",
    ),
]


def make_executor(
    executor: str,
    *,
    workers: int,
    address: str | None,
    gpus_per_actor: float,
    device: str,
    actors_per_label: int | None = None,
    dtype: Dtype = "fp32",
) -> tuple[Executor, str]:
    """The executor, and the device the driver loads the encoders on (on Ray it only reads their records)."""
    if executor == "ray":
        from runner.execution import RayExecutor

        chosen = RayExecutor(
            address=address,
            gpus_per_actor=gpus_per_actor,
            device=device,
            dtype=dtype,
            actors_per_label=actors_per_label,
        )
        return chosen, "cpu"
    if address is not None or gpus_per_actor or actors_per_label is not None:
        raise InputError(
            "--executor local", "--address, --gpus-per-actor and --actors-per-label are options of --executor ray"
        )
    from runner.execution import LocalExecutor

    return LocalExecutor(workers), device
