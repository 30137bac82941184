"""The bundle's Croissant 1.1 card (``provenance.croissant``), checked by ``mlcroissant`` as the oracle.

mlcroissant loads and validates the JSON-LD (no error, no warning naming a required or mandatory property) and reads
every record set; the counts it reads are compared with pandas' reading of the same files, every FileObject's
SHA-256 with ``hashlib``. A synthetic signed bundle gets its card the way the runner's writer makes it; the
rehearsal's bundle is written by the writer itself. Each corpus release's licence is checked against the words of
the corpus page the card cites; a table alone gets a card whose records mlcroissant reads as pandas does, whatever
the order of its columns and however pandas rounded it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import pandas as pd
import pytest

from provenance import bytes_digest, write_table_card
from schemas import ResultsSchema
from tests.provenance.synthetic_bundle import SyntheticBundle, build_bundle, with_croissant_card
from tests.schemas.corpus_cards import licence_bullet

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


def licensed(table: pd.DataFrame) -> pd.DataFrame:
    """The corpus table's speakers recorded from three releases the registry knows and one it does not."""
    releases = {"s0": "VoxCeleb1", "s1": "asterisk-core-sounds-ru-g722", "s2": "fillets-ng-data-cs"}
    return table.assign(
        source_package=[releases.get(speaker, "my spoof folder") for speaker in table["speaker"]], source_version="1"
    )


def test_each_corpus_release_states_its_licence_as_its_corpus_card_does(tmp_path: Path) -> None:
    bundle = build_bundle(tmp_path, corpus_table_edit=licensed)
    card = with_croissant_card(bundle)
    dataset = validated(bundle.root / "croissant.json")
    works = {work["name"]: work for work in card["license"]}
    # By hand, from docs/corpora/voxceleb1.md, asterisk.md (its ru package) and fillets.md.
    assert set(works) == {"CC BY 4.0", "CC BY 3.0", "GPL version 2", "not stated"}
    assert works["CC BY 4.0"]["url"] == "https://spdx.org/licenses/CC-BY-4.0.html"
    assert works["GPL version 2"]["url"] == "https://spdx.org/licenses/GPL-2.0-only.html"
    assert works["not stated"]["description"].startswith("my spoof folder: ")
    for name, work in works.items():
        if name != "not stated":  # the corpus card the entry cites states that licence, in its own words
            cited = work["description"].split(" as ")[1].split(" of interbias-sv")[0]
            assert name in licence_bullet(cited)
    assert sorted(work.name for work in dataset.metadata.license) == sorted(works)


def test_a_bundle_whose_tables_record_no_release_says_no_licence_can_be_stated(
    carded: tuple[SyntheticBundle, dict[str, Any]],
) -> None:
    _, card = carded
    assert [work["name"] for work in card["license"]] == ["not stated"]
    assert "record no release" in card["license"][0]["description"]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "results.csv"


def table_records(card: Path) -> list[dict[str, Any]]:
    """The table card's one record set as mlcroissant reads it, values as text (None for an empty cell)."""

    def text(value: Any) -> str | None:
        value = value.decode() if isinstance(value, bytes) else value
        return None if value is None or value == "" or (isinstance(value, float) and value != value) else str(value)

    return [
        {key.split("/", 1)[1]: text(value) for key, value in record.items()}
        for record in validated(card).records("results")
    ]


def same_values(read: list[dict[str, Any]], table: Path, types: dict[str, str]) -> None:
    """mlcroissant's records equal pandas' reading of ``table``, row by row: text as written, numbers as numbers."""
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    assert len(read) == len(frame)
    for record, (_, row) in zip(read, frame.iterrows(), strict=True):
        assert set(record) == set(types)
        for column, value in record.items():
            written = row[column] or None
            if types[column] == "sc:Text" or written is None:
                assert value == written, column
            else:
                assert float(value) == pytest.approx(float(written)), column


def test_a_table_alone_gets_a_card_mlcroissant_reads_as_pandas_does(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    card_path = write_table_card(out, EXAMPLE, bytes_digest(EXAMPLE.read_bytes()), "0.1.0")
    card = json.loads(card_path.read_bytes())
    (table_object,) = card["distribution"]
    assert table_object["sha256"] == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    assert (out / table_object["contentUrl"]).resolve() == EXAMPLE.resolve()
    types = {field["name"]: field["dataType"] for field in card["recordSet"][0]["field"]}
    assert list(types) == [c for c in ResultsSchema.to_schema().columns if c in set(pd.read_csv(EXAMPLE, nrows=0))]
    assert (types["eer"], types["n_target"], types["model"]) == ("sc:Float", "sc:Integer", "sc:Text")
    same_values(table_records(card_path), EXAMPLE, types)
    assert "biometric" in card["rai:personalSensitiveInformation"]
    assert card["rai:dataUseCases"].startswith("Intended:") and "surveillance" in card["rai:dataUseCases"]
    assert card["rai:dataCollection"].startswith("Not stated: the table was audited without a bundle")
    assert [work["name"] for work in card["license"]] == ["not stated"]
    assert "RAVDESS" in card["license"][0]["description"]  # the corpora the table's corpus column names


@pytest.mark.parametrize("change", ["reordered", "rounded"])
def test_a_reordered_or_pandas_rounded_table_still_gets_a_valid_card(tmp_path: Path, change: str) -> None:
    frame = pd.read_csv(EXAMPLE)
    frame = frame[list(reversed(frame.columns))] if change == "reordered" else frame.round(2)
    if change == "rounded":
        frame.loc[0, "n_target"] = None  # an integer column with a gap: pandas writes the others as 200.0
    table = tmp_path / "results.csv"
    frame.to_csv(table, index=False)
    assert change == "reordered" or ",200.0,2000," in table.read_text()  # pandas wrote n_target as 200.0
    card_path = write_table_card(tmp_path, table, bytes_digest(table.read_bytes()), "0.1.0")
    card = json.loads(card_path.read_bytes())
    types = {field["name"]: field["dataType"] for field in card["recordSet"][0]["field"]}
    same_values(table_records(card_path), table, types)
