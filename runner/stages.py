"""One line per stage of a run, with its counts and elapsed time, for a log that is not a terminal; and the wall and
CPU seconds of each stage, for the bundle's ``timings.json``.

A terminal gets the progress bar; a redirected stdout (a CI log, ``nohup``) would otherwise stay silent for the
whole embedding stage. Each line says what finished, what it counted and how long it and the run so far took:
``stage 3/6 embeddings: 1200 computed, 40 from cache (612.4 s; 640.2 s in all)``.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from typing import TextIO


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its child processes that have ended (the operator
    workers, once their pool is shut down)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class StageLog:
    """Prints a line as each of ``n_stages`` stages finishes, when ``enabled`` (no output otherwise), and keeps
    each stage's wall and CPU seconds in ``seconds`` either way."""

    def __init__(
        self,
        n_stages: int,
        enabled: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.perf_counter,
        cpu_clock: Callable[[], float] = cpu_seconds,
    ) -> None:
        self.n_stages = n_stages
        self.enabled = enabled
        self.stream = stream
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.started = self.last = clock()
        self.last_cpu = cpu_clock()
        self.done_stages = 0
        self.seconds: dict[str, dict[str, float]] = {}

    @classmethod
    def for_log(cls, n_stages: int, wanted: bool) -> StageLog:
        """Enabled when ``wanted`` and stdout is not a terminal (a terminal has the progress bar)."""
        return cls(n_stages, wanted and not sys.stdout.isatty())

    def done(self, stage: str, counts: str) -> None:
        """Mark ``stage`` finished with ``counts`` (plain words: ``12 records, 3 trial lists``)."""
        now, cpu = self.clock(), self.cpu_clock()
        self.seconds[stage] = {"wall_s": round(now - self.last, 3), "cpu_s": round(cpu - self.last_cpu, 3)}
        self.last_cpu = cpu
        self.done_stages += 1
        if self.enabled:
            line = (
                f"stage {self.done_stages}/{self.n_stages} {stage}: {counts} "
                f"({now - self.last:.1f} s; {now - self.started:.1f} s in all)"
            )
            print(line, file=self.stream or sys.stdout, flush=True)
        self.last = now
