"""The corpus licence registry (``schemas.licences``) against two independent statements: the corpus cards' words
(``docs/corpora/*.md``) and, where the packages are installed, the Debian copyright files of the default corpus and
the fillets corpus (read here with a small DEP-5 reader, the last ``Files:`` stanza matching a file winning)."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from schemas import CORPUS_LICENCES
from tests.schemas.corpus_cards import CARDS, REPO, card_text, licence_bullet, recorded_release

DEBIAN_DOC = Path("/usr/share/doc")


def test_every_licence_is_the_one_its_corpus_card_states() -> None:
    for release, licence in CORPUS_LICENCES.items():
        bullet = licence_bullet(licence.card)
        assert licence.name in bullet, (release, licence.card)
        if release.startswith("asterisk-"):  # a Debian package of the default corpus: the card's list names it
            assert f"`{release}`: {licence.name}" in bullet
        elif release.startswith("fillets-"):  # both fillets packages have one licence, the card names them
            assert release in card_text(licence.card)
        else:
            assert recorded_release(licence.card) == release


def test_every_release_a_card_records_has_its_licence_but_a_spoof_folder() -> None:
    recorded = {recorded_release(card): card for card in CARDS if recorded_release(card) is not None}
    assert set(recorded) - set(CORPUS_LICENCES) == {"spoof folder"}  # its maker states it beside the folder
    assert "state them beside the folder" in licence_bullet(recorded["spoof folder"])
    assert {licence.card for licence in CORPUS_LICENCES.values()} == {
        str(card.relative_to(REPO)) for card in CARDS if card.name != "spoof.md"
    }


def test_spdx_ids_and_urls_name_the_licence() -> None:
    """A Creative Commons SPDX id (``CC-BY-NC-SA-4.0``) rebuilt into the name and the URL of the licence it ids."""
    for licence in CORPUS_LICENCES.values():
        if licence.spdx is None:
            continue
        assert licence.reference == f"https://spdx.org/licenses/{licence.spdx}.html"
        *elements, version = licence.spdx.split("-")[1:]
        if licence.spdx.startswith("CC-BY"):
            assert licence.name == f"CC {'-'.join(elements)} {version}"
            assert licence.url == f"https://creativecommons.org/licenses/{'-'.join(elements).lower()}/{version}/"
    assert CORPUS_LICENCES["Common Voice"].spdx == "CC0-1.0"
    assert CORPUS_LICENCES["asterisk-prompt-it-menardi-wav"].url == "https://creativecommons.org/licenses/by-sa/3.0/it/"


def _dep5_licence(text: str, file: str) -> str:
    """The ``License:`` of the last ``Files:`` stanza matching ``file`` in a machine-readable copyright file."""
    found = None
    for stanza in re.split(r"\n\s*\n", text):
        files = re.search(r"^Files:\s*(.+)$", stanza, re.MULTILINE)
        licence = re.search(r"^License:\s*(\S+)", stanza, re.MULTILINE)
        if files and licence and any(fnmatch.fnmatch(file, pattern) for pattern in files.group(1).split()):
            found = licence.group(1)
    assert found is not None, file
    return found


def _copyright_statement(package: str) -> tuple[str | None, str]:
    """(SPDX id, a phrase) of the recordings' licence as the package's copyright file states it, read by hand-made
    rules: DEP-5 stanzas where the file is machine-readable, the licence's own words where it is not."""
    text = (DEBIAN_DOC / package / "copyright").read_text(encoding="utf-8")
    if text.startswith("Format:"):
        language = package.split("-")[3] if package.startswith("asterisk-core-sounds-") else "xx"
        licence = _dep5_licence(text, f"{language}-sounds.tar.gz")
        if licence == "CC-SA-BY-3.0":  # the Italian port, as the licence text names itself
            assert "Attribuzione - Condividi allo stesso modo 3.0 Italia" in text
            return None, "CC BY-SA 3.0 Italy"
        return licence, {"CC-BY-SA-3.0": "CC BY-SA 3.0", "CC-BY-3.0": "CC BY 3.0"}[licence]
    if "Free Software Foundation; version 2 dated June, 1991" in text:
        return "GPL-2.0-only", "GPL version 2"
    upstream = text.split("Debian packaging")[0]
    assert "Redistribution and use, with or without modification, are permitted" in upstream
    assert "may be used to endorse" in upstream
    return None, "BSD-style"


@pytest.mark.every_install  # the packages are installed by the full session (the light one may lack them)
@pytest.mark.parametrize(
    "package", sorted(release for release in CORPUS_LICENCES if release.startswith(("asterisk-", "fillets-")))
)
def test_a_debian_package_licence_is_what_its_copyright_file_states(package: str) -> None:
    if not (DEBIAN_DOC / package / "copyright").is_file():
        pytest.skip(f"{package} is not installed")
    spdx, phrase = _copyright_statement(package)
    licence = CORPUS_LICENCES[package]
    assert licence.spdx == spdx
    assert phrase in licence.name
