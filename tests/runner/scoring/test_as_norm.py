"""A run that declares AS-norm, end to end: real speech (the default corpus, 6 prompts a speaker), the MFCC baseline,
a cohort of two speakers.

Oracles: the cohort speakers are in no trial list; each clean trial's cohort statistics are recomputed here from
the encoder's own embeddings of the trial's and the cohort's files with a plain sort (not the runner's
``np.partition``) and ``statistics.stdev``; ``eer_as_norm`` and ``min_dcf_as_norm`` are the point metrics of the
normalised scores written out from the formula; ``audit verify --bundle`` re-derives them (PASS), and a cohort
statistic changed in a score file and re-signed is a ``score-mismatch``, as is a declaration whose cohort holds a
speaker of the trial lists.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.runner.signed_bundles import record, resign, verify

pytestmark = [pytest.mark.runner, pytest.mark.slow]

pytest.importorskip("torch")

from audit.metrics.point import eer, min_dcf  # noqa: E402
from provenance.keys import generate_keypair  # noqa: E402
from runner.corpora.asterisk import build_default_corpus  # noqa: E402
from runner.design.config import load_config  # noqa: E402
from runner.pipeline import RunOptions, run  # noqa: E402
from schemas.bundle import scores_file_bytes  # noqa: E402
from schemas.errors import InputError  # noqa: E402
from schemas.scores import COHORT_COLUMNS  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
COHORT = ["paola-dal-zot", "carlo-flora"]
TOP_N = 5
CONFIG = """
[run]
name = "as-norm"
seed = 5
p_target = 0.05

[corpus]
name = "asterisk"
root = "{genuine}"
utterances_per_speaker = 6

[encoders]
roster = "{roster}"
labels = ["mfcc-stats"]

[analysis]
dev_speakers = ["june-wallack"]
n_resamples = 20
score_normalisation = {{ method = "as-norm", top_n = {top_n}, cohort = {cohort} }}

[conditions]
"white-10dB" = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}]

[[experiments]]
id = "D01"
title = "noise"
use = "descriptive"
target_trials = 30
nontarget_trials = 30
enrol_conditions = ["clean"]
test_conditions = ["clean", "white-10dB"]
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("as-norm")
    build_default_corpus(folder / "genuine", max_per_speaker=6, progress=False)
    (folder / "run.toml").write_text(
        CONFIG.format(
            genuine=folder / "genuine",
            roster=ROOT / "configs" / "encoders.toml",
            top_n=TOP_N,
            cohort=json.dumps(COHORT),
        )
    )
    generate_keypair(folder / "keys" / "run.key", folder / "keys" / "run.pub")
    options = RunOptions(
        cache_root=folder / "cache", progress=False, workers=0, signing_key=folder / "keys" / "run.key"
    )
    run(load_config(folder / "run.toml"), folder / "out", options)
    return folder


def test_no_trial_holds_a_cohort_speaker(bundle: Path) -> None:
    for path in (bundle / "out" / "trials").glob("*.csv"):
        trials = pd.read_csv(path)
        assert not set(COHORT) & {*trials["enrol_speaker"], *trials["test_speaker"]}


def test_clean_cohort_statistics_are_the_encoder_s_top_n(bundle: Path) -> None:
    from runner.encoders import load_roster
    from runner.execution.jobs import read_clean_wave

    genuine = bundle / "genuine"
    table = pd.read_csv(genuine / "utterances.csv")
    spec = next(spec for spec in load_roster(ROOT / "configs" / "encoders.toml") if spec.label == "mfcc-stats")
    encoder = spec.load(device="cpu", dtype="fp32")

    def unit(utt: str) -> np.ndarray:
        wave, rate = read_clean_wave(genuine / table.loc[table["utt_id"] == utt, "path"].iloc[0])
        vector = np.asarray(encoder.embed([wave], rate)[0], dtype=np.float64)
        return vector / np.linalg.norm(vector)

    trials, scores = record(bundle / "out", "D01.mfcc-stats.clean_to_clean")
    utterances = _cohort_utterances(bundle)
    assert len(utterances) == 12
    cohort = np.stack([unit(utt) for utt in utterances])
    for index in range(0, len(trials), 7):  # every 7th trial: both sides, a plain sort and statistics.stdev
        for side, columns in (("enrol_utt", COHORT_COLUMNS[:2]), ("test_utt", COHORT_COLUMNS[2:])):
            top = sorted((cohort @ unit(trials.loc[index, side])).tolist())[-TOP_N:]
            assert scores.loc[index, columns[0]] == pytest.approx(statistics.fmean(top), abs=1e-6)
            assert scores.loc[index, columns[1]] == pytest.approx(statistics.stdev(top), abs=1e-6)


