"""One line per stage of a run, with its counts and elapsed time, for a log that is not a terminal.

A terminal gets the progress bar; a redirected stdout (a CI log, ``nohup``) would otherwise stay silent for the
whole embedding stage. Each line says what finished, what it counted and how long it and the run so far took:
``stage 3/6 embeddings: 1200 computed, 40 from cache (612.4 s; 640.2 s in all)``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class StageLog:
    """Prints a line as each of ``n_stages`` stages finishes, when ``enabled`` (no output otherwise)."""

    def __init__(
        self,
        n_stages: int,
        enabled: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.n_stages = n_stages
        self.enabled = enabled
        self.stream = stream
        self.clock = clock
        self.started = self.last = clock()
        self.done_stages = 0

    @classmethod
    def for_log(cls, n_stages: int, wanted: bool) -> StageLog:
        """Enabled when ``wanted`` and stdout is not a terminal (a terminal has the progress bar)."""
        return cls(n_stages, wanted and not sys.stdout.isatty())

    def done(self, stage: str, counts: str) -> None:
        """Mark ``stage`` finished with ``counts`` (plain words: ``12 records, 3 trial lists``)."""
        now = self.clock()
        self.done_stages += 1
        if self.enabled:
            line = (
                f"stage {self.done_stages}/{self.n_stages} {stage}: {counts} "
                f"({now - self.last:.1f} s; {now - self.started:.1f} s in all)"
            )
            print(line, file=self.stream or sys.stdout, flush=True)
        self.last = now
