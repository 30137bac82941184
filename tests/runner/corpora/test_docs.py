"""Every corpus adapter has its page in docs/corpora/, and the page states what the adapter's code declares: the
release it reads (``runner.corpora.base.RELEASES``), the package name it records and a `corpus check` command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner.corpora import ADAPTERS
from runner.corpora.base import RELEASES

DOCS = Path(__file__).resolve().parents[3] / "docs" / "corpora"
SECTIONS = ("**Release read**", "**Licence**", "**Where to get it**", "## Folder layout", "## Labels", "## Check")


def page_of(adapter: str) -> Path:
    """The page naming the adapter in its title: ``# Title (adapter `name`)`` or ``(adapters `a`, `b`)``."""
    pages = [page for page in sorted(DOCS.glob("*.md")) if f"`{adapter}`" in page.read_text().splitlines()[0]]
    assert len(pages) == 1, (adapter, pages)
    return pages[0]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_each_adapter_has_a_page_that_states_its_release_and_how_to_check_it(adapter: str) -> None:
    text = page_of(adapter).read_text(encoding="utf-8")
    for section in SECTIONS:
        assert section in text, (adapter, section)
    release = RELEASES[adapter]
    if release.version is not None:
        assert f"`source_version = {release.version}`" in text and f"--release {release.version}" in text
    assert f"`source_package = {release.package}`" in text or "`source_package`" in text
    assert re.search(rf"^interbias corpus check {adapter} \S+", text, re.MULTILINE), adapter


def test_no_page_without_an_adapter() -> None:
    described = {page for adapter in ADAPTERS for page in [page_of(adapter)]}
    assert described == set(DOCS.glob("*.md"))


def test_every_release_an_adapter_records_has_a_licence_but_a_spoof_folder() -> None:
    """``schemas.CORPUS_LICENCES`` knows each fixed release and each Debian package a built corpus records per row."""
    from runner.corpora.asterisk import VOICES
    from runner.corpora.fillets import LANGUAGES
    from schemas import CORPUS_LICENCES

    debian = {package.name for voice in VOICES for package in voice.packages} | {lang.package for lang in LANGUAGES}
    fixed = {release.package for name, release in RELEASES.items() if name not in ("asterisk", "fillets")}
    assert (fixed | debian) - set(CORPUS_LICENCES) == {"spoof folder"}
    assert set(CORPUS_LICENCES) - fixed - debian == set()
