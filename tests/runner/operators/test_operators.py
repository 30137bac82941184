"""Operators: registry and specs, random streams, chains, and each operator's defining property.

Oracles are independent of the code under test: hand-written canonical JSON and digests, SNR and spectra
computed here with numpy/scipy, cross-correlation lags, Markov-chain theory for packet loss, tone frequencies.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import blake3
import numpy as np
import pytest
import soundfile
from scipy import signal

from provenance.digests import file_digest, tree_digest
from runner.operators import (
    REGISTRY,
    Chain,
    NoiseSources,
    Operator,
    OperatorSpecError,
    Outcome,
    chain_id,
    codecs,
    operator_from_spec,
    rng_for,
)
from runner.operators.audio import read_audio
from runner.operators.packet_loss import burst_lengths, gilbert_elliott_losses
from tests.runner.stressor_specs import STRESSOR_SPECS

pytestmark = pytest.mark.runner

SR = 16000
SPEECH_FILE = Path("/usr/share/asterisk/sounds/en_US_f_Allison/call-fwd-unconditional.g722")
MUSIC_DIR = Path("/usr/share/asterisk/moh")
SPEAKER_TONES_HZ = {"spk0": 310.0, "spk1": 530.0, "spk2": 770.0, "spk3": 1010.0, "spk4": 1330.0}

EXAMPLE_SPECS = [
    {"name": "white", "kwargs": {"snr_db": 5.0}},
    {"name": "pink", "kwargs": {"snr_db": 0.0}},
    {"name": "babble", "kwargs": {"snr_db": 10.0, "talkers": 3}},
    {"name": "music", "kwargs": {"snr_db": 5.0}},
    {"name": "codec", "kwargs": {"codec": "opus", "bitrate": 12000, "sample_rate": 0}},
    {"name": "telephony", "kwargs": {"law": "alaw"}},
    {"name": "packet_loss_random", "kwargs": {"rate": 0.1, "concealment": "repeat", "frame_ms": 20.0}},
    {
        "name": "packet_loss_bursty",
        "kwargs": {
            "p_good_to_bad": 0.05,
            "p_bad_to_good": 0.4,
            "loss_good": 0.0,
            "loss_bad": 1.0,
            "concealment": "fade",
            "frame_ms": 20.0,
        },
    },
    {"name": "speed", "kwargs": {"factor": 1.1}},
    {"name": "tempo", "kwargs": {"factor": 0.9}},
    {
        "name": "world_conversion",
        "kwargs": {"pitch_ratio": 1.2, "formant_ratio": 1.1, "f0_floor": 71.0, "f0_ceil": 800.0},
    },
    *STRESSOR_SPECS,
]


def tone(frequency: float, seconds: float, level: float = 0.3, sr: int = SR) -> np.ndarray:
    return (level * np.sin(2 * np.pi * frequency * np.arange(int(seconds * sr)) / sr)).astype(np.float32)


def snr_db(clean: np.ndarray, degraded: np.ndarray) -> float:
    clean64 = clean.astype(np.float64)
    noise = degraded.astype(np.float64) - clean64
    return float(10 * np.log10(np.sum(clean64**2) / np.sum(noise**2)))


def dominant_hz(wave: np.ndarray, sr: int = SR) -> float:
    spectrum = np.abs(np.fft.rfft(wave * np.hanning(len(wave))))
    return float(np.fft.rfftfreq(len(wave), 1 / sr)[np.argmax(spectrum)])


def power_at(wave: np.ndarray, frequency: float, sr: int = SR) -> float:
    """Power of ``wave`` within 5 Hz of ``frequency`` (Hann-windowed periodogram)."""
    spectrum = np.abs(np.fft.rfft(wave * np.hanning(len(wave)))) ** 2
    bins = np.abs(np.fft.rfftfreq(len(wave), 1 / sr) - frequency) <= 5
    return float(spectrum[bins].sum())


def xcorr_lag(reference: np.ndarray, degraded: np.ndarray, max_lag: int = 400) -> int:
    correlation = signal.correlate(degraded, reference, mode="full", method="fft")
    lags = signal.correlation_lags(len(degraded), len(reference), mode="full")
    window = np.abs(lags) <= max_lag
    return int(lags[window][np.argmax(correlation[window])])


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    if not SPEECH_FILE.is_file():
        pytest.skip(f"{SPEECH_FILE} missing: install asterisk-core-sounds-en-g722 (configs/system-packages.txt)")
    wave, rate = read_audio(SPEECH_FILE)
    assert rate == SR
    return wave


@pytest.fixture(scope="module")
def music_dir() -> Path:
    if not MUSIC_DIR.is_dir():
        pytest.skip(f"{MUSIC_DIR} missing: install asterisk-moh-opsound-g722 (configs/system-packages.txt)")
    return MUSIC_DIR


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five speakers, two utterances each; every speaker's audio is a tone at its own frequency."""
    root = tmp_path_factory.mktemp("corpus")
    rows = ["utt_id,speaker,path"]
    for speaker, frequency in SPEAKER_TONES_HZ.items():
        for take in range(2):
            relative = f"{speaker}/{speaker}_{take}.wav"
            (root / speaker).mkdir(exist_ok=True)
            soundfile.write(root / relative, tone(frequency, 0.7 + 0.2 * take), SR, subtype="PCM_16")
            rows.append(f"{speaker}_{take},{speaker},{relative}")
    (root / "utterances.csv").write_text("\n".join(rows) + "\n")
    return root / "utterances.csv"


