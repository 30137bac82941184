"""The Headline results, what a reader looks for first: the EER per encoder and condition, the encoder rankings and
the trial-design errors, the metrics beyond the EER, the interaction summary, and a score audit's metrics per group;
each table at most ``HEADLINE_ROWS`` rows, every row in the appendix or report.json."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from reports.blocks import Block, BulletList, Details, Heading, Paragraph
from reports.document.aggregates import AGGREGATE_TITLES, CONTRAST_DEFINITION, HEADLINE_AGGREGATES, _title
from reports.document.flags import _flags
from reports.document.shape import _entries, _mapping, as_rows
from reports.document.tables import FOLD_ROWS, interval, rows_blocks, table_blocks, with_intervals
from reports.format import format_list
from schemas import count

HEADLINE_ROWS = 24  # conditions in the headline EER table; every one is in the appendix
BEYOND_EER_HEADLINES = (
    (
        "Spoofing-aware metrics of the spoof cells",
        "sasv_eer",
        ("sv_eer", "spf_eer", "sasv_eer", "a_dcf", "cm_eer", "min_t_dcf", "t_eer"),
        "Re-derived from the per-trial ASV and countermeasure scores (the cell's targets and spoofs, its genuine "
        "companion's bona fide non-targets).",
    ),
    (
        "Calibration of the clean records",
        "cllr",
        ("cllr", "min_cllr", "act_dcf"),
        "Cllr and minCllr in bits, actDCF at the rows' costs, on the bona fide evaluation trials, under the "
        "calibration the run declares; every condition in the calibration-transfer section.",
    ),
    (
        "AS-norm beside the raw scores",
        "eer_as_norm",
        ("eer_as_norm", "min_dcf_as_norm"),
        "EER and minDCF of the AS-normalised scores the run declares, beside the raw EER above.",
    ),
)


def _eer_pivot(report: Mapping[str, Any]) -> list[Block]:
    """The EER per encoder (columns) and condition (rows) of ``eer_by_model_condition``: every condition when few,
    else each experiment's clean reference and the conditions of highest mean EER."""
    cells = [
        row for row in _entries(_mapping(report.get("aggregates"), "aggregates").get("eer_by_model_condition"), "x")
        if isinstance(row.get("eer_mean"), numbers.Number)
    ]  # fmt: skip
    if not cells:
        return []
    models = list(dict.fromkeys(str(row.get("model")) for row in cells))
    grid: dict[tuple[str, str], dict[str, Any]] = {}
    for row in cells:
        grid.setdefault((str(row.get("experiment")), str(row.get("condition"))), {})[str(row.get("model"))] = row[
            "eer_mean"
        ]
    clean = {str(label).lower() for label in _mapping(report.get("config"), "config").get("clean_labels") or []}
    keys = sorted(grid, key=lambda key: (key[0], key[1].lower() not in clean))  # each experiment's reference first
    if len(keys) > HEADLINE_ROWS:
        mean = {key: sum(grid[key].values()) / len(grid[key]) for key in keys}
        kept = {key for key in keys if key[1].lower() in clean}
        kept |= set(sorted((k for k in keys if k not in kept), key=lambda k: -mean[k])[: HEADLINE_ROWS - len(kept)])
        keys = [key for key in keys if key in kept]
    shown = (
        ""
        if len(keys) == len(grid)
        else (
            f" Shown: {len(keys)} of the {len(grid)} conditions, each experiment's clean reference and those of "
            "highest mean EER over encoders; all in the appendix (Aggregates)."
        )
    )
    intro = Paragraph(
        "EER per encoder (columns) and condition (rows): the mean over the condition's records, in the rows' own "
        f"EER variant.{shown}"
    )
    rows = [
        [experiment, condition, *(grid[(experiment, condition)].get(m) for m in models)]
        for experiment, condition in keys
    ]
    return [
        Heading(3, "EER per encoder and condition"),
        intro,
        *table_blocks(("experiment", "condition", *models), rows, fold=False),
    ]


