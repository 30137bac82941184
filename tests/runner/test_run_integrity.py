"""Runner integrity on a small real run (real asterisk speech and music, the MFCC-statistics encoder).

Oracles: the results of a clean cold run (a damaged cache, changed material or a resume must give the same bytes,
or different ones exactly when an input changed), counts of damaged entries made by hand, and encoder call counts.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner, Result

from runner.corpora.asterisk import build_default_corpus
from runner.design.config import load_config
from runner.pipeline import RunOptions, RunSummary, run
from schemas import RUN_SPECIFIC_FILES, TIMINGS_FILE
from schemas.errors import InputError
from tests.runner.test_cache import damage
from tests.runner.test_pipeline import CountingEncoder, counting_factory

ROOT = Path(__file__).resolve().parents[2]
MUSIC = Path("/usr/share/asterisk/moh")

CONFIG = """
[run]
name = "integrity"
seed = 5
batch_size = 16

[corpus]
name = "asterisk"
root = "{corpus}"
music = "{music}"

[encoders]
roster = "{roster}"
labels = ["mfcc-stats"]

[conditions]
"white-0dB" = [{{ name = "white", kwargs = {{ snr_db = 0 }} }}]
"music-5dB" = [{{ name = "music", kwargs = {{ snr_db = 5 }} }}]

