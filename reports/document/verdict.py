"""The report's first screen: its title, the verdict with its cause and first failing cases, the flag counts and
who signed the run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reports.blocks import Block, BulletList, Callout, Heading, Paragraph, Tone
from reports.document.flags import _flags
from reports.document.shape import _mapping
from reports.format import format_list, format_value
from schemas import count

TONES: dict[str, Tone] = {"pass": "pass", "fail": "fail"}  # other verdicts (unauthenticated, pass-subset): note
TABLE_ONLY = "table checks only: no signature, digests or scores were checked"


def _verdict_text(report: Mapping[str, Any]) -> str:
    """The verdict in one sentence: PASS / FAIL / UNAUTHENTICATED, on FAIL its cause, what was (not) checked."""
    verdict = str(report.get("verdict", "")).lower()
    text = f"Verdict: {verdict.upper() or 'NOT STATED'}"
    cause = _mapping(report.get("cause"), "cause")
    trust = _mapping(report.get("trust"), "trust")
    subset = trust.get("subset")
    if report.get("checked") == "table only":
        text += f" ({TABLE_ONLY})"
    elif verdict == "pass" and isinstance(subset, Mapping):
        text += (
            f", subset: {subset.get('rows')} of {subset.get('signed_rows')} signed rows ({subset.get('expression')})"
        )
    if cause:
        text += f": {cause.get('flag')}: {format_value(cause.get('message'))}"
    elif verdict == "unauthenticated":
        text += (
            f": the bundle verifies only under its own enclosed key (key id {trust.get('key_id')}), which proves "
            "integrity, not authorship; pass the authors' public key with --key"
        )
    return text


def _verdict_blocks(report: Mapping[str, Any]) -> list[Block]:
    """The first screen: the title, the verdict with its cause and first failing cases, the flag counts and who
    signed the run."""
    tool = _mapping(report.get("tool"), "tool")
    name = tool.get("name", "interbias-sv")
    title = f"Provenance report: {name} {tool.get('version', '')}".strip()
    verdict = str(report.get("verdict", "")).lower()
    counts = ", ".join(
        count(sum(1 for flag in _flags(report) if flag.get("severity") == severity), severity, plural)
        for severity, plural in (("error", None), ("warning", None), ("info", "info"))
    )
    blocks: list[Block] = [Heading(1, title), Callout(TONES.get(verdict, "note"), _verdict_text(report))]
    cause = _mapping(report.get("cause"), "cause")
    cases = [format_value(case) for case in cause.get("cases") or []]
    more = int(cause.get("n_cases") or 0) - len(cases)
    if len(cases) > 1:  # the cause's message names the first
        blocks.append(BulletList((*cases, *([f"... and {more} more in the flag below"] if more > 0 else []))))
    facts = [f"Flags: {counts}"]
    if cause.get("other_errors"):
        facts.append(f"Other errors: {format_list(list(cause['other_errors']))}")
    trust = _mapping(report.get("trust"), "trust")
    if trust.get("key_id") and "trusted" in trust:  # the audit's trust block
        how = "a key you trust" if trust["trusted"] else "the bundle's own key only"
        facts.append(f"Signed by {how} ({trust.get('trust')}), key id {trust['key_id']}")
    elif trust:
        facts.append("Trust: " + "; ".join(f"{k.replace('_', ' ')}: {format_value(v)}" for k, v in trust.items()))
    return [*blocks, Paragraph(". ".join(facts) + ".")]
