"""A STAND-IN for the Docker Engine API, for testing the launcher where no Docker engine runs.

It is not Docker: it builds nothing and runs nothing. It is a stdlib HTTP server on a unix socket in a
temporary folder that answers the few endpoints ``runner.container`` calls (ping, version, build, image
inspect, container create / inspect / start / logs / wait / remove) in the engine's wire formats (chunked
JSON progress for builds, the 8-byte-header multiplexed stream for logs), and records every request so that
tests can check what the launcher asked for.
"""

from __future__ import annotations

import json
import re
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

IMAGE_ID = "sha256:" + "ab" * 32
CONTAINER_ID = "c0ffee" * 10 + "c0ff"
LOG_FRAMES = ((1, b"reproduce: step 1/2\n"), (2, b"reproduce: step 2/2 (stderr)\n"))
STREAM_WAIT_S = 5.0


@dataclass
class Recorded:
    """One request as the stand-in received it (the /vX.Y API prefix removed)."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class EngineStandIn:
    """Behaviour knobs and the record of one stand-in engine."""

    socket_path: Path
    exit_code: int = 0
    build_error: str | None = None
    start_error: str | None = None
    repo_digests: list[str] = field(default_factory=list)
    image_tags: list[str] = field(default_factory=lambda: ["interbias-sv:local"])
    requests: list[Recorded] = field(default_factory=list)
    first_log_chunk_received: threading.Event = field(default_factory=threading.Event)
    logs_streamed: bool | None = None

    @property
    def base_url(self) -> str:
        return f"unix://{self.socket_path}"

    def calls(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.requests]

    def one(self, method: str, pattern: str) -> Recorded:
        matches = [r for r in self.requests if r.method == method and re.fullmatch(pattern, r.path)]
        assert len(matches) == 1, f"{method} {pattern}: {len(matches)} requests in {self.calls()}"
        return matches[0]


def handler_for(engine: EngineStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # the stand-in is quiet
            pass

        def address_string(self) -> str:
            return "stand-in"

        def _reply(self, status: int, payload: Any = None, content_type: str = "application/json") -> None:
            body = b"" if payload is None else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _start_chunked(self, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _handle(self) -> None:
            url = urlsplit(self.path)
            path = re.sub(r"^/v\d+\.\d+", "", unquote(url.path))
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            engine.requests.append(Recorded(self.command, path, parse_qs(url.query), body))
            route = (self.command, path)
            container = f"/containers/{CONTAINER_ID}"
            if route == ("GET", "/_ping"):
                self._reply(200, b"OK", "text/plain")
            elif route == ("GET", "/version"):
                self._reply(200, {"ApiVersion": "1.45", "MinAPIVersion": "1.24", "Version": "stand-in"})
            elif route == ("POST", "/build"):
                self._build()
            elif self.command == "GET" and path.startswith("/images/") and path.endswith("/json"):
                name = path[len("/images/") : -len("/json")]
                if name in (IMAGE_ID, *engine.image_tags, *engine.repo_digests):
                    self._reply(
                        200,
                        {"Id": IMAGE_ID, "RepoTags": engine.image_tags, "RepoDigests": engine.repo_digests},
                    )
                else:
                    self._reply(404, {"message": f"No such image: {name}"})
            elif route == ("POST", "/containers/create"):
                self._reply(201, {"Id": CONTAINER_ID, "Warnings": []})
            elif route == ("GET", f"{container}/json"):
                self._reply(200, {"Id": CONTAINER_ID, "Name": "/stand-in", "Config": {"Tty": False}})
            elif route == ("POST", f"{container}/start"):
                if engine.start_error:
                    self._reply(500, {"message": engine.start_error})
                else:
                    self._reply(204)
            elif route == ("GET", f"{container}/logs"):
                self._logs()
            elif route == ("POST", f"{container}/wait"):
                self._reply(200, {"StatusCode": engine.exit_code, "Error": None})
            elif route == ("DELETE", container):
                self._reply(204)
            else:
                self._reply(404, {"message": f"stand-in: no route {self.command} {path}"})

        def _build(self) -> None:
            self._start_chunked("application/json")
            self._chunk(json.dumps({"stream": "Step 1/2 : FROM stand-in\n"}).encode() + b"\r\n")
            if engine.build_error:
                self._chunk(
                    json.dumps({"errorDetail": {"message": engine.build_error}, "error": engine.build_error}).encode()
                )
            else:
                self._chunk(json.dumps({"aux": {"ID": IMAGE_ID}}).encode() + b"\r\n")
                self._chunk(json.dumps({"stream": f"Successfully built {IMAGE_ID[7:19]}\n"}).encode())
            self._chunk(b"")

        def _logs(self) -> None:
            """Send the first frame, then wait until the client has it before the rest: a launcher that
            buffered the logs until the container ended would leave the event unset."""
            self._start_chunked("application/vnd.docker.multiplexed-stream")
            (stream, data), *rest = LOG_FRAMES
            self._chunk(struct.pack(">BxxxL", stream, len(data)) + data)
            engine.logs_streamed = engine.first_log_chunk_received.wait(STREAM_WAIT_S)
            for stream, data in rest:
                self._chunk(struct.pack(">BxxxL", stream, len(data)) + data)
            self._chunk(b"")

        do_GET = do_POST = do_DELETE = _handle

    return Handler
