"""The reference pages generated from the code (docs/hooks/reference.py) are current, and hold what the code has:
every command and option of both command lines, every configuration key, every registered flag."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.docs.blocks import ROOT, _cli_groups, load_hook


def generator() -> ModuleType:
    """docs/hooks/reference.py, loaded from its file."""
    return load_hook("reference")


def test_the_generated_reference_pages_are_current() -> None:
    stale = generator().stale()
    assert not stale, f"stale generated pages {stale}: run python docs/hooks/reference.py and commit them"


@pytest.mark.parametrize("program", ["audit", "interbias"])
def test_the_command_page_names_every_command_and_option(program: str) -> None:
    """The oracle: the CLI's own parameter lists, walked here independently of the generator's rendering."""
    page = (ROOT / "docs" / "reference" / "cli" / f"{program}.md").read_text(encoding="utf-8")

    def leaves(group: object, words: list[str]) -> list[tuple[list[str], object]]:
        out: list[tuple[list[str], object]] = []
        for name, command in group.commands.items():  # type: ignore[attr-defined]
            out += leaves(command, [*words, name]) if hasattr(command, "commands") else [([*words, name], command)]
        return out

    for words, command in leaves(_cli_groups()[program], [program]):
        heading = f"## `{' '.join(words)}`"
        assert heading in page, heading
        section = page.split(heading, 1)[1].split("\n## ", 1)[0]
        for param in command.params:  # type: ignore[attr-defined]
            for opt in (*param.opts, *param.secondary_opts):
                if opt.startswith("-"):
                    assert f"`{opt}" in section or f"/ {opt}" in section, f"{' '.join(words)} {opt}"


def test_the_flag_and_configuration_pages_hold_every_flag_and_key() -> None:
    from runner.design import config
    from schemas import ANALYSIS_KEYS
    from schemas.flags import FLAGS

    flags = (ROOT / "docs" / "reference" / "flags.md").read_text(encoding="utf-8")
    assert all(f"| `{kind.id}` | {kind.severity.value} |" in flags for kind in FLAGS.values())
    keys = (ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    tuples = [config.TOP_KEYS, config.RUN_KEYS, config.CORPUS_KEYS, config.EXPERIMENT_KEYS, ANALYSIS_KEYS]
    assert all(f"| `{key}` |" in keys for keys_of_table in tuples for key in keys_of_table)
