"""How the per-trial statistics read in the report: an interval as text (passed to the sections of rankings,
calibration and speakers under stress, which take it as an argument), the family table's cells and coverage
statement, and the sections of the subgroup gaps, the fixed-threshold analysis and the spoof cells.

Apart from the modules that compute: the same numbers are worded once, whichever section shows them.
"""

from __future__ import annotations

from typing import Any

from audit.statistics.subgroups import MIN_DEV_SPEAKERS
from schemas import SPOOFING_COLUMNS, format_number

INTERVAL_DECIMALS = 3  # EERs, their intervals and the coupling r, in the section's lines and tables


def interval_text(value: dict[str, Any] | None) -> str:
    """``estimate [low, high]``; a withheld interval as ``estimate (no interval: one speaker)``, a degenerate one
    (no width: every resample the same value, or cut to the metric's bound) as ``estimate (no interval: why)``; an
    estimate outside its own interval with a word why; a zero count with its exact bound beside."""
    if value is None:
        return "-"
    estimate, low, high = (format_number(value.get(key), INTERVAL_DECIMALS) for key in ("estimate", "low", "high"))
    if "withheld" in value:
        return f"{estimate} (no interval: {str(value['withheld']).split(':')[0]})"
    if "degenerate" in value:
        return f"{estimate} (no interval: {str(value['degenerate']).split(' (')[0]})"
    text = f"{estimate} [{low}, {high}]"
    if value.get("low") is not None and not value["low"] <= value["estimate"] <= value["high"]:
        text += " (the estimate lies outside: its resamples sit to one side of it)"
    if "exact_bound" in value:
        bound = value["exact_bound"]
        exact = (format_number(bound[key], INTERVAL_DECIMALS) for key in ("low", "high"))
        text += " (exact [{}, {}]: {})".format(*exact, bound["reason"].split(":")[0])
    return text


