"""The runner on a real Ray cluster (a head and a second node on 127.0.0.1, started and stopped here).

Oracle: the local executor on the same configuration and seed. The Ray run's results, trial lists, scores and
operators.json must be the same bytes, with a pool of two actors per label or one; so must they after an encoder
actor is killed mid-run (Ray restarts it), after the driver is killed and rerun (resumed from the shared cache),
and when ``reproduce`` starts its own local cluster. Only environment.json differs: it records the cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.cli_output import split_output

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # read when Ray is imported: every node on 127.0.0.1
import ray
from ray.cluster_utils import Cluster

from runner.corpora.asterisk import build_default_corpus
from runner.design.config import load_config
from runner.execution import LocalExecutor, RayExecutor
from runner.pipeline import RunOptions, RunSummary, run

ROOT = Path(__file__).resolve().parents[3]
SAME_BYTES = ("results.csv", "operators.json")
OBJECT_STORE = 80 * 1024**2

pytestmark = [
    pytest.mark.runner,  # Ray is of the runner's extras; the light sessions do not install it
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/usr/share/asterisk/sounds/en_US_f_Allison").is_dir(),
        reason="Debian's asterisk prompt packages are not installed (noxfile.py installs them as root)",
    ),
]

CONFIG = """
[run]
name = "ray-slice"
seed = 5
eer_method = "rocch"
batch_size = 6

[corpus]
name = "asterisk"
root = "{corpus}"
music = "/usr/share/asterisk/moh"

[encoders]
roster = "{roster}"
labels = ["mfcc-stats", "mfcc-13"]

[analysis]
equivalence_margin = 0.05
n_resamples = 50

[conditions]
"babble-5dB" = [{{ name = "babble", kwargs = {{ snr_db = 5, talkers = 2 }} }}]
"opus-8k" = [{{ name = "codec", kwargs = {{ codec = "opus", bitrate = 8000, sample_rate = 16000 }} }}]

[[experiments]]
id = "D01"
title = "babble x codec"
use = "interaction"
target_trials = 20
nontarget_trials = 20
factor_a = {{ name = "noise", levels = ["babble-5dB"] }}
factor_b = {{ name = "codec", levels = ["opus-8k"] }}
"""


# Two labels, so two encoder actors on two one-CPU nodes: an actor that held a CPU slot would leave the operator
# tasks none.
ROSTER = """
checkpoints_root = "."

[[encoders]]
label = "mfcc-stats"
kind = "mfcc"
family = "baseline"
paper = false
source = "no weights"

