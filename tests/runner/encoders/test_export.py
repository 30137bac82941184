"""ONNX exports against their originals, and the runner's filterbank front end against each recipe's.

Front-end parity runs on real recorded speech (a Debian asterisk prompt) with the options the shipped roster
gives each ONNX label. The export check runs the whole path a user runs: a torch model, exported, loaded by the
runner's ONNX loader with the roster's options, compared with the original fed by the recipe's front end. The
toolkits (WeSpeaker, 3D-Speaker, RawNet3) are not dependencies: the command is run here on a source folder
holding a small model class under 3D-Speaker's module path, which checks its import, export and comparison
steps, not 3D-Speaker's own code.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from runner.encoders import load_encoder, load_roster
from runner.encoders.export import (
    RECIPE_FRONT_ENDS,
    EmbeddingOnly,
    compare,
    export_module,
    main,
    speakerlab_front_end,
    wespeaker_front_end,
)
from runner.encoders.synthesis import FbankEcapa, WaveEcapa
from tests.runner.encoders.test_torch import decode

pytestmark = pytest.mark.runner

ROOT = Path(__file__).resolve().parents[3]
SPEECH = Path("/usr/share/asterisk/sounds/en_US_f_Allison/all-circuits-busy-now.g722")
ROSTER = {spec.label: spec for spec in load_roster(ROOT / "configs" / "encoders.toml", Path("/nowhere"))}
TOOLKIT_OF = {"ecapa-tdnn-large": "wespeaker", "campplus": "3d-speaker", "eres2net": "3d-speaker", "rawnet3": "rawnet3"}


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    return decode(SPEECH)


@pytest.fixture(scope="module")
def small_fbank_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.nn.Module]:
    torch.manual_seed(3)
    module = FbankEcapa(32, 16, 24).eval()
    folder = tmp_path_factory.mktemp("fbank")
    export_module(module, "fbank", folder)
    return folder, module


@pytest.mark.slow
@pytest.mark.parametrize("label", ["ecapa-tdnn-large", "campplus", "eres2net"])
def test_the_runners_fbank_equals_the_recipes_on_real_speech(
    label: str, speech: np.ndarray, small_fbank_export: tuple[Path, torch.nn.Module]
) -> None:
    encoder = load_encoder("onnx", label, small_fbank_export[0], **ROSTER[label].options)
    runner_side = encoder._features(speech)  # type: ignore[attr-defined]
    recipe = RECIPE_FRONT_ENDS[TOOLKIT_OF[label]](speech).numpy()
    assert runner_side.shape == recipe.shape == (1 + (len(speech) - 400) // 160, 80)
    np.testing.assert_allclose(runner_side, recipe, atol=2e-3, rtol=1e-4)
    # The parity has teeth: the other toolkit's recipe gives another front end on the same audio.
    other = wespeaker_front_end if TOOLKIT_OF[label] == "3d-speaker" else speakerlab_front_end
    assert np.max(np.abs(other(speech).numpy() - runner_side)) > 1.0


@pytest.mark.slow
def test_exported_fbank_model_matches_the_original(small_fbank_export: tuple[Path, torch.nn.Module]) -> None:
    folder, module = small_fbank_export
    rng = np.random.default_rng(4)
    clips = [(rng.standard_normal(n) * 0.1).astype(np.float32) for n in (8000, 12000, 16000)]
    for label in ("ecapa-tdnn-large", "campplus"):
        cosines = compare(module, TOOLKIT_OF[label], folder, ROSTER[label].options, clips)
        assert np.min(cosines) > 0.99999, label


@pytest.mark.slow
def test_exported_waveform_model_matches_the_original(tmp_path: Path, speech: np.ndarray) -> None:
    torch.manual_seed(5)
    module = WaveEcapa(32, 16).eval()
    export_module(module, "waveform", tmp_path)
    cosines = compare(module, "rawnet3", tmp_path, ROSTER["rawnet3"].options, [speech[:16000], speech[8000:20000]])
    assert np.min(cosines) > 0.99999


def test_a_wrong_front_end_option_is_caught(small_fbank_export: tuple[Path, torch.nn.Module]) -> None:
    folder, module = small_fbank_export
    clips = [(np.random.default_rng(6).standard_normal(12000) * 0.1).astype(np.float32)]
    wrong = {**ROSTER["campplus"].options, "window_type": "hamming", "cmn": False}
    assert np.min(compare(module, "3d-speaker", folder, wrong, clips)) < 0.999


CAMPPLUS_SOURCE = '''\
import torch


class CAMPPlus(torch.nn.Module):
    """A small module under 3D-Speaker's module path (the real CAM++ is not a dependency of this project)."""

    def __init__(self, feat_dim=80, embedding_size=512):
        super().__init__()
        self.conv = torch.nn.Conv1d(feat_dim, 16, kernel_size=3)
        self.out = torch.nn.Linear(16, embedding_size)

    def forward(self, x):
        return self.out(torch.relu(self.conv(x.transpose(1, 2))).mean(dim=-1))
