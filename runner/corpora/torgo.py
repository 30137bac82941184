"""TORGO (Rudzicz et al. 2012): dysarthric and control speakers, several sessions, two microphones.

Layout, as the University of Toronto distributes it (https://www.cs.toronto.edu/~complingweb/data/TORGO/torgo.html:
``F.tar.bz2``, ``FC.tar.bz2``, ``M.tar.bz2``, ``MC.tar.bz2``, each unpacking to its group folder):
``F/F01/Session1/wav_arrayMic/<NNNN>.wav`` and ``.../wav_headMic/<NNNN>.wav``, with the prompt of each recording in
``.../prompts/<NNNN>.txt``; the speaker folders may also sit at the root, without their group folder
(``F01/Session1/...``, as the group archives are often merged). Speaker codes give gender and group: ``F01``/``M01``
are dysarthric speakers, ``FC01``/``MC01`` controls; a speaker filed under another group's folder is a problem.

Both microphones recorded the same prompts at once, so ``<NNNN>`` under ``wav_arrayMic`` and ``wav_headMic`` is one
recording twice (two rows, ``microphone`` telling them apart: a run selects one microphone, or a target pair could
be one recording against itself). ``style`` says what a prompt asks for: ``lexical`` (a word or a sentence, the
prompt text being what is said), ``picture-description`` (the prompt is an image file name such as
``input/images/...``: spontaneous speech), ``instruction`` (a bracketed task such as ``[relax your mouth in its
normal position]``: non-speech or non-word articulation) or ``unlabelled`` (``xxx``: the corpus's placeholder);
no prompt file leaves it empty. Prompts are kept as the transcript, as published. A recording without a prompt
is kept with an empty transcript and a problem; a folder that does not follow the layout is a problem for each of
its files.
"""

from __future__ import annotations

import re
from pathlib import Path

from runner.corpora.base import CorpusBuilder, CorpusTable, Release, corpus_adapter

SPEAKER = re.compile(r"^(?P<gender>[FM])(?P<control>C?)\d{2}$")
GROUPS = ("F", "FC", "M", "MC")  # the distribution's archives, one per gender and group
SESSION = re.compile(r"^Session\d+(?:_\d+)?$")
MICROPHONES = {"wav_arrayMic": "arrayMic", "wav_headMic": "headMic"}
IMAGE = re.compile(r"(?:^|/)images?/|\.(?:jpe?g|png|bmp|gif)$", re.IGNORECASE)
UNLABELLED = "xxx"
LAYOUT = "[F|FC|M|MC/]<speaker>/Session<N>/wav_arrayMic|wav_headMic/<NNNN>.wav"
# TORGO publishes no version number: the release is the one database of Rudzicz et al. (2012), as the University
# of Toronto distributes it (F.tar.bz2, FC.tar.bz2, M.tar.bz2, MC.tar.bz2).
RELEASE = Release("TORGO", "2012")


def prompt_style(prompt: str | None) -> str | None:
    """What a prompt asks the speaker for (module docstring); None without a prompt or for an empty one.

    >>> [prompt_style(p) for p in ("Stick", "[relax your mouth in its normal position]", "xxx", "input/images/a.jpg")]
    ['lexical', 'instruction', 'unlabelled', 'picture-description']
    """
    if not prompt:
        return None
    if prompt.lower() == UNLABELLED:
        return "unlabelled"
    if prompt.startswith("[") and prompt.endswith("]"):
        return "instruction"
    if IMAGE.search(prompt):
        return "picture-description"
    return "lexical"


@corpus_adapter("torgo", RELEASE)
def load_torgo(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE, LAYOUT)
    for file in builder.walk("*.wav"):
        parts = Path(builder.relative(file)).parts
        group = parts[0] if len(parts) == 5 and parts[0] in GROUPS else None
        if group is not None:
            parts = parts[1:]
        if len(parts) != 4:
            builder.problem(file, f"skipped: not at {LAYOUT}")
            continue
        speaker, session, mic_folder, _ = parts
        speaker_match = SPEAKER.match(speaker)
        if speaker_match is None:
            builder.problem(file, f"skipped: speaker folder {speaker!r} is not F01/M01/FC01/MC01-style")
            continue
        if group is not None and group != speaker_match["gender"] + speaker_match["control"]:
            builder.problem(file, f"skipped: speaker {speaker} is filed under the group folder {group}/")
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
            style=prompt_style(transcript),
            language="en",
            transcript=transcript,
        )
        if added and transcript is None:
            builder.problem(file, "kept without transcript: no prompts/<file>.txt")
    return builder.table()
