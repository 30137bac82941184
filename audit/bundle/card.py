"""The step that checks the bundle's Croissant card against the verified files: every file it lists is a verified
subject with that SHA-256, and it lists every data file of the bundle (``provenance.card_disagreements``)."""

from __future__ import annotations

from audit.bundle.subjects import VerifiedBytes
from audit.bundle.verified import DigestMismatchError, Step
from provenance import card_disagreements
from schemas import CROISSANT_FILE, BundleFileError, parse_json_object


def verify_croissant_card(verified: VerifiedBytes) -> tuple[None, Step]:
    """A card that omits a file, lists one the bundle lacks or lies about a digest is a ``digest-mismatch``; a bundle
    without a card (written before the runner wrote one) passes, saying so."""
    if CROISSANT_FILE not in verified.contents:
        return None, Step([f"The bundle has no verified {CROISSANT_FILE} (bundles before the card have none)."])
    try:
        card = parse_json_object(CROISSANT_FILE, verified.contents[CROISSANT_FILE])
    except BundleFileError as error:
        problems = [{"file": CROISSANT_FILE, "problem": error.problem}]
    else:
        problems = card_disagreements(card, verified.digests)
    if problems:
        raise DigestMismatchError(
            "croissant-card",
            f"The Croissant card {CROISSANT_FILE} disagrees with the bundle in {len(problems)} file(s): "
            f"{problems[0]['file']}: {problems[0]['problem']}.",
            failures=problems,
        )
    return None, Step([f"{CROISSANT_FILE} lists every verified data file of the bundle with its SHA-256."])