# --- registry and specs ---------------------------------------------------------------------------------


def test_registry_holds_every_operator() -> None:
    assert set(REGISTRY) == {spec["name"] for spec in EXAMPLE_SPECS} | {"codec"}


@pytest.mark.parametrize("spec", EXAMPLE_SPECS, ids=lambda spec: spec["name"])
def test_spec_round_trips_through_json(spec: dict) -> None:
    operator = operator_from_spec(json.loads(json.dumps(spec)))
    assert operator.spec() == spec
    assert operator_from_spec(operator.spec()) == operator


def test_numbers_are_coerced_so_equal_specs_have_one_chain_id() -> None:
    as_int = [{"name": "white", "kwargs": {"snr_db": 5}}]
    assert chain_id(as_int) == chain_id([{"name": "white", "kwargs": {"snr_db": 5.0}}])
    assert chain_id(as_int) != chain_id([{"name": "white", "kwargs": {"snr_db": 6}}])
    hand_written = '[{"kwargs":{"snr_db":"5.0"},"name":"white"}]'  # provenance.canonical: a float is its repr
    assert chain_id(as_int) == blake3.blake3(hand_written.encode()).hexdigest()[:16]


def test_defaults_are_part_of_the_spec() -> None:
    expected = {"name": "white", "kwargs": {"snr_db": 10.0}}
    assert operator_from_spec({"name": "white", "kwargs": {}}).spec() == expected
    assert operator_from_spec({"name": "white"}).spec() == expected


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"name": "reverb", "kwargs": {}}, "unknown operator name 'reverb'"),
        ({"name": "white", "kwargs": {"snr": 5}}, "unknown kwargs ['snr']"),
        ({"name": "white", "kwargs": {"snr_db": "loud"}}, "snr_db must be a finite number"),
        ({"name": "white", "kwargs": {"snr_db": 99}}, "snr_db must be within [-30, 60]"),
        ({"name": "babble", "kwargs": {"talkers": True}}, "talkers must be an integer"),
        ({"name": "babble", "kwargs": {"sources": "x"}}, "bound at chain build"),
        ({"name": "codec", "kwargs": {"codec": "amr_nb", "bitrate": 9000}}, "offers bit rates"),
        ({"name": "codec", "kwargs": {"codec": "g722", "bitrate": 48000}}, "offers bit rates [64000]"),
        ({"name": "codec", "kwargs": {"codec": "flac", "bitrate": 1000}}, "codec must be one of"),
        ({"name": "codec", "kwargs": {"codec": "opus"}}, "bitrate"),
        ({"name": "telephony", "kwargs": {"law": "ulaw"}}, "law must be one of"),
        ({"name": "speed", "kwargs": {"factor": 1}}, "not 1"),
        (
            {"name": "packet_loss_random", "kwargs": {"concealment": "interpolate"}},
            "concealment must be one of",
        ),
        ({"kwargs": {}}, "expected exactly the keys"),
        (["white"], "expected a mapping"),
    ],
)
def test_bad_specs_raise_a_named_error(spec: object, problem: str) -> None:
    with pytest.raises(OperatorSpecError) as raised:
        operator_from_spec(spec)  # type: ignore[arg-type]
    assert isinstance(raised.value, ValueError)
    assert problem in str(raised.value)
    assert str(raised.value).startswith("operator spec ")


