"""The launcher against a local STAND-IN for the Docker Engine API (see conftest.py): no Docker engine runs
here, so these tests check what the launcher asks the engine for, not what a real engine would do with it."""

from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path

import pytest

from runner import container
from runner.container import (
    ContainerFailedError,
    EngineUnreachableError,
    ImageUnavailableError,
    SourceState,
    build_context,
    launch,
)
from schemas.errors import InputError
from tests.containers.engine_standin import CONTAINER_ID, IMAGE_ID, LOG_FRAMES, EngineStandIn

STATE = SourceState(revision="0123456789abcdef0123456789abcdef01234567", epoch=1_700_000_000)
REPO_FILES = {
    "pyproject.toml": "[project]\nname = 'x'\n",
    "README.md": "readme\n",
    "audit/__init__.py": "",
    "audit/__pycache__/__init__.cpython-311.pyc": "bytecode",
    "schemas/__init__.py": "",
    "provenance/__init__.py": "",
    "reports/__init__.py": "",
    "runner/__init__.py": "",
    "runner/stale.pyc": "bytecode",
    "configs/default.toml": "[run]\n",
    "containers/Dockerfile": "FROM scratch\n",
    "containers/entrypoint.sh": "#!/bin/sh\n",
    "notes/not-in-context.txt": "private\n",
}


def make_repo(root: Path) -> Path:
    for name, text in REPO_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "containers/entrypoint.sh").chmod(0o755)
    return root


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    repo = make_repo(tmp_path / "repo")
    for folder in ("corpora", "checkpoints"):
        (tmp_path / folder).mkdir()
    (tmp_path / "run.toml").write_text("[run]\n")
    (tmp_path / "signing.pem").write_text("key\n")
    return {
        "repo": repo,
        "config": tmp_path / "run.toml",
        "out": tmp_path / "bundle",
        "corpora": tmp_path / "corpora",
        "checkpoints": tmp_path / "checkpoints",
        "key": tmp_path / "signing.pem",
    }


