"""Turn the report dict of ``audit verify`` (or ``audit scores``) into blocks, in the order a reviewer reads it:
the verdict with its cause, the headline results (the EER per encoder and condition, the interaction summary), the
table of contents, the figures, the flags, the statistics and every other section, the published claims, the
badges; then the appendix: what was run (files and their hashes, the run, the signature, the configuration), the
per-file bundle checks, every aggregate table and the contrasts.

The report stays navigable as it grows: outside the headline, a table of more than ``FOLD_ROWS`` rows (whichever
section it is in), the flags of one severity beyond the first ``SHOWN_FLAGS`` and the figures of a gallery beyond its
first are folded (``Details``) under one line saying what they hold and how many; nothing is left out.

Every key may be absent or empty. Rows are rendered generically: a table of whatever columns the rows have, in
the order they first appear, so sections added by later checks render without changes here (a section this module
does not know goes with the statistics, after the flags). ``run`` and ``trust`` (what was run and who signed it)
are rendered from whatever keys they hold.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from reports.blocks import Block, BulletList, Callout, Contents, Details, Figure, Heading, Paragraph, Table, Tone
from reports.figures import FigureOutcome
from reports.format import format_list, format_value
from schemas import Error, count

SEVERITY_ORDER = ("error", "warning", "info")
MAX_TABLE_ROWS = 1000  # longer tables are cut, with a line saying how many rows are only in report.json
MAX_DETAIL_ROWS = 20  # failure cases listed under one flag
FOLD_ROWS = 8  # a longer table outside the headline is folded under a line saying what it holds
SHOWN_FLAGS = 3  # flags of one severity shown in full; the others folded under a line naming them
GALLERY_WORDS = 2  # figures whose file names begin with the same two words (det_curves_E01, ...) are one gallery
STACKED_ROWS, STACKED_COLUMNS = 3, 10  # a table of at most 3 rows and more than 10 columns is shown stacked

AGGREGATE_TITLES = {
    "per_experiment": "EER per experiment (mean and SD over records; paper Table 6)",
    "per_encoder": "Macro EER per encoder (paper Table 7)",
    "condition_means": "EER per condition, mean and SD over encoders (paper Tables 20-25; the SD is not a CI)",
    "eer_by_model_condition": "EER per encoder and condition (mean over its records; the heatmap's cells)",
    "metrics_per_group": "Metrics per group (EER variants named in each column: eer_legacy, eer_rocch, eer_interp)",
    "calibration_per_group": "Calibration per group (min_cllr of the raw scores; cllr, act_dcf of the calibrated LLRs)",
    "spoofing_per_group": "Spoofing-aware metrics per group (ASV score; countermeasure; tandem)",
    "emotion_matrix": "Enrolment x test emotion (E01; paper Table 8)",
    "gender_gaps": "Gender gaps by condition (paper Table 9)",
    "gap_ratios": "Signed gap ratios (paper Table 10)",
    "contrast_summary": "Interaction contrasts per family (paper Tables 2, 11, 12)",
    "ie_vs_prediction": "IE vs additive prediction (paper Figure 3)",
    "gap_vs_snr": "Gender gap vs SNR (paper Figure 4)",
}
CONTRASTS_KEY = "contrasts"
CONTRAST_DEFINITION = (
    "prediction = EER(A) + EER(B) - EER(clean), IE = EER(A+B) - prediction; each term in its row's own EER variant."
)


class ReportShapeError(Error, ValueError):
    """The report dict does not have the documented shape (a bug in its producer, not bad user input)."""


def _entries(value: Any, where: str) -> list[Mapping[str, Any]]:
    """``value`` as a list of objects; anything else is a shape error naming where it was found."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ReportShapeError(f"report {where}: expected a list of objects, got {type(value).__name__}")
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise ReportShapeError(f"report {where}[{index}]: expected an object, got {type(entry).__name__}")
    return list(value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ReportShapeError(f"report {where}: expected an object, got {type(value).__name__}")
    return value


def as_rows(value: Any) -> list[Mapping[str, Any]] | None:
    """``value`` as table rows when it is one: a non-empty list of objects, or a non-empty object of objects
    (``{"run_id": {"present": 3, "total": 4}}`` becomes a row ``{"name": "run_id", "present": 3, ...}``)."""
    if isinstance(value, Mapping):
        if value and all(isinstance(item, Mapping) for item in value.values()):
            return [{"name": str(key), **item} for key, item in value.items()]
        return None
    is_list = isinstance(value, Sequence) and not isinstance(value, str)
    if is_list and value and all(isinstance(row, Mapping) for row in value):
        return list(value)
    return None


def _title(key: str) -> str:
    return key.replace("_", " ").capitalize()


def _is_numeric(values: Sequence[Any]) -> bool:
    present = [value for value in values if value is not None]
    return bool(present) and all(isinstance(value, numbers.Number) and not isinstance(value, bool) for value in present)


def table_blocks(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    limit: int = MAX_TABLE_ROWS,
    fold: bool = True,
    n_rows: int | None = None,
) -> list[Block]:
    """A table of raw values (formatted here), cut after ``limit`` rows with a line counting the rest; a wide table
    of few rows is stacked (one line per column), so that no column is cut on a screen; with ``fold`` (everywhere
    but the headline) a table of more than ``FOLD_ROWS`` rows is folded under a line giving its rows and columns.
    ``n_rows``: the table's rows when ``rows`` holds only its first (report.json has the others' values elsewhere)."""
    n_rows = len(rows) if n_rows is None else n_rows
    folded = fold and n_rows > FOLD_ROWS
    if 0 < len(rows) == n_rows <= STACKED_ROWS and len(columns) > STACKED_COLUMNS:
        named = [str(row[0]) if row else "" for row in rows]
        labels = named if len(set(named)) == len(named) else [f"row {n}" for n in range(1, len(rows) + 1)]
        columns, rows = (
            ("column", *labels),
            [[c, *(r[i] if i < len(r) else None for r in rows)] for i, c in enumerate(columns)],
        )
    shown = rows[:limit]
    numeric = tuple(_is_numeric([row[i] for row in shown if i < len(row)]) for i in range(len(columns)))
    cells = tuple(tuple(format_value(row[i]) if i < len(row) else "" for i in range(len(columns))) for row in shown)
    blocks: list[Block] = [Table(tuple(str(column) for column in columns), cells, numeric)]
    if n_rows > len(shown):
        blocks.append(Paragraph(f"... and {n_rows - len(shown)} more rows (all {n_rows} are in report.json)."))
    if folded:
        named = f"{count(len(columns), 'column')}: {format_list([str(column) for column in columns], 6)}"
        return [Details(f"Table of {count(n_rows, 'row')}, {named}", tuple(blocks))]
    return blocks


def rows_blocks(rows: Sequence[Mapping[str, Any]], limit: int = MAX_TABLE_ROWS, fold: bool = True) -> list[Block]:
    """Dict rows as one table whose columns are every key seen, in first-seen order (``fold``: ``table_blocks``)."""
    columns = list(dict.fromkeys(str(key) for row in rows for key in row))
    return table_blocks(columns, [[row.get(column) for column in columns] for row in rows], limit, fold)


def value_blocks(value: Any) -> list[Block]:
    """Any JSON value as blocks: rows as a table, a mapping as a key/value table, a list as bullets."""
    if value is None or value == [] or value == {}:
        return [Paragraph("(none)")]
    rows = as_rows(value)
    if rows is not None:
        return rows_blocks(rows)
    if isinstance(value, Mapping):
        nested = {str(key): found for key, item in value.items() if (found := as_rows(item)) is not None}
        scalars = [(str(key), item) for key, item in value.items() if str(key) not in nested]
        blocks = table_blocks(("key", "value"), scalars) if scalars else []
        for key, found in nested.items():
            blocks += [Paragraph(f"{key} ({len(found)} rows):"), *rows_blocks(found)]
        return blocks
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [BulletList(tuple(format_value(item) for item in value))]
    return [Paragraph(format_value(value))]


TONES: dict[str, Tone] = {"pass": "pass", "fail": "fail"}  # other verdicts (unauthenticated, pass-subset): note
BUNDLE_PREFIX = "bundle-"
BADGES_ID = "artefact-evaluation"
RUN_SECTIONS = ("rows-used", "score-join")  # sections that say what the audit read, shown with what was run
SOURCE_FIRST = ("path", "format", "n_rows", "n_lines", "sha256", "blake3")
HEADLINE_ROWS = 24  # conditions in the headline EER table; every one is in the appendix
HEADLINE_AGGREGATES = ("metrics_per_group",)  # shown in full with the headline results, not again in the appendix
TABLE_ONLY = "table checks only: no signature, digests or scores were checked"


def _verdict_text(report: Mapping[str, Any]) -> str:
    """The verdict in one sentence: PASS / FAIL / UNAUTHENTICATED, on FAIL its cause, what was (not) checked."""
    verdict = str(report.get("verdict", "")).lower()
    text = f"Verdict: {verdict.upper() or 'NOT STATED'}"
    cause = _mapping(report.get("cause"), "cause")
    trust = _mapping(report.get("trust"), "trust")
    subset = trust.get("subset")
    if report.get("checked") == "table only":
        text += f" ({TABLE_ONLY})"
    elif verdict == "pass" and isinstance(subset, Mapping):
        text += (
            f", subset: {subset.get('rows')} of {subset.get('signed_rows')} signed rows ({subset.get('expression')})"
        )
    if cause:
        text += f": {cause.get('flag')}: {format_value(cause.get('message'))}"
    elif verdict == "unauthenticated":
        text += (
            f": the bundle verifies only under its own enclosed key (key id {trust.get('key_id')}), which proves "
            "integrity, not authorship; pass the authors' public key with --key"
        )
    return text


def _verdict_blocks(report: Mapping[str, Any]) -> list[Block]:
    """The first screen: the title, the verdict with its cause and first failing cases, the flag counts and who
    signed the run."""
    tool = _mapping(report.get("tool"), "tool")
    name = tool.get("name", "interbias-sv")
    title = f"Provenance report: {name} {tool.get('version', '')}".strip()
    verdict = str(report.get("verdict", "")).lower()
    counts = ", ".join(
        count(sum(1 for flag in _flags(report) if flag.get("severity") == severity), severity, plural)
        for severity, plural in (("error", None), ("warning", None), ("info", "info"))
    )
    blocks: list[Block] = [Heading(1, title), Callout(TONES.get(verdict, "note"), _verdict_text(report))]
    cause = _mapping(report.get("cause"), "cause")
    cases = [format_value(case) for case in cause.get("cases") or []]
    more = int(cause.get("n_cases") or 0) - len(cases)
    if len(cases) > 1:  # the cause's message names the first
        blocks.append(BulletList((*cases, *([f"... and {more} more in the flag below"] if more > 0 else []))))
    facts = [f"Flags: {counts}"]
    if cause.get("other_errors"):
        facts.append(f"Other errors: {format_list(list(cause['other_errors']))}")
    trust = _mapping(report.get("trust"), "trust")
    if trust.get("key_id") and "trusted" in trust:  # the audit's trust block
        how = "a key you trust" if trust["trusted"] else "the bundle's own key only"
        facts.append(f"Signed by {how} ({trust.get('trust')}), key id {trust['key_id']}")
    elif trust:
        facts.append("Trust: " + "; ".join(f"{k.replace('_', ' ')}: {format_value(v)}" for k, v in trust.items()))
    return [*blocks, Paragraph(". ".join(facts) + ".")]


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


def interval(value: Any, low: Any, high: Any) -> str:
    """``0.1457 [0.118, 0.1802]``; ``[low, high]`` alone when there is no point value."""
    bounds = f"[{format_value(low)}, {format_value(high)}]"
    return bounds if value is None else f"{format_value(value)} {bounds}"


def with_intervals(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows with each value that has ``<name>_low`` and ``<name>_high`` beside it shown as ``value [low, high]``, and
    a ``<name>_undefined_draws`` column left out when it counts none in every row (the headline's columns)."""
    names = list(dict.fromkeys(str(key) for row in rows for key in row))
    paired = {name for name in names if f"{name}_low" in names and f"{name}_high" in names}
    dropped = {f"{name}_{end}" for name in paired for end in ("low", "high")}
    dropped |= {name for name in names if name.endswith("_undefined_draws") and not any(row.get(name) for row in rows)}

    def cell(row: Mapping[str, Any], name: str) -> Any:
        if name not in paired or row.get(f"{name}_low") is None:
            return row.get(name)
        return interval(row.get(name), row[f"{name}_low"], row.get(f"{name}_high"))

    return [{name: cell(row, name) for name in names if name not in dropped} for row in rows]


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


def _what_was_run(report: Mapping[str, Any]) -> list[Block]:
    """Source files with their hashes, the run (id, commit, configuration digest, encoders and checkpoints, corpora),
    the trust in its signature and the declared configuration."""
    blocks: list[Block] = [Heading(2, "Appendix: what was run")]
    source = _mapping(report.get("source"), "source")
    if source:
        keys = [key for key in SOURCE_FIRST if key in source] + [key for key in source if key not in SOURCE_FIRST]
        blocks += [Heading(3, "Audited files"), *value_blocks({key: source[key] for key in keys})]
    for key, title in (("run", "Run"), ("trust", "Signature and trust")):
        value = _mapping(report.get(key), key)
        if value:
            blocks += [Heading(3, title), *value_blocks(value)]
    return blocks + _config_blocks(report)


def _flags(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return _entries(report.get("flags"), "flags")


def _flag_blocks(flag: Mapping[str, Any]) -> list[Block]:
    records = list(flag.get("records") or [])
    blocks: list[Block] = [
        Heading(4, str(flag.get("id", "(no id)"))),
        Paragraph(format_value(flag.get("message", ""))),
    ]
    if records:
        blocks.append(Paragraph(f"{count(len(records), 'record')}: {format_list(records)}"))
    details = flag.get("details") or {}
    for key, value in details.items() if isinstance(details, Mapping) else [("details", details)]:
        rows = as_rows(value)
        if rows is not None:
            blocks.append(Paragraph(f"{key} ({len(rows)}):"))
            blocks += rows_blocks(rows, MAX_DETAIL_ROWS)
        else:
            blocks.append(Paragraph(f"{key}: {format_value(value)}"))
    return blocks


def _flags_section(report: Mapping[str, Any]) -> list[Block]:
    flags = _flags(report)
    blocks: list[Block] = [Heading(2, "Flags")]
    if not flags:
        return [*blocks, Paragraph("No flags were raised.")]
    known = [severity for severity in SEVERITY_ORDER if any(flag.get("severity") == severity for flag in flags)]
    others = sorted({str(flag.get("severity")) for flag in flags} - set(SEVERITY_ORDER))
    for severity in known + others:
        group = [flag for flag in flags if str(flag.get("severity")) == severity]
        blocks.append(Heading(3, f"{severity} ({len(group)})"))
        for flag in group[:SHOWN_FLAGS]:
            blocks += _flag_blocks(flag)
        rest = group[SHOWN_FLAGS:]
        if rest:
            named = format_list([str(flag.get("id", "(no id)")) for flag in rest])
            folded = [block for flag in rest for block in _flag_blocks(flag)]
            blocks.append(Details(f"{count(len(rest), f'more {severity} flag')}: {named}", tuple(folded)))
    return blocks


def _config_blocks(report: Mapping[str, Any]) -> list[Block]:
    config = _mapping(report.get("config"), "config")
    rows: list[tuple[str, Any]] = []

    def flatten(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for key, item in value.items():
                flatten(f"{prefix}.{key}" if prefix else str(key), item)
        else:
            rows.append((prefix, value))

    flatten("", config)
    body = table_blocks(("setting", "value"), rows) if rows else [Paragraph("No configuration was recorded.")]
    return [Heading(3, "Configuration (declared thresholds)"), *body]


def _aggregates_section(report: Mapping[str, Any]) -> list[Block]:
    aggregates = _mapping(report.get("aggregates"), "aggregates")
    keys = [key for key in aggregates if key != CONTRASTS_KEY and key not in HEADLINE_AGGREGATES]
    blocks: list[Block] = [Heading(2, "Appendix: aggregates")]
    if not keys:
        return [*blocks, Paragraph("No aggregates were computed.")]
    blocks.append(Paragraph(_eer_variant_line(report)))
    for key in keys:
        blocks += [Heading(3, AGGREGATE_TITLES.get(key, _title(key))), *value_blocks(aggregates[key])]
    return blocks


def _eer_variant_line(report: Mapping[str, Any]) -> str:
    """Which EER variant the aggregates' numbers are in: the rows' own, as each row's ``eer_method`` names."""
    if "metrics_per_group" in _mapping(report.get("aggregates"), "aggregates"):
        return "EER variant: each column names its own (eer_legacy, eer_rocch, eer_interp), from the per-trial scores."
    methods = _mapping(_mapping(report.get("source"), "source").get("eer_methods"), "source.eer_methods")
    named = ", ".join(f"{method} ({count} rows)" for method, count in methods.items())
    return (
        "EER variant: every EER here is a results row's own value, in the variant its eer_method column names"
        + (f": {named}." if named else " (the table does not say which).")
        + " Means mix variants only when the rows do."
    )


def _contrasts_section(report: Mapping[str, Any]) -> list[Block]:
    """The contrasts of a results table; nothing for a report that has no contrast key (``audit scores``)."""
    aggregates = _mapping(report.get("aggregates"), "aggregates")
    if aggregates and CONTRASTS_KEY not in aggregates:
        return []
    contrasts = _entries(aggregates.get(CONTRASTS_KEY), "aggregates.contrasts")
    blocks: list[Block] = [Heading(2, "Appendix: interaction contrasts")]
    if not contrasts:
        return [*blocks, Paragraph("No contrast has all four terms measured on one corpus.")]
    return [
        *blocks,
        Paragraph(f"{len(contrasts)} contrasts: {CONTRAST_DEFINITION}"),
        *value_blocks(contrasts),
    ]


def _figures_section(figures: Sequence[FigureOutcome], placed: Collection[str] = ()) -> list[Block]:
    """The drawn figures, each with its caption, text alternative and SVG, but those a section of ``placed`` (ids)
    shows; a gallery (figures of one kind, such as a DET figure per experiment) shown by its first with the others
    folded; then one list of those skipped and why."""
    blocks: list[Block] = [Heading(2, "Figures")]
    galleries: dict[str, list[Figure]] = {}
    for outcome in figures:
        if outcome.png is not None and outcome.section not in placed:
            svg = outcome.svg_filename if outcome.svg is not None else ""
            kind = "_".join(outcome.filename.removesuffix(".png").split("_")[:GALLERY_WORDS])
            drawn = Figure(outcome.filename, outcome.caption, outcome.png, outcome.alt, svg)
            galleries.setdefault(kind, []).append(drawn)
    for first, *rest in galleries.values():
        blocks.append(first)
        if rest:
            named = format_list([figure.filename.removesuffix(".png") for figure in rest])
            blocks.append(Details(f"{count(len(rest), 'more figure')} of this kind: {named}", tuple(rest)))
    skipped = [f"{outcome.caption}: skipped, {outcome.skipped_because}." for outcome in figures if outcome.png is None]
    if skipped:
        blocks += [Paragraph("Not drawn, for lack of data:"), BulletList(tuple(skipped))]
    return blocks


def _claims_section(report: Mapping[str, Any]) -> list[Block]:
    claims = _entries(report.get("claims"), "claims")
    if not claims:
        return []
    statuses: dict[str, int] = {}
    for claim in claims:
        status = str(claim.get("status", "not stated"))
        statuses[status] = statuses.get(status, 0) + 1
    summary = ", ".join(f"{count} {status}" for status, count in statuses.items())
    return [
        Heading(2, "Published claims"),
        Paragraph(f"{len(claims)} claims checked: {summary}."),
        *rows_blocks(claims),
    ]


def _section_blocks(section: Mapping[str, Any], level: int = 2, figures: Sequence[FigureOutcome] = ()) -> list[Block]:
    """A section's heading, lines and table, then its further tables (``tables``: each a ``title`` and ``rows``)
    and the drawn figures that belong to it (``FigureOutcome.section``)."""
    title = str(section.get("title") or section.get("id") or "(untitled section)")
    status = section.get("status")
    blocks: list[Block] = [Heading(level, f"{title} (status: {status})" if status else title)]
    lines = section.get("lines") or []
    if lines:
        blocks.append(BulletList(tuple(format_value(line) for line in lines)))
    blocks += _section_table_blocks(section.get("table"), f"section {section.get('id')!r} table")
    for extra in _entries(section.get("tables"), f"section {section.get('id')!r} tables"):
        blocks += [Paragraph(str(extra.get("title") or "")), *_section_table_blocks(extra.get("rows"), "its rows")]
    for outcome in figures:
        if outcome.png is not None and outcome.section and outcome.section == str(section.get("id")):
            svg = outcome.svg_filename if outcome.svg is not None else ""
            blocks.append(Figure(outcome.filename, outcome.caption, outcome.png, outcome.alt, svg))
    return blocks


def _section_table_blocks(table: Any, where: str) -> list[Block]:
    """A section's table: ``{columns, rows}`` (rows as objects or lists; ``n_rows``, when given, counts the rows of
    which ``rows`` holds the first, and ``all_rows_in`` names where report.json holds every one), or a plain list of
    row objects."""
    if table is None or table == [] or table == {}:
        return []
    if not isinstance(table, Mapping):
        return rows_blocks(_entries(table, where))
    rows = table.get("rows") or []
    columns = [str(column) for column in table.get("columns") or []]
    if not rows:
        return []
    if not columns:
        return rows_blocks(_entries(rows, f"{where} rows"))
    values = [[row.get(column) for column in columns] if isinstance(row, Mapping) else list(row) for row in rows]
    n_rows = table.get("n_rows")
    return table_blocks(columns, values, n_rows=n_rows if isinstance(n_rows, int) and n_rows > len(values) else None)


def slug(text: str) -> str:
    """A GitHub-style heading anchor: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text.strip().lower()))


def _with_anchors(blocks: list[Block]) -> tuple[list[Block], Contents]:
    """Level-2 headings with unique anchors (``-1``, ``-2`` on repeats, as GitHub does) and the contents."""
    seen: dict[str, int] = {}
    entries = []
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, Heading) and block.level == 2:
            base = slug(block.text) or "section"
            anchor = base if base not in seen else f"{base}-{seen[base]}"
            seen[base] = seen.get(base, 0) + 1
            block = Heading(2, block.text, anchor)
            entries.append((anchor, block.text))
        out.append(block)
    return out, Contents(tuple(entries))


def build_document(report: Mapping[str, Any], figures: Sequence[FigureOutcome]) -> list[Block]:
    """All blocks of the report in reading order: verdict, headline results, contents, then the body and the
    appendix; a section this module does not know goes with the statistics."""
    sections = _entries(report.get("sections"), "sections")
    run = [section for section in sections if section.get("id") in RUN_SECTIONS]
    bundle = [section for section in sections if str(section.get("id", "")).startswith(BUNDLE_PREFIX)]
    badges = [section for section in sections if section.get("id") == BADGES_ID]
    others = [section for section in sections if not any(section in group for group in (run, bundle, badges))]
    placed = {str(section.get("id")) for section in others}
    body: list[Block] = [*_figures_section(figures, placed), *_flags_section(report)]
    for section in others:
        body += _section_blocks(section, figures=figures)
    body += _claims_section(report)
    for section in badges:
        body += _section_blocks(section)
    body += _what_was_run(report)
    for section in run:
        body += _section_blocks(section, 3)
    if bundle:
        body.append(Heading(2, "Appendix: bundle checks"))
        for section in bundle:
            body += _section_blocks(section, 3)
    body += [*_aggregates_section(report), *_contrasts_section(report)]
    headline = _headline_section(report)
    anchored, contents = _with_anchors([*headline, *body])
    return [*_verdict_blocks(report), *anchored[: len(headline)], contents, *anchored[len(headline) :]]
