"""Stage lines: counts and elapsed times from the clock, nothing at all when disabled."""

from __future__ import annotations

import io

from runner.stages import StageLog


def test_each_stage_prints_its_counts_and_times() -> None:
    ticks = iter([10.0, 12.5, 20.0])
    stream = io.StringIO()
    log = StageLog(2, True, stream, clock=lambda: next(ticks))
    log.done("plan", "3 records")
    log.done("embeddings", "7 computed, 2 from cache")
    assert stream.getvalue().splitlines() == [
        "stage 1/2 plan: 3 records (2.5 s; 2.5 s in all)",
        "stage 2/2 embeddings: 7 computed, 2 from cache (7.5 s; 10.0 s in all)",
    ]


def test_disabled_prints_nothing() -> None:
    stream = io.StringIO()
    StageLog(1, False, stream).done("plan", "3 records")
    assert stream.getvalue() == ""


def test_each_stage_keeps_its_wall_and_cpu_seconds() -> None:
    ticks, cpu = iter([10.0, 12.5, 20.0]), iter([1.0, 2.0, 2.25])
    log = StageLog(2, False, io.StringIO(), clock=lambda: next(ticks), cpu_clock=lambda: next(cpu))
    log.done("plan", "3 records")
    log.done("embeddings", "7 computed")
    assert log.seconds == {"plan": {"wall_s": 2.5, "cpu_s": 1.0}, "embeddings": {"wall_s": 7.5, "cpu_s": 0.25}}
