"""ACM artefact badges in plain words: for each criterion, what this artefact shows and what is missing.

The summary reads only the finished report (flags, sections, claims, source), so it serves a legacy results
table (summary-level evidence only) and a signed bundle (per-trial evidence) alike. It states evidence;
awarding a badge stays the reviewers' call. Criteria follow ACM "Artifact Review and Badging" v1.1:
Available (in a permanent archive), Evaluated - Functional (documented, consistent, complete, exercisable),
Evaluated - Reusable (documented and structured well enough to reuse), Results Reproduced (main results
obtained again).

Each criterion gets a status: ``shown`` (nothing missing), ``partly shown`` (some evidence, something
missing) or ``not shown`` (no evidence). The verdict caps it: an error flag, a bundle no trusted key signed, or a
table audited without its bundle lowers each criterion it undermines to at most the status ``CAPS`` gives, and the
reason comes first among what is missing. Row counts are over the audited rows (a declared subset, or the rows that
bind to a signed row and equal it), never over the signed table's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from schemas import count

SECTION_ID = "artefact-evaluation"
SECTION_TITLE = "Artefact-evaluation summary (ACM badges)"
SHOWN, PARTLY, NOT_SHOWN = "shown", "partly shown", "not shown"
RANK = {NOT_SHOWN: 0, PARTLY: 1, SHOWN: 2}
AVAILABLE = "Artifacts Available"
FUNCTIONAL = "Artifacts Evaluated - Functional"
REUSABLE = "Artifacts Evaluated - Reusable"
REPRODUCED = "Results Reproduced"

PROVENANCE_WORDS = {
    "checkpoint_blake3": "checkpoint digest",
    "run_id": "run id",
    "trial_list_id": "trial list id",
    "scores_blake3": "per-trial scores digest",
}
RESCORED = "metrics that re-score to the signed values"  # the coverage row Results Reproduced reads
UNUSABLE_CONTRAST_FLAGS = ("missing-term", "substituted-reference", "cross-corpus-reference")
TRIAL_FLAGS = ("unmatched-trials", "trials-unverifiable", "budget-mismatch")


@dataclass(frozen=True)
class Cap:
    """What a finding undermines: the highest status it leaves each criterion, and why (in the reader's words)."""

    limits: Mapping[str, str]
    why: str


# Per error flag, the criteria its FAIL undermines; an error flag not named here caps as ANY_ERROR does.
CAPS: Mapping[str, Cap] = {
    "bad-signature": Cap(
        {AVAILABLE: PARTLY, FUNCTIONAL: NOT_SHOWN, REUSABLE: NOT_SHOWN, REPRODUCED: NOT_SHOWN},
        "the bundle's signature does not verify under a key you trust, so nothing in it was checked",
    ),
    "digest-mismatch": Cap(
        {AVAILABLE: PARTLY, FUNCTIONAL: NOT_SHOWN, REUSABLE: PARTLY, REPRODUCED: PARTLY},
        "bundle files differ from the digests the statement signs: the artefact is not the one signed",
    ),
    "bundle-schema": Cap(
        {FUNCTIONAL: NOT_SHOWN, REUSABLE: PARTLY, REPRODUCED: PARTLY},
        "a signed bundle file cannot be parsed or breaks its schema",
    ),
    "table-binding": Cap(
        {FUNCTIONAL: PARTLY, REUSABLE: PARTLY, REPRODUCED: NOT_SHOWN},
        "the audited table is not the signed results table, so its numbers are not shown to be the artefact's",
    ),
    "score-mismatch": Cap(
        {FUNCTIONAL: PARTLY, REUSABLE: PARTLY, REPRODUCED: NOT_SHOWN},
        "signed metrics do not follow from their per-trial scores",
    ),
    "claims-not-reproduced": Cap({REPRODUCED: NOT_SHOWN}, "published numbers are not reproduced"),
}
ANY_ERROR = Cap({FUNCTIONAL: PARTLY, REUSABLE: PARTLY, REPRODUCED: PARTLY}, "")
UNAUTHENTICATED = Cap(
    {AVAILABLE: PARTLY, FUNCTIONAL: PARTLY, REUSABLE: PARTLY, REPRODUCED: PARTLY},
    "the signature verifies only under the bundle's own key: its files are unchanged since signing, but who signed "
    "them is not established (pass --key)",
)
TABLE_ONLY = Cap(
    {FUNCTIONAL: PARTLY, REUSABLE: PARTLY, REPRODUCED: NOT_SHOWN},
    "table checks only: no signature, digests or scores were checked",
)


@dataclass(frozen=True)
class Evidence:
    """The parts of a report the criteria look at, indexed once."""

    source: Mapping[str, Any]
    aggregates: Mapping[str, Any]
    flags: Mapping[str, Mapping[str, Any]]
    sections: Mapping[str, Mapping[str, Any]]
    claims: Sequence[Mapping[str, Any]]
    trust: Mapping[str, Any]
    verdict: str

    @classmethod
    def of(cls, report: Mapping[str, Any]) -> Evidence:
        return cls(
            trust=report.get("trust") or {},
            source=report.get("source") or {},
            aggregates=report.get("aggregates") or {},
            flags={str(flag.get("id")): flag for flag in report.get("flags") or []},
            sections={str(section.get("id")): section for section in report.get("sections") or []},
            claims=list(report.get("claims") or []),
            verdict=str(report.get("verdict") or ""),
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
    def untrusted_signer(self) -> bool:
        """The signature verified only under the bundle's own key."""
        return self.passed("bundle-signature") and not self.trust.get("trusted")

    def error(self, flag_id: str) -> bool:
        return (self.flags.get(flag_id) or {}).get("severity") == "error"

    def records(self, flag_id: str) -> int:
        return len((self.flags.get(flag_id) or {}).get("records") or [])

    @property
    def n_audited(self) -> int:
        return int(self.source.get("n_rows") or 0)

    def coverage(self) -> dict[str, int]:
        """Per binding of the bundle's coverage section, how many audited rows have it verified."""
        rows = (self.sections.get("bundle-coverage") or {}).get("table") or []
        return {str(row.get("binding")): int(row.get("audited_rows") or 0) for row in rows}

    def caps(self) -> list[Cap]:
        """What the verdict undermines: each error flag's cap (its reason naming the flag; the flag's own message
        for an error no cap names), an unauthenticated bundle's, a table audited without its bundle's."""
        found = []
        for flag_id, flag in self.flags.items():
            if flag.get("severity") == "error":
                cap = CAPS.get(flag_id, ANY_ERROR)
                found.append(Cap(cap.limits, f"verdict FAIL ({flag_id}): {cap.why or flag.get('message', '')}"))
        if self.untrusted_signer:
            found.append(Cap(UNAUTHENTICATED.limits, f"verdict UNAUTHENTICATED: {UNAUTHENTICATED.why}"))
        if not self.bundle:
            found.append(TABLE_ONLY)
        return found


@dataclass
class Assessment:
    """One criterion: evidence found, what is missing, and the highest status the verdict leaves it."""

    criterion: str
    shows: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    cap: str = SHOWN

    @property
    def status(self) -> str:
        found = NOT_SHOWN if not self.shows else PARTLY if self.missing else SHOWN
        return min(found, self.cap, key=RANK.__getitem__)

    def capped_by(self, caps: Sequence[Cap]) -> Assessment:
        """The assessment with every cap that names this criterion applied, its reason first among the gaps."""
        applying = [cap for cap in caps if self.criterion in cap.limits]
        for cap in applying:
            self.cap = min(self.cap, cap.limits[self.criterion], key=RANK.__getitem__)
        self.missing[:0] = [cap.why for cap in applying]
        return self


def percent(present: int, total: int, noun: str = "row") -> str:
    """``1878 of 4068 rows (46.2 %)``."""
    share = f" ({100 * present / total:.1f} %)" if total else ""
    return f"{present} of {count(total, noun)}{share}"


def assess_available(evidence: Evidence) -> Assessment:
    """Available: the artefact sits, unchanged, in a permanent public archive."""
    found = Assessment(AVAILABLE)
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
    found.missing.append(
        "whether the artefact is held by a permanent public archive (for example with a DOI) cannot be "
        "checked offline: the authors must state where"
    )
    if not evidence.bundle:
        found.missing.append(
            "trial lists, per-trial scores, checkpoints and the run environment are not part of this "
            "artefact (only a results table was audited)"
        )
    return found


def assess_functional(evidence: Evidence) -> Assessment:
    """Functional: documented, consistent, complete and exercisable."""
    found = Assessment(FUNCTIONAL)
    per_experiment = evidence.aggregates.get("per_experiment") or []
    contrasts = evidence.aggregates.get("contrasts") or []
    if per_experiment:
        experiments, interactions = count(len(per_experiment), "experiment"), count(len(contrasts), "contrast")
        found.shows.append(
            f"the table could be exercised: aggregates were recomputed for {experiments} and {interactions}"
        )
    if "schema" not in evidence.flags and per_experiment:
        found.shows.append("every row passes the results schema")
    if evidence.bundle and evidence.signed_by_trusted_key and evidence.passed("bundle-subject-digests"):
        found.shows.append("the statement signed by a trusted key verifies and every bundle file matches its digests")
    for flag_id in ("schema", "percent-scale"):
        if flag_id in evidence.flags:
            found.missing.append(f"{count(evidence.records(flag_id), 'row')} cannot be used as given (flag {flag_id})")
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
    found = Assessment(REUSABLE)
    coverage = _table_coverage(evidence)
    if not coverage and "missing-provenance" not in evidence.flags and evidence.source:
        found.shows.append("every row names its checkpoint digest, run id and trial list id")
    for column, (present, total) in coverage.items():
        words = PROVENANCE_WORDS.get(column, column)
        if present:
            found.shows.append(f"{words} recorded for {percent(present, total)}")
        if present < total:
            found.missing.append(f"{words} coverage is only {percent(present, total)}")
    n_audited = evidence.n_audited
    for binding, present in evidence.coverage().items():
        if binding != RESCORED:
            line = f"{binding} for {percent(present, n_audited, 'audited row')}"
            (found.shows if n_audited and present == n_audited else found.missing).append(line)
    if evidence.passed("bundle-shared-trials"):
        found.shows.append("the four terms of every contrast and all encoders scored the same trial list")
    if evidence.passed("bundle-operators"):
        found.shows.append("operator outcomes are recorded per chain, with no failure or fallback")
    for flag_id in (*TRIAL_FLAGS, "operator-failures"):
        if flag_id in evidence.flags and not evidence.error(flag_id):  # an error's cap says it already
            found.missing.append(f"{flag_id}: {evidence.flags[flag_id].get('message')}")
    if not evidence.bundle:
        found.missing.append(
            "no trial lists, environment capture (packages, hardware, commit) or operator outcome counts: "
            "these come with an artefact bundle"
        )
    return found


def assess_reproduced(evidence: Evidence) -> Assessment:
    """Results Reproduced: published numbers follow from the artefact, and the artefact from its scores."""
    found = Assessment(REPRODUCED)
    n_audited, agreeing = evidence.n_audited, evidence.coverage().get(RESCORED)
    if agreeing is None:
        found.missing.append(
            "per-trial scores are absent, so the results cannot be re-derived: only aggregates of the "
            "reported EERs were recomputed, without confidence intervals"
        )
    elif n_audited and agreeing == n_audited:
        found.shows.append(
            f"the metrics of every audited row ({n_audited}) were recomputed from its verified per-trial scores "
            "and agree with the signed row it equals"
        )
    else:
        if agreeing:
            found.shows.append(
                f"the metrics of {percent(agreeing, n_audited, 'audited row')} were recomputed from their verified "
                "per-trial scores and agree with the signed rows they equal"
            )
        found.missing.append(
            f"{count(n_audited - agreeing, 'audited row')} not re-derived from verified per-trial scores "
            "(not bound to an equal signed row, scores not verified, or metrics that differ)"
        )
    statuses = [str(claim.get("status")) for claim in evidence.claims]
    reproduced = statuses.count("reproduced")
    if reproduced:
        found.shows.append(f"{reproduced} of {len(statuses)} published numbers recomputed within tolerance")
    if "not reproduced" in statuses:
        found.missing.append(f"{count(statuses.count('not reproduced'), 'published number')} not reproduced")
    if "not computable" in statuses:
        found.missing.append(f"{count(statuses.count('not computable'), 'published number')} cannot be recomputed")
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
    caps = evidence.caps()
    assessments = [assess(evidence).capped_by(caps) for assess in CRITERIA]
    statuses = {assessment.status for assessment in assessments}
    lines = [
        f"{assessment.criterion}: {assessment.status}"
        + (f"; main gap: {assessment.missing[0]}." if assessment.missing else ".")
        for assessment in assessments
    ]
    attestation = report.get("attestation")
    if isinstance(attestation, Mapping):  # audit verify --attest
        lines.append(
            f"Signed verdict: {attestation['file']} beside this report (auditor's key id {attestation['key_id']}); "
            f"anyone checks it offline with: {attestation['command']}"
        )
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
