"""Checkpoint folders of the published size and layout, with random weights: every loader at its real size, offline.

``synthesise(root, labels)`` writes, for each of the paper's 12 labels, the folder its roster entry names under
the checkpoints root, laid out as the published checkpoint is: SpeechBrain ``hyperparams.yaml`` with the files
its pretrainer loads, transformers ``config.json`` + ``preprocessor_config.json`` + ``model.safetensors``, and
ONNX exports (``model.onnx``) with the input contract the roster's options declare. The weights are random
(seeded): embeddings from these folders mean nothing; they exist to check loading, memory and speed at the real
size without a network. ``SYNTHESISED`` says per label what the folder holds: the real architecture, or a
size-matched stand-in where the original code is not a dependency of this project (CAM++, ERes2Net, RawNet3).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from runner.encoders.checkpoint import EncoderConfigError
from runner.encoders.export import export_module
from runner.encoders.roster import EncoderSpec
from runner.encoders.weights import SYNTHESIS_MARKER

SEED = 20261201
VOXCELEB2_SPEAKERS = 5994  # classifier rows of the VoxCeleb2-trained heads
VOXCELEB12_SPEAKERS = 7205  # VoxCeleb1 dev + VoxCeleb2 dev: speechbrain's ECAPA and x-vector heads

# What both published SpeechBrain speaker models share: front end, normalisations, modules and pretrainer files.
FRONT = """\
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: !ref <n_mels>
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
    std_norm: False
"""
BACK = """\
mean_var_norm_emb: !new:speechbrain.processing.features.InputNormalization
    norm_type: global
    std_norm: False
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    embedding_model: !ref <embedding_model>
    mean_var_norm_emb: !ref <mean_var_norm_emb>
    classifier: !ref <classifier>
label_encoder: !new:speechbrain.dataio.encoder.CategoricalEncoder
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        embedding_model: !ref <embedding_model>
        mean_var_norm_emb: !ref <mean_var_norm_emb>
        classifier: !ref <classifier>
        label_encoder: !ref <label_encoder>
    paths:
        embedding_model: !ref <pretrained_path>/embedding_model.ckpt
        mean_var_norm_emb: !ref <pretrained_path>/mean_var_norm_emb.ckpt
        classifier: !ref <pretrained_path>/classifier.ckpt
        label_encoder: !ref <pretrained_path>/label_encoder.txt
"""

ECAPA_YAML = """\
# Layout of speechbrain/spkrec-ecapa-voxceleb: ECAPA-TDNN, C = 1024, 192-d, 80 mel bins (random weights)
pretrained_path: speechbrain/spkrec-ecapa-voxceleb
n_mels: 80
out_n_neurons: {speakers}
{front}embedding_model: !new:speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN
    input_size: !ref <n_mels>
    channels: [1024, 1024, 1024, 1024, 3072]
    kernel_sizes: [5, 3, 3, 3, 1]
    dilations: [1, 2, 3, 4, 1]
    attention_channels: 128
    lin_neurons: 192
classifier: !new:speechbrain.lobes.models.ECAPA_TDNN.Classifier
    input_size: 192
    out_neurons: !ref <out_n_neurons>
{back}"""


XVECTOR_YAML = """\
# Layout of speechbrain/spkrec-xvect-voxceleb: TDNN x-vector, 512-d, 24 mel bins (random weights)
pretrained_path: speechbrain/spkrec-xvect-voxceleb
n_mels: 24
out_n_neurons: {speakers}
{front}embedding_model: !new:speechbrain.lobes.models.Xvector.Xvector
    in_channels: !ref <n_mels>
    activation: !name:torch.nn.LeakyReLU
    tdnn_blocks: 5
    tdnn_channels: [512, 512, 512, 512, 1500]
    tdnn_kernel_sizes: [5, 3, 3, 1, 1]
    tdnn_dilations: [1, 2, 3, 1, 1]
    lin_neurons: 512
classifier: !new:speechbrain.lobes.models.Xvector.Classifier
    input_shape: [null, null, 512]
    activation: !name:torch.nn.LeakyReLU
    lin_blocks: 1
    lin_neurons: 512
    out_neurons: !ref <out_n_neurons>
{back}"""


@dataclass(frozen=True)
class Synthesised:
    """What a synthesised folder holds for one label, as the roster's readers should be told."""

    what: str
    real_architecture: bool
    write: Callable[[Path], int]  # writes the folder, returns the parameter count


