"""Encoders without model weights: batch plans, resampling, MFCC statistics, records, roster, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import blake3
import numpy as np
import pytest

from runner.encoders import (
    BatchPolicy,
    CheckpointError,
    EncoderConfigError,
    RosterError,
    WaveformError,
    load_encoder,
    load_roster,
    plan_batches,
    resample,
)
from runner.encoders.base import l2_normalise
from runner.encoders.batching import checked_waves
from runner.encoders.mfcc import MfccConfig, cepstra, frames_of, mel_filterbank

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"


def noise(seed: int, n: int, scale: float = 0.1) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(n) * scale).astype(np.float32)


# ---- batch plans and waveform checks -----------------------------------------------------------------------


def test_plan_batches_sorts_by_length_and_caps_batch_size() -> None:
    # lengths sorted: idx1=3, idx3=3, idx0=5, idx4=7, idx2=9
    plan = plan_batches([5, 3, 9, 3, 7], BatchPolicy(max_batch_size=2, max_batch_seconds=1e9), sample_rate=1)
    assert plan == [[1, 3], [0, 4], [2]]


def test_plan_batches_caps_padded_samples() -> None:
    # cap 12 samples: {3,3} pads to 6; adding 5 would pad to 15; 5+7 -> 14; 7+9 -> 18
    plan = plan_batches([5, 3, 9, 3, 7], BatchPolicy(max_batch_size=8, max_batch_seconds=12), sample_rate=1)
    assert plan == [[1, 3], [0], [4], [2]]
    assert plan_batches([20], BatchPolicy(max_batch_seconds=12), sample_rate=1) == [[0]]


def test_plan_batches_equal_length_only_never_pads() -> None:
    policy = BatchPolicy(max_batch_size=8, max_batch_seconds=1e9, equal_length_only=True)
    assert plan_batches([5, 3, 5, 3, 7], policy, sample_rate=1) == [[1, 3], [0, 2], [4]]


@pytest.mark.parametrize(
    ("wave", "problem"),
    [
        (np.zeros((2, 800), np.float32), "1-D"),
        (np.zeros(800, np.int16), "floating-point"),
        (np.full(800, np.nan, np.float32), "NaN"),
        (np.zeros(10, np.float32), "at least 400"),
        (np.full(800, 1000.0, np.float32), "looks like integer PCM"),
    ],
)
def test_bad_waveforms_are_named(wave: np.ndarray, problem: str) -> None:
    with pytest.raises(WaveformError, match=problem):
        checked_waves([noise(0, 800), wave], min_samples=400)


def test_zero_embedding_is_an_error_not_nan() -> None:
    with pytest.raises(FloatingPointError, match=r"rows \[1\]"):
        l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(l2_normalise(np.array([[3.0, 4.0]])), [[0.6, 0.8]])


def test_resample_keeps_a_sine() -> None:
    seconds, tone = 1.0, 440.0
    x8 = np.sin(2 * np.pi * tone * np.arange(int(8000 * seconds)) / 8000).astype(np.float32)
    x16 = resample(x8, 8000, 16000)
    expected = np.sin(2 * np.pi * tone * np.arange(int(16000 * seconds)) / 16000)
    assert len(x16) == 16000
    np.testing.assert_allclose(x16[400:-400], expected[400:-400], atol=2e-3)
    assert len(resample(np.zeros(44100, np.float32), 44100, 16000)) == 16000


# ---- MFCC statistics ---------------------------------------------------------------------------------------


def test_mfcc_frames_match_torchaudio() -> None:
    """Second algorithm: torchaudio's MFCC with the same window, filters, log floor and DCT."""
    torch = pytest.importorskip("torch")
    torchaudio = pytest.importorskip("torchaudio")
    config = MfccConfig(n_fft=400, preemphasis=0.0, include_c0=True)
    wave = noise(1, 8000)
    ours = cepstra(frames_of(wave, config), mel_filterbank(config), config)
    reference = torchaudio.transforms.MFCC(
        sample_rate=16000,
        n_mfcc=config.n_mfcc,
        log_mels=True,
        melkwargs={
            "n_fft": 400,
            "win_length": 400,
            "hop_length": 160,
            "f_min": config.f_min,
            "f_max": config.f_max,
            "n_mels": config.n_mels,
            "window_fn": torch.hamming_window,
            "center": False,
            "power": 2.0,
            "mel_scale": "htk",
            "norm": None,
        },
    )(torch.from_numpy(wave))
    np.testing.assert_allclose(ours, reference.numpy().T, atol=2e-3)


