"""EARS (Richter et al. 2024): 107 speakers, reading styles, 22 emotions, freeform and non-verbal speech.

Layout: ``p001/ ... p107/`` with one WAV per task, named by task:
``emo_<emotion>_sentences``, ``emo_<emotion>_freeform``, ``rainbow_<NN>_<style>``, ``sentences_<NN>_<style>``
(styles: regular, loud, whisper, highpitch, lowpitch, fast, slow), ``freeform_speech_<NN>`` and
``nonverbal_<sound>``. ``speaker_statistics.json`` at the root gives each speaker's age range, gender and
native language; ``transcripts.json`` maps a file stem to its text. Missing metadata leaves fields empty, with
problems.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from runner.corpora.base import CorpusBuilder, CorpusError, CorpusTable, Release, corpus_adapter

SPEAKER = re.compile(r"^p\d{3}$")
STYLES = ("regular", "loud", "whisper", "highpitch", "lowpitch", "fast", "slow")
TASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("emotional-reading", re.compile(r"^emo_(?P<emotion>[a-z]+)_sentences$")),
    ("emotional-freeform", re.compile(r"^emo_(?P<emotion>[a-z]+)_freeform$")),
    ("reading", re.compile(rf"^(?:rainbow|sentences)_\d{{2}}_(?P<style>{'|'.join(STYLES)})$")),
    ("freeform", re.compile(r"^freeform_speech_\d{2}$")),
    ("nonverbal", re.compile(r"^nonverbal_[a-z0-9_]+$")),
)
GENDERS = {"male": "M", "female": "F"}
STATISTICS_FILE = "speaker_statistics.json"
TRANSCRIPTS_FILE = "transcripts.json"
# EARS publishes no version number: the release is the 107-speaker dataset of Richter et al. (Interspeech 2024).
RELEASE = Release("EARS", "2024")


def parse_name(stem: str) -> dict[str, str]:
    """Task (as ``condition``), emotion and style of one EARS file; ``ValueError`` for an unknown name."""
    for condition, pattern in TASKS:
        match = pattern.match(stem)
        if match:
            return {"condition": condition, **{k: v for k, v in match.groupdict().items() if v}}
    raise ValueError("file name matches no EARS task (emo_*, rainbow_*, sentences_*, freeform_speech_*, nonverbal_*)")


def _read_json(builder: CorpusBuilder, name: str) -> dict[str, Any]:
    """A metadata JSON object at the root, or ``{}`` with a problem when it is absent."""
    path = builder.root / name
    if not path.is_file():
        builder.problem(name, "missing: the fields it provides are left empty")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusError(str(path), f"not valid JSON ({exc.msg})", row=exc.lineno) from exc
    if not isinstance(data, dict):
        raise CorpusError(str(path), "expected a JSON object keyed by speaker or file stem")
    return data


def _speaker_fields(builder: CorpusBuilder, speaker: str, statistics: dict[str, Any]) -> dict[str, str | None]:
    """Gender, age range and native language of one speaker from ``speaker_statistics.json``."""
    entry = statistics.get(speaker)
    if not isinstance(entry, dict):
        if statistics:
            builder.problem(speaker, f"kept without speaker metadata: {speaker} not in {STATISTICS_FILE}")
        return {"gender": None, "age_bin": None, "l1": None}
    gender = GENDERS.get(str(entry.get("gender", "")).lower())
    if gender is None:
        builder.problem(speaker, f"kept with gender empty: {STATISTICS_FILE} gives {entry.get('gender')!r}")
    native = entry.get("native language")
    return {
        "gender": gender,
        "age_bin": entry.get("age"),
        "l1": None if native in (None, "", "prefer not to answer") else str(native),
    }


LAYOUT = "p<NNN>/<task>.wav"


@corpus_adapter("ears", RELEASE)
def load_ears(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE, LAYOUT)
    statistics = _read_json(builder, STATISTICS_FILE)
    transcripts = _read_json(builder, TRANSCRIPTS_FILE)
    speakers: dict[str, dict[str, str | None]] = {}
    for file in builder.walk("*.wav"):
        speaker = file.parent.name
        if file.parent.parent != builder.root or not SPEAKER.match(speaker):
            builder.problem(file, "skipped: not at p<NNN>/<task>.wav")
            continue
        try:
            fields = parse_name(file.stem)
        except ValueError as exc:
            builder.problem(file, f"skipped: {exc}")
            continue
        if speaker not in speakers:
            speakers[speaker] = _speaker_fields(builder, speaker, statistics)
        builder.add(
            file,
            utt_id=f"{speaker}_{file.stem}",
            speaker=speaker,
            language="en",
            transcript=transcripts.get(file.stem),
            **speakers[speaker],
            **fields,
        )
    return builder.table()
