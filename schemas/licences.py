"""The licence of every corpus release the runner reads, keyed by what its utterance tables record in
``source_package``: the one machine-readable home of what the corpus cards (``docs/corpora/*.md``) state in words,
read by the bundle's Croissant card (``provenance.croissant``).

Each entry: the licence's name as its card states it, its SPDX id where one names exactly that licence (None where
none does: a national port, a distributor's agreement, a licence of one copyright holder), the URL of its text, and
the card that states it. The Debian packages of the default corpus and of the fillets corpus are entered one by one,
as each package's ``/usr/share/doc/<package>/copyright`` states its recordings' licence (the packaging's own
licence aside). A release recorded under no key here (a spoof folder, whose licence its maker states beside it) has
no licence the toolkit can state.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CORPUS_LICENCES", "CorpusLicence"]


@dataclass(frozen=True)
class CorpusLicence:
    """A corpus release's licence: its name, SPDX id (None where none names it exactly), text URL and corpus card."""

    name: str
    spdx: str | None
    url: str | None
    card: str  # the page of docs/corpora that states it

    @property
    def reference(self) -> str | None:
        """Where the licence is defined: its SPDX page where it has an id, else its own URL (None: neither)."""
        return f"https://spdx.org/licenses/{self.spdx}.html" if self.spdx is not None else self.url


_CC = "https://creativecommons.org"
_GPL2 = "https://www.gnu.org/licenses/old-licenses/gpl-2.0.html"

CC_BY_SA_3 = CorpusLicence("CC BY-SA 3.0", "CC-BY-SA-3.0", f"{_CC}/licenses/by-sa/3.0/", "docs/corpora/asterisk.md")
CC_BY_3 = CorpusLicence("CC BY 3.0", "CC-BY-3.0", f"{_CC}/licenses/by/3.0/", "docs/corpora/asterisk.md")

CORPUS_LICENCES: dict[str, CorpusLicence] = {
    "VoxCeleb1": CorpusLicence("CC BY 4.0", "CC-BY-4.0", f"{_CC}/licenses/by/4.0/", "docs/corpora/voxceleb1.md"),
    "RAVDESS": CorpusLicence(
        "CC BY-NC-SA 4.0", "CC-BY-NC-SA-4.0", f"{_CC}/licenses/by-nc-sa/4.0/", "docs/corpora/ravdess.md"
    ),
    "EARS": CorpusLicence("CC BY-NC 4.0", "CC-BY-NC-4.0", f"{_CC}/licenses/by-nc/4.0/", "docs/corpora/ears.md"),
    "L2-ARCTIC": CorpusLicence(
        "CC BY-NC 4.0", "CC-BY-NC-4.0", f"{_CC}/licenses/by-nc/4.0/", "docs/corpora/l2_arctic.md"
    ),
    "Common Voice": CorpusLicence(
        "CC0 1.0", "CC0-1.0", f"{_CC}/publicdomain/zero/1.0/", "docs/corpora/common_voice.md"
    ),
    "ASVspoof 2019 LA": CorpusLicence(
        "Open Data Commons Attribution License (ODC-By) v1.0",
        "ODC-By-1.0",
        "https://opendatacommons.org/licenses/by/1-0/",
        "docs/corpora/asvspoof2019.md",
    ),
    "TORGO": CorpusLicence(
        "the terms of the distributor you obtain it from",
        None,
        "https://catalog.ldc.upenn.edu/LDC2012S02",
        "docs/corpora/torgo.md",
    ),
    "WORLD proxy of the default corpus": CorpusLicence(
        "that of the asterisk prompts it resynthesises",
        None,
        None,
        "docs/corpora/world_proxy.md",
    ),
    # The default corpus: one entry per Debian package (each package's copyright file).
    "asterisk-core-sounds-en-g722": CC_BY_SA_3,
    "asterisk-core-sounds-es-g722": CC_BY_SA_3,
    "asterisk-core-sounds-fr-g722": CC_BY_SA_3,
    "asterisk-core-sounds-it-g722": CC_BY_3,
    "asterisk-core-sounds-ru-g722": CC_BY_3,
    "asterisk-prompt-it-menardi-wav": CorpusLicence(
        "CC BY-SA 3.0 Italy", None, f"{_CC}/licenses/by-sa/3.0/it/", "docs/corpora/asterisk.md"
    ),
    "asterisk-prompt-fr-armelle": CorpusLicence(
        "a BSD-style licence of Michel Gutierrez (keep the notice; no endorsement)",
        None,
        None,
        "docs/corpora/asterisk.md",
    ),
    "asterisk-prompt-es-co": CorpusLicence("GPL version 2", "GPL-2.0-only", _GPL2, "docs/corpora/asterisk.md"),
    "fillets-ng-data-cs": CorpusLicence("GPL version 2", "GPL-2.0-only", _GPL2, "docs/corpora/fillets.md"),
    "fillets-ng-data-nl": CorpusLicence("GPL version 2", "GPL-2.0-only", _GPL2, "docs/corpora/fillets.md"),
}