def test_mfcc_stats_shapes_norms_batching_and_gain_invariance() -> None:
    encoder = load_encoder("mfcc", "mfcc-stats", None)
    waves = [noise(i, n) for i, n in enumerate([16000, 9000, 12345, 16000])]
    batched = encoder.embed(waves, 16000)
    assert batched.shape == (4, 38) and batched.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-6)
    one_by_one = np.stack([encoder.embed([w], 16000)[0] for w in waves])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-6)
    np.testing.assert_array_equal(batched, encoder.embed(waves, 16000))
    # Without c0 a gain only shifts every log-mel energy by a constant, which the DCT puts in c0 alone.
    np.testing.assert_allclose(encoder.embed([3 * waves[0]], 16000), batched[:1], atol=1e-5)


def test_other_sample_rates_are_resampled_first() -> None:
    encoder = load_encoder("mfcc", "mfcc-stats", None)
    wave8 = noise(7, 8000)
    np.testing.assert_array_equal(encoder.embed([wave8], 8000), encoder.embed([resample(wave8, 8000, 16000)], 16000))


def test_mfcc_record_is_the_config_digest() -> None:
    encoder = load_encoder("mfcc", "mfcc-stats", None, n_mfcc=13)
    record = encoder.checkpoint.as_dict()
    # provenance.canonical by hand: sorted keys, no spaces, every float as the string of its repr.
    hand_written = (
        '{"f_max":"7600.0","f_min":"20.0","frame_length":400,"frame_shift":160,"include_c0":false,"n_fft":512,'
        '"n_mels":40,"n_mfcc":13,"preemphasis":"0.97","sample_rate":16000}'
    )
    assert record["config"] == {
        **json.loads(hand_written),
        **{"f_max": 7600.0, "f_min": 20.0, "preemphasis": 0.97},
    }
    expected = blake3.blake3(hand_written.encode())
    assert record["checkpoint_blake3"] == expected.hexdigest()
    assert record["files"] == {} and record["config"]["n_mfcc"] == 13 and record["kind"] == "mfcc"
    assert record["checkpoint_blake3"] != load_encoder("mfcc", "m", None).checkpoint.checkpoint_blake3
    assert encoder.embed([noise(0, 4000)], 16000).shape == (1, 24)
    on_gpu_run = load_encoder("mfcc", "m", None, device="cuda").checkpoint.runtime
    assert on_gpu_run["device"] == "cpu" and on_gpu_run["requested_device"] == "cuda"


# ---- load_encoder errors -----------------------------------------------------------------------------------


def test_load_encoder_rejects_what_it_does_not_know() -> None:
    with pytest.raises(EncoderConfigError, match="unknown loader kind 'nope'"):
        load_encoder("nope", "x", None)
    with pytest.raises(EncoderConfigError, match="bad mfcc option"):
        load_encoder("mfcc", "x", None, n_mfc=3)
    with pytest.raises(EncoderConfigError, match="unknown dtype"):
        load_encoder("mfcc", "x", None, dtype="fp8")  # type: ignore[arg-type]
    reduced = load_encoder("mfcc", "x", None, dtype="bf16").checkpoint  # numpy only: fp32, the request recorded
    assert reduced.runtime["dtype"] == "fp32" and reduced.runtime["requested_dtype"] == "bf16"
    assert reduced.cache_key == load_encoder("mfcc", "x", None).checkpoint.cache_key
    with pytest.raises(EncoderConfigError, match="has no weights"):
        load_encoder("mfcc", "x", Path("weights.pt"))
    with pytest.raises(EncoderConfigError, match="not options of kind 'onnx'"):
        load_encoder("onnx", "x", None, normalise=True)


def test_a_pinned_digest_must_match() -> None:
    with pytest.raises(CheckpointError, match="differs from the pinned"):
        load_encoder("mfcc", "x", None, expected_blake3="0" * 64)


# ---- roster ------------------------------------------------------------------------------------------------