def _beyond_eer_headlines(report: Mapping[str, Any]) -> list[Block]:
    """The calibrated, spoofing-aware and AS-normalised metrics a bundle's step re-derived: the spoof cells, the
    clean records' calibration and AS-norm, each a table of at most ``HEADLINE_ROWS`` rows."""
    section = next((s for s in _entries(report.get("sections"), "sections") if s.get("id") == "bundle-beyond-eer"), {})
    rows = [row for row in _entries(section.get("table"), "bundle-beyond-eer table") if isinstance(row, Mapping)]
    statistics = _mapping(report.get("statistics"), "statistics")
    intervals = {  # the spoof cells' intervals, by record id (statistics.spoofing), shown beside their values
        str(_mapping(row.get("key"), "statistics.spoofing key").get("record_id")): row
        for row in _entries(statistics.get("spoofing"), "statistics.spoofing")
    }
    blocks: list[Block] = []
    for title, key, columns, note in BEYOND_EER_HEADLINES:
        chosen = [row for row in rows if isinstance(row.get(key), numbers.Number)]
        if key == "cllr":  # the clean records (enrolment and test clean): each condition is in the transfer table
            chosen = [row for row in chosen if row.get("clean_reference") is True]
        if not chosen:
            continue
        shown = "" if len(chosen) <= HEADLINE_ROWS else f" The first {HEADLINE_ROWS} of {len(chosen)} records."
        if key == "sasv_eer" and intervals:
            shown += " [95% interval]: the speaker bootstrap of section spoofing-intervals."

        def cell(row: Mapping[str, Any], column: str) -> Any:
            drawn = _mapping(intervals.get(str(row.get("record_id")), {}).get(column), "statistics.spoofing metric")
            if drawn.get("low") is None:
                return row.get(column)
            return interval(row.get(column), drawn.get("low"), drawn.get("high"))

        table = [[row.get("experiment"), _condition(row), row.get("model"), *(cell(row, c) for c in columns)]
                 for row in chosen[:HEADLINE_ROWS]]  # fmt: skip
        blocks += [
            Heading(3, title),
            Paragraph(note + shown),
            *table_blocks(("experiment", "condition", "model", *columns), table, fold=False),
        ]
    return blocks


def _condition(row: Mapping[str, Any]) -> str:
    """A row's condition, with its subgroup where it has one (``clean (gender=F)``)."""
    subgroup = row.get("subgroup")
    blank = subgroup is None or subgroup != subgroup or subgroup == ""
    return str(row.get("condition")) + ("" if blank else f" ({subgroup})")


def _interaction_summary(report: Mapping[str, Any]) -> list[Block]:
    """Per contrast family (experiment and model family): how many contrasts, the mean and SD of IE, the mean
    prediction and, with per-trial statistics, the family verdict and the mean IE's interval."""
    summary = _entries(_mapping(report.get("aggregates"), "aggregates").get("contrast_summary"), "contrast_summary")
    families = _mapping(_mapping(report.get("statistics"), "statistics").get("families"), "statistics.families")
    rows = []
    for row in summary:
        family = f"{row.get('experiment')}/{row.get('model_family') or 'unknown family'}"  # the statistics' key
        found = {
            "family": family,
            "contrasts": row.get("n"),
            "mean IE": row.get("ie_mean"),
            "SD of IE": row.get("ie_sd"),
            "mean prediction": row.get("prediction_mean"),
            "flagged": row.get("n_flagged"),
        }
        statistics = families.get(family)
        if isinstance(statistics, Mapping):
            mean_ie = _mapping(statistics.get("mean_ie"), "mean_ie")
            found["95% interval of mean IE"] = interval(None, mean_ie.get("low"), mean_ie.get("high"))
            found["verdict (Holm)"] = statistics.get("verdict")
            # what an "undetermined" could have found: the smallest IE found 80 % of the time (statistics' power)
            found["|IE| found 80%"] = _mapping(statistics.get("power"), "power").get("detectable_ie")
        rows.append(found)
    if not rows:
        return []
    power = (
        " '|IE| found 80%': the smallest interaction that, in one contrast of an otherwise additive family, the "
        "family test finds 80% of the time at this run's speakers (section Per-trial statistics)."
        if families
        else ""
    )
    intro = Paragraph(f"{CONTRAST_DEFINITION} Per contrast: appendix (Interaction contrasts).{power}")
    return [Heading(3, "Interaction summary"), intro, *rows_blocks(rows, fold=False)]