[[experiments]]
id = "D01"
title = "noise"
use = "descriptive"
target_trials = 24
nontarget_trials = 24
factor_a = {{ name = "noise", levels = ["white-0dB", "music-5dB"] }}
"""


def write_config(folder: Path, corpus: Path, music: Path = MUSIC) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.toml"
    path.write_text(CONFIG.format(corpus=corpus, music=music, roster=ROOT / "configs" / "encoders.toml"))
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    build_default_corpus(folder, max_per_speaker=4, progress=False)
    return folder


def small_run(config: Path, out: Path, cache: Path, made: list[CountingEncoder] | None = None) -> RunSummary:
    factory = counting_factory(made if made is not None else [])
    return run(
        load_config(config), out, RunOptions(cache_root=cache, progress=False, workers=0, encoder_factory=factory)
    )


@pytest.fixture(scope="module")
def cold(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunSummary]:
    folder = tmp_path_factory.mktemp("cold")
    summary = small_run(write_config(folder, corpus), folder / "out", folder / "cache")
    # The cold run's entries alone: other tests run other configurations on folder/cache and add entries this run
    # never reads (damaging one of those would go unseen, whichever order the tests ran in).
    shutil.copytree(folder / "cache", folder / "cold-cache")
    return folder, summary


def copy_cache(cold: tuple[Path, RunSummary], tmp_path: Path) -> Path:
    """A copy of the cache exactly as the cold run left it."""
    shutil.copytree(cold[0] / "cold-cache", tmp_path / "cache")
    return tmp_path / "cache"


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "embeddings").rglob("*.emb"))


@pytest.mark.slow
def test_a_damaged_cache_is_recomputed_counted_and_gives_the_same_results(
    cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    folder, first = cold
    assert first.cache_rejected == 0 and first.forward_passes > 0
    cache = copy_cache(cold, tmp_path)
    files = entries(cache)
    kinds = ["swapped", "truncated", "empty", "garbage", "nan-unsigned", "nan-signed"]
    for index, kind in enumerate(kinds):  # "swapped" damages two files: each holds the other's entry
        damage(kind, files[2 * index], files[2 * index + 1])
    made: list[CountingEncoder] = []
    summary = small_run(folder / "run.toml", tmp_path / "out", cache, made)
    assert summary.cache_rejected == len(kinds) + 1
    assert made[0].embedded == len(kinds) + 1  # exactly the rejected entries were embedded again
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["cache_rejected"]["total"] == len(kinds) + 1
    assert (tmp_path / "out" / "results.csv").read_bytes() == (folder / "out" / "results.csv").read_bytes()
    again = small_run(folder / "run.toml", tmp_path / "out", cache)  # the recomputed entries verify now
    assert again.cache_rejected == 0 and again.forward_passes == 0


@pytest.mark.slow
def test_changed_music_is_never_served_from_the_cache(
    cold: tuple[Path, RunSummary], corpus: Path, tmp_path: Path
) -> None:
    folder = cold[0]
    cache = copy_cache(cold, tmp_path)
    music = tmp_path / "moh"
    shutil.copytree(MUSIC, music)
    config = write_config(tmp_path / "same", corpus, music)
    same = small_run(config, tmp_path / "same" / "out", cache)
    assert same.forward_passes == 0  # the same music in another folder: the same key
    victim = sorted(p for p in music.iterdir() if p.is_file())[0]
    os.replace(sorted(p for p in music.iterdir() if p.is_file())[-1], victim)  # one file replaced by another
    made: list[CountingEncoder] = []
    changed = small_run(write_config(tmp_path / "changed", corpus, music), tmp_path / "changed" / "out", cache, made)
    music_sides = json.loads((folder / "out" / "operators.json").read_text())["chains"]
    expected = sum(c["applied"] + c["failed"] + c["fallback"] for c in music_sides.values() if "music" in str(c))
    assert made[0].embedded == expected > 0  # every music side, and only those, was recomputed
    assert changed.cache_rejected == 0


# --- one line for every failure --------------------------------------------------------------------------


def cli(*args: str) -> Result:
    from runner.cli import app

    return CliRunner().invoke(app, list(args))


def one_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def run_args(config: Path, out: Path, cache: Path) -> list[str]:
    return ["run", str(config), "--out", str(out), "--cache", str(cache), "--workers", "0", "--no-progress"]


def test_out_that_is_a_file_or_holds_a_corrupt_run_json_is_one_line_exit_2(
    cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    folder = cold[0]
    (tmp_path / "file").write_text("not a folder")
    result = cli(*run_args(folder / "run.toml", tmp_path / "file", folder / "cache"))
    assert result.exit_code == 2 and str(tmp_path / "file") in one_line(result)
    assert "--out" in result.stderr and "it is not a folder" in result.stderr
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.json").write_bytes(b"\x00{garbage")
    result = cli(*run_args(folder / "run.toml", tmp_path / "out", folder / "cache"))
    assert result.exit_code == 2 and str(tmp_path / "out" / "run.json") in one_line(result)
    debug = cli("--debug", *run_args(folder / "run.toml", tmp_path / "out", folder / "cache"))
    assert isinstance(debug.exception, InputError)  # --debug lets the exception (and its traceback) through


@contextmanager
def read_only_folder(parent: Path) -> Iterator[Path]:
    """A folder no write reaches: a read-only tmpfs where this process may mount one (root), else mode 0555."""
    folder = parent / "read-only"
    folder.mkdir()
    mounted = (
        os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True
        ).returncode
        == 0
    )
    if not mounted:
        folder.chmod(0o555)
    try:
        yield folder
    finally:
        if mounted:
            subprocess.run(["umount", str(folder)], check=True)
        folder.chmod(0o755)


def test_read_only_out_is_one_line_exit_2(cold: tuple[Path, RunSummary], tmp_path: Path) -> None:
    folder = cold[0]
    with read_only_folder(tmp_path) as out:
        result = cli(*run_args(folder / "run.toml", out, folder / "cache"))
        assert result.exit_code == 2 and str(out) in one_line(result)
        assert "--out" in result.stderr and "cannot write here" in result.stderr and not any(out.iterdir())


def test_a_full_disk_is_one_line_exit_1_nothing_signed_and_the_rerun_completes(
    cold: tuple[Path, RunSummary], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = cold[0]
    replace = os.replace

    def full_disk(source: str, target: str) -> None:  # the device fills up when results.csv is written
        if Path(target).name == "results.csv":
            raise OSError(errno.ENOSPC, "No space left on device")
        replace(source, target)

    monkeypatch.setattr(os, "replace", full_disk)
    out = tmp_path / "out"
    result = cli(*run_args(folder / "run.toml", out, folder / "cache"))
    line = one_line(result)
    assert result.exit_code == 1 and str(out / "results.csv") in line and "No space left" in line
    assert not (out / "results.csv").exists() and not (out / "provenance").exists()
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    monkeypatch.setattr(os, "replace", replace)
    assert cli(*run_args(folder / "run.toml", out, folder / "cache")).exit_code == 0
    assert (out / "results.csv").read_bytes() == (folder / "out" / "results.csv").read_bytes()


def test_a_record_with_no_scorable_trial_is_reported_counted_and_exit_1(
    corpus: Path, cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    empty_music = tmp_path / "music"
    empty_music.mkdir()  # exists (the config loads) but holds no music: every music side fails
    config = write_config(tmp_path, corpus, empty_music)
    out = tmp_path / "out"
    result = cli(*run_args(config, out, cold[0] / "cache"))
    line = one_line(result)
    assert result.exit_code == 1 and "1 of 3 records cannot be scored" in line and "D01.mfcc-stats.music-5dB" in line
    operators = json.loads((out / "operators.json").read_text())
    record = operators["records"]["D01.mfcc-stats.music-5dB"]
    music = next(chain for chain in operators["chains"].values() if chain["spec"][0]["name"] == "music")
    assert record["failed"] == music["failed"] > 0 and music["applied"] == 0  # every music side, counted
    assert any("holds no files" in reason for reason in music["reasons"])
    unscorable = json.loads((out / "run.json").read_text())["unscorable_records"]
    assert unscorable["total"] == 1 and "no scored target or non-target trials" in str(unscorable["records"])
    assert not (out / "results.csv").exists() and not (out / "provenance").exists()


def test_an_unexpected_failure_is_one_line_exit_1(
    cold: tuple[Path, RunSummary], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runner.pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug\nwith a second line")

    monkeypatch.setattr(runner.pipeline, "plan_run", broken)
    result = cli(*run_args(cold[0] / "run.toml", tmp_path / "out", cold[0] / "cache"))
    assert result.exit_code == 1 and "RuntimeError: simulated bug with a second line" in one_line(result)
    assert "--debug" in result.stderr


# --- clean resumes and location-independent bundles ------------------------------------------------------


def bundle_bytes(out: Path) -> dict[str, bytes]:
    """Every file but the signature's and timings.json (a run-specific file: the clock). environment.json, the other
    run-specific file, is the same on one machine and is compared."""
    return {
        path.relative_to(out).as_posix(): path.read_bytes()
        for path in sorted(out.rglob("*"))
        if path.is_file()
        and path.relative_to(out).parts[0] != "provenance"
        and path.relative_to(out).as_posix() != TIMINGS_FILE
    }


@pytest.mark.slow
def test_two_folders_and_caches_give_the_same_bundle_naming_neither_with_modes_from_the_umask(
    cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    folder = cold[0]
    shutil.copytree(folder / "cache", tmp_path / "a" / "cache")  # one run from a copy of a warm cache, one from none
    previous = os.umask(0o027)
    try:
        for name in ("a", "b"):
            out, cache = tmp_path / name / "out", tmp_path / name / "cache"
            command = [sys.executable, "-m", "runner.cli", "run", str(folder / "run.toml"), "--out", str(out)]
            run(
                load_config(folder / "run.toml"),
                out,
                RunOptions(
                    cache_root=cache,
                    command_line=[*command, f"--cache={cache}"],
                    progress=False,
                    workers=0,
                    encoder_factory=counting_factory([]),
                ),
            )
    finally:
        os.umask(previous)
    here, there = bundle_bytes(tmp_path / "a" / "out"), bundle_bytes(tmp_path / "b" / "out")
    assert list(here) == list(there) and [name for name in here if here[name] != there[name]] == []
    environment = json.loads(here["environment.json"])
    assert environment["command_line"][2:] == ["runner.cli", "run", "run.toml", "--out", "$OUT", "--cache=$CACHE"]
    assert environment["python"]["executable"] == Path(sys.executable).name
    cold_bundle = bundle_bytes(folder / "out")  # its command line is pytest's: the rest is the same bytes
    assert [name for name in here if name != "environment.json" and here[name] != cold_bundle[name]] == []
    assert TIMINGS_FILE in RUN_SPECIFIC_FILES
    machine = [str(tmp_path), str(folder), sys.prefix, str(Path(sys.executable).parent)]
    for out in (tmp_path / "a" / "out", tmp_path / "b" / "out"):
        for path in (p for p in out.rglob("*") if p.is_file()):  # signed or not, no file names a machine's folder
            data = path.read_bytes()
            assert [f for f in machine if f.encode() in data] == [], path.relative_to(out)
    modes = {path.stat().st_mode & 0o777 for path in (tmp_path / "b" / "out").rglob("*") if path.is_file()}
    assert modes == {0o640}  # 0o666 & ~0o027, as open() would give; not mkstemp's 0o600


def test_a_killed_writers_temporary_file_is_removed_on_resume_and_never_signed(
    cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    folder = cold[0]
    out = tmp_path / "out"
    shutil.copytree(folder / "out", out)
    stray = [out / ".results.csv.k3_x9a.tmp", out / "scores" / ".D01.mfcc-stats.clean.parquet.abc123.tmp"]
    for path in stray:
        path.write_bytes(b"half a file")
    (out / "results.csv").unlink()  # the kill came before results.csv was renamed into place
    small_run(folder / "run.toml", out, folder / "cache")
    assert not any(path.exists() for path in stray)
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    subjects = json.loads((out / "provenance" / "statement.json").read_text())["subject"]
    assert not [s for s in subjects if s["name"].endswith(".tmp")]
    assert (out / "results.csv").read_bytes() == (folder / "out" / "results.csv").read_bytes()


@pytest.mark.slow
def test_a_rerun_rewrites_an_edited_score_file_and_refuses_a_file_it_did_not_write(
    cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    """Oracle: the cold run's bytes. What is signed is what this invocation computed, never what it found."""
    folder = cold[0]
    out = tmp_path / "out"
    shutil.copytree(folder / "out", out)
    edited = out / "scores" / "D01.mfcc-stats.clean.parquet"
    table = pq.read_table(edited)
    flipped = table.set_column(2, "score", pa.array(-table.column("score").to_numpy()))
    pq.write_table(flipped.replace_schema_metadata(table.schema.metadata), edited, compression="zstd")
    small_run(folder / "run.toml", out, folder / "cache")
    assert edited.read_bytes() == (folder / "out" / edited.relative_to(out)).read_bytes()
    assert bundle_bytes(out) == bundle_bytes(folder / "out")
    for stray in (out / "notes.txt", out / "scores" / "D99.extra.parquet"):
        stray.write_bytes(b"not written by the run")
        with pytest.raises(InputError, match=f"holds 1 file.*{stray.relative_to(out).as_posix()}.*would not be signed"):
            small_run(folder / "run.toml", out, folder / "cache")
        stray.unlink()
    small_run(folder / "run.toml", out, folder / "cache")
    subjects = {s["name"] for s in json.loads((out / "provenance" / "statement.json").read_text())["subject"]}
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert subjects == {name for name in files if name.split("/")[0] != "provenance"}


