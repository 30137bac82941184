"""ACM artefact badges in plain words: for each criterion, what this artefact shows and what is missing.

The summary reads only the finished report (flags, sections, claims, source), so it serves a legacy results
table (summary-level evidence only) and a signed bundle (per-trial evidence) alike. It states evidence;
awarding a badge stays the reviewers' call. Criteria follow ACM "Artifact Review and Badging" v1.1:
Available (in a permanent archive), Evaluated - Functional (documented, consistent, complete, exercisable),
Evaluated - Reusable (documented and structured well enough to reuse), Results Reproduced (main results
obtained again).

Each criterion gets a status: ``shown`` (nothing missing), ``partly shown`` (some evidence, something
missing) or ``not shown`` (no evidence, or a finding that contradicts it, such as a failed signature).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SECTION_ID = "artefact-evaluation"
SECTION_TITLE = "Artefact-evaluation summary (ACM badges)"
SHOWN, PARTLY, NOT_SHOWN = "shown", "partly shown", "not shown"

PROVENANCE_WORDS = {
    "checkpoint_blake3": "checkpoint digest",
    "run_id": "run id",
    "trial_list_id": "trial list id",
    "scores_blake3": "per-trial scores digest",
}
UNUSABLE_CONTRAST_FLAGS = ("missing-term", "substituted-reference", "cross-corpus-reference")
TRIAL_FLAGS = ("unmatched-trials", "trials-unverifiable", "budget-mismatch")


@dataclass(frozen=True)
class Evidence:
    """The parts of a report the criteria look at, indexed once."""

    source: Mapping[str, Any]
    aggregates: Mapping[str, Any]
    flags: Mapping[str, Mapping[str, Any]]
    sections: Mapping[str, Mapping[str, Any]]
    claims: Sequence[Mapping[str, Any]]
    trust: Mapping[str, Any]

    @classmethod
    def of(cls, report: Mapping[str, Any]) -> Evidence:
        return cls(
            trust=report.get("trust") or {},
            source=report.get("source") or {},
            aggregates=report.get("aggregates") or {},
            flags={str(flag.get("id")): flag for flag in report.get("flags") or []},
            sections={str(section.get("id")): section for section in report.get("sections") or []},
            claims=list(report.get("claims") or []),
        )

    @property
    def bundle(self) -> bool:
        """Whether a bundle was verified (its checks add ``bundle-*`` sections)."""
        return any(section_id.startswith("bundle-") for section_id in self.sections)

    def passed(self, section_id: str) -> bool:
        return (self.sections.get(section_id) or {}).get("status") == "pass"

    @property
    def signed_by_trusted_key(self) -> bool:
        """The signature verified under a key the reviewer declared, not merely the one the bundle carries."""
        return self.passed("bundle-signature") and bool(self.trust.get("trusted"))

    @property
    def untrusted_signer(self) -> str | None:
        """Why the signer is not established, when the signature verified only under the bundle's own key."""
        if self.passed("bundle-signature") and not self.trust.get("trusted"):
            return (
                f"the signature verifies only under the bundle's own key (key id {self.trust.get('key_id')}): the "
                "files are unchanged since signing, but who signed them is not established (pass --key)"
            )
        return None

    def error(self, flag_id: str) -> bool:
        return (self.flags.get(flag_id) or {}).get("severity") == "error"

    def records(self, flag_id: str) -> int:
        return len((self.flags.get(flag_id) or {}).get("records") or [])


@dataclass
class Assessment:
    """One criterion: evidence found, what is missing, and whether a finding contradicts the criterion."""

    criterion: str
    shows: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    contradicted: bool = False

    @property
    def status(self) -> str:
        if self.contradicted or not self.shows:
            return NOT_SHOWN
        return PARTLY if self.missing else SHOWN


