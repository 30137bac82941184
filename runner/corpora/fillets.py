"""Fish Fillets NG voices: real recorded game dialogue from Debian's ``fillets-ng-data-cs`` and ``-nl`` (GPL-2).

Each package installs one language's spoken dialogue as ``/usr/share/games/fillets-ng/sound/<level>/<lang>/*.ogg``
(``share/<group>/<lang>/`` for lines several levels share), Ogg Vorbis at 22.05 kHz, 1-6 s of expressive speech
each. A file is named ``<level>-<code>-<line>.ogg`` (a few Dutch ones with underscores; one level, ``fdto``, names
its lines ``<line>-<code>.ogg``): ``<code>`` is the character that speaks. The two fish that speak in every level
have the codes ``v`` and ``m``; with about 650-700 files each per language they are this corpus's speakers, one per
code and language (``cs-v``, ``cs-m``, ``nl-v``, ``nl-m``: each language is dubbed by its own cast). Every other
code is a minor character whose actor the packages do not name (their ``copyright`` credits the game's authors, not
its voices): those files are left out and counted per code in the build manifest, and so are files whose name is
not a dialogue line (``help1.ogg``). Neither package states a gender or the actors' names: ``gender`` is empty,
``language`` is the folder's (``cs``, ``nl``), so that cross-language non-target trials can be told apart from
same-language ones; no package ships the text of a line.

The build is the asterisk default corpus's (``runner/corpora/debian.py``): each line decoded with PyAV to 16 kHz
mono 16-bit WAV, deterministic, cached by ``build-manifest.json`` (package versions, source digests, decoder
versions, the file-name rules, parameters). Lines shorter than ``min_duration_s`` are skipped and listed in
``problems.csv``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from runner.corpora.base import CorpusBuilder, CorpusTable, Release, corpus_adapter
from runner.corpora.debian import (
    AUDIO_FOLDER,
    InstalledPackage,
    PackageBuild,
    add_decoded,
    build_from_packages,
    checked_package,
    load_built,
    package_files,
)
from runner.stages import StagePart

FORMAT_VERSION = 1
SOUND_ROOT = PurePosixPath("/usr/share/games/fillets-ng/sound")
LINE = re.compile(r"^(?P<level>[a-z0-9]+)[-_](?P<code>[a-z0-9]+)[-_](?P<line>.+)$")
CODE_LAST = re.compile(r"^(?P<line>[a-z0-9]+)-(?P<code>[a-z])$")  # fdto/cs/agenti-m.ogg
MAIN_CODES = {"v": "the fish speaking as code v in every level", "m": "the fish speaking as code m in every level"}
DEFAULT_MIN_DURATION_S = 1.0
BUILD_COMMAND = "interbias corpus build --corpus fillets"
RELEASE = Release("Debian fillets-ng-data voice packages", None)  # each row: its package and version
BUILD = PackageBuild(
    "fillets",
    "fillets corpus",
    "lines",
    FORMAT_VERSION,
    {
        "main_codes": sorted(MAIN_CODES),
        "line_names": [LINE.pattern, CODE_LAST.pattern],  # the rules that give each file its speaker
    },
)


@dataclass(frozen=True)
class Language:
    """One voice package: its language code (the sound folders' name) and the phrase its description says."""

    package: str
    code: str
    description_phrase: str


LANGUAGES = (
    Language("fillets-ng-data-cs", "cs", "for Czech language spoken dialogs"),
    Language("fillets-ng-data-nl", "nl", "for Dutch language spoken dialogs"),
)


@dataclass(frozen=True)
class Line:
    """One dialogue file of a package and what its name says."""

    language: Language
    path: Path
    relative: PurePosixPath  # under SOUND_ROOT, e.g. airplane/cs/let-v-oko.ogg
    code: str | None  # the speaking character's code; None for a name that is not a dialogue line

    @property
    def speaker(self) -> str:
        return f"{self.language.code}-{self.code}"

    @property
    def utt_id(self) -> str:
        return f"{self.speaker}/{self.relative.with_suffix('').as_posix()}"


def package_lines(language: Language, installed: InstalledPackage) -> list[Line]:
    """The package's Ogg files in its language's folders, sorted by path, each with its speaker code."""
    lines = []
    for path in package_files(installed, SOUND_ROOT, (".ogg",)):
        relative = PurePosixPath(path).relative_to(SOUND_ROOT)
        if relative.parent.name != language.code:
            continue
        match = LINE.match(relative.stem) or CODE_LAST.match(relative.stem)
        lines.append(Line(language, path, relative, match["code"] if match else None))
    return lines


def build_fillets_corpus(
    out_dir: Path,
    *,
    min_duration_s: float = DEFAULT_MIN_DURATION_S,
    max_per_speaker: int | None = None,
    progress: bool = True,
) -> CorpusTable:
    """Build (or reuse) the Fish Fillets NG corpus in ``out_dir`` from the installed packages; its table."""
    installed: dict[str, InstalledPackage] = {}
    lines: dict[str, list[Line]] = {}
    for language in LANGUAGES:
        found = checked_package(language.package, language.description_phrase, f"LANGUAGES in {__name__}")
        installed[language.package] = found
        lines[language.package] = package_lines(language, found)

    def read(builder: CorpusBuilder, read_lines: StagePart) -> dict[str, dict[str, Any]]:
        counts: dict[str, dict[str, Any]] = {
            name: {"kept": 0, "too_short": 0, "failed": 0, "not_a_line": 0, "minor_characters": {}}
            for name in installed
        }
        kept: dict[str, int] = {}
        for name in sorted(lines):
            for line in lines[name]:
                read_lines.advance(1)
                count = counts[name]
                if line.code not in MAIN_CODES:
                    _left_out(builder, line, count)
                    continue
                if max_per_speaker is not None and kept.get(line.speaker, 0) >= max_per_speaker:
                    continue
                reason = _add_line(builder, line, installed[name], min_duration_s)
                count[reason or "kept"] += 1
                kept[line.speaker] = kept.get(line.speaker, 0) + (reason is None)
        return counts

    return build_from_packages(
        out_dir,
        BUILD,
        installed,
        {name: [(line.relative, line.path) for line in found] for name, found in lines.items()},
        min_duration_s=min_duration_s,
        max_per_speaker=max_per_speaker,
        read=read,
        describe=_description,
        progress=progress,
    )


def _left_out(builder: CorpusBuilder, line: Line, count: dict[str, Any]) -> None:
    """Count (and list as a problem) a file no main voice speaks."""
    where = line.path.as_posix()
    if line.code is None:
        count["not_a_line"] += 1
        builder.problem(where, "left out: the name is not <level>-<code>-<line>: no speaker is identified")
        return
    count["minor_characters"][line.code] = count["minor_characters"].get(line.code, 0) + 1
    builder.problem(where, f"left out: minor character {line.code!r}, whose actor the package does not name")


def _add_line(builder: CorpusBuilder, line: Line, package: InstalledPackage, min_duration_s: float) -> str | None:
    """Decode one line and add it; None when kept, else the counter of why it was skipped."""
    return add_decoded(
        builder,
        line.path,
        "ogg",
        f"{AUDIO_FOLDER}/{line.utt_id}.wav",
        min_duration_s,
        utt_id=line.utt_id,
        speaker=line.speaker,
        language=line.language.code,
        source_package=package.name,
        source_version=package.version,
    )


def _description(table: CorpusTable) -> dict[str, Any]:
    """The manifest's account of the voices: each main fish per language, and what the packages do not say."""
    frame = table.frame
    speakers = [
        {
            "speaker": f"{language.code}-{code}",
            "identity": f"{who}, {language.package} (code {code!r} in the file names)",
            "language": language.code,
            "gender": None,
            "utterances": int((frame["speaker"] == f"{language.code}-{code}").sum()),
            "seconds": round(float(frame.loc[frame["speaker"] == f"{language.code}-{code}", "duration_s"].sum()), 3),
        }
        for language in LANGUAGES
        for code, who in sorted(MAIN_CODES.items())
    ]
    return {
        "speakers": speakers,
        "gender": "none: neither package states the voices' gender",
        "transcripts": "none: no package ships the text of its lines",
    }


@corpus_adapter("fillets", RELEASE)
def load_built_fillets_corpus(root: Path) -> CorpusTable:
    """A Fish Fillets NG corpus already built in ``root`` (see ``build_fillets_corpus``), its audio verified."""
    return load_built(root, BUILD_COMMAND)
