"""The fenced blocks of the README and of the documentation site, as tests read them ("docs are code").

Every block that shows a command or what a command prints (languages ``sh``, ``bash``, ``console``, ``text`` or
none) carries a marker, an HTML comment on the line right above its fence (invisible on the rendered page):

- ``<!-- doc-test: run -->`` above a ``console`` block: each ``$ COMMAND`` line (``\\`` continues it) is run with
  bash in a fresh workspace, in the order of the page, and what it prints (stdout and stderr together) must match
  the lines under it; ``...`` stands for any text of its line, a line of ``...`` alone for any lines (as
  doctest's ELLIPSIS); trailing spaces are ignored.
- ``<!-- doc-test: covered-by PATH::TEST -->``: a command too heavy for the suite (the full reproduce, a GPU or a
  cluster run); the named test of the suite covers it, and must exist.

Whatever the marker, every command of every marked block is checked against the code: an ``audit`` or
``interbias`` command must name a command and options that exist, ``nox -s NAME`` a session of noxfile.py,
``python PATH`` a file of the repository.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def load_hook(name: str) -> ModuleType:
    """``docs/hooks/<name>.py``, loaded from its file (docs/ is not a package), registered as ``docs_<name>``."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"docs_{name}"] = module
    spec.loader.exec_module(module)
    return module


# The pages whose blocks are held to the markers: the README and the site, less the pages generated from the code
# and the design and corpus documents that the site includes as they are.
GENERATED = ("docs/reference/cli", "docs/reference/configuration.md", "docs/reference/flags.md")
UNMARKED = ("docs/DESIGN.md", "docs/corpora")
COMMAND_LANGUAGES = frozenset({"sh", "bash", "console", "text", ""})
MARKER = re.compile(r"^<!-- doc-test: (?P<kind>run|covered-by)(?: (?P<arg>\S+))? -->$")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<lang>[\w-]*)")
# Lines a command prints on stderr only the first time on a machine (numba compiling the bootstrap's kernels).
FIRST_RUN_NOTES = re.compile(r"^audit: compil(ing|ed) the bootstrap's numba kernels.*$\n?", re.M)


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it is, its language, its text and its marker (kind, argument)."""

    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    kind: str | None
    arg: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def sessions(self) -> list[tuple[str, str]]:
        """(command, expected output) pairs of a ``console`` block; the commands alone for others."""
        if self.lang in ("sh", "bash"):
            return [(command, "") for command in joined_lines(self.text.splitlines())]
        pairs: list[tuple[str, list[str]]] = []
        lines = self.text.splitlines()
        index = 0
        while index < len(lines):
            line = lines[index]
            if line.startswith("$ "):
                command = [line[2:]]
                while command[-1].endswith("\\") and index + 1 < len(lines):
                    index += 1
                    command.append(lines[index])
                pairs.append((" ".join(part.removesuffix("\\").strip() for part in command), []))
            elif pairs:
                pairs[-1][1].append(line)
            elif self.lang == "console":
                raise ValueError(f"{self.where}: console block: output before any '$ ' command")
            index += 1
        return [(command, "\n".join(output)) for command, output in pairs]


def joined_lines(lines: list[str]) -> list[str]:
    """Shell lines with ``\\`` continuations joined; comments and blank lines dropped."""
    out: list[str] = []
    pending: list[str] = []
    for line in lines:
        stripped = line.rstrip()
        pending.append(stripped.removesuffix("\\").strip())
        if stripped.endswith("\\"):
            continue
        text = " ".join(part for part in pending if part).split(" #", 1)[0].strip()
        pending = []
        if text and not text.startswith("#"):
            out.append(text)
    return out


def pages() -> list[Path]:
    """The README and every page of the site that is held to the markers."""
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    held = []
    for path in found:
        relative = path.relative_to(ROOT).as_posix()
        if not relative.startswith(GENERATED + UNMARKED):
            held.append(path)
    return held


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown page, with the marker above each."""
    page = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        body = [line.removeprefix(indent) for line in lines[index + 1 : end]]
        above = lines[index - 1].strip() if index else ""
        marker = MARKER.match(above)
        out.append(
            Block(
                page=page,
                line=index + 1,
                lang=opening["lang"],
                text="\n".join(body),
                kind=marker["kind"] if marker else None,
                arg=marker["arg"] if marker else None,
            )
        )
        index = end + 1
    return out


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in blocks(path)]


