"""Work run in a forked process while the caller goes on; its value, or the exception it raised, comes back once.

An audit is mostly one core's work: the statistics' compiled loops gain nothing from a second core here. Parts
that do not feed the rest (the report's figures, the statistics of the subgroup settings) run beside it in a
fork of the process, which inherits their inputs without copying them. Linux only (fork is unsafe with macOS
frameworks and absent on Windows; numba's workqueue layer is fork-safe): elsewhere the work runs in the caller
when its value is asked for. The value is the one the call gives in process (tested).
"""

from __future__ import annotations

import multiprocessing
import sys
import traceback
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Forked(Generic[T]):
    """``function(*args)`` started in a forked process; ``result`` waits for its value (or raises its exception,
    the forked traceback added as a note); ``close`` ends a process whose value is not collected. ``fork=False``
    (nothing worth a process) runs the call in line when its value is asked for, as outside Linux."""

    def __init__(self, function: Callable[..., T], *args: Any, fork: bool = True) -> None:
        self._function, self._args = function, args
        self._process: Any = None
        if fork and sys.platform == "linux":
            context = multiprocessing.get_context("fork")
            self._receive, send = context.Pipe(duplex=False)
            self._process = context.Process(target=_run, args=(function, args, send), daemon=True)
            self._process.start()
            send.close()

    def result(self) -> T:
        if self._process is None:
            return self._function(*self._args)
        try:
            outcome, payload, trace = self._receive.recv()
        except EOFError:
            self._process.join()
            name = getattr(self._function, "__qualname__", "work")
            raise RuntimeError(f"the forked {name} ended without a result (exit {self._process.exitcode})") from None
        self._process.join()
        if outcome == "raised":
            payload.add_note(f"raised in a forked process:\n{trace}")
            raise payload
        value: T = payload
        return value

    def close(self) -> None:
        if self._process is None:
            return
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._receive.close()

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _run(function: Callable[..., Any], args: tuple[Any, ...], send: Any) -> None:
    """The forked process: the value, or the exception (a RuntimeError of its text when it cannot be sent)."""
    try:
        send.send(("returned", function(*args), ""))
    except BaseException as error:  # sent to the caller, which raises it there
        trace = "".join(traceback.format_exception(error))
        try:
            send.send(("raised", error, trace))
        except Exception:  # an exception that does not pickle
            send.send(("raised", RuntimeError(trace), trace))
    finally:
        send.close()
