"""The plumbing both command lines share (``audit`` and ``interbias``): one stderr line and an exit code for every
failure, ``--debug`` for the traceback instead, ``--version``.

A failure the toolkit raises on purpose is a :class:`schemas.errors.Error` and prints its own ``line()`` with its
``exit_code``; a file-system error prints what failed and how to go on (exit 1); anything else is an internal
error, named, with the hint to rerun with ``--debug``.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import typer

from schemas.errors import EXIT_FINDING, EXIT_INPUT, Error

__all__ = ["Hook", "announce", "debug_callback", "failure_line", "one_line_errors", "version_callback"]

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
            from audit.result import tool_version

            typer.echo(f"{program} (interbias-sv) {tool_version()}")
            raise typer.Exit()

    return show


def failure_line(error: BaseException, *, input_prefix: str = "") -> tuple[str, int]:
    """The one stderr line and exit code of a failure (``input_prefix`` before an input error's line)."""
    if isinstance(error, Error):
        prefix = input_prefix if error.exit_code == EXIT_INPUT else ""
        return f"{prefix}{error.line()}", error.exit_code
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        what = error.strerror or str(error)
        if error.errno == errno.ENOSPC:
            hint = "free some space and rerun the same command (it resumes where it stopped)"
        elif error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            hint = "make the folder writable or choose another (--out, --cache)"
        else:
            hint = "fix the file system problem and rerun the same command (it resumes where it stopped)"
        return f"run failed: {where}{what}; {hint}", EXIT_FINDING
    if isinstance(error, KeyboardInterrupt):
        return "interrupted: rerun the same command to resume", EXIT_FINDING
    name = type(error).__name__
    return f"run failed: internal error {name}: {error} (rerun with --debug for the traceback)", EXIT_FINDING


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
