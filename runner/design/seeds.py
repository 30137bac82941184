"""Repeat a run with N seeds (``interbias run --seeds N``): one bundle per seed, each with its own configuration.

The seed drives trial sampling and degradation, so the runs differ in nothing else; ``audit seeds`` then gives
the spread of every EER and IE across them. Each seed's configuration is the original text with ``[run] seed``
replaced, written next to the original (relative paths keep resolving) as ``<name>.seed-<seed>.toml``, and it is
the ``config.toml`` of that seed's bundle: every bundle states the seed it ran with.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from provenance import atomic_write_text
from schemas import InputError

__all__ = [
    "seed_configs",
    "seeded_config_text",
]

_TABLE = re.compile(r"^\s*\[")
_SEED = re.compile(r"^(\s*seed\s*=\s*)[^#\n]*(.*)$")


def seeded_config_text(text: str, seed: int, source: str = "config") -> str:
    """``text`` with ``[run] seed`` set to ``seed`` (added after ``[run]`` if absent); checked by parsing."""
    lines = text.splitlines(keepends=True)
    header = next((i for i, line in enumerate(lines) if line.strip().split("#")[0].strip() == "[run]"), None)
    if header is None:
        raise InputError(source, "no [run] table to set the seed in")
    end = next((i for i in range(header + 1, len(lines)) if _TABLE.match(lines[i])), len(lines))
    for index in range(header + 1, end):
        match = _SEED.match(lines[index].rstrip("\n"))
        if match:
            lines[index] = f"{match.group(1)}{seed}  # set by --seeds{match.group(2) and ' ' + match.group(2)}\n"
            break
    else:
        lines.insert(header + 1, f"seed = {seed}  # set by --seeds\n")
    result = "".join(lines)
    if tomllib.loads(result).get("run", {}).get("seed") != seed:
        raise InputError(source, "could not set [run] seed")
    return result


def seed_configs(config: Path, seeds: list[int]) -> list[tuple[int, Path]]:
    """Write one configuration per seed next to ``config`` and return (seed, path) pairs."""
    text = config.read_text(encoding="utf-8")
    written = []
    for seed in seeds:
        path = config.with_name(f"{config.stem}.seed-{seed}.toml")
        atomic_write_text(path, seeded_config_text(text, seed, str(config)))
        written.append((seed, path))
    return written
