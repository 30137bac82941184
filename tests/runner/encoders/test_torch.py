"""speechbrain, ONNX and resemblyzer adapters: tiny random-weight checkpoints written to a temporary folder
and loaded back through the same code path, and resemblyzer's shipped weights on real recorded speech."""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
import torch

from runner.encoders import CheckpointError, EncoderConfigError, WaveformError, load_encoder

pytestmark = pytest.mark.runner

SOUNDS = Path("/usr/share/asterisk/sounds")

TINY_FRONT = """\
sample_rate: 16000
n_mels: 24
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
"""
TINY_ECAPA = (
    TINY_FRONT
    + """\
embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    channels: [32, 32, 32, 32, 96]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
    attention_channels: 16
    se_channels: 16
    lin_neurons: 16
classifier: !new:speechbrain.lobes.models.ECAPA_TDNN.Classifier
    input_size: 16
    out_neurons: 4
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
    classifier: !ref <classifier>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
"""
)


TINY_XVECTOR = (
    TINY_FRONT
    + """\
embedding_model: !new:speechbrain.lobes.models.Xvector.Xvector
    in_channels: !ref <n_mels>
    tdnn_blocks: 5
    tdnn_channels: [16, 16, 16, 16, 48]
    tdnn_kernel_sizes: [5, 3, 3, 1, 1]
    tdnn_dilations: [1, 2, 3, 1, 1]
    lin_neurons: 12
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
"""
)


def noise(seed: int, n: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(n) * 0.1).astype(np.float32)


WAVES = [noise(i, n) for i, n in enumerate([16000, 12000, 16000, 8000, 12000])]


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_files_digested(record: dict, folder: Path) -> None:
    """Every file in the folder is listed with the SHA-256 that hashlib gives; the folder is named, never located."""
    assert record["name"] == folder.name and str(folder.parent) not in json.dumps(record)
    on_disk = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}
    assert set(record["files"]) == set(on_disk)
    for name, path in on_disk.items():
        assert record["files"][name]["sha256"] == sha256_of(path)
        assert record["files"][name]["size"] == path.stat().st_size


# ---- speechbrain -------------------------------------------------------------------------------------------


def write_tiny_ecapa(folder: Path, hparams: str = TINY_ECAPA) -> torch.nn.Module:
    """A folder of ``hparams`` with the seeded weights of its embedding model (TINY_ECAPA's unless given)."""
    from hyperpyyaml import load_hyperpyyaml

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hyperparams.yaml").write_text(hparams)
    torch.manual_seed(0)
    model = load_hyperpyyaml(hparams)["embedding_model"]
    torch.save(model.state_dict(), folder / "embedding_model.ckpt")
    return model.eval()


@pytest.fixture(scope="module")
def ecapa_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ecapa")
    write_tiny_ecapa(folder)
    return folder


def test_speechbrain_embeds_with_the_saved_weights(ecapa_folder: Path) -> None:
    from speechbrain.lobes.features import Fbank
    from speechbrain.processing.features import InputNormalization

    encoder = load_encoder("speechbrain", "tiny-ecapa", ecapa_folder)
    embeddings = encoder.embed(WAVES, 16000)
    assert embeddings.shape == (5, 16) and embeddings.dtype == np.float32
    model = encoder.classifier  # type: ignore[attr-defined]
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-6)
    # Oracle: the front end and the model built by hand from the saved state dict.
    torch.manual_seed(123)  # a different init, overwritten by the saved weights
    from hyperpyyaml import load_hyperpyyaml

    model = load_hyperpyyaml(TINY_ECAPA)["embedding_model"].eval()
    model.load_state_dict(torch.load(ecapa_folder / "embedding_model.ckpt"))
    with torch.no_grad():
        feats = Fbank(n_mels=24)(torch.from_numpy(WAVES[0])[None])
        feats = InputNormalization(norm_type="sentence", std_norm=False)(feats, torch.ones(1))
        reference = model(feats, torch.ones(1)).squeeze().numpy()
    assert float(embeddings[0] @ (reference / np.linalg.norm(reference))) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow
