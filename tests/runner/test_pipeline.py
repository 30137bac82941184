"""The run end to end on a small slice of the real default corpus (resemblyzer's shipped weights, MFCC stats).

Oracles: the direction of the noise effect on a real pretrained encoder, EERs re-derived from the written per-trial
scores by sklearn's ROC (an independent implementation of the legacy rule), byte equality across reruns and
resumes, and encoder call counts for the cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_curve

from runner.corpora.asterisk import build_default_corpus
from runner.design.config import load_config
from runner.encoders import Encoder, EncoderSpec
from runner.execution import available_cores, cgroup_quota
from runner.pipeline import RunOptions, run
from schemas.errors import InputError
from tests.runner.cli_output import split_output

ROOT = Path(__file__).resolve().parents[2]
STAGES = [
    f"stage {n}/6 {name}" for n, name in enumerate(["corpora", "encoders", "plan", "embeddings", "scores", "bundle"], 1)
]
PROVENANCE_COLUMNS = ["checkpoint_blake3", "trial_list_id", "scores_blake3", "run_id"]

pytestmark = [
    pytest.mark.runner,  # real runs with torch encoders (the fixtures' bundles)
    pytest.mark.skipif(
        not Path("/usr/share/asterisk/sounds/en_US_f_Allison").is_dir(),
        reason="Debian's asterisk prompt packages are not installed (noxfile.py installs them as root)",
    ),
]

CONFIG = """
[run]
name = "slice"
seed = 11
eer_method = "rocch"
batch_size = 16

[corpus]
name = "asterisk"
root = "{corpus}"
music = "/usr/share/asterisk/moh"

[encoders]
roster = "{roster}"
labels = {labels}

[analysis]
equivalence_margin = 0.05
n_resamples = 200

[conditions]
"white-0dB" = [{{ name = "white", kwargs = {{ snr_db = 0 }} }}]
"opus-8k" = [{{ name = "codec", kwargs = {{ codec = "opus", bitrate = 8000, sample_rate = 16000 }} }}]

[[experiments]]
id = "D01"
title = "noise x codec"
use = "interaction"
target_trials = 60
nontarget_trials = 60
factor_a = {{ name = "noise", levels = ["white-0dB"] }}
factor_b = {{ name = "codec", levels = ["opus-8k"] }}
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    build_default_corpus(folder, max_per_speaker=6, progress=False)
    return folder


def write_config(folder: Path, corpus: Path, labels: list[str]) -> Path:
    path = folder / "run.toml"
    text = CONFIG.format(corpus=corpus, roster=ROOT / "configs" / "encoders.toml", labels=labels)
    path.write_text(text)
    return path


class CountingEncoder:
    """Wraps a real encoder and counts the utterances it embeds; can stop the run after ``fail_after`` calls."""

    def __init__(self, inner: Encoder, fail_after: int | None = None) -> None:
        self.inner = inner
        self.checkpoint = inner.checkpoint
        self.embedded = 0
        self.calls = 0
        self.fail_after = fail_after

    def embed(self, waves: list[np.ndarray], sr: int) -> np.ndarray:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise KeyboardInterrupt("simulated kill")
        self.embedded += len(waves)
        return self.inner.embed(waves, sr)


def counting_factory(made: list[CountingEncoder], fail_after: int | None = None):  # type: ignore[no-untyped-def]
    def factory(spec: EncoderSpec, device: str) -> CountingEncoder:
        encoder = CountingEncoder(spec.load(device=device), fail_after)
        made.append(encoder)
        return encoder

    return factory


@pytest.fixture(scope="module")
def finished(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[CountingEncoder]]:
    folder = tmp_path_factory.mktemp("run")
    config = load_config(write_config(folder, corpus, ["resemblyzer", "mfcc-stats"]))
    made: list[CountingEncoder] = []
    run(
        config,
        folder / "out",
        RunOptions(cache_root=folder / "cache", progress=False, encoder_factory=counting_factory(made)),
    )
    return folder, folder / "out", made


def legacy_eer(labels: np.ndarray, scores: np.ndarray) -> float:
    fpr, tpr, _ = roc_curve(labels, scores)
    fnr = 1 - tpr
    i = np.nanargmin(np.abs(fnr - fpr))
    return float((fpr[i] + fnr[i]) / 2)