def _cohort_utterances(bundle: Path) -> list[str]:
    """The cohort's utterances in the run's pool: the same seeded choice of 6 a speaker as every speaker's."""
    from runner.design.trials import select_pool

    table = pd.read_csv(bundle / "genuine" / "utterances.csv")
    pool = select_pool(table, 6, 5)
    return pool.loc[pool["speaker"].isin(COHORT), "utt_id"].tolist()


def test_the_normalised_metrics_are_the_point_metrics_of_the_formula(bundle: Path) -> None:
    out = bundle / "out"
    results = pd.read_csv(out / "results.csv").set_index("record_id")
    for record_id in results.index:
        _, scores = record(out, record_id)
        scored = scores["status"] == "scored"
        s = scores["score"][scored].to_numpy()
        mu_e, sd_e, mu_t, sd_t = (scores[column][scored].to_numpy() for column in COHORT_COLUMNS)
        normalised = ((s - mu_e) / sd_e + (s - mu_t) / sd_t) / 2
        labels = scores["label"][scored].to_numpy()
        row = results.loc[record_id]
        assert row["eer_as_norm"] == pytest.approx(eer(normalised, labels, row["eer_method"]), abs=1e-12)
        assert row["min_dcf_as_norm"] == pytest.approx(min_dcf(normalised, labels, 0.05), abs=1e-12)
        assert row["eer"] == pytest.approx(eer(s, labels, row["eer_method"]), abs=1e-12)  # the raw EER kept


def test_audit_verify_re_derives_them(bundle: Path) -> None:
    code, report = verify(bundle / "out", bundle / "keys" / "run.pub")
    assert code == 0, [flag for flag in report["flags"] if flag["severity"] == "error"]
    lines = {section["id"]: section for section in report["sections"]}["bundle-beyond-eer"]["lines"]
    assert any(line.startswith(f"AS-norm declared (top {TOP_N} of the clean utterances of 2") for line in lines)
    assert any("eer_as_norm, min_dcf_as_norm re-derives within" in line for line in lines)


def test_a_changed_cohort_statistic_and_a_cohort_inside_the_trials(bundle: Path, tmp_path: Path) -> None:
    out = shutil.copytree(bundle / "out", tmp_path / "changed")
    record_id = "D01.mfcc-stats.clean_to_clean"  # under white noise at 10 dB the MFCC baseline is at chance
    path = out / "scores" / f"{record_id}.parquet"
    frame = pd.read_parquet(path)
    frame.loc[frame["label"] == 1, "test_cohort_mean"] += 1.0  # the targets' normalised scores fall below all
    results = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    run_id = results.loc[0, "run_id"]
    data = scores_file_bytes(frame["label"].to_numpy(), frame["score"].to_numpy(), frame["status"].to_numpy(), run_id,
                             cohort=frame[list(COHORT_COLUMNS)].to_numpy())  # fmt: skip
    path.write_bytes(data)
    from provenance.digests import bytes_digest

    results.loc[results["record_id"] == record_id, "scores_blake3"] = bytes_digest(data).blake3
    results.to_csv(out / "results.csv", index=False)
    code, report = verify(resign(out, bundle / "keys" / "run.key"), bundle / "keys" / "run.pub")
    mismatch = next(flag for flag in report["flags"] if flag["id"] == "score-mismatch")
    assert code == 1 and record_id in mismatch["records"]

    inside = shutil.copytree(bundle / "out", tmp_path / "inside")
    signed = (inside / "config.toml").read_text().replace(json.dumps(COHORT), json.dumps([*COHORT, "allison-smith"]))
    (inside / "config.toml").write_text(signed)
    code, report = verify(resign(inside, bundle / "keys" / "run.key"), bundle / "keys" / "run.pub")
    mismatch = next(flag for flag in report["flags"] if flag["id"] == "score-mismatch")
    assert code == 1 and "cohort speaker allison-smith" in json.dumps(mismatch)


def test_a_cohort_that_breaks_its_declaration_is_refused_before_any_work(bundle: Path, tmp_path: Path) -> None:
    text = (bundle / "run.toml").read_text()
    for edit, message in (
        (text.replace(json.dumps(COHORT), '["nobody"]'), "cohort: 1 name is no speaker of the selected corpora"),
        (text.replace(f"top_n = {TOP_N}", "top_n = 13"), "top_n 13 is more than the cohort's 12 utterances"),
        (text.replace('dev_speakers = ["june-wallack"]', 'dev_speakers = ["carlo-flora"]'), "also declared a dev"),
    ):
        (tmp_path / "bad.toml").write_text(edit)
        with pytest.raises(InputError, match=message):
            config = load_config(tmp_path / "bad.toml")
            run(config, tmp_path / "o", RunOptions(cache_root=tmp_path / "c", progress=False, workers=0))
