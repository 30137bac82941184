"""The block model built from a report: generic tables, truncation, ordering of unknown keys, shape errors."""

from __future__ import annotations

import pytest

from reports.blocks import Heading, Paragraph, Table
from reports.document import ReportShapeError, build_document, table_blocks, value_blocks


def test_long_tables_are_cut_with_a_count() -> None:
    blocks = table_blocks(("record_id", "eer"), [(f"r{i}", i / 8) for i in range(7)], limit=3)
    assert blocks[0] == Table(("record_id", "eer"), (("r0", "0"), ("r1", "0.125"), ("r2", "0.25")), (False, True))
    assert blocks[1] == Paragraph("... and 4 more rows (all 7 are in report.json).")


def test_rows_with_different_keys_share_one_table() -> None:
    (table,) = value_blocks([{"a": 1, "b": "x"}, {"c": None, "a": 2.5}])
    assert table == Table(("a", "b", "c"), (("1", "x", "n/a"), ("2.5", "n/a", "n/a")), (True, False, False))


def test_unknown_severities_and_aggregates_still_render_in_order() -> None:
    report = {
        "flags": [
            {"id": "later", "severity": "notice", "message": "m1"},
            {"id": "first", "severity": "warning", "message": "m2"},
        ],
        "aggregates": {"new_table": [{"k": 1}]},
    }
    headings = [block.text for block in build_document(report, []) if isinstance(block, Heading)]
    assert headings.index("warning (1)") < headings.index("notice (1)")
    assert "New table" in headings


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"sections": "text"}, "report sections: expected a list of objects, got str"),
        ({"claims": [1]}, r"report claims\[0\]: expected an object, got int"),
        ({"aggregates": []}, "report aggregates: expected an object, got list"),
        ({"sections": [{"id": "s", "table": [3]}]}, r"report section 's' table\[0\]: expected an object"),
    ],
)
def test_malformed_reports_raise_a_named_error(report: dict[str, object], message: str) -> None:
    with pytest.raises(ReportShapeError, match=message):
        build_document(report, [])
