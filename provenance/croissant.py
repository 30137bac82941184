"""A Croissant 1.1 card of a bundle (``croissant.json``), with its Responsible-AI fields.

``distribution``: one FileObject per data file of the bundle with its SHA-256 (the results table, every trial list,
score file and corpus table, the JSON and TOML documents), and one FileSet per family of tables a record set reads;
``recordSet``: the results, trial lists, per-trial scores and utterances, each field typed from the table's pandera
model (``schemas``), never hand-copied, and only the columns the files have; the ``rai:`` fields say how the speech
was collected, who speaks in it (counted from the corpus tables), what is simulated, what the data may and may not be
used for (the paper's ethics statement), and that voice is biometric data; ``license``: one CreativeWork per licence
of the corpus releases the corpus tables record (``source_package``), from ``schemas.CORPUS_LICENCES``.

The runner writes the card as a subject of the bundle, so it is signed with every other file; the audit checks that
it agrees with the bundle (:func:`card_disagreements`). A results table audited without a bundle gets a card of its
own on request (:func:`write_table_card`, ``audit verify --croissant``): the table, its record set, and RAI fields
that say what a table alone cannot (how the speech was collected, its licences: not stated).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

from provenance.atomic import atomic_write_bytes
from provenance.digests import Digest
from schemas import (
    CORPUS_DIR,
    CORPUS_LICENCES,
    CROISSANT_FILE,
    RESULTS_FILE,
    RUN_SPECIFIC_FILES,
    SCORES_DIR,
    TRIALS_DIR,
    UTTERANCES_FILE,
    CorpusLicence,
    ResultsSchema,
    ScoresSchema,
    TrialsSchema,
    UtteranceSchema,
    json_file_bytes,
)

__all__ = [
    "CROISSANT_CONFORMS_TO",
    "CROISSANT_CONTEXT",
    "card_bytes",
    "card_disagreements",
    "croissant_card",
    "table_card",
    "write_table_card",
]

CROISSANT_CONFORMS_TO = "http://mlcommons.org/croissant/1.1"
# The JSON-LD context of Croissant 1.1 (its specification's, with the RAI vocabulary's prefix).
CROISSANT_CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "equivalentProperty": "cr:equivalentProperty",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
ENCODINGS = {
    ".csv": "text/csv",
    ".parquet": "application/x-parquet",
    ".json": "application/json",
    ".toml": "application/toml",
}


def _listed(name: str) -> bool:
    """A data file the card lists: not the card, nor a record of the machine and the clock (``RUN_SPECIFIC_FILES``,
    which two runs of one configuration may differ in, while their cards must not)."""
    return name != CROISSANT_FILE and name not in RUN_SPECIFIC_FILES


FEW_VOICES = 5  # a declared group with fewer speakers is named in the card's biases


def _is_corpus_table(name: str) -> bool:
    return name.startswith(f"{CORPUS_DIR}/") and PurePosixPath(name).name == UTTERANCES_FILE


# A record set per family of tables: (id, what its records are, the pandera model, which bundle files it reads).
RECORD_SETS = (
    ("results", "one row per scored record (results.csv)", ResultsSchema, lambda name: name == RESULTS_FILE),
    ("trials", "the trials of every trial list (trials/*.csv)", TrialsSchema,
     lambda name: name.startswith(f"{TRIALS_DIR}/")),
    ("scores", "per-trial scores of every record (scores/*.parquet)", ScoresSchema,
     lambda name: name.startswith(f"{SCORES_DIR}/")),
    ("utterances", "the utterances of every corpus (corpus/**/utterances.csv)", UtteranceSchema,
     _is_corpus_table),
)  # fmt: skip
RESULTS_SET = RECORD_SETS[0][:3]  # the results' (id, what, model): a table alone has this record set only


def _data_type(dtype: Any) -> str:
    """The schema.org type of a pandera column type."""
    text = str(dtype).lower()
    if "int" in text:
        return "sc:Integer"
    if "float" in text:
        return "sc:Float"
    if "bool" in text:
        return "sc:Boolean"
    return "sc:Text"


def _columns(path: Path) -> list[str]:
    """The columns of a bundle table, read from its header (CSV) or its footer's schema (Parquet)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return list(pd.read_csv(path, nrows=0).columns)


