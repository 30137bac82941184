"""Findings of an audit: flags with a stable id, a severity, the rows concerned and one plain sentence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemas.flags import Severity, flag_kind


@dataclass(frozen=True)
class Flag:
    """One finding. ``records`` are record_ids; ``details`` holds failure cases and figures behind the message."""

    id: str
    severity: Severity
    message: str
    records: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        flag_kind(self.id)  # only registered flags are raised

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": str(self.severity),
            "records": list(self.records),
            "message": self.message,
            "meaning": flag_kind(self.id).meaning,
            "details": self.details,
        }


def has_errors(flags: list[Flag]) -> bool:
    return any(flag.severity is Severity.ERROR for flag in flags)


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def one_per_id(flags: list[Flag]) -> list[Flag]:
    """One flag per id, in first-raised order: the table checks and the bundle checks may raise the same id
    (``unmatched-trials``), and a report keyed by id must not lose either. Severities keep the graver; the
    messages and records are pooled; the details of each source are kept under ``sources``."""
    groups: dict[str, list[Flag]] = {}
    for flag in flags:
        groups.setdefault(flag.id, []).append(flag)
    return [
        same[0]
        if len(same) == 1
        else Flag(
            flag_id,
            min((flag.severity for flag in same), key=_RANK.__getitem__),
            " ".join(flag.message for flag in same),
            tuple(dict.fromkeys(record for flag in same for record in flag.records)),
            {"sources": [flag.details for flag in same]},
        )
        for flag_id, same in groups.items()
    ]