def test_shipped_roster_has_the_papers_twelve_labels() -> None:
    specs = load_roster(ROSTER)
    paper = [s for s in specs if s.paper]
    assert len(paper) == 12 and len({s.label for s in specs}) == len(specs)
    assert sum(s.family == "speaker" for s in paper) == 7 and sum(s.family == "ssl" for s in paper) == 5
    labels = {s.label for s in paper}
    assert {"ecapa-tdnn", "ecapa-tdnn-large", "campplus", "eres2net", "rawnet3"} <= labels
    assert {"wav2vec2-base", "hubert-base", "wavlm-base", "wavlm-large"} <= labels
    assert all(s.kind == "transformers_ssl" for s in paper if s.family == "ssl")
    defaults = {s.label: s for s in specs if not s.paper}
    assert set(defaults) == {"campplus-zh-en", "resemblyzer", "mfcc-stats"}
    # every speaker encoder of the roster was trained on VoxCeleb, which the audit flags as training-overlap
    assert all({"voxceleb1", "voxceleb2"} & set(s.training_corpora) for s in paper if s.family == "speaker")
    assert defaults["mfcc-stats"].training_corpora == ()
    assert defaults["resemblyzer"].checkpoint is None and defaults["mfcc-stats"].checkpoint is None
    ecapa = next(s for s in specs if s.label == "ecapa-tdnn")
    assert ecapa.checkpoint == ROOT / "checkpoints" / "speechbrain/spkrec-ecapa-voxceleb"
    assert ecapa.as_dict()["checkpoint"] == (ROOT / "checkpoints/speechbrain/spkrec-ecapa-voxceleb").as_posix()
    assert json.loads(json.dumps(defaults["resemblyzer"].as_dict()))["options"]["trim_silence"] is False
    moved = load_roster(ROSTER, checkpoints_root=Path("/data/ckpt"))
    assert next(s for s in moved if s.label == "ecapa-tdnn").checkpoint == Path(
        "/data/ckpt/speechbrain/spkrec-ecapa-voxceleb"
    )
    assert next(s for s in specs if s.label == "mfcc-stats").load().embed([noise(0, 4000)], 16000).shape == (
        1,
        38,
    )


def test_a_missing_checkpoint_folder_is_named(tmp_path: Path) -> None:
    spec = next(s for s in load_roster(ROSTER, checkpoints_root=tmp_path) if s.label == "campplus")
    pytest.importorskip("onnxruntime")
    with pytest.raises(CheckpointError) as error:
        spec.load()
    assert str(tmp_path / "3d-speaker/campplus_voxceleb") in error.value.line()


ENTRY = 'label = "a"\nkind = "mfcc"\nfamily = "baseline"\nsource = "none"\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}[[encoders]]\n{ENTRY}', "row 2, column 'label'"),
        (
            f'checkpoints_root = "."\n[[encoders]]\n{ENTRY.replace("mfcc", "mfc")}',
            "unknown loader kind 'mfc'",
        ),
        (
            'checkpoints_root = "."\n[[encoders]]\nlabel = "b"\nkind = "speechbrain"\nfamily = "speaker"\n'
            'source = "s"\n',
            "column 'checkpoint': kind 'speechbrain' needs a checkpoint path",
        ),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}colour = "red"\n', "column 'colour'"),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}blake3 = "abc"\n', "64 lowercase hex"),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}training_corpora = "vox"\n', "list of corpus names"),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY.replace("baseline", "teacher")}', "unknown family"),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}dim = 0\n', "column 'dim': expected the embedding dimension"),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}dim = true\n', "column 'dim'"),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}max_batch = {{ seconds = -1 }}\n', "column 'max_batch'"),
        (f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}max_batch = {{ frames = 4 }}\n', "['samples', 'seconds']"),
        ("checkpoints_root = \n", "not valid TOML"),
        ('checkpoints_root = "."\n', "at least one [[encoders]]"),
    ],
)
def test_bad_rosters_give_one_clear_line(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "encoders.toml"
    path.write_text(body)
    with pytest.raises(RosterError) as error:
        load_roster(path)
    assert message in error.value.line() and str(path) in error.value.line()


def test_missing_roster_file(tmp_path: Path) -> None:
    with pytest.raises(RosterError, match="no such file \\(expected an encoder roster"):
        load_roster(tmp_path / "absent.toml")


def test_reading_the_roster_imports_no_torch() -> None:
    code = (
        "import sys, runner.encoders as e; e.load_roster(sys.argv[1]); "
        "sys.exit('torch' in sys.modules or 'transformers' in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code, str(ROSTER)], check=True, cwd=ROOT)


def test_a_labels_declared_max_batch_reaches_its_batch_policy(tmp_path: Path) -> None:
    path = tmp_path / "encoders.toml"
    path.write_text(
        f'checkpoints_root = "."\n[[encoders]]\n{ENTRY}dim = 38\nmax_batch = {{ samples = 3, seconds = 9.5 }}\n'
    )
    (spec,) = load_roster(path)
    assert spec.dim == 38 and spec.as_dict()["max_batch"] == {"max_batch_size": 3, "max_batch_seconds": 9.5}
    policy = spec.load().policy
    assert (policy.max_batch_size, policy.max_batch_seconds) == (3, 9.5)
    assert spec.load(max_batch_size=2).policy.max_batch_size == 2  # a caller's limit wins
