"""A run that declares a calibration and a countermeasure, end to end: real speech (the default corpus, 4 prompts a
speaker), its WORLD proxy spoof folder, the MFCC baseline and the real AASIST.

Oracles: every calibrated and spoofing-aware column of ``results.csv`` is recomputed here from the bundle's own
per-trial files with ``audit.metrics``' library functions (the fit on the development speakers' clean trials,
the metrics on the evaluation trials; the spoof cell's targets and spoofs with its companion's non-targets); each
``cm_score`` is AASIST's score of the trial's test file; ``audit verify --bundle`` re-derives them (PASS), and a
signed value changed and re-signed is a ``score-mismatch``; a malformed ``[analysis] calibration`` is refused by
the runner at load and is a ``bundle-schema`` finding in a signed bundle.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.runner.signed_bundles import record, resign, verify

pytestmark = [pytest.mark.runner, pytest.mark.slow]

pytest.importorskip("torch")
pytest.importorskip("pyworld")

from audit.metrics.calibration import act_dcf, cllr, fit_logistic_calibration, min_cllr  # noqa: E402
from audit.metrics.point import MetricInputError, min_dcf  # noqa: E402
from audit.metrics.spoofing import a_dcf, sasv_eer, spf_eer, sv_eer, t_eer  # noqa: E402
from provenance.keys import generate_keypair  # noqa: E402
from runner.corpora.asterisk import build_default_corpus  # noqa: E402
from runner.corpora.world_proxy import build_world_proxy  # noqa: E402
from runner.design import default_checkpoints_root, load_config  # noqa: E402
from runner.encoders.roster import load_weight_pins  # noqa: E402
from runner.pipeline import RunOptions, run  # noqa: E402
from schemas.errors import InputError  # noqa: E402
from schemas.trials import TrialKind  # noqa: E402
from tests.runner.real_weights import weights_absent  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"
DEV = ["june-wallack", "ivrvoice-ru", "carlo-flora"]
CONFIG = """
[run]
name = "beyond-eer"
seed = 11

[corpora.asterisk]
adapter = "asterisk"
root = "{genuine}"
utterances_per_speaker = 4

[corpora.world_proxy]
adapter = "world_proxy"
root = "{proxy}"

[encoders]
roster = "{roster}"
checkpoints_root = "{checkpoints}"
labels = ["mfcc-stats"]

[countermeasure]
label = "aasist"
front_end = "first-nb_samp-repeated"

[analysis]
equivalence_margin = 0.05
dev_speakers = {dev}
n_resamples = 50
calibration = {{ method = "logistic", fit_on = "dev" }}

[conditions]
"proxy" = {{ spoofs = "world_proxy" }}
"white-10dB" = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}]

[[experiments]]
id = "D05"
title = "noise"
corpus = "asterisk"
use = "descriptive"
target_trials = 24
nontarget_trials = 24
enrol_conditions = ["clean"]
test_conditions = ["clean", "white-10dB"]

[[experiments]]
id = "D06"
title = "spoofing proxy"
corpus = "asterisk"
use = "descriptive"
target_trials = 8
nontarget_trials = 8
enrol_conditions = ["clean"]
test_conditions = ["clean", "proxy"]
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    checkpoints = default_checkpoints_root()
    if not (checkpoints / load_weight_pins(ROSTER)["aasist"].checkpoint).is_dir():
        message = f"no installed AASIST under {checkpoints}: interbias checkpoints install aasist"
        weights_absent(message)
    folder = tmp_path_factory.mktemp("beyond-eer")
    build_default_corpus(folder / "genuine", max_per_speaker=4, progress=False)
    build_world_proxy(folder / "genuine", folder / "proxy", per_speaker=2, progress=False)
    config = folder / "run.toml"
    config.write_text(
        CONFIG.format(
            genuine=folder / "genuine",
            proxy=folder / "proxy",
            roster=ROSTER,
            checkpoints=checkpoints,
            dev=json.dumps(DEV),
        )
    )
    generate_keypair(folder / "keys" / "run.key", folder / "keys" / "run.pub")
    options = RunOptions(
        cache_root=folder / "cache", progress=False, workers=0, signing_key=folder / "keys" / "run.key"
    )
    run(load_config(config), folder / "out", options)
    return folder


