"""TORGO (Rudzicz et al. 2012): dysarthric and control speakers, several sessions, two microphones.

Layout: ``<speaker>/Session<N>/wav_arrayMic/<NNNN>.wav`` and ``.../wav_headMic/<NNNN>.wav``, with the prompt
of each recording in ``.../prompts/<NNNN>.txt``. Speaker codes give gender and group: ``F01``/``M01`` are
dysarthric speakers, ``FC01``/``MC01`` controls. Picture-description prompts (a file name such as
``input/images/...``) are kept as the prompt text, as published. A recording without a prompt is kept with an
empty transcript and a problem; a folder that does not follow the layout is a problem for each of its files.
"""

from __future__ import annotations

import re
from pathlib import Path

from runner.corpora.base import CorpusBuilder, CorpusTable, Release, corpus_adapter, sorted_files

SPEAKER = re.compile(r"^(?P<gender>[FM])(?P<control>C?)\d{2}$")
SESSION = re.compile(r"^Session\d+(?:_\d+)?$")
MICROPHONES = {"wav_arrayMic": "arrayMic", "wav_headMic": "headMic"}
# TORGO publishes no version number: the release is the one database of Rudzicz et al. (2012), as the University
# of Toronto distributes it (F.tar.bz2, FC.tar.bz2, M.tar.bz2, MC.tar.bz2).
RELEASE = Release("TORGO", "2012")


@corpus_adapter("torgo", RELEASE)
def load_torgo(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE)
    for file in sorted_files(builder.root, "*.wav"):
        parts = Path(builder.relative(file)).parts
        if len(parts) != 4:
            builder.problem(file, "skipped: not at <speaker>/Session<N>/wav_<mic>/<file>.wav")
            continue
        speaker, session, mic_folder, _ = parts
        speaker_match = SPEAKER.match(speaker)
        if speaker_match is None:
            builder.problem(file, f"skipped: speaker folder {speaker!r} is not F01/M01/FC01/MC01-style")
            continue
        if SESSION.match(session) is None:
            builder.problem(file, f"skipped: session folder {session!r} is not Session<N>")
            continue
        if mic_folder not in MICROPHONES:
            builder.problem(file, f"skipped: microphone folder {mic_folder!r} is not wav_arrayMic or wav_headMic")
            continue
        prompt = file.parent.parent / "prompts" / f"{file.stem}.txt"
        transcript = None
        if prompt.is_file():
            transcript = " ".join(prompt.read_text(encoding="utf-8", errors="replace").split())
        added = builder.add(
            file,
            utt_id=f"{speaker}_{session}_{MICROPHONES[mic_folder]}_{file.stem}",
            speaker=speaker,
            gender=speaker_match["gender"],
            session=session,
            microphone=MICROPHONES[mic_folder],
            condition="control" if speaker_match["control"] else "dysarthric",
            language="en",
            transcript=transcript,
        )
        if added and transcript is None:
            builder.problem(file, "kept without transcript: no prompts/<file>.txt")
    return builder.table()
