"""Every input string is escaped: HTML checked with the standard library parser, Markdown with markdown-it."""

from __future__ import annotations

import re
import string
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from reports.blocks import Block, BulletList, Callout, Figure, Heading, Paragraph, Table
from reports.document import build_document
from reports.figures import render_figures
from reports.html import render_html
from reports.markdown import _PLAIN, escape_markdown, render_markdown
from tests.fuzzing import examples
from tests.reports.sample_reports import HOSTILE, full_report


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
    in_page = [link for link in links if link.startswith("#")]  # the table of contents
    assert in_page and all(re.fullmatch(r"figures/[\w-]+\.svg", link) for link in links if link not in in_page)


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


def test_plain_text_is_returned_as_it_is_by_the_fast_path() -> None:
    """The cells ``escape_markdown`` returns unescaped hold no character the escaping would change."""
    plain = string.ascii_letters + string.digits + " .,:;%()+=/-"
    assert all(escape_markdown(f"a{char}b") == f"a{char}b" for char in plain)
    assert escape_markdown(plain) == plain
    slow = [char for char in string.printable if char not in plain]  # each goes through the substitutions
    assert {escape_markdown(char) for char in "\\`*_~$[]<>|#&"} == {"\\" + char for char in "\\`*_~$[]<>|#&"}
    assert all(_PLAIN.fullmatch(char) is None for char in slow)


def github_markdown() -> MarkdownIt:
    """CommonMark with GitHub's tables, strikethrough and ``$`` math: the dialects report.md is read in."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).use(dollarmath_plugin)


def rendered_text(html: str) -> tuple[set[str], str]:
    """The tags of rendered HTML and its text, a ``<br>`` read back as a newline."""
    parser = TagCollector()
    parser.feed(html.replace("<br>", "\n").replace("<br />", "\n"))
    return {tag for tag, _ in parser.tags}, "".join(parser.text).strip("\n")


@pytest.mark.parametrize(
    "text",
    ["snake_case_label and _emphasis_", "~~struck~~ and ~single~", "$x^2$ and $$y$$", "1. starts a list", "    code?"],
)
def test_markdown_specials_from_input_files_stay_text(text: str) -> None:
    html = github_markdown().render(render_markdown([Paragraph(text)]))
    tags, shown = rendered_text(html)
    assert tags == {"p"}, html
    assert shown == text.strip()


# Printable ASCII (every Markdown special) and a few non-ASCII letters; no form feed or vertical tab.
LABEL_TEXT = st.text(alphabet=st.sampled_from([*string.printable[:-2], "é", "ß", "中"]), max_size=40)


@settings(max_examples=examples(300), deadline=None)
@given(text=LABEL_TEXT)
def test_any_label_renders_as_exactly_its_text(text: str) -> None:
    """Property: a paragraph, a list item, a heading, a callout and a table cell holding any string render, in
    CommonMark with GitHub's extensions, to no markup but their own and to the string itself (blanks at the ends
    aside)."""
    expected = _NEWLINES.sub("\n", text)
    markdown = github_markdown()
    for block, allowed in (
        (Paragraph(text), {"p"}),
        (BulletList((text,)), {"ul", "li", "p"}),
        (Heading(2, text), {"h2"}),
        (Callout("error", text), {"blockquote", "p", "strong"}),
    ):
        tags, shown = rendered_text(markdown.render(render_markdown([block])))
        assert tags <= allowed, (block, tags)
        assert _strip_lines(shown) == _strip_lines(expected), block
    table = Table(("label",), ((text,),), (False,))
    html = markdown.render(render_markdown([table]))
    tags, shown = rendered_text(html)
    assert tags == {"table", "thead", "tbody", "tr", "th", "td"}
    assert html.count("<td") == 1
    assert _strip_lines(shown.removeprefix("label").strip()) == _strip_lines(expected)


_NEWLINES = re.compile(r"\r\n|\r|\n")


def _strip_lines(text: str) -> str:
    """Blanks at the ends of each line are not shown by a Markdown renderer (nor in HTML)."""
    return "\n".join(line.strip(" \t") for line in text.split("\n")).strip("\n")
