"""The rehearsal's bundle generator (``runner/rehearsal.py``) at a small size: it verifies end to end, and it is
built as configs/full.toml designs it; and ``interbias rehearse`` on the whole registry.

Four designs stand for the kinds of the full configuration: E10 (spoof trials from another folder), E14 (a
two-factor design with a population factor), E15 (declared cross-corpus) and E16 (gender subgroups with declared
development speakers). Expected counts are worked out by hand from full.toml; the legacy EER of every row is
recomputed with scikit-learn's ROC (the oracle of ``tests/provenance/synthetic_bundle.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from provenance.canonical import canonical_json
from provenance.manifest import build_run_statement
from runner.rehearsal import PaperBundle, write_paper_bundle

ROOT = Path(__file__).resolve().parents[2]
FULL = ROOT / "configs" / "full.toml"
from tests.provenance.synthetic_bundle import legacy_eer_oracle  # noqa: E402

DESIGNS = ("E10", "E14", "E15", "E16")
LABELS = 2
# Cells per label, by hand from full.toml: E10 clean->{clean, spoof-tts}: 2; E14 (1 + 4 emotions) x (1 + 3
# noises): 20; E15 (1 + 1) x (1 + 2): 6; E16 (1 + 9 noises) x 2 genders: 20.
CELLS = {"E10": 2, "E14": 20, "E15": 6, "E16": 20}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> PaperBundle:
    folder = tmp_path_factory.mktemp("paper") / "bundle"
    return write_paper_bundle(folder, scale=0.05, labels=LABELS, experiments=DESIGNS, pad=False, seed=3)


def results_of(bundle: PaperBundle) -> pd.DataFrame:
    return pd.read_csv(bundle.root / "results.csv", dtype={"trial_list_id": str, "record_id": str})


@pytest.mark.slow  # about 4 s of CPU, 10 s on a loaded machine: a fresh interpreter runs the whole audit
def test_a_small_generated_bundle_verifies_end_to_end(bundle: PaperBundle, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "audit.cli", "verify", str(bundle.root / "results.csv")]
    command += ["--bundle", str(bundle.root), "--key", str(bundle.public_key), "--out", str(tmp_path / "report")]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"PASS: {bundle.root / 'results.csv'} ({bundle.n_records} rows): 0 errors")
    assert "Traceback" not in done.stderr


def test_records_and_trial_lists_follow_the_design(bundle: PaperBundle) -> None:
    results = results_of(bundle)
    assert results.groupby("experiment").size().to_dict() == {e: n * LABELS for e, n in CELLS.items()}
    # Every (experiment, condition, subgroup) cell is one list shared by both encoder labels.
    cells = results.fillna({"subgroup": ""}).groupby(["experiment", "condition", "subgroup"])
    assert (cells["trial_list_id"].nunique() == 1).all() and (cells["model"].nunique() == LABELS).all()
    # Same-list contrasts: every cell of a two-factor design on one list (per design); E16 two lists per gender, as
    # its budgets differ: the clean cell's (5,000 trials in full.toml) and the noisy cells' (555).
    assert results.groupby("experiment")["trial_list_id"].nunique().to_dict() == {
        "E10": 2,
        "E14": 1,
        "E15": 1,
        "E16": 4,
    }
    files = sorted(path.stem for path in (bundle.root / "trials").glob("*.csv"))
    assert files == sorted(results["trial_list_id"].unique())


def test_spoof_and_subgroup_lists_are_what_the_design_asks(bundle: PaperBundle) -> None:
    results = results_of(bundle)
    spoof_list = results.loc[results["condition"] == "clean->spoof-tts", "trial_list_id"].iloc[0]
    trials = pd.read_csv(bundle.root / "trials" / f"{spoof_list}.csv", dtype=str)
    spoofs = trials[trials["trial_kind"] == "spoof"]
    assert set(spoofs["test_corpus"]) == {"tts_spoofs"} and (spoofs["enrol_speaker"] == spoofs["test_speaker"]).all()
    folder = pd.read_csv(bundle.root / "corpus" / "tts_spoofs" / "utterances.csv", dtype=str)
    assert set(spoofs["test_utt"]) <= set(folder["utt_id"]) and folder["spoof_system"].notna().all()
    dev = set(tomllib.loads((bundle.root / "config.toml").read_text())["analysis"]["dev_speakers"])
    for gender in ("F", "M"):
        list_id = results.loc[results["subgroup"] == f"gender={gender}", "trial_list_id"].iloc[0]
        trials = pd.read_csv(bundle.root / "trials" / f"{list_id}.csv", dtype=str)
        corpus = pd.read_csv(bundle.root / "corpus" / "voxceleb1" / "utterances.csv", dtype=str)
        genders = dict(zip(corpus["speaker"], corpus["gender"], strict=True))
        assert {genders[s] for s in pd.concat([trials["enrol_speaker"], trials["test_speaker"]])} == {gender}
        development = trials["enrol_speaker"].isin(dev) & trials["test_speaker"].isin(dev)
        assert set(trials.loc[development, "label"]) == {"0", "1"}  # a threshold can be chosen on them


def test_rows_carry_the_speakers_of_their_trial_lists(bundle: PaperBundle) -> None:
    for row in results_of(bundle).drop_duplicates("trial_list_id").itertuples():
        trials = pd.read_csv(bundle.root / "trials" / f"{row.trial_list_id}.csv", dtype=str)
        enrol, test = set(trials["enrol_speaker"]), set(trials["test_speaker"])
        assert (row.n_speakers, row.n_enrol_speakers, row.n_test_speakers) == (len(enrol | test), len(enrol), len(test))


def test_rows_carry_the_true_metrics_of_their_scores(bundle: PaperBundle) -> None:
    for row in results_of(bundle).itertuples():
        scores = pd.read_parquet(bundle.root / "scores" / f"{row.record_id}.parquet")
        scored = scores[scores["status"] == "scored"]
        assert row.n_unscored == len(scores) - len(scored)
        assert row.eer_legacy == pytest.approx(legacy_eer_oracle(scored["score"], scored["label"]), abs=1e-12)
        assert (row.n_target, row.n_nontarget) == (scored["label"].sum(), (scored["label"] == 0).sum())


def test_the_sealed_statement_is_the_one_rebuilt_from_the_files_on_disk(bundle: PaperBundle) -> None:
    """The writer signs digests of the bytes it wrote and the objects it wrote them from; the second algorithm
    hashes every file of the folder and reads results, checkpoints and operators back."""
    sealed = json.loads((bundle.root / "provenance" / "statement.json").read_text())
    config = tomllib.loads((bundle.root / "config.toml").read_text())
    assert canonical_json(build_run_statement(bundle.root, config)) == canonical_json(sealed)


@pytest.mark.slow
def test_the_same_seed_gives_the_same_bundle(tmp_path: Path) -> None:
    def written(name: str, seed: int) -> PaperBundle:
        return write_paper_bundle(
            tmp_path / name, scale=0.05, labels=LABELS, experiments=("E14",), pad=False, seed=seed
        )

    first, again, other = written("first", 3), written("again", 3), written("other", 4)
    assert (first.root / "results.csv").read_bytes() == (again.root / "results.csv").read_bytes()
    assert not results_of(first)["scores_blake3"].isin(results_of(other)["scores_blake3"]).any()


# Contrasts per encoder label of full.toml's families, by hand: levels of factor A x levels of factor B. E13 age
# (6) x codec (2), E14 emotion (4) x noise (3), E17 session (1) x packet loss (2), E20 emotion (2) x noise/codec
# (3). Every factor A selects a population (its levels are other speakers or utterances), so every contrast is a
# population contrast. E15 and E18 are descriptive cross-corpus designs the audit leaves out of the families. E16:
# clean + 9 noises, one fixed-threshold setting and one subgroup gap per condition and label. E13 declares
# complement_reference: each of its 6 strata against the other 5 at each of 2 codecs, a family of its own.
FAMILIES = {
    "E13/speaker": 12,
    "E13/speaker (complement reference)": 12,
    "E14/speaker": 12,
    "E17/speaker": 2,
    "E20/speaker": 6,
}
E16_CONDITIONS = 10
USED_CORPORA = ("common_voice", "ears", "l2_arctic", "ravdess", "torgo", "tts_spoofs", "vc_spoofs", "voxceleb1")


@pytest.mark.slow  # the whole registry, one label: about 10 s of CPU (the audit's 1,000 resamples are most of it)
def test_the_full_registry_rehearses_and_verifies(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from runner.cli import app

    out = tmp_path / "rehearsal"
    args = ["rehearse", str(ROOT / "configs" / "full.toml"), "--out", str(out), "--labels", "1", "--scale", "0.001"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "audit verify: PASS (0 error flags)" in done.output
    report = json.loads((out / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "pass" and report["trust"]["trust"] == "trusted-key"
    statistics = report["statistics"]
    families = statistics["families"]
    assert {name: family["n_contrasts"] for name, family in families.items()} == FAMILIES
    assert {name: family["n_population_contrasts"] for name, family in families.items()} == FAMILIES
    for family in families.values():  # every family has an interval and a verdict
        assert family["verdict"] in ("additive within margin", "non-additive", "undetermined")
        outside = family["n_outside_margin"]
        assert 0 <= outside["low"] <= outside["high"] <= family["n_contrasts"]
    assert len(statistics["fixed_threshold"]) == len(statistics["subgroup_gaps"]) == E16_CONDITIONS
    populations = {entry["experiment"]: entry["drawn from"] for entry in report["run"]["populations"]}
    assert populations["E05"] == populations["E06"] == "official list veri_test2, as published"
    assert populations["E16"] == populations["E10"] == "split = test" and populations["E01"] == "style = speech"
    assert populations["E03"] == "every utterance of the corpus"
    # E16's clean trials outnumber its noisy ones, as in the paper: every noisy gap is a ratio term of another budget
    mismatch = next(flag for flag in report["flags"] if flag["id"] == "budget-mismatch")
    assert {case["where"].split()[0] for case in mismatch["details"]["ratio_terms"]} == {"E16"}
    markdown = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "| E05 | voxceleb1 | official list veri\\_test2, as published |" in markdown
    corpora = {entry["corpus"]: entry["release"] for entry in report["run"]["corpora"]}
    assert corpora == {name: f"{name} (synthetic) rehearsal" for name in USED_CORPORA}
    records = pd.read_csv(out / "results.csv")
    assert sorted(records["experiment"].unique()) == sorted(tomllib.loads(FULL.read_text())["registry"]["experiments"])


def test_a_rehearsal_refuses_an_existing_folder_and_unknown_corpora(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from runner.cli import app

    existing = tmp_path / "there"
    existing.mkdir()
    done = CliRunner().invoke(app, ["rehearse", str(FULL), "--out", str(existing)])
    assert done.exit_code == 2 and done.output.count("\n") == 1 and "--out exists" in done.output
    assert list(existing.iterdir()) == []
    done = CliRunner().invoke(app, ["rehearse", str(ROOT / "configs" / "default.toml"), "--out", str(tmp_path / "d")])
    assert done.exit_code == 2 and done.output.count("\n") == 1, done.output
    assert "no rehearsal shape for corpora asterisk" in done.output
    assert not (tmp_path / "d").exists()


@pytest.mark.slow  # a second generated bundle and its whole audit, statistics included
def test_e13_complement_contrasts_are_a_family_of_their_own(tmp_path: Path) -> None:
    from audit.verify import AuditRequest, verify

    e13 = write_paper_bundle(tmp_path / "e13", scale=0.05, labels=LABELS, experiments=("E13",), pad=False, seed=3)
    results = results_of(e13)
    # by hand from full.toml: (1 + 6 strata) x (1 + 2 codecs) = 21 cells, and 6 x 3 complement cells, per label
    assert len(results) == (21 + 18) * LABELS
    complement = results[results["complement_of"].notna()]
    assert sorted(set(complement["level_a"])) == sorted(f"other-than-{s}" for s in set(complement["complement_of"]))
    report = verify(AuditRequest(e13.root / "results.csv", bundle=e13.root, key=e13.public_key))
    families = report["statistics"]["families"]
    # both labels are speaker encoders: 6 strata x 2 codecs x 2 labels contrasts in each family
    assert families["E13/speaker"]["n_contrasts"] == 24
    assert families["E13/speaker (complement reference)"]["n_contrasts"] == 24
    assert report["verdict"] == "pass", [f["id"] for f in report["flags"] if f["severity"] == "error"]