@pytest.mark.slow
def test_bundle_rows_carry_provenance_and_rescore_exactly(finished: tuple[Path, Path, list]) -> None:
    _, out, _ = finished
    results = pd.read_csv(out / "results.csv")
    assert len(results) == 2 * 4  # two encoders x (clean, noise, codec, noise+codec)
    assert results[PROVENANCE_COLUMNS].notna().all().all()
    assert results["trial_list_id"].nunique() == 1  # every term and encoder scores the same pairs
    for row in results.itertuples():
        scores = pd.read_parquet(out / "scores" / f"{row.record_id}.parquet")
        scored = scores[scores["status"] == "scored"]
        assert len(scored) == row.n_target + row.n_nontarget
        assert legacy_eer(scored["label"].to_numpy(), scored["score"].to_numpy()) == row.eer_legacy
        trials = pd.read_csv(
            out / "trials" / f"{row.trial_list_id}.csv", dtype={"enrol_speaker": str, "test_speaker": str}
        )
        assert (trials["label"].to_numpy() == scores["label"].to_numpy()).all()
        enrol, test = set(trials["enrol_speaker"]), set(trials["test_speaker"])
        assert (row.n_speakers, row.n_enrol_speakers, row.n_test_speakers) == (len(enrol | test), len(enrol), len(test))
    for name in ("operators.json", "checkpoints.json", "environment.json", "provenance/statement.json"):
        assert (out / name).is_file()
    timings = json.loads((out / "timings.json").read_text())
    assert set(timings["stages"]) == {"corpora", "encoders", "plan", "embeddings", "scores"}
    assert all(stage["wall_s"] >= 0 and stage["cpu_s"] >= 0 for stage in timings["stages"].values())
    checkpoints = json.loads((out / "checkpoints.json").read_text())
    threads = json.loads((out / "environment.json").read_text())["threads"]  # the policy the encoders ran under
    named = os.environ.get("OMP_NUM_THREADS")
    assert threads["torch_threads"] == (int(named) if named else available_cores(quota=cgroup_quota()))
    assert checkpoints["resemblyzer"]["runtime"]["num_threads"] == threads["torch_threads"]
    statement = json.loads((out / "provenance" / "statement.json").read_text())
    assert "timings.json" in {subject["name"] for subject in statement["subject"]}  # signed like the others
    # cold cache: both labels embed the same sides, whose audio is their clean utterances' durations
    pool = pd.read_csv(out / "corpus" / "utterances.csv")["duration_s"]
    first, second = timings["encoders"].values()
    assert (first["sides"], first["audio_s"]) == (second["sides"], second["audio_s"])
    for label, row in timings["encoders"].items():
        assert row["sides"] > 0 and row["wall_s"] > 0 and row["cpu_s"] > 0
        assert pool.min() * row["sides"] <= row["audio_s"] <= pool.max() * row["sides"]
        # the rate is taken on the unrounded seconds; audio_s, wall_s and the rate are each written to 3 decimals
        low = (row["audio_s"] - 5e-4) / (row["wall_s"] + 5e-4) - 5e-4
        high = (row["audio_s"] + 5e-4) / max(row["wall_s"] - 5e-4, 1e-9) + 5e-4
        assert low <= row["audio_seconds_per_second"] <= high, label


def test_a_cached_rerun_into_a_fresh_folder_loads_no_encoder_and_imports_no_torch(
    finished: tuple[Path, Path, list],
) -> None:
    folder, out, _ = finished
    code = (
        "import sys; from pathlib import Path; from runner import RunOptions, load_config, run; "
        "config, out, cache = load_config(Path(sys.argv[1])), Path(sys.argv[2]), Path(sys.argv[3]); "
        "assert run(config, out, RunOptions(cache_root=cache, progress=False)).forward_passes == 0; "
        "print(sorted(m for m in ('torch', 'resemblyzer') if m in sys.modules))"
    )
    command = [sys.executable, "-c", code, str(folder / "run.toml"), str(folder / "rerun"), str(folder / "cache")]
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert result.returncode == 0 and result.stdout == "[]\n", result.stderr
    for name in ("checkpoints.json", "results.csv", "operators.json"):  # the stored records are the loaded ones
        assert (folder / "rerun" / name).read_bytes() == (out / name).read_bytes(), name


def test_pretrained_encoder_is_well_below_chance_and_noise_raises_its_eer(
    finished: tuple[Path, Path, list],
) -> None:
    _, out, _ = finished
    results = pd.read_csv(out / "results.csv").set_index(["model", "condition"])
    clean = results.loc[("resemblyzer", "clean"), "eer"]
    noisy = results.loc[("resemblyzer", "white-0dB"), "eer"]
    assert clean < 0.2
    assert noisy > clean


