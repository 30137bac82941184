"""Build and launch the pinned benchmark image (``containers/Dockerfile``) through the Docker Engine API.

The launcher sends a deterministic build context (only the files the Dockerfile copies, sorted, with the
commit time as every mtime), reads the image's digest back from the engine and passes it to the run as
``--image-digest``, so that ``environment.json`` records which image made the bundle. The container runs
with all GPUs, no network, a read-only root filesystem, the inputs (configuration, corpora, checkpoints,
signing key) mounted read-only and the output folder read-write; its logs are streamed as they come and its
exit code is returned.

Paths inside the container (also in ``containers/README.md``): the configuration ``/data/config/<name>``
(its folder is mounted), the corpora ``/data/corpora`` (``$INTERBIAS_CORPORA``), the checkpoints
``/data/checkpoints`` (``$INTERBIAS_CHECKPOINTS``), the bundle ``/data/out``, the embedding cache
``/data/cache`` (``$INTERBIAS_CACHE``). A configuration meant for the image names its inputs through those
variables; the default configuration needs none of them.

Run it as ``python -m runner.container --config CONFIG --out DIR [...]`` (the ``container`` nox session).
"""

from __future__ import annotations

import argparse
import io
import os
import stat
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.models.images import Image
from docker.types import DeviceRequest, Mount

from provenance import bytes_digest
from schemas import EXIT_INPUT, InputError

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = "containers/Dockerfile"
DEFAULT_TAG = "interbias-sv:local"
# What the Dockerfile copies; nothing else is sent to the engine.
CONTEXT_PATHS = (
    "pyproject.toml",
    "README.md",
    "audit",
    "schemas",
    "provenance",
    "reports",
    "runner",
    "configs",
    "containers",
)
# Build by-products that never belong in the image.
CONTEXT_EXCLUDED_NAMES = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
CONTEXT_EXCLUDED_SUFFIXES = (".pyc", ".pyo", ".egg-info")

DATA = "/data"
CONFIG_DIR = f"{DATA}/config"
KEY_DIR = f"{DATA}/key"
CORPORA_DIR = f"{DATA}/corpora"
CHECKPOINTS_DIR = f"{DATA}/checkpoints"
OUT_DIR = f"{DATA}/out"
CACHE_DIR = f"{DATA}/cache"
SCRATCH_CACHE_DIR = "/tmp/interbias-cache"

Write = Callable[[bytes], None]


class EngineUnreachableError(InputError):
    """The Docker engine does not answer: nothing was built or run."""


class ImageUnavailableError(InputError):
    """The image could not be built, or the image named is not in the engine."""


class ContainerFailedError(InputError):
    """The engine refused to create or start the container (for example: no GPU runtime)."""


@dataclass(frozen=True)
class SourceState:
    """The commit the image is built from: its time becomes SOURCE_DATE_EPOCH, its id the revision label."""

    revision: str
    epoch: int


def write_stdout(chunk: bytes) -> None:
    """Default log sink: the launcher's own stdout, flushed so that logs appear as they come."""
    sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()


def connect(base_url: str | None = None) -> docker.DockerClient:
    """A client for the engine at ``base_url`` (default ``$DOCKER_HOST``, else the local socket), pinged."""
    url = base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = docker.DockerClient(base_url=url, version="auto")
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise EngineUnreachableError(
            f"docker engine at {url}", f"unreachable ({reason}); start Docker or set DOCKER_HOST"
        ) from None
    return client


def source_state(root: Path) -> SourceState:
    """HEAD's commit id (with ``-dirty`` when the tree has changes) and commit time, from git."""

    def git(*arguments: str) -> str:
        try:
            done = subprocess.run(["git", "-C", str(root), *arguments], capture_output=True, text=True, check=True)
        except (OSError, subprocess.CalledProcessError) as error:
            raise InputError(
                str(root), f"cannot read the git commit ({error}); pass --revision and --source-date-epoch"
            ) from None
        return done.stdout.strip()

    revision = git("rev-parse", "HEAD")
    if git("status", "--porcelain", "--untracked-files=no"):
        revision += "-dirty"
    return SourceState(revision=revision, epoch=int(git("log", "-1", "--format=%ct")))


def _context_files(root: Path) -> Iterator[Path]:
    """Every file under CONTEXT_PATHS, sorted, without build by-products; a missing path is an error."""
    for name in CONTEXT_PATHS:
        path = root / name
        if not path.exists():
            raise InputError(str(path), f"missing from the build context (the Dockerfile copies {name})")
        if path.is_file():
            yield path
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(
                d for d in dirnames if d not in CONTEXT_EXCLUDED_NAMES and not d.endswith(CONTEXT_EXCLUDED_SUFFIXES)
            )
            for filename in sorted(filenames):
                if not filename.endswith(CONTEXT_EXCLUDED_SUFFIXES):
                    yield Path(dirpath) / filename


