"""Progress of a run: one line per stage, and lines through a long stage, on stderr; and the wall and CPU seconds
of each stage, for the bundle's ``timings.json``.

A terminal gets each stage's line ticked off as it ends (``\u2713 stage 2/6 encoders: ...``) and, through a long
stage, progress bars with the time so far and an estimate of the time left; a redirected stderr (a CI log,
``nohup``, a cluster job's log) would otherwise stay
silent for the whole embedding stage. Each stage line says what finished, what it counted and how long it and the
run so far took: ``stage 4/6 embeddings: 1200 computed, 40 from cache (612.4 s; 640.2 s in all)``; a long stage
also says how far it is after its first step and each time another tenth of a part of it is done, with an estimate
of the time left: ``stage 4/6 embeddings: 120/1200 sides embedded (61.0 s; about 549 s left)``, and what it is
doing while nothing can be counted yet (``... loading encoder ecapa-tdnn ...``, then ``encoder ecapa-tdnn loaded in
5.9 s``). Everything goes to stderr, so that stdout holds only the result (the ``--json`` summary) and a failure is
the last line; every line starts with ``stage ``.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

TENTHS = 10  # lines through a part of a stage: one each time another tenth is done


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its child processes that have ended (the operator
    workers, once their pool is shut down)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class StageLog:
    """Prints a line as each of ``n_stages`` stages finishes, when ``enabled`` (no output otherwise; ``terminal``:
    the parts of a stage are bars instead), and keeps each stage's wall and CPU seconds in ``seconds`` either way."""

    def __init__(
        self,
        n_stages: int,
        enabled: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.perf_counter,
        terminal: bool = False,
        cpu_clock: Callable[[], float] = cpu_seconds,
    ) -> None:
        self.n_stages = n_stages
        self.enabled = enabled
        self.stream = stream
        self.clock = clock
        self.terminal = terminal
        self.cpu_clock = cpu_clock
        self.started = self.last = clock()
        self.last_cpu = cpu_clock()
        self.done_stages = 0
        self.seconds: dict[str, dict[str, float]] = {}

    @classmethod
    def for_run(cls, n_stages: int, wanted: bool) -> StageLog:
        """Lines when ``wanted`` and stderr is not a terminal; bars when it is one."""
        terminal = sys.stderr.isatty()
        return cls(n_stages, wanted and not terminal, terminal=wanted and terminal)

    def write(self, stage: str, text: str, mark: str = "") -> None:
        """One line about ``stage``, the next one to finish; on a terminal above its bars, ``mark`` first."""
        line = f"stage {self.done_stages + 1}/{self.n_stages} {stage}: {text}"
        if self.terminal:
            from tqdm import tqdm

            tqdm.write(f"{mark}{line}", file=self.stream or sys.stderr)
        else:
            print(line, file=self.stream or sys.stderr, flush=True)

    def done(self, stage: str, counts: str) -> None:
        """Mark ``stage`` finished with ``counts`` (plain words: ``12 records, 3 trial lists``)."""
        now, cpu = self.clock(), self.cpu_clock()
        self.seconds[stage] = {"wall_s": round(now - self.last, 3), "cpu_s": round(cpu - self.last_cpu, 3)}
        self.last_cpu = cpu
        if self.enabled or self.terminal:  # on a terminal too: each stage ticked off as it ends, with its time
            self.write(stage, f"{counts} ({now - self.last:.1f} s; {now - self.started:.1f} s in all)", "\u2713 ")
        self.done_stages += 1
        self.last = now

    def note(self, stage: str, text: str) -> None:
        """What ``stage`` (the next one to finish) is doing: a line, or a message above the bars on a terminal."""
        if self.enabled or self.terminal:
            self.write(stage, text)

    def part(self, stage: str, what: str, total: int, position: int = 0) -> StagePart:
        """A counter of ``total`` items through ``stage`` (the next one to finish), ``what`` naming them."""
        return StagePart(self, stage, what, total, position)


class StagePart:
    """How far a part of a stage is: a bar on a terminal, else a line after the first step and each time another
    tenth is done (so always one when it is complete), with the time left at the rate so far; ``seconds`` is its
    time from creation to completion."""

    def __init__(self, log: StageLog, stage: str, what: str, total: int, position: int) -> None:
        self.log, self.stage, self.what, self.total = log, stage, what, total
        self.count = self.tenths = 0
        self.started = log.clock()
        self.seconds: float | None = None
        self.bar: Any = None
        if log.terminal and total:
            from tqdm import tqdm

            bar_format = (
                "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed} so far, about {remaining} left]"
            )
            self.bar = tqdm(
                total=total, desc=f"{stage}: {what}", file=log.stream or sys.stderr, leave=False, position=position,
                bar_format=bar_format,
            )  # fmt: skip

    def advance(self, count: int) -> None:
        if count == 0:
            return
        self.count += count
        now = self.log.clock()
        if self.count >= self.total:
            self.seconds = now - self.started
        if self.bar is not None:
            self.bar.update(count)
            return
        tenths = self.count * TENTHS // self.total
        first = self.count == count
        if self.log.enabled and (tenths > self.tenths or first):
            elapsed = now - self.started
            left = (
                ""
                if self.count >= self.total
                else f"; about {elapsed / self.count * (self.total - self.count):.0f} s left"
            )
            self.log.write(self.stage, f"{self.count}/{self.total} {self.what} ({elapsed:.1f} s{left})")
        self.tenths = tenths

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> StagePart:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
