"""Beyond-EER columns of a bundle the author signed whole, held to what its signed ``config.toml`` declares (issue
44, point 7): countermeasure scores empty exactly on the hard spoofs, ``cm_score`` dropped from the spoof cell, spoof
trials relabelled as bona fide non-targets (the corpus table edited to match, so every utterance check holds), and
AS-norm declared without its cohort statistics are each named, never PASS; the honest shapes pass.

The spoof-cell cases run the step that re-derives the columns (``verify_beyond_eer_metrics``) on verified files
built here: a genuine cell and its spoof cell (targets kept pair for pair, non-targets replaced by spoofs of the
enrolment speaker, as ``runner.trials.add_spoof_trials`` builds them), an ASV score that ranks spoofs between
non-targets and targets and a countermeasure that separates bona fide from spoofs. The oracle for the hard-spoof case
is what the attack buys: the SASV-EER re-derived without the spoofs whose countermeasure score was blanked is lower
than with them. AS-norm runs end to end on the signed synthetic bundle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.bundle import LoadedFiles
from audit.bundle.rescore_beyond import verify_beyond_eer_metrics
from audit.bundle.verified import ScoreMismatchError
from audit.metrics.spoofing import sasv_eer
from audit.verify import AuditRequest, verify
from provenance.digests import bytes_digest
from provenance.manifest import write_manifest
from schemas.bundle import RecordScores, scores_file_bytes
from schemas.trials import TrialKind
from tests.fuzzing import examples
from tests.provenance.synthetic_bundle import RUN_CONFIG, build_bundle

CONFIG = {"conditions": {"proxy": {"spoofs": "proxy"}}, "countermeasure": {"label": "aasist"}}
GENUINE, SPOOF = "X01.m.clean_to_clean", "X01.m.clean_to_proxy"
FUZZ = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _cells(n_speakers: int, per_speaker: int, seed: int) -> dict[str, Any]:
    """Trial lists, ASV and CM scores of a genuine cell and its spoof cell."""
    rng = np.random.default_rng(seed)
    rows = []
    for speaker in range(n_speakers):
        for k in range(per_speaker):
            other = (speaker + 1 + k) % n_speakers
            rows.append((f"s{speaker}-e{k}", f"s{speaker}-t{k}", 1, f"s{speaker}", f"s{speaker}"))
            rows.append((f"s{speaker}-e{k}", f"s{other}-t{k}", 0, f"s{speaker}", f"s{other}"))
    genuine = pd.DataFrame(rows, columns=["enrol_utt", "test_utt", "label", "enrol_speaker", "test_speaker"])
    genuine.insert(0, "trial_index", np.arange(len(genuine)))
    genuine["trial_kind"] = np.where(genuine["label"] == 1, "target", "nontarget")
    genuine["test_corpus"] = "genuine"
    spoof = genuine.copy()
    nontarget = spoof["label"] == 0
    spoof.loc[nontarget, "test_utt"] = (
        spoof.loc[nontarget, "enrol_speaker"] + "-spoof-" + spoof.index[nontarget].astype(str)
    )
    spoof.loc[nontarget, "test_speaker"] = spoof.loc[nontarget, "enrol_speaker"]
    spoof.loc[nontarget, "trial_kind"] = "spoof"
    spoof.loc[nontarget, "test_corpus"] = "proxy"
    labels = genuine["label"].to_numpy()
    asv_genuine = rng.normal(np.where(labels == 1, 2.0, -2.0), 1.0)
    asv_spoof = np.where(labels == 1, asv_genuine, rng.normal(1.0, 1.0, len(labels)))  # same targets, same scores
    cm_genuine = rng.normal(2.0, 1.0, len(labels))
    cm_spoof = np.where(labels == 1, cm_genuine, rng.normal(-1.0, 1.5, len(labels)))
    return {"genuine": genuine, "spoof": spoof, "asv": (asv_genuine, asv_spoof), "cm": (cm_genuine, cm_spoof)}


def _files(cells: dict[str, Any], *, config: dict[str, Any] = CONFIG, cm: tuple[Any, Any] | None = None) -> LoadedFiles:
    """Verified files of the two cells (``cm`` replaces the countermeasure scores: None drops a cell's column)."""
    cm_genuine, cm_spoof = cm if cm is not None else cells["cm"]
    results = pd.DataFrame(
        [
            {"record_id": record_id, "experiment": "X01", "model": "m", "corpus": "genuine", "subgroup": None,
             "enrol_condition": "clean", "test_condition": test, "trial_list_id": list_id}
            for record_id, test, list_id in ((GENUINE, "clean", "g"), (SPOOF, "proxy", "s"))
        ]
    )  # fmt: skip
    labels = cells["genuine"]["label"].to_numpy(np.int8)
    scores = {
        record_id: RecordScores(labels, asv, np.isfinite(asv), cm_scores=values)
        for record_id, asv, values in zip((GENUINE, SPOOF), cells["asv"], (cm_genuine, cm_spoof), strict=True)
    }
    return LoadedFiles(
        results=results, trial_lists={"g": cells["genuine"], "s": cells["spoof"]}, scores=scores, config=config
    )


def _problems(files: LoadedFiles) -> dict[str, list[str]]:
    """What the step names, by record (empty: it passed)."""
    try:
        verify_beyond_eer_metrics(files)
    except ScoreMismatchError as error:
        found: dict[str, list[str]] = {}
        for failure in error.failures:
            found.setdefault(failure["record_id"], []).append(failure["problem"])
        return found
    return {}


def test_the_honest_spoof_cell_passes_and_its_metrics_are_re_derived() -> None:
    cells = _cells(6, 4, seed=1)
    derived, _ = verify_beyond_eer_metrics(_files(cells))
    kinds = np.where(cells["spoof"]["trial_kind"] == "spoof", TrialKind.SPOOF, TrialKind.TARGET)
    bona_fide = cells["genuine"]["label"] == 0
    expected = sasv_eer(
        np.concatenate([cells["asv"][1], cells["asv"][0][bona_fide]]),
        np.concatenate([kinds, np.full(int(bona_fide.sum()), TrialKind.NONTARGET)]),
    )
    assert derived[SPOOF]["sasv_eer"] == pytest.approx(expected, abs=1e-12)
    assert derived[SPOOF]["spoofing_trials_left_out"] == 0


def test_countermeasure_scores_empty_exactly_on_the_hard_spoofs_are_named() -> None:
    cells = _cells(6, 4, seed=2)
    cm_genuine, cm_spoof = cells["cm"]
    spoof = (cells["spoof"]["trial_kind"] == "spoof").to_numpy()
    hard = spoof & (cells["asv"][1] > np.quantile(cells["asv"][1][spoof], 0.6))  # the spoofs the ASV accepts most
    blanked = np.where(hard, np.nan, cm_spoof)
    derived, _ = verify_beyond_eer_metrics(_files(cells, config={}, cm=(cm_genuine, blanked)))  # nothing declared
    honest, _ = verify_beyond_eer_metrics(_files(cells, config={}))
    assert derived[SPOOF]["sasv_eer"] < honest[SPOOF]["sasv_eer"]  # what the attack buys
    problems = _problems(_files(cells, cm=(cm_genuine, blanked)))
    assert problems == {
        SPOOF: [
            f"cm_score is empty on {int(hard.sum())} scored trial(s) ({int(hard.sum())} spoofs), which the "
            "spoofing-aware metrics leave out; only a failed chain, which fails its trial, leaves it empty"
        ]
    }


def test_a_cm_score_column_dropped_from_the_spoof_cell_is_named() -> None:
    cells = _cells(6, 4, seed=3)
    problems = _problems(_files(cells, cm=(cells["cm"][0], None)))
    assert problems == {
        SPOOF: ["experiment X01 is scored by the declared countermeasure, but its score file has no cm_score"]
    }


def test_spoof_trials_relabelled_as_bona_fide_are_named() -> None:
    """The spoofs become non-targets of other speakers of the genuine corpus (its table edited to hold them): every
    utterance check holds, but the signed configuration says this condition tests spoofs."""
    cells = _cells(6, 4, seed=4)
    relabelled = cells["spoof"].copy()
    spoofs = relabelled["trial_kind"] == "spoof"
    relabelled.loc[spoofs, "trial_kind"] = "nontarget"
    relabelled.loc[spoofs, "test_corpus"] = "genuine"
    relabelled.loc[spoofs, "test_speaker"] = "s-other"
    files = _files({**cells, "spoof": relabelled})
    n = int(spoofs.sum())
    assert _problems(files) == {
        SPOOF: [
            f"its test condition proxy is declared a spoof condition (spoofs = proxy), but {n} of its {n} "
            "non-target trials are no spoofs from that folder"
        ]
    }


@FUZZ
@given(
    n_speakers=st.integers(3, 8),
    per_speaker=st.integers(1, 4),
    seed=st.integers(0, 2**16),
    attack=st.sampled_from(["none", "blank", "drop", "relabel", "partial-relabel"]),
    share=st.floats(0.05, 1.0),
)
def test_property_honest_cells_pass_and_every_attack_is_named(
    n_speakers: int, per_speaker: int, seed: int, attack: str, share: float
) -> None:
    """Honest cells of any size pass; blanking, dropping or relabelling any share of the spoof cell is named, on
    the spoof cell only, and never raises anything but the step's finding."""
    cells = _cells(n_speakers, per_speaker, seed)
    spoof = (cells["spoof"]["trial_kind"] == "spoof").to_numpy()
    chosen = spoof & (np.random.default_rng(seed).random(len(spoof)) < share)
    chosen[np.flatnonzero(spoof)[0]] = True  # at least one
    cm, trials = cells["cm"], cells["spoof"]
    if attack == "blank":
        cm = (cm[0], np.where(chosen, np.nan, cm[1]))
    elif attack == "drop":
        cm = (cm[0], None)
    elif attack in ("relabel", "partial-relabel"):
        trials = trials.copy()
        moved = chosen if attack == "partial-relabel" else spoof
        trials.loc[moved, "trial_kind"] = "nontarget"
        trials.loc[moved, "test_corpus"] = "genuine"
    problems = _problems(_files({**cells, "spoof": trials}, cm=cm))
    assert (problems == {}) == (attack == "none")
    assert set(problems) <= {SPOOF}


ANALYSIS = 'equivalence_margin = 0.05\nn_resamples = 40\nseed = 3\ndev_speakers = ["s0", "s1"]'
NORMALISATION = 'score_normalisation = { method = "as-norm", top_n = 2, cohort = ["c0", "c1"] }'


def _with_cohort_statistics(root: Path, skip: set[str]) -> None:
    """Cohort statistics written into every score file but those of ``skip`` (mean 0, deviation 1 on both sides:
    the normalised score is the raw one), their digests in results.csv, and the bundle signed again."""
    results = pd.read_csv(root / "results.csv", dtype=str, keep_default_na=False)
    for index, record_id in enumerate(results["record_id"]):
        if record_id in skip:
            continue
        path = root / "scores" / f"{record_id}.parquet"
        frame = pd.read_parquet(path)
        cohort = np.tile([0.0, 1.0, 0.0, 1.0], (len(frame), 1))
        cohort[frame["status"].to_numpy() != "scored"] = np.nan
        data = scores_file_bytes(frame["label"].to_numpy(), frame["score"].to_numpy(), frame["status"].to_numpy(),
                                 results.loc[index, "run_id"], cohort=cohort)  # fmt: skip
        path.write_bytes(data)
        results.loc[index, "scores_blake3"] = bytes_digest(data).blake3
    results.to_csv(root / "results.csv", index=False)
    for name in ("statement.json", "run.intoto.jsonl"):
        (root / "provenance" / name).unlink()
    write_manifest(root, RUN_CONFIG, root.parent / "keys" / "run.key")


def _as_norm_failures(report: dict[str, Any]) -> list[str]:
    return [
        case["problem"]
        for flag in report["flags"]
        if flag["id"] == "score-mismatch"
        for case in flag["details"].get("failures", [])
    ]


@pytest.mark.slow
@pytest.mark.parametrize("stripped", ["none", "one", "all"])
def test_as_norm_declared_without_its_cohort_statistics_is_named(tmp_path: Path, stripped: str) -> None:
    bundle = build_bundle(tmp_path, analysis=f"{ANALYSIS}\n{NORMALISATION}")
    records = list(bundle.results["record_id"])
    skip = {"none": set(), "one": {records[0]}, "all": set(records)}[stripped]
    _with_cohort_statistics(bundle.root, skip)
    report = verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root, key=bundle.public_key))
    problems = _as_norm_failures(report)
    if stripped == "none":
        assert problems == [] and report["verdict"] == "pass", json.dumps(report["flags"])[:2000]
        return
    where = "no record's has" if stripped == "all" else "other records of its corpus have"
    assert report["verdict"] == "fail"
    assert problems == [
        f"score_normalisation (AS-norm) is declared, but its score file has no cohort statistics ({where})"
    ] * len(skip)
