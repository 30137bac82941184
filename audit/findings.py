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
