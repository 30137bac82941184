"""What degraded, counted: each chain realisation's outcome, each side's for its encoder, and ``operators.json``
(chains, their material and outcome counts, per encoder the sides it could not embed, per record its sides)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from runner.cache import CachedEmbedding
from runner.design import ChainSpecs, RunConfig
from runner.operators import Chain, NoiseSources, chain_status
from runner.plan import RecordPlan, Side

__all__ = ["chain_outcome", "operator_report", "side_outcome"]


def chain_outcome(entry: CachedEmbedding) -> str:
    """``applied`` / ``fallback`` / ``failed`` for a whole chain realisation, from its operators' outcomes."""
    return chain_status(outcome["status"] for outcome in entry.operator_outcomes)


def side_outcome(entry: CachedEmbedding) -> str:
    """A side's status for one encoder: ``failed`` without an embedding (its chain failed, or the encoder could not
    embed it), else its chain's."""
    return "failed" if entry.vector is None else chain_outcome(entry)


def operator_report(
    config: RunConfig,
    plans: list[RecordPlan],
    specs: dict[str, ChainSpecs],
    embeddings: dict[tuple[Side, str], CachedEmbedding],
    sources: dict[str, NoiseSources],
) -> dict[str, Any]:
    """operators.json: each chain's description (synthetic or real material, its digests, codec versions) and
    outcome counts per chain (over utterances), per encoder the sides it could not embed and why (over utterances
    and chains), and per record the outcome of its sides for its encoder (a side counts as failed when its chain
    failed or its encoder could not embed it).

    In a run of several corpora a chain is reported per corpus (``CORPUS:CHAIN_ID``), since its material (babble)
    and its outcomes belong to that corpus, and ``sources`` is keyed by corpus."""
    single = len(sources) == 1

    def key(corpus: str, identifier: str) -> str:
        return identifier if single else f"{corpus}:{identifier}"

    chains: dict[str, dict[str, Any]] = {}
    counted: set[Side] = set()
    encoder_failures: dict[str, Counter[str]] = {spec.label: Counter() for spec in config.encoders}
    for (side, label), entry in embeddings.items():
        if (reason := entry.encoder_failure) is not None:
            encoder_failures[label][reason] += 1
        if side in counted:
            continue
        counted.add(side)
        status = chain_outcome(entry)
        chain = chains.setdefault(
            key(side.corpus, side.chain_id),
            {"applied": 0, "failed": 0, "fallback": 0, "reasons": Counter(), "corpus": side.corpus},
        )
        chain.setdefault("spec", list(specs[side.chain_id]))
        chain[status] += 1
        for outcome in entry.operator_outcomes:
            if outcome["status"] != "applied":
                chain["reasons"][outcome["reason"]] += 1
    records = {}
    for plan in plans:
        sides = set(plan.enrol_sides()) | set(plan.test_sides())
        counts = Counter(side_outcome(embeddings[(side, plan.encoder.label)]) for side in sides)
        records[plan.record_id] = {
            "chains": sorted({key(side.corpus, side.chain_id) for side in sides}),
            **{status: counts.get(status, 0) for status in ("applied", "failed", "fallback")},
        }
    for chain in chains.values():
        chain["reasons"] = dict(sorted(chain["reasons"].items()))
        bound = sources[chain.pop("corpus")]
        chain["description"] = Chain.from_specs(chain["spec"], sources=bound).describe()
    return {
        "policy": config.failure_policy,
        "sources": next(iter(sources.values())).describe()
        if single
        else {name: bound.describe() for name, bound in sorted(sources.items())},
        "chains": dict(sorted(chains.items())),
        "encoders": {
            label: {"failed": sum(reasons.values()), "reasons": dict(sorted(reasons.items()))}
            for label, reasons in sorted(encoder_failures.items())
        },
        "records": records,
    }