class Sink:
    """Collects what the launcher writes; tells the stand-in once the first container log line has arrived."""

    def __init__(self, engine: EngineStandIn) -> None:
        self.engine = engine
        self.chunks: list[bytes] = []

    def __call__(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        if chunk == LOG_FRAMES[0][1]:
            self.engine.first_log_chunk_received.set()

    @property
    def text(self) -> str:
        return b"".join(self.chunks).decode()


def test_launch_builds_runs_with_gpus_and_mounts_and_streams_logs(
    engine: EngineStandIn, inputs: dict[str, Path]
) -> None:
    engine.exit_code = 3
    sink = Sink(engine)
    code = launch(
        inputs["config"],
        inputs["out"],
        inputs["corpora"],
        inputs["checkpoints"],
        key=inputs["key"],
        base_url=engine.base_url,
        root=inputs["repo"],
        state=STATE,
        write=sink,
    )

    assert code == 3  # the container's exit code, passed through
    assert engine.calls() == [
        ("GET", "/version"),
        ("GET", "/_ping"),
        ("POST", "/build"),
        ("GET", f"/images/{IMAGE_ID}/json"),
        ("POST", "/containers/create"),
        ("GET", f"/containers/{CONTAINER_ID}/json"),
        ("POST", f"/containers/{CONTAINER_ID}/start"),
        ("GET", f"/containers/{CONTAINER_ID}/logs"),
        ("GET", f"/containers/{CONTAINER_ID}/json"),  # the SDK checks for a TTY to read the log framing
        ("POST", f"/containers/{CONTAINER_ID}/wait"),
        ("DELETE", f"/containers/{CONTAINER_ID}"),
    ]

    build = engine.one("POST", "/build")
    assert build.query["dockerfile"] == ["containers/Dockerfile"]
    assert build.query["t"] == ["interbias-sv:local"]
    assert json.loads(build.query["buildargs"][0]) == {
        "SOURCE_DATE_EPOCH": "1700000000",
        "VCS_REF": STATE.revision,
    }
    with tarfile.open(fileobj=io.BytesIO(build.body)) as archive:
        members = {m.name: m for m in archive.getmembers()}
    expected = {n for n in REPO_FILES if not n.startswith("notes/") and not n.endswith(".pyc")}
    assert set(members) == expected
    assert members["containers/entrypoint.sh"].mode == 0o755
    assert {m.mtime for m in members.values()} == {STATE.epoch}

    create = engine.one("POST", "/containers/create").json()
    host = create["HostConfig"]
    assert host["DeviceRequests"] == [
        {"Driver": "", "Count": -1, "DeviceIDs": [], "Capabilities": [["gpu"]], "Options": {}}
    ]
    mounts = {m["Target"]: (m["Source"], m["Type"], m["ReadOnly"]) for m in host["Mounts"]}
    assert mounts == {
        "/data/config": (str(inputs["config"].resolve().parent), "bind", True),
        "/data/corpora": (str(inputs["corpora"].resolve()), "bind", True),
        "/data/checkpoints": (str(inputs["checkpoints"].resolve()), "bind", True),
        "/data/key/signing.pem": (str(inputs["key"].resolve()), "bind", True),
        "/data/out": (str(inputs["out"].resolve()), "bind", False),
    }
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert create["Image"] == IMAGE_ID
    assert create["Cmd"] == [
        "--config", "/data/config/run.toml",
        "--out", "/data/out",
        "--image-digest", IMAGE_ID,  # a local build has no repository digest: its content id is recorded
        "--device", "cuda",  # started with GPUs: the encoders run on CUDA or the run stops
        "--key", "/data/key/signing.pem",
    ]  # fmt: skip
    assert set(create["Env"]) == {
        "INTERBIAS_CACHE=/tmp/interbias-cache",
        "INTERBIAS_CORPORA=/data/corpora",
        "INTERBIAS_CHECKPOINTS=/data/checkpoints",
    }
    assert engine.one("GET", f"/containers/{CONTAINER_ID}/logs").query["follow"] == ["1"]
    assert engine.one("DELETE", f"/containers/{CONTAINER_ID}").query["force"] == ["True"]

    # Logs were streamed: the stand-in held back the second frame until the first had reached the sink.
    assert engine.logs_streamed is True
    log_chunks = [c for c in sink.chunks if c in {data for _, data in LOG_FRAMES}]
    assert log_chunks == [data for _, data in LOG_FRAMES]
    assert "Step 1/2 : FROM stand-in" in sink.text
    assert f"image: {IMAGE_ID}" in sink.text
    assert inputs["out"].is_dir()


def test_existing_image_from_a_registry_records_its_repository_digest(
    engine: EngineStandIn, inputs: dict[str, Path]
) -> None:
    pulled = "registry.example/interbias-sv@sha256:" + "cd" * 32
    engine.repo_digests = [pulled]
    sink = Sink(engine)
    code = launch(
        inputs["config"],
        inputs["out"],
        image=pulled,
        build=False,
        gpus=False,
        cache=inputs["out"].parent / "cache",
        dry_run=True,
        base_url=engine.base_url,
        root=inputs["repo"],
        write=sink,
    )
    assert code == 0
    assert ("POST", "/build") not in engine.calls()
    create = engine.one("POST", "/containers/create").json()
    assert create["Cmd"] == [
        "--config", "/data/config/run.toml", "--out", "/data/out", "--image-digest", pulled, "--device", "cpu",
        "--cache", "/data/cache", "--dry-run",
    ]  # fmt: skip
    assert not create["HostConfig"].get("DeviceRequests")  # --cpu: no GPU requested
    mounts = {m["Target"]: m["ReadOnly"] for m in create["HostConfig"]["Mounts"]}
    assert mounts == {"/data/config": True, "/data/out": False, "/data/cache": False}
    assert "INTERBIAS_CACHE=/data/cache" in create["Env"]


def test_unreachable_engine_is_one_line(tmp_path: Path, inputs: dict[str, Path]) -> None:
    url = f"unix://{tmp_path}/no-engine.sock"
    with pytest.raises(EngineUnreachableError) as caught:
        launch(inputs["config"], inputs["out"], base_url=url, root=inputs["repo"], state=STATE)
    line = caught.value.line()
    assert line.startswith(f"docker engine at {url}: unreachable (")
    assert "\n" not in line


def test_cli_prints_one_line_and_exits_2(
    tmp_path: Path, inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "--config",
        str(inputs["config"]),
        "--out",
        str(inputs["out"]),
        "--docker-host",
        f"unix://{tmp_path}/x",
    ]
    assert container.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: docker engine at ")


def test_build_error_is_reported_from_the_stream(engine: EngineStandIn, inputs: dict[str, Path]) -> None:
    engine.build_error = "The command '/bin/bash -o pipefail -c apt-get update' returned a non-zero code: 100"
    with pytest.raises(ImageUnavailableError) as caught:
        launch(inputs["config"], inputs["out"], base_url=engine.base_url, root=inputs["repo"], state=STATE,
               write=Sink(engine))  # fmt: skip
    assert caught.value.line() == f"containers/Dockerfile: build failed: {engine.build_error}"
    assert ("POST", "/containers/create") not in engine.calls()


def test_missing_image_without_build(engine: EngineStandIn, inputs: dict[str, Path]) -> None:
    with pytest.raises(ImageUnavailableError, match="other:tag: image not found in the engine"):
        launch(inputs["config"], inputs["out"], image="other:tag", build=False, base_url=engine.base_url,
               root=inputs["repo"], write=Sink(engine))  # fmt: skip


def test_start_failure_names_the_gpu_runtime_and_removes_the_container(
    engine: EngineStandIn, inputs: dict[str, Path]
) -> None:
    engine.start_error = 'could not select device driver "" with capabilities: [[gpu]]'
    with pytest.raises(ContainerFailedError) as caught:
        launch(inputs["config"], inputs["out"], base_url=engine.base_url, root=inputs["repo"], state=STATE,
               write=Sink(engine))  # fmt: skip
    assert engine.start_error in caught.value.line()
    assert "NVIDIA Container Toolkit" in caught.value.line()
    assert engine.calls()[-1] == ("DELETE", f"/containers/{CONTAINER_ID}")


def test_inputs_are_checked_before_the_engine_is_called(engine: EngineStandIn, inputs: dict[str, Path]) -> None:
    missing = inputs["corpora"].parent / "no-corpora"
    with pytest.raises(InputError, match=re.escape(f"{missing}: corpora folder not found")):
        launch(
            inputs["config"],
            inputs["out"],
            missing,
            base_url=engine.base_url,
            root=inputs["repo"],
            state=STATE,
        )
    with pytest.raises(InputError, match="configuration file not found"):
        launch(inputs["out"] / "none.toml", inputs["out"], base_url=engine.base_url, root=inputs["repo"])
    assert engine.requests == []


def test_build_context_is_deterministic_and_complete(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    first = build_context(repo, STATE.epoch)
    (repo / "audit/__pycache__/other.cpython-311.pyc").write_text("more bytecode")
    assert build_context(repo, STATE.epoch) == first  # by-products do not change the context
    (repo / "README.md").unlink()
    with pytest.raises(InputError, match=r"README\.md: missing from the build context"):
        build_context(repo, STATE.epoch)


def test_context_paths_cover_every_copy_in_the_dockerfile() -> None:
    dockerfile = (container.REPO_ROOT / container.DOCKERFILE).read_text()
    defaults = dict(re.findall(r"^ARG (\w+)=(\S+)", dockerfile, re.M))  # COPY ${LOCK}: the lock by default
    sources = [
        re.sub(r"\$\{(\w+)\}", lambda name: defaults[name[1]], source)
        for line in dockerfile.splitlines()
        if line.startswith("COPY ") and "--from=" not in line  # a stage's files are not the context's
        for source in line.split()[1:-1]
    ]
    assert sources, "the Dockerfile copies nothing?"
    for source in sources:
        assert source.split("/")[0] in container.CONTEXT_PATHS, source
