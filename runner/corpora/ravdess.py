"""RAVDESS (Livingstone & Russo 2018): 24 actors, emotions at two intensities, all coded in the file name.

Layout: ``Actor_NN/MM-VV-EE-II-SS-RR-AA.wav``, seven two-digit fields: modality (01 audio-video, 02 video,
03 audio), vocal channel (01 speech, 02 song), emotion (01 neutral ... 08 surprised), intensity (01 normal,
02 strong; neutral has no strong), statement (01, 02), repetition (01, 02), actor (01-24; odd actors are male,
even actors female, as the corpus documents). A name that breaks the convention is a problem, not a row.

As distributed: Zenodo record 1188976 (https://zenodo.org/record/1188976) ships the speech and the song audio as
``Audio_Speech_Actors_01-24.zip`` and ``Audio_Song_Actors_01-24.zip``, both unpacking to ``Actor_NN/``, so one
folder may hold both: the vocal channel is recorded in ``style`` (``speech`` or ``song``) and a run that wants
speech selects it. The Kaggle copy (https://www.kaggle.com/datasets/uwrfkaggler/ravdess-emotional-speech-audio)
holds every speech file twice, under ``Actor_NN/`` and ``audio_speech_actors_01-24/Actor_NN/``: identical copies
are kept once (the other is a problem); two different files under one name are one error naming both. Any wrapper
folder above ``Actor_NN`` is fine. The audio-only modality (03) and the audio of audio-video (01) are both kept
(the utterance id, the file name, tells them apart); video-only (02) has no audio and is a problem.
"""

from __future__ import annotations

import re
from pathlib import Path

from runner.corpora.base import CorpusBuilder, CorpusTable, Release, corpus_adapter

FILE_NAME = re.compile(r"^(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})$")
MODALITIES = {"01": "audio-video", "02": "video", "03": "audio"}
CHANNELS = {"01": "speech", "02": "song"}
EMOTIONS = {
    "01": "neutral",
    "02": "calm",
    "03": "happy",
    "04": "sad",
    "05": "angry",
    "06": "fearful",
    "07": "disgust",
    "08": "surprised",
}
INTENSITIES = {"01": "normal", "02": "strong"}
STATEMENTS = {"01": "Kids are talking by the door", "02": "Dogs are sitting by the door"}
REPETITIONS = {"01", "02"}
# The audio of Zenodo record 1188976 (doi:10.5281/zenodo.1188976), version 1.0.0: Audio_Speech_Actors_01-24 and
# Audio_Song_Actors_01-24.
RELEASE = Release("RAVDESS", "1.0.0")
LAYOUT = "Actor_NN/MM-VV-EE-II-SS-RR-AA.wav (seven two-digit fields)"


def parse_name(stem: str) -> dict[str, str]:
    """Fields of one RAVDESS file name; ``ValueError`` says which field breaks the convention."""
    match = FILE_NAME.match(stem)
    if match is None:
        raise ValueError("name is not seven two-digit fields MM-VV-EE-II-SS-RR-AA")
    modality, channel, emotion, intensity, statement, repetition, actor = match.groups()
    for value, table, field in (
        (modality, MODALITIES, "modality"),
        (channel, CHANNELS, "vocal channel"),
        (emotion, EMOTIONS, "emotion"),
        (intensity, INTENSITIES, "intensity"),
        (statement, STATEMENTS, "statement"),
    ):
        if value not in table:
            raise ValueError(f"unknown {field} code {value}")
    if repetition not in REPETITIONS:
        raise ValueError(f"unknown repetition code {repetition}")
    if not 1 <= int(actor) <= 24:
        raise ValueError(f"actor {actor} outside 01-24")
    if emotion == "01" and intensity == "02":
        raise ValueError("neutral has no strong intensity in RAVDESS")
    return {
        "modality": MODALITIES[modality],
        "channel": CHANNELS[channel],
        "emotion": EMOTIONS[emotion],
        "intensity": INTENSITIES[intensity],
        "transcript": STATEMENTS[statement],
        "actor": actor,
    }


@corpus_adapter("ravdess", RELEASE)
def load_ravdess(root: Path) -> CorpusTable:
    """The audio files of a RAVDESS folder (any wrapper folder above ``Actor_NN`` is fine)."""
    builder = CorpusBuilder(root, RELEASE, LAYOUT)
    for file in builder.walk("*.wav"):
        try:
            fields = parse_name(file.stem)
        except ValueError as exc:
            builder.problem(file, f"skipped: {exc}")
            continue
        folder = file.parent.name
        if folder.startswith("Actor_") and folder != f"Actor_{fields['actor']}":
            builder.problem(file, f"skipped: actor {fields['actor']} in the name but file is in {folder}")
            continue
        if fields["modality"] == "video":
            builder.problem(file, "skipped: video-only modality has no audio")
            continue
        builder.add(
            file,
            utt_id=file.stem,
            speaker=f"Actor_{fields['actor']}",
            gender="M" if int(fields["actor"]) % 2 == 1 else "F",
            emotion=fields["emotion"],
            intensity=fields["intensity"],
            style=fields["channel"],
            language="en",
            transcript=fields["transcript"],
        )
    return builder.table()
