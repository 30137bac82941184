"""L2-ARCTIC (Zhao et al. 2018): 24 non-native speakers of English, six L1s, scripted and spontaneous speech.

Layout: ``<SPEAKER>/wav/arctic_a0001.wav`` with ``<SPEAKER>/transcript/arctic_a0001.txt`` (scripted CMU ARCTIC
prompts), and ``suitcase_corpus/wav/<speaker>.wav`` with ``suitcase_corpus/transcript/<speaker>.txt`` (the
spontaneous suitcase narrative, lower-case speaker names). Gender and L1 come from the speaker table published
with the corpus (its README), reproduced below.
"""

from __future__ import annotations

import re
from pathlib import Path

from runner.corpora.base import CorpusBuilder, CorpusTable, Release, corpus_adapter

# The published speaker table of L2-ARCTIC v5: speaker -> (gender, L1).
SPEAKERS: dict[str, tuple[str, str]] = {
    "ABA": ("M", "Arabic"),
    "SKA": ("F", "Arabic"),
    "YBAA": ("M", "Arabic"),
    "ZHAA": ("F", "Arabic"),
    "BWC": ("M", "Mandarin"),
    "LXC": ("F", "Mandarin"),
    "NCC": ("F", "Mandarin"),
    "TXHC": ("M", "Mandarin"),
    "ASI": ("M", "Hindi"),
    "RRBI": ("M", "Hindi"),
    "SVBI": ("F", "Hindi"),
    "TNI": ("F", "Hindi"),
    "HJK": ("F", "Korean"),
    "HKK": ("M", "Korean"),
    "YDCK": ("F", "Korean"),
    "YKWK": ("M", "Korean"),
    "EBVS": ("M", "Spanish"),
    "ERMS": ("M", "Spanish"),
    "MBMPS": ("F", "Spanish"),
    "NJS": ("F", "Spanish"),
    "HQTV": ("M", "Vietnamese"),
    "PNV": ("F", "Vietnamese"),
    "THV": ("F", "Vietnamese"),
    "TLV": ("M", "Vietnamese"),
}
SUITCASE_FOLDER = "suitcase_corpus"
SCRIPTED_NAME = re.compile(r"^arctic_[ab]\d{4}$")
RELEASE = Release("L2-ARCTIC", "5.0")  # 24 speakers and the suitcase corpus


def _transcript(wav: Path) -> str | None:
    """Text of ``../transcript/<stem>.txt`` beside a ``wav/`` folder, or None when there is none."""
    text_file = wav.parent.parent / "transcript" / f"{wav.stem}.txt"
    if not text_file.is_file():
        return None
    return " ".join(text_file.read_text(encoding="utf-8", errors="replace").split())


LAYOUT = "<SPEAKER>/wav/arctic_a0001.wav or suitcase_corpus/wav/<speaker>.wav"


@corpus_adapter("l2_arctic", RELEASE)
def load_l2_arctic(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE, LAYOUT)
    for file in builder.walk("*.wav"):
        parts = Path(builder.relative(file)).parts
        if len(parts) != 3 or parts[1] != "wav":
            builder.problem(file, "skipped: not at <SPEAKER>/wav/<file>.wav")
            continue
        if parts[0] == SUITCASE_FOLDER:
            speaker, condition, utt_id = file.stem.upper(), "suitcase", f"{file.stem.upper()}_suitcase"
        elif SCRIPTED_NAME.match(file.stem):
            speaker, condition, utt_id = parts[0], "scripted", f"{parts[0]}_{file.stem}"
        else:
            builder.problem(file, "skipped: scripted file name is not arctic_a0001/arctic_b0001-style")
            continue
        gender, l1 = SPEAKERS.get(speaker, (None, None))
        transcript = _transcript(file)
        added = builder.add(
            file,
            utt_id=utt_id,
            speaker=speaker,
            gender=gender,
            l1=l1,
            condition=condition,
            language="en",
            transcript=transcript,
        )
        if added and l1 is None:
            builder.problem(file, f"kept without gender and L1: {speaker} is not in the published speaker table")
        if added and transcript is None:
            builder.problem(file, "kept without transcript: no transcript/<file>.txt")
    return builder.table()
