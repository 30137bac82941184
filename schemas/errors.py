"""The toolkit's errors, under one root, and the documented exit codes.

Exit codes (in-toto style): 0 the audit passed, 1 an error-severity finding or a run that could not finish, 2 a
usage error or unreadable input. Every error the toolkit raises on purpose derives from :class:`Error`, which
knows its one line and its exit code; each command line catches it once and prints
:func:`failure_line` (``schemas.command_line``). An
``InputError`` is printed as one line (file, row, column, what was expected) and exits 2, never a traceback.
"""

from __future__ import annotations

import errno
from typing import Any, ClassVar

__all__ = ["EXIT_FINDING", "EXIT_INPUT", "EXIT_PASS", "Error", "InputError", "RunError", "failure_line"]

EXIT_PASS = 0
EXIT_FINDING = 1
EXIT_INPUT = 2

# Every character ``str.splitlines`` breaks on, written as its escape: a file name or a header cell quoted in the
# line cannot split it.
_LINE_BREAKS = {ord(char): repr(char)[1:-1] for char in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


class Error(Exception):
    """The root of the toolkit's errors: what went wrong as one line, and the exit code it stands for."""

    exit_code: ClassVar[int] = EXIT_FINDING

    def line(self) -> str:
        """The one line a command line prints for this error."""
        return str(self)


class InputError(Error):
    """Input that cannot be read or used at all: exit 2 with one clear line."""

    exit_code = EXIT_INPUT

    def __init__(self, source: str, problem: str, *, row: int | None = None, column: str | None = None) -> None:
        self.source = source
        self.problem = problem
        self.row = row
        self.column = column
        super().__init__(self.line())

    def __reduce__(self) -> tuple[Any, ...]:
        """Picklable (it crosses process boundaries from worker pools) with its row and column."""
        return (_rebuild_input_error, (type(self), self.source, self.problem, self.row, self.column))

    def line(self) -> str:
        where = [self.source]
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        return f"{', '.join(where)}: {self.problem}".translate(_LINE_BREAKS)


class RunError(Error):
    """A run that cannot finish (operator failures under the fail-run policy, a cluster that lost work): exit 1."""

    def line(self) -> str:
        return f"run failed: {self}"


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


def _rebuild_input_error(
    kind: type[InputError], source: str, problem: str, row: int | None, column: str | None
) -> InputError:
    error = InputError.__new__(kind)
    InputError.__init__(error, source, problem, row=row, column=column)
    return error
