"""Published numbers checked against the recomputation: ``--claims CLAIMS.toml``.

A claims file is a list of ``[[claim]]`` tables, each naming one recomputed value::

    [[claim]]
    id = "campp-macro-eer"
    description = "CAM++ macro EER (Table 7)"
    table = "per_encoder"        # a table of the report's aggregates (see TABLES)
    field = "macro_eer"          # one of its numeric fields
    where = { model = "CAM++" }  # selects rows; a list value means "any of"
                                 # table "records": one results row, by model, condition, subgroup...
    published = 0.098            # a number (one row must match) or [low, high] (min and max over the rows)
    tolerance = 0.0005           # or a top-level default_tolerance

A claim is ``reproduced`` when every published number is within ``tolerance`` of its recomputed value, ``not
reproduced`` otherwise, and ``not computable`` (with the reason) when the table has no value for it. A claims
file that names an unknown table, field or selector is an input error (exit 2), so a typo never reads as "not
computable".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from audit.table.reading import read_toml
from schemas import Flag, InputError, Severity

RECORD_SELECTORS = ("record_id", "experiment", "model", "corpus", "condition", "subgroup")
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # table: (selector fields, numeric fields)
    "table": ((), ("n_records", "n_trials", "checkpoint_blake3", "run_id", "trial_list_id", "scores_blake3")),
    "per_experiment": (("experiment",), ("n_records", "eer_mean", "eer_sd")),
    "per_encoder": (("model",), ("macro_eer", "n_experiments")),
    "condition_means": (("experiment", "corpus", "condition", "subgroup"), ("n_models", "eer_mean", "eer_sd")),
    "emotion_matrix": (
        ("enrol", "test", "matched"),
        ("n_models", "eer_mean", "eer_sd", "ratio_to_reference"),
    ),
    "gender_gaps": (
        ("experiment", "corpus", "condition", "clean"),
        ("n_models", "gap_abs_mean", "gap_abs_sd", "gap_abs_max", "gap_signed_mean"),
    ),
    "gap_ratios": (("experiment", "model", "corpus", "condition"), ("gap", "clean_gap", "ratio")),
    "contrast_summary": (
        ("experiment", "model_family"),
        ("n", "ie_mean", "ie_sd", "prediction_mean", "prediction_max", "eer_ab_mean"),
    ),
    "contrast_by_model": (
        ("experiment", "model", "model_family"),
        ("n", "ie_mean", "ie_sd", "prediction_mean", "prediction_max", "eer_ab_mean"),
    ),
    "contrast_by_setting": (
        ("experiment", "model_family", "factor_a", "level_a", "factor_b", "level_b"),
        ("n", "ie_mean", "ie_sd", "prediction_mean", "prediction_max", "eer_ab_mean"),
    ),
    "records": (RECORD_SELECTORS, ("eer", "n_target", "n_nontarget")),  # "EER of model X on condition Y"
    "ie_vs_prediction": ((), ("n", "r_observed", "r_expected_additive")),
    "ie_vs_prediction.by_family": (
        ("experiment", "model_family"),
        ("n", "r_observed", "r_expected_additive"),
    ),
}


@dataclass(frozen=True)
class Claim:
    """One published number (or [low, high] range) and where its recomputed value lives."""

    id: str
    description: str
    table: str
    field: str
    where: dict[str, Any]
    published: float | tuple[float, float]
    tolerance: float


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _claim(source: str, index: int, raw: Any, default_tolerance: float | None) -> Claim:
    where_text = f"[[claim]] number {index}"

    def bad(problem: str) -> InputError:
        return InputError(source, f"{where_text}: {problem}")

    if not isinstance(raw, dict):
        raise bad("must be a table")
    for key in ("id", "table", "field", "published"):
        if key not in raw:
            raise bad(f"missing {key!r}")
    where_text = f"claim {raw['id']!r}"
    table, field = raw["table"], raw["field"]
    if table not in TABLES:
        raise bad(f"unknown table {table!r} (expected one of {', '.join(TABLES)})")
    selectors, fields = TABLES[table]
    if field not in fields:
        raise bad(f"unknown field {field!r} of {table} (expected one of {', '.join(fields)})")
    where = raw.get("where", {})
    if not isinstance(where, dict) or any(key not in selectors for key in where):
        raise bad(f"'where' may only select on {', '.join(selectors) or 'nothing'} in {table}")
    published = raw["published"]
    if isinstance(published, list):
        if len(published) != 2 or not all(map(_number, published)) or published[0] > published[1]:
            raise bad("a published range must be [low, high]")
        published = (float(published[0]), float(published[1]))
    elif not _number(published):
        raise bad("'published' must be a number or [low, high]")
    tolerance: Any = raw.get("tolerance", default_tolerance)
    if not _number(tolerance) or tolerance < 0:
        raise bad("needs a non-negative 'tolerance' (or a top-level default_tolerance)")
    return Claim(str(raw["id"]), str(raw.get("description", "")), table, field, where, published, float(tolerance))


def read_claims(path: Path) -> list[Claim]:
    """Parse and check a claims file (unreadable or malformed: InputError)."""
    document = read_toml(path, "a TOML claims file")
    raw_claims = document.get("claim")
    if not isinstance(raw_claims, list) or not raw_claims:
        raise InputError(str(path), "expected one or more [[claim]] tables")
    default = document.get("default_tolerance")
    claims = [_claim(str(path), i, raw, default) for i, raw in enumerate(raw_claims, start=1)]
    ids = [c.id for c in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InputError(str(path), f"duplicate claim ids: {', '.join(duplicates)}")
    return claims


def record_facts(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The usable results rows as claim rows (table ``records``): a claim can name one model's EER on one
    condition and subgroup."""
    columns = [c for c in (*RECORD_SELECTORS, "eer", "n_target", "n_nontarget") if c in frame]
    rows = frame[columns].astype(object).where(frame[columns].notna(), None).to_dict("records")
    return [{str(k): (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in rows]


def _rows(facts: dict[str, Any], table: str) -> list[dict[str, Any]]:
    if table == "table" or table == "ie_vs_prediction":
        return [facts[table]]
    if table == "ie_vs_prediction.by_family":
        return list(facts["ie_vs_prediction"]["by_family"])
    return list(facts[table])


def _matches(row: dict[str, Any], where: dict[str, Any]) -> bool:
    return all(row.get(key) in (want if isinstance(want, list) else [want]) for key, want in where.items())


def check_claim(claim: Claim, facts: dict[str, Any]) -> dict[str, Any]:
    """The claim's result row: recomputed value, status and, when not computable, why."""
    result: dict[str, Any] = {
        "id": claim.id,
        "description": claim.description,
        "published": list(claim.published) if isinstance(claim.published, tuple) else claim.published,
        "recomputed": None,
        "tolerance": claim.tolerance,
        "status": "not computable",
        "reason": None,
    }
    rows = [row for row in _rows(facts, claim.table) if _matches(row, claim.where)]
    values: list[float] = [row[claim.field] for row in rows if _number(row.get(claim.field))]
    selection = f"{claim.table} where {claim.where}" if claim.where else claim.table
    if not values:
        result["reason"] = f"no value of {claim.field} in {selection} ({len(rows)} rows match)"
        return result
    if isinstance(claim.published, tuple):
        recomputed: list[float] = [min(values), max(values)]
        published = list(claim.published)
    elif len(values) > 1:
        result["reason"] = f"{len(values)} rows of {selection} match; the claim must select one"
        return result
    else:
        recomputed, published = [values[0]], [claim.published]
    result["recomputed"] = recomputed if isinstance(claim.published, tuple) else recomputed[0]
    within = all(abs(r - p) <= claim.tolerance + 1e-12 for r, p in zip(recomputed, published, strict=True))
    result["status"] = "reproduced" if within else "not reproduced"
    if not within:
        result["reason"] = f"differs from the published value by more than {claim.tolerance:g}"
    return result


def check_claims(claims: list[Claim], facts: dict[str, Any]) -> list[dict[str, Any]]:
    """``facts``: the report's aggregates plus a ``table`` entry of whole-table counts."""
    return [check_claim(claim, facts) for claim in claims]


def flag_claims(results: list[dict[str, Any]]) -> list[Flag]:
    """claims-not-reproduced (error: a published number is unsupported) and claims-not-computable."""
    flags = []
    failed = [r for r in results if r["status"] == "not reproduced"]
    if failed:
        flags.append(
            Flag(
                "claims-not-reproduced",
                Severity.ERROR,
                f"{len(failed)} published numbers are not reproduced by this table within their tolerance: "
                f"{', '.join(r['id'] for r in failed)}.",
                (),
                {"claims": [r["id"] for r in failed]},
            )
        )
    unknown = [r for r in results if r["status"] == "not computable"]
    if unknown:
        flags.append(
            Flag(
                "claims-not-computable",
                Severity.WARNING,
                f"{len(unknown)} published numbers cannot be recomputed from this table: "
                f"{', '.join(r['id'] for r in unknown)}.",
                (),
                {"claims": [r["id"] for r in unknown]},
            )
        )
    return flags
