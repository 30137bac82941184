"""Mozilla Common Voice: ``validated.tsv`` and the MP3 clips in ``clips/``, one folder per locale release.

``validated.tsv`` columns used: ``client_id`` (the speaker), ``path`` (clip file name), ``sentence``, ``age``,
``gender``, ``accents`` (``accent`` before release 8) and ``locale``. Ages are the published bins (``teens``,
``twenties``, ``thirties``, ``fourties`` as spelled by Common Voice, ... ``nineties``), kept as published.
Gender ``male``/``male_masculine`` and ``female``/``female_feminine`` map to M/F; any other published value
leaves gender empty with a problem saying which value it was. A listed clip that is missing or unreadable is a
problem.

The release: Common Voice ships each locale in ``cv-corpus-<version>-<date>/<locale>/``; the adapter reads every
release alike and records the version that folder name shows (the root or its parent), else the one the
configuration declares (``release``), else none, with a problem.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import pandas as pd

from runner.corpora.base import CorpusBuilder, CorpusError, CorpusTable, Release, corpus_adapter

METADATA_FILE = "validated.tsv"
AGE_BINS = (
    "teens",
    "twenties",
    "thirties",
    "fourties",
    "fifties",
    "sixties",
    "seventies",
    "eighties",
    "nineties",
)
GENDERS = {"male": "M", "male_masculine": "M", "female": "F", "female_feminine": "F"}
REQUIRED_COLUMNS = ("client_id", "path")
PACKAGE = "Common Voice"
RELEASE_FOLDER = re.compile(r"^cv-corpus-(?P<version>\d+\.\d+)(?:-\d{4}-\d{2}-\d{2})?$")


def folder_release(root: Path) -> str | None:
    """The version a ``cv-corpus-<version>[-<date>]`` folder name shows (the root or its parent), or None."""
    for folder in (root, root.parent):
        match = RELEASE_FOLDER.match(folder.name)
        if match:
            return match["version"]
    return None


def _read_metadata(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise CorpusError(str(path), "missing: a Common Voice folder needs validated.tsv beside clips/")
    try:
        frame = pd.read_csv(path, sep="\t", dtype=str, quoting=csv.QUOTE_NONE, keep_default_na=False, na_values=[""])
    except pd.errors.ParserError as exc:
        raise CorpusError(str(path), f"malformed TSV ({exc})") from exc
    for column in REQUIRED_COLUMNS:
        if column not in frame.columns:
            raise CorpusError(str(path), f"column {column!r} missing (columns: {', '.join(frame.columns)})")
    return frame


def _optional(value: Any) -> str | None:
    return None if value is None or pd.isna(value) else str(value)


@corpus_adapter("common_voice", Release(PACKAGE, None))
def load_common_voice(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, Release(PACKAGE, folder_release(Path(root).resolve())))
    metadata = _read_metadata(builder.root / METADATA_FILE)
    accent_column = "accents" if "accents" in metadata.columns else "accent"
    for number, row in enumerate(metadata.to_dict("records"), start=1):
        where = f"{METADATA_FILE} row {number}"
        clip_name, speaker = _optional(row["path"]), _optional(row["client_id"])
        if clip_name is None or speaker is None:
            builder.problem(where, "skipped: empty path or client_id")
            continue
        clip = builder.root / "clips" / clip_name
        if not clip.is_file():
            builder.problem(f"clips/{clip_name}", f"skipped: listed in {where} but the clip is missing")
            continue
        published_age = _optional(row.get("age"))
        age_bin = published_age if published_age in AGE_BINS else None
        published_gender = _optional(row.get("gender"))
        gender = GENDERS.get(published_gender) if published_gender else None
        added = builder.add(
            clip,
            utt_id=Path(clip_name).stem,
            speaker=speaker,
            gender=gender,
            age_bin=age_bin,
            accent=_optional(row.get(accent_column)),
            language=_optional(row.get("locale")),
            transcript=_optional(row.get("sentence")),
        )
        if added and published_age is not None and age_bin is None:
            builder.problem(clip, f"kept with age_bin empty: unknown age {published_age!r} in {where}")
        if added and published_gender is not None and gender is None:
            builder.problem(clip, f"kept with gender empty: published gender {published_gender!r} is not M/F")
    return builder.table()
