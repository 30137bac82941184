"""A side an encoder cannot embed is counted, never the end of the run (``runner.encoders.failures``).

The oracle for every vector is the MFCC baseline's own embedding of that utterance alone; out-of-memory errors are
the real exception types (``torch.cuda.OutOfMemoryError``, an onnxruntime error as its module raises it), raised
by an encoder that holds a fixed memory budget, so the splits it forces are known in advance.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile
import torch

from provenance.digests import file_digest
from runner.cache import CachedEmbedding, encoder_outcome
from runner.encoders import load_encoder
from runner.encoders.failures import OUT_OF_MEMORY_ALONE, MemoryLog, embed_each, is_out_of_memory
from runner.execution.jobs import embed_realised

pytestmark = pytest.mark.runner

RATE = 16_000
ROOT = Path(__file__).resolve().parents[3]


def voice(seconds: float, seed: int) -> np.ndarray:
    """A vowel-like harmonic tone with a little noise (finite, not silent, different per seed)."""
    rng = np.random.default_rng(seed)
    t = np.arange(round(seconds * RATE)) / RATE
    f0 = 110 + 20 * seed
    wave = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6)) + 0.01 * rng.standard_normal(t.size)
    return (0.2 * wave).astype(np.float32)


class MemoryBudget:
    """The MFCC baseline behind a device that holds at most ``budget`` samples per call (the padded batch);
    a bigger call raises ``error`` as the device would."""

    def __init__(self, budget: int, error: type[BaseException] = torch.cuda.OutOfMemoryError) -> None:
        self.inner = load_encoder("mfcc", "mfcc-stats", None)
        self.checkpoint = self.inner.checkpoint
        self.budget = budget
        self.error = error
        self.calls: list[int] = []

    def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray:
        self.calls.append(len(waves))
        if len(waves) * max(len(w) for w in waves) > self.budget:
            raise self.error("CUDA out of memory. Tried to allocate 2.00 GiB")
        return self.inner.embed(waves, sr)


def alone(waves: list[np.ndarray]) -> list[np.ndarray]:
    encoder = load_encoder("mfcc", "mfcc-stats", None)
    return [encoder.embed([wave], RATE)[0] for wave in waves]


def test_out_of_memory_splits_down_to_what_fits_and_fails_only_what_never_fits() -> None:
    waves = [voice(1.0, seed) for seed in range(8)] + [voice(3.0, 8)]  # the last never fits (48,000 > 40,000)
    device = MemoryBudget(budget=40_000)
    memory = MemoryLog()
    results = embed_each(device, waves, RATE, memory)
    expected = alone(waves[:8])
    for got, want in zip(results[:8], expected, strict=True):
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)  # MFCC rows do not depend on their batch
    assert results[8] == OUT_OF_MEMORY_ALONE
    # 9 -> 4 + 5; 4 -> 2 + 2 fit (2 x 16,000); 5 -> 2 (fits) + 3 -> 1 (fits) + 2 -> 1 (fits) + 1 (48,000: fails)
    assert device.calls == [9, 4, 2, 2, 5, 2, 3, 1, 2, 1, 1]
    assert memory.out_of_memory == 6 and memory.failed == 1
    assert memory.as_dict()["fitted_after_split"] == [
        {"utterances": 1, "longest_s": 1.0},
        {"utterances": 2, "longest_s": 1.0},
    ]


def test_degenerate_inputs_fail_alone_with_a_reason_that_does_not_vary_per_clip() -> None:
    encoder = load_encoder("mfcc", "mfcc-stats", None, frame_length=4000, n_fft=4096)  # a 0.25 s minimum
    waves = [
        voice(1.0, 1),
        voice(0.1, 2),  # 1,600 samples: below the minimum
        np.zeros(16_000, np.float32),  # digital silence
        np.full(16_000, np.nan, np.float32),
        voice(0.2, 3),  # 3,200 samples: below the minimum too, same reason as the 0.1 s clip
        voice(1.5, 4),
    ]
    results = embed_each(encoder, waves, RATE, MemoryLog())
    short = "shorter than the encoder's minimum of 4000 samples"
    assert results[1:5] == [short, "digital silence (every sample is zero)", "contains NaN or infinite samples", short]
    for index in (0, 5):
        got = results[index]
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, encoder.embed([waves[index]], RATE)[0], rtol=0, atol=1e-6)


def test_zero_embeddings_fail_their_rows_and_other_errors_still_stop_the_run() -> None:
    class ZeroForLoud:
        checkpoint = load_encoder("mfcc", "mfcc-stats", None).checkpoint

        def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray:
            from runner.encoders.base import l2_normalise

            return l2_normalise(np.array([[0.0, 0.0] if np.abs(w).max() > 0.5 else [1.0, 2.0] for w in waves]))

    results = embed_each(ZeroForLoud(), [voice(0.5, 1), 3 * voice(0.5, 2), voice(0.5, 3)], RATE, MemoryLog())
    assert results[1] == "the encoder produced a zero or non-finite embedding"
    assert all(isinstance(results[i], np.ndarray) for i in (0, 2))

    class Broken(MemoryBudget):
        def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    with pytest.raises(RuntimeError, match="illegal memory access"):
        embed_each(Broken(0), [voice(0.5, 1)], RATE, MemoryLog())


def test_what_counts_as_out_of_memory() -> None:
    onnx_error = type("RuntimeException", (Exception,), {"__module__": "onnxruntime.capi.onnxruntime_pybind11_state"})
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory"))
    assert is_out_of_memory(onnx_error("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Failed to allocate memory"))
    assert is_out_of_memory(MemoryError())
    assert is_out_of_memory(
        RuntimeError("[enforce fail at alloc_cpu.cpp:121] DefaultCPUAllocator: can't allocate memory")
    )
    assert not is_out_of_memory(onnx_error("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Got invalid dimensions"))
    assert not is_out_of_memory(RuntimeError("out of memory"))  # torch's CUDA OOM has its own type


def test_a_failed_side_is_a_cache_entry_without_a_vector_that_names_the_encoder() -> None:
    device = MemoryBudget(budget=40_000, error=MemoryError)
    chain = [{"status": "applied", "reason": "", "details": {}}]
    items = [("k1", (voice(1.0, 1), RATE, chain)), ("k2", (None, RATE, [{"status": "failed", "reason": "x"}]))]
    items.append(("k3", (voice(3.0, 2), RATE, chain)))
    embedded = embed_realised(device, items)
    (k1, first), (k2, second), (k3, third) = embedded.entries
    assert (k1, k2, k3) == ("k1", "k2", "k3") and embedded.passes == 2
    assert first.vector is not None and first.encoder_failure is None and first.outcomes == chain
    assert second.vector is None and second.encoder_failure is None  # the chain failed: not the encoder's doing
    assert third == CachedEmbedding(None, [*chain, encoder_outcome("mfcc-stats", OUT_OF_MEMORY_ALONE)])
    assert third.encoder_failure == OUT_OF_MEMORY_ALONE and third.operator_outcomes == chain
    assert embedded.memory.out_of_memory == 2 and embedded.memory.failed == 1


ROSTER = """
checkpoints_root = "checkpoints"

