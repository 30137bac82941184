"""The design on the site (docs/hooks/design_pages.py): a page per numbered section of docs/DESIGN.md holding that
section's text, an index listing them, the pages in the nav, and links that still land once the file is split."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.docs.blocks import ROOT, load_hook

pytest.importorskip("markdown", reason="the docs extra is not installed (nox -s tests installs it)")
# Skipped on the light install (no docs extra), so run again on the full one: without the mark the full session
# would deselect it as a light-tier test that has already run.
pytestmark = pytest.mark.every_install

DESIGN = ROOT / "docs" / "DESIGN.md"
# A section planted after the last one: links to an anchor of another section, to its own title, to a heading it
# repeats (DESIGN.md's anchor tables_1, the page's own tables), to DESIGN.md by name, to another page, to the web,
# and a link-shaped text inside code that is no link.
PLANTED = """
## 12. Planted section (a test)

See [the definitions](#4-definitions-one-implementation-used-by-runner-and-audit),
[this](#12-planted-section-a-test), [the tables](DESIGN.md#tables), [the twin](#tables_1),
[the design](DESIGN.md), [a page](other.md#a-page) and [the web](https://example.org/DESIGN.md#x);
`[code](#not-rewritten)` stays.

### Tables

The twin of section 10's heading.
"""
# The planted section as its page must read, written out by hand.
PLANTED_PAGE = """# 12. Planted section (a test)

See [the definitions](4-definitions.md#4-definitions-one-implementation-used-by-runner-and-audit),
[this](#12-planted-section-a-test), [the tables](10-contracts-between-modules.md#tables), [the twin](#tables),
[the design](index.md), [a page](../other.md#a-page) and [the web](https://example.org/DESIGN.md#x);
`[code](#not-rewritten)` stays.

## Tables

The twin of section 10's heading.
"""


def generator() -> ModuleType:
    """docs/hooks/design_pages.py, loaded from its file."""
    return load_hook("design_pages")


def sections_by_hand(text: str) -> dict[int, str]:
    """The oracle's split: each ``## N. `` line of DESIGN.md up to the next one, by its number."""
    lines = text.splitlines(keepends=True)
    starts = [index for index, line in enumerate(lines) if re.match(r"## \d+\. ", line)]
    return {
        int(lines[start].split(".")[0].removeprefix("## ")): "".join(lines[start:end])
        for start, end in zip(starts, [*starts[1:], len(lines)], strict=True)
    }


def test_every_numbered_section_has_its_page_with_its_text() -> None:
    """Each page is its section line for line, each heading one level up (the section's title is the page's
    title), after the link rewriting that the planted section's test checks."""
    module = generator()
    text = DESIGN.read_text(encoding="utf-8")
    expected = sections_by_hand(text)
    made = module.pages(text)
    intro, sections = module.split(text)
    assert len(expected) >= 11 and list(expected) == [section.number for section in sections]
    where = module.anchors(intro, sections)
    assert list(made) == ["design/index.md", *(section.path for section in sections)]
    for section in sections:
        page = made[section.path]
        source = module.rewrite(expected[section.number], section.path, where)
        title = expected[section.number].splitlines()[0]
        assert page.splitlines()[0] == title[1:] == f"# {section.number}. {section.title}"
        pairs = list(zip(page.splitlines(), source.splitlines(), strict=True))
        assert all(mine == theirs or (mine.startswith("#") and "#" + mine == theirs) for mine, theirs in pairs)


def test_the_index_lists_each_section_once_in_order_with_its_page() -> None:
    module = generator()
    text = DESIGN.read_text(encoding="utf-8")
    index = module.pages(text)["design/index.md"]
    listed = re.findall(r"^- \[(\d+)\. [^\]]+\]\(([^)#]+)\)", index, re.M)
    assert [int(number) for number, _ in listed] == sorted(sections_by_hand(text))
    assert [f"design/{name}" for _, name in listed] == [section.path for section in module.split(text)[1]]
    assert index.startswith(text.split("\n## ", 1)[0])  # the introduction, as written


def test_a_planted_section_gets_its_page_with_its_links_rewritten_and_its_nav_entry(tmp_path: Path) -> None:
    module = generator()
    (tmp_path / "DESIGN.md").write_text(DESIGN.read_text(encoding="utf-8") + PLANTED, encoding="utf-8")
    made = module.pages((tmp_path / "DESIGN.md").read_text(encoding="utf-8"))
    assert made["design/12-planted-section.md"] == PLANTED_PAGE
    assert (
        "- [12. Planted section (a test)](12-planted-section.md): [Tables](12-planted-section.md#tables)"
        in (made["design/index.md"])
    )
    nav = [{"Home": "index.md"}, {"Explanation": [{"Design": ["design/index.md"]}, {"Other": "other.md"}]}]
    module.on_config({"docs_dir": str(tmp_path), "nav": nav})
    design = nav[1]["Explanation"][0]["Design"]  # type: ignore[index]
    assert design[0] == "design/index.md" and len(design) == 13
    assert design[-1] == {"12. Planted section": "design/12-planted-section.md"}
    assert design[8] == {"8. Performance targets": "design/8-performance-targets.md"}


def test_links_of_other_pages_to_the_design_land_on_the_section_page() -> None:
    """A link to DESIGN.md by anchor goes to the page holding that heading, by name alone to the index; other links
    stay as written; an anchor the design has not is an error naming the page and the link."""
    module = generator()
    intro, sections = module.split(DESIGN.read_text(encoding="utf-8"))
    where = module.anchors(intro, sections)
    page = "reference/api.md"
    assert module.retarget("../DESIGN.md#2-layout", page, where, page) == "../design/2-layout.md#2-layout"
    assert (
        module.retarget("../DESIGN.md#tables", page, where, page) == "../design/10-contracts-between-modules.md#tables"
    )
    assert module.retarget("../DESIGN.md", page, where, page) == "../design/index.md"
    assert (
        module.retarget("DESIGN.md#7-the-runner", "index.md", where, "index.md")
        == "design/7-the-runner.md#7-the-runner"
    )
    with pytest.raises(module.DesignError, match=r"^docs/reference/api.md: a link to \.\./DESIGN.md#no-such, an"):
        module.retarget("../DESIGN.md#no-such", page, where, page)
    assert module.retarget("../corpora/ears.md#x", page, where, page) == "../corpora/ears.md#x"
    text = "[a](../DESIGN.md#2-layout) and `[b](../DESIGN.md#2-layout)`\n"
    assert (
        module.rewrite(text, page, where, page)
        == "[a](../design/2-layout.md#2-layout) and `[b](../DESIGN.md#2-layout)`\n"
    )


def test_an_unnumbered_section_heading_stops_the_build() -> None:
    module = generator()
    with pytest.raises(module.DesignError, match=r"DESIGN.md:5: a '## ' heading without its number"):
        module.split("# d\n\n## 1. One\n\n## Appendix\n")


def build(docs: Path, extra: str) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of a small site: ``docs`` with the design hook, a home page and ``extra``."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (nox -s tests installs it)")
    (docs / "index.md").write_text("# Home\n\n" + extra, encoding="utf-8")
    (docs / "other.md").write_text("# A page\n", encoding="utf-8")
    config = docs.parent / "mkdocs.yml"
    config.write_text(
        f"""site_name: t
docs_dir: {docs}
site_dir: {docs.parent / "site"}
strict: true
use_directory_urls: false
exclude_docs: /DESIGN.md
hooks: [{ROOT / "docs" / "hooks" / "design_pages.py"}]
validation: {{nav: {{omitted_files: warn, not_found: warn}}, links: {{not_found: warn, anchors: warn}}}}
markdown_extensions: [toc]
nav: [index.md, other.md, {{Design: [design/index.md]}}]
""",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)]
    return subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    )


@pytest.mark.slow  # two small MkDocs builds, about 3 s each
def test_the_strict_build_of_a_planted_section_resolves_every_link_and_catches_a_broken_one(tmp_path: Path) -> None:
    """The oracle is MkDocs's own link and anchor validation: the design's pages (the planted one too) and a page
    linking to DESIGN.md anchors build with no warning; one anchor the design has not is named."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "DESIGN.md").write_text(DESIGN.read_text(encoding="utf-8") + PLANTED, encoding="utf-8")
    links = "[twin](DESIGN.md#tables_1) [trust](DESIGN.md#what-a-pass-means-the-trust-model) [all](DESIGN.md)\n"
    done = build(docs, links)
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    assert sorted(path.name for path in (site / "design").glob("*.html"))[:3] == [
        "1-the-problem.html",
        "10-contracts-between-modules.html",
        "11-a-reviewers-own-data.html",
    ]
    planted = (site / "design" / "12-planted-section.html").read_text(encoding="utf-8")
    assert 'id="12-planted-section-a-test"' in planted and 'href="../other.html#a-page"' in planted
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="design/12-planted-section.html#tables"' in home and not (site / "DESIGN.html").exists()
    done = build(docs, "[gone](DESIGN.md#no-such-heading)\n")
    assert done.returncode != 0
    assert "docs/index.md: a link to DESIGN.md#no-such-heading, an anchor no heading" in done.stdout + done.stderr
