"""Named errors and the documented exit codes.

Exit codes (in-toto style): 0 the audit passed, 1 an error-severity finding, 2 a usage error or unreadable input.
An ``InputError`` is printed as one line (file, row, column, what was expected) and exits 2, never a traceback.
"""

from __future__ import annotations

from typing import Any

EXIT_PASS = 0
EXIT_FINDING = 1
EXIT_INPUT = 2


class InputError(Exception):
    """Input that cannot be read or used at all: exit 2 with one clear line."""

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


def _rebuild_input_error(
    kind: type[InputError], source: str, problem: str, row: int | None, column: str | None
) -> InputError:
    error = InputError.__new__(kind)
    InputError.__init__(error, source, problem, row=row, column=column)
    return error