def build_context(root: Path, epoch: int) -> bytes:
    """The build context as an uncompressed tar whose bytes depend only on the files' contents and modes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in _context_files(root):
            info = tarfile.TarInfo(path.relative_to(root).as_posix())
            data = path.read_bytes()
            info.size = len(data)
            info.mtime = epoch
            info.mode = 0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _follow_build(chunks: Iterable[dict[str, Any]], write: Write) -> str:
    """Write the build's progress as it comes; return the built image id, or raise on the first error."""
    image_id = ""
    for chunk in chunks:
        if "error" in chunk:
            detail = str(chunk.get("errorDetail", {}).get("message") or chunk["error"]).strip()
            last_line = detail.splitlines()[-1] if detail else "the engine gave no reason"
            raise ImageUnavailableError(DOCKERFILE, f"build failed: {last_line}")
        if "stream" in chunk:
            write(str(chunk["stream"]).encode())
        aux = chunk.get("aux")
        if isinstance(aux, dict) and "ID" in aux:
            image_id = str(aux["ID"])
    return image_id


def build_image(
    client: docker.DockerClient, root: Path, tag: str, state: SourceState, write: Write = write_stdout
) -> Image:
    """Build containers/Dockerfile from ``root`` as ``tag``, streaming the build log."""
    context = build_context(root, state.epoch)
    write(f"build context: {len(context)} bytes, sha256 {bytes_digest(context).sha256}\n".encode())
    try:
        chunks = client.api.build(
            fileobj=io.BytesIO(context),
            custom_context=True,
            dockerfile=DOCKERFILE,
            tag=tag,
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
            buildargs={"SOURCE_DATE_EPOCH": str(state.epoch), "VCS_REF": state.revision},
        )
        image_id = _follow_build(chunks, write)
        return client.images.get(image_id or tag)
    except docker.errors.APIError as error:
        raise ImageUnavailableError(DOCKERFILE, f"build failed: {error.explanation or error}") from None


def find_image(client: docker.DockerClient, name: str) -> Image:
    """An image already in the engine, by tag, id or digest reference."""
    try:
        return client.images.get(name)
    except docker.errors.ImageNotFound:
        raise ImageUnavailableError(name, "image not found in the engine; build it (drop --no-build)") from None


def image_reference(image: Image) -> str:
    """What the run records: the repository digest when the image came from a registry, else the image id.

    A locally built image has no repository digest until it is pushed; its id (the sha256 of its
    configuration, which names its layers) identifies it by content all the same.
    """
    repo_digests = image.attrs.get("RepoDigests") or []
    return str(repo_digests[0]) if repo_digests else str(image.id)


def _existing_folder(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise InputError(str(path), f"{what} folder not found")
    return path.resolve()


def container_arguments(
    config: Path, reference: str, *, key: Path | None, cache: Path | None, dry_run: bool, device: str = "cpu"
) -> list[str]:
    """The arguments of ``interbias reproduce`` inside the container (paths as mounted).

    ``device`` is handed on: a container started with GPUs runs its encoders on ``cuda`` and fails (exit 2,
    one line) if the GPU is not visible inside it, rather than running on the CPU.
    """
    arguments = ["--config", f"{CONFIG_DIR}/{config.name}", "--out", OUT_DIR, "--image-digest", reference]
    arguments += ["--device", device]
    if key is not None:
        arguments += ["--key", f"{KEY_DIR}/{key.name}"]
    if cache is not None:
        arguments += ["--cache", CACHE_DIR]
    if dry_run:
        arguments.append("--dry-run")
    return arguments


def container_mounts(
    config: Path,
    out: Path,
    *,
    corpora: Path | None,
    checkpoints: Path | None,
    key: Path | None,
    cache: Path | None,
) -> list[Mount]:
    """Bind mounts: inputs read-only, the bundle and the cache read-write."""
    mounts = [
        # The configuration's whole folder: a configuration names sibling files (the encoder roster) by
        # relative path.
        Mount(CONFIG_DIR, str(config.resolve().parent), type="bind", read_only=True),
        Mount(OUT_DIR, str(out.resolve()), type="bind", read_only=False),
    ]
    if corpora is not None:
        mounts.append(Mount(CORPORA_DIR, str(corpora), type="bind", read_only=True))
    if checkpoints is not None:
        mounts.append(Mount(CHECKPOINTS_DIR, str(checkpoints), type="bind", read_only=True))
    if key is not None:
        mounts.append(Mount(f"{KEY_DIR}/{key.name}", str(key.resolve()), type="bind", read_only=True))
    if cache is not None:
        mounts.append(Mount(CACHE_DIR, str(cache.resolve()), type="bind", read_only=False))
    return mounts


def run_container(
    client: docker.DockerClient,
    image_id: str,
    arguments: Sequence[str],
    mounts: Sequence[Mount],
    *,
    environment: dict[str, str],
    gpus: bool,
    write: Write = write_stdout,
) -> int:
    """Create and start the container, stream its logs until it exits, remove it; return its exit code."""
    try:
        container = client.containers.create(
            image_id,
            command=list(arguments),
            mounts=list(mounts),
            environment=environment,
            device_requests=[DeviceRequest(count=-1, capabilities=[["gpu"]])] if gpus else None,
            user=f"{os.getuid()}:{os.getgid()}",
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": "rw,exec,nosuid,nodev,size=16g"},
            shm_size="2g",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
        )
    except docker.errors.APIError as error:
        raise ContainerFailedError(
            image_id, f"the engine refused the container: {error.explanation or error}"
        ) from None
    try:
        try:
            container.start()
        except docker.errors.APIError as error:
            hint = "; for GPUs the engine needs the NVIDIA Container Toolkit (or run with --cpu)" if gpus else ""
            raise ContainerFailedError(image_id, f"cannot start: {error.explanation or error}{hint}") from None
        for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=True):
            write(chunk)
        return int(container.wait()["StatusCode"])
    finally:
        container.remove(force=True)


