"""audit.statistics.bundle on a real folder of trial lists and parquet scores: a population contrast (factor A
selects other utterances, so its terms use two trial lists) gets statistics, labelled as such, in the row's EER
variant; oracles: audit.metrics.point on each term's own list, and the same contrast on one shared list."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.bundle.verified import Authentication, LoadedFiles, Trust, VerifiedBundle
from audit.metrics.point import eer
from audit.statistics.bundle import statistics_of_bundle
from audit.table.contrasts import derive_contrasts
from schemas import keyed_rows
from schemas.bundle import RecordScores
from schemas.results import validate_results, with_all_columns

LEVELS = {"clean": ("none", "none"), "a": ("old", "none"), "b": ("none", "noise"), "ab": ("old", "noise")}


def _trial_list(rng: np.random.Generator, speakers: list[str], n: int) -> pd.DataFrame:
    enrol = rng.choice(speakers, n)
    labels = rng.integers(0, 2, n)
    other = np.array([rng.choice([s for s in speakers if s != e]) for e in enrol])
    return pd.DataFrame({"label": labels, "enrol_speaker": enrol, "test_speaker": np.where(labels == 1, enrol, other)})


def _bundle(
    tmp_path: Path, lists: dict[str, str], **analysis: object
) -> tuple[pd.DataFrame, VerifiedBundle, dict[str, pd.DataFrame]]:
    """Results rows, a verified bundle holding them in memory, and each term's trials; ``lists`` maps each term to
    its trial list id; ``analysis``: further keys of the configuration's [analysis]."""
    rng = np.random.default_rng(3)
    config = {"analysis": {"equivalence_margin": 0.05, "n_resamples": 60, "matched_simulations": 10, **analysis}}
    speakers = {"young": [f"y{i}" for i in range(8)], "old": [f"o{i}" for i in range(8)]}
    trial_lists = {
        list_id: _trial_list(rng, speakers[list_id], 300).astype(str) for list_id in sorted(set(lists.values()))
    }
    rows, trials, scores_of = [], {}, {}
    for shift, (term, (level_a, level_b)) in enumerate(LEVELS.items()):
        frame = trial_lists[lists[term]]
        labels = frame["label"].astype(int).to_numpy()
        scores = rng.normal(labels * (2.0 - 0.3 * shift), 1.0)
        scores_of[f"r-{term}"] = RecordScores(labels.astype(np.int8), scores, np.ones(len(scores), dtype=bool))
        trials[term] = frame.assign(score=scores)
        rows.append(
            {
                "record_id": f"r-{term}",
                "experiment": "E13",
                "model": "m1",
                "model_family": "speaker",
                "corpus": "c1",
                "condition": f"{level_a}/{level_b}",
                "eer": str(eer(scores, labels, "rocch")),
                "n_target": str(labels.sum()),
                "n_nontarget": str((1 - labels).sum()),
                "eer_method": "rocch",
                "factor_a": "age",
                "level_a": level_a,
                "factor_b": "noise",
                "level_b": level_b,
                "trial_list_id": lists[term],
            }
        )
    validated = validate_results(pd.DataFrame(rows, dtype=str))
    assert validated.failures == []
    files = LoadedFiles(results=pd.DataFrame(rows, dtype=str), trial_lists=trial_lists, scores=scores_of, config=config)
    bundle = VerifiedBundle(tmp_path, Authentication(Trust.TRUSTED_KEY, "k" * 64), {}, {}, files, None, [], [])
    return with_all_columns(validated.valid), bundle, trials


@pytest.mark.slow
def test_a_population_contrast_gets_statistics_in_the_rows_eer_variant(tmp_path: Path) -> None:
    results, bundle, trials = _bundle(tmp_path, {"clean": "young", "a": "old", "b": "young", "ab": "old"})
    contrasts = derive_contrasts(results).contrasts
    assert contrasts[0].trial_matching == "population-a"
    statistics, sections, _ = statistics_of_bundle(results, contrasts, bundle)
    assert statistics is not None
    (contrast,) = statistics["contrasts"]
    assert contrast["population_contrast"] and contrast["eer_method"] == "rocch" == statistics["eer_method"]
    assert contrast["n_clusters"] == 16 and contrast["cluster"] == "enrolment and test speakers (two-way)"
    for term, frame in trials.items():
        expected = eer(frame["score"], frame["label"].astype(int), "rocch")
        assert contrast["estimates"][term]["estimate"] == pytest.approx(expected, abs=1e-15)
        assert contrast["n_trials"][term] == len(frame)
    family = statistics["families"]["E13/speaker"]
    assert family["n_population_contrasts"] == 1 and family["n_contrasts"] == 1
    lines = " ".join(sections[0]["lines"])
    assert "1 of them population contrasts" in lines and "16 speakers" in lines  # fewer than 30: warned


def test_a_shared_list_contrast_is_not_a_population_contrast(tmp_path: Path) -> None:
    results, bundle, _ = _bundle(tmp_path, dict.fromkeys(LEVELS, "young"))
    statistics, _, _ = statistics_of_bundle(results, derive_contrasts(results).contrasts, bundle)
    assert statistics is not None
    (contrast,) = statistics["contrasts"]
    assert not contrast["population_contrast"] and isinstance(contrast["n_trials"], int)