# ---- speechbrain -------------------------------------------------------------------------------------------


def _speechbrain(yaml_template: str, speakers: int, dim: int) -> Callable[[Path], int]:
    def write(folder: Path) -> int:
        from hyperpyyaml import load_hyperpyyaml

        text = yaml_template.format(speakers=speakers, front=FRONT, back=BACK)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "hyperparams.yaml").write_text(text, encoding="utf-8")
        hparams = load_hyperpyyaml(text)
        torch.save(hparams["embedding_model"].state_dict(), folder / "embedding_model.ckpt")
        torch.save(hparams["classifier"].state_dict(), folder / "classifier.ckpt")
        normaliser = hparams["mean_var_norm_emb"]
        normaliser(torch.randn(8, 1, dim), torch.ones(8))  # some global statistics to save
        normaliser._save(folder / "mean_var_norm_emb.ckpt")
        encoder = hparams["label_encoder"]
        encoder.update_from_iterable([f"id{index:05d}" for index in range(speakers)])
        encoder.save(folder / "label_encoder.txt")
        return sum(p.numel() for p in hparams["embedding_model"].parameters())

    return write


# ---- transformers ------------------------------------------------------------------------------------------


def _transformers(
    model_class: str, config_class: str, preprocessor: dict[str, Any], **config: Any
) -> Callable[[Path], int]:
    def write(folder: Path) -> int:
        import transformers

        transformers.utils.logging.disable_progress_bar()
        model = getattr(transformers, model_class)(getattr(transformers, config_class)(**config)).eval()
        folder.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(folder, safe_serialization=True)
        extractor = transformers.Wav2Vec2FeatureExtractor(
            feature_size=1, sampling_rate=16000, padding_value=0.0, **preprocessor
        )
        extractor.save_pretrained(folder)
        return sum(p.numel() for p in model.parameters())

    return write


LARGE = {
    "hidden_size": 1024,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
    "feat_extract_norm": "layer",
    "do_stable_layer_norm": True,
    "conv_bias": True,
}
NORMALISE = {"do_normalize": True, "return_attention_mask": True}
RAW = {"do_normalize": False, "return_attention_mask": True}


# ---- ONNX --------------------------------------------------------------------------------------------------


class FbankEcapa(torch.nn.Module):
    """(batch, frames, 80) filterbanks -> embedding: speechbrain's ECAPA-TDNN at the given width."""

    def __init__(self, channels: int, attention: int, dim: int, last: int | None = None) -> None:
        super().__init__()
        from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

        widths = [channels] * 4 + [last or 3 * channels]
        self.ecapa = ECAPA_TDNN(80, channels=widths, attention_channels=attention, lin_neurons=dim)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return self.ecapa(feats).squeeze(1)


class WaveEcapa(torch.nn.Module):
    """(batch, samples) waveforms -> embedding: a learnt 25 ms / 10 ms filterbank (log magnitude, per-utterance
    mean removed) in front of an ECAPA-TDNN; RawNet3's input contract, not its architecture."""

    def __init__(self, channels: int, dim: int) -> None:
        super().__init__()
        self.filters = torch.nn.Conv1d(1, 80, kernel_size=400, stride=160, bias=False)
        self.body = FbankEcapa(channels, 128, dim)

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        spectrum = torch.log(self.filters(wave[:, None, :]).abs() + 1e-6)
        return self.body((spectrum - spectrum.mean(dim=-1, keepdim=True)).transpose(1, 2))


def _onnx(module: Callable[[], torch.nn.Module], input_kind: str) -> Callable[[Path], int]:
    def write(folder: Path) -> int:
        model = module().eval()
        export_module(model, input_kind, folder)
        return sum(p.numel() for p in model.parameters())

    return write