def launch(
    config: Path,
    out: Path,
    corpora: Path | None = None,
    checkpoints: Path | None = None,
    *,
    image: str | None = None,
    build: bool = True,
    key: Path | None = None,
    cache: Path | None = None,
    gpus: bool = True,
    dry_run: bool = False,
    base_url: str | None = None,
    root: Path = REPO_ROOT,
    state: SourceState | None = None,
    write: Write = write_stdout,
) -> int:
    """Build (or find) the image, run ``interbias reproduce`` in it on CONFIG into OUT; return its exit code.

    ``image`` is the tag to build, or the image to use with ``build=False`` (default: ``interbias-sv:local``).
    ``state`` fixes the revision and SOURCE_DATE_EPOCH of the build; by default they come from git.
    """
    if not config.is_file():
        raise InputError(str(config), "configuration file not found")
    if key is not None and not key.is_file():
        raise InputError(str(key), "signing key file not found")
    corpora = _existing_folder(corpora, "corpora") if corpora is not None else None
    checkpoints = _existing_folder(checkpoints, "checkpoints") if checkpoints is not None else None
    out.mkdir(parents=True, exist_ok=True)
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)

    client = connect(base_url)
    name = image or DEFAULT_TAG
    found = build_image(client, root, name, state or source_state(root), write) if build else find_image(client, name)
    reference = image_reference(found)
    write(f"image: {reference}\n".encode())

    environment = {"INTERBIAS_CACHE": CACHE_DIR if cache is not None else SCRATCH_CACHE_DIR}
    if corpora is not None:
        environment["INTERBIAS_CORPORA"] = CORPORA_DIR
    if checkpoints is not None:
        environment["INTERBIAS_CHECKPOINTS"] = CHECKPOINTS_DIR
    return run_container(
        client,
        str(found.id),
        container_arguments(config, reference, key=key, cache=cache, dry_run=dry_run, device="cuda" if gpus else "cpu"),
        container_mounts(config, out, corpora=corpora, checkpoints=checkpoints, key=key, cache=cache),
        environment=environment,
        gpus=gpus,
        write=write,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m runner.container", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True, help="run configuration (TOML) on this machine")
    parser.add_argument("--out", type=Path, required=True, help="bundle folder on this machine")
    parser.add_argument("--corpora", type=Path, help="corpora folder, mounted read-only at /data/corpora")
    parser.add_argument("--checkpoints", type=Path, help="checkpoints folder, mounted read-only")
    parser.add_argument("--key", type=Path, help="ed25519 private key (PEM), mounted read-only")
    parser.add_argument("--cache", type=Path, help="embedding cache folder (default: scratch inside the container)")
    parser.add_argument("--image", help=f"tag to build, or image to run with --no-build (default {DEFAULT_TAG})")
    parser.add_argument("--no-build", dest="build", action="store_false", help="run an existing image")
    parser.add_argument("--cpu", dest="gpus", action="store_false", help="request no GPUs")
    parser.add_argument("--dry-run", action="store_true", help="check inputs inside the container, run nothing")
    parser.add_argument("--docker-host", help="engine URL (default: $DOCKER_HOST or the local socket)")
    parser.add_argument("--revision", help="commit id for the image label (default: from git)")
    parser.add_argument("--source-date-epoch", type=int, help="build time in seconds (default: the commit time)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: one line on stderr and exit 2 for unusable input or an unreachable engine."""
    parser = _parser()
    options = parser.parse_args(argv)
    if (options.revision is None) != (options.source_date_epoch is None):
        parser.error("--revision and --source-date-epoch go together")
    state = None if options.revision is None else SourceState(options.revision, options.source_date_epoch)
    try:
        return launch(
            options.config,
            options.out,
            options.corpora,
            options.checkpoints,
            image=options.image,
            build=options.build,
            key=options.key,
            cache=options.cache,
            gpus=options.gpus,
            dry_run=options.dry_run,
            base_url=options.docker_host,
            state=state,
        )
    except InputError as error:
        print(f"error: {error.line()}", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main())