def test_speechbrain_padded_batches_equal_unbatched_and_are_deterministic(ecapa_folder: Path) -> None:
    # WAVES pads 51- and 76-frame rows to 101 frames: 51 / 101 * 101 > 51 in float32 (relative_lengths' case).
    encoder = load_encoder("speechbrain", "tiny-ecapa", ecapa_folder, max_batch_size=4)
    batching = encoder.checkpoint.runtime["batching"]
    assert batching["equal_length_only"] is False and batching["padding"].startswith("per-utterance filterbank")
    assert "statistics_pooling_noise" not in batching  # ECAPA's attentive pooling adds none
    batched = encoder.embed(WAVES, 16000)
    one_by_one = np.stack([encoder.embed([w], 16000)[0] for w in WAVES])
    assert np.min(np.sum(batched * one_by_one, axis=1)) > 1 - 1e-5
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    np.testing.assert_array_equal(batched, encoder.embed(WAVES, 16000))
    # The check has teeth: speechbrain's own encode_batch on the zero-padded samples lets the padding in.
    lengths = np.array([len(w) for w in WAVES])
    padded = np.stack([np.pad(w, (0, lengths.max() - len(w))) for w in WAVES])
    with torch.inference_mode():
        recipe = encoder.classifier.encode_batch(
            torch.from_numpy(padded), torch.tensor(lengths / lengths.max()).float()
        )
    recipe_rows = recipe.squeeze(1).numpy() / np.linalg.norm(recipe.squeeze(1).numpy(), axis=1, keepdims=True)
    assert np.min(np.sum(recipe_rows * one_by_one, axis=1)) < 0.999


def test_speechbrain_xvector_batches_padded_with_seeded_pooling_noise(tmp_path: Path) -> None:
    from speechbrain.lobes.features import Fbank
    from speechbrain.processing.features import InputNormalization

    model = write_tiny_ecapa(tmp_path, TINY_XVECTOR)
    encoder = load_encoder("speechbrain", "tiny-xvector", tmp_path)
    batching = encoder.checkpoint.runtime["batching"]
    assert batching["equal_length_only"] is False
    assert batching["statistics_pooling_noise"] == "one draw for one row, seed 0, every row"
    torch.manual_seed(1)
    next_draw = torch.randn(1)
    torch.manual_seed(1)
    batched = encoder.embed(WAVES, 16000)
    assert torch.equal(torch.randn(1), next_draw)  # the global RNG is neither used nor reseeded
    one_by_one = np.stack([encoder.embed([w], 16000)[0] for w in WAVES])
    assert batched.shape == (5, 12)
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    np.testing.assert_array_equal(batched, encoder.embed(WAVES, 16000))
    # Oracle: speechbrain's own forward on one utterance with the global seed at 0 (its dither drawn for one row).
    with torch.inference_mode():
        feats = Fbank(n_mels=24)(torch.from_numpy(WAVES[3])[None])
        feats = InputNormalization(norm_type="sentence", std_norm=False)(feats, torch.ones(1))
        torch.manual_seed(0)
        reference = model(feats, torch.ones(1)).squeeze().numpy()
        torch.manual_seed(5)
        dithered_otherwise = model(feats, torch.ones(1)).squeeze().numpy()
    np.testing.assert_allclose(batched[3], reference / np.linalg.norm(reference), atol=1e-6)
    assert not np.array_equal(reference, dithered_otherwise)  # the dither is there, and the seed decides it


@pytest.mark.parametrize("skip_transpose", [True, False])
def test_reflect_past_end_gives_each_row_its_own_reflect_padding(skip_transpose: bool) -> None:
    from speechbrain.nnet.CNN import Conv1d

    from runner.encoders.speechbrain import ReflectPastEnd

    torch.manual_seed(3)
    conv = Conv1d(in_channels=4, out_channels=5, kernel_size=3, dilation=3, skip_transpose=skip_transpose).eval()
    frames = [20, 11, 7]
    rows = [torch.randn(1, 4, n) for n in frames]  # (batch, channels, time)
    padded = torch.zeros(3, 4, 20)
    for row, values in enumerate(rows):
        padded[row, :, : frames[row]] = values[0] + 0  # zeros past each end, as after padding
    layout = (lambda x: x) if skip_transpose else (lambda x: x.transpose(1, 2))
    padding = ReflectPastEnd(torch.nn.Sequential(conv))
    with torch.no_grad(), padding.past(frames):
        batched = layout(conv(layout(padded)))
    unhooked = layout(conv(layout(padded))).detach()
    for row, values in enumerate(rows):
        alone = layout(conv(layout(values))).detach()
        torch.testing.assert_close(batched[row : row + 1, :, : frames[row]], alone, atol=1e-6, rtol=1e-6)
        if frames[row] < 20:  # without the hook the last valid frames see zeros instead of the reflection
            assert not torch.allclose(unhooked[row : row + 1, :, : frames[row]], alone, atol=1e-4)


