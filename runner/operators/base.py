"""Operator base class, outcomes, the name registry, spec parsing and the per-utterance random streams.

An operator is a small frozen dataclass registered under a name and serialised as ``{"name", "kwargs"}``
(lhotse style). Calling it degrades one mono float32 wave and returns an ``Outcome`` that says whether the
degradation was applied, failed, or fell back to something else, and why: nothing degrades silently.

The random stream of an operator comes from ``rng_for(seed, utt_id, spec)``, a BLAKE3 digest of the canonical
JSON of (global seed, utterance id, operator spec), so every encoder sees the same noise, the same lost
packets and the same babble for a given utterance, whatever the order in which utterances are processed.
"""

from __future__ import annotations

import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import numpy as np

from provenance import canonical_json, derived_rng, installed_version
from schemas import Error

if TYPE_CHECKING:
    from runner.operators.sources import NoiseSources

Status = Literal["applied", "failed", "fallback"]
STATUSES: tuple[Status, ...] = ("applied", "failed", "fallback")

# Field metadata marking an attribute bound at chain build time (noise material): never part of the spec.
BOUND: Mapping[str, bool] = {"bound": True}


class OperatorSpecError(Error, ValueError):
    """A spec naming no registered operator or carrying bad kwargs; the message names the spec."""

    def __init__(self, spec: object, problem: str) -> None:
        self.spec = spec
        self.problem = problem
        super().__init__(f"operator spec {_show(spec)}: {problem}")


@dataclass(frozen=True)
class Outcome:
    """What one operator did to one utterance; ``details`` holds realised figures (SNR, loss rate)."""

    status: Status
    reason: str
    details: Mapping[str, float | int | str | bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"outcome status must be one of {STATUSES}, got {self.status!r}")

    @classmethod
    def applied(cls, reason: str, **details: float | int | str | bool) -> Outcome:
        return cls("applied", reason, details)

    @classmethod
    def failed(cls, reason: str, **details: float | int | str | bool) -> Outcome:
        return cls("failed", reason, details)

    @classmethod
    def fallback(cls, reason: str, **details: float | int | str | bool) -> Outcome:
        return cls("fallback", reason, details)

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "details": dict(self.details)}


Result = tuple[np.ndarray, int, Outcome]


@dataclass(frozen=True)
class Operator(ABC):
    """A registered degradation. Subclasses are frozen dataclasses whose init fields are the spec kwargs.

    Field values are coerced to their declared types (an int given for a float field becomes a float, so
    ``{"snr_db": 5}`` and ``{"snr_db": 5.0}`` are one spec) and checked by ``check()``. Fields declared with
    ``metadata=BOUND`` hold material bound at chain build time and are not part of the spec.
    """

    name: ClassVar[str]
    # True where a valid realisation may leave the audio as it was (packet loss with no frame lost).
    unchanged_output_allowed: ClassVar[bool] = False

    def __post_init__(self) -> None:
        self._coerce_fields()
        self.check()

    def check(self) -> None:  # noqa: B027 (a hook: most operators accept everything their types allow)
        """Raise ValueError on kwargs out of range."""

    @abstractmethod
    def apply(self, wave: np.ndarray, sr: int, rng: np.random.Generator, utt_id: str | None) -> Result:
        """Degrade a non-empty, finite float32 mono wave; on failure return the input, failed."""

    def __call__(self, wave: np.ndarray, sr: int, rng: np.random.Generator, *, utt_id: str | None = None) -> Result:
        """Apply the operator; guard the input and make sure an unchanged output is never reported as applied.

        On a failed outcome the returned wave is the input and must not be scored.
        """
        if not isinstance(wave, np.ndarray) or wave.dtype != np.float32 or wave.ndim != 1:
            raise TypeError(f"{self.name}: wave must be a 1-D float32 numpy array")
        if isinstance(sr, bool) or not isinstance(sr, int | np.integer) or sr <= 0:
            raise TypeError(f"{self.name}: sample rate must be a positive int, got {sr!r}")
        sr = int(sr)
        if wave.size == 0:
            return wave, sr, Outcome.failed("input audio is empty")
        if not np.all(np.isfinite(wave)):
            return wave, sr, Outcome.failed("input audio has non-finite samples")
        out, out_sr, outcome = self.apply(wave, sr, rng, utt_id)
        if outcome.status != "applied":
            return out, out_sr, outcome
        if not np.all(np.isfinite(out)):
            return wave, sr, Outcome.failed(f"{self.name} produced non-finite samples")
        if not self.unchanged_output_allowed and out_sr == sr and np.array_equal(out, wave):
            return (
                out,
                out_sr,
                Outcome.fallback(f"output identical to input ({outcome.reason})", **outcome.details),
            )
        return out, out_sr, outcome

    def spec(self) -> dict[str, Any]:
        """The canonical serialised form ``{"name", "kwargs"}``, every kwarg included (defaults too)."""
        kwargs = {f.name: getattr(self, f.name) for f in fields(self) if f.init and not f.metadata.get("bound")}
        return {"name": self.name, "kwargs": kwargs}

    def describe(self) -> dict[str, Any]:
        """The spec plus what a manifest needs to name the realisation (synthetic, material digests)."""
        return self.spec()

    def stream_spec(self) -> dict[str, Any]:
        """The spec whose digest seeds this operator's random stream (``rng_for``): its own, unless it must draw
        what another operator draws on the same utterance (a control re-crafting an attack)."""
        return self.spec()

    def _coerce_fields(self) -> None:
        hints = typing.get_type_hints(type(self))
        for spec_field in fields(self):
            if not spec_field.init or spec_field.metadata.get("bound"):
                continue
            value = getattr(self, spec_field.name)
            object.__setattr__(self, spec_field.name, _coerce(spec_field.name, value, hints[spec_field.name]))


