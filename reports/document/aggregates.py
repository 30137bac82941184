"""The aggregates' titles and the appendix of every aggregate table and of the interaction contrasts, with the EER
variant their numbers are in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.blocks import Block, Heading, Paragraph
from reports.document.shape import _entries, _mapping
from reports.document.tables import value_blocks

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
HEADLINE_AGGREGATES = ("metrics_per_group",)  # shown in full with the headline results, not again in the appendix


def _title(key: str) -> str:
    return key.replace("_", " ").capitalize()


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
