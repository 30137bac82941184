"""The verified bundle: what ``audit.bundle.verify_bundle`` authenticated, and the tables it loaded from bytes it
had verified. Aggregates, re-scoring and statistics read this object; nothing downstream re-reads a bundle file.

Also the vocabulary of the verification steps: each ``verify_*`` step returns a value and a :class:`Step` (its
report section), or raises one :class:`BundleError` naming its flag, a reason code and the failing cases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from schemas import Error, Flag, Severity, row_dicts

if TYPE_CHECKING:  # the table-only audit does not load pyarrow
    import pandas as pd

    from provenance import Digest
    from schemas import RecordScores

# Flags that say the bundle's bytes cannot be relied on: statistics are not computed over such a bundle.
INTEGRITY_FLAGS = ("bad-signature", "digest-mismatch", "bundle-schema")


class Trust(StrEnum):
    """How the signature was checked (issue 11's trust model)."""

    TRUSTED_KEY = "trusted-key"  # verifies under the public key the reviewer passed (--key)
    TRUSTED_KEY_ID = "trusted-key-id"  # verifies under the bundle's key, whose id the reviewer listed
    BUNDLE_KEY = "bundle-key"  # verifies only under the key the bundle carries: integrity, not identity
    NONE = "none"  # unsigned, or the signature does not verify: nothing in the payload is parsed


@dataclass(frozen=True)
class Authentication:
    """The outcome of the signature step."""

    trust: Trust
    key_id: str | None = None
    key_source: str | None = None

    @property
    def signature_verified(self) -> bool:
        return self.trust is not Trust.NONE

    @property
    def trusted(self) -> bool:
        return self.trust in (Trust.TRUSTED_KEY, Trust.TRUSTED_KEY_ID)

    def as_dict(self) -> dict[str, Any]:
        return {
            "trust": str(self.trust),
            "key_id": self.key_id,
            "key_source": self.key_source,
            "trusted": self.trusted,
        }


@dataclass
class Step:
    """The report section of one step."""

    lines: list[str]
    table: list[dict[str, Any]] = field(default_factory=list)


class BundleError(Error):
    """One named failure of one verification step; ``partial`` is what later steps may still use."""

    flag_id: ClassVar[str]
    severity: ClassVar[Severity] = Severity.ERROR

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        records: tuple[str, ...] = (),
        failures: list[dict[str, Any]] | None = None,
        lines: list[str] | None = None,
        partial: Any = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.records = records
        self.failures = failures or []
        self.lines = lines or []
        self.partial = partial

    def __reduce__(self) -> tuple[Any, ...]:
        """Picklable (a step may run in a forked process), with its records, failures, lines and partial value."""
        return (type(self), (self.reason, self.message), dict(self.__dict__))

    def flag(self) -> Flag:
        details = {"reason": self.reason, "failures": self.failures}
        return Flag(self.flag_id, self.severity, self.message, self.records, details)


class BadSignatureError(BundleError):
    """The envelope is missing (unsigned bundle), unreadable, or does not verify under the key used."""

    flag_id = "bad-signature"


class StatementError(BundleError):
    """The signed payload is not an in-toto Statement v1 with our predicate: the manifest does not verify."""

    flag_id = "bad-signature"


class DigestMismatchError(BundleError):
    """A file differs from its subject digest, is missing, is not a subject, or a row names other digests."""

    flag_id = "digest-mismatch"


class SubjectEscapeError(DigestMismatchError):
    """A subject name or a link in the bundle leads outside the bundle folder."""


class BundleSchemaError(BundleError):
    """A verified bundle file that cannot be parsed or breaks its schema."""

    flag_id = "bundle-schema"


class TableBindingError(BundleError):
    """The audited table differs from the signed results table (values, missing rows, unknown rows)."""

    flag_id = "table-binding"


class ScoreMismatchError(BundleError):
    """A row's metric differs from the one recomputed from its per-trial scores."""

    flag_id = "score-mismatch"


class UnmatchedTrialsError(BundleError):
    """Scores not in trial-list order, or contrast terms / encoders that used different trial lists."""

    flag_id = "unmatched-trials"


class TrialUtterancesError(BundleError):
    """A trial names an utterance its corpus table lacks, or a speaker the table does not give that utterance."""

    flag_id = "trial-utterances"


class OperatorFailuresError(BundleError):
    """Operators failed or fell back; the counts are disclosed, so this is a warning."""

    flag_id = "operator-failures"
    severity = Severity.WARNING


@dataclass(frozen=True)
class LoadedFiles:
    """The bundle's files parsed from verified bytes (a file that failed its digest or schema is absent)."""

    results: pd.DataFrame | None = None
    trial_lists: dict[str, pd.DataFrame] = field(default_factory=dict)
    scores: dict[str, RecordScores] = field(default_factory=dict)
    corpus_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    operators: dict[str, Any] | None = None
    checkpoints: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None

    @cached_property
    def signed_rows(self) -> list[dict[str, Any]]:
        """The rows of the signed results table as dicts (none without one), made once for every step."""
        return [] if self.results is None else row_dicts(self.results)


@dataclass(frozen=True)
class TableBinding:
    """How the audited table relates to the signed results table: the key its rows bound by (``record_id`` or a
    natural key), each row's record (None where it did not bind), the columns compared and not compared, and the
    decimals each column compared by rounding was compared at."""

    n_signed: int
    n_table: int
    subset: str | None
    n_in_subset: int
    key: tuple[str, ...] = ("record_id",)
    record_ids: tuple[str | None, ...] = ()
    compared: tuple[str, ...] = ()
    not_compared: tuple[str, ...] = ()
    precision: dict[str, int] = field(default_factory=dict)
    from_bundle: tuple[str, ...] = ()  # signed columns the table lacks: taken from its bound rows
    bound: bool = True  # False: some row or column did not bind (the table-binding flag says which)

    @property
    def rounded_columns(self) -> tuple[str, ...]:
        return tuple(self.precision)


@dataclass(frozen=True)
class VerifiedBundle:
    """What verification established, and the data it loaded; the only way the audit reads a bundle."""

    root: Path
    authentication: Authentication
    statement: dict[str, Any] | None
    verified: dict[str, Digest]
    files: LoadedFiles
    binding: TableBinding | None
    flags: list[Flag]
    sections: list[dict[str, Any]]
    rescored: dict[str, dict[str, float]] = field(default_factory=dict)  # record_id -> metrics from verified scores
    archive: Digest | None = None  # the archive the bundle was read from, if it came as one
    statement_digest: Digest | None = None  # the signed payload (the statement), once its signature verified

    @property
    def intact(self) -> bool:
        """The signature verified (under some key) and no file failed its digest or schema."""
        return self.authentication.signature_verified and not any(
            flag.id in INTEGRITY_FLAGS and flag.severity is Severity.ERROR for flag in self.flags
        )

    @property
    def trial_list_of(self) -> dict[str, str]:
        """record_id -> trial_list_id of the signed results table."""
        results = self.files.results
        if results is None or not {"record_id", "trial_list_id"} <= set(results.columns):
            return {}
        return dict(zip(results["record_id"].astype(str), results["trial_list_id"].astype(str), strict=True))