def _coerce(name: str, value: object, expected: object) -> object:
    """``value`` as field ``name``'s declared type (float, int, str, bool, Literal), or ValueError."""
    if typing.get_origin(expected) is Literal:
        choices = typing.get_args(expected)
        if value not in choices or isinstance(value, bool) != isinstance(choices[0], bool):
            raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
        return value
    if expected is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {value!r}")
        return value
    if expected is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        return value
    if expected is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        return float(value)
    if expected is str:
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {value!r}")
        return value
    raise TypeError(f"field {name}: unsupported spec type {expected!r}")


REGISTRY: dict[str, type[Operator]] = {}
OperatorType = TypeVar("OperatorType", bound=type[Operator])


def register(cls: OperatorType) -> OperatorType:
    """Class decorator: make an operator constructible from its spec name."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"operator name {cls.name!r} is registered twice")
    REGISTRY[cls.name] = cls
    return cls


def operator_from_spec(spec: Mapping[str, Any] | Operator, *, sources: NoiseSources | None = None) -> Operator:
    """Build an operator from ``{"name", "kwargs"}``; ``sources`` binds noise material to operators that take
    it.

    Raises ``OperatorSpecError`` naming the spec for an unknown name, a malformed spec or bad kwargs.
    """
    if isinstance(spec, Operator):
        return spec
    if not isinstance(spec, Mapping):
        raise OperatorSpecError(spec, "expected a mapping with keys 'name' and 'kwargs'")
    unknown_keys = set(spec) - {"name", "kwargs"}
    if unknown_keys or "name" not in spec:
        raise OperatorSpecError(spec, "expected exactly the keys 'name' and 'kwargs'")
    name, kwargs = spec["name"], spec.get("kwargs", {})
    if not isinstance(name, str) or name not in REGISTRY:
        raise OperatorSpecError(spec, f"unknown operator name {name!r}; known: {sorted(REGISTRY)}")
    if not isinstance(kwargs, Mapping) or not all(isinstance(key, str) for key in kwargs):
        raise OperatorSpecError(spec, "kwargs must be a mapping of names to values")
    cls = REGISTRY[name]
    bound_names = {f.name for f in fields(cls) if f.metadata.get("bound")}
    if bound_names & set(kwargs):
        raise OperatorSpecError(spec, f"{sorted(bound_names & set(kwargs))} are bound at chain build, not kwargs")
    allowed = {f.name for f in fields(cls) if f.init and not f.metadata.get("bound")}
    if set(kwargs) - allowed:
        raise OperatorSpecError(spec, f"unknown kwargs {sorted(set(kwargs) - allowed)}; allowed: {sorted(allowed)}")
    bound = {"sources": sources} if "sources" in bound_names else {}
    try:
        return cls(**kwargs, **bound)
    except (TypeError, ValueError) as error:
        raise OperatorSpecError(spec, str(error)) from error


def rng_for(seed: int, utt_id: str, spec: Mapping[str, Any] | Operator, occurrence: int = 0) -> np.random.Generator:
    """The random stream of one operator on one utterance, from a BLAKE3 digest of (seed, utt_id, spec); the spec
    is the operator's ``stream_spec`` (its own spec but for a control that draws what its attack draws).

    ``occurrence`` separates repeats of the same spec within one chain (0 for the first, left out of the
    digest then, so an operator draws the same realisation alone and inside a compound chain).
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")
    if not isinstance(utt_id, str):
        raise TypeError(f"utt_id must be a str, got {utt_id!r}")
    payload: dict[str, Any] = {"seed": seed, "spec": operator_from_spec(spec).stream_spec(), "utt_id": utt_id}
    if occurrence:
        payload["occurrence"] = occurrence
    return derived_rng(canonical_json(payload))


def package_version(name: str) -> str:
    """The installed version of a distribution, or "not installed", for an operator's description."""
    return installed_version(name) or "not installed"


def _show(spec: object) -> str:
    try:
        return canonical_json(spec).decode()
    except (TypeError, ValueError):
        return repr(spec)
