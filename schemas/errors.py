"""The toolkit's errors, under one root, and the documented exit codes.

Exit codes (in-toto style): 0 the audit passed, 1 an error-severity finding or a run that could not finish, 2 a
usage error or unreadable input. Every error the toolkit raises on purpose derives from :class:`Error`, which
knows its one line and its exit code; each command line catches it once (``audit._cli.plumbing``). An
``InputError`` is printed as one line (file, row, column, what was expected) and exits 2, never a traceback.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["EXIT_FINDING", "EXIT_INPUT", "EXIT_PASS", "Error", "InputError", "RunError"]

EXIT_PASS = 0
EXIT_FINDING = 1
EXIT_INPUT = 2


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
        return f"{', '.join(where)}: {self.problem}"


class RunError(Error):
    """A run that cannot finish (operator failures under the fail-run policy, a cluster that lost work): exit 1."""

    def line(self) -> str:
        return f"run failed: {self}"


def _rebuild_input_error(
    kind: type[InputError], source: str, problem: str, row: int | None, column: str | None
) -> InputError:
    error = InputError.__new__(kind)
    InputError.__init__(error, source, problem, row=row, column=column)
    return error