[[encoders]]
label = "mfcc-stats"
dim = 38
kind = "mfcc"
family = "baseline"
paper = false
source = "no weights"

[[encoders]]
label = "mfcc-wide"
dim = 38
kind = "mfcc"
family = "baseline"
paper = false
source = "no weights: 0.25 s frames, so a 0.25 s minimum"
options = {{ frame_length = 4000, n_fft = 4096 }}
"""

RESEMBLYZER = """
[[encoders]]
label = "resemblyzer"
dim = 256
kind = "resemblyzer"
family = "speaker"
paper = false
source = "GE2E VoiceEncoder weights shipped inside the resemblyzer wheel"
options = { normalize_volume = true, trim_silence = false }
"""

CONFIG = """
[run]
name = "one-short-clip"
seed = 5
failure_policy = "{policy}"

[corpus]
name = "asterisk"
root = "{corpus}"

[encoders]
roster = "roster.toml"
labels = ["mfcc-stats", "mfcc-wide"]

[conditions]
"white-10dB" = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}]

[[experiments]]
id = "D01"
title = "clean vs white noise"
use = "interaction"
target_trials = 40
nontarget_trials = 40
factor_a = {{ name = "noise", levels = ["white-10dB"] }}
"""


@pytest.fixture(scope="module")
def one_short_clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The default corpus, 4 prompts per speaker, with one prompt cut to its first 0.1 s (real speech, 1,600
    samples) and its row of utterances.csv updated to match: the table a corpus build of such a clip would give."""
    from runner.corpora.asterisk import build_default_corpus
    from runner.corpora.base import UTTERANCES_FILE

    if not Path("/usr/share/asterisk/sounds/en_US_f_Allison").is_dir():
        pytest.skip("Debian's asterisk prompt packages are not installed (noxfile.py installs them as root)")
    folder = tmp_path_factory.mktemp("corpus")
    build_default_corpus(folder, max_per_speaker=4, progress=False)
    table = pd.read_csv(folder / UTTERANCES_FILE, dtype=str, keep_default_na=False)
    row = table.index[table["speaker"] == "allison-smith"][0]
    wav = folder / table.at[row, "path"]
    samples, rate = soundfile.read(wav, dtype="int16")
    soundfile.write(wav, samples[: rate // 10], rate, subtype="PCM_16")
    table.at[row, "duration_s"] = "0.1"
    table.at[row, "blake3"] = file_digest(wav).blake3
    table.to_csv(folder / UTTERANCES_FILE, index=False, lineterminator="\n")
    return folder, str(table.at[row, "utt_id"])


def short_clip_run(folder: Path, corpus: Path, policy: str, *options: str) -> subprocess.CompletedProcess[str]:
    from provenance.keys import generate_keypair

    (folder / "roster.toml").write_text(ROSTER.format())
    (folder / "run.toml").write_text(CONFIG.format(corpus=corpus, policy=policy))
    generate_keypair(folder / "run.key", folder / "run.pub")
    command = [sys.executable, "-m", "runner.cli", "run", str(folder / "run.toml"), "--out", str(folder / "out")]
    command += ["--key", str(folder / "run.key"), *options]
    environment = {**os.environ, "INTERBIAS_CACHE": str(folder / "cache")}
    return subprocess.run([*command, "--cache", str(folder / "cache")], capture_output=True, text=True, env=environment)


@pytest.mark.slow
def test_a_run_with_one_clip_below_an_encoders_minimum_finishes_with_the_side_counted(
    one_short_clip: tuple[Path, str], tmp_path: Path
) -> None:
    corpus, short_id = one_short_clip
    done = short_clip_run(tmp_path, corpus, "drop-trial")
    assert done.returncode == 0, done.stderr
    operators = json.loads((tmp_path / "out" / "operators.json").read_text())
    # The clip is one side per condition it is used under (clean, white noise) for the label whose minimum it is
    # below; mfcc-stats (a 400-sample minimum) embeds it.
    short = "shorter than the encoder's minimum of 4000 samples"
    assert operators["encoders"]["mfcc-stats"] == {"failed": 0, "reasons": {}}
    failed = operators["encoders"]["mfcc-wide"]["failed"]
    assert operators["encoders"]["mfcc-wide"] == {"failed": failed, "reasons": {short: failed}} and failed >= 1
    assert all(chain["failed"] == 0 for chain in operators["chains"].values())  # no operator failed
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    wide = results[results["model"] == "mfcc-wide"]
    assert (results[results["model"] == "mfcc-stats"]["n_unscored"] == 0).all()
    assert (wide["n_unscored"] > 0).any()
    for _, row in wide.iterrows():  # operators.json's records agree with the dropped trials, record by record
        assert (operators["records"][row["record_id"]]["failed"] > 0) == (row["n_unscored"] > 0)
    trials = pd.concat(pd.read_csv(path) for path in (tmp_path / "out" / "trials").glob("*.csv"))
    assert short_id in set(trials["enrol_utt"]) | set(trials["test_utt"])

    from audit.verify import AuditRequest, verify

    report = verify(AuditRequest(tmp_path / "out" / "results.csv", bundle=tmp_path / "out", key=tmp_path / "run.pub"))
    assert report["verdict"] == "pass", report["cause"]
    flags = {flag["id"]: flag for flag in report["flags"]}
    assert flags["operator-failures"]["severity"] == "warning"
    assert "D01.mfcc-wide.clean" in flags["operator-failures"]["records"]
    section = next(s for s in report["sections"] if s["id"] == "bundle-operators")
    assert any(
        row["chain"] == "encoder mfcc-wide" and row["reasons"] == f"{short}: {failed}" for row in section["table"]
    )


@pytest.mark.slow
def test_under_fail_run_the_same_failure_stops_the_run_in_one_line(
    one_short_clip: tuple[Path, str], tmp_path: Path
) -> None:
    done = short_clip_run(tmp_path, one_short_clip[0], "fail-run")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("run failed: ")
    assert "operator or encoder failure(s) under the fail-run policy" in done.stderr
    assert json.loads((tmp_path / "out" / "operators.json").read_text())["encoders"]["mfcc-wide"]["failed"] >= 1


@pytest.mark.slow
def test_dtype_is_recorded_and_a_numpy_encoder_keeps_its_own_precision(
    one_short_clip: tuple[Path, str], tmp_path: Path
) -> None:
    """--dtype bf16 on a run of numpy encoders: environment.json and each label's record say what was asked and
    what ran (fp32), so the embeddings and results are the fp32 run's bytes; fp16 on the CPU is refused before any
    work (no torch label here, so the MFCC run goes ahead)."""
    corpus = one_short_clip[0]
    plain, reduced = tmp_path / "fp32", tmp_path / "bf16"
    plain.mkdir()
    reduced.mkdir()
    assert short_clip_run(plain, corpus, "drop-trial").returncode == 0
    done = short_clip_run(reduced, corpus, "drop-trial", "--dtype", "bf16")
    assert done.returncode == 0, done.stderr
    environment = json.loads((reduced / "out" / "environment.json").read_text())["execution"]
    assert environment["requested_dtype"] == "bf16"
    assert environment["encoders"]["mfcc-wide"] == {
        "device": "cpu",
        "requested_device": "cpu",
        "dtype": "fp32",
        "requested_dtype": "bf16",
        "device_class": "cpu",
    }
    assert (plain / "out" / "results.csv").read_bytes() == (reduced / "out" / "results.csv").read_bytes()
    default = str(ROOT / "configs" / "default.toml")
    refused = subprocess.run(
        [sys.executable, "-m", "runner.cli", "run", default, "--out", str(tmp_path / "x"), "--dtype", "fp16"],
        capture_output=True,
        text=True,
        env={**os.environ, "INTERBIAS_CACHE": str(tmp_path / "cache")},
    )
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "error: --dtype fp16: needs CUDA for ecapa-tdnn, campplus-zh-en, resemblyzer, aasist;"
        " on the CPU use bf16 or fp32"
    )
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_vectors_of_another_device_class_are_never_taken_from_the_cache(
    one_short_clip: tuple[Path, str], tmp_path: Path
) -> None:
    """A run whose executor reports another device class (a GPU) finds none of the torch label's cached vectors
    and computes them again; the numpy label's (always the CPU's) are taken from the cache. The vectors are in fact
    computed on this CPU both times, so the results are the same bytes: what differs is only what was reused."""
    from runner.design.config import load_config
    from runner.execution import LocalExecutor
    from runner.pipeline import RunOptions, run

    class OtherDevice(LocalExecutor):
        def device_class(self, device: str) -> str:
            return "cuda NVIDIA H200 sm_90"

    (tmp_path / "roster.toml").write_text(ROSTER.format() + RESEMBLYZER)
    text = CONFIG.format(corpus=one_short_clip[0], policy="drop-trial")
    labels = 'labels = ["resemblyzer", "mfcc-stats"]'
    (tmp_path / "run.toml").write_text(text.replace('labels = ["mfcc-stats", "mfcc-wide"]', labels))
    config = load_config(tmp_path / "run.toml")
    first = run(config, tmp_path / "cpu", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    again = run(config, tmp_path / "again", RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0))
    other = run(
        config,
        tmp_path / "gpu",
        RunOptions(cache_root=tmp_path / "cache", progress=False, workers=0, executor=OtherDevice(0)),
    )
    sides = first.forward_passes // 2  # both labels embedded every side once
    assert first.embeddings_cached == 0 and again.forward_passes == 0 and again.embeddings_cached == 2 * sides
    assert other.forward_passes == sides and other.embeddings_cached == sides  # resemblyzer again, MFCC cached
    assert (tmp_path / "cpu" / "results.csv").read_bytes() == (tmp_path / "gpu" / "results.csv").read_bytes()
    execution = json.loads((tmp_path / "gpu" / "environment.json").read_text())["execution"]["encoders"]
    assert execution["resemblyzer"]["device_class"] == "cuda NVIDIA H200 sm_90"
    assert execution["mfcc-stats"]["device_class"] == "cpu"
