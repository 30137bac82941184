"""The design on the site, a page per section: ``docs/DESIGN.md`` stays the one source (code, docs and the guide
cite it by path and as "DESIGN section N"); at build time this hook makes from it ``design/index.md`` (its
introduction and a line per section) and one page per numbered section ``## N. Title`` (``design/N-slug.md``),
and lists them in the nav after ``design/index.md`` (``mkdocs.yml``: Explanation > Design), each named by its number
and title less a closing parenthetical (the page's own title keeps it).

Made at build time, never committed (unlike the reference pages of ``reference.py``, made from code and read on
GitHub too): a page cannot go stale and an edit of DESIGN.md needs no second step. A page is its section's Markdown
with the headings one level up (the section's title is the page's ``#`` title) and its links rewritten for the
page's folder: a link to an anchor of DESIGN.md points at the page that holds that heading now, a link to another
file of ``docs/`` gains the ``../``. Links of the other pages to ``DESIGN.md#anchor`` are pointed at the section page
too, so on GitHub they still open the one file. The whole DESIGN.md is left out of the site (``exclude_docs``): one
copy of each sentence, one search hit. An unnumbered ``##`` heading (it would have no page) or a link to an anchor
DESIGN.md has not (MkDocs only notes a link to a file left out) stops the build.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

SOURCE = "DESIGN.md"  # under docs/
FOLDER = "design"
INDEX = f"{FOLDER}/index.md"
SECTION = re.compile(r"^## (?P<number>\d+)\. (?P<title>.+?)\s*$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
CLOSING_PARENTHETICAL = re.compile(r"\s*\([^()]*\)$")
FENCE = re.compile(r"^\s{0,3}(?P<fence>```+|~~~+)")
# An inline code span (left as it is) or the target of an inline link or image, or of a reference definition.
LINK = re.compile(
    r"(?P<code>`+).+?(?P=code)|(?P<head>\]\(\s*<?|^\s{0,3}\[[^\]]+\]:\s*<?)(?P<target>[^\s)>]+)", re.MULTILINE
)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


class DesignError(Exception):
    """DESIGN.md cannot be split, or a link names an anchor it has not: where, and the problem."""


@dataclass(frozen=True)
class Section:
    """One numbered section of DESIGN.md: its number, its title, its page and its Markdown (from its heading)."""

    number: int
    title: str
    path: str
    text: str

    @property
    def short(self) -> str:
        """The section's number and title less a closing parenthetical: its name in the nav."""
        return f"{self.number}. {CLOSING_PARENTHETICAL.sub('', self.title)}"


def _slugify(text: str) -> str:
    """A heading's anchor as the site's ``toc`` extension makes it (markdown's slugify)."""
    from markdown.extensions.toc import slugify

    return str(slugify(text, "-"))


def _prose(lines: list[str]) -> list[tuple[int, str]]:
    """The lines of ``lines`` outside fenced code blocks, with their index."""
    out, fence = [], ""
    for index, line in enumerate(lines):
        match = FENCE.match(line)
        if fence:
            if match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence):
                fence = ""
        elif match:
            fence = match["fence"]
        else:
            out.append((index, line))
    return out


def split(text: str) -> tuple[str, list[Section]]:
    """DESIGN.md's introduction (all before its first section) and its sections, in order."""
    lines = text.splitlines(keepends=True)
    starts: list[tuple[int, re.Match[str]]] = []
    for index, line in _prose(lines):
        if line.startswith("## "):
            match = SECTION.match(line)
            if match is None:
                raise DesignError(f"docs/{SOURCE}:{index + 1}: a '## ' heading without its number ('## N. Title')")
            starts.append((index, match))
    sections = []
    for position, (index, match) in enumerate(starts):
        end = starts[position + 1][0] if position + 1 < len(starts) else len(lines)
        section = Section(int(match["number"]), match["title"], "", "".join(lines[index:end]))
        words = _slugify(section.short).split("-")[:5]  # the number and four words
        sections.append(replace(section, path=f"{FOLDER}/{'-'.join(words)}.md"))
    intro = "".join(lines[: starts[0][0]] if starts else lines)
    return intro, sections


def _headings(text: str) -> list[tuple[int, str, str]]:
    """The (level, text, anchor) of each heading of ``text`` outside fenced code, the anchors made unique over
    ``text`` as the ``toc`` extension makes them on a page of its own."""
    from markdown.extensions.toc import unique

    found: list[tuple[int, str, str]] = []
    ids: set[str] = set()
    for _, line in _prose(text.splitlines()):
        match = HEADING.match(line)
        if match:
            found.append((len(match["hashes"]), match["text"], unique(_slugify(match["text"]), ids)))
    return found


def anchors(intro: str, sections: list[Section]) -> dict[str, tuple[str, str]]:
    """Each anchor of DESIGN.md as one page and where its heading is on the site: (page, anchor on that page)."""
    whole = _headings(intro + "".join(section.text for section in sections))
    placed = [
        (page, anchor)
        for page, text in [(INDEX, intro), *((s.path, s.text) for s in sections)]
        for _, _, anchor in _headings(text)
    ]
    return {anchor: place for (_, _, anchor), place in zip(whole, placed, strict=True)}


