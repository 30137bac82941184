"""Transfer adversarial perturbations: the torch surrogate equals the MFCC-statistics encoder it stands for, the
perturbation's norm is the declared budget, the realised SNR is the energy ratio, the attack lowers the surrogate's
cosine to the enrolment speaker (a real attack, not a no-op), PGD lowers it further than FGSM, the surrogate's digest
is part of the chain id, and the matched-noise control adds a perturbation of the attack's size in a random
direction."""

from __future__ import annotations

import json
import math
from pathlib import Path

import blake3
import numpy as np
import pytest
import soundfile

from runner.encoders.batching import BatchPolicy
from runner.encoders.mfcc import MfccConfig, MfccStatsEncoder
from runner.operators import NoiseSources, OperatorSpecError, chain_id, operator_from_spec, rng_for
from runner.operators.adversarial import TorchMfccStats, surrogate_blake3
from runner.operators.audio import read_audio

pytestmark = pytest.mark.runner

SR = 16000
PROMPTS = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
DIGEST = surrogate_blake3("mfcc-stats")


def spec(**kwargs: object) -> dict:
    return {"name": "adversarial", "kwargs": {"surrogate_blake3": DIGEST, **kwargs}}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real speaker (four asterisk prompts, 16 kHz) and the table that names them."""
    root = tmp_path_factory.mktemp("adv")
    rows = ["utt_id,speaker,path"]
    names = ["call-fwd-unconditional", "vm-goodbye", "vm-password", "vm-intro"]
    for name in names:
        wave, rate = read_audio(PROMPTS / f"{name}.g722")
        assert rate == SR
        soundfile.write(root / f"{name}.wav", wave, SR, subtype="FLOAT")
        rows.append(f"{name},allison,{name}.wav")
    (root / "utterances.csv").write_text("\n".join(rows) + "\n")
    return root


def load(corpus: Path, utt_id: str = "call-fwd-unconditional") -> np.ndarray:
    wave, _ = soundfile.read(corpus / f"{utt_id}.wav", dtype="float32")
    return wave[: 2 * SR]


def attack(corpus: Path, name: str = "adversarial", **kwargs: object) -> tuple[np.ndarray, np.ndarray, dict]:
    operator = operator_from_spec(
        {**spec(**kwargs), "name": name}, sources=NoiseSources(utterances=corpus / "utterances.csv")
    )
    wave = load(corpus)
    out, _, outcome = operator(
        wave, SR, rng_for(0, "call-fwd-unconditional", operator), utt_id="call-fwd-unconditional"
    )
    assert outcome.status == "applied", outcome.reason
    return wave, out, dict(outcome.details)


def test_torch_surrogate_equals_the_mfcc_statistics_encoder(corpus: Path) -> None:
    import torch

    wave = load(corpus)
    encoder = MfccStatsEncoder.load("mfcc", None, "cpu", "fp32", BatchPolicy())
    surrogate = TorchMfccStats(MfccConfig())
    vector = surrogate(torch.from_numpy(wave.astype(np.float64))).numpy()
    assert np.allclose(vector / np.linalg.norm(vector), encoder.embed([wave], SR)[0], atol=1e-5)
    assert encoder.checkpoint.checkpoint_blake3 == DIGEST


@pytest.mark.parametrize("norm", ["linf", "l2"])
def test_fgsm_norm_is_the_budget_and_lowers_the_cosine(corpus: Path, norm: str) -> None:
    wave, out, details = attack(corpus, attack="fgsm", norm=norm, epsilon_db=-40.0)
    delta = out.astype(np.float64) - wave.astype(np.float64)
    if norm == "linf":
        ratio = np.abs(delta).max() / np.abs(wave).max()
    else:
        ratio = np.linalg.norm(delta) / np.linalg.norm(wave.astype(np.float64))
    assert 20 * np.log10(ratio) == pytest.approx(-40.0, abs=0.01)
    if norm == "linf":
        assert details["perturbation_db_linf"] == pytest.approx(-40.0, abs=0.01)
    else:
        assert details["snr_db_realised"] == pytest.approx(40.0, abs=0.01)
    assert details["surrogate_cosine_after"] < details["surrogate_cosine_before"] - 0.01


def test_realised_snr_is_the_energy_ratio_and_not_the_linf_budget(corpus: Path) -> None:
    wave, out, details = attack(corpus, attack="fgsm", norm="linf", epsilon_db=-40.0)
    signal = wave.astype(np.float64)
    delta = out.astype(np.float64) - signal
    energy_ratio = math.fsum(signal**2) / math.fsum(delta**2)
    assert details["snr_db_realised"] == pytest.approx(10 * math.log10(energy_ratio), abs=1e-9)
    # FGSM fills the L-inf box (every sample +-epsilon but where the gradient is 0), so its SNR is the budget less
    # the peak-to-RMS ratio: far from the 40 dB the "-40 dB" label suggests.
    crest_db = 20 * math.log10(np.abs(signal).max() / math.sqrt(math.fsum(signal**2) / len(signal)))
    assert details["snr_db_realised"] == pytest.approx(40.0 - crest_db, abs=0.05)
    assert details["snr_db_realised"] < 30.0


@pytest.mark.parametrize("norm", ["linf", "l2"])
def test_pgd_stays_in_the_budget_and_beats_fgsm(corpus: Path, norm: str) -> None:
    _, _, fgsm = attack(corpus, attack="fgsm", norm=norm, epsilon_db=-40.0)
    _, _, pgd = attack(corpus, attack="pgd", norm=norm, epsilon_db=-40.0, steps=10)
    if norm == "linf":
        assert pgd["perturbation_db_linf"] <= -40.0 + 0.01
    else:
        assert pgd["snr_db_realised"] >= 40.0 - 0.01
    assert pgd["surrogate_cosine_after"] < fgsm["surrogate_cosine_after"]
    assert pgd["surrogate_cosine_before"] == pytest.approx(fgsm["surrogate_cosine_before"])


def test_attack_is_seeded_by_its_stream(corpus: Path) -> None:
    _, first, _ = attack(corpus, attack="pgd", norm="l2", steps=3)
    _, again, _ = attack(corpus, attack="pgd", norm="l2", steps=3)
    assert np.array_equal(first, again)


@pytest.mark.parametrize(("kind", "norm"), [("fgsm", "linf"), ("pgd", "l2"), ("pgd", "linf")])
def test_matched_noise_has_the_attacks_size_in_a_random_direction(corpus: Path, kind: str, norm: str) -> None:
    wave, attacked, attack_details = attack(corpus, attack=kind, norm=norm, epsilon_db=-40.0)
    _, noisy, details = attack(corpus, "matched_noise", attack=kind, norm=norm, epsilon_db=-40.0)
    signal = wave.astype(np.float64)
    attack_delta, noise = attacked.astype(np.float64) - signal, noisy.astype(np.float64) - signal
    # The size of the attack's own realisation on this utterance (PGD's random start included), to float32 rounding
    # of the written audio: the same energy, and for an L-inf attack the same L-inf norm.
    assert np.linalg.norm(noise) == pytest.approx(np.linalg.norm(attack_delta), rel=1e-4)
    if norm == "linf":
        assert np.abs(noise).max() == pytest.approx(np.abs(attack_delta).max(), rel=1e-4)
    assert details["snr_db_realised"] == pytest.approx(attack_details["snr_db_realised"], abs=1e-3)
    assert details["snr_db_realised"] == pytest.approx(
        10 * math.log10(math.fsum(signal**2) / math.fsum(noise**2)), abs=1e-9
    )
    # A random direction: the cosine with the attack's is near 0 (one sample of it has sd 1/sqrt(32000) = 0.006).
    cosine = float(noise @ attack_delta / (np.linalg.norm(noise) * np.linalg.norm(attack_delta)))
    assert abs(cosine) < 0.03
    assert details["attack_direction_cosine"] == pytest.approx(cosine, abs=1e-3)
    assert details["attack_surrogate_cosine_after"] == pytest.approx(attack_details["surrogate_cosine_after"])
    assert details["surrogate_cosine_before"] == pytest.approx(attack_details["surrogate_cosine_before"])


def test_budget_is_described_with_the_snr_it_gives() -> None:
    linf = operator_from_spec(spec(norm="linf", epsilon_db=-40.0)).describe()["budget"]
    l2 = operator_from_spec({**spec(norm="l2", epsilon_db=-30.0), "name": "matched_noise"}).describe()["budget"]
    assert "of the peak" in linf and "not an SNR" in linf and "snr_db_realised" in linf
    assert "an SNR of 30 dB" in l2 and "snr_db_realised" in l2


def test_surrogate_digest_is_declared_and_part_of_the_chain_id() -> None:
    with pytest.raises(OperatorSpecError, match="checkpoint digest"):
        operator_from_spec({"name": "adversarial", "kwargs": {"surrogate_blake3": "0" * 64}})
    with pytest.raises(OperatorSpecError, match="checkpoint digest"):
        operator_from_spec({"name": "adversarial", "kwargs": {}})
    # The chain id (and with it the embedding cache key) is a digest of the canonical spec, which holds the digest.
    normalised = operator_from_spec(spec()).spec()
    assert normalised["kwargs"]["surrogate_blake3"] == DIGEST
    # The canonical rule of provenance.canonical, written out here: every float as the string of its repr.
    as_text = {key: repr(value) if isinstance(value, float) else value for key, value in normalised["kwargs"].items()}
    payload = json.dumps([{**normalised, "kwargs": as_text}], sort_keys=True, separators=(",", ":")).encode()
    assert chain_id([spec()]) == blake3.blake3(payload).hexdigest()[:16]


def test_speaker_reference_needs_the_corpus(corpus: Path) -> None:
    operator = operator_from_spec(spec())
    wave = load(corpus)
    out, _, outcome = operator(wave, SR, rng_for(0, "u", operator), utt_id="u")
    assert outcome.status == "failed" and "corpus utterance table" in outcome.reason
    assert out is wave
    bound = operator_from_spec(spec(), sources=NoiseSources(utterances=corpus / "utterances.csv"))
    _, _, outcome = bound(wave, SR, rng_for(0, "u", bound), utt_id="not-there")
    assert outcome.status == "failed" and "not in the corpus table" in outcome.reason


@pytest.mark.slow
def test_resemblyzer_surrogate_equals_its_encoder_and_its_attack_is_real(corpus: Path) -> None:
    import torch

    from runner.operators.adversarial import load_surrogate

    surrogate = load_surrogate("resemblyzer")
    assert surrogate.encoder.checkpoint.checkpoint_blake3 == surrogate_blake3("resemblyzer")
    wave = load(corpus)[:SR]
    kwargs = {"surrogate": "resemblyzer", "surrogate_blake3": surrogate_blake3("resemblyzer"), "norm": "l2"}
    operator = operator_from_spec(
        {"name": "adversarial", "kwargs": kwargs}, sources=NoiseSources(utterances=corpus / "utterances.csv")
    )
    out, _, outcome = operator(wave, SR, rng_for(0, "u", operator), utt_id="call-fwd-unconditional")
    assert outcome.status == "applied", outcome.reason
    assert outcome.details["snr_db_realised"] == pytest.approx(40.0, abs=0.01)
    assert outcome.details["surrogate_cosine_after"] < outcome.details["surrogate_cosine_before"]
    others = [load(corpus, name) for name in ("vm-goodbye", "vm-password", "vm-intro")]
    clean, attacked, *enrolment = surrogate.encoder.embed([wave, out, *others], SR)
    vector = surrogate.forward(torch.from_numpy(wave.astype(np.float64))).detach().numpy()
    assert np.allclose(vector / np.linalg.norm(vector), clean, atol=1e-5)
    # The perturbed audio, scored by the encoder itself, is further from the speaker than the clean audio.
    centroid = np.mean(enrolment, axis=0)
    assert float(attacked @ centroid) < float(clean @ centroid)
