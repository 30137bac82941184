"""The output of an ``interbias`` command split as the CLI promises: stdout holds only the result (with ``--json``,
one JSON document), stderr the progress lines (each starts with ``stage ``) and, last, a failure's one line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

STAGE_END = re.compile(r"^(stage \d+/\d+ [^:]+): .* \(\d+\.\d s; \d+\.\d s in all\)$")
STAGE_PART = re.compile(r"^(stage \d+/\d+ [^:]+): (\d+)/(\d+) (.+) \(\d+\.\d s(?:; about \d+ s left)?\)$")
STAGE_NOTE = re.compile(r"^(stage \d+/\d+ [^:]+): (?:\.\.\. .+ \.\.\.|.+ in \d+\.\d s)$")


@dataclass(frozen=True)
class CliOutput:
    result: Any  # stdout parsed as JSON; None when stdout was not asked to be JSON
    progress: list[str]  # stderr's progress lines, in order
    other: list[str]  # stderr's other lines (a failure: exactly one, the last line of stderr)

    def finished(self) -> list[str]:
        """``stage N/M NAME`` of each stage that said it finished, in order."""
        return [match.group(1) for line in self.progress if (match := STAGE_END.match(line))]

    def parts(self, stage: str, what: str) -> list[tuple[int, int]]:
        """(done, total) of each line through ``stage`` (``stage N/M NAME``) about ``what``, in order."""
        found = [STAGE_PART.match(line) for line in self.progress]
        return [
            (int(match.group(2)), int(match.group(3)))
            for match in found
            if match and match.group(1) == stage and match.group(4) == what
        ]


def split_output(stdout: str, stderr: str, *, json_stdout: bool = False) -> CliOutput:
    """Split a command's streams; with ``json_stdout`` the whole of stdout must parse as one JSON document."""
    lines = stderr.strip().splitlines()
    progress = [line for line in lines if line.startswith("stage ")]
    other = [line for line in lines if not line.startswith("stage ")]
    if len(other) == 1:
        assert lines[-1] == other[0], f"the failure is not the last line of stderr:\n{stderr}"
    for line in progress:
        assert STAGE_END.match(line) or STAGE_PART.match(line) or STAGE_NOTE.match(line), f"not a progress line: {line}"
    return CliOutput(json.loads(stdout) if json_stdout else None, progress, other)