def _record_set(
    set_id: str, what: str, model: Any, names: list[str], root: Path, renamed: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A RecordSet over ``names``: a field for each column of the model that every one of the files has, read from
    the file's own column (``renamed``: file column -> model column, a legacy table's rename map)."""
    renamed = renamed or {}
    present = set.intersection(*({renamed.get(c, c) for c in _columns(root / name)} for name in names))
    in_file = {column: file_column for file_column, column in renamed.items()}
    source = {"fileObject": {"@id": names[0]}} if len(names) == 1 else {"fileSet": {"@id": f"{set_id}-files"}}
    return {
        "@type": "cr:RecordSet",
        "@id": set_id,
        "name": set_id,
        "description": what,
        "field": [
            {
                "@type": "cr:Field",
                "@id": f"{set_id}/{column}",
                "name": column,
                "dataType": _data_type(spec.dtype),
                "source": {**source, "extract": {"column": in_file.get(column, column)}},
            }
            for column, spec in model.to_schema().columns.items()
            if column in present
        ],
    }


def _file_object(name: str, digest: Digest, content_url: str | None = None) -> dict[str, Any]:
    return {
        "@type": "cr:FileObject",
        "@id": name,
        "name": name,
        "contentUrl": content_url or name,
        "encodingFormat": ENCODINGS.get(PurePosixPath(name).suffix, "application/octet-stream"),
        "sha256": digest.sha256,
    }


def _corpus_tables(root: Path, names: list[str]) -> dict[str, pd.DataFrame]:
    """The bundle's corpus tables, as text, by bundle name (read once for the speakers and the licences)."""
    return {
        name: pd.read_csv(root / name, dtype=str, keep_default_na=False) for name in filter(_is_corpus_table, names)
    }


def _speakers(tables: Mapping[str, pd.DataFrame]) -> tuple[list[str], list[str]]:
    """Per corpus table: its speakers with their declared genders and releases, counted from the table; and the
    declared groups too few to say much (fewer than ``FEW_VOICES`` speakers)."""
    lines, few = [], []
    for name, table in tables.items():
        speakers = table.drop_duplicates("speaker")
        text = f"{name}: {len(table)} utterances of {len(speakers)} speakers"
        if "gender" in table:
            genders = speakers["gender"].replace("", "not declared").value_counts().sort_index()
            text += " (" + ", ".join(f"{count} {gender}" for gender, count in genders.items()) + ")"
            few += [
                f"{name} has {count} {gender} speaker(s)" for gender, count in genders.items() if count < FEW_VOICES
            ]
        if "source_package" in table and "source_version" in table:
            pairs = zip(table["source_package"], table["source_version"], strict=True)
            releases = sorted({f"{package} {version}".strip() for package, version in pairs})
            text += "; releases read: " + ", ".join(releases[:12]) + (" ..." if len(releases) > 12 else "")
        lines.append(text)
    return lines, few


def _not_stated(why: str) -> dict[str, Any]:
    return {"@type": "sc:CreativeWork", "name": "not stated", "description": why}