SYNTHESISED: dict[str, Synthesised] = {
    "ecapa-tdnn": Synthesised(
        "speechbrain ECAPA-TDNN C=1024, 192-d, in the spkrec-ecapa-voxceleb layout (4 files)",
        True,
        _speechbrain(ECAPA_YAML, VOXCELEB12_SPEAKERS, 192),
    ),
    "xvector": Synthesised(
        "speechbrain TDNN x-vector, 512-d, in the spkrec-xvect-voxceleb layout (4 files)",
        True,
        _speechbrain(XVECTOR_YAML, VOXCELEB12_SPEAKERS, 512),
    ),
    "wavlm-base-plus-sv": Synthesised(
        "WavLMForXVector at WavLM Base+ size (12 x 768, group norm) with the 512-d x-vector head",
        True,
        _transformers("WavLMForXVector", "WavLMConfig", NORMALISE, use_weighted_layer_sum=True, num_labels=1211),
    ),
    "wav2vec2-base": Synthesised(
        "Wav2Vec2Model Base (12 x 768, group norm)", True, _transformers("Wav2Vec2Model", "Wav2Vec2Config", NORMALISE)
    ),
    "hubert-base": Synthesised(
        "HubertModel Base (12 x 768, group norm)", True, _transformers("HubertModel", "HubertConfig", RAW)
    ),
    "wavlm-base": Synthesised(
        "WavLMModel Base (12 x 768, group norm)", True, _transformers("WavLMModel", "WavLMConfig", RAW)
    ),
    "wavlm-large": Synthesised(
        "WavLMModel Large (24 x 1024, layer norm)", True, _transformers("WavLMModel", "WavLMConfig", NORMALISE, **LARGE)
    ),
    "data2vec-audio-base": Synthesised(
        "Data2VecAudioModel Base (12 x 768)",
        True,
        _transformers("Data2VecAudioModel", "Data2VecAudioConfig", NORMALISE),
    ),
    "ecapa-tdnn-large": Synthesised(
        "ECAPA-TDNN C=1024, last layer 1536, 192-d on 80 fbank, as WeSpeaker's ECAPA1024 (about 14.7 M "
        "parameters) but built with speechbrain's ECAPA_TDNN module, ONNX",
        True,
        _onnx(lambda: FbankEcapa(1024, 128, 192, last=1536), "fbank"),
    ),
    "campplus": Synthesised(
        "size-matched stand-in for CAM++ (7.2 M parameters, 512-d): ECAPA-TDNN C=512 on 80 fbank, ONNX",
        False,
        _onnx(lambda: FbankEcapa(512, 128, 512), "fbank"),
    ),
    "eres2net": Synthesised(
        "size-matched stand-in for ERes2Net (6.6 M parameters, 192-d): ECAPA-TDNN C=528 on 80 fbank, ONNX",
        False,
        _onnx(lambda: FbankEcapa(528, 128, 192), "fbank"),
    ),
    "rawnet3": Synthesised(
        "size-matched stand-in for RawNet3 (16.3 M parameters, 256-d, raw waveform in): learnt filterbank + "
        "ECAPA-TDNN C=880, ONNX",
        False,
        _onnx(lambda: WaveEcapa(880, 256), "waveform"),
    ),
}


def synthesise(specs: Iterable[EncoderSpec], progress: Callable[[str], None] | None = None) -> dict[str, dict]:
    """Write the folder of each roster entry in ``specs`` at its checkpoint path; return what was written.

    An existing folder is replaced only if it holds a previous synthesis (its ``SYNTHESISED.json``): real
    checkpoints are never overwritten.
    """
    written = {}
    for spec in specs:
        recipe = SYNTHESISED.get(spec.label)
        if recipe is None or spec.checkpoint is None:
            raise EncoderConfigError(
                spec.label, f"no synthesised checkpoint for this label; known: {sorted(SYNTHESISED)}"
            )
        folder = spec.checkpoint
        marker = folder / SYNTHESIS_MARKER
        if folder.exists() and any(folder.iterdir()) and not marker.is_file():
            raise EncoderConfigError(spec.label, f"{folder} holds files that this command did not write; not replaced")
        torch.manual_seed(SEED)
        parameters = recipe.write(folder)
        record = {
            "label": spec.label,
            "what": recipe.what,
            "real_architecture": recipe.real_architecture,
            "parameters": parameters,
            "seed": SEED,
            "weights": "random: embeddings mean nothing",
        }
        marker.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        written[spec.label] = record
        if progress is not None:
            progress(f"{spec.label}: {parameters / 1e6:.1f} M parameters -> {folder}")
    return written