def test_relative_lengths_count_every_frame_for_every_speechbrain_consumer() -> None:
    from speechbrain.dataio.dataio import length_to_mask
    from speechbrain.processing.features import make_padding_mask

    from runner.encoders.speechbrain import relative_lengths

    plain_overshoots = 0
    rng = np.random.default_rng(11)
    every_pair = [list(range(1, longest + 1)) for longest in range(1, 500)]
    long_rows = [
        [*np.sort(rng.choice(longest - 1, 300, replace=False) + 1).tolist(), longest] for longest in (6007, 30011)
    ]
    for frames in every_pair + long_rows:  # up to 5 minutes of audio in one row
        longest = frames[-1]
        relative = relative_lengths(frames)
        expected = torch.tensor(frames)
        assert relative[-1] == 1.0
        assert torch.equal(length_to_mask(relative * longest, max_len=longest).sum(1).long(), expected)  # ECAPA
        stand_in = torch.zeros(len(frames), longest, 1)  # (batch, time, features) as InputNormalization sees it
        assert torch.equal(make_padding_mask(stand_in, relative).sum((1, 2)), expected)
        assert torch.equal(torch.round(relative * longest).long(), expected)  # statistics pooling
        plain = torch.tensor(frames, dtype=torch.float32) / longest
        plain_overshoots += int((length_to_mask(plain * longest, max_len=longest).sum(1).long() > expected).sum())
    assert plain_overshoots > 1000  # frames / longest alone lets a padding frame in, often


def test_speechbrain_batches_equal_lengths_only_where_padding_is_not_made_exact(tmp_path: Path) -> None:
    write_tiny_ecapa(tmp_path, TINY_ECAPA.replace("norm_type: sentence", "norm_type: batch"))
    encoder = load_encoder("speechbrain", "batch-norm-ecapa", tmp_path)
    batching = encoder.checkpoint.runtime["batching"]
    assert batching["equal_length_only"] is True and batching["padding"] == "none: equal lengths only"
    assert encoder.padding is None  # type: ignore[attr-defined]  (no hooks on a model batched unpadded)
    assert encoder.embed(WAVES, 16000).shape == (5, 16)


def test_speechbrain_record(ecapa_folder: Path) -> None:
    record = load_encoder("speechbrain", "tiny-ecapa", ecapa_folder).checkpoint.as_dict()
    assert record["class"] == "speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN"
    assert record["config"]["sample_rate"] == 16000 and record["config"]["loadables"] == ["embedding_model"]
    assert record["runtime"]["dtype"] == "fp32" and record["runtime"]["cudnn_deterministic"] is True
    assert_files_digested(record, ecapa_folder)
    assert len(record["checkpoint_blake3"]) == 64


def test_roster_label_loads_from_the_checkpoints_root_and_honours_its_pin(tmp_path: Path) -> None:
    from runner.encoders import load_roster

    roster = Path(__file__).resolve().parents[3] / "configs" / "encoders.toml"
    spec = next(s for s in load_roster(roster, checkpoints_root=tmp_path) if s.label == "ecapa-tdnn")
    write_tiny_ecapa(tmp_path / "speechbrain" / "spkrec-ecapa-voxceleb")
    # The shipped pin is the real weights' folder: a tiny random model in its place is refused.
    with pytest.raises(CheckpointError, match=f"differs from the pinned {spec.blake3}"):
        spec.load()
    digest = replace(spec, blake3=None).load().checkpoint.checkpoint_blake3
    pinned = replace(spec, blake3=digest)
    assert pinned.load().checkpoint.checkpoint_blake3 == digest
    (tmp_path / "speechbrain" / "spkrec-ecapa-voxceleb" / "notes.txt").write_text("one more file")
    with pytest.raises(CheckpointError, match="differs from the pinned"):
        pinned.load()


def test_speechbrain_hub_pretrained_path_is_redirected_to_the_folder(tmp_path: Path) -> None:
    hparams = TINY_ECAPA.replace("sample_rate: 16000\n", "sample_rate: 16000\npretrained_path: org/hub-model\n")
    hparams += "    paths:\n        embedding_model: !ref <pretrained_path>/embedding_model.ckpt\n"
    write_tiny_ecapa(tmp_path, hparams)
    encoder = load_encoder("speechbrain", "hub-named", tmp_path)
    assert encoder.checkpoint.config["overrides"] == {"pretrained_path": "$CHECKPOINT"}  # no machine's folder
    assert encoder.embed(WAVES[:1], 16000).shape == (1, 16)


