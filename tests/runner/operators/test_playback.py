"""The playback chain preset: the same samples as its five operators run by hand on the spawned streams, and every
stage's realised figures in one outcome."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runner.operators import OperatorSpecError, codecs, operator_from_spec, rng_for
from runner.operators.audio import read_audio
from runner.operators.channels import Loudspeaker, Microphone
from runner.operators.codecs import Codec
from runner.operators.noise import PinkNoise
from runner.operators.rooms import RoomReverb

pytestmark = pytest.mark.runner

SPEECH_FILE = Path("/usr/share/asterisk/sounds/en_US_f_Allison/call-fwd-unconditional.g722")
PRESET = {"name": "playback_chain", "kwargs": {"snr_db": 15}}


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    wave, rate = read_audio(SPEECH_FILE)
    assert rate == 16000
    return wave


@pytest.mark.slow
def test_playback_chain_is_its_five_stages_in_order(speech: np.ndarray) -> None:
    preset = operator_from_spec(PRESET)
    out, sr, outcome = preset(speech, 16000, rng_for(4, "utt", preset))
    assert outcome.status == "applied", outcome.reason
    streams = rng_for(4, "utt", preset).spawn(5)
    stages = [
        Codec(codec="opus", bitrate=16000, sample_rate=16000),
        Loudspeaker(model="smartphone"),
        RoomReverb(),
        Microphone(model="laptop"),
        PinkNoise(snr_db=15.0),
    ]
    wave, rate = speech, 16000
    for stage, stream in zip(stages, streams, strict=True):
        wave, rate, _ = stage(wave, rate, stream, utt_id="utt")
    assert sr == rate and np.array_equal(out, wave)
    details = outcome.details
    for key in (
        "codec.kbps_realised",
        "loudspeaker.level_change_db",
        "room.rt60_s_realised",
        "room.drr_db",
        "microphone.level_change_db",
        "noise.snr_db_measured",
    ):
        assert key in details, key
    assert details["noise.snr_db_measured"] == pytest.approx(15.0, abs=0.01)
    assert 0.3 <= details["room.rt60_s_target"] <= 0.6
    assert details["loudspeaker.level_change_db"] < 0  # the small loudspeaker loses the low end of the voice


def test_a_failed_stage_fails_the_preset_and_is_named(speech: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(*args: object, **kwargs: object) -> None:
        raise codecs.CodecUnavailableError("encoder 'libopus' is not available in this PyAV build")

    monkeypatch.setattr(codecs, "round_trip", unavailable)
    preset = operator_from_spec(PRESET)
    out, _, outcome = preset(speech, 16000, rng_for(4, "utt", preset))
    assert outcome.status == "failed" and outcome.reason.startswith("playback chain, codec stage:")
    assert out is speech


def test_stage_kwargs_are_checked_when_the_preset_is_built() -> None:
    with pytest.raises(OperatorSpecError, match="opus"):
        operator_from_spec({"name": "playback_chain", "kwargs": {"codec": "opus", "codec_rate": 44100}})