def test_audio_changed_after_the_corpus_was_built_is_refused_even_with_a_warm_digest_index(
    cold: tuple[Path, RunSummary], corpus: Path, tmp_path: Path
) -> None:
    """Oracle: the BLAKE3 the built table records. A run, then one file edited in place (same size, other samples):
    the rerun with the digest index warm from the first refuses it instead of serving its cached embedding."""
    copied = tmp_path / "corpus"
    shutil.copytree(corpus, copied)
    config = write_config(tmp_path / "run", copied)
    cache = copy_cache(cold, tmp_path)
    small_run(config, tmp_path / "out", cache)
    victim = sorted((copied / "audio").rglob("*.wav"))[0]
    data = bytearray(victim.read_bytes())
    data[-2:] = bytes(255 - byte for byte in data[-2:])  # the last sample, negated bits
    victim.write_bytes(bytes(data))
    with pytest.raises(InputError) as caught:
        small_run(config, tmp_path / "out", cache)
    assert caught.value.line().startswith(str(victim))
    assert "differs from the BLAKE3 utterances.csv records (1 of" in caught.value.line()
    victim.unlink()
    with pytest.raises(InputError, match=r"audio listed in utterances\.csv is unreadable"):
        small_run(config, tmp_path / "out", cache)


# --- fault injection: SIGKILL at random points -----------------------------------------------------------