'''


WESPEAKER_MODELS = '''\
import torch


class ECAPA_TDNN(torch.nn.Module):
    """A small module returning what WeSpeaker's speaker models return: (tensor(0.0), embedding)."""

    def __init__(self, feat_dim=80, embed_dim=16):
        super().__init__()
        self.seg_1 = torch.nn.Linear(2 * feat_dim, embed_dim)

    def forward(self, x):
        return torch.tensor(0.0), self.seg_1(torch.cat([x.mean(dim=1), x.std(dim=1)], dim=-1))


def get_speaker_model(name):
    return {"ECAPA_TDNN": ECAPA_TDNN}[name]
'''
WESPEAKER_CHECKPOINT = """\
import torch


def load_checkpoint(model, path):
    model.load_state_dict(torch.load(path, map_location="cpu"))
"""


def source_module(path: Path) -> Any:
    """The module at ``path``, imported on its own (to save weights the command will load)."""
    spec = importlib.util.spec_from_file_location(path.stem + "_source", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_export(arguments: list[str], source: Path, package: str) -> int:
    """The export command on ``source``, then its package dropped from sys.path and sys.modules."""
    try:
        return main([*arguments, "--source", str(source)])
    finally:
        sys.path.remove(str(source.resolve()))
        for name in [m for m in sys.modules if m.split(".")[0] == package]:
            del sys.modules[name]


@pytest.mark.slow
def test_the_export_command_builds_exports_and_compares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = tmp_path / "source" / "speakerlab" / "models" / "campplus"
    package.mkdir(parents=True)
    (package / "DTDNN.py").write_text(CAMPPLUS_SOURCE)
    torch.manual_seed(8)
    campplus = source_module(package / "DTDNN.py").CAMPPlus(feat_dim=80, embedding_size=512)
    torch.save(campplus.state_dict(), tmp_path / "campplus.bin")
    out = tmp_path / "3d-speaker" / "campplus_voxceleb"
    arguments = ["campplus", "--checkpoint", str(tmp_path / "campplus.bin"), "--out", str(out)]
    assert run_export(arguments, tmp_path / "source", "speakerlab") == 0
    assert (out / "model.onnx").is_file()
    assert "cosines against the original [1.0, 1.0, 1.0]" in capsys.readouterr().out


@pytest.mark.slow
def test_wespeaker_models_are_exported_with_their_embedding_as_the_one_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import onnx

    source = tmp_path / "source" / "wespeaker"
    for folder, name, text in (
        ("models", "speaker_model.py", WESPEAKER_MODELS),
        ("utils", "checkpoint.py", WESPEAKER_CHECKPOINT),
    ):
        (source / folder).mkdir(parents=True)
        (source / folder / name).write_text(text)
    torch.manual_seed(9)
    model = source_module(source / "models" / "speaker_model.py").ECAPA_TDNN(feat_dim=80, embed_dim=16)
    torch.save(model.state_dict(), tmp_path / "avg_model.pt")
    (tmp_path / "config.yaml").write_text("model: ECAPA_TDNN\nmodel_args:\n  feat_dim: 80\n  embed_dim: 16\n")
    with pytest.raises(TypeError, match="returns tuple, not one tensor"):
        export_module(model, "fbank", tmp_path / "bare")
    out = tmp_path / "wespeaker" / "voxceleb_ECAPA1024"
    arguments = ["wespeaker", "--checkpoint", str(tmp_path / "avg_model.pt"), "--config", str(tmp_path / "config.yaml")]
    assert run_export([*arguments, "--out", str(out)], tmp_path / "source", "wespeaker") == 0
    assert "cosines against the original [1.0, 1.0, 1.0]" in capsys.readouterr().out
    assert [output.name for output in onnx.load(str(out / "model.onnx")).graph.output] == ["embedding"]
    # Oracle: the model's second output, fed by WeSpeaker's front end, against the runner's embedding.
    clip = (np.random.default_rng(10).standard_normal(12000) * 0.1).astype(np.float32)
    with torch.no_grad():
        reference = model(wespeaker_front_end(clip)[None])[1][0].numpy()
    runner_side = load_encoder("onnx", "ecapa-tdnn-large", out, **ROSTER["ecapa-tdnn-large"].options).embed(
        [clip], 16000
    )
    np.testing.assert_allclose(runner_side[0], reference / np.linalg.norm(reference), atol=1e-5)
    assert isinstance(EmbeddingOnly(model)(torch.randn(1, 50, 80)), torch.Tensor)
