"""Stage lines: counts and elapsed times from the clock, nothing at all when disabled."""

from __future__ import annotations

import io
import re

import pytest

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


def test_a_part_says_how_far_it_is_at_each_tenth_and_when_complete() -> None:
    # 100 items in steps of 15, 4, 11, 0, 70: tenths 1, 1 (19: no new tenth, no line), 3, -, 10; one line after the
    # first step and at each new tenth, with the time since the part began (the clock reads 2.0 when it begins) and
    # the time left at the rate so far (15 in 1 s: 85 left take about 6 s; 30 in 3 s: 70 take 7 s).
    ticks = iter([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 9.5])
    stream = io.StringIO()
    log = StageLog(6, True, stream, clock=lambda: next(ticks))
    log.done("corpora", "1 corpus")
    with log.part("embeddings", "sides embedded", 100) as part:
        for step in (15, 4, 11, 0, 70):
            part.advance(step)
    assert part.seconds == 9.5 - 2.0
    assert stream.getvalue().splitlines()[1:] == [
        "stage 2/6 embeddings: 15/100 sides embedded (1.0 s; about 6 s left)",
        "stage 2/6 embeddings: 30/100 sides embedded (3.0 s; about 7 s left)",
        "stage 2/6 embeddings: 100/100 sides embedded (7.5 s)",
    ]


def test_the_first_step_gets_a_line_before_its_tenth_and_notes_say_what_is_happening() -> None:
    ticks = iter([0.0, 4.0, 5.0])
    stream = io.StringIO()
    log = StageLog(1, True, stream, clock=lambda: next(ticks))
    log.note("embeddings", "... loading encoder ecapa-tdnn (speechbrain) ...")
    with log.part("embeddings", "sides embedded", 1000) as part:
        part.advance(32)
    assert stream.getvalue().splitlines() == [
        "stage 1/1 embeddings: ... loading encoder ecapa-tdnn (speechbrain) ...",
        "stage 1/1 embeddings: 32/1000 sides embedded (1.0 s; about 30 s left)",
    ]


def test_lines_go_to_stderr_and_a_terminal_gets_bars_and_ticked_stage_lines(capsys: pytest.CaptureFixture[str]) -> None:
    log = StageLog(1, True)
    log.part("embeddings", "sides embedded", 2).advance(2)
    log.done("embeddings", "2 computed")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.splitlines()[0] == "stage 1/1 embeddings: 2/2 sides embedded (0.0 s)"
    stream = io.StringIO()
    terminal = StageLog(1, False, stream, terminal=True)
    with terminal.part("embeddings", "sides embedded", 2) as part:
        part.advance(1)
        part.bar.refresh()  # tqdm redraws at most every 0.1 s
        assert "embeddings: sides embedded:  50%|" in stream.getvalue() and " so far, about " in stream.getvalue()
        part.advance(1)
    terminal.done("embeddings", "2 computed")
    assert part.bar is not None and part.bar.n == 2
    # each stage ticked off on its own line as it ends, with its time and the run's
    last = stream.getvalue().splitlines()[-1]
    assert re.fullmatch(r"\u2713 stage 1/1 embeddings: 2 computed \(\d+\.\d s; \d+\.\d s in all\)", last), last


def test_each_stage_keeps_its_wall_and_cpu_seconds() -> None:
    ticks, cpu = iter([10.0, 12.5, 20.0]), iter([1.0, 2.0, 2.25])
    log = StageLog(2, False, io.StringIO(), clock=lambda: next(ticks), cpu_clock=lambda: next(cpu))
    log.done("plan", "3 records")
    log.done("embeddings", "7 computed")
    assert log.seconds == {"plan": {"wall_s": 2.5, "cpu_s": 1.0}, "embeddings": {"wall_s": 7.5, "cpu_s": 0.25}}