def test_rerun_does_no_forward_pass_and_writes_the_same_bytes(
    finished: tuple[Path, Path, list], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, out, first = finished
    assert all(encoder.embedded > 0 for encoder in first)
    before = (out / "results.csv").read_bytes()
    made: list[CountingEncoder] = []
    config = load_config(folder / "run.toml")
    run(config, out, RunOptions(cache_root=folder / "cache", progress=True, encoder_factory=counting_factory(made)))
    assert made == []  # every embedding was cached: no encoder was even loaded
    assert (out / "results.csv").read_bytes() == before
    # stderr is not a terminal here: one line per stage, with its counts and times, on stderr alone; nothing to
    # compute, so no line through the embedding stage.
    captured = capsys.readouterr()
    output = split_output(captured.out, captured.err)
    assert captured.out == "" and output.other == [] and output.finished() == STAGES
    assert output.progress[3].startswith("stage 4/6 embeddings: 0 computed, ")


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_bytes(finished: tuple[Path, Path, list], tmp_path: Path) -> None:
    folder, out, _ = finished
    config = load_config(folder / "run.toml")
    with pytest.raises(KeyboardInterrupt):
        run(
            config,
            tmp_path / "out",
            RunOptions(
                cache_root=tmp_path / "cache", progress=False, encoder_factory=counting_factory([], fail_after=3)
            ),
        )
    assert not (tmp_path / "out" / "results.csv").exists()
    made: list[CountingEncoder] = []
    run(
        config,
        tmp_path / "out",
        RunOptions(cache_root=tmp_path / "cache", progress=False, encoder_factory=counting_factory(made)),
    )
    assert 0 < made[0].embedded < finished[2][0].embedded  # only what the killed run had not cached
    assert (tmp_path / "out" / "results.csv").read_bytes() == (out / "results.csv").read_bytes()


def test_another_run_in_the_same_folder_is_refused(finished: tuple[Path, Path, list], corpus: Path) -> None:
    folder, out, _ = finished
    (folder / "other").mkdir()
    other = write_config(folder / "other", corpus, ["mfcc-stats"])
    with pytest.raises(InputError, match="holds another run"):
        run(load_config(other), out, RunOptions(cache_root=folder / "cache", progress=False))


def test_audit_of_the_bundle_passes_the_schema(finished: tuple[Path, Path, list]) -> None:
    _, out, _ = finished
    from audit.verify import AuditRequest, verify

    report = verify(AuditRequest(out / "results.csv"))
    assert "schema" not in {flag["id"] for flag in report["flags"]}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


@pytest.mark.slow
def test_missing_and_corrupt_audio_are_one_line_and_exit_2(corpus: Path, tmp_path: Path) -> None:
    broken = tmp_path / "corpus"
    shutil.copytree(corpus, broken)
    table = pd.read_csv(broken / "utterances.csv")
    victim = broken / table["path"].iloc[0]
    victim.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    config = write_config(tmp_path, broken, ["mfcc-stats"])
    result = cli("run", str(config), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"))
    assert result.returncode == 2, result.stderr
    output = split_output(result.stdout, result.stderr)  # its digest no longer matches the table: caught at load
    assert len(output.other) == 1 and str(victim) in output.other[0] and output.finished() == []
    assert "differs from the BLAKE3 utterances.csv records" in output.other[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "results.csv").exists()
    victim.unlink()
    result = cli("run", str(config), "--out", str(tmp_path / "out2"), "--cache", str(tmp_path / "cache"))
    assert result.returncode == 2 and len(split_output(result.stdout, result.stderr).other) == 1, result.stderr
    assert not (tmp_path / "out2" / "results.csv").exists()


@pytest.mark.slow
def test_missing_checkpoint_and_unknown_operator_are_one_line_and_exit_2(corpus: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, corpus, ["ecapa-tdnn"])
    result = cli("run", str(config), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "spkrec-ecapa-voxceleb" in result.stderr, result.stderr
    output = split_output(result.stdout, result.stderr)  # the corpus stage finished before the encoders failed
    assert len(output.other) == 1 and output.finished() == STAGES[:1]
    text = write_config(tmp_path, corpus, ["mfcc-stats"]).read_text().replace('name = "white"', 'name = "brown"')
    (tmp_path / "run.toml").write_text(text)
    result = cli("run", str(tmp_path / "run.toml"), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "brown" in result.stderr and "white-0dB" in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_json_stdout_is_the_summary_alone_and_progress_goes_to_stderr(corpus: Path, tmp_path: Path) -> None:
    # The oracle for the counts is the bundle: operators.json counts each distinct side once (one label here), the
    # embedding stage's lines climb to that count, a forward pass is made for each side that was not failed, and
    # every line of stderr is a progress line (no failure).
    config = write_config(tmp_path, corpus, ["mfcc-stats"])
    out = tmp_path / "out"
    args = ["run", str(config), "--out", str(out), "--cache", str(tmp_path / "cache"), "--workers", "0", "--json"]
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    output = split_output(result.stdout, result.stderr, json_stdout=True)
    summary = output.result
    operators = list(json.loads((out / "operators.json").read_text())["chains"].values())
    sides = sum(chain["applied"] + chain["failed"] + chain["fallback"] for chain in operators)
    embedded = sides - sum(chain["failed"] for chain in operators)
    assert summary["forward_passes"] == embedded > 0 and summary["embeddings_cached"] == 0
    assert output.other == [] and output.finished() == STAGES
    parts = output.parts("stage 4/6 embeddings", "sides embedded")
    assert parts[-1] == (sides, sides) and 1 <= len(parts) <= 11
    # climbing: a line after the first batch, then one per tenth
    assert [done for done, _ in parts] == sorted({done for done, _ in parts})
    assert f"stage 4/6 embeddings: {embedded} computed, 0 from cache (" in result.stderr


@pytest.fixture(scope="module")
def reproduced(finished: tuple[Path, Path, list], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from runner.reproduce import reproduce

    folder = finished[0]
    bundle = tmp_path_factory.mktemp("reproduce") / "bundle"
    assert reproduce(folder / "run.toml", bundle, cache_root=folder / "cache") == 0
    return bundle


@pytest.mark.slow
def test_reproduce_signs_audits_and_writes_the_same_results(
    reproduced: Path, finished: tuple[Path, Path, list]
) -> None:
    assert (reproduced / "provenance" / "run.intoto.jsonl").is_file()
    private = reproduced.parent / "bundle.keys" / "run.key"
    assert private.stat().st_mode & 0o777 == 0o600 and not (reproduced / "run.key").exists()
    report = json.loads((reproduced / "report" / "report.json").read_text())
    assert report["verdict"] == "pass"
    sections = {section["id"]: section for section in report["sections"]}
    assert {"bundle-signature", "bundle-rescore", "per-trial-statistics", "artefact-evaluation"} <= set(sections)
    assert report["statistics"]["n_resamples"] == 200 and report["statistics"]["margin"] == 0.05
    assert len(report["statistics"]["contrasts"]) == 2  # one noise x codec contrast per encoder
    # Same configuration, same cache: the same bytes, whoever runs it.
    assert (reproduced / "results.csv").read_bytes() == (finished[1] / "results.csv").read_bytes()
    # The loop attests its own audit beside the report, and anyone checks it with the run's public key; the bundle
    # carries its Croissant card as a signed subject.
    from typer.testing import CliRunner

    from audit.cli import app

    attestation = reproduced / "report" / "attestation.intoto.jsonl"
    assert report["attestation"]["file"] == attestation.name
    check = ["verify-attestation", str(attestation), "--key", str(private.with_suffix(".pub")), "--bundle"]
    done = CliRunner().invoke(app, [*check, str(reproduced), "--table", str(reproduced / "results.csv")])
    assert done.exit_code == 0 and done.stdout.startswith("PASS: recorded verdict PASSED"), done.output
    assert '"croissant.json"' in (reproduced / "provenance" / "statement.json").read_text()


def test_a_changed_score_in_a_real_bundle_is_caught(reproduced: Path, tmp_path: Path) -> None:
    from audit.cli import audit_results
    from audit.verify import AuditRequest

    tampered = tmp_path / "bundle"
    shutil.copytree(reproduced, tampered, ignore=shutil.ignore_patterns("report"))
    victim = sorted((tampered / "scores").glob("*.parquet"))[0]
    scores = pd.read_parquet(victim)
    scores.loc[0, "score"] = -scores.loc[0, "score"]
    scores.to_parquet(victim, index=False)
    report, _ = audit_results(
        AuditRequest(tampered / "results.csv", bundle=tampered, key=reproduced.parent / "bundle.keys" / "run.pub")
    )
    ids = {flag["id"] for flag in report["flags"] if flag["severity"] == "error"}
    assert report["verdict"] == "fail" and "digest-mismatch" in ids


@pytest.mark.slow
def test_seeds_give_one_bundle_per_seed_and_their_spread(corpus: Path, tmp_path: Path) -> None:
    # Two seeds of the weight-free encoder: each bundle records its own seed in its config and rows, the trial
    # lists differ (the seed drives sampling), and `audit seeds` reads the two tables.
    write_config(tmp_path, corpus, ["mfcc-stats"])
    out = tmp_path / "out"
    result = cli("run", str(tmp_path / "run.toml"), "--out", str(out), "--seeds", "2", "--no-progress")
    assert result.returncode == 0, result.stderr
    bundles = [out / "seed-11", out / "seed-12"]
    for seed, bundle in zip((11, 12), bundles, strict=True):
        assert f"seed = {seed}" in (bundle / "config.toml").read_text()
        assert set(pd.read_csv(bundle / "results.csv")["seed"]) == {seed}
    lists = [sorted(p.read_bytes() for p in (b / "trials").glob("*.csv")) for b in bundles]
    assert lists[0] != lists[1]
    spread = subprocess.run(
        [sys.executable, "-m", "audit.cli", "seeds", *(str(b / "results.csv") for b in bundles), "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert spread.returncode == 0, spread.stderr
    report = json.loads(spread.stdout)
    assert report["seeds"] == [11, 12] and all(row["n_seeds"] == 2 for row in report["ie"])
