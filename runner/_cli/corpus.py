"""``interbias corpus build`` and ``interbias corpus check``: corpora of real speech built from Debian packages, and a
corpus folder read as a run would read it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from runner._cli.options import check_targets, commands
from schemas import InputError

__all__ = ["build", "check"]


@commands
def build(
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
    check_targets(out=out)
    from runner.corpora.asterisk import build_default_corpus
    from runner.corpora.base import CorpusTable
    from runner.corpora.fillets import build_fillets_corpus
    from runner.corpora.world_proxy import build_world_proxy
    from runner.design import default_cache_root

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


@commands
def check(
    adapter: Annotated[str, typer.Argument(help="Corpus adapter: ravdess, torgo, ears, common_voice, l2_arctic, ...")],
    root: Annotated[Path, typer.Argument(help="The corpus folder (only read).")],
    release: Annotated[
        str | None, typer.Option("--release", help="The release a configuration would pin (checked as a run checks).")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary and every problem as JSON.")] = False,
    shown: Annotated[int, typer.Option("--problems", min=0, help="How many problems to print.")] = 20,
    content: Annotated[
        bool,
        typer.Option(
            help="Read every file's samples (in blocks) and name those with no speech: digitally silent or white "
            "noise (--no-content reads headers only)."
        ),
    ] = True,
) -> None:
    """Read a corpus (or spoof) folder with its adapter, as a run would, and say what it holds and could not use.

    Exit codes: 0 read, 2 usage error, a folder the adapter cannot read or another release than --release (one
    line on stderr).
    """
    from runner.corpora import CorpusTable, content_problems, load_corpus
    from runner.corpora.base import table_release

    table = load_corpus(adapter, root, release, "--release")
    frame = table.frame
    if content:
        table = CorpusTable(frame, tuple(sorted({*table.problems, *content_problems(root, frame["path"])})))
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
