"""The bundle's Croissant 1.1 card (``provenance.croissant``), checked by ``mlcroissant`` as the oracle.

mlcroissant loads and validates the JSON-LD (no error, no warning naming a required or mandatory property) and reads
every record set; the counts it reads are compared with pandas' reading of the same files, every FileObject's
SHA-256 with ``hashlib``. A synthetic signed bundle gets its card the way the runner's writer makes it; the
rehearsal's bundle is written by the writer itself.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import pandas as pd
import pytest

from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle, with_croissant_card

RUN_SPECIFIC = {"environment.json", "timings.json"}


def validated(path: Path) -> mlc.Dataset:
    """The card loaded by mlcroissant, with no error and no warning about a required or mandatory property."""
    dataset = mlc.Dataset(jsonld=str(path))
    issues = dataset.metadata.ctx.issues
    assert not issues.errors, issues.report()
    assert not [w for w in issues.warnings if "required" in w or "mandatory" in w], issues.report()
    return dataset


def record_counts(dataset: mlc.Dataset) -> dict[str, int]:
    return {
        record_set.uuid: sum(1 for _ in dataset.records(record_set.uuid)) for record_set in dataset.metadata.record_sets
    }


def rows(root: Path, pattern: str) -> int:
    """Rows of the bundle's tables matching ``pattern``, read by pandas."""
    return sum(
        len(pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)) for path in root.glob(pattern)
    )


@pytest.fixture
def carded(tmp_path: Path) -> tuple[SyntheticBundle, dict[str, Any]]:
    bundle = build_bundle(tmp_path)
    return bundle, with_croissant_card(bundle)


def test_mlcroissant_validates_the_card_and_reads_every_record_set(
    carded: tuple[SyntheticBundle, dict[str, Any]],
) -> None:
    bundle, _ = carded
    dataset = validated(bundle.root / "croissant.json")
    assert record_counts(dataset) == {
        "results": rows(bundle.root, "results.csv"),
        "trials": rows(bundle.root, "trials/*.csv"),
        "scores": rows(bundle.root, "scores/*.parquet"),
        "utterances": rows(bundle.root, "corpus/utterances.csv"),
    }
    first = next(iter(dataset.records("results")))
    table = pd.read_csv(bundle.root / "results.csv")
    assert first["results/eer"] == pytest.approx(table["eer"].iloc[0])
    assert first["results/n_target"] == table["n_target"].iloc[0]


def test_every_data_file_is_a_file_object_with_its_sha256(carded: tuple[SyntheticBundle, dict[str, Any]]) -> None:
    bundle, card = carded
    objects = {e["contentUrl"]: e["sha256"] for e in card["distribution"] if e["@type"] == "cr:FileObject"}
    statement = json.loads((bundle.root / "provenance" / "statement.json").read_bytes())
    data_files = {s["name"] for s in statement["subject"]} - RUN_SPECIFIC - {"croissant.json"}
    assert set(objects) == data_files
    assert all(hashlib.sha256((bundle.root / name).read_bytes()).hexdigest() == sha for name, sha in objects.items())
    assert card["conformsTo"] == "http://mlcommons.org/croissant/1.1"


def test_fields_are_the_schema_columns_the_files_have_with_their_types(
    carded: tuple[SyntheticBundle, dict[str, Any]],
) -> None:
    bundle, card = carded
    sets = {record_set["@id"]: record_set for record_set in card["recordSet"]}
    results_columns = list(pd.read_csv(bundle.root / "results.csv", nrows=0).columns)
    fields = {field["name"]: field["dataType"] for field in sets["results"]["field"]}
    assert set(fields) == set(results_columns)  # every column of the synthetic table is one the schema knows
    # Types by hand from schemas/results.py and schemas/scores.py.
    assert (fields["record_id"], fields["eer"], fields["n_target"]) == ("sc:Text", "sc:Float", "sc:Integer")
    scores = {field["name"]: field["dataType"] for field in sets["scores"]["field"]}
    assert scores == {"trial_index": "sc:Integer", "label": "sc:Integer", "score": "sc:Float", "status": "sc:Text"}


def test_the_responsible_ai_fields_count_the_speakers_from_the_corpus_table(
    carded: tuple[SyntheticBundle, dict[str, Any]],
) -> None:
    bundle, card = carded
    table = pd.read_csv(bundle.root / "corpus" / "utterances.csv")
    expected = f"corpus/utterances.csv: {len(table)} utterances of {table['speaker'].nunique()} speakers"
    assert expected in card["rai:dataBiases"] and expected in card["rai:dataCollection"]
    assert "biometric" in card["rai:personalSensitiveInformation"]
    assert "surveillance" in card["rai:dataUseCases"] and "noise-babble" in card["rai:dataPreprocessingProtocol"]


def test_few_voices_of_a_declared_gender_are_named(tmp_path: Path) -> None:
    def one_male(table: pd.DataFrame) -> pd.DataFrame:
        return table.assign(gender=["M" if speaker == "s0" else "F" for speaker in table["speaker"]])

    bundle = build_bundle(tmp_path, corpus_table_edit=one_male)
    card = with_croissant_card(bundle)
    assert "(5 F, 1 M)" in card["rai:dataBiases"]
    assert "Few voices: corpus/utterances.csv has 1 M speaker(s)" in card["rai:dataBiases"]


@pytest.mark.runner  # the rehearsal writes audio (soundfile, of the runner extra)
@pytest.mark.slow  # the rehearsal's writer and mlcroissant reading every record: about 10 s on a loaded machine
def test_the_bundle_writer_signs_a_card_that_mlcroissant_reads(tmp_path: Path) -> None:
    from runner.rehearsal import write_paper_bundle

    bundle = write_paper_bundle(tmp_path / "bundle", scale=0.05, labels=1, experiments=("E16",), pad=False, seed=3)
    statement = json.loads((bundle.root / "provenance" / "statement.json").read_bytes())
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    assert subjects["croissant.json"] == hashlib.sha256((bundle.root / "croissant.json").read_bytes()).hexdigest()
    counts = record_counts(validated(bundle.root / "croissant.json"))
    assert counts["results"] == bundle.n_records == rows(bundle.root, "results.csv")
    assert counts["scores"] == rows(bundle.root, "scores/*.parquet")
    assert counts["utterances"] == rows(bundle.root, "corpus/**/utterances.csv")
