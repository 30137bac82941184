"""The reviewer's layout: the verdict with its cause, then the headline results, then the contents; anchors that
resolve; what was run in the appendix; EER variants named; wide tables in a scrolling box, a wide table of few rows
stacked."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from reports.blocks import BulletList, Callout, Contents, Heading, Paragraph, Table
from reports.document import build_document, slug, table_blocks
from reports.html import render_html
from reports.markdown import render_markdown
from tests.reports.sample_reports import full_report


class Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.table_parents: list[str] = []
        self._open: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "table":
            self.table_parents.append(str(self._open[-1][1].get("class")) if self._open else "")
        if tag not in ("img", "br", "meta"):
            self._open.append((tag, found))

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()


def lead_report() -> dict:
    """The full sample with the keys the bundle verification adds: a verdict beyond pass/fail, run and trust."""
    return full_report() | {
        "verdict": "pass-subset",
        "run": {
            "run_id": "run-1",
            "commit": "abc123",
            "encoders": [{"label": "wavlm", "checkpoint_blake3": "c" * 64}],
        },
        "trust": {"authenticated": True, "how": "reviewer's key", "key_id": "k-42"},
        "source": full_report()["source"] | {"eer_methods": {"legacy": 5, "rocch": 2}},
    }


def test_the_first_screen_is_the_verdict_with_its_cause_then_the_headline_results() -> None:
    report = lead_report() | {
        "cause": {
            "flag": "eer-above-chance",
            "message": "EERs above 0.5 are kept",
            "cases": ["row 4, column eer: 0.6123", "row 5, column eer: 0.7"],
            "n_cases": 3,
            "other_errors": [],
        }
    }
    blocks = build_document(report, [])
    assert isinstance(blocks[0], Heading) and blocks[0].level == 1
    assert blocks[1] == Callout("note", "Verdict: PASS-SUBSET: eer-above-chance: EERs above 0.5 are kept")
    assert blocks[2] == BulletList(
        ("row 4, column eer: 0.6123", "row 5, column eer: 0.7", "... and 1 more in the flag below")
    )
    assert blocks[3] == Paragraph(
        "Flags: 1 error, 1 warning, 1 info. Trust: authenticated: yes; how: reviewer's key; key id: k-42."
    )
    assert blocks[4] == Heading(2, "Headline results", "headline-results")
    contents = next(block for block in blocks if isinstance(block, Contents))
    assert blocks.index(contents) > blocks.index(
        next(b for b in blocks if getattr(b, "text", "") == "Interaction summary")
    )
    assert [title for _, title in contents.entries] == [
        "Headline results",
        "Figures",
        "Flags",
        "Speaker-cluster bootstrap (status: info)",
        "Published claims",
        "Appendix: what was run",
        "Appendix: bundle checks",
        "Appendix: aggregates",
        "Appendix: interaction contrasts",
    ]


def test_the_headline_eer_table_has_an_encoder_per_column_and_each_experiments_reference_first() -> None:
    cells = [
        {"experiment": "E1", "condition": condition, "model": model, "eer_mean": eer, "n_records": 1}
        for condition, model, eer in [
            ("noise", "a", 0.3),
            ("clean", "a", 0.1),
            ("noise", "b", 0.4),
            ("clean", "b", 0.2),
        ]
    ]
    report = {"aggregates": {"eer_by_model_condition": cells}, "config": {"clean_labels": ["clean"]}}
    table = next(block for block in build_document(report, []) if isinstance(block, Table))
    assert table.columns == ("experiment", "condition", "a", "b")
    assert table.rows == (("E1", "clean", "0.1", "0.2"), ("E1", "noise", "0.3", "0.4"))


def test_a_wide_table_of_few_rows_is_stacked() -> None:
    columns = [f"c{i}" for i in range(12)]
    (table,) = table_blocks(columns, [[f"v{i}" for i in range(12)]])
    assert table.columns == ("column", "v0") and table.rows[1] == ("c1", "v1") and len(table.rows) == 12


def test_contents_anchors_resolve_and_tables_sit_in_a_scrolling_box() -> None:
    parser = Anchors()
    parser.feed(render_html(build_document(lead_report(), []), "t"))
    assert parser.links and all(link.startswith("#") and link[1:] in parser.ids for link in parser.links)
    assert len(parser.ids) == len(set(parser.ids))
    assert parser.table_parents and set(parser.table_parents) == {"table-box"}


def test_what_was_run_shows_run_trust_and_the_eer_variants() -> None:
    blocks = build_document(lead_report(), [])
    texts = [getattr(block, "text", "") for block in blocks]
    assert "Run" in texts and "Signature and trust" in texts and "Appendix: what was run" in texts
    assert any(
        "eer_method column names: legacy (5 rows), rocch (2 rows)." in text for text in texts
    )  # every aggregate EER says its variant


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What was run", "what-was-run"),
        ("Flags", "flags"),
        ("Re-scored metrics (status: pass)", "re-scored-metrics-status-pass"),
    ],
)
def test_slugs_follow_github(text: str, expected: str) -> None:
    assert slug(text) == expected


def test_the_headline_shows_the_spoof_cells_the_clean_calibration_and_as_norm_the_bundle_step_derived() -> None:
    table = [
        {"record_id": "D05.a.clean_to_clean", "experiment": "D05", "model": "a", "condition": "clean->clean",
         "clean_reference": True, "cllr": 0.36, "min_cllr": 0.09, "act_dcf": 0.88, "eer_as_norm": 0.03,
         "min_dcf_as_norm": 0.2},
        {"record_id": "D05.a.clean_to_noise", "experiment": "D05", "model": "a", "condition": "clean->noise",
         "clean_reference": False, "cllr": 0.5, "min_cllr": 0.2, "act_dcf": 0.9},
        {"record_id": "D04.a.clean.gender=F", "experiment": "D04", "model": "a", "condition": "clean",
         "subgroup": "gender=F", "clean_reference": True, "cllr": 0.2, "min_cllr": 0.1, "act_dcf": 0.8},
        {"record_id": "D05.a.clean_to_proxy", "experiment": "D05", "model": "a", "condition": "clean->proxy",
         "clean_reference": False, "sv_eer": 0.04, "spf_eer": 0.48, "sasv_eer": 0.32, "a_dcf": 0.97,
         "cm_eer": 0.14, "min_t_dcf": 0.44, "t_eer": 0.15},
    ]  # fmt: skip
    report = lead_report() | {"sections": [{"id": "bundle-beyond-eer", "title": "t", "status": "pass", "table": table}]}
    blocks = build_document(report, [])
    end = blocks.index(next(block for block in blocks if isinstance(block, Contents)))
    headline = blocks[:end]
    titles = [block.text for block in headline if isinstance(block, Heading) and block.level == 3]
    assert titles[:3] == [  # the sample has no EER pivot
        "Spoofing-aware metrics of the spoof cells",
        "Calibration of the clean records",
        "AS-norm beside the raw scores",
    ]
    text = render_markdown(headline)
    assert "| D05 | clean-\\>proxy | a | 0.04 | 0.48 | 0.32 | 0.97 | 0.14 | 0.44 | 0.15 |" in text
    assert "| D04 | clean (gender=F) | a | 0.2 | 0.1 | 0.8 |" in text
    assert "clean-\\>noise" not in text.split("Calibration of the clean records")[1].split("AS-norm")[0]


def test_the_spoofing_headline_shows_the_speaker_bootstrap_intervals_beside_the_values() -> None:
    """Issue 42: the default's 28 spoofing-aware values had no interval; the statistics' spoof-cell intervals
    (statistics.spoofing, by record id) are printed beside them, a metric without one as its bare value."""
    table = [
        {"record_id": "D05.a.clean_to_proxy", "experiment": "D05", "model": "a", "condition": "clean->proxy",
         "clean_reference": False, "sv_eer": 0.04, "spf_eer": 0.48, "sasv_eer": 0.32, "a_dcf": 0.97,
         "cm_eer": 0.14, "min_t_dcf": 0.44, "t_eer": 0.15},
    ]  # fmt: skip
    spoofing = [
        {"key": {"record_id": "D05.a.clean_to_proxy"}, "n_trials": 90,
         "t_eer": {"estimate": 0.15, "low": 0.08, "high": 0.22, "n_undefined": 0},
         "min_t_dcf": {"not_computable": "t-DCF undefined"},
         "sasv_eer": {"estimate": 0.32, "low": 0.25, "high": 0.4, "n_undefined": 0}},
    ]  # fmt: skip
    report = lead_report() | {
        "sections": [{"id": "bundle-beyond-eer", "title": "t", "status": "pass", "table": table}],
        "statistics": {"spoofing": spoofing},
    }
    text = render_markdown(build_document(report, []))
    row = "| 0.04 | 0.48 | 0.32 \\[0.25, 0.4\\] | 0.97 | 0.14 | 0.44 | 0.15 \\[0.08, 0.22\\] |"
    assert row in text
    assert "\\[95% interval\\]: the speaker bootstrap of section spoofing-intervals" in text


def test_the_interaction_summary_states_what_an_undetermined_verdict_could_have_found() -> None:
    """Issue 42: beside each family's verdict, the smallest interaction its test finds 80 % of the time."""
    report = lead_report()
    family = next(iter(report["aggregates"]["contrast_summary"]))
    key = f"{family['experiment']}/{family.get('model_family') or 'unknown family'}"
    statistics = {"families": {key: {"verdict": "undetermined", "mean_ie": {"low": -0.01, "high": 0.03},
                                     "power": {"detectable_ie": 0.071}}}}  # fmt: skip
    text = render_markdown(build_document(report | {"statistics": statistics}, []))
    summary = text.split("### Interaction summary")[1].split("###")[0]
    assert "\\|IE\\| found 80%" in summary and "| undetermined | 0.071 |" in summary
    assert "finds 80% of the time at this run's speakers" in summary