# --- random streams -------------------------------------------------------------------------------------


def test_rng_for_is_the_blake3_of_seed_utterance_and_canonical_spec() -> None:
    hand_written = '{"seed":7,"spec":{"kwargs":{"snr_db":"5.0"},"name":"white"},"utt_id":"u1"}'
    # The seed: the first 16 bytes of the digest, little-endian (the first 32 hex digits, byte order reversed).
    entropy = int("".join(reversed(textwrap.wrap(blake3.blake3(hand_written.encode()).hexdigest()[:32], 2))), 16)
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy))).random(4)
    np.testing.assert_array_equal(rng_for(7, "u1", {"name": "white", "kwargs": {"snr_db": 5}}).random(4), expected)


def test_rng_for_separates_utterances_seeds_specs_and_repeats() -> None:
    spec = {"name": "white", "kwargs": {"snr_db": 5}}
    draws = {
        "base": rng_for(1, "u1", spec).random(),
        "utt": rng_for(1, "u2", spec).random(),
        "seed": rng_for(2, "u1", spec).random(),
        "spec": rng_for(1, "u1", {"name": "white", "kwargs": {"snr_db": 6}}).random(),
        "repeat": rng_for(1, "u1", spec, occurrence=1).random(),
    }
    assert len(set(draws.values())) == len(draws)
    assert rng_for(1, "u1", spec).random() == draws["base"]


# --- chains ---------------------------------------------------------------------------------------------

COMPOUND = [
    {"name": "white", "kwargs": {"snr_db": 10}},
    {"name": "packet_loss_bursty", "kwargs": {"p_good_to_bad": 0.2, "p_bad_to_good": 0.5}},
    {"name": "codec", "kwargs": {"codec": "opus", "bitrate": 16000}},
]


def test_chain_is_deterministic_per_seed_and_utterance(speech: np.ndarray) -> None:
    chain = Chain.from_specs(COMPOUND)
    first = chain(speech, SR, seed=3, utt_id="u1")
    again = Chain.from_specs(json.loads(json.dumps(chain.specs())))(speech, SR, seed=3, utt_id="u1")
    other = chain(speech, SR, seed=3, utt_id="u2")
    assert first.status == "applied"
    assert [o.status for o in first.outcomes] == ["applied"] * 3
    assert first.wave.tobytes() == again.wave.tobytes()
    assert first.wave.tobytes() != other.wave.tobytes()


def test_operator_realises_the_same_noise_alone_and_in_a_chain(speech: np.ndarray) -> None:
    alone = Chain.from_specs(COMPOUND[:1])(speech, SR, seed=3, utt_id="u1")
    rng = rng_for(3, "u1", COMPOUND[0])
    direct, _, _ = operator_from_spec(COMPOUND[0])(speech, SR, rng, utt_id="u1")
    assert alone.wave.tobytes() == direct.tobytes()


def test_chain_stops_at_the_first_failure(speech: np.ndarray, tmp_path: Path) -> None:
    sources = NoiseSources(music_dir=tmp_path / "no-music-here")
    chain = Chain.from_specs([{"name": "music", "kwargs": {}}, {"name": "white", "kwargs": {}}], sources=sources)
    result = chain(speech, SR, seed=0, utt_id="u1")
    assert result.status == "failed"
    assert len(result.outcomes) == 1
    assert "does not exist" in result.outcomes[0].reason
    assert result.wave is speech


def test_empty_chain_is_the_clean_condition(speech: np.ndarray) -> None:
    result = Chain()(speech, SR, seed=0, utt_id="u1")
    assert result.status == "applied" and result.outcomes == () and result.wave is speech


