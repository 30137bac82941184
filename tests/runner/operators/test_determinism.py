"""Determinism of the stressor operators: the same (seed, utterance, spec) gives the same samples in this process,
in one worker and in two spawned worker processes that take the utterances in another order, and on a rerun."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import soundfile

from runner.operators import Chain, NoiseSources
from runner.operators.audio import read_audio
from tests.runner.stressor_specs import STRESSOR_SPECS

pytestmark = [pytest.mark.runner, pytest.mark.slow]

SR = 16000
PROMPTS = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
UTTERANCES = ["vm-goodbye", "vm-password"]
SEED = 11
ROOM = {"name": "room_reverb", "kwargs": {"rt60_min": 0.2, "rt60_max": 0.3}}
# Every new operator but the measured-RIR one (it needs a folder; its draw is one rng.integers call), in chains
# whose random draws interleave; rooms kept small so that the test stays short.
CHAINS = [
    [ROOM, {"name": "codec", "kwargs": {"codec": "opus", "bitrate": 12000, "sample_rate": 16000}}],
    [spec for spec in STRESSOR_SPECS if spec["name"] in {"band_limit", "microphone", "echo", "gain", "resample_chain"}],
    [{"name": "playback_chain", "kwargs": {"rt60_min": 0.2, "rt60_max": 0.3, "noise": "white"}}],
    [spec for spec in STRESSOR_SPECS if spec["name"] == "adversarial"],
]


def degrade_all(corpus: str, order: list[str]) -> dict[tuple[int, str], np.ndarray]:
    """Every chain on every utterance of ``order``; run in a worker process or in this one."""
    sources = NoiseSources(utterances=Path(corpus) / "utterances.csv")
    results = {}
    for utt_id in order:
        wave, _ = soundfile.read(Path(corpus) / f"{utt_id}.wav", dtype="float32")
        for index, specs in enumerate(CHAINS):
            result = Chain.from_specs(specs, sources=sources)(wave, SR, seed=SEED, utt_id=utt_id)
            assert result.status == "applied", result.outcomes
            results[(index, utt_id)] = result.wave
    return results


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("determinism")
    rows = ["utt_id,speaker,path"]
    for name in UTTERANCES:
        wave, rate = read_audio(PROMPTS / f"{name}.g722")
        soundfile.write(root / f"{name}.wav", wave[:rate], rate, subtype="FLOAT")
        rows.append(f"{name},allison,{name}.wav")
    (root / "utterances.csv").write_text("\n".join(rows) + "\n")
    return str(root)


def test_same_samples_across_worker_counts_orders_and_reruns(corpus: str) -> None:
    here = degrade_all(corpus, UTTERANCES)
    # Two spawned workers: one takes every utterance (a one-worker run), the two others split them, reversed.
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        single, *halves = pool.map(degrade_all, [corpus] * 3, [UTTERANCES, UTTERANCES[1:], UTTERANCES[:1]])
    rerun = degrade_all(corpus, UTTERANCES[::-1])
    for key, wave in here.items():
        from_workers = {**halves[0], **halves[1]}.get(key)
        for other in (from_workers, single[key], rerun[key]):
            assert other is not None and np.array_equal(wave, other), key