[[encoders]]
label = "mfcc-13"
kind = "mfcc"
family = "baseline"
paper = false
source = "no weights"
options = { n_mfcc = 13 }
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head and a second node on 127.0.0.1, one CPU and a small object store each; always shut down."""
    started = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": OBJECT_STORE, "include_dashboard": False},
    )
    try:
        started.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
        started.wait_for_nodes()
        yield started
    finally:
        started.shutdown()


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = tmp_path_factory.mktemp("corpus")
    build_default_corpus(corpus, max_per_speaker=3, progress=False)
    folder = tmp_path_factory.mktemp("config")
    (folder / "encoders.toml").write_text(ROSTER)
    path = folder / "run.toml"
    path.write_text(CONFIG.format(corpus=corpus, roster=folder / "encoders.toml"))
    return path


@pytest.fixture(scope="module")
def local(config_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """The oracle: the local executor's whole loop (run, sign, audit), its exit code and forward passes.

    Its bundle is moved aside after; every Ray run writes to the same --out path (operators.json names it).
    """
    from runner.reproduce import reproduce

    folder = tmp_path_factory.mktemp("local")
    executor = LocalExecutor(0)
    code = reproduce(config_file, folder / "out", cache_root=folder / "cache", executor=executor)
    return (folder / "out").rename(folder / "bundle"), code, executor.forward_passes


def out_path(local: tuple[Path, int, int]) -> Path:
    return local[0].parent / "out"


def assert_same_bytes(bundle: Path, oracle: Path) -> None:
    names = [*SAME_BYTES, *(p.relative_to(oracle).as_posix() for p in sorted((oracle / "trials").iterdir()))]
    names += [p.relative_to(oracle).as_posix() for p in sorted((oracle / "scores").iterdir())]
    assert sorted(p.name for p in (bundle / "scores").iterdir()) == sorted(
        p.name for p in (oracle / "scores").iterdir()
    )
    for name in names:
        assert (bundle / name).read_bytes() == (oracle / name).read_bytes(), name


def ray_run(config_file: Path, out: Path, cache: Path, address: str, actors_per_label: int | None = None) -> RunSummary:
    executor = RayExecutor(address=address, actors_per_label=actors_per_label)
    return run(load_config(config_file), out, RunOptions(cache_root=cache, progress=False, executor=executor))


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "embeddings").glob("*/*.emb"))


def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "runner.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def test_ray_run_is_byte_identical_and_never_trusts_a_bad_entry(
    cluster: Cluster, local: tuple[Path, int, int], config_file: Path, tmp_path: Path
) -> None:
    out = out_path(local)
    try:
        summary = ray_run(config_file, out, tmp_path / "cache", cluster.address, actors_per_label=2)
        assert_same_bytes(out, local[0])
        assert summary.forward_passes == local[2]
        environment = json.loads((out / "environment.json").read_text())["executor"]
        assert environment["name"] == "ray" and environment["ray_version"] == ray.__version__
        assert len(environment["nodes"]) == 2 and environment["cpus"] == 2 and environment["gpus"] == 0
        # A pool of two actors per label, each a process of its own that embedded chunks (they alternate).
        actors = environment["actors"]
        assert environment["actors_per_label"] == 2 and set(actors) == {"mfcc-stats", "mfcc-13"}
        pool = [actor for label in actors for actor in actors[label]]
        assert [len(members) for members in actors.values()] == [2, 2] and len({a["pid"] for a in pool}) == 4
        assert all(actor["busy_s"] > 0 and actor["forward_passes"] > 0 for actor in pool)
        assert sum(actor["forward_passes"] for actor in pool) == summary.forward_passes
        stages = environment["stages"]
        assert set(stages) == {"realise", "embed mfcc-stats", "embed mfcc-13"}
        assert stages["realise"]["sides"] == stages["embed mfcc-13"]["sides"] == len(entries(tmp_path / "cache")) / 2
        assert json.loads((local[0] / "environment.json").read_text())["executor"] == {"name": "local", "workers": 0}
        # timings.json: each label's sides and audio are the local run's; its seconds are the pool's wall time
        # (actor CPU is not measured, so none is claimed).
        timings, local_timings = (json.loads((folder / "timings.json").read_text()) for folder in (out, local[0]))
        assert timings["executor"] == "ray" and set(timings["encoders"]) == set(local_timings["encoders"])
        for label, row in timings["encoders"].items():
            expected = local_timings["encoders"][label]
            assert (row["sides"], row["audio_s"]) == (expected["sides"], expected["audio_s"]) and row["sides"] > 0
            assert row["wall_s"] > 0 and row["cpu_s"] is None and row["audio_seconds_per_second"] > 0, label
        # One entry the workers wrote is altered: the driver refuses it, has it recomputed, the bytes hold.
        victim = entries(tmp_path / "cache")[0]
        data = bytearray(victim.read_bytes())
        data[-30] ^= 0xFF
        victim.write_bytes(bytes(data))
        again = ray_run(config_file, out, tmp_path / "cache", cluster.address)
        assert (again.cache_rejected, again.forward_passes) == (1, 1)
        assert_same_bytes(out, local[0])
    finally:
        shutil.rmtree(out, ignore_errors=True)


def encoder_actor_pids(cluster: Cluster) -> list[int]:
    """The processes of this cluster's encoder actors: children of its raylets titled ``ray::EncoderActor``."""
    raylets = {node.all_processes["raylet"][0].process.pid for node in cluster.list_all_nodes()}
    found = []
    for proc in Path("/proc").iterdir():
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            title = (proc / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if parent in raylets and title.startswith("ray::EncoderActor"):
            found.append(int(proc.name))
    return found


def test_a_killed_encoder_actor_is_restarted_and_the_bytes_hold(
    cluster: Cluster, local: tuple[Path, int, int], config_file: Path, tmp_path: Path
) -> None:
    killed: list[tuple[int, int]] = []  # (pid, entries in the cache when it was killed)

    def kill_mid_run() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not killed:
            written = len(entries(tmp_path / "cache")) if (tmp_path / "cache").exists() else 0
            pids = encoder_actor_pids(cluster) if written >= 12 else []
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append((pids[0], written))
            time.sleep(0.02)

    killer = threading.Thread(target=kill_mid_run, daemon=True)
    killer.start()
    out = out_path(local)
    try:
        summary = ray_run(config_file, out, tmp_path / "cache", cluster.address)
        killer.join(timeout=5)
        assert killed and killed[0][1] < len(entries(tmp_path / "cache")), killed  # killed with work left
        assert_same_bytes(out, local[0])
        assert summary.forward_passes >= local[2]  # the killed calls were run again
    finally:
        killed.append((0, 0))  # stops the killer if the run failed first
        shutil.rmtree(out, ignore_errors=True)


def test_a_killed_driver_resumes_from_the_shared_cache(
    cluster: Cluster, local: tuple[Path, int, int], config_file: Path, tmp_path: Path
) -> None:
    out, cache = out_path(local), tmp_path / "cache"
    args = ["run", str(config_file), "--out", str(out), "--cache", str(cache), "--executor", "ray"]
    args += ["--address", cluster.address]
    try:
        driver = cli(*args)
        deadline = time.monotonic() + 300
        while driver.poll() is None and time.monotonic() < deadline:
            if cache.exists() and len(entries(cache)) >= 6:
                driver.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
        driver.communicate(timeout=60)
        assert driver.returncode == -signal.SIGKILL, "the driver finished before it could be killed"
        assert not (out / "results.csv").exists()
        resumed = cli(*args, "--json")
        stdout, stderr = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, stderr
        output = split_output(stdout, stderr, json_stdout=True)
        summary = output.result
        assert summary["embeddings_cached"] >= 6 and summary["forward_passes"] < local[2]
        assert_same_bytes(out, local[0])
        # Progress across the cluster, on stderr: every stage finished, and each part of the embedding stage
        # (realising on the cluster, each label's pool) climbed to its total, the totals environment.json records.
        assert output.other == [] and output.finished() == [
            f"stage {n}/6 {name}"
            for n, name in enumerate(["corpora", "encoders", "plan", "embeddings", "scores", "bundle"], 1)
        ]
        stages = json.loads((out / "environment.json").read_text())["executor"]["stages"]
        whats = {"realise": "sides realised on 2 node(s), 2 CPU(s)"}
        whats |= {f"embed {label}": f"sides embedded by {label} (1 actor(s))" for label in ("mfcc-stats", "mfcc-13")}
        for stage, what in whats.items():
            parts = output.parts("stage 4/6 embeddings", what)
            # a line after the first step, then one per tenth
            assert parts and parts[-1] == (stages[stage]["sides"],) * 2 and len(parts) <= 11, (stage, stderr)
        embedded = [stages[f"embed {label}"]["sides"] for label in ("mfcc-stats", "mfcc-13")]
        assert sum(embedded) == summary["forward_passes"] and stages["realise"]["sides"] == max(embedded)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_resources_and_options_the_cluster_cannot_meet_are_one_line(
    cluster: Cluster, config_file: Path, tmp_path: Path
) -> None:
    base = ["run", str(config_file), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")]
    cases = {
        "do not fit its nodes' GPUs (0, 0)": [
            "--executor",
            "ray",
            "--address",
            cluster.address,
            "--gpus-per-actor",
            "1",
            "--device",
            "cuda",
        ],
        "needs --gpus-per-actor above 0": ["--executor", "ray", "--device", "cuda"],
        "are options of --executor ray": ["--address", cluster.address],
        "--actors-per-label are options": ["--actors-per-label", "2"],
        "expected HOST:PORT": ["--executor", "ray", "--address", "head-without-port"],
        "no Ray cluster answers there": ["--executor", "ray", "--address", f"127.0.0.1:{closed_port()}"],
    }
    for expected, extra in cases.items():
        process = cli(*base, *extra)
        stdout, stderr = process.communicate(timeout=300)
        failure = split_output(stdout, stderr).other  # the last line, after the stages that finished
        assert process.returncode == 2 and len(failure) == 1 and "Traceback" not in stderr, stderr
        assert expected in failure[0]
    assert not entries(tmp_path / "cache") if (tmp_path / "cache").exists() else True


def test_reproduce_on_a_local_cluster_started_and_stopped_for_the_run(
    local: tuple[Path, int, int], config_file: Path, tmp_path: Path
) -> None:
    out = out_path(local)
    try:
        process = cli(
            "reproduce",
            "--config",
            str(config_file),
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
            "--executor",
            "ray",
        )
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == local[1], stderr
        verdicts = [
            json.loads((bundle / "report" / "report.json").read_text())["verdict"] for bundle in (out, local[0])
        ]
        assert verdicts[0] == verdicts[1]
        assert_same_bytes(out, local[0])
        session = json.loads((out / "environment.json").read_text())["executor"]["session_dir"]
        assert Path(session).name.startswith("session_")
        left = [proc for proc in Path("/proc").glob("[0-9]*") if session.encode() in _cmdline(proc)]
        assert not left, "processes of the run's cluster are still alive"
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""
