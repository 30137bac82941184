"""The plumbing both command lines share (``audit`` and ``interbias``): every failure as one stderr line and its
exit code (``schemas.errors.failure_line``), ``--debug`` for the traceback instead, ``--version``, and notes on work
that takes a while."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import typer

from schemas.errors import failure_line
from schemas.toolkit import tool_version

__all__ = ["Hook", "announce", "debug_callback", "one_line_errors", "version_callback"]

F = TypeVar("F", bound=Callable[..., Any])
# A command line's own reading of a failure (e.g. a missing extra), or None to leave it to failure_line.
Hook = Callable[[BaseException], "tuple[str, int] | None"]
_debug = {"traceback": False}


def announce(line: str) -> None:
    """A note on work that takes a while, on stderr (stdout stays the result, ``--json`` included)."""
    typer.echo(f"audit: {line}", err=True)


def debug_callback(value: bool) -> None:
    """``--debug``: show the traceback of a failure instead of its one line."""
    _debug["traceback"] = value


def version_callback(program: str) -> Callable[[bool], None]:
    """``--version``: print ``program (interbias-sv) VERSION`` and exit."""

    def show(value: bool) -> None:
        if value:
            typer.echo(f"{program} (interbias-sv) {tool_version()}")
            raise typer.Exit()

    return show


def one_line_errors(*, input_prefix: str = "", hook: Hook | None = None) -> Callable[[F], F]:
    """A decorator that turns every failure of a command into one stderr line and its exit code."""

    def decorate(command: F) -> F:
        @wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except (typer.Exit, typer.Abort):
                raise
            except (Exception, KeyboardInterrupt) as error:
                if _debug["traceback"]:
                    raise
                line, code = (hook(error) if hook else None) or failure_line(error, input_prefix=input_prefix)
                typer.echo(" ".join(line.split()), err=True)
                raise typer.Exit(code) from None

        return wrapper  # type: ignore[return-value]

    return decorate
