"""The audit's Croissant step: a signed card that agrees with the bundle passes; a card that omits a file, lists one
the bundle lacks or lies about a digest is a ``digest-mismatch`` naming the file (signed by the authors, so the
signature step passes and the card step must catch it). SHA-256s are recomputed with ``hashlib``."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from audit.bundle import verify_bundle
from tests.provenance.synthetic_bundle import SyntheticBundle, with_croissant_card


def card_step(bundle: SyntheticBundle) -> tuple[dict[str, Any], list[Any]]:
    verified = verify_bundle(bundle.read_results(), bundle.root, bundle.public_key)
    section = next(s for s in verified.sections if s["id"] == "bundle-croissant")
    return section, [flag for flag in verified.flags if flag.id == "digest-mismatch"]


def test_a_card_that_agrees_with_the_bundle_passes(bundle: SyntheticBundle) -> None:
    with_croissant_card(bundle)
    section, flags = card_step(bundle)
    assert section["status"] == "pass" and not flags


def test_a_bundle_without_a_card_passes_saying_so(bundle: SyntheticBundle) -> None:
    section, flags = card_step(bundle)
    assert section["status"] == "pass" and "has no verified croissant.json" in section["lines"][0] and not flags


def omit(name: str) -> Any:
    def edit(card: dict[str, Any]) -> None:
        card["distribution"] = [entry for entry in card["distribution"] if entry.get("contentUrl") != name]

    return edit


def lie(name: str) -> Any:
    def edit(card: dict[str, Any]) -> None:
        for entry in card["distribution"]:
            if entry.get("contentUrl") == name:
                entry["sha256"] = hashlib.sha256(b"another file").hexdigest()

    return edit


def add(name: str) -> Any:
    def edit(card: dict[str, Any]) -> None:
        card["distribution"].append({"@type": "cr:FileObject", "contentUrl": name, "sha256": "0" * 64})

    return edit


@pytest.mark.parametrize(
    ("edit", "name", "problem"),
    [
        (omit("results.csv"), "results.csv", "a bundle file the card does not list"),
        (lie("operators.json"), "operators.json", "differs from the file's"),
        (add("trials/missing.csv"), "trials/missing.csv", "not a verified file of the bundle"),
    ],
)
def test_a_card_that_disagrees_is_a_digest_mismatch_naming_the_file(
    bundle: SyntheticBundle, edit: Any, name: str, problem: str
) -> None:
    with_croissant_card(bundle, edit)
    section, flags = card_step(bundle)
    assert section["status"] == "fail" and len(flags) == 1
    assert flags[0].details["reasons"] == ["croissant-card"]
    assert [(case["file"], problem in case["problem"]) for case in flags[0].details["failures"]] == [(name, True)]
    assert f"{name}: " in flags[0].message
