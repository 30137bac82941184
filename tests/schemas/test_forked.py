"""schemas.forked: work run in a forked process gives what the call gives in process, and what goes wrong there is
raised here; work started before its arguments (``Forked.awaiting``) runs its preparation beside the caller and the
work once given them."""

from __future__ import annotations

import gc
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from schemas import Forked


class _Unpicklable(Exception):
    def __init__(self) -> None:
        super().__init__("holds a lock")
        self.lock = threading.Lock()


def _raise_unpicklable() -> None:
    raise _Unpicklable


def _collector_state() -> tuple[bool, int]:
    return gc.isenabled(), gc.get_freeze_count()


def test_a_fork_collects_its_own_cycles_whatever_its_parent_paused() -> None:
    """The audit pauses the collector in its process; a fork enables it, its inherited objects frozen first (so
    its collections never scan the parent's heap), and the parent's own state is left as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        objects = [[] for _ in range(1000)]  # young objects of the parent, not frozen here
        with Forked(_collector_state) as forked:
            collecting, frozen = forked.result()
        assert collecting and frozen >= gc.get_freeze_count() + len(objects)
        assert not gc.isenabled()
    finally:
        if enabled:
            gc.enable()


def test_the_value_and_the_exception_come_back() -> None:
    with Forked(np.add, np.arange(3), 1) as forked:
        assert forked.result().tolist() == [1, 2, 3]
    with Forked(int, "x") as forked, pytest.raises(ValueError, match="invalid literal") as raised:
        forked.result()
    assert any("raised in a forked process" in note for note in raised.value.__notes__)
    with Forked(_raise_unpicklable) as forked, pytest.raises(RuntimeError, match="holds a lock"):
        forked.result()


def test_a_process_that_dies_is_an_error_not_a_hang() -> None:
    with Forked(os._exit, 3) as forked, pytest.raises(RuntimeError, match="exit 3"):
        forked.result()


def _mark_prepared(folder: Path) -> None:
    (folder / f"prepared-{os.getpid()}").write_text("")


def _prepared_where(folder: Path, value: int) -> tuple[list[str], int, int]:
    return sorted(path.name for path in folder.iterdir()), os.getpid(), value * 2


@pytest.mark.parametrize("fork", [True, False])
def test_work_awaiting_its_arguments_prepares_first_then_runs_once_given_them(tmp_path: Path, fork: bool) -> None:
    with Forked.awaiting(_prepared_where, lambda: _mark_prepared(tmp_path), fork=fork) as forked:
        forked.give(tmp_path, 21)
        marks, pid, value = forked.result()
    assert value == 42
    assert marks == [f"prepared-{pid}"]  # prepared in the process that ran the work, before it ran
    assert (pid != os.getpid()) is fork


def test_work_awaiting_its_arguments_raises_here_and_ends_when_never_given_them(tmp_path: Path) -> None:
    with Forked.awaiting(int, lambda: None) as forked, pytest.raises(ValueError, match="invalid literal"):
        forked.give("x")
        forked.result()
    with Forked.awaiting(int, lambda: 1 / 0) as forked, pytest.raises(ZeroDivisionError):
        forked.give("1")
        forked.result()
    forked = Forked.awaiting(int, lambda: None)  # an audit that fails before the figures' data exists
    process = forked._process
    forked.close()
    forked.close()  # twice, as the command line and audit_results both may
    assert not process.is_alive()


def _pids_forked_again(value: int) -> tuple[int, int, int]:
    with Forked(os.getpid) as inner:
        return os.getpid(), inner.result(), value


def test_forked_work_may_fork_in_turn() -> None:
    """A drawer splits its figures with a fork of itself: the inner work runs in a third process."""
    with Forked(_pids_forked_again, 7) as forked:
        outer, inner, value = forked.result()
    assert value == 7 and len({outer, inner, os.getpid()}) == 3


def _forked_in_a_pool_worker(_: int) -> tuple[int, int]:
    with Forked(os.getpid) as forked:
        return os.getpid(), forked.result()


def test_in_a_daemonic_pool_worker_the_work_runs_in_line() -> None:
    """A multiprocessing pool's workers are daemonic and may not have children: Forked runs the work in the worker
    (a bundle parsed there parses all its score files in one process) instead of failing to start."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        worker, ran_in = pool.map(_forked_in_a_pool_worker, [0])[0]
    assert worker == ran_in != os.getpid()
