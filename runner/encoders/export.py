"""ONNX exports of the original WeSpeaker, 3D-Speaker and RawNet3 checkpoints, checked against the originals.

For a user who has an original checkpoint and the toolkit's source: ``python -m runner.encoders.export TOOLKIT
--source DIR --checkpoint FILE [--config FILE] --out FOLDER [--clips WAV ...]`` builds the toolkit's own model
class from its source checkout (as the toolkit's export or inference script does), exports it with
``export_module`` to ``FOLDER/model.onnx`` with the input contract the roster declares, then compares, on the
clips (or on seeded noise), the embeddings the runner's ONNX loader gives with those of the original model fed
by the recipe's own front end (``RECIPE_FRONT_ENDS``). A cosine below ``MIN_COSINE`` is an error: the export, or
the runner's front-end options for that label, do not match the original.

The toolkits are not dependencies of this project and nothing here downloads them; their model classes are
imported from the source folder given. ``RECIPES`` names, per toolkit, the class and the arguments of the
VoxCeleb models the roster lists.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

MIN_COSINE = 0.999
SAMPLE_RATE = 16000


class EmbeddingOnly(torch.nn.Module):
    """A toolkit model that returns a tuple, reduced to its last element, the embedding.

    WeSpeaker's speaker models return ``(embed_a, embed_b)`` (or ``(tensor(0.0), embed_a)`` with one embedding
    layer), the embedding last, as its own ``export_onnx.py`` and ``extract.py`` read them; exported as they
    are, the graph would have two outputs and the first would not be the embedding.
    """

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        output = self.model(features)
        return output[-1] if isinstance(output, tuple | list) else output


def export_module(module: torch.nn.Module, input_kind: str, folder: Path) -> Path:
    """``folder/model.onnx`` of ``module``: one input, ``(batch, samples)`` waveforms or ``(batch, frames, 80)``
    filterbanks with dynamic batch and time, one output ``embedding`` (TorchScript exporter, as the toolkits use).

    A module that returns several tensors is refused: wrap it (``EmbeddingOnly``) so that the graph's one output
    is the embedding."""
    example = torch.randn(1, SAMPLE_RATE) * 0.1 if input_kind == "waveform" else torch.randn(1, 200, 80)
    with torch.inference_mode():
        output = module.eval()(example)
    if not isinstance(output, torch.Tensor):
        raise TypeError(f"{type(module).__name__} returns {type(output).__name__}, not one tensor: wrap it")
    axes = {0: "batch", 1: "samples" if input_kind == "waveform" else "frames"}
    folder.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the TorchScript exporter warns about its deprecation and traced shapes
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module.eval(),
            (example,),
            str(folder / "model.onnx"),
            input_names=[input_kind],
            output_names=["embedding"],
            dynamic_axes={input_kind: axes, "embedding": {0: "batch"}},
            dynamo=False,
        )
    return folder / "model.onnx"


def _kaldi_fbank(wave: np.ndarray, scale: float, window_type: str) -> torch.Tensor:
    from torchaudio.compliance import kaldi

    return kaldi.fbank(
        torch.from_numpy(wave * np.float32(scale))[None],
        num_mel_bins=80,
        frame_length=25,
        frame_shift=10,
        dither=0.0,
        sample_frequency=SAMPLE_RATE,
        window_type=window_type,
    )


def wespeaker_front_end(wave: np.ndarray) -> torch.Tensor:
    """WeSpeaker's recipe (``wespeaker/dataset/processor.py`` compute_fbank, apply_cmvn): samples scaled to
    the 16-bit range, 80 Kaldi filterbanks, 25/10 ms, Hamming window, no dither, per-utterance mean removed."""
    feats = _kaldi_fbank(wave, 1 << 15, "hamming")
    return feats - feats.mean(dim=0, keepdim=True)


def speakerlab_front_end(wave: np.ndarray) -> torch.Tensor:
    """3D-Speaker's recipe (``speakerlab/process/processor.py`` FBank): samples as read, in [-1, 1], 80 Kaldi
    filterbanks with Kaldi's defaults (25/10 ms, Povey window), no dither, per-utterance mean removed."""
    feats = _kaldi_fbank(wave, 1.0, "povey")
    return feats - feats.mean(dim=0, keepdim=True)


def rawnet3_front_end(wave: np.ndarray) -> torch.Tensor:
    """RawNet3 (its ``infer.py``): the waveform as read, in [-1, 1]; the model does its own pre-emphasis."""
    return torch.from_numpy(wave)


RECIPE_FRONT_ENDS: dict[str, Callable[[np.ndarray], torch.Tensor]] = {
    "wespeaker": wespeaker_front_end,
    "3d-speaker": speakerlab_front_end,
    "rawnet3": rawnet3_front_end,
}


@dataclass(frozen=True)
class Recipe:
    """How a toolkit builds the roster's model from its source folder and checkpoint."""

    input_kind: str
    roster_options: dict[str, Any]
    build: Callable[[Path, Path | None], torch.nn.Module]


def _wespeaker(checkpoint: Path, config: Path | None) -> torch.nn.Module:
    """As ``wespeaker/bin/export_onnx.py``: the model named in the experiment's config.yaml, then its weights,
    returning the embedding alone (WeSpeaker's models return a tuple)."""
    import yaml

    if config is None:
        raise SystemExit("wespeaker needs --config (the experiment's config.yaml)")
    configs = yaml.safe_load(config.read_text())
    get_speaker_model = importlib.import_module("wespeaker.models.speaker_model").get_speaker_model
    load_checkpoint = importlib.import_module("wespeaker.utils.checkpoint").load_checkpoint
    model = get_speaker_model(configs["model"])(**configs["model_args"])
    load_checkpoint(model, str(checkpoint))
    return EmbeddingOnly(model)


