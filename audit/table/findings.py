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


_WHERE = (("row", "row"), ("record_id", "record"), ("file", "file"), ("subject", "file"), ("column", "column"),
          ("chain", "chain"))  # fmt: skip


def describe_case(case: dict[str, Any]) -> str:
    """One failing case of a flag in words: where (row, record, file, column) and what (audited against signed
    value, the check a cell fails, or the problem).

    >>> describe_case({"row": 4, "record_id": "r1", "column": "eer", "table": "0.3", "signed": "0.217"})
    'row 4, record r1, column eer: 0.3 in the table, 0.217 signed'
    >>> describe_case({"file": "operators.json", "problem": "breaks its shape"})
    'file operators.json: breaks its shape'
    """
    where = ", ".join(f"{word} {case[key]}" for key, word in _WHERE if case.get(key) is not None)
    if "table" in case and "signed" in case:
        what = f"{case['table']} in the table, {case['signed']} signed"
    elif "check" in case:
        what = f"{case['check']} (value {case.get('value')!r})"
    else:
        what = str(case.get("problem", ""))
    return f"{where}: {what}" if where and what else where or what


def cases_of(details: dict[str, Any]) -> list[dict[str, Any]]:
    """A flag's failing cases, from its own details or from each source it pools (see :func:`one_per_id`)."""
    found = [case for case in details.get("failures") or [] if isinstance(case, dict)]
    for source in details.get("sources") or []:
        found += cases_of(source) if isinstance(source, dict) else []
    return found


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