def counted(count: int, noun: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def percent(present: int, total: int) -> str:
    """``1878 of 4068 rows (46.2 %)``."""
    share = f" ({100 * present / total:.1f} %)" if total else ""
    return f"{present} of {counted(total, 'row')}{share}"


def assess_available(evidence: Evidence) -> Assessment:
    """Available: the artefact sits, unchanged, in a permanent public archive."""
    found = Assessment("Artifacts Available")
    sha256 = evidence.source.get("sha256")
    if sha256:
        found.shows.append(
            f"the results table ({evidence.source.get('n_rows', '?')} rows) is identified by its SHA-256 "
            f"{str(sha256)[:16]}... and BLAKE3 digests, so an archived copy can be matched to this report"
        )
    if evidence.signed_by_trusted_key:
        found.shows.append(
            "every bundle file is named with its digests in an in-toto statement signed by a trusted key"
        )
    if evidence.untrusted_signer:
        found.missing.append(evidence.untrusted_signer)
    found.missing.append(
        "whether the artefact is held by a permanent public archive (for example with a DOI) cannot be "
        "checked offline: the authors must state where"
    )
    if not evidence.bundle:
        found.missing.append(
            "trial lists, per-trial scores, checkpoints and the run environment are not part of this "
            "artefact (only a results table was audited)"
        )
    elif "bad-signature" in evidence.flags:
        found.missing.append("the bundle is unsigned or its signature does not verify (flag bad-signature)")
    return found


def assess_functional(evidence: Evidence) -> Assessment:
    """Functional: documented, consistent, complete and exercisable."""
    found = Assessment("Artifacts Evaluated - Functional")
    per_experiment = evidence.aggregates.get("per_experiment") or []
    contrasts = evidence.aggregates.get("contrasts") or []
    if per_experiment:
        experiments, interactions = (
            counted(len(per_experiment), "experiment"),
            counted(len(contrasts), "contrast"),
        )
        found.shows.append(
            f"the table could be exercised: aggregates were recomputed for {experiments} and {interactions}"
        )
    if "schema" not in evidence.flags and per_experiment:
        found.shows.append("every row passes the results schema")
    if evidence.bundle and evidence.signed_by_trusted_key and evidence.passed("bundle-subject-digests"):
        found.shows.append("the statement signed by a trusted key verifies and every bundle file matches its digests")
    for flag_id in ("bad-signature", "digest-mismatch"):
        if evidence.error(flag_id):
            found.contradicted = True
            found.missing.append(f"the bundle does not verify: {evidence.flags[flag_id].get('message')}")
    for flag_id in ("schema", "percent-scale"):
        if flag_id in evidence.flags:
            found.missing.append(
                f"{counted(evidence.records(flag_id), 'row')} cannot be used as given (flag {flag_id})"
            )
    if "coverage" in evidence.flags:
        found.missing.append(f"incomplete: {evidence.flags['coverage'].get('message')}")
    unusable = [flag_id for flag_id in UNUSABLE_CONTRAST_FLAGS if flag_id in evidence.flags]
    if unusable:
        found.missing.append(f"some designed contrasts cannot be computed as designed (flags {', '.join(unusable)})")
    return found


def _table_coverage(evidence: Evidence) -> dict[str, tuple[int, int]]:
    """Per provenance column of the results table: (rows with a value, rows); empty when all are complete."""
    details = (evidence.flags.get("missing-provenance") or {}).get("details") or {}
    return {
        str(column): (int(counts.get("present", 0)), int(counts.get("total", 0)))
        for column, counts in (details.get("coverage") or {}).items()
    }


def assess_reusable(evidence: Evidence) -> Assessment:
    """Reusable: provenance complete enough that someone else can rerun and build on the results."""
    found = Assessment("Artifacts Evaluated - Reusable")
    coverage = _table_coverage(evidence)
    if not coverage and "missing-provenance" not in evidence.flags and evidence.source:
        found.shows.append("every row names its checkpoint digest, run id and trial list id")
    for column, (present, total) in coverage.items():
        words = PROVENANCE_WORDS.get(column, column)
        if present:
            found.shows.append(f"{words} recorded for {percent(present, total)}")
        if present < total:
            found.missing.append(f"{words} coverage is only {percent(present, total)}")
    n_rows = int(evidence.source.get("n_rows") or 0)
    for row in (evidence.sections.get("bundle-coverage") or {}).get("table") or []:
        present = int(row.get("rows") or 0)
        line = f"{row.get('binding')} for {percent(present, n_rows)}"
        (found.shows if n_rows and present == n_rows else found.missing).append(line)
    if evidence.passed("bundle-shared-trials"):
        found.shows.append("the four terms of every contrast and all encoders scored the same trial list")
    if evidence.passed("bundle-operators"):
        found.shows.append("operator outcomes are recorded per chain, with no failure or fallback")
    for flag_id in (*TRIAL_FLAGS, "operator-failures"):
        if flag_id in evidence.flags:
            found.missing.append(f"{flag_id}: {evidence.flags[flag_id].get('message')}")
    if not evidence.bundle:
        found.missing.append(
            "no trial lists, environment capture (packages, hardware, commit) or operator outcome counts: "
            "these come with an artefact bundle"
        )
    return found


def assess_reproduced(evidence: Evidence) -> Assessment:
    """Results Reproduced: published numbers follow from the artefact, and the artefact from its scores."""
    found = Assessment("Results Reproduced")
    if evidence.passed("bundle-rescore"):
        found.shows.append("every row's metrics were recomputed from its per-trial scores and agree")
    elif "score-mismatch" in evidence.flags:
        found.contradicted = True
        found.missing.append(f"score-mismatch: {evidence.flags['score-mismatch'].get('message')}")
    else:
        found.missing.append(
            "per-trial scores are absent, so the results cannot be re-derived: only aggregates of the "
            "reported EERs were recomputed, without confidence intervals"
        )
    statuses = [str(claim.get("status")) for claim in evidence.claims]
    reproduced = statuses.count("reproduced")
    if reproduced:
        found.shows.append(f"{reproduced} of {len(statuses)} published numbers recomputed within tolerance")
    if evidence.error("claims-not-reproduced") or "not reproduced" in statuses:
        found.contradicted = True
        found.missing.append(f"{statuses.count('not reproduced')} published numbers are not reproduced")
    if "not computable" in statuses:
        found.missing.append(f"{statuses.count('not computable')} published numbers cannot be recomputed")
    if not statuses:
        found.missing.append("no published numbers were checked (pass them with --claims)")
    found.missing.append("reproducing the scores from audio needs an independent rerun of the benchmark")
    return found


CRITERIA: Sequence[Callable[[Evidence], Assessment]] = (
    assess_available,
    assess_functional,
    assess_reusable,
    assess_reproduced,
)


def artefact_evaluation_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """A ``sections`` entry stating, per ACM badge criterion, what this artefact shows and what is missing."""
    evidence = Evidence.of(report)
    assessments = [assess(evidence) for assess in CRITERIA]
    statuses = {assessment.status for assessment in assessments}
    lines = [
        f"{assessment.criterion}: {assessment.status}"
        + (f"; main gap: {assessment.missing[0]}." if assessment.missing else ".")
        for assessment in assessments
    ]
    rows = [
        {
            "criterion": assessment.criterion,
            "status": assessment.status,
            "what this artefact shows": "\n".join(assessment.shows) or "nothing",
            "what is missing": "\n".join(assessment.missing) or "nothing",
        }
        for assessment in assessments
    ]
    return {
        "id": SECTION_ID,
        "title": SECTION_TITLE,
        "status": "fail" if NOT_SHOWN in statuses else "warning" if PARTLY in statuses else "pass",
        "lines": lines,
        "table": {"columns": list(rows[0]), "rows": rows},
    }