def test_unchanged_output_is_reported_as_fallback(speech: np.ndarray) -> None:
    class PassThrough(Operator):
        name = "pass-through"

        def apply(self, wave, sr, rng, utt_id):
            return wave.copy(), sr, Outcome.applied("did nothing")

    _, _, outcome = PassThrough()(speech, SR, np.random.default_rng(0))
    assert outcome.status == "fallback"
    assert "identical to input" in outcome.reason


def test_bad_input_audio() -> None:
    white = operator_from_spec({"name": "white", "kwargs": {}})
    rng = np.random.default_rng(0)
    assert white(np.zeros(0, np.float32), SR, rng)[2].status == "failed"
    assert "non-finite" in white(np.array([0.1, np.nan], np.float32), SR, rng)[2].reason
    assert "silent" in white(np.zeros(100, np.float32), SR, rng)[2].reason
    with pytest.raises(TypeError):
        white(np.zeros(10), SR, rng)


# --- additive noise -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["white", "pink", "music", "babble"])
@pytest.mark.parametrize("target", [-5.0, 5.0, 20.0])
def test_noise_reaches_the_target_snr(name: str, target: float, corpus: Path, music_dir: Path) -> None:
    clean = tone(SPEAKER_TONES_HZ["spk0"], 1.0) * np.hanning(SR).astype(np.float32)
    sources = NoiseSources(utterances=corpus, music_dir=music_dir)
    chain = Chain.from_specs([{"name": name, "kwargs": {"snr_db": target}}], sources=sources)
    result = chain(clean, SR, seed=1, utt_id="spk0_0")
    assert result.status == "applied", result.outcomes
    assert abs(snr_db(clean, result.wave) - target) < 0.1
    assert result.outcomes[0].details["synthetic"] is (name in {"white", "pink"})
    assert ("synthetic" in result.outcomes[0].reason) is (name in {"white", "pink"})


@pytest.mark.parametrize(("name", "slope"), [("white", 0.0), ("pink", -1.0)])
def test_noise_spectrum_slope(name: str, slope: float) -> None:
    clean = tone(1000.0, 4.0, level=1e-4)
    noisy, _, _ = operator_from_spec({"name": name, "kwargs": {"snr_db": -30}})(clean, SR, np.random.default_rng(5))
    frequencies, psd = signal.welch(noisy - clean, fs=SR, nperseg=4096)
    band = (frequencies >= 30) & (frequencies <= 6000) & (np.abs(frequencies - 1000) > 20)
    fitted = np.polyfit(np.log10(frequencies[band]), np.log10(psd[band]), 1)[0]
    assert abs(fitted - slope) < 0.1


def test_babble_never_uses_the_target_speaker(corpus: Path) -> None:
    clean = tone(SPEAKER_TONES_HZ["spk2"], 1.0)
    chain = Chain.from_specs([{"name": "babble", "kwargs": {"talkers": 4, "snr_db": 0}}], sources=NoiseSources(corpus))
    for seed in range(3):
        result = chain(clean, SR, seed=seed, utt_id="spk2_1")
        babble = result.wave - clean
        used = str(result.outcomes[0].details["babble_utterances"]).split()
        assert len(used) == 4 and not any(utt.startswith("spk2") for utt in used)
        others = [power_at(babble, hz) for speaker, hz in SPEAKER_TONES_HZ.items() if speaker != "spk2"]
        assert power_at(babble, SPEAKER_TONES_HZ["spk2"]) < 1e-4 * min(others)


def test_babble_material_failures(corpus: Path) -> None:
    clean = tone(300.0, 0.5)
    rng = np.random.default_rng(0)
    too_many = operator_from_spec({"name": "babble", "kwargs": {"talkers": 5}}, sources=NoiseSources(corpus))
    assert "needs 5 other speakers, the table has 4" in too_many(clean, SR, rng, utt_id="spk0_0")[2].reason
    assert "not in the babble table" in too_many(clean, SR, rng, utt_id="stranger")[2].reason
    unbound = operator_from_spec({"name": "babble", "kwargs": {}})
    assert "none are bound" in unbound(clean, SR, rng, utt_id="spk0_0")[2].reason
    missing = NoiseSources(corpus.parent / "nothing.csv")
    failed = operator_from_spec({"name": "babble", "kwargs": {}}, sources=missing)(clean, SR, rng, utt_id="a")
    assert failed[2].status == "failed" and "does not exist" in failed[2].reason


