"""The in-toto Statement v1 of a run, with a predicate in SLSA provenance v1 shape.

Subjects are every file of the bundle, ``{name: relative POSIX path, digest: {sha256, blake3}}``. The
predicate:

- ``buildDefinition.buildType``: ``BUILD_TYPE``; ``externalParameters.runConfig``: the run configuration;
  ``internalParameters.operatorPolicy``: the declared drop/fail policy for operator failures;
- ``buildDefinition.resolvedDependencies``: one ResourceDescriptor per checkpoint (``name:
  checkpoint:<label>``, ``digest: {blake3}``) and per trial list (``name: trials/<id>.csv``);
- ``runDetails.builder``/``metadata.invocationId``: who ran it and the run id;
- ``runDetails.byproducts``: one ResourceDescriptor per record (``name: record:<record_id>``, digest of its
  scores file) whose ``annotations`` hold the digests it depends on and its operator outcome counts
  (``RecordBinding``).

Building and reading the predicate live together here, so its shape is defined once.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from provenance.digests import Digest

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://interbias-sv.org/run/v1"
BUILDER_ID = "https://interbias-sv.org/runner"
CHECKPOINT_PREFIX = "checkpoint:"
RECORD_PREFIX = "record:"


@dataclass(frozen=True)
class RecordBinding:
    """What one result row depends on: its trial list, scores file and checkpoint, and its operator counts."""

    record_id: str
    trial_list_id: str
    trial_list_path: str
    trial_list_blake3: str
    scores_path: str
    scores_sha256: str
    scores_blake3: str
    model: str
    checkpoint_blake3: str
    operator_chains: tuple[str, ...]
    applied: int
    failed: int
    fallback: int


# The type of each field of a RecordBinding as read back from JSON (a signed payload is parsed, never trusted).
_BINDING_TYPES: dict[str, type] = {
    **{name: str for name in ("record_id", "trial_list_id", "trial_list_path", "trial_list_blake3", "scores_path")},
    **{name: str for name in ("scores_sha256", "scores_blake3", "model", "checkpoint_blake3")},
    **{name: int for name in ("applied", "failed", "fallback")},
}


def subject(name: str, digest: Digest) -> dict[str, Any]:
    return {"name": name, "digest": {"sha256": digest.sha256, "blake3": digest.blake3}}


def build_predicate(
    *,
    run_config: dict[str, Any],
    run_id: str,
    builder_version: str,
    operator_policy: str,
    checkpoints: dict[str, str],
    trial_lists: dict[str, tuple[str, Digest]],
    records: list[RecordBinding],
) -> dict[str, Any]:
    """The SLSA-shaped predicate. ``checkpoints``: label -> blake3; ``trial_lists``: id -> (path, digest)."""
    dependencies = [
        {"name": f"{CHECKPOINT_PREFIX}{label}", "digest": {"blake3": digest}}
        for label, digest in sorted(checkpoints.items())
    ]
    dependencies += [
        {**subject(path, digest), "annotations": {"trialListId": list_id}}
        for list_id, (path, digest) in sorted(trial_lists.items())
    ]
    byproducts = [
        {
            "name": f"{RECORD_PREFIX}{record.record_id}",
            "digest": {"sha256": record.scores_sha256, "blake3": record.scores_blake3},
            "annotations": asdict(record),
        }
        for record in sorted(records, key=lambda binding: binding.record_id)
    ]
    return {
        "buildDefinition": {
            "buildType": BUILD_TYPE,
            "externalParameters": {"runConfig": run_config},
            "internalParameters": {"operatorPolicy": operator_policy},
            "resolvedDependencies": dependencies,
        },
        "runDetails": {
            "builder": {"id": BUILDER_ID, "version": {"interbias-sv": builder_version}},
            "metadata": {"invocationId": run_id},
            "byproducts": byproducts,
        },
    }


def build_statement(subjects: list[tuple[str, Digest]], predicate: dict[str, Any]) -> dict[str, Any]:
    """An in-toto Statement v1 over ``subjects`` (sorted by name) with the run predicate."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [subject(name, digest) for name, digest in sorted(subjects)],
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }


class PredicateShapeError(ValueError):
    """A predicate that does not have the shape ``build_predicate`` writes."""


def read_bindings(predicate: dict[str, Any]) -> dict[str, RecordBinding]:
    """record_id -> RecordBinding, read back from a predicate's byproducts."""
    try:
        byproducts = predicate["runDetails"]["byproducts"]
        bindings = {}
        for entry in byproducts:
            fields = dict(entry["annotations"])
            chains = fields["operator_chains"]
            if not isinstance(chains, list) or not all(isinstance(chain, str) for chain in chains):
                raise TypeError("operator_chains is not a list of strings")
            fields["operator_chains"] = tuple(chains)
            binding = RecordBinding(**fields)
            for name, kind in _BINDING_TYPES.items():
                value = getattr(binding, name)
                if not isinstance(value, kind) or isinstance(value, bool):
                    raise TypeError(f"{name} of record {str(binding.record_id)[:80]!r} is not {kind.__name__}")
            bindings[binding.record_id] = binding
    except (KeyError, TypeError, ValueError) as error:
        raise PredicateShapeError(f"record bindings are not in the expected shape: {error!r}") from error
    return bindings


def read_checkpoints(predicate: dict[str, Any]) -> dict[str, str]:
    """Checkpoint label -> blake3, read back from the resolved dependencies."""
    try:
        return {
            entry["name"].removeprefix(CHECKPOINT_PREFIX): entry["digest"]["blake3"]
            for entry in predicate["buildDefinition"]["resolvedDependencies"]
            if entry["name"].startswith(CHECKPOINT_PREFIX)
        }
    except (KeyError, TypeError, AttributeError) as error:
        raise PredicateShapeError(f"resolved dependencies are not in the expected shape: {error!r}") from error