def cli_process(config: Path, out: Path, cache: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "runner.cli", *run_args(config, out, cache)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def kill_when(process: subprocess.Popen[bytes], reached: Callable[[], bool]) -> bool:
    """SIGKILL ``process`` as soon as ``reached()`` holds (polled every few ms); False if it finished first."""
    while process.poll() is None:
        if reached():
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.002)
    return False


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_gives_the_same_results_and_no_stray_file(
    cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    folder = cold[0]
    out, cache = tmp_path / "out", tmp_path / "cache"
    rng = random.Random(20261201)
    n_entries, n_scores = rng.randint(1, 20), rng.randint(1, 2)
    done = [0]  # cache entries when the current run started
    points = {  # one random point in each stage: embedding (cache writes), scoring, and before signing
        f"after {n_entries} cache entries": lambda: len(list(cache.rglob("*.emb"))) >= n_entries + done[0],
        f"after {n_scores} score files": lambda: len(list(out.glob("scores/*.parquet"))) >= n_scores,
        "once results.csv is written": lambda: (out / "results.csv").exists(),
    }
    killed = []
    for point, reached in points.items():  # each run resumes the previous one's work
        done[0] = len(list(cache.rglob("*.emb")))
        if kill_when(cli_process(folder / "run.toml", out, cache), reached):
            killed.append(point)
    assert killed == list(points), killed
    resumed = cli_process(folder / "run.toml", out, cache)
    assert resumed.wait(timeout=600) == 0, resumed.stderr.read() if resumed.stderr else ""
    assert (out / "results.csv").read_bytes() == (folder / "out" / "results.csv").read_bytes()
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    signed = {s["name"] for s in json.loads((out / "provenance" / "statement.json").read_text())["subject"]}
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert signed == {name for name in files if not name.startswith("provenance/")}
