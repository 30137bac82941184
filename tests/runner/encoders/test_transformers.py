"""transformers adapters with tiny random-weight WavLM / wav2vec 2.0 checkpoints saved with save_pretrained
and loaded back offline through the same code path: pooling, masks, batching, bf16, records, partials."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from runner.encoders import CheckpointError, load_encoder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from runner.encoders.hf_audio import conv_output_frames, receptive_field  # noqa: E402  (imports torch)

pytestmark = pytest.mark.runner

TINY = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "conv_dim": (32, 32, 32),
    "conv_stride": (5, 4, 2),
    "conv_kernel": (10, 8, 4),
    "num_conv_pos_embeddings": 16,
    "num_conv_pos_embedding_groups": 2,
    "xvector_output_dim": 16,
    "tdnn_dim": (16, 16, 32),
    "tdnn_kernel": (5, 3, 1),
}


def noise(seed: int, n: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(n) * 0.1).astype(np.float32)


WAVES = [noise(i, n) for i, n in enumerate([8000, 6000, 8000, 3000, 6000])]


def save(folder: Path, model: Any) -> Path:
    """``save_pretrained`` of the model and a normalising feature extractor (what a hub folder holds)."""
    model.save_pretrained(folder)
    transformers.Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True, return_attention_mask=True
    ).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def wavlm_layer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    torch.manual_seed(0)
    config = transformers.WavLMConfig(**TINY, feat_extract_norm="layer", do_stable_layer_norm=True)
    model = transformers.WavLMModel(config).eval()
    return save(tmp_path_factory.mktemp("wavlm"), model), model


def test_ssl_is_the_masked_mean_of_the_last_hidden_layer(wavlm_layer: tuple[Path, Any]) -> None:
    folder, model = wavlm_layer
    encoder = load_encoder("transformers_ssl", "tiny-wavlm", folder)
    embeddings = encoder.embed(WAVES, 16000)
    loaded = encoder.loaded.model  # type: ignore[attr-defined]
    assert not loaded.training and not any(p.requires_grad for p in loaded.parameters())
    assert embeddings.shape == (5, 32) and embeddings.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-6)
    # Oracle: the model run by hand on one normalised utterance, mean over all of its frames.
    with torch.no_grad():
        reference = model(normalised(WAVES[3])).last_hidden_state[0].mean(dim=0).numpy()
    np.testing.assert_allclose(embeddings[3], reference / np.linalg.norm(reference), atol=1e-5)


def test_ssl_padded_batches_equal_unbatched(wavlm_layer: tuple[Path, Any]) -> None:
    encoder = load_encoder("transformers_ssl", "tiny-wavlm", wavlm_layer[0])
    assert encoder.checkpoint.runtime["batching"]["equal_length_only"] is False
    assert encoder.checkpoint.runtime["batching"]["padding"] == "attention mask"
    batched = batched_equal_one_by_one(encoder)
    np.testing.assert_array_equal(batched, encoder.embed(WAVES, 16000))


def test_ssl_record_and_bf16(wavlm_layer: tuple[Path, Any]) -> None:
    folder = wavlm_layer[0]
    record = load_encoder("transformers_ssl", "tiny-wavlm", folder).checkpoint.as_dict()
    assert record["class"] == "transformers.models.wavlm.modeling_wavlm.WavLMModel"
    assert record["config"]["model_type"] == "wavlm"
    assert record["name"] == folder.name and str(folder.parent) not in json.dumps(record)
    for path in folder.iterdir():
        assert record["files"][path.name]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    bf16 = load_encoder("transformers_ssl", "tiny-wavlm", folder, dtype="bf16")
    assert bf16.checkpoint.runtime["dtype"] == "bf16"
    fp32 = load_encoder("transformers_ssl", "tiny-wavlm", folder).embed(WAVES, 16000)
    assert np.all(np.sum(bf16.embed(WAVES, 16000) * fp32, axis=1) > 0.99)


def batched_equal_one_by_one(encoder: Any) -> np.ndarray:
    """The batched embeddings of WAVES, after checking them against one-at-a-time ones (cosine and values)."""
    batched = encoder.embed(WAVES, 16000)
    one_by_one = np.stack([encoder.embed([w], 16000)[0] for w in WAVES])
    assert np.min(np.sum(batched * one_by_one, axis=1)) > 1 - 1e-5
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    return np.asarray(batched)


def normalised(wave: np.ndarray) -> torch.Tensor:
    """Zero mean, unit variance, as the preprocessor configs here ask (``do_normalize``)."""
    return torch.from_numpy((wave - wave.mean()) / np.sqrt(wave.var() + 1e-7))[None]


@pytest.mark.slow
@pytest.mark.parametrize("family", ["Wav2Vec2", "Hubert", "WavLM", "Data2VecAudio"])
def test_group_norm_models_batch_padded_with_a_per_utterance_feature_encoder(tmp_path: Path, family: str) -> None:
    torch.manual_seed(1)
    options = {"num_conv_pos_embeddings": 5, "conv_pos_kernel_size": 5} if family == "Data2VecAudio" else {}
    config = getattr(transformers, f"{family}Config")(**{**TINY, **options}, feat_extract_norm="group")
    model = getattr(transformers, f"{family}Model")(config).eval()
    encoder = load_encoder("transformers_ssl", "tiny-base", save(tmp_path, model))
    batching = encoder.checkpoint.runtime["batching"]
    assert batching["equal_length_only"] is False
    assert batching["padding"].startswith("per-utterance feature encoder, masked transformer")
    # data2vec-audio's five positional convolutions run per utterance as well (else cosines drop to 0.99)
    assert batching["padding"].endswith("per-utterance positional convolutions") is (family == "Data2VecAudio")
    batched = batched_equal_one_by_one(encoder)
    # Oracle: the unwrapped model on the first utterance alone, normalised as its preprocessor says.
    with torch.no_grad():
        reference = model(normalised(WAVES[0])).last_hidden_state[0].mean(dim=0).numpy()
    np.testing.assert_allclose(batched[0], reference / np.linalg.norm(reference), atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize(("dilation", "norm"), [((1, 2, 1), "layer"), ((1, 1, 1), "layer"), ((1, 2, 3), "group")])
def test_xvector_embeddings_and_batching(tmp_path: Path, dilation: tuple[int, ...], norm: str) -> None:
    torch.manual_seed(2)
    config = transformers.WavLMConfig(
        **TINY, tdnn_dilation=dilation, feat_extract_norm=norm, do_stable_layer_norm=norm == "layer"
    )
    model = transformers.WavLMForXVector(config).eval()
    encoder = load_encoder("transformers_xvector", "tiny-sv", save(tmp_path, model))
    # Dilated heads too: the loaded model pools over the frames its dilated TDNN layers really give.
    assert encoder.checkpoint.runtime["batching"]["equal_length_only"] is False
    batched = encoder.embed(WAVES, 16000)
    assert batched.shape == (5, 16)
    one_by_one = np.stack([encoder.embed([w], 16000)[0] for w in WAVES])
    assert np.min(np.sum(batched * one_by_one, axis=1)) > 1 - 1e-5
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    with torch.no_grad():
        reference = model(normalised(WAVES[0])).embeddings[0].numpy()
    np.testing.assert_allclose(batched[0], reference / np.linalg.norm(reference), atol=1e-5)


def test_a_speaker_head_with_its_labels_has_a_record(tmp_path: Path) -> None:
    """A speaker-verification head trained on N speakers (wavlm-base-plus-sv: 1,211) has id2label in its
    configuration, integer-keyed in transformers; the record holds it as config.json writes it (string keys), so
    its cache key can be computed (it could not: the canonical JSON refuses integer keys)."""
    config = transformers.WavLMConfig(**TINY, tdnn_dilation=(1, 2, 1), num_labels=3)
    encoder = load_encoder("transformers_xvector", "tiny-sv", save(tmp_path, transformers.WavLMForXVector(config)))
    written = json.loads((tmp_path / "config.json").read_text())
    assert (
        encoder.checkpoint.config["model_config"]["id2label"]
        == written["id2label"]
        == {
            "0": "LABEL_0",
            "1": "LABEL_1",
            "2": "LABEL_2",
        }
    )
    assert len(encoder.checkpoint.cache_key) == 64


def test_frame_formula_matches_the_model(wavlm_layer: tuple[Path, Any]) -> None:
    _, model = wavlm_layer
    for length in (3000, 3001, 8000):
        with torch.no_grad():
            frames = model(torch.zeros(1, length)).last_hidden_state.shape[1]
        assert conv_output_frames(np.array([length]), model.config)[0] == frames
    assert receptive_field(transformers.WavLMConfig()) == 400  # 25 ms at 16 kHz, the published figure
    # kernels (10, 8, 4), strides (5, 4, 2): 1 frame <- 4 <- (4 - 1) * 4 + 8 = 20 <- (20 - 1) * 5 + 10 = 105
    assert receptive_field(model.config) == 105


def test_weights_lacking_a_parameter_or_truncated_are_refused(wavlm_layer: tuple[Path, Any], tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    for path in wavlm_layer[0].iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    weights = load_file(tmp_path / "model.safetensors")
    dropped = sorted(weights)[-1]
    save_file({k: v for k, v in weights.items() if k != dropped}, tmp_path / "model.safetensors")
    with pytest.raises(CheckpointError, match="lack or mismatch parameters"):
        load_encoder("transformers_ssl", "partial", tmp_path)
    whole = (wavlm_layer[0] / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(CheckpointError, match="could not load"):
        load_encoder("transformers_ssl", "truncated", tmp_path)
    record = load_encoder("transformers_ssl", "whole", wavlm_layer[0]).checkpoint
    assert record.config["unused_checkpoint_keys"] == []


def test_partial_transformers_folders_are_named(wavlm_layer: tuple[Path, Any], tmp_path: Path) -> None:
    source = wavlm_layer[0]
    for name in ("config.json", "preprocessor_config.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    with pytest.raises(CheckpointError, match=r"no weights file"):
        load_encoder("transformers_ssl", "partial", tmp_path)
    index = {"metadata": {}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(CheckpointError) as error:
        load_encoder("transformers_ssl", "partial", tmp_path)
    assert error.value.line().startswith(str(tmp_path / "model-00001-of-00002.safetensors"))
    (tmp_path / "preprocessor_config.json").unlink()
    with pytest.raises(CheckpointError, match=r"preprocessor_config\.json"):
        load_encoder("transformers_xvector", "partial", tmp_path)