def test_the_calibrated_columns_are_the_library_s_on_the_evaluation_trials(bundle: Path) -> None:
    out = bundle / "out"
    results = pd.read_csv(out / "results.csv").set_index("record_id")
    fits = {}
    for experiment in ("D05", "D06"):
        clean_trials, clean_scores = record(out, f"{experiment}.mfcc-stats.clean_to_clean")
        dev = clean_trials["enrol_speaker"].isin(DEV) & clean_trials["test_speaker"].isin(DEV)
        try:
            fits[experiment] = fit_logistic_calibration(clean_scores["score"][dev], clean_trials["label"][dev])
        except MetricInputError:  # D06's 8 + 8 clean trials hold no development non-target: no map
            fits[experiment] = None
    assert fits["D05"] is not None
    for record_id in results.index:
        fit = fits[record_id.split(".")[0]]
        trials, scores = record(out, record_id)
        evaluation = ~trials["enrol_speaker"].isin(DEV) & ~trials["test_speaker"].isin(DEV)
        if "trial_kind" in trials:
            evaluation &= trials["trial_kind"] != "spoof"
        s, labels = scores["score"][evaluation].to_numpy(), trials["label"][evaluation].to_numpy()
        row = results.loc[record_id]
        if fit is None or labels.min() == labels.max():  # no map, or the spoof cell (no bona fide non-target)
            assert np.isnan(row["cllr"]) and np.isnan(row["act_dcf"])
            continue
        assert row["cllr"] == pytest.approx(cllr(fit.apply(s), labels), abs=1e-9)
        assert row["min_cllr"] == pytest.approx(min_cllr(s, labels), abs=1e-9)
        assert row["act_dcf"] == pytest.approx(act_dcf(fit.apply(s), labels, 0.01), abs=1e-9)


def test_the_spoof_cell_carries_the_sasv_metrics_of_its_trials_and_its_companion_s(bundle: Path) -> None:
    out = bundle / "out"
    results = pd.read_csv(out / "results.csv").set_index("record_id")
    spoof_trials, spoof_scores = record(out, "D06.mfcc-stats.clean_to_proxy")
    genuine_trials, genuine_scores = record(out, "D06.mfcc-stats.clean_to_clean")
    assert {"cm_score"} <= set(spoof_scores.columns) and np.isfinite(spoof_scores["cm_score"]).all()
    assert set(spoof_trials.loc[spoof_trials["trial_kind"] == "spoof", "test_corpus"]) == {"world_proxy"}
    kinds = np.where(spoof_trials["trial_kind"] == "spoof", int(TrialKind.SPOOF), spoof_trials["label"])
    nontargets = genuine_trials["label"] == 0
    asv = np.r_[spoof_scores["score"], genuine_scores["score"][nontargets]]
    cm = np.r_[spoof_scores["cm_score"], genuine_scores["cm_score"][nontargets]]
    codes = np.r_[kinds, np.zeros(int(nontargets.sum()), dtype=int)]
    row = results.loc["D06.mfcc-stats.clean_to_proxy"]
    assert row["sv_eer"] == pytest.approx(sv_eer(asv, codes), abs=1e-9)
    assert row["spf_eer"] == pytest.approx(spf_eer(asv, codes), abs=1e-9)
    assert row["sasv_eer"] == pytest.approx(sasv_eer(asv, codes), abs=1e-9)
    assert row["a_dcf"] == pytest.approx(a_dcf(asv, codes), abs=1e-9)
    assert row["t_eer"] == pytest.approx(t_eer(cm, asv, codes), abs=1e-9)
    assert results.drop(index="D06.mfcc-stats.clean_to_proxy")["sasv_eer"].isna().all()
    checkpoints = json.loads((out / "checkpoints.json").read_text())
    assert checkpoints["aasist"]["kind"] == "aasist" and checkpoints["aasist"]["weights"]["origin"] == "registry"


def test_each_cm_score_is_aasist_s_score_of_the_test_file(bundle: Path) -> None:
    from runner.encoders import load_encoder
    from runner.execution.jobs import read_clean_wave

    trials, scores = record(bundle / "out", "D06.mfcc-stats.clean_to_proxy")
    checkpoints = default_checkpoints_root() / load_weight_pins(ROSTER)["aasist"].checkpoint
    countermeasure = load_encoder("aasist", "aasist", checkpoints)
    spoof = trials.index[trials["trial_kind"] == "spoof"][0]
    manifest = pd.read_csv(bundle / "proxy" / "manifest.csv")
    path = manifest.loc[manifest["path"].str.removesuffix(".wav") == trials.loc[spoof, "test_utt"], "path"].iloc[0]
    wave, rate = read_clean_wave(bundle / "proxy" / path)
    assert scores.loc[spoof, "cm_score"] == pytest.approx(float(countermeasure.embed([wave], rate)[0, 0]), abs=1e-5)


