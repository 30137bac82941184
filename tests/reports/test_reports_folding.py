"""The report stays navigable as it grows (issue 41): long tables outside the headline, the flags beyond the first
few and figure galleries are folded under a line saying what they hold; the headline never folds; Markdown keeps
every folded block in place after its line."""

from __future__ import annotations

from reports.blocks import Contents, Details, Figure, Heading, Paragraph, Table
from reports.document import MAX_TABLE_ROWS, build_document
from reports.figures import FigureOutcome
from reports.html import render_html
from reports.markdown import render_markdown


def section(rows: int, identifier: str = "a-later-section") -> dict:
    """A section no renderer knows (as a later check adds), with a table of ``rows`` rows."""
    table = [{"speaker": f"s{i}", "condition": "noise", "eer": i / 100} for i in range(rows)]
    return {"id": identifier, "title": "Later section", "status": "info", "lines": ["one line"], "table": table}


def blocks_of(heading: str, blocks: list) -> list:
    """The blocks under the level-2 ``heading``, up to the next level-2 heading."""
    start = next(i for i, b in enumerate(blocks) if isinstance(b, Heading) and b.text.startswith(heading))
    end = next((i for i in range(start + 1, len(blocks)) if getattr(blocks[i], "level", 0) == 2), len(blocks))
    return blocks[start + 1 : end]


def test_a_sections_long_table_is_folded_under_a_line_with_its_rows_and_columns() -> None:
    blocks = build_document({"sections": [section(30)]}, [])
    (folded,) = [block for block in blocks_of("Later section", blocks) if isinstance(block, Details)]
    assert folded.summary == "Table of 30 rows, 3 columns: speaker, condition, eer"
    (table,) = folded.blocks
    assert isinstance(table, Table) and len(table.rows) == 30 and table.rows[29] == ("s29", "noise", "0.29")
    page = render_html(blocks, "t")
    assert '<details class="fold"><summary>Table of 30 rows, 3 columns: speaker, condition, eer</summary>' in page
    assert page.split('<details class="fold">')[1].split("</details>")[0].count("<tr>") == 31
    text = render_markdown(blocks)  # the line, then every row, where the table was
    assert text.index("one line") < text.index("*Table of 30 rows") < text.index("| s0 |") < text.index("| s29 |")


def test_a_table_that_keeps_only_the_rows_shown_renders_as_the_whole_table() -> None:
    """A section whose table keeps the first rows as lists, counting them all (``n_rows``: the encoder rankings keep
    each pair's numbers once, in the statistics), reads exactly as the same table given whole."""
    whole = section(MAX_TABLE_ROWS + 20)
    columns = list(whole["table"][0])
    kept = {
        "columns": columns,
        "rows": [[row[c] for c in columns] for row in whole["table"][:MAX_TABLE_ROWS]],
        "n_rows": MAX_TABLE_ROWS + 20,
        "all_rows_in": "statistics.elsewhere",
    }
    blocks, cut = (build_document({"sections": [s]}, []) for s in (whole, {**whole, "table": kept}))
    assert render_markdown(cut) == render_markdown(blocks) and render_html(cut, "t") == render_html(blocks, "t")
    assert f"... and 20 more rows (all {MAX_TABLE_ROWS + 20} are in report.json)." in render_markdown(cut)


def test_a_table_of_eight_rows_and_the_headline_are_not_folded() -> None:
    short = build_document({"sections": [section(8)]}, [])
    assert not any(isinstance(block, Details) for block in short)
    cells = [
        {"experiment": "E1", "condition": f"c{i:02d}", "model": model, "eer_mean": i / 100, "n_records": 1}
        for i in range(20)
        for model in ("a", "b")
    ]
    blocks = build_document({"aggregates": {"eer_by_model_condition": cells}}, [])
    headline = blocks[: blocks.index(next(b for b in blocks if isinstance(b, Contents)))]
    (table,) = [block for block in headline if isinstance(block, Table)]
    assert len(table.rows) == 20  # shown whole in the headline; folded in the appendix's aggregates
    appendix = blocks_of("Appendix: aggregates", blocks)
    assert [b.summary for b in appendix if isinstance(b, Details)] == [
        "Table of 40 rows, 5 columns: experiment, condition, model, eer_mean, n_records"
    ]