def test_the_report_det_curves_get_bands_from_the_shared_draws(tmp_path: Path) -> None:
    """Each DET curve the report draws (named by its record) gets a band from the statistics' shared draws, and none
    else; its estimate at each rate the oracle's share of targets below the non-target whose step holds that rate."""
    results, bundle, trials = _bundle(tmp_path, dict.fromkeys(LEVELS, "young"))
    curves = [
        {"figures": ["det"], "figure": "E13", "panel": term, "series": "m1", "record_id": f"r-{term}"}
        for term in ("clean", "ab")
    ] + [{"figures": ["scores"], "record_id": "r-a"}]  # a histogram: no band
    statistics, _, _ = statistics_of_bundle(results, derive_contrasts(results).contrasts, bundle, det_curves=curves)
    assert statistics is not None
    bands = statistics["det_bands"]
    assert [band["key"]["record_id"] for band in bands] == ["r-clean", "r-ab"]
    frame = trials["ab"]
    labels, scores = frame["label"].astype(int).to_numpy() == 1, frame["score"].to_numpy()
    for rate, miss in zip(bands[1]["p_fa"], bands[1]["p_miss"], strict=True):
        nontargets = np.sort(scores[~labels])[::-1]
        step = nontargets[int(np.ceil(rate * nontargets.size)) - 1]  # the non-target whose step reaches the rate
        assert miss == pytest.approx(np.mean(scores[labels] < step), abs=1e-5)


def test_speakers_under_stress_compare_each_compound_cell_with_its_clean_reference(tmp_path: Path) -> None:
    """The contrast's clean record is the menagerie's reference and its both-factors record the stressed cell; the
    report's section names the rule and the declared quantiles (the defaults here)."""
    results, bundle, _ = _bundle(tmp_path, dict.fromkeys(LEVELS, "young"))
    statistics, sections, _ = statistics_of_bundle(results, derive_contrasts(results).contrasts, bundle)
    assert statistics is not None
    (result,) = statistics["menagerie"]
    assert result["key"]["record_id"] == "r-clean" and result["quantiles"] == [0.1, 0.9]
    (stressed,) = result["stressed"]
    assert stressed["key"]["record_id"] == "r-ab" and stressed["key"]["condition"] == "old x noise"
    assert sorted(keyed_rows(stressed["speakers"])) == [f"y{i}" for i in range(8)]
    (section,) = [s for s in sections if s["id"] == "speakers-under-stress"]
    assert "10% quantile of mean target scores" in section["lines"][0]
    assert len(section["table"]) == len(stressed["changes"])


def test_speakers_under_stress_have_per_speaker_eers_or_a_reason(tmp_path: Path) -> None:
    """Every enrolment speaker of each record has an EER (in the statistics' variant, over the trials enrolled on it)
    or is left out with its counts (no silent omission); the section's second table pairs clean and stressed."""
    results, bundle, trials = _bundle(tmp_path, dict.fromkeys(LEVELS, "young"))
    statistics, sections, _ = statistics_of_bundle(results, derive_contrasts(results).contrasts, bundle)
    assert statistics is not None
    (result,) = statistics["menagerie"]
    for term, record in (("clean", result), ("ab", result["stressed"][0])):
        frame, eers = trials[term], keyed_rows(record["eers"])
        assert set(eers) | set(record["left_out"]) == set(frame["enrol_speaker"])
        assert record["eer"] == pytest.approx(eer(frame["score"], frame["label"].astype(int), "rocch"))
        for speaker, value in eers.items():
            own = frame[frame["enrol_speaker"] == speaker]
            assert value["estimate"] == pytest.approx(eer(own["score"], own["label"].astype(int), "rocch"))
            assert value["n_target"] >= 10 and value["n_nontarget"] >= 20
        for speaker, why in record["left_out"].items():
            own = frame[frame["enrol_speaker"] == speaker]
            n_target = int(own["label"].astype(int).sum())
            assert why == f"{n_target} target and {len(own) - n_target} non-target trials"
    (section,) = [s for s in sections if s["id"] == "speakers-under-stress"]
    (table,) = section["tables"]
    speakers = set(keyed_rows(result["eers"])) | set(keyed_rows(result["stressed"][0]["eers"]))
    assert {row["speaker"] for row in table["rows"]} == speakers
    assert any("Per-speaker EER" in line for line in section["lines"])


def test_the_declared_minimum_of_trials_decides_who_gets_an_eer(tmp_path: Path) -> None:
    """[analysis] speaker_eer_min_trials = [1, 1]: every enrolment speaker with a trial of each class has an EER."""
    results, bundle, trials = _bundle(tmp_path, dict.fromkeys(LEVELS, "young"), speaker_eer_min_trials=[1, 1])
    statistics, _, _ = statistics_of_bundle(results, derive_contrasts(results).contrasts, bundle)
    assert statistics is not None
    (result,) = statistics["menagerie"]
    assert result["min_trials"] == [1, 1] and result["left_out"] == {}
    assert set(keyed_rows(result["eers"])) == set(trials["clean"]["enrol_speaker"])