def _campplus(checkpoint: Path, config: Path | None) -> torch.nn.Module:
    """As 3D-Speaker's ``speakerlab/bin/export_speaker_embedding_onnx.py`` for CAM++ on VoxCeleb (512-d)."""
    model = importlib.import_module("speakerlab.models.campplus.DTDNN").CAMPPlus(feat_dim=80, embedding_size=512)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    return model


def _eres2net(checkpoint: Path, config: Path | None) -> torch.nn.Module:
    """As 3D-Speaker's export script for ERes2Net on VoxCeleb (192-d)."""
    model = importlib.import_module("speakerlab.models.eres2net.ERes2Net").ERes2Net(feat_dim=80, embedding_size=192)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    return model


def _rawnet3(checkpoint: Path, config: Path | None) -> torch.nn.Module:
    """As RawNet3's ``infer.py``: ``RawNet3(Bottle2neck, ...)`` with the published arguments, ``model.pt``."""
    rawnet = importlib.import_module("models.RawNet3").RawNet3
    block = importlib.import_module("models.RawNetBasicBlock").Bottle2neck
    model = rawnet(
        block,
        model_scale=8,
        context=True,
        summed=True,
        encoder_type="ECA",
        nOut=256,
        out_bn=False,
        sinc_stride=10,
        log_sinc=True,
        norm_sinc="mean",
        grad_mult=1,
    )
    model.load_state_dict(torch.load(checkpoint, map_location="cpu")["model"])
    return model


FBANK_WESPEAKER = {"input": "fbank", "window_type": "hamming", "waveform_scale": 32768.0, "cmn": True}
FBANK_SPEAKERLAB = {"input": "fbank", "window_type": "povey", "waveform_scale": 1.0, "cmn": True}
RECIPES: dict[str, tuple[str, Recipe]] = {
    "wespeaker": ("wespeaker", Recipe("fbank", FBANK_WESPEAKER, _wespeaker)),
    "campplus": ("3d-speaker", Recipe("fbank", FBANK_SPEAKERLAB, _campplus)),
    "eres2net": ("3d-speaker", Recipe("fbank", FBANK_SPEAKERLAB, _eres2net)),
    "rawnet3": ("rawnet3", Recipe("waveform", {"input": "waveform", "waveform_scale": 1.0}, _rawnet3)),
}


def original_embeddings(
    module: torch.nn.Module, front_end: Callable[[np.ndarray], torch.Tensor], clips: Sequence[np.ndarray]
) -> np.ndarray:
    """The original model's embeddings, one clip at a time through the recipe's own front end."""
    rows = []
    with torch.inference_mode():
        for clip in clips:
            output = module.eval()(front_end(clip)[None])
            rows.append(output.reshape(-1).float().numpy())
    return np.stack(rows)


def compare(
    module: torch.nn.Module, toolkit: str, folder: Path, options: dict[str, Any], clips: Sequence[np.ndarray]
) -> np.ndarray:
    """Cosines between the runner's ONNX embeddings of ``folder`` (loaded with the roster ``options``) and the
    original ``module``'s, fed by ``toolkit``'s recipe front end, per clip."""
    from runner.encoders.base import load_encoder

    runner_side = load_encoder("onnx", f"export-check-{toolkit}", folder, **options).embed(list(clips), SAMPLE_RATE)
    original = original_embeddings(module, RECIPE_FRONT_ENDS[toolkit], clips)
    original = original / np.linalg.norm(original, axis=1, keepdims=True)
    return np.asarray(np.sum(runner_side * original, axis=1))


def _clips(paths: Sequence[Path]) -> list[np.ndarray]:
    """The given audio files at 16 kHz, or three seeded noise clips of 2, 3 and 4 s."""
    if not paths:
        rng = np.random.default_rng(0)
        return [(rng.standard_normal(n * SAMPLE_RATE) * 0.1).astype(np.float32) for n in (2, 3, 4)]
    import soundfile

    from runner.encoders.batching import resample

    clips = []
    for path in paths:
        samples, rate = soundfile.read(path, dtype="float32", always_2d=True)
        clips.append(resample(samples.mean(axis=1), rate, SAMPLE_RATE))
    return clips


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.encoders.export", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(RECIPES), help="which original (wespeaker: ECAPA1024 and others)")
    parser.add_argument("--source", type=Path, required=True, help="the toolkit's source checkout (put on sys.path)")
    parser.add_argument("--checkpoint", type=Path, required=True, help="the original weights file")
    parser.add_argument("--config", type=Path, help="wespeaker: the experiment's config.yaml")
    parser.add_argument("--out", type=Path, required=True, help="the roster's checkpoint folder to write")
    parser.add_argument("--clips", type=Path, nargs="*", default=[], help="audio to compare on (default: noise)")
    options = parser.parse_args(argv)
    toolkit, recipe = RECIPES[options.model]
    sys.path.insert(0, str(options.source.resolve()))
    module = recipe.build(options.checkpoint, options.config).eval()
    export_module(module, recipe.input_kind, options.out)
    cosines = compare(module, toolkit, options.out, recipe.roster_options, _clips(options.clips))
    print(f"{options.out / 'model.onnx'}: cosines against the original {np.round(cosines, 6).tolist()}")
    if np.min(cosines) < MIN_COSINE:
        print(f"error: the export does not match the original (minimum cosine {np.min(cosines):.6f})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
