"""The AASIST countermeasure (``runner.encoders.aasist``) against its own reference code path, and on bona fide
and spoof-like speech.

Oracle: the model's own ``forward`` from the installed ``AASIST.py`` (``Model(config)``, the pinned weights,
``eval()``), on clovaai's evaluation input (``data_utils.pad``: the first 64,600 samples, a shorter utterance
tiled) of the same speech, the score its ``output[:, 1]`` as clovaai's ``produce_evaluation_file`` takes it. The
weights are installed by ``interbias checkpoints install aasist`` (``nox -s tests`` does it and sets
``INTERBIAS_REAL_WEIGHTS=required``, so that their absence fails the suite instead of skipping it).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.runner, pytest.mark.slow]

torch = pytest.importorskip("torch")
soundfile = pytest.importorskip("soundfile")

from runner.corpora.asterisk import build_default_corpus  # noqa: E402
from runner.design import default_checkpoints_root  # noqa: E402
from runner.encoders import load_encoder  # noqa: E402
from runner.encoders.aasist import evaluation_input  # noqa: E402
from runner.encoders.roster import load_weight_pins  # noqa: E402
from tests.runner.real_weights import weights_absent  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"
CONTRACT = 64_600


@pytest.fixture(scope="module")
def folder() -> Path:
    """The installed AASIST folder (skipped, or failed under nox, when absent)."""
    path = default_checkpoints_root() / load_weight_pins(ROSTER)["aasist"].checkpoint
    if not path.is_dir():
        message = f"no installed AASIST under {path}: interbias checkpoints install aasist"
        weights_absent(message)
    return path


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> list[np.ndarray]:
    """The two shortest and the two longest of one utterance per speaker of the default corpus (16 kHz, float64 as
    soundfile reads it): both sides of the contract, tiled and cut."""
    import pandas as pd

    corpus = tmp_path_factory.mktemp("default-corpus")
    build_default_corpus(corpus, max_per_speaker=1, progress=False)
    table = pd.read_csv(corpus / "utterances.csv").sort_values("duration_s")
    return [soundfile.read(corpus / path)[0] for path in [*table["path"][:2], *table["path"][-2:]]]


def reference_scores(folder: Path, waves: list[np.ndarray]) -> np.ndarray:
    """clovaai's path: ``pad`` (``np.tile(x, (1, n))[:, :max_len][0]``), ``Tensor``, ``Model.forward``, ``[:, 1]``."""
    spec = importlib.util.spec_from_file_location("aasist_reference", folder / "AASIST.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Model(json.loads((folder / "AASIST_config.json").read_text()))
    model.load_state_dict(torch.load(folder / "AASIST.pth", map_location="cpu", weights_only=True))
    model.eval()
    scores = []
    with torch.no_grad():
        for wave in waves:
            padded = wave[:CONTRACT] if wave.size >= CONTRACT else np.tile(wave, (1, CONTRACT // wave.size + 1))
            x = torch.Tensor(np.asarray(padded).reshape(-1)[:CONTRACT])[None]
            scores.append(model(x)[1][:, 1].item())
    return np.array(scores)


def test_aasist_equals_its_own_forward_on_its_evaluation_contract(folder: Path, speech: list[np.ndarray]) -> None:
    lengths = [wave.size for wave in speech]
    assert min(lengths) < CONTRACT < max(lengths), lengths  # both sides of the contract: tiled and cut
    countermeasure = load_encoder("aasist", "aasist", folder, max_batch_size=4)
    ours = countermeasure.embed([wave.astype(np.float32) for wave in speech], 16_000)
    assert ours.shape == (len(speech), 1) and ours.dtype == np.float32
    np.testing.assert_allclose(ours[:, 0], reference_scores(folder, speech), rtol=0, atol=2e-5)
    alone = countermeasure.embed([speech[0].astype(np.float32)], 16_000)
    assert alone[0, 0] == pytest.approx(ours[0, 0], abs=1e-6)  # a score does not depend on its batch
    record = countermeasure.checkpoint
    assert record.kind == "aasist" and record.config["front_end"]["samples"] == CONTRACT
    assert set(record.files) == {"AASIST.py", "AASIST.pth", "AASIST_config.json"}


def test_bona_fide_and_spoof_like_inputs_give_finite_scores(folder: Path, speech: list[np.ndarray]) -> None:
    """Hand-made inputs: real speech, the same speech through a WORLD vocoder copy-synthesis (the default's
    spoofing proxy; skipped without pyworld), a vowel-like pulse train, and speech at 8 kHz (resampled to the
    model's rate first). Every score is finite, and a short utterance scores as its clovaai tiling does."""
    countermeasure = load_encoder("aasist", "aasist", folder, max_batch_size=4)
    wave = speech[0].astype(np.float32)
    t = np.arange(CONTRACT) / 16_000
    pulses = (0.3 * np.sign(np.sin(2 * np.pi * 120 * t)) * np.sin(2 * np.pi * 700 * t)).astype(np.float32)
    inputs = [wave, pulses]
    pyworld = pytest.importorskip("pyworld")
    f0, envelope, aperiodicity = pyworld.wav2world(wave.astype(np.float64), 16_000)
    inputs.append(pyworld.synthesize(f0, envelope, aperiodicity, 16_000).astype(np.float32))
    scores = countermeasure.embed(inputs, 16_000)[:, 0]
    assert np.isfinite(scores).all(), scores
    low_rate = countermeasure.embed([wave[::2].copy()], 8_000)
    assert np.isfinite(low_rate).all()
    short = wave[: CONTRACT // 3]
    tiled = countermeasure.embed([evaluation_input(short, CONTRACT)], 16_000)
    assert countermeasure.embed([short], 16_000)[0, 0] == pytest.approx(tiled[0, 0], abs=1e-6)
