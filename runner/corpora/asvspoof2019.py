"""ASVspoof 2019 logical access (Wang et al. 2020): bona fide VCTK speech and TTS / VC attacks aimed at its speakers.

Layout (the ``LA`` folder as distributed)::

    ASVspoof2019_LA_cm_protocols/ASVspoof2019.LA.cm.{train.trn,dev.trl,eval.trl}.txt
    ASVspoof2019_LA_asv_protocols/ASVspoof2019.LA.asv.{dev,eval}.{female,male}.trn.txt
    ASVspoof2019_LA_{train,dev,eval}/flac/<FILE>.flac

A countermeasure protocol line is ``SPEAKER FILE - ATTACK KEY``: ``KEY`` is ``bonafide`` (``ATTACK`` ``-``) or
``spoof``, whose ``SPEAKER`` is the target speaker the attack (``A01``-``A19``) imitates. An ASV enrolment line is
``SPEAKER FILE,FILE,...``: bona fide enrolment files of that speaker, whose file name gives the gender.

Two adapters read the same folder: ``asvspoof2019_la`` the bona fide speech (protocol and enrolment files, with
``split`` the partition and the gender of dev and eval speakers), and ``asvspoof2019_la_spoofs`` the attacks, a
spoof table (``runner/corpora/spoof.py``) whose ``spoof_system`` is the attack id and ``spoof_system_version``
names the database and the attack's kind. Training speakers' gender is not published: one problem says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from runner.corpora.base import CorpusBuilder, CorpusError, CorpusTable, Release, corpus_adapter

CM_FOLDER = "ASVspoof2019_LA_cm_protocols"
ASV_FOLDER = "ASVspoof2019_LA_asv_protocols"
CM_PROTOCOLS = {
    "train": "ASVspoof2019.LA.cm.train.trn.txt",
    "dev": "ASVspoof2019.LA.cm.dev.trl.txt",
    "eval": "ASVspoof2019.LA.cm.eval.trl.txt",
}
ENROLMENT = re.compile(r"^ASVspoof2019\.LA\.asv\.(dev|eval)\.(female|male)\.trn\.txt$")
GENDERS = {"female": "F", "male": "M"}
DATABASE = "ASVspoof 2019 LA"
RELEASE = Release(DATABASE, "2019")  # the LA folder of the Edinburgh DataShare release (doi:10.7488/ds/2555)
# The attacks' kinds as the database paper publishes them (A16 reuses A04's system, A19 reuses A06's).
ATTACK_KINDS = {
    **dict.fromkeys(("A01", "A02", "A03", "A04", "A07", "A08", "A09", "A10", "A11", "A12", "A16"), "TTS"),
    **dict.fromkeys(("A13", "A14", "A15"), "TTS-VC"),
    **dict.fromkeys(("A05", "A06", "A17", "A18", "A19"), "VC"),
}


@dataclass(frozen=True)
class ProtocolEntry:
    """One usable countermeasure protocol line."""

    where: str  # protocol file and line number
    partition: str
    speaker: str
    file: str
    attack: str | None  # None for bona fide speech


def audio_path(root: Path, partition: str, file: str) -> Path:
    return root / f"ASVspoof2019_LA_{partition}" / "flac" / f"{file}.flac"


def _protocol_entries(builder: CorpusBuilder) -> list[ProtocolEntry]:
    """Every usable line of the three countermeasure protocols; unusable lines and absent files are problems."""
    folder = builder.root / CM_FOLDER
    if not folder.is_dir():
        raise CorpusError(
            str(folder), "countermeasure protocol folder not found: expected the LA folder as distributed"
        )
    entries = []
    for partition, name in CM_PROTOCOLS.items():
        path = folder / name
        if not path.is_file():
            builder.problem(f"{CM_FOLDER}/{name}", f"missing: the {partition} partition is not read")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            fields, where = line.split(), f"{CM_FOLDER}/{name}:{number}"
            if not fields:
                continue
            if (
                len(fields) != 5
                or fields[4] not in ("bonafide", "spoof")
                or (fields[4] == "spoof") == (fields[3] == "-")
            ):
                builder.problem(where, "skipped: expected 'SPEAKER FILE - ATTACK bonafide|spoof'")
                continue
            attack = fields[3] if fields[4] == "spoof" else None
            entries.append(ProtocolEntry(where, partition, fields[0], fields[1], attack))
    return entries


def _enrolments(builder: CorpusBuilder) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(partition, file) -> (speaker, gender, where) of every ASV enrolment file."""
    folder = builder.root / ASV_FOLDER
    enrolled: dict[tuple[str, str], tuple[str, str, str]] = {}
    if not folder.is_dir():
        builder.problem(ASV_FOLDER, "missing: enrolment files and the gender of dev and eval speakers are not read")
        return enrolled
    for path in sorted(folder.iterdir()):
        match = ENROLMENT.match(path.name)
        if match is None:
            continue
        partition, gender = match.group(1), GENDERS[match.group(2)]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            fields, where = line.split(), f"{ASV_FOLDER}/{path.name}:{number}"
            if not fields:
                continue
            if len(fields) != 2:
                builder.problem(where, "skipped: expected 'SPEAKER FILE,FILE,...'")
                continue
            for file in fields[1].split(","):
                enrolled[(partition, file)] = (fields[0], gender, where)
    return enrolled


@corpus_adapter("asvspoof2019_la", RELEASE)
def load_bona_fide(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE)
    entries = _protocol_entries(builder)
    enrolled = _enrolments(builder)
    gender_of = {speaker: gender for speaker, gender, _ in enrolled.values()}
    bona_fide = {(e.partition, e.file): (e.speaker, e.where) for e in entries if e.attack is None}
    for (partition, file), (speaker, _, where) in enrolled.items():
        bona_fide.setdefault((partition, file), (speaker, where))
    for (partition, file), (speaker, where) in sorted(bona_fide.items()):
        path = audio_path(builder.root, partition, file)
        fields = {"gender": gender_of.get(speaker), "split": partition, "condition": "bonafide", "language": "en"}
        builder.add_listed(where, path, file, speaker, **fields)
    if any(partition == "train" for partition, _ in bona_fide):
        builder.problem(f"{CM_FOLDER}/{CM_PROTOCOLS['train']}", "kept with gender empty: not published for train")
    listed = {audio_path(builder.root, e.partition, e.file) for e in entries} | {
        audio_path(builder.root, partition, file) for partition, file in enrolled
    }
    for audio in builder.walk("*.flac", parsed=False):
        if audio not in listed:
            builder.problem(audio, "not used: in no protocol or enrolment list")
    return builder.table()


@corpus_adapter("asvspoof2019_la_spoofs", RELEASE, spoofs=True)
def load_attacks(root: Path) -> CorpusTable:
    builder = CorpusBuilder(root, RELEASE)
    for entry in _protocol_entries(builder):
        if entry.attack is None:
            continue
        kind = ATTACK_KINDS.get(entry.attack)
        if kind is None:
            builder.problem(entry.where, f"kept: attack {entry.attack!r} is not one of the published A01-A19")
        version = f"{DATABASE} ({kind or 'kind not published'})"
        path = audio_path(builder.root, entry.partition, entry.file)
        fields = {"spoof_system": entry.attack, "spoof_system_version": version, "split": entry.partition}
        builder.add_listed(entry.where, path, entry.file, entry.speaker, **fields)
    return builder.table()
