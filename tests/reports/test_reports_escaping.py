"""Every input string is escaped: HTML checked with the standard library parser, Markdown with markdown-it."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt
from sample_reports import HOSTILE, full_report

from reports.blocks import Block, Figure, Table
from reports.document import build_document
from reports.figures import render_figures
from reports.html import render_html
from reports.markdown import escape_markdown, render_markdown


class TagCollector(HTMLParser):
    """Records every start tag with its attributes, and the text content."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture(scope="module")
def blocks() -> list[Block]:
    report = full_report()
    return build_document(report, render_figures(report))


def test_html_escapes_every_hostile_label(blocks: list[Block]) -> None:
    page = render_html(blocks, title=HOSTILE)
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    parser = TagCollector()
    parser.feed(page)
    assert "script" not in {tag for tag, _ in parser.tags}
    assert HOSTILE in "".join(parser.text)  # the label is shown to the reader, as text


def test_html_is_self_contained(blocks: list[Block]) -> None:
    parser = TagCollector()
    parser.feed(render_html(blocks, title=HOSTILE))
    tags = {tag for tag, _ in parser.tags}
    assert not tags & {"link", "script", "iframe", "object", "embed"}
    sources = [attrs.get("src") or "" for _, attrs in parser.tags if "src" in attrs]
    assert len(sources) == sum(isinstance(block, Figure) for block in blocks) >= 2
    assert all(source.startswith("data:image/png;base64,") for source in sources)
    links = [attrs["href"] or "" for _, attrs in parser.tags if "href" in attrs]
    assert links and all(link.startswith("#") for link in links)  # the table of contents, in-page only


def test_markdown_escapes_table_breaking_characters() -> None:
    table = Table(("label", "eer"), (("a | b\nc", "0.1000"),), (False, True))
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(render_markdown([table]))
    assert rendered.count("<td") == 2
    assert "<td>a | b<br>c</td>" in rendered


def test_markdown_renders_hostile_labels_as_text(blocks: list[Block]) -> None:
    text = render_markdown(blocks)
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<script" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "<li>- starts like a list item</li>" in rendered


def test_escape_markdown_known_cases() -> None:
    assert escape_markdown("a|b") == r"a\|b"
    assert escape_markdown("x\r\ny") == "x<br>y"
    assert escape_markdown("<b>*x*</b>") == r"\<b\>\*x\*\</b\>"