def retarget(target: str, page: str, where: dict[str, tuple[str, str]], source: str = SOURCE) -> str:
    """A link's target, written on ``source`` (a path under docs/), as it reads on ``page``: a link to DESIGN.md or
    to one of its anchors points at the section page holding the anchor; any other relative link is re-rooted at
    ``page``'s folder; external and absolute links stay as they are. A link to an anchor DESIGN.md has not is an
    error (MkDocs would only note it: the whole DESIGN.md is left out of the site)."""
    if SCHEME.match(target) or target.startswith("/"):
        return target
    path, hash_, anchor = target.partition("#")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), path)) if path else source
    if resolved == SOURCE:
        if hash_ and anchor not in where:
            raise DesignError(f"docs/{source}: a link to {target}, an anchor no heading of docs/{SOURCE} has")
        resolved, anchor = where[anchor] if hash_ else (INDEX, "")
        hash_ = "#" if anchor else ""
    elif posixpath.dirname(source) == posixpath.dirname(page):
        return target
    if resolved == page:
        return f"#{anchor}" if hash_ else posixpath.basename(page)
    return posixpath.relpath(resolved, posixpath.dirname(page) or ".") + hash_ + anchor


def rewrite(text: str, page: str, where: dict[str, tuple[str, str]], source: str = SOURCE) -> str:
    """``text`` (Markdown written on ``source``) with every link target outside code retargeted for ``page``."""

    def one(match: re.Match[str]) -> str:
        if match["code"]:
            return match[0]
        return match["head"] + retarget(match["target"], page, where, source)

    lines = text.splitlines(keepends=True)
    for index, line in _prose(lines):
        lines[index] = LINK.sub(one, line)
    return "".join(lines)


def _promoted(text: str) -> str:
    """``text`` with each heading outside fenced code one level up (a section's ``##`` title becomes ``#``)."""
    lines = text.splitlines(keepends=True)
    for index, line in _prose(lines):
        if HEADING.match(line):
            lines[index] = line[1:]
    return "".join(lines)


def _index(intro: str, sections: list[Section], where: dict[str, tuple[str, str]]) -> str:
    """The design's index page: the introduction, then a line per section with links to its subsections."""
    lines = [rewrite(intro, INDEX, where).rstrip(), ""]
    lines += [
        f'`docs/{SOURCE}` is one document; here it is a page per section, and "DESIGN section N" is page N:',
        "",
    ]
    for section in sections:
        name = posixpath.basename(section.path)
        parts = [f"[{text}]({name}#{anchor})" for level, text, anchor in _headings(section.text) if level == 3]
        lines.append(f"- [{section.number}. {section.title}]({name})" + (f": {', '.join(parts)}" if parts else ""))
    return "\n".join(lines) + "\n"


def pages(text: str) -> dict[str, str]:
    """Every page made from DESIGN.md's ``text``, by its path under docs/: the index first, then the sections."""
    intro, sections = split(text)
    where = anchors(intro, sections)
    made = {INDEX: _index(intro, sections, where)}
    for section in sections:
        made[section.path] = _promoted(rewrite(section.text, section.path, where))
    return made


def _source(config: Any) -> str:
    return Path(config["docs_dir"], SOURCE).read_text(encoding="utf-8")


def _nav_with_sections(nav: Any, entries: list[dict[str, str]]) -> bool:
    """Add ``entries`` after ``design/index.md`` in the nav list that holds it; whether one did."""
    if isinstance(nav, list):
        for position, item in enumerate(nav):
            if item == INDEX or (isinstance(item, dict) and INDEX in item.values()):
                nav[position + 1 : position + 1] = [entry for entry in entries if entry not in nav]
                return True
        return any(_nav_with_sections(item, entries) for item in nav)
    if isinstance(nav, dict):
        return any(_nav_with_sections(value, entries) for value in nav.values())
    return False


def on_config(config: Any) -> Any:
    """MkDocs hook: the section pages in the nav, after ``design/index.md``; a DESIGN.md that cannot be split or
    that links to an anchor it has not, or a nav without that entry, stops the build."""
    from mkdocs.exceptions import PluginError

    try:
        text = _source(config)
        pages(text)  # every page made now, so that a broken link stops the build before it starts
    except DesignError as error:
        raise PluginError(str(error)) from error
    if not _nav_with_sections(config["nav"], [{section.short: section.path} for section in split(text)[1]]):
        raise PluginError(f"mkdocs.yml: no nav entry {INDEX} for the design's section pages to follow")
    return config


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: the design's pages, made from DESIGN.md, among the site's files."""
    from mkdocs.structure.files import File

    for path, text in pages(_source(config)).items():
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs hook: another page's links to DESIGN.md or its anchors, pointed at the section pages; a link to an
    anchor DESIGN.md has not stops the build."""
    from mkdocs.exceptions import PluginError

    if SOURCE not in markdown:
        return markdown
    intro, sections = split(_source(config))
    try:
        return rewrite(markdown, page.file.src_uri, anchors(intro, sections), page.file.src_uri)
    except DesignError as error:
        raise PluginError(str(error)) from error