def _rankings_headline(report: Mapping[str, Any]) -> list[Block]:
    """Per setting, the encoders best first and which pairs are separable (Holm), else "not separable at N speakers
    (MDD x)"; the macro ranking's differences; the trial-design audit's outcome (issue 41)."""
    rankings = _mapping(_mapping(report.get("statistics"), "statistics").get("rankings"), "statistics.rankings")
    rows = _entries(rankings.get("headline"), "statistics.rankings.headline")
    design = next((s for s in _entries(report.get("sections"), "sections") if s.get("id") == "trial-design"), None)
    blocks: list[Block] = []
    if rows:
        macro = _mapping(rankings.get("macro"), "statistics.rankings.macro")
        pairs = _entries(macro.get("pairs"), "statistics.rankings.macro.pairs")
        shown = ""
        if len(rows) > HEADLINE_ROWS:  # where the run separates encoders first: the rest say "not separable"
            rows = sorted(rows, key=lambda row: str(row.get("verdict", "")).startswith("not separable"))
            shown = f" {HEADLINE_ROWS} of {len(rows)} settings, those with a separable pair first; all in report.json."
        note = (
            "Paired comparisons on the same speaker draws for every encoder; 'separable' only where Holm rejects over "
            f"the family declared in [analysis] (ranking_family = {rankings.get('family')}); MDD: the smallest EER "
            "difference found 80% of the time at this run's speakers, by simulation on its own draws (section Paired "
            "encoder comparisons)." + shown
        )
        macro_text = "; ".join(_macro_pair_text(pair) for pair in pairs)
        ranked = rows_blocks(rows[:HEADLINE_ROWS], fold=False)
        blocks += [Heading(3, "Encoder rankings (paired, Holm)"), Paragraph(note), *ranked]
        if macro_text and len(pairs) <= FOLD_ROWS:
            blocks.append(Paragraph(f"Macro EER differences (paper Table 7, 95% intervals): {macro_text}."))
        elif macro_text:  # many encoders: the separable pairs, every pair folded
            separable = [_macro_pair_text(pair) for pair in pairs if pair.get("separable")]
            listed = f": {format_list(separable)}" if separable else ""
            every = BulletList(tuple(_macro_pair_text(pair) for pair in pairs))
            blocks += [
                Paragraph(
                    "Macro EER differences (paper Table 7, 95% intervals): "
                    f"{len(separable)} of {count(len(pairs), 'pair')} separable{listed}."
                ),
                Details(f"All {count(len(pairs), 'macro EER difference')} with their intervals", (every,)),
            ]
    if design is not None and design.get("status") != "pass":
        lines = design.get("lines") or []
        blocks.append(
            Paragraph(
                f"Trial-design audit: {lines[-1] if lines else design.get('status')} (section Trial-design audit)."
            )
        )
        blocks += _design_errors(report, design)
    return blocks


def _design_errors(report: Mapping[str, Any], design: Mapping[str, Any]) -> list[Block]:
    """The trial-design audit's errors: the measurements that fire a rule whose flag is an error, each with its
    thresholds (at most ``HEADLINE_ROWS``; every measurement in the section)."""
    errors = {str(flag.get("id")) for flag in _flags(report) if flag.get("severity") == "error"}
    table = design.get("table")
    rows = [
        {key: row.get(key) for key in ("rule", "where", "measured", "threshold")}
        for row in ([] if isinstance(table, Mapping) else _entries(table, "section 'trial-design' table"))
        if row.get("fires") == "yes" and str(row.get("rule")) in errors
    ]
    if not rows:
        return []
    shown = "" if len(rows) <= HEADLINE_ROWS else f" The first {HEADLINE_ROWS} of {len(rows)}."
    intro = Paragraph(f"Trial-design errors: what fires each rule whose flag is an error, with its thresholds.{shown}")
    return [intro, *rows_blocks(rows[:HEADLINE_ROWS], fold=False)]


def _macro_pair_text(pair: Mapping[str, Any]) -> str:
    """``a - b -0.003 [-0.02, 0.01] (not separable)``."""
    difference = _mapping(pair.get("difference"), "difference")
    bounds = interval(difference.get("estimate"), difference.get("low"), difference.get("high"))
    verdict = "separable" if pair.get("separable") else "not separable"
    return f"{' - '.join(map(str, pair.get('encoders') or []))} {bounds} ({verdict})"


def _headline_section(report: Mapping[str, Any]) -> list[Block]:
    """The results a reader looks for first: a table audit's EER per encoder and condition and its interaction
    summary; a score audit's metrics per group (``HEADLINE_AGGREGATES``, then left out of the appendix)."""
    aggregates = _mapping(report.get("aggregates"), "aggregates")
    blocks = [
        *_eer_pivot(report),
        *_rankings_headline(report),
        *_beyond_eer_headlines(report),
        *_interaction_summary(report),
    ]
    for key in HEADLINE_AGGREGATES:
        rows = as_rows(aggregates.get(key))
        if rows:
            title = AGGREGATE_TITLES.get(key, _title(key))
            blocks += [Heading(3, title), *rows_blocks(with_intervals(rows), fold=False)]
    return [Heading(2, "Headline results"), *(blocks or [Paragraph("No EER per encoder and condition was computed.")])]
