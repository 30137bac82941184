"""Findings of an audit: flags with a stable id, a severity, the rows concerned and one plain sentence."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    ERROR = "error"  # the audit fails: exit 1
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Flag:
    """One finding. ``records`` are record_ids; ``details`` holds failure cases and figures behind the message."""

    id: str
    severity: Severity
    message: str
    records: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": str(self.severity),
            "records": list(self.records),
            "message": self.message,
            "details": self.details,
        }


def has_errors(flags: list[Flag]) -> bool:
    return any(flag.severity is Severity.ERROR for flag in flags)