def _licences(tables: Mapping[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """One CreativeWork per licence of the corpus releases the tables record (``source_package``), naming the
    releases under it, from ``schemas.CORPUS_LICENCES``; releases it does not know are one entry saying so."""
    releases = sorted({p for t in tables.values() if "source_package" in t for p in t["source_package"]} - {""})
    if not releases:
        return [_not_stated("The corpus tables record no release (source_package), so no licence can be stated.")]
    by_licence: dict[CorpusLicence | None, list[str]] = {}
    for release in releases:
        by_licence.setdefault(CORPUS_LICENCES.get(release), []).append(release)
    works = []
    for licence, named in by_licence.items():
        if licence is None:
            continue
        spdx = f" (SPDX {licence.spdx})" if licence.spdx else ""
        work = {
            "@type": "sc:CreativeWork",
            "name": licence.name,
            "description": f"{', '.join(named)}: {licence.name}{spdx}, as {licence.card} of interbias-sv states.",
        }
        works.append(work | ({"url": licence.reference} if licence.reference else {}))
    if None in by_licence:
        works.append(
            _not_stated(
                f"{', '.join(by_licence[None])}: a release whose licence the toolkit does not record (a spoof folder's "
                "maker states it beside the folder)."
            )
        )
    return works


def _simulated(operators: Mapping[str, Any] | None) -> str:
    """The degradations the run simulated, by operator chain (operators.json)."""
    chains = sorted((operators or {}).get("chains", {}))
    if not chains:
        return "No degradation operators were applied."
    return (
        f"Degradations are simulated by {len(chains)} operator chain(s) ({', '.join(chains[:20])}"
        f"{' ...' if len(chains) > 20 else ''}): noise, codecs, rooms and spoofs made by operators and proxies, not "
        "recorded in the field; operators.json counts where each applied, failed or fell back."
    )


# What every card says alike, the bundle's and a table's: who may use the data for what (the paper's ethics
# statement), how results may be misread, and that voice is biometric data.
BIOMETRIC = "Voice is biometric data."
USE_CASES = (
    "Intended: condition-level comparisons and subgroup analysis of text-independent speaker verification, and "
    "recomputation of the benchmark's metrics and contrasts. Out of scope: certifying fairness for any population, "
    "and justifying biometric surveillance or access-control deployment (the paper's ethics statement)."
)
SOCIAL_IMPACT = (
    "Results may be misread as fairness certificates for speaker-verification systems; they describe these corpora "
    "and conditions only."
)
NO_BUNDLE = "Not stated: the table was audited without a bundle"


def _card(name: str, url: str, tool_version: str, description: str) -> dict[str, Any]:
    """The head every card shares: Croissant's context and conformance, the citation, the keywords."""
    return {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CROISSANT_CONFORMS_TO,
        "name": name,
        "description": description,
        "url": url,
        "version": tool_version,
        "citeAs": "InterBias-SV: compound conditions in speaker verification (see CITATION.cff of interbias-sv).",
        "keywords": ["speaker verification", "robustness", "compound conditions", "biometrics"],
        "isLiveDataset": False,
    }


def croissant_card(
    root: Path, digests: Mapping[str, Digest], run_id: str, tool_version: str,
    operators: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The card of the bundle in ``root`` whose data files are ``digests`` (bundle-relative name -> digest, as
    written); the tables' headers and the corpus tables are read from the folder. The card itself, the provenance
    and the report are not data files and are never listed."""
    names = sorted(name for name in digests if _listed(name))
    distribution: list[dict[str, Any]] = [_file_object(name, digests[name]) for name in names]
    record_sets = []
    for set_id, what, model, member in RECORD_SETS:
        members = [name for name in names if member(name)]
        if not members:
            continue
        if len(members) > 1:
            distribution.append(
                {
                    "@type": "cr:FileSet",
                    "@id": f"{set_id}-files",
                    "name": f"{set_id}-files",
                    "encodingFormat": ENCODINGS[PurePosixPath(members[0]).suffix],
                    "includes": members,
                }
            )
        record_sets.append(_record_set(set_id, what, model, members, root))
    tables = _corpus_tables(root, names)
    speakers, few = _speakers(tables)
    description = (
        "An InterBias-SV artefact bundle: speaker-verification trial lists drawn from the corpora below, per-trial "
        "cosine scores of frozen encoders under single and compound degradations, and the metrics of each scored "
        "record; every file is a signed subject of provenance/statement.json. The trial lists, scores and corpus "
        "tables derived from a corpus are distributed under that corpus's licence (license)."
    )
    return _card(f"interbias-sv run {run_id}", f"urn:interbias-sv:run:{run_id}", tool_version, description) | {
        "license": _licences(tables),
        "distribution": distribution,
        "recordSet": record_sets,
        "rai:dataCollection": (
            "No speech was recorded for this bundle: the runner read published corpora (utterance tables under "
            "corpus/), drew seeded trial lists from them, degraded the audio by operator chains and scored each trial "
            "with frozen encoders. " + " ".join(f"{line}." for line in speakers)
        ),
        "rai:dataCollectionType": ["Secondary Data Analysis", "Software Collection"],
        "rai:dataPreprocessingProtocol": _simulated(operators),
        "rai:dataBiases": (
            "Speakers and their declared attributes as the corpus tables give them: "
            + ("; ".join(speakers) if speakers else "no corpus table in this bundle")
            + ". "
            + (f"Few voices: {'; '.join(few)}; estimates for them rest on very few speakers. " if few else "")
            + "Gender is the coarse binary label the corpora publish, where they publish one."
        ),
        "rai:dataLimitations": (
            "Simulated noise, codecs and rooms and proxy spoofs stand in for field conditions; interaction "
            "contrasts are descriptive of these corpora and encoders, and evaluation-speaker overlap with the "
            "encoders' pre-training is unresolved."
        ),
        "rai:personalSensitiveInformation": (
            f"{BIOMETRIC} The bundle holds no audio: utterance ids, relative paths and digests, speaker ids and the "
            "attributes the corpora declare (gender, age, accent, emotion where published), and per-trial scores "
            "derived from voice embeddings."
        ),
        "rai:dataUseCases": USE_CASES,
        "rai:dataSocialImpact": SOCIAL_IMPACT,
    }


def table_card(
    table: Path, content_url: str, digest: Digest, tool_version: str, renamed: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The card of a results table audited without its bundle: the table as one FileObject (reached at
    ``content_url``, relative to the card's folder) with its SHA-256, its record set typed from ``ResultsSchema``
    (``renamed``: a legacy table's column -> results column), and Responsible-AI fields that say only what a table
    alone shows: how its speech was collected, by whom and under which licence are not stated."""
    name = Path(table).name
    frame = pd.read_csv(table, dtype=str, keep_default_na=False).rename(columns=renamed or {})
    corpora = sorted(set(frame["corpus"]) - {""}) if "corpus" in frame else []
    named = f"it names the corpora {', '.join(corpora)} (its corpus column)" if corpora else "it names no corpus"
    description = (
        f"A speaker-verification results table ({name}) audited by interbias-sv without its bundle: one row per scored "
        "record (encoder, corpus, condition, EER and trial counts). Nothing in it is signed or bound to per-trial "
        "scores, trial lists or corpus tables."
    ) + (
        " Columns the audit's --columns map renamed are read under their names in the file, with the values the "
        "file writes (a map's rewrite of values, such as a percent EER, is not applied here)."
        if renamed
        else ""
    )
    return _card(f"interbias-sv audited table {name}", f"urn:sha256:{digest.sha256}", tool_version, description) | {
        "license": [_not_stated(f"{NO_BUNDLE}; {named}, whose licences the table does not record.")],
        "distribution": [_file_object(name, digest, content_url)],
        "recordSet": [_record_set(*RESULTS_SET, [name], Path(table).parent, renamed)],
        "rai:dataCollection": (
            f"{NO_BUNDLE}: how the speech was collected, which utterances and speakers the trials drew, and which "
            f"degradations were applied are not known from the table; {named}."
        ),
        "rai:dataBiases": (
            f"{NO_BUNDLE}: the speakers and their declared attributes are in the corpus tables of a bundle, not in the "
            "table; a subgroup column, where present, names the declared groups whose rows it holds."
        ),
        "rai:dataLimitations": (
            "A table alone supports recomputing its aggregates and contrasts from the rows as written: no re-scoring, "
            "no trial matching, no confidence interval from per-trial scores."
        ),
        "rai:personalSensitiveInformation": (
            f"{BIOMETRIC} The table holds no audio and no per-trial data: per-record metrics of encoders scoring voice "
            "embeddings, and the labels of declared groups where a subgroup column has them."
        ),
        "rai:dataUseCases": USE_CASES,
        "rai:dataSocialImpact": SOCIAL_IMPACT,
    }


def write_table_card(
    folder: Path, table: Path, digest: Digest, tool_version: str, renamed: Mapping[str, str] | None = None
) -> Path:
    """Write the table's card (:func:`table_card`) as ``folder/croissant.json``, atomically; the path written. The
    table is reached from the card by its path relative to ``folder``."""
    content_url = Path(os.path.relpath(Path(table).resolve(), Path(folder).resolve())).as_posix()
    path = Path(folder) / CROISSANT_FILE
    atomic_write_bytes(path, card_bytes(table_card(table, content_url, digest, tool_version, renamed)))
    return path


def card_bytes(card: dict[str, Any]) -> bytes:
    """The card as the bundle writes it (a bundle JSON file: sorted keys, indent 2)."""
    return json_file_bytes(card)


def card_disagreements(card: Any, digests: Mapping[str, Digest]) -> list[dict[str, str]]:
    """Where a card and the bundle's verified files disagree: a FileObject the bundle lacks or whose SHA-256
    differs, a data file of the bundle the card does not list, or a card not in Croissant's shape."""
    objects = card.get("distribution") if isinstance(card, dict) else None
    if not isinstance(objects, list) or card.get("conformsTo") != CROISSANT_CONFORMS_TO:
        return [{"file": CROISSANT_FILE, "problem": f"not a Croissant card conforming to {CROISSANT_CONFORMS_TO}"}]
    listed: dict[str, str] = {}
    problems = []
    for entry in objects:
        if isinstance(entry, dict) and entry.get("@type") == "cr:FileObject":
            name, sha256 = entry.get("contentUrl"), entry.get("sha256")
            if not isinstance(name, str) or not isinstance(sha256, str):
                problems.append({"file": str(name), "problem": "a FileObject without contentUrl and sha256"})
                continue
            listed[name] = sha256
    for name, sha256 in sorted(listed.items()):
        if name not in digests:
            problems.append({"file": name, "problem": "listed in the card, not a verified file of the bundle"})
        elif digests[name].sha256 != sha256:
            problems.append({"file": name, "problem": f"the card's sha256 {sha256} differs from the file's"})
    problems += [
        {"file": name, "problem": "a bundle file the card does not list"}
        for name in sorted(digests)
        if _listed(name) and name not in listed
    ]
    return problems