def test_speechbrain_partial_or_missing_checkpoints_are_named(tmp_path: Path) -> None:
    write_tiny_ecapa(tmp_path)
    (tmp_path / "embedding_model.ckpt").unlink()
    with pytest.raises(CheckpointError) as error:
        load_encoder("speechbrain", "partial", tmp_path)
    assert error.value.line().startswith(str(tmp_path.resolve() / "embedding_model.ckpt"))
    (tmp_path / "hyperparams.yaml").unlink()
    with pytest.raises(CheckpointError, match=r"hyperparams\.yaml"):
        load_encoder("speechbrain", "partial", tmp_path)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_encoder("speechbrain", "absent", tmp_path / "nowhere")


def test_speechbrain_weights_lacking_a_parameter_are_refused(tmp_path: Path) -> None:
    write_tiny_ecapa(tmp_path)
    state = torch.load(tmp_path / "embedding_model.ckpt")
    torch.save({k: v for k, v in state.items() if not k.startswith("fc.")}, tmp_path / "embedding_model.ckpt")
    with pytest.raises(CheckpointError, match="lacks parameters of 'embedding_model'"):
        load_encoder("speechbrain", "partial", tmp_path)
    (tmp_path / "embedding_model.ckpt").write_bytes(b"truncated")
    with pytest.raises(CheckpointError, match="speechbrain could not load"):
        load_encoder("speechbrain", "truncated", tmp_path)
    with pytest.raises(CheckpointError, match="needs a checkpoint folder"):
        load_encoder("speechbrain", "none", None)


def test_cuda_or_bf16_requests_are_honoured_or_refused(ecapa_folder: Path) -> None:
    if not torch.cuda.is_available():
        with pytest.raises(EncoderConfigError, match="CUDA is not available"):
            load_encoder("speechbrain", "tiny-ecapa", ecapa_folder, device="cuda")
    bf16 = load_encoder("speechbrain", "tiny-ecapa", ecapa_folder, dtype="bf16")
    assert bf16.checkpoint.runtime["precision"] == "torch.autocast(bfloat16)"
    assert bf16.checkpoint.cache_key != load_encoder("speechbrain", "e", ecapa_folder).checkpoint.cache_key
    cosines = np.sum(bf16.embed(WAVES, 16000) * load_encoder("speechbrain", "e", ecapa_folder).embed(WAVES, 16000), 1)
    assert np.all(cosines > 0.95)


# ---- ONNX --------------------------------------------------------------------------------------------------