def test_audit_verify_re_derives_them_and_shows_the_calibration_transfer(bundle: Path) -> None:
    code, report = verify(bundle / "out", bundle / "keys" / "run.pub")
    assert code == 0, [flag for flag in report["flags"] if flag["severity"] == "error"]
    sections = {section["id"]: section for section in report["sections"]}
    assert sections["bundle-beyond-eer"]["status"] == "pass"
    assert any("re-derives within" in line for line in sections["bundle-beyond-eer"]["lines"])
    transfer = report["statistics"]["calibration_transfer"]
    assert {row["key"]["condition"] for row in transfer} >= {"clean->clean", "clean->white-10dB"}
    for row in transfer:
        if "skipped" not in row:  # two development speakers: the map's own variation cannot be resampled
            assert row["cllr"]["low"] is None and "development speakers" in row["cllr"]["withheld"]
            assert row["min_cllr"]["low"] <= row["min_cllr"]["high"]  # needs no map: keeps its interval
    assert sections["calibration-transfer"]["table"]
    # The Bayes error curves of the clean list (D05, the first experiment): act_dcf of the LLRs of the map fitted on
    # the development trials, and min_dcf, at each prior of the plot.
    (bayes,) = [curve for curve in report["curves"] if curve.get("figures") == ["bayes-error"]]
    trials, scores = record(bundle / "out", "D05.mfcc-stats.clean_to_clean")
    dev = trials["enrol_speaker"].isin(DEV) & trials["test_speaker"].isin(DEV)
    evaluation = ~trials["enrol_speaker"].isin(DEV) & ~trials["test_speaker"].isin(DEV)
    fit = fit_logistic_calibration(scores["score"][dev], trials["label"][dev])
    llrs, labels = fit.apply(scores["score"][evaluation].to_numpy()), trials["label"][evaluation].to_numpy()
    assert bayes["series"] == "mfcc-stats" and bayes["n_target"] == int(labels.sum())
    for log_odds, actual, minimum in zip(bayes["prior_log_odds"], bayes["actual"], bayes["minimum"], strict=True):
        prior = 1 / (1 + np.exp(-log_odds))
        assert actual == pytest.approx(act_dcf(llrs, labels, prior), abs=1e-5)
        assert minimum == pytest.approx(min_dcf(llrs, labels, prior), abs=1e-5)


def test_a_changed_signed_value_and_a_malformed_calibration(bundle: Path, tmp_path: Path) -> None:
    out = shutil.copytree(bundle / "out", tmp_path / "out")
    key = bundle / "keys" / "run.key"
    results = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    results.loc[results["record_id"] == "D06.mfcc-stats.clean_to_proxy", "t_eer"] = "0.001"
    results.to_csv(out / "results.csv", index=False)
    code, report = verify(resign(out, key), bundle / "keys" / "run.pub")
    mismatch = next(flag for flag in report["flags"] if flag["id"] == "score-mismatch")
    assert code == 1 and "D06.mfcc-stats.clean_to_proxy" in mismatch["records"]
    config = (bundle / "run.toml").read_text().replace('fit_on = "dev"', 'fit_on = "eval"')
    (tmp_path / "bad.toml").write_text(config)
    with pytest.raises(InputError, match=r"analysis\.calibration: fit_on"):
        load_config(tmp_path / "bad.toml")
    shutil.copytree(bundle / "out", tmp_path / "schema")
    signed = (tmp_path / "schema" / "config.toml").read_text().replace('fit_on = "dev"', 'fit_on = "eval"')
    (tmp_path / "schema" / "config.toml").write_text(signed)
    code, report = verify(resign(tmp_path / "schema", key), bundle / "keys" / "run.pub")
    schema = next(flag for flag in report["flags"] if flag["id"] == "bundle-schema")
    assert code == 1 and "analysis.calibration: fit_on" in schema["message"]
