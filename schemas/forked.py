"""Work run in a forked process while the caller goes on; its value, or the exception it raised, comes back once.

An audit is mostly one core's work: the statistics' compiled loops gain nothing from a second core here. Parts
that do not feed the rest (the report's figures, the statistics of the subgroup settings) run beside it in a
fork of the process, which inherits their inputs without copying them. Work whose inputs come later can start
before them (``Forked.awaiting``): a table audit's figure drawer imports matplotlib while the caller imports
pandas, then is given the figures' data (pickled through a pipe). Linux only (fork is unsafe with macOS
frameworks and absent on Windows; numba's workqueue layer is fork-safe): elsewhere the work runs in the caller
when its value is asked for. The value is the one the call gives in process (tested).
"""

from __future__ import annotations

import gc
import multiprocessing
import sys
import traceback
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Forked"]

T = TypeVar("T")


class Forked(Generic[T]):
    """``function(*args)`` started in a forked process; ``result`` waits for its value (or raises its exception,
    the forked traceback added as a note); ``close`` ends a process whose value is not collected. ``fork=False``
    (nothing worth a process) runs the call in line when its value is asked for, as outside Linux."""

    def __init__(self, function: Callable[..., T], *args: Any, fork: bool = True) -> None:
        self._start(function, args, fork, None)

    @classmethod
    def awaiting(cls, function: Callable[..., T], prepare: Callable[[], object], fork: bool = True) -> Forked[T]:
        """``function`` started now in a forked process that runs ``prepare()`` (imports, say) and then waits for its
        arguments, which ``give`` sends once; in line (``fork=False``, or outside Linux) ``prepare`` runs when the
        value is asked for. A process never given its arguments is ended by ``close``."""
        forked: Forked[T] = cls.__new__(cls)
        forked._start(function, (), fork, prepare)
        return forked

    def _start(
        self, function: Callable[..., T], args: tuple[Any, ...], fork: bool, prepare: Callable[[], object] | None
    ) -> None:
        self._function, self._args, self._prepare = function, args, prepare
        self._process: Any = None
        self._give: Any = None
        # A daemonic process (a pool's worker) may not have children: the work runs in line there.
        if fork and sys.platform == "linux" and not multiprocessing.current_process().daemon:
            context = multiprocessing.get_context("fork")
            self._receive, send = context.Pipe(duplex=False)
            given = None
            if prepare is not None:
                given, self._give = context.Pipe(duplex=False)
            self._process = context.Process(target=_run, args=(function, args, send, prepare, given), daemon=True)
            self._process.start()
            send.close()
            if given is not None:
                given.close()

    def give(self, *args: Any) -> None:
        """The arguments of work started by ``awaiting``, sent to its process (pickled) or kept for the call in line."""
        if self._give is None:
            self._args = args
            return
        self._give.send(args)
        self._give.close()

    def result(self) -> T:
        if self._process is None:
            if self._prepare is not None:
                self._prepare()
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
        if self._give is not None and not self._give.closed:
            self._give.close()

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _run(
    function: Callable[..., Any],
    args: tuple[Any, ...],
    send: Any,
    prepare: Callable[[], object] | None = None,
    given: Any = None,
) -> None:
    """The forked process: ``prepare()`` and the arguments ``given`` awaited where the work was started before them,
    then the value, or the exception (a RuntimeError of its text when it cannot be sent). Daemonic to its caller
    (ended at its exit), it may itself fork (a figure drawer splitting its figures): multiprocessing refuses a
    child to a process that counts itself daemonic, so it does not."""
    multiprocessing.current_process().daemon = False
    # A fork collects its own cycles (a figure's, say), whatever its parent paused; what it inherits is frozen first,
    # so no collection here scans (and copies the pages of) the parent's objects.
    gc.freeze()
    gc.enable()
    try:
        if prepare is not None:
            prepare()
            args = given.recv()
        send.send(("returned", function(*args), ""))
    except BaseException as error:  # sent to the caller, which raises it there
        trace = "".join(traceback.format_exception(error))
        try:
            send.send(("raised", error, trace))
        except Exception:  # an exception that does not pickle
            send.send(("raised", RuntimeError(trace), trace))
    finally:
        send.close()
