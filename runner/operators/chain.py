"""Chains of operators: the compound conditions. A chain is serialised as the list of its operators' specs.

Each operator draws from its own stream ``rng_for(seed, utt_id, spec)``, so an operator realises the same
noise (or the same lost frames) alone and inside a compound chain, which keeps the four terms of an
interaction contrast comparable. The empty chain is the clean condition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from provenance import canonical_json, derived_digest, derived_id
from runner.operators.base import Operator, Outcome, Status, operator_from_spec, rng_for
from runner.operators.sources import NoiseSources

CHAIN_ID_HEX = 16


@dataclass(frozen=True)
class ChainResult:
    """The final wave of a chain and one outcome per operator run (a failure ends the chain)."""

    wave: np.ndarray
    sr: int
    outcomes: tuple[Outcome, ...]

    @property
    def status(self) -> Status:
        return chain_status(outcome.status for outcome in self.outcomes)


def chain_status(statuses: Iterable[str]) -> Status:
    """A chain's status from its operators': failed if any failed, else fallback if any fell back, else applied
    (also for the empty, clean chain)."""
    seen = set(statuses)
    if "failed" in seen:
        return "failed"
    return "fallback" if "fallback" in seen else "applied"


@dataclass(frozen=True)
class Chain:
    """Operators applied in order to one utterance."""

    operators: tuple[Operator, ...] = ()

    @classmethod
    def from_specs(cls, specs: Sequence[Mapping[str, Any]], *, sources: NoiseSources | None = None) -> Chain:
        """Build from a list of ``{"name", "kwargs"}``; ``sources`` is bound to babble and music operators."""
        return cls(tuple(operator_from_spec(spec, sources=sources) for spec in specs))

    def specs(self) -> list[dict[str, Any]]:
        return [operator.spec() for operator in self.operators]

    @property
    def chain_id(self) -> str:
        return chain_id(self.specs())

    def describe(self) -> list[dict[str, Any]]:
        return [operator.describe() for operator in self.operators]

    def fingerprint(self) -> str:
        """BLAKE3 of the canonical description: the operators, their codec versions and the digests of the
        material they read (music, babble table), so a cache key built on it changes when any of those does."""
        return derived_digest(canonical_json(self.describe()))

    def __call__(self, wave: np.ndarray, sr: int, *, seed: int, utt_id: str) -> ChainResult:
        """Apply every operator in order, each with its own derived stream; stop at the first failure."""
        outcomes: list[Outcome] = []
        seen: Counter[bytes] = Counter()
        for operator in self.operators:
            key = canonical_json(operator.spec())
            rng = rng_for(seed, utt_id, operator, occurrence=seen[key])
            seen[key] += 1
            wave, sr, outcome = operator(wave, sr, rng, utt_id=utt_id)
            outcomes.append(outcome)
            if outcome.status == "failed":
                break
        return ChainResult(wave, sr, tuple(outcomes))


def chain_id(specs: Sequence[Mapping[str, Any] | Operator]) -> str:
    """First 16 hex digits of the BLAKE3 of the canonical JSON of the chain's normalised specs."""
    normalised = [operator_from_spec(spec).spec() for spec in specs]
    return derived_id(canonical_json(normalised), CHAIN_ID_HEX)
