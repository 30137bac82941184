"""Every paper label loaded from a checkpoint of its published size and layout (random weights, synthesised
offline), embedding four short clips of different lengths: shape and dimension as the roster declares, the
batching the roster states (padded, except the ONNX graphs: equal lengths only), and the batched embeddings equal
to the one-at-a-time ones within 1e-5 cosine."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.encoders import EncoderConfigError, EncoderSpec, load_roster
from runner.encoders.synthesis import SYNTHESISED, synthesise
from schemas.errors import InputError
from tests.runner.synthesised_roster import write_synthesised_roster

pytestmark = [pytest.mark.runner, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"
PAPER = [spec.label for spec in load_roster(ROSTER, Path("/nowhere")) if spec.paper]
# Parameter counts of the published models (millions), and how close a synthesised folder must come.
PUBLISHED_MILLIONS = {
    "ecapa-tdnn": 20.8,
    "ecapa-tdnn-large": 14.7,
    "campplus": 7.2,
    "eres2net": 6.6,
    "rawnet3": 16.3,
    "xvector": 4.2,
    "wavlm-base-plus-sv": 101.0,
    "wav2vec2-base": 94.4,
    "hubert-base": 94.4,
    "wavlm-base": 94.4,
    "wavlm-large": 315.5,
    "data2vec-audio-base": 93.2,
}
LAYOUTS = {
    "speechbrain": {"hyperparams.yaml", "embedding_model.ckpt", "classifier.ckpt", "mean_var_norm_emb.ckpt"}
    | {"label_encoder.txt"},
    "transformers_ssl": {"config.json", "preprocessor_config.json", "model.safetensors"},
    "transformers_xvector": {"config.json", "preprocessor_config.json", "model.safetensors"},
    "onnx": {"model.onnx"},
}


def specs(root: Path) -> dict[str, EncoderSpec]:
    """The roster's entries at ``root``, without the real labels' pins (these folders are random-weight syntheses)."""
    roster = write_synthesised_roster(root / ".roster")
    return {spec.label: spec for spec in load_roster(roster, root)}


def test_the_twelve_labels_have_a_recipe_and_published_layouts(real_size_checkpoints: Path) -> None:
    assert sorted(SYNTHESISED) == sorted(PAPER) == sorted(PUBLISHED_MILLIONS)
    for label, spec in specs(real_size_checkpoints).items():
        if label not in PAPER:
            continue
        assert spec.checkpoint is not None
        files = {path.name for path in spec.checkpoint.iterdir()}
        assert files == LAYOUTS[spec.kind] | {"SYNTHESISED.json"}, label
        record = json.loads((spec.checkpoint / "SYNTHESISED.json").read_text())
        assert record["parameters"] / 1e6 == pytest.approx(PUBLISHED_MILLIONS[label], rel=0.02), label
        assert record["real_architecture"] is (label not in {"campplus", "eres2net", "rawnet3"})


@pytest.mark.parametrize("label", PAPER)
def test_every_loader_embeds_at_the_real_size_and_batches_exactly(
    real_size_checkpoint: Callable[[str], Path], label: str
) -> None:
    spec = specs(real_size_checkpoint(label))[label]
    encoder = spec.load(**spec.max_batch)  # the padded batches of the roster's limits, even where the CPU's are 1
    # Padded labels pad these to 101 frames; 51 / 101 * 101 > 51 in float32, so frame counting is exercised too.
    assert encoder.checkpoint.runtime["batching"]["equal_length_only"] is (spec.kind == "onnx")
    rng = np.random.default_rng(7)
    clips = [(rng.standard_normal(n) * 0.1).astype(np.float32) for n in (16000, 8000, 9600, 7200)]
    batched = encoder.embed(clips, 16000)
    assert batched.shape == (4, spec.dim)
    one_by_one = np.stack([encoder.embed([clip], 16000)[0] for clip in clips])
    assert np.min(np.sum(batched * one_by_one, axis=1)) > 1 - 1e-5
    assert encoder.checkpoint.files["SYNTHESISED.json"].size > 0  # the folder digest covers the marker too


def test_real_checkpoints_are_never_overwritten(tmp_path: Path) -> None:
    spec = specs(tmp_path)["xvector"]
    assert spec.checkpoint is not None
    spec.checkpoint.mkdir(parents=True)
    (spec.checkpoint / "embedding_model.ckpt").write_bytes(b"someone's real weights")
    with pytest.raises(EncoderConfigError, match="holds files that this command did not write"):
        synthesise([spec])
    assert (spec.checkpoint / "embedding_model.ckpt").read_bytes() == b"someone's real weights"


def test_the_command_names_unknown_labels_in_one_line(tmp_path: Path) -> None:
    arguments = ["checkpoints", "synthesise", str(tmp_path), "--labels", "nope", "--roster", str(ROSTER)]
    done = CliRunner().invoke(app, arguments)
    assert done.exit_code == 2
    expected = InputError(str(ROSTER), "labels not in the roster: ['nope']").line()
    assert done.stderr.strip() == f"error: {expected}"
