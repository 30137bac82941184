"""``audit keygen``: an ed25519 key pair for signing run bundles."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from schemas import one_line_errors

__all__ = ["keygen"]


@one_line_errors()
def keygen(
    private: Annotated[Path, typer.Argument(help="private key file to write (mode 0600; never inside a bundle)")],
    public: Annotated[Path, typer.Argument(help="public key file to write (PEM), for reviewers")],
) -> None:
    """Write an ed25519 key pair for signing run bundles, and print its key id.

    Exit codes: 0 written, 2 usage error or a path that cannot be written (one line on stderr).
    """
    from provenance import generate_keypair

    key_id = generate_keypair(private, public)
    typer.echo(f"key id {key_id}: private {private}, public {public}")
