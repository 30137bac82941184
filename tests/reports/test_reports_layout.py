"""The reviewer's layout: verdict, trust and contents first; anchors that resolve; what was run; EER variants named;
wide tables in a scrolling box."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from sample_reports import full_report

from reports.blocks import Callout, Contents, Heading, Paragraph
from reports.document import build_document, slug
from reports.html import render_html


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


def test_the_first_screen_is_verdict_trust_and_contents() -> None:
    blocks = build_document(lead_report(), [])
    assert isinstance(blocks[0], Heading) and blocks[0].level == 1
    assert blocks[1] == Callout("note", "Verdict: PASS-SUBSET (flags: 1 error, 1 warning, 1 info)")
    assert blocks[2] == Paragraph("Trust: authenticated: yes; how: reviewer's key; key id: k-42")
    assert isinstance(blocks[3], Contents)
    titles = [title for _, title in blocks[3].entries]
    assert titles == [
        "What was run",
        "Flags",
        "Bundle checks",
        "Aggregates",
        "Interaction contrasts",
        "Figures",
        "Speaker-cluster bootstrap (status: info)",
        "Published claims",
    ]


def test_contents_anchors_resolve_and_tables_sit_in_a_scrolling_box() -> None:
    parser = Anchors()
    parser.feed(render_html(build_document(lead_report(), []), "t"))
    assert parser.links and all(link.startswith("#") and link[1:] in parser.ids for link in parser.links)
    assert len(parser.ids) == len(set(parser.ids))
    assert parser.table_parents and set(parser.table_parents) == {"table-box"}


def test_what_was_run_shows_run_trust_and_the_eer_variants() -> None:
    blocks = build_document(lead_report(), [])
    texts = [getattr(block, "text", "") for block in blocks]
    assert "Run" in texts and "Signature and trust" in texts
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
