"""The ``interbias`` command line: one thin module per command over the runner's library, on the shared plumbing
(``schemas.command_line``: one stderr line per failure, ``--debug``, ``--version``).

Exit codes (``schemas.errors``): 0 done (or the audit passed), 1 an audit finding or a run that could not finish,
2 a usage or input error, the latter as one line on stderr and never a traceback.
"""

from __future__ import annotations

from typing import Annotated

import typer

from runner._cli import checkpoints, corpus, plan, rehearse, reproduce, run
from runner._cli.options import EXIT_CODES
from schemas import debug_callback, version_callback

__all__ = ["app"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Run the InterBias-SV benchmark: a configuration, the default corpus, the whole loop.",
)
corpus_app = typer.Typer(add_completion=False, no_args_is_help=True, help=f"Corpus tables. {EXIT_CODES}")
app.add_typer(corpus_app, name="corpus")
checkpoints_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Encoder checkpoint folders.")
app.add_typer(checkpoints_app, name="checkpoints")


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=version_callback("interbias"),
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
    debug_callback(debug)


for command in (run.run, plan.plan, rehearse.rehearse, reproduce.reproduce):
    app.command()(command)
corpus_app.command("build")(corpus.build)
corpus_app.command("check")(corpus.check)
checkpoints_app.command("synthesise")(checkpoints.synthesise)
checkpoints_app.command("install")(checkpoints.install)
