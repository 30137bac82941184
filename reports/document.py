"""Turn the report dict of ``audit verify`` (or ``audit scores``) into blocks, in the order a reviewer reads it:
the verdict and a table of contents on the first screen, then what was run (source, run, trust, configuration),
flags by severity, bundle checks, aggregates with contrasts and figures, statistics, claims and the badges.

Every key may be absent or empty. Rows are rendered generically: a table of whatever columns the rows have, in
the order they first appear, so sections added by later checks render without changes here. ``run`` and
``trust`` (what was run and who signed it) are rendered from whatever keys they hold.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

from reports.blocks import Block, BulletList, Callout, Contents, Figure, Heading, Paragraph, Table, Tone
from reports.figures import FigureOutcome
from reports.format import format_list, format_value
from schemas.errors import Error
from schemas.wording import count

SEVERITY_ORDER = ("error", "warning", "info")
MAX_TABLE_ROWS = 1000  # longer tables are cut, with a line saying how many rows are only in report.json
MAX_DETAIL_ROWS = 20  # failure cases listed under one flag

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


def table_blocks(columns: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = MAX_TABLE_ROWS) -> list[Block]:
    """A table of raw values (formatted here), cut after ``limit`` rows with a line counting the rest."""
    shown = rows[:limit]
    numeric = tuple(_is_numeric([row[i] for row in shown if i < len(row)]) for i in range(len(columns)))
    cells = tuple(tuple(format_value(row[i]) if i < len(row) else "" for i in range(len(columns))) for row in shown)
    blocks: list[Block] = [Table(tuple(str(column) for column in columns), cells, numeric)]
    if len(rows) > limit:
        blocks.append(Paragraph(f"... and {len(rows) - limit} more rows (all {len(rows)} are in report.json)."))
    return blocks


def rows_blocks(rows: Sequence[Mapping[str, Any]], limit: int = MAX_TABLE_ROWS) -> list[Block]:
    """Dict rows as one table whose columns are every key seen, in first-seen order."""
    columns = list(dict.fromkeys(str(key) for row in rows for key in row))
    return table_blocks(columns, [[row.get(column) for column in columns] for row in rows], limit)


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


def _title_blocks(report: Mapping[str, Any]) -> list[Block]:
    """The first screen: title, the verdict with the flag counts, and who signed the run when the report says."""
    tool = _mapping(report.get("tool"), "tool")
    name = tool.get("name", "interbias-sv")
    title = f"Provenance report: {name} {tool.get('version', '')}".strip()
    verdict = str(report.get("verdict", "")).lower()
    counts = [
        f"{sum(1 for flag in _flags(report) if flag.get('severity') == severity)} {severity}"
        for severity in SEVERITY_ORDER
    ]
    blocks: list[Block] = [
        Heading(1, title),
        Callout(TONES.get(verdict, "note"), f"Verdict: {verdict.upper() or 'NOT STATED'} (flags: {', '.join(counts)})"),
    ]
    trust = _mapping(report.get("trust"), "trust")
    if trust:
        facts = [
            f"{key.replace('_', ' ')}: {format_value(value)}" for key, value in trust.items() if as_rows(value) is None
        ]
        blocks.append(Paragraph("Trust: " + "; ".join(facts)))
    return blocks


def _what_was_run(report: Mapping[str, Any]) -> list[Block]:
    """Source files, the run (id, commit, configuration digest, encoders and checkpoints, corpora), the trust in its
    signature and the declared configuration."""
    blocks: list[Block] = [Heading(2, "What was run")]
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
        for flag in group:
            blocks += _flag_blocks(flag)
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
    keys = [key for key in aggregates if key != CONTRASTS_KEY]
    blocks: list[Block] = [Heading(2, "Aggregates")]
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
    blocks: list[Block] = [Heading(2, "Interaction contrasts")]
    if not contrasts:
        return [*blocks, Paragraph("No contrast has all four terms measured on one corpus.")]
    return [
        *blocks,
        Paragraph(f"{len(contrasts)} contrasts: {CONTRAST_DEFINITION}"),
        *value_blocks(contrasts),
    ]


def _figures_section(figures: Sequence[FigureOutcome]) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Figures")]
    for outcome in figures:
        if outcome.png is None:
            blocks.append(Callout("note", f"{outcome.caption}: skipped, {outcome.skipped_because}."))
        else:
            blocks.append(Figure(outcome.filename, outcome.caption, outcome.png, outcome.alt))
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


def _section_blocks(section: Mapping[str, Any], level: int = 2) -> list[Block]:
    title = str(section.get("title") or section.get("id") or "(untitled section)")
    status = section.get("status")
    blocks: list[Block] = [Heading(level, f"{title} (status: {status})" if status else title)]
    lines = section.get("lines") or []
    if lines:
        blocks.append(BulletList(tuple(format_value(line) for line in lines)))
    return blocks + _section_table_blocks(section.get("table"), f"section {section.get('id')!r} table")


def _section_table_blocks(table: Any, where: str) -> list[Block]:
    """A section's table: ``{columns, rows}`` (rows as objects or lists), or a plain list of row objects."""
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
    return table_blocks(columns, values)


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
    """All blocks of the report, in reading order, with a table of contents after the verdict."""
    sections = _entries(report.get("sections"), "sections")
    run = [section for section in sections if section.get("id") in RUN_SECTIONS]
    bundle = [section for section in sections if str(section.get("id", "")).startswith(BUNDLE_PREFIX)]
    badges = [section for section in sections if section.get("id") == BADGES_ID]
    others = [section for section in sections if not any(section in group for group in (run, bundle, badges))]
    body: list[Block] = [*_what_was_run(report)]
    for section in run:
        body += _section_blocks(section, 3)
    body += _flags_section(report)
    if bundle:
        body.append(Heading(2, "Bundle checks"))
        for section in bundle:
            body += _section_blocks(section, 3)
    body += [*_aggregates_section(report), *_contrasts_section(report), *_figures_section(figures)]
    for section in others:
        body += _section_blocks(section)
    body += _claims_section(report)
    for section in badges:
        body += _section_blocks(section)
    anchored, contents = _with_anchors(body)
    return [*_title_blocks(report), contents, *anchored]
