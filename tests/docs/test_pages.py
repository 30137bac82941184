"""Docs are code: every command and printed output of the README and of the site is run, or named as covered by a
test of the suite, and every command names commands, options, sessions and scripts that exist (tests/docs/blocks.py
says how the pages mark them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import (
    COMMAND_LANGUAGES,
    ROOT,
    Block,
    _cli_groups,
    all_blocks,
    blocks,
    command_problems,
    make_workspace,
    matches,
    nox_sessions,
    pages,
    run,
)


def run_blocks(page_blocks: list[Block], workspace: Path) -> list[str]:
    """Each mismatch between what a page's ``run`` blocks show and what their commands print, in page order."""
    make_workspace(workspace)
    mismatches = []
    for block in page_blocks:
        for command, expected in block.sessions():
            actual = run(command, workspace)
            if not matches(expected, actual):
                mismatches.append(
                    f"{block.where}: $ {command}\n--- the page shows:\n{expected}\n--- it prints:\n{actual}"
                )
    return mismatches


def runnable_pages() -> list[object]:
    """One parameter per page with ``run`` blocks; marked ``runner`` where a command needs the runner's extra."""
    params: list[object] = []
    for path in pages():
        page_blocks = [block for block in blocks(path) if block.kind == "run"]
        if not page_blocks:
            continue
        commands = [command for block in page_blocks for command, _ in block.sessions()]
        marks = [pytest.mark.slow]
        if any(command.startswith("interbias ") or " interbias " in command for command in commands):
            marks.append(pytest.mark.runner)
        params.append(pytest.param(path.relative_to(ROOT).as_posix(), marks=marks, id=path.stem))
    return params


def test_every_block_that_shows_a_command_or_its_output_is_marked() -> None:
    unmarked = [
        block.where for block in all_blocks() if block.lang in COMMAND_LANGUAGES and block.kind is None and block.text
    ]
    assert not unmarked, f"blocks without a <!-- doc-test: ... --> marker: {unmarked}"
    run_not_console = [block.where for block in all_blocks() if block.kind == "run" and block.lang != "console"]
    assert not run_not_console, f"run blocks must be console blocks ($ COMMAND, then its output): {run_not_console}"


def test_a_block_covered_by_a_test_names_one_that_exists() -> None:
    missing = []
    for block in all_blocks():
        if block.kind != "covered-by":
            continue
        path, _, name = (block.arg or "").partition("::")
        source = ROOT / path
        if not path or not source.is_file() or (name and f"def {name}(" not in source.read_text(encoding="utf-8")):
            missing.append(f"{block.where}: {block.arg}")
    assert not missing, f"covered-by names no test of the suite (PATH::TEST): {missing}"


def test_every_toml_block_of_the_docs_is_toml() -> None:
    import tomllib

    broken = []
    for block in all_blocks():
        if block.lang == "toml":
            try:
                tomllib.loads(block.text)
            except tomllib.TOMLDecodeError as error:
                broken.append(f"{block.where}: {error}")
    assert not broken, broken


def test_the_roster_entry_of_the_run_tutorial_is_one_the_runner_reads(tmp_path: Path) -> None:
    """The tutorial's own encoder, appended to the shipped roster as the page says, loads with its fields."""
    from runner.encoders import load_roster

    page = ROOT / "docs" / "tutorials" / "run-the-benchmark.md"
    entry = next(block for block in blocks(page) if block.lang == "toml" and "[[encoders]]" in block.text)
    roster = tmp_path / "my-encoders.toml"
    roster.write_text((ROOT / "configs" / "encoders.toml").read_text(encoding="utf-8") + "\n" + entry.text + "\n")
    mine = [spec for spec in load_roster(roster, checkpoints_root=tmp_path) if spec.label == "my-ecapa"]
    assert [(spec.kind, spec.family, spec.checkpoint, spec.dim) for spec in mine] == [
        ("speechbrain", "speaker", tmp_path / "my-ecapa", 192)
    ]


def test_every_command_of_the_docs_names_what_the_code_has() -> None:
    groups, sessions = _cli_groups(), nox_sessions()
    problems = [
        f"{block.where}: {problem}"
        for block in all_blocks()
        if block.kind is not None
        for command, _ in block.sessions()
        for problem in command_problems(command, groups, sessions)
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", runnable_pages())
def test_the_commands_of_a_page_print_what_it_shows(page: str, tmp_path: Path) -> None:
    page_blocks = [block for block in blocks(ROOT / page) if block.kind == "run"]
    mismatches = run_blocks(page_blocks, tmp_path)
    assert not mismatches, "\n\n".join(mismatches)


def test_the_checks_catch_a_renamed_option_a_missing_command_and_session() -> None:
    """A planted drift in a command: each kind is named (the oracle: the CLI's own options, read by hand)."""
    groups, sessions = _cli_groups(), nox_sessions()
    good = "audit verify t.csv --bundle b --key k.pub --out r"
    assert command_problems(good, groups, sessions) == []
    assert command_problems(good.replace("--key", "--public-key"), groups, sessions) == [
        "audit verify --public-key: no such option"
    ]
    assert command_problems("interbias rehears configs/full.toml", groups, sessions) == [
        "interbias rehears: no such command"
    ]
    assert command_problems("pip install nox && nox -s reproduc", groups, sessions) == [
        "nox -s reproduc: no such session in noxfile.py"
    ]
    assert command_problems("python examples/no_such_script.py", groups, sessions) == [
        "python examples/no_such_script.py: no such file in the repository"
    ]


def test_the_comparison_holds_numbers_exactly_and_elides_only_dots() -> None:
    printed = "PASS: t.csv (39 rows): 0 errors, 4 warnings\n  warning coverage: 16 of 17 cells\n"
    assert matches("PASS: t.csv (39 rows): 0 errors, 4 warnings\n  warning coverage: 16 of 17 cells", printed)
    assert matches("PASS: t.csv (39 rows): ...\n  warning coverage: ...", printed)
    assert not matches("PASS: t.csv (38 rows): 0 errors, 4 warnings\n  warning coverage: 16 of 17 cells", printed)
    assert not matches("PASS: t.csv (39 rows): ...", printed)  # an elision ends a line, never skips the next one


@pytest.mark.slow  # two commands of about 3 s each
def test_a_changed_number_on_a_page_fails_its_test(tmp_path: Path) -> None:
    """A planted drift in printed output: the page's first run block with one number changed fails; as written,
    it passes."""
    page = ROOT / "docs" / "tutorials" / "audit-your-scores.md"
    first = next(block for block in blocks(page) if block.kind == "run")
    assert "0.217 [0.185, 0.251]" in first.text
    planted = Block(first.page, first.line, first.lang, first.text.replace("0.217 [0.185", "0.218 [0.185"), "run", None)
    assert run_blocks([first], tmp_path / "as-written") == []
    mismatches = run_blocks([planted], tmp_path / "planted")
    assert len(mismatches) == 1 and "0.218 [0.185" in mismatches[0]