def subgroup_gap_section(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each subgroup setting's gaps to its reference subgroup, with intervals and the speakers behind each."""
    rows = [
        {
            **result["key"],
            "subgroup": name,
            "speakers": result["n_speakers"].get(name),
            "EER": interval_text(result["eer"][name]),
            "gap to " + str(result["reference"]): interval_text(result["gap_to_reference"][name])
            if name in result.get("gap_to_reference", {})
            else "reference",
        }
        for result in results
        if result.get("eer")
        for name in sorted(result["eer"])
    ]
    single = sorted(
        {f"{'/'.join(r['key'].values())} {n}" for r in results for n, k in r["n_speakers"].items() if k == 1}
    )  # every one: a partial list reads as the whole
    return {
        "id": "subgroup-gaps",
        "title": "Subgroup EER gaps with intervals",
        "status": "info",
        "lines": [
            "Each subgroup's EER at its own threshold and its gap to the reference subgroup (estimate [95% interval]), "
            "from the same two-way speaker draws as the contrasts; the speakers behind each subgroup are counted.",
            *(
                [
                    f"{len(single)} subgroup(s) of one speaker get no interval, and neither does a gap or range "
                    f"they take part in (a value of that speaker, not of a population): {'; '.join(single)}."
                ]
                if single
                else []
            ),
        ],
        "table": rows,
    }


def fixed_threshold_section(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Subgroup FAR and FRR at one common threshold, beside each subgroup's own-threshold EER (the paper's gaps)."""
    rows = [
        {
            **result["key"],
            "subgroup": subgroup,
            "threshold": _threshold_text(result),
            "EER (own threshold)": interval_text(values["eer"]),
            "FAR (common)": interval_text(values["far"]),
            "FRR (common)": interval_text(values["frr"]),
            "trials": values["n_target"] + values["n_nontarget"],
        }
        for result in results
        for subgroup, values in sorted(result.get("subgroups", {}).items())
    ]
    skipped = [f"{'/'.join(result['key'].values())}: {result['skipped']}" for result in results if "skipped" in result]
    zero = sum(
        1
        for result in results
        for values in result.get("subgroups", {}).values()
        for rate in ("far", "frr")
        if "exact_bound" in (values.get(rate) or {})
    )
    return {
        "id": "fixed-threshold-subgroups",
        "title": "Subgroup error rates at one common threshold",
        "status": "info",
        "lines": [
            "Per-subgroup EERs compare separately optimised operating points; a deployment runs at one threshold. "
            "Here the threshold is chosen on development speakers disjoint from the evaluated ones, and each "
            "subgroup's FAR and FRR at it are shown beside its own EER (estimate [95% interval]).",
            "Intervals resample the development and the evaluation speakers on both sides of each trial, and each "
            "resample chooses its own threshold on its development trials, so the threshold's uncertainty is in the "
            "FAR and FRR intervals (the threshold column gives its 95% range). A subgroup of one speaker gets no "
            f"interval. The analysis needs {MIN_DEV_SPEAKERS} development speakers per class (declared minimum).",
            *(
                [
                    f"{zero} rate(s) count no event (or only events): the bootstrap has nothing to vary there, so the "
                    "exact Clopper-Pearson bound over their trials (taken as independent) is given beside."
                ]
                if zero
                else []
            ),
            *([f"{len(skipped)} setting(s) have no analysis: {'; '.join(skipped)}"] if skipped else []),
        ],
        "table": rows,
    }


def _threshold_text(result: dict[str, Any]) -> str:
    """The point threshold and the range of the resamples' thresholds."""
    draws = result.get("threshold_draws") or {}
    low, high = (format_number(draws.get(key), INTERVAL_DECIMALS) for key in ("low", "high"))
    return f"{format_number(result['threshold'], INTERVAL_DECIMALS)} [{low}, {high}]"


def spoofing_section(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The spoof cells' spoofing-aware metrics with their intervals."""
    table = [
        {
            **{name: row["key"][name] for name in ("experiment", "model", "condition", "subgroup") if row["key"][name]},
            **{name: interval_text(row[name]) if "estimate" in row[name] else "n/a" for name in SPOOFING_COLUMNS},
            "trials": row["n_trials"],
        }
        for row in rows
    ]
    return {
        "id": "spoofing-intervals",
        "title": "Spoofing-aware metrics with intervals",
        "status": "info",
        "lines": [
            "Per spoof cell (its targets and spoofs, its genuine companion's bona fide non-targets): SV-, SPF- and "
            "SASV-EER and the countermeasure's EER (rocch), a-DCF, min t-DCF and the concurrent t-EER, estimate "
            "[95% interval] from the same two-way speaker draws as the contrasts (percentile). Their coverage has "
            "not been measured by simulation: read them as the spread the speakers give, not as a checked 95%.",
        ],
        "table": table,
    }


def count_text(family: dict[str, Any]) -> str:
    """A family's bounds on its count of contrasts outside the margin: ``3 to 7``; ``0 to 24 (cannot tell)`` when
    they run from none to every tested contrast; the contrasts whose verdict was withheld (near chance) counted
    apart, since the bounds say nothing of them."""
    low, high = family["n_outside_margin"]["low"], family["n_outside_margin"]["high"]
    untested = family["n_not_tested"]
    cannot_tell = low == 0 and high == family["n_contrasts"] - untested and high > 0
    return (
        f"{low} to {high}"
        + (" (cannot tell)" if cannot_tell else "")
        + (f" of the tested; {untested} not tested (verdict withheld)" if untested else "")
    )


def share_text(share: float | None) -> str:
    """A share as a whole percentage; ``-`` where there is none."""
    return "-" if share is None else f"{share:.0%}"


def coverage_statement(statistics: dict[str, Any]) -> list[str]:
    """One statement of what coverage these intervals reach: the matched simulations' where the audit ran them
    (contrasts on fewer than ``FEW_SPEAKERS`` speakers, with their Monte-Carlo error), else DESIGN section 4's row
    for this variant and about this many speakers (none for a level the table does not give). Never both: the
    table's design is not this audit's, and two figures for one interval contradict each other."""
    warnings = statistics.get("coverage_warnings") or []
    if warnings:
        return [" ".join(warnings)]
    row = statistics.get("measured_coverage")
    if row is None:
        return []
    return [
        f"Measured coverage of these 95% intervals in {row['eer_method']} at {row['n_speakers']} speakers (the "
        f"simulated count at or below this audit's median of {row['median_speakers']} speakers per contrast; "
        f"{row['n_datasets']:,} simulated datasets with speaker effects on both sides and unequal trials per "
        f"speaker, DESIGN section 4): single EER {row['clean']:.3f} (Monte-Carlo SE {row['clean_se']:.3f}), "
        f"IE {row['ie']:.3f} ({row['ie_se']:.3f}), subgroup gap {row['gap']:.3f} ({row['gap_se']:.3f})."
    ]