class TinyFbankEncoder(torch.nn.Module):
    """(batch, frames, 80) filterbanks -> 8-d embedding: conv, ReLU, temporal mean, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv1d(80, 16, kernel_size=3)
        self.out = torch.nn.Linear(16, 8)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.conv(feats.transpose(1, 2))).mean(dim=-1))


class TinyWaveEncoder(torch.nn.Module):
    """(batch, samples) waveforms -> 8-d: a 400-sample, stride-160 convolution, tanh, temporal mean."""

    def __init__(self) -> None:
        super().__init__()
        self.frame = torch.nn.Conv1d(1, 8, kernel_size=400, stride=160)

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.frame(wave[:, None, :])).mean(dim=-1)


def export(module: torch.nn.Module, example: torch.Tensor, folder: Path, axes: dict[int, str]) -> Path:
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated but needs no onnxscript
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            module.eval(),
            (example,),
            str(folder / "model.onnx"),
            input_names=["feats"],
            output_names=["embs"],
            dynamic_axes={"feats": axes, "embs": {0: "batch"}},
            dynamo=False,
        )
    return folder


@pytest.fixture(scope="module")
def fbank_onnx(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.nn.Module]:
    torch.manual_seed(0)
    module = TinyFbankEncoder()
    folder = export(module, torch.randn(2, 50, 80), tmp_path_factory.mktemp("onnx"), {0: "batch", 1: "frames"})
    return folder, module


def test_onnx_fbank_encoder_matches_the_torch_module(fbank_onnx: tuple[Path, torch.nn.Module]) -> None:
    from torchaudio.compliance import kaldi

    folder, module = fbank_onnx
    encoder = load_encoder("onnx", "tiny-onnx", folder, waveform_scale=32768.0)
    embeddings = encoder.embed(WAVES, 16000)
    assert embeddings.shape == (5, 8)
    with torch.no_grad():
        feats = kaldi.fbank(
            torch.from_numpy(WAVES[1] * 32768.0)[None], num_mel_bins=80, dither=0.0, window_type="hamming"
        )
        reference = module((feats - feats.mean(0))[None])[0].numpy()
    np.testing.assert_allclose(embeddings[1], reference / np.linalg.norm(reference), atol=1e-5)
    one_by_one = np.stack([encoder.embed([w], 16000)[0] for w in WAVES])
    np.testing.assert_allclose(embeddings, one_by_one, atol=1e-6)
    record = encoder.checkpoint.as_dict()
    assert record["config"]["input"] == "fbank" and record["runtime"]["provider"] == "CPUExecutionProvider"
    assert record["runtime"]["batching"]["equal_length_only"] is True
    assert_files_digested(record, folder)


def test_onnx_waveform_encoder(tmp_path: Path) -> None:
    torch.manual_seed(1)
    module = TinyWaveEncoder()
    folder = export(module, torch.randn(2, 16000), tmp_path, {0: "batch", 1: "samples"})
    encoder = load_encoder("onnx", "tiny-wave", folder, input="waveform")
    embeddings = encoder.embed(WAVES, 16000)
    with torch.no_grad():
        reference = module(torch.from_numpy(WAVES[3])[None])[0].numpy()
    np.testing.assert_allclose(embeddings[3], reference / np.linalg.norm(reference), atol=1e-5)


class LogitsAndEmbedding(torch.nn.Module):
    """(batch, frames, 80) -> (logits, 8-d embedding): a graph with two outputs, the embedding second."""

    def __init__(self) -> None:
        super().__init__()
        self.body = TinyFbankEncoder()
        self.head = torch.nn.Linear(8, 3)

    def forward(self, feats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        embedding = self.body(feats)
        return self.head(embedding), embedding


def test_onnx_graph_with_two_outputs_needs_the_embedding_named(tmp_path: Path) -> None:
    from runner.cli import failure_line

    pytest.importorskip("onnxruntime")
    torch.manual_seed(2)
    module = LogitsAndEmbedding().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            (torch.randn(2, 50, 80),),
            str(tmp_path / "model.onnx"),
            input_names=["feats"],
            output_names=["logits", "embedding"],
            dynamic_axes={"feats": {0: "batch", 1: "frames"}, "logits": {0: "batch"}, "embedding": {0: "batch"}},
            dynamo=False,
        )
    with pytest.raises(CheckpointError) as refused:
        load_encoder("onnx", "two-outputs", tmp_path)
    line, code = failure_line(refused.value)
    expected = "graph has 2 outputs ['logits', 'embedding']; name the embedding with the option output_name"
    assert (line, code) == (f"error: {tmp_path / 'model.onnx'}: {expected}", 2)
    encoder = load_encoder("onnx", "two-outputs", tmp_path, output_name="embedding")
    assert encoder.checkpoint.config["output_name"] == "embedding"
    feats = torch.from_numpy(encoder._features(WAVES[0]))[None]  # type: ignore[attr-defined]
    with torch.no_grad():
        reference = module(feats)[1][0].numpy()
    np.testing.assert_allclose(encoder.embed([WAVES[0]], 16000)[0], reference / np.linalg.norm(reference), atol=1e-5)


def test_onnx_errors(fbank_onnx: tuple[Path, torch.nn.Module], tmp_path: Path) -> None:
    folder, _ = fbank_onnx
    with pytest.raises(CheckpointError, match=r"model\.onnx"):
        load_encoder("onnx", "empty", tmp_path)
    reduced = load_encoder("onnx", "x", folder, dtype="bf16").checkpoint  # the graph's own precision, recorded
    assert reduced.runtime["dtype"] == "fp32" and reduced.runtime["requested_dtype"] == "bf16"
    with pytest.raises(CheckpointError, match="no output 'logits'"):
        load_encoder("onnx", "x", folder, output_name="logits")
    (tmp_path / "model.onnx").write_bytes(b"not a graph")
    with pytest.raises(CheckpointError, match="cannot load the graph"):
        load_encoder("onnx", "broken", tmp_path)


# ---- resemblyzer -------------------------------------------------------------------------------------------


def decode(path: Path) -> np.ndarray:
    """A G.722 prompt decoded with PyAV and converted to float32 mono samples in [-1, 1] at 16 kHz."""
    import av

    to_float = av.AudioResampler(format="flt", layout="mono", rate=16000)
    with av.open(str(path), format="g722") as container:
        frames = [f.to_ndarray() for frame in container.decode(audio=0) for f in to_float.resample(frame)]
        frames += [f.to_ndarray() for f in to_float.resample(None)]
    return np.concatenate(frames, axis=1)[0].astype(np.float32)


PROMPTS = ["all-circuits-busy-now", "agent-pass"]
SPEAKERS = ["en_US_f_Allison", "fr_CA_f_June", "it_IT_m_Carlo"]


@pytest.fixture(scope="module")
def resemblyzer() -> object:
    pytest.importorskip("resemblyzer")
    return load_encoder("resemblyzer", "resemblyzer", None)


@pytest.mark.skipif(not (SOUNDS / SPEAKERS[0]).is_dir(), reason="asterisk prompt packages not installed")
def test_resemblyzer_tells_speakers_apart_on_real_speech(resemblyzer: object) -> None:
    waves = [decode(SOUNDS / speaker / f"{prompt}.g722") for speaker in SPEAKERS for prompt in PROMPTS]
    speaker_of = np.repeat(np.arange(len(SPEAKERS)), len(PROMPTS))
    embeddings = resemblyzer.embed(waves, 16000)  # type: ignore[attr-defined]
    cosine = embeddings @ embeddings.T
    upper = np.triu(np.ones_like(cosine, dtype=bool), k=1)
    same = cosine[upper & (speaker_of[:, None] == speaker_of[None, :])]
    different = cosine[upper & (speaker_of[:, None] != speaker_of[None, :])]
    assert same.mean() > different.mean() + 0.1


@pytest.mark.slow
def test_resemblyzer_record_digests_the_shipped_weights(resemblyzer: object) -> None:
    import resemblyzer as package

    weights = Path(package.__file__).parent / "pretrained.pt"
    record = resemblyzer.checkpoint.as_dict()  # type: ignore[attr-defined]
    assert record["files"] == {
        "pretrained.pt": {
            "sha256": sha256_of(weights),
            "blake3": record["checkpoint_blake3"],
            "size": weights.stat().st_size,
        }
    }
    assert record["config"]["trim_silence"] is False and record["config"]["shipped_with_package"] is True
    assert record["name"] == "pretrained.pt" and str(weights.parent) not in json.dumps(record)
    assert record["config"]["unused_checkpoint_keys"] == ["similarity_bias", "similarity_weight"]
    waves = [noise(0, 4000), noise(1, 30000), noise(2, 9000)]
    batched = resemblyzer.embed(waves, 8000)  # type: ignore[attr-defined]
    assert batched.shape == (3, 256)
    one_by_one = np.stack([resemblyzer.embed([w], 8000)[0] for w in waves])  # type: ignore[attr-defined]
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)


def test_resemblyzer_partial_weights_fail(tmp_path: Path) -> None:
    pytest.importorskip("resemblyzer")
    from resemblyzer import VoiceEncoder

    state = VoiceEncoder(device="cpu", verbose=False).state_dict()
    partial = tmp_path / "partial.pt"
    torch.save({"model_state": {k: v for k, v in state.items() if not k.startswith("linear")}}, partial)
    with pytest.raises(CheckpointError, match="lack VoiceEncoder parameters"):
        load_encoder("resemblyzer", "partial", partial)
    with pytest.raises(CheckpointError, match="missing"):
        load_encoder("resemblyzer", "absent", tmp_path / "absent.pt")
    (tmp_path / "truncated.pt").write_bytes(partial.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="not a readable VoiceEncoder weights file"):
        load_encoder("resemblyzer", "truncated", tmp_path / "truncated.pt")


def test_resemblyzer_refuses_silence_and_can_trim(resemblyzer: object) -> None:
    with pytest.raises(WaveformError, match="waveform 1: digital silence"):
        resemblyzer.embed([noise(0, 8000), np.zeros(8000, np.float32)], 16000)  # type: ignore[attr-defined]
    trimming = load_encoder("resemblyzer", "trim", None, trim_silence=True)
    assert trimming.checkpoint.config["trim_silence"] is True
    padded = np.concatenate([np.zeros(32000, np.float32), noise(3, 16000), np.zeros(32000, np.float32)])
    assert trimming.embed([padded], 16000).shape == (1, 256)
