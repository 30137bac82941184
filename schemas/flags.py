"""The flag registry: every finding the audit can raise, with its severity and what it means for a reader.

One home for the list (DESIGN.md section 5). The audit raises flags only under these ids (``audit.table.findings.Flag``
refuses any other), and the report's renderer reads the sentences from here, so a flag cannot be raised in one
place and lost in another. Severity ``error`` fails the audit (exit 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "FLAGS",
    "Flag",
    "FlagKind",
    "Severity",
    "cases_of",
    "describe_case",
    "flag_kind",
    "has_errors",
    "one_per_id",
]


class Severity(StrEnum):
    """How much a flag weighs: an error fails the audit (exit 1), a warning or info is reported beside a PASS."""

    ERROR = "error"  # the audit fails: exit 1
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class FlagKind:
    """A registered flag: its id, its usual severity, and one sentence on what it means for interpretation."""

    id: str
    severity: Severity
    meaning: str
    bundle: bool = False  # raised by the bundle verification steps


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO
_KINDS = (
    FlagKind("schema", _E, "Rows that break the results schema are left out of everything downstream."),
    FlagKind("percent-scale", _E, "EERs above 1 look like percentages; they are not used as fractions."),
    FlagKind("eer-above-chance", _W, "An EER above 0.5 is worse than chance; it is kept as measured, never clipped."),
    FlagKind("near-chance-prediction", _W, "Near chance, additive predictions and their contrasts lose meaning."),
    FlagKind("coupled-correlation", _W, "IE and the prediction share terms: their correlation is partly arithmetic."),
    FlagKind("unstable-ratio", _W, "A ratio with a near-zero or sign-changing denominator says little."),
    FlagKind("missing-term", _W, "A contrast without all four measured terms cannot be computed."),
    FlagKind("substituted-reference", _E, "A marginal replaced by the reference changes the estimand."),
    FlagKind("cross-corpus-reference", _I, "Terms from different corpora cannot isolate an interaction."),
    FlagKind("ambiguous-term", _W, "A contrast term matches several rows, so the contrast is not defined."),
    FlagKind("population-contrast", _W, "Levels that select other utterances compare populations, by design."),
    FlagKind("unmatched-trials", _E, "Terms or encoders scored on different trials are not comparable."),
    FlagKind("trials-unverifiable", _W, "Without trial identities, matched sampling cannot be checked."),
    FlagKind("unpaired-subgroup", _W, "Gender rows that do not pair cannot give a gap."),
    FlagKind("single-speaker-subgroup", _W, "A subgroup of one speaker describes that speaker, not a population."),
    FlagKind("budget-mismatch", _W, "Trial budgets that differ change the uncertainty of each term."),
    FlagKind("missing-provenance", _W, "Rows without checkpoint digest, run id or trial list cannot be traced."),
    FlagKind("coverage", _W, "Experiments or encoders missing from the expected matrix."),
    FlagKind("duplicate-checkpoint", _W, "Labels that share one checkpoint digest are one encoder, not several."),
    FlagKind("training-overlap", _W, "An encoder evaluated on a corpus it was trained on may look better than it is."),
    FlagKind("missing-reference-level", _W, "Without its declared reference level, Table 8's ratios are not computed."),
    FlagKind("claims-not-reproduced", _E, "A published number does not follow from the table."),
    FlagKind("claims-not-computable", _W, "A published number cannot be recomputed from the table."),
    # audit scores: a reviewer's trial list and score file (audit/scores/scoring.py)
    FlagKind("duplicated-trials", _E, "A pair listed twice: which score belongs to which occurrence is unknown."),
    FlagKind("duplicated-scores", _E, "A pair scored twice: the metrics use the first score only."),
    FlagKind("unscored-trials", _E, "Trials without a score: the metrics cover part of the list, not the list."),
    FlagKind("scores-without-trials", _W, "Scores of pairs the list does not hold are left out."),
    FlagKind("non-finite-scores", _E, "NaN or infinite scores are left out of the metrics."),
    FlagKind("label-mismatch", _E, "The score file's label contradicts the trial list's; the list's is used."),
    FlagKind(
        "labels-contradict-speakers", _W, "A label that contradicts the speakers: the labels or the map are wrong."
    ),
    FlagKind("speakers-unknown", _W, "Without speakers, no speaker-cluster interval can be given."),
    FlagKind("metrics-not-computable", _E, "The trials do not define an EER (one class, or equal scores)."),
    # audit scores --cm-scores / --calibration (audit/scores/scoring.py)
    FlagKind("cm-duplicated-scores", _E, "A pair given two countermeasure scores: the first is used."),
    FlagKind("cm-unscored-trials", _E, "Trials without a countermeasure score are left out of the spoofing metrics."),
    FlagKind("cm-scores-without-trials", _W, "Countermeasure scores of pairs the scored trials lack are left out."),
    FlagKind("cm-non-finite-scores", _E, "NaN or infinite countermeasure scores are left out of the spoofing metrics."),
    FlagKind("spoof-labelled-target", _E, "A trial keyed spoof but listed as a target: the key or the list is wrong."),
    FlagKind("calibration-on-evaluation-trials", _E, "A calibration fitted on evaluated trials flatters Cllr/actDCF."),
    FlagKind("calibration-on-evaluation-speakers", _E, "A calibration fitted on evaluated speakers flatters Cllr."),
    FlagKind("calibration-not-fitted", _E, "The development scores give no calibration: no Cllr or actDCF."),
    FlagKind("poorly-calibrated", _W, "Calibrated decisions cost more than ignoring the scores (actDCF above 1)."),
    FlagKind("bad-signature", _E, "Nothing vouches for the bundle: unsigned, or the signature fails.", True),
    FlagKind("digest-mismatch", _E, "A bundle file differs from the signed statement, or is not covered.", True),
    FlagKind("bundle-schema", _E, "A signed bundle file cannot be parsed or breaks its schema.", True),
    FlagKind("table-binding", _E, "The audited table differs from the signed results table.", True),
    FlagKind("score-mismatch", _E, "A row's metric differs from the one recomputed from its scores.", True),
    FlagKind("trial-utterances", _E, "Trials name utterances or speakers the bundle's corpus tables lack.", True),
    # the trial-design audit of a bundle's signed trial lists (audit/bundle/design.py; thresholds in [analysis])
    FlagKind("duration-confound", _W, "Clip duration that tracks the condition is a second cause of its EER.", True),
    FlagKind(
        "impostor-pool-differs", _W, "Terms of a contrast scored against other impostors differ by more than IE.", True
    ),
    FlagKind("same-source-trials", _E, "A recording (or session) on both sides of a trial flatters its score.", True),
    FlagKind(
        "target-ratio-spread",
        _W,
        "Target:non-target ratios that drift between conditions change their EERs' noise.",
        True,
    ),
    FlagKind("operator-failures", _W, "Operators failed or fell back; those trials were not degraded as named.", True),
)
FLAGS: dict[str, FlagKind] = {kind.id: kind for kind in _KINDS}


def flag_kind(flag_id: str) -> FlagKind:
    """The registered flag ``flag_id``; an unregistered id is a programming error."""
    try:
        return FLAGS[flag_id]
    except KeyError:
        raise ValueError(f"flag id {flag_id!r} is not in schemas.flags.FLAGS") from None


@dataclass(frozen=True)
class Flag:
    """One finding. ``records`` are record_ids; ``details`` holds failure cases and figures behind the message."""

    id: str
    severity: Severity
    message: str
    records: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        flag_kind(self.id)  # only registered flags are raised

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": str(self.severity),
            "records": list(self.records),
            "message": self.message,
            "meaning": flag_kind(self.id).meaning,
            "details": self.details,
        }


_WHERE = (("row", "row"), ("record_id", "record"), ("file", "file"), ("subject", "file"), ("column", "column"),
          ("chain", "chain"))  # fmt: skip


def describe_case(case: dict[str, Any]) -> str:
    """One failing case of a flag in words: where (row, record, file, column) and what (audited against signed
    value, the check a cell fails, or the problem).

    >>> describe_case({"row": 4, "record_id": "r1", "column": "eer", "table": "0.3", "signed": "0.217"})
    'row 4, record r1, column eer: 0.3 in the table, 0.217 signed'
    >>> describe_case({"file": "operators.json", "problem": "breaks its shape"})
    'file operators.json: breaks its shape'
    """
    where = ", ".join(f"{word} {case[key]}" for key, word in _WHERE if case.get(key) is not None)
    if "table" in case and "signed" in case:
        what = f"{case['table']} in the table, {case['signed']} signed"
    elif "check" in case:
        what = f"{case['check']} (value {case.get('value')!r})"
    else:
        what = str(case.get("problem", ""))
    return f"{where}: {what}" if where and what else where or what


def cases_of(details: dict[str, Any]) -> list[dict[str, Any]]:
    """A flag's failing cases, from its own details or from each source it pools (see :func:`one_per_id`)."""
    found = [case for case in details.get("failures") or [] if isinstance(case, dict)]
    for source in details.get("sources") or []:
        found += cases_of(source) if isinstance(source, dict) else []
    return found


def has_errors(flags: list[Flag]) -> bool:
    """Whether any flag is an error, so that the audit fails."""
    return any(flag.severity is Severity.ERROR for flag in flags)


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def one_per_id(flags: list[Flag]) -> list[Flag]:
    """One flag per id, in first-raised order: the table checks and the bundle checks may raise the same id
    (``unmatched-trials``), and a report keyed by id must not lose either. Severities keep the graver; the
    messages and records are pooled; the details of each source are kept under ``sources``."""
    groups: dict[str, list[Flag]] = {}
    for flag in flags:
        groups.setdefault(flag.id, []).append(flag)
    return [
        same[0]
        if len(same) == 1
        else Flag(
            flag_id,
            min((flag.severity for flag in same), key=_RANK.__getitem__),
            " ".join(flag.message for flag in same),
            tuple(dict.fromkeys(record for flag in same for record in flag.records)),
            {"sources": [flag.details for flag in same]},
        )
        for flag_id, same in groups.items()
    ]
