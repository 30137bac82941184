"""The ``audit`` command line: one thin module per command over the audit's library, on the shared plumbing
(``plumbing``: one stderr line per failure, ``--debug``, ``--version``).

Exit codes (``schemas.errors``): 0 pass, 1 an error-severity flag, 2 usage error or unreadable input, the latter
as one line on stderr and never a traceback.
"""

from __future__ import annotations

from typing import Annotated

import typer

from audit._cli import attest, keygen, scores, seeds, verify
from schemas import debug_callback, version_callback

__all__ = ["app"]

app = typer.Typer(
    name="audit",
    help="Audit speaker-verification benchmark results (InterBias-SV).\n\n"
    "Exit codes: 0 pass, 1 fail or unauthenticated, 2 usage error or unreadable input (one line on stderr).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=version_callback("audit"), is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of a failure (not one line).")] = False,
) -> None:
    """Audit speaker-verification benchmark results (InterBias-SV).

    Exit codes: 0 pass, 1 fail or unauthenticated, 2 usage error or unreadable input (one line on stderr).
    """
    debug_callback(debug)


for command in (verify.verify, scores.scores, seeds.seeds, keygen.keygen):
    app.command()(command)
app.command("verify-attestation")(attest.verify_attestation)
