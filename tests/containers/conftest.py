"""Fixtures of the container tests: the stand-in engine (engine_standin.py; not Docker)."""

from __future__ import annotations

import shutil
import socketserver
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.containers.engine_standin import EngineStandIn, handler_for


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[EngineStandIn]:
    """A running stand-in engine on a fresh unix socket (a short path: socket paths are limited)."""
    folder = Path(tempfile.mkdtemp(prefix="engine-"))
    monkeypatch.setenv("DOCKER_CONFIG", str(folder / "docker-config"))  # no real client configuration is read
    state = EngineStandIn(socket_path=folder / "docker.sock")
    server = socketserver.ThreadingUnixStreamServer(str(state.socket_path), handler_for(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(folder, ignore_errors=True)