# -- the commands against the code -------------------------------------------------------------------------------


def _cli_groups() -> dict[str, Any]:
    import typer

    from audit.cli import app as audit_app
    from runner.cli import app as runner_app

    return {"audit": typer.main.get_command(audit_app), "interbias": typer.main.get_command(runner_app)}


def nox_sessions() -> set[str]:
    """The session names of noxfile.py (functions decorated with ``@nox.session``), read without importing nox."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("session" in ast.unparse(decorator) for decorator in node.decorator_list)
    }


def command_problems(command: str, groups: dict[str, Any], sessions: set[str]) -> list[str]:
    """What in one shell command does not exist in the code: a command, an option, a session, a script."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError as error:
        return [f"{command!r}: {error}"]
    parts: list[list[str]] = [[]]
    redirected = False
    for token in tokens:
        if token in (";", "&&", "||", "|", "&"):
            parts.append([])
        elif token in (">", ">>", "<", "2>", "&>"):
            redirected = True
        elif redirected:
            redirected = False  # the redirection's target
        else:
            parts[-1].append(token)
    problems = []
    for words in parts:
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]  # VAR=value prefixes
        if not words:
            continue
        program = words[0]
        if program in groups:
            problems += _cli_problems(program, words[1:], groups[program])
        elif program == "nox":
            names = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "-s"]
            problems += [f"nox -s {name}: no such session in noxfile.py" for name in names if name not in sessions]
        elif (
            program in ("python", "python3")
            and len(words) > 1
            and not words[1].startswith("-")
            and not (ROOT / words[1]).is_file()
        ):
            problems.append(f"python {words[1]}: no such file in the repository")
    return problems


def _cli_problems(program: str, args: list[str], group: Any) -> list[str]:
    """Unknown commands or options of an ``audit``/``interbias`` command line."""
    command, path = group, [program]
    options = {opt for param in group.params for opt in (*param.opts, *param.secondary_opts)} | {"--help"}
    for word in args:
        if word.startswith("-"):
            break
        if not hasattr(command, "commands"):
            break
        if word not in command.commands:
            return [f"{' '.join([*path, word])}: no such command"]
        command = command.commands[word]
        path.append(word)
    if hasattr(command, "commands"):
        return []  # a group alone (``interbias corpus --help``)
    options |= {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    unknown = [word.split("=", 1)[0] for word in args if word.startswith("--")]
    return [f"{' '.join(path)} {name}: no such option" for name in unknown if name not in options]


# -- running a page's commands -----------------------------------------------------------------------------------


def workspace_env(workspace: Path) -> dict[str, str]:
    """The environment of a page's commands: this interpreter's scripts first on PATH, this checkout importable,
    a cache of the workspace's own."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env["INTERBIAS_CACHE"] = str(workspace / "cache")
    env["COLUMNS"] = "200"
    env.pop("INTERBIAS_LIGHT", None)
    return env


def make_workspace(workspace: Path) -> None:
    """A reader's checkout as the commands see it: the repository's examples, configurations and benchmarks."""
    workspace.mkdir(parents=True, exist_ok=True)
    for name in ("examples", "configs", "benchmarks"):
        (workspace / name).symlink_to(ROOT / name)


def run(command: str, workspace: Path) -> str:
    """What ``command`` prints (stdout then stderr lines as they come) in ``workspace``; first-run notes dropped."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=workspace,
        env=workspace_env(workspace),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )
    return FIRST_RUN_NOTES.sub("", done.stdout)


def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows: ``...`` in a line stands for any text of that line, a line of
    ``...`` alone for any number of lines; trailing spaces and blank lines at either end are ignored."""
    want = [line.rstrip() for line in expected.strip("\n").splitlines()]
    have = [line.rstrip() for line in actual.strip("\n").splitlines()]
    patterns = [
        None if line.strip() == "..." else re.compile(".*?".join(map(re.escape, line.split("...")))) for line in want
    ]

    @functools.cache
    def fits(i: int, j: int) -> bool:
        if i == len(patterns):
            return j == len(have)
        pattern = patterns[i]
        if pattern is None:
            return any(fits(i + 1, k) for k in range(j, len(have) + 1))
        return j < len(have) and pattern.fullmatch(have[j]) is not None and fits(i + 1, j + 1)

    return fits(0, 0)