def test_describe_names_material_by_digest(corpus: Path, tmp_path: Path) -> None:
    music = tmp_path / "music"
    music.mkdir()
    soundfile.write(music / "tune.wav", tone(440.0, 0.5), SR)
    chain = Chain.from_specs(EXAMPLE_SPECS[:4], sources=NoiseSources(corpus, music_dir=music))
    white, _, babble, music_op = chain.describe()
    assert white["synthetic"] is True and "material" not in white
    assert babble["material"]["blake3"] == file_digest(corpus).blake3
    assert music_op["material"]["blake3"] == tree_digest(music).blake3
    assert music_op["synthetic"] is False
    result = chain(tone(300.0, 0.5), SR, seed=0, utt_id="spk0_0")
    assert "tune.wav" in result.outcomes[3].reason
    assert NoiseSources().describe()["music"]["problem"] == "no music folder is bound"


# --- codecs and telephony -------------------------------------------------------------------------------

CODECS = [
    {"codec": "opus", "bitrate": 12000},
    {"codec": "opus", "bitrate": 8000, "sample_rate": 16000},
    {"codec": "amr_nb", "bitrate": 12200},
    {"codec": "amr_nb", "bitrate": 4750},
    {"codec": "mp3", "bitrate": 24000},
    {"codec": "g722", "bitrate": 64000},
    {"codec": "aac", "bitrate": 24000},
]


@pytest.mark.parametrize("kwargs", CODECS, ids=lambda kw: f"{kw['codec']}-{kw['bitrate']}")
def test_codec_is_aligned_same_length_and_changes_the_signal(kwargs: dict, speech: np.ndarray) -> None:
    out, sr, outcome = operator_from_spec({"name": "codec", "kwargs": kwargs})(speech, SR, np.random.default_rng(0))
    assert outcome.status == "applied", outcome.reason
    assert sr == SR and out.dtype == np.float32 and len(out) == len(speech)
    details = outcome.details
    assert -int(details["frame_size"]) < int(details["end_samples_trimmed"]) <= 2 * int(details["frame_size"])
    assert abs(xcorr_lag(speech, out)) <= 4  # 0.25 ms at 16 kHz
    assert snr_db(speech, out) < 45.0  # lossy: the signal really changed
    assert np.corrcoef(speech, out)[0, 1] > 0.5  # and it is still the same utterance
    assert 0.6 * kwargs["bitrate"] / 1000 <= float(details["kbps_realised"]) <= 1.3 * kwargs["bitrate"] / 1000


