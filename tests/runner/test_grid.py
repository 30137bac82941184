"""The grid bundle (``runner/grid.py``) at a small size: it verifies PASS under the key it was signed with, and it has
the promised shape: 12 encoder labels, float64 score columns in zstd-compressed Parquet, every cell of an
interaction's grid (and every condition of an experiment) on one trial list, spoof cells on their experiment's
targets.

Two designs of configs/full.toml stand for it: E17 (a two-factor interaction: session-1 or later x none or two
packet losses, a 2 x 3 grid) and E10 (a spoof cell beside its genuine cell).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from runner.grid import draw_pairs, write_grid_bundle
from runner.rehearsal import PaperBundle

LABELS = 12
CELLS = {"E10": 2, "E17": 6}  # by hand from full.toml: E10 clean->{clean, spoof-tts}; E17 (1 + 1) x (1 + 2)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> PaperBundle:
    folder = tmp_path_factory.mktemp("grid") / "bundle"
    return write_grid_bundle(folder, scale=0.02, labels=LABELS, experiments=tuple(CELLS), pad=False, seed=5)


def results_of(bundle: PaperBundle) -> pd.DataFrame:
    return pd.read_csv(bundle.root / "results.csv", dtype={"trial_list_id": str, "record_id": str})


@pytest.mark.slow  # about 8 s: the whole audit (1,000 resamples) of 96 records
def test_the_bundle_verifies_pass(bundle: PaperBundle) -> None:
    from audit import AuditRequest, verify

    report = verify(AuditRequest(bundle.root / "results.csv", bundle=bundle.root, key=bundle.public_key))
    errors = [flag for flag in report["flags"] if flag["severity"] == "error"]
    assert report["verdict"] == "pass", errors


def test_twelve_encoders_and_every_cell_of_an_experiment_on_one_list(bundle: PaperBundle) -> None:
    results = results_of(bundle)
    assert results["model"].nunique() == LABELS
    assert results.groupby("experiment").size().to_dict() == {e: n * LABELS for e, n in CELLS.items()}
    interaction = results[results["experiment"] == "E17"]
    assert interaction["factor_b"].notna().all() and interaction["trial_list_id"].nunique() == 1
    assert len(interaction.groupby(["level_a", "level_b"])) == 6  # the whole 2 x 3 grid, on that one list
    # E10: the genuine cell on one list, the spoof cell on another with the same targets, pair for pair.
    lists = results[results["experiment"] == "E10"].groupby("condition")["trial_list_id"].unique()
    assert lists.map(len).tolist() == [1, 1]
    genuine, spoof = (
        pd.read_csv(bundle.root / "trials" / f"{lists[name][0]}.csv") for name in ("clean->clean", "clean->spoof-tts")
    )
    assert (spoof["trial_kind"] == "spoof").sum() == (genuine["label"] == 0).sum()
    targets = [t.loc[t["label"] == 1] for t in (genuine, spoof)]
    pairs = [sorted(zip(t["enrol_utt"], t["test_utt"], strict=True)) for t in targets]
    assert pairs[0] == pairs[1]


def test_scores_are_float64_at_full_precision_in_zstd_parquet(bundle: PaperBundle) -> None:
    files = sorted((bundle.root / "scores").glob("*.parquet"))
    assert len(files) == bundle.n_records
    for path in files[:: max(1, len(files) // 8)]:
        meta = pq.ParquetFile(path)
        assert meta.schema_arrow.field("score").type == "double"
        assert {meta.metadata.row_group(0).column(i).compression for i in range(meta.metadata.num_columns)} == {"ZSTD"}
    scores = pq.read_table(files[0]).column("score").to_numpy()
    finite = scores[np.isfinite(scores)]
    assert not np.array_equal(finite, finite.astype(np.float32).astype(np.float64))  # not float32 cosines


def test_pairs_are_distinct_and_labelled_by_their_speakers() -> None:
    speakers = np.repeat(np.arange(6), 5)
    enrol, test, labels = draw_pairs(speakers, 30, 60, np.random.default_rng(0))
    assert labels.sum() == 30 and len(labels) == 90
    assert ((speakers[enrol] == speakers[test]) == (labels == 1)).all() and (enrol != test).all()
    assert len({(min(e, t), max(e, t)) for e, t in zip(enrol, test, strict=True)}) == 90
