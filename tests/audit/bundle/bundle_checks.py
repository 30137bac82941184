"""What the bundle-verification tests share: the record they tamper with and readers of the flags and sections."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from audit.bundle.verification import verify_bundle as verify_bundle_object
from provenance.canonical import canonical_json
from provenance.dsse import sign_envelope
from provenance.keys import load_private_key
from schemas.flags import Flag, Severity
from tests.provenance.synthetic_bundle import SyntheticBundle

RECORD = "E13-m1-babble-opus"


def verify_bundle(*args: Any, **kwargs: Any) -> tuple[list[Flag], list[dict[str, Any]]]:
    """The flags and sections of ``audit.bundle.verify_bundle``'s VerifiedBundle."""
    verified = verify_bundle_object(*args, **kwargs)
    return verified.flags, verified.sections


def by_id(flags: list[Flag]) -> dict[str, Flag]:
    return {flag.id: flag for flag in flags}


def failures_of(flags: list[Flag], flag_id: str) -> list[dict[str, Any]]:
    """The failure cases of the flag with this id, without the reason code of the step that found each."""
    return [
        {key: value for key, value in failure.items() if key != "reason"}
        for failure in by_id(flags)[flag_id].details["failures"]
    ]


def sections_of(sections: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {section["id"]: section for section in sections}


def error_ids(flags: list[Flag]) -> set[str]:
    return {flag.id for flag in flags if flag.severity is Severity.ERROR}


def resign(bundle: SyntheticBundle, mutate: Callable[[dict[str, Any]], None], *, escaped: bool = False) -> None:
    """Rewrite the statement (as someone holding the key would) and sign it again; ``escaped`` writes non-ASCII
    text as JSON escapes, which can spell what UTF-8 cannot (a lone surrogate)."""
    statement = json.loads((bundle.root / "provenance" / "statement.json").read_bytes())
    mutate(statement)
    payload = (
        json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
        if escaped
        else (canonical_json(statement))
    )
    (bundle.root / "provenance" / "statement.json").write_bytes(payload)
    envelope = sign_envelope(payload, load_private_key(bundle.private_key))
    (bundle.root / "provenance" / "run.intoto.jsonl").write_bytes(envelope)