def test_unavailable_codec_fails_with_its_name(speech: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    fdk = codecs.CodecProfile("libfdk_aac", "adts", (16000,), (8000, 256000), 1024)
    monkeypatch.setitem(codecs.PROFILES, "aac", fdk)
    operator = operator_from_spec({"name": "codec", "kwargs": {"codec": "aac", "bitrate": 24000}})
    out, _, outcome = operator(speech, SR, np.random.default_rng(0))
    assert outcome.status == "failed"
    assert "'libfdk_aac' is not available" in outcome.reason
    assert out is speech


def test_codec_error_becomes_a_failed_outcome(speech: np.ndarray, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise codecs.av.error.InvalidDataError(-1094995529, "Invalid data found when processing input")

    monkeypatch.setattr(codecs, "round_trip", broken)
    operator = operator_from_spec({"name": "codec", "kwargs": {"codec": "mp3", "bitrate": 24000}})
    outcome = operator(speech, SR, np.random.default_rng(0))[2]
    assert outcome.status == "failed" and "InvalidDataError: [Errno -1094995529] Invalid data" in outcome.reason


@pytest.mark.parametrize("law", ["mulaw", "alaw"])
def test_telephony_band_limits(law: str) -> None:
    telephone = operator_from_spec({"name": "telephony", "kwargs": {"law": law}})
    gains = {}
    for frequency in (100.0, 1000.0, 3800.0, 6000.0):
        clean = tone(frequency, 1.0)
        out, _, outcome = telephone(clean, SR, np.random.default_rng(0))
        assert outcome.status == "applied" and len(out) == len(clean)
        middle = slice(SR // 10, -SR // 10)
        gains[frequency] = 10 * np.log10(np.sum(out[middle].astype(np.float64) ** 2) / np.sum(clean[middle] ** 2.0))
    assert abs(gains[1000.0]) < 0.5
    assert gains[100.0] < -30 and gains[3800.0] < -20 and gains[6000.0] < -30


@pytest.mark.parametrize("law", ["mulaw", "alaw"])
def test_g711_quantisation_noise_is_level_independent(law: str) -> None:
    """Log companding keeps the SQNR near 38 dB across levels (8-bit linear PCM would lose 20 dB here)."""
    telephone = operator_from_spec({"name": "telephony", "kwargs": {"law": law}})
    middle = slice(SR // 10, -SR // 10)
    for level_dbfs in (-10.0, -30.0):
        clean = tone(1000.0, 1.0, level=10 ** (level_dbfs / 20))
        out = telephone(clean, SR, np.random.default_rng(0))[0]
        assert 33.0 < snr_db(clean[middle], out[middle]) < 41.0


# --- packet loss ----------------------------------------------------------------------------------------


def test_gilbert_elliott_loss_rate_and_burst_length_match_theory() -> None:
    frames, p, r = 200_000, 0.05, 0.3
    lost = gilbert_elliott_losses(frames, p, r, 0.0, 1.0, np.random.default_rng(11))
    bursts = burst_lengths(lost)
    stationary_bad = p / (p + r)
    # Bursts are the bad-state sojourns: Geometric(r), mean 1/r, sd sqrt(1-r)/r; about frames*pi_good*p of
    # them.
    assert abs(bursts.mean() - 1 / r) < 5 * np.sqrt(1 - r) / r / np.sqrt(len(bursts))
    # Loss fraction: sum of ~n_bursts geometric lengths over frames; its sd follows from the two sojourn laws.
    n_cycles = frames * p * r / (p + r)
    rate_sd = np.sqrt(n_cycles * ((1 - r) / r**2 * (1 - stationary_bad) ** 2 + (1 - p) / p**2 * stationary_bad**2))
    assert abs(lost.mean() - stationary_bad) < 5 * rate_sd / frames
    assert abs(len(bursts) - n_cycles) < 5 * np.sqrt(n_cycles)


def test_gilbert_elliott_with_losses_in_both_states() -> None:
    frames, p, r, loss_good, loss_bad = 200_000, 0.1, 0.4, 0.02, 0.6
    lost = gilbert_elliott_losses(frames, p, r, loss_good, loss_bad, np.random.default_rng(12))
    bad = p / (p + r)
    expected = (1 - bad) * loss_good + bad * loss_bad
    # Variance of the mean of a hidden-Markov loss indicator: the per-frame variance plus the lag covariances
    # (loss_bad - loss_good)^2 pi_g pi_b lambda^k, lambda = 1 - p - r, summed over both sides.
    lam = 1 - p - r
    per_frame = expected * (1 - expected) + 2 * (loss_bad - loss_good) ** 2 * bad * (1 - bad) * lam / (1 - lam)
    assert abs(lost.mean() - expected) < 5 * np.sqrt(per_frame / frames)


def test_random_loss_rate_and_bursts_over_a_long_signal() -> None:
    wave = tone(200.0, 600.0) + 0.5  # 30,000 frames, none silent
    operator = operator_from_spec({"name": "packet_loss_random", "kwargs": {"rate": 0.2}})
    out, _, outcome = operator(wave, SR, np.random.default_rng(13))
    frames = out.reshape(-1, 320)
    lost = np.all(frames == 0, axis=1)
    assert outcome.details["frames_lost"] == lost.sum() and outcome.details["frames"] == 30_000
    assert abs(lost.mean() - 0.2) < 5 * np.sqrt(0.2 * 0.8 / 30_000)
    bursts = burst_lengths(lost)  # geometric runs: mean 1/(1-p), sd sqrt(p)/(1-p)
    assert abs(bursts.mean() - 1 / 0.8) < 5 * np.sqrt(0.2) / 0.8 / np.sqrt(len(bursts))
    np.testing.assert_array_equal(frames[~lost], wave.reshape(-1, 320)[~lost])


@pytest.mark.parametrize("concealment", ["repeat", "fade"])
def test_concealment_repeats_the_last_received_frame(concealment: str) -> None:
    wave = np.random.default_rng(0).uniform(0.1, 1.0, 320 * 400).astype(np.float32)
    spec = {"name": "packet_loss_random", "kwargs": {"rate": 0.3, "concealment": concealment}}
    out, _, outcome = operator_from_spec(spec)(wave, SR, np.random.default_rng(1))
    frames, source = out.reshape(-1, 320), wave.reshape(-1, 320)
    received = np.all(frames == source, axis=1)
    assert (~received).sum() == outcome.details["frames_lost"]
    last, run = None, 0
    for index in range(len(frames)):
        if received[index]:
            last, run = source[index], 0
            continue
        run += 1
        expected = np.zeros(320) if last is None else last * (0.5 ** (run - 1) if concealment == "fade" else 1.0)
        np.testing.assert_allclose(frames[index], expected, rtol=1e-6)


# --- time scale -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_speed_changes_duration_and_pitch(factor: float) -> None:
    clean = tone(200.0, 2.0)
    out, _, outcome = operator_from_spec({"name": "speed", "kwargs": {"factor": factor}})(
        clean, SR, np.random.default_rng(0)
    )
    assert abs(len(out) - len(clean) / factor) <= 1
    assert abs(dominant_hz(out) - 200.0 * factor) < 1.0
    assert abs(float(outcome.details["duration_ratio"]) - 1 / factor) < 1e-3


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_tempo_changes_duration_and_keeps_pitch(factor: float) -> None:
    clean = tone(200.0, 2.0)
    out, _, outcome = operator_from_spec({"name": "tempo", "kwargs": {"factor": factor}})(
        clean, SR, np.random.default_rng(0)
    )
    assert outcome.status == "applied"
    assert abs(len(out) / len(clean) - 1 / factor) < 0.01 / factor
    assert abs(dominant_hz(out) - 200.0) < 2.0


# --- audio helpers --------------------------------------------------------------------------------------


def test_read_audio_scales_16_bit_and_averages_channels(tmp_path: Path) -> None:
    stereo = np.array([[16384, -3277], [-32768, 0], [8192, 8192]], dtype=np.int16)
    soundfile.write(tmp_path / "stereo.wav", stereo, 8000, subtype="PCM_16")
    wave, rate = read_audio(tmp_path / "stereo.wav")
    assert rate == 8000 and wave.dtype == np.float32
    np.testing.assert_allclose(wave, [(0.5 - 0.100006103515625) / 2, -0.5, 0.25], atol=1e-7)


def test_codec_counts_clipping_in_its_reason() -> None:
    loud = np.array([0.5, 1.2, -1.5, 0.99] * 4000, dtype=np.float32)
    operator = operator_from_spec({"name": "codec", "kwargs": {"codec": "g722", "bitrate": 64000}})
    outcome = operator(loud, SR, np.random.default_rng(0))[2]
    assert outcome.details["clipped_samples"] == 8000
    assert "8000 samples clipped" in outcome.reason
    description = operator.describe()
    assert description["encoder"] == "g722" and description["libavcodec"].count(".") == 2


@pytest.mark.parametrize("length", [54622, 83124])  # 16 kHz lengths at which AMR-NB drains one extra frame
def test_amr_nb_extra_drain_frame_is_trimmed_not_failed(length: int, speech: np.ndarray) -> None:
    wave = np.resize(speech, length).astype(np.float32)
    spec = {"name": "codec", "kwargs": {"codec": "amr_nb", "bitrate": 12200}}
    out, _, outcome = operator_from_spec(spec)(wave, SR, np.random.default_rng(0))
    assert outcome.status == "applied", outcome.reason
    assert len(out) == length
