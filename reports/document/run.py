"""The appendix of what was run: the audited files with their hashes, the run, the trust in its signature and the
declared configuration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.blocks import Block, Heading, Paragraph
from reports.document.shape import _mapping
from reports.document.tables import table_blocks, value_blocks

SOURCE_FIRST = ("path", "format", "n_rows", "n_lines", "sha256", "blake3")


def _what_was_run(report: Mapping[str, Any]) -> list[Block]:
    """Source files with their hashes, the run (id, commit, configuration digest, encoders and checkpoints, corpora),
    the trust in its signature and the declared configuration."""
    blocks: list[Block] = [Heading(2, "Appendix: what was run")]
    source = _mapping(report.get("source"), "source")
    if source:
        keys = [key for key in SOURCE_FIRST if key in source] + [key for key in source if key not in SOURCE_FIRST]
        blocks += [Heading(3, "Audited files"), *value_blocks({key: source[key] for key in keys})]
    for key, title in (("run", "Run"), ("trust", "Signature and trust")):
        value = _mapping(report.get(key), key)
        if value:
            blocks += [Heading(3, title), *value_blocks(value)]
    return blocks + _config_blocks(report)


def _config_blocks(report: Mapping[str, Any]) -> list[Block]:
    config = _mapping(report.get("config"), "config")
    rows: list[tuple[str, Any]] = []

    def flatten(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for key, item in value.items():
                flatten(f"{prefix}.{key}" if prefix else str(key), item)
        else:
            rows.append((prefix, value))

    flatten("", config)
    body = table_blocks(("setting", "value"), rows) if rows else [Paragraph("No configuration was recorded.")]
    return [Heading(3, "Configuration (declared thresholds)"), *body]
