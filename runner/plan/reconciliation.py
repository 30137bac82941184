"""A registry's records and trial evaluations beside the paper's, per experiment, with the reason for each difference.

The paper's figures and the registry's reasons are declared in ``configs/paper_counts.toml`` (read from beside the
configuration by ``interbias plan``): its totals (4,068 records, 11,975,026 trial evaluations), the experiments whose
figures it gives or lets be derived, and per experiment why the registry differs. A trial evaluation is one scored
trial of one record; the registry's come from the plan (declared budgets, or the lists drawn from the corpora).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provenance import read_regular_file
from schemas import InputError

__all__ = [
    "TOTAL",
    "PaperCounts",
    "PaperFigure",
    "load_paper_counts",
    "reconcile",
    "reconciliation_lines",
]

TOTAL = "total"


@dataclass(frozen=True)
class PaperFigure:
    """Records and trial evaluations the paper gives (or lets be derived), and where they come from."""

    records: int
    evaluations: int
    source: str


@dataclass(frozen=True)
class PaperCounts:
    """The paper's totals, its per-experiment figures and the registry's reason per experiment (and ``total``)."""

    total: PaperFigure
    experiments: dict[str, PaperFigure]
    reasons: dict[str, str]


def _figure(path: Path, name: str, table: Any) -> PaperFigure:
    if not isinstance(table, dict):
        raise InputError(str(path), "expected a table of records, evaluations and source", column=name)
    for key in ("records", "evaluations"):
        value = table.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise InputError(str(path), f"expected a positive integer, got {value!r}", column=f"{name}.{key}")
    if not isinstance(table.get("source"), str) or not table["source"].strip():
        raise InputError(str(path), "expected where the figures come from", column=f"{name}.source")
    return PaperFigure(table["records"], table["evaluations"], table["source"])


def load_paper_counts(path: Path) -> PaperCounts:
    """Read ``paper_counts.toml``; every problem is one ``InputError`` naming the file and the key."""
    path = Path(path)
    try:
        document = tomllib.loads(read_regular_file(path, "a paper counts file (TOML)").decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"not valid TOML: {error}") from None
    unknown = sorted(set(document) - {TOTAL, "experiments", "reasons"})
    if unknown:
        raise InputError(str(path), f"unknown tables {unknown}; expected total, experiments, reasons")
    experiments = document.get("experiments", {})
    reasons = document.get("reasons", {})
    if not isinstance(experiments, dict) or not isinstance(reasons, dict):
        raise InputError(str(path), "expected [experiments.EXX] tables and a [reasons] table")
    for name, reason in reasons.items():
        if not isinstance(reason, str) or not reason.strip():
            raise InputError(str(path), "expected a sentence", column=f"reasons.{name}")
    return PaperCounts(
        total=_figure(path, TOTAL, document.get(TOTAL)),
        experiments={name: _figure(path, f"experiments.{name}", table) for name, table in experiments.items()},
        reasons=dict(reasons),
    )


def reconcile(counts: PaperCounts, registry: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """Per experiment of ``registry`` (id -> (records, trial evaluations)) and in total: the registry's figures, the
    paper's where it gives them (None where it does not), their differences and the declared reason."""

    def row(name: str, ours: tuple[int, int], paper: PaperFigure | None) -> dict[str, Any]:
        return {
            "records": ours[0],
            "evaluations": ours[1],
            "paper_records": paper.records if paper else None,
            "paper_evaluations": paper.evaluations if paper else None,
            "records_difference": ours[0] - paper.records if paper else None,
            "evaluations_difference": ours[1] - paper.evaluations if paper else None,
            "paper_source": paper.source if paper else "not given per experiment",
            "reason": counts.reasons.get(name, "no reason declared"),
        }

    total = (sum(r for r, _ in registry.values()), sum(e for _, e in registry.values()))
    return {
        "experiments": {name: row(name, ours, counts.experiments.get(name)) for name, ours in registry.items()},
        TOTAL: row(TOTAL, total, counts.total),
    }


def reconciliation_lines(table: Mapping[str, Any]) -> list[str]:
    """The reconciliation as a readable table: one line per experiment and the total, then the reasons."""

    def given(value: int | None) -> str:
        return "-" if value is None else f"{value:,}"

    out = ["reconciliation with the paper (records, trial evaluations; '-': the paper gives no per-experiment figure)"]
    out.append(f"  {'experiment':<10} {'records':>8} {'paper':>8} {'evaluations':>12} {'paper':>12}  reason")
    rows = [*table["experiments"].items(), (TOTAL, table[TOTAL])]
    for name, row in rows:
        out.append(
            f"  {name:<10} {row['records']:>8,} {given(row['paper_records']):>8} {row['evaluations']:>12,} "
            f"{given(row['paper_evaluations']):>12}  {row['reason']}"
        )
    return out