def test_the_flags_beyond_the_first_three_of_a_severity_are_folded_under_their_ids() -> None:
    flags = [{"id": f"w{i}", "severity": "warning", "message": f"m{i}"} for i in range(5)]
    flags.append({"id": "e0", "severity": "error", "message": "bad"})
    section_blocks = blocks_of("Flags", build_document({"flags": flags}, []))
    shown = [b.text for b in section_blocks if isinstance(b, Heading)]
    assert shown == ["error (1)", "e0", "warning (5)", "w0", "w1", "w2"]
    (folded,) = [block for block in section_blocks if isinstance(block, Details)]
    assert folded.summary == "2 more warning flags: w3, w4"
    assert folded.blocks == (Heading(4, "w3"), Paragraph("m3"), Heading(4, "w4"), Paragraph("m4"))


def test_a_gallery_of_figures_shows_its_first_and_folds_the_others() -> None:
    figures = [
        FigureOutcome(f"{name}.png", f"caption {name}", b"png", alt=f"alt {name}", svg=b"<svg/>")
        for name in ("eer_heatmap", "det_curves_E01", "det_curves_E02", "det_curves_E03-subgroups")
    ]
    section_blocks = blocks_of("Figures", build_document({}, figures))
    assert [type(block).__name__ for block in section_blocks] == ["Figure", "Figure", "Details"]
    folded = section_blocks[2]
    assert folded.summary == "2 more figures of this kind: det_curves_E02, det_curves_E03-subgroups"
    assert [figure.filename for figure in folded.blocks if isinstance(figure, Figure)] == [
        "det_curves_E02.png",
        "det_curves_E03-subgroups.png",
    ]


def test_the_headline_gives_the_trial_design_audits_errors_with_their_measurements() -> None:
    table = [
        {"rule": "duration-confound", "where": "E1/c", "measured": "ratio 1.8", "threshold": "1.3 warning, 1.6 error",
         "fires": "yes"},
        {"rule": "duration-confound", "where": "E2/c", "measured": "ratio 1.1", "threshold": "1.3 warning, 1.6 error",
         "fires": "no"},
        {"rule": "target-ratio-spread", "where": "E1/c", "measured": "spread 2", "threshold": "1.5", "fires": "yes"},
    ]  # fmt: skip
    design = {"id": "trial-design", "title": "Trial-design audit", "status": "failed", "lines": ["2 rules fire."],
              "table": table}  # fmt: skip
    flags = [
        {"id": "duration-confound", "severity": "error", "message": "m"},
        {"id": "target-ratio-spread", "severity": "warning", "message": "m"},
    ]
    blocks = build_document({"sections": [design], "flags": flags}, [])
    headline = blocks_of("Headline results", blocks)
    assert Paragraph("Trial-design audit: 2 rules fire. (section Trial-design audit).") in headline
    (errors,) = [block for block in headline if isinstance(block, Table)]
    assert errors.columns == ("rule", "where", "measured", "threshold")
    assert errors.rows == (("duration-confound", "E1/c", "ratio 1.8", "1.3 warning, 1.6 error"),)


def test_with_many_encoders_the_headline_names_the_separable_macro_differences_and_folds_every_pair() -> None:
    """12 encoders make 66 macro pairs: the headline line names the separable ones; all 66 are in a fold."""
    encoders = [f"m{i:02d}" for i in range(12)]
    pairs = [
        {"encoders": [a, b], "separable": (a, b) == ("m00", "m11"),
         "difference": {"estimate": 0.01, "low": 0.002 if (a, b) == ("m00", "m11") else -0.01, "high": 0.02}}
        for n, a in enumerate(encoders) for b in encoders[n + 1 :]
    ]  # fmt: skip
    headline_row = {"condition": "clean", "verdict": "not separable at 30 speakers (MDD 0.02)"}
    statistics = {"rankings": {"family": "condition", "headline": [headline_row], "macro": {"pairs": pairs}}}
    headline = blocks_of("Headline results", build_document({"statistics": statistics}, []))
    assert (
        Paragraph(
            "Macro EER differences (paper Table 7, 95% intervals): 1 of 66 pairs separable: "
            "m00 - m11 0.01 [0.002, 0.02] (separable)."
        )
        in headline
    )
    (folded,) = [block for block in headline if isinstance(block, Details)]
    assert folded.summary == "All 66 macro EER differences with their intervals"
    assert (
        len(folded.blocks[0].items) == 66
        and folded.blocks[0].items[0] == "m00 - m01 0.01 [-0.01, 0.02] (not separable)"
    )
