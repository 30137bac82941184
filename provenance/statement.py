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

from dataclasses import asdict, dataclass, fields
from typing import Any

from provenance.digests import Digest
from schemas import Error

__all__ = [
    "BUILDER_ID",
    "BUILD_TYPE",
    "CHECKPOINT_PREFIX",
    "PREDICATE_TYPE",
    "RECORD_PREFIX",
    "STATEMENT_TYPE",
    "PredicateShapeError",
    "RecordBinding",
    "build_predicate",
    "build_statement",
    "read_bindings",
    "read_checkpoints",
    "subject",
]

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


def subject(name: str, digest: Digest) -> dict[str, Any]:
    """An in-toto subject: the file's bundle name and its SHA-256 and BLAKE3 digests."""
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


class PredicateShapeError(Error, ValueError):
    """A predicate that does not have the shape ``build_predicate`` writes."""


_COUNT_FIELDS = ("applied", "failed", "fallback")
_BINDING_FIELDS = tuple(field.name for field in fields(RecordBinding))


def _binding(annotations: Any, index: int) -> RecordBinding:
    """One byproduct's annotations as a RecordBinding, every field of the type ``build_predicate`` writes."""
    where = f"record binding {index}"
    if not isinstance(annotations, dict):
        raise PredicateShapeError(f"{where}: the annotations are not an object")
    if set(annotations) != set(_BINDING_FIELDS):
        missing = sorted(set(_BINDING_FIELDS) - set(annotations))
        unknown = sorted(str(name) for name in set(annotations) - set(_BINDING_FIELDS))
        raise PredicateShapeError(f"{where}: missing fields {missing}, unknown fields {unknown}")
    for name in _BINDING_FIELDS:
        value = annotations[name]
        if name in _COUNT_FIELDS:
            ok = type(value) is int and value >= 0
        elif name == "operator_chains":
            ok = isinstance(value, list | tuple) and all(isinstance(chain, str) for chain in value)
        else:
            ok = isinstance(value, str)
        if not ok:
            raise PredicateShapeError(f"{where}: field {name} has a value of the wrong type: {str(value)[:80]!r}")
    return RecordBinding(**(annotations | {"operator_chains": tuple(annotations["operator_chains"])}))


def read_bindings(predicate: Any) -> dict[str, RecordBinding]:
    """record_id -> RecordBinding, read back from a predicate's byproducts (each field type-checked)."""
    try:
        byproducts = predicate["runDetails"]["byproducts"]
    except (KeyError, TypeError, IndexError) as error:
        raise PredicateShapeError(f"record bindings are not in the expected shape: {error!r}") from error
    if not isinstance(byproducts, list):
        raise PredicateShapeError("record bindings are not in the expected shape: byproducts is not a list")
    bindings: dict[str, RecordBinding] = {}
    for index, entry in enumerate(byproducts):
        if not isinstance(entry, dict) or "annotations" not in entry:
            raise PredicateShapeError(f"record binding {index} has no annotations")
        binding = _binding(entry["annotations"], index)
        if binding.record_id in bindings:
            raise PredicateShapeError(f"record {binding.record_id!r} is bound twice")
        bindings[binding.record_id] = binding
    return bindings


def read_checkpoints(predicate: Any) -> dict[str, str]:
    """Checkpoint label -> blake3, read back from the resolved dependencies."""
    try:
        dependencies = predicate["buildDefinition"]["resolvedDependencies"]
    except (KeyError, TypeError, IndexError) as error:
        raise PredicateShapeError(f"resolved dependencies are not in the expected shape: {error!r}") from error
    if not isinstance(dependencies, list):
        raise PredicateShapeError("resolved dependencies are not in the expected shape: not a list")
    checkpoints = {}
    for index, entry in enumerate(dependencies):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            raise PredicateShapeError(f"resolved dependency {index} has no name string")
        if name.startswith(CHECKPOINT_PREFIX):
            digest = entry.get("digest")
            blake3 = digest.get("blake3") if isinstance(digest, dict) else None
            if not isinstance(blake3, str):
                raise PredicateShapeError(f"checkpoint {name!r} has no blake3 digest string")
            checkpoints[name.removeprefix(CHECKPOINT_PREFIX)] = blake3
    return checkpoints
