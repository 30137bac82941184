"""Property-based fuzzing of the parsers that read a bundle's signed (so attacker-supplied) provenance: the DSSE
envelope and the in-toto statement's predicate. Whatever the input, only the documented error escapes
(``EnvelopeError``, ``PredicateShapeError``), and what is returned has the documented types; an envelope that
verifies carries exactly the signed payload."""

from __future__ import annotations

import base64
import contextlib
import json
from dataclasses import asdict, fields
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provenance.dsse import (
    IN_TOTO_PAYLOAD_TYPE,
    Envelope,
    EnvelopeError,
    parse_envelope,
    sign_envelope,
    verify_envelope,
)
from provenance.statement import (
    CHECKPOINT_PREFIX,
    PredicateShapeError,
    RecordBinding,
    build_predicate,
    read_bindings,
    read_checkpoints,
)
from tests.fuzzing import examples

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PAYLOAD = b'{"_type": "https://in-toto.io/Statement/v1"}'
SIGNED = sign_envelope(PAYLOAD, KEY)
FUZZ = settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text that includes lone surrogates (JSON's "\ud800" escapes decode to them) and control characters.
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.sampled_from(
    ["", "\ud800", "keyid", "sig", "payload", "payloadType", IN_TOTO_PAYLOAD_TYPE, "record_id", "annotations"]
)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=20
)
BASE64 = st.binary(max_size=80).map(lambda data: base64.b64encode(data).decode("ascii"))


def envelopes() -> st.SearchStrategy[Any]:
    """Objects shaped like an envelope, with each field sometimes right, sometimes any JSON value."""
    signature = st.fixed_dictionaries({}, optional={"keyid": TEXT | JSON, "sig": BASE64 | JSON})
    return st.fixed_dictionaries(
        {},
        optional={
            "payload": BASE64 | JSON,
            "payloadType": st.just(IN_TOTO_PAYLOAD_TYPE) | TEXT | JSON,
            "signatures": st.lists(signature | JSON, max_size=3) | JSON,
        },
    )


def check_envelope(envelope: Envelope) -> None:
    assert isinstance(envelope.payload, bytes) and isinstance(envelope.payload_type, str)
    envelope.payload_type.encode("utf-8")  # printable in a report, hashable into the PAE
    for keyid, signature in envelope.signatures:
        assert isinstance(keyid, str) and isinstance(signature, bytes)
        keyid.encode("utf-8")
    try:
        verify_envelope(envelope, KEY.public_key(), IN_TOTO_PAYLOAD_TYPE)
    except EnvelopeError:
        return
    assert (envelope.payload, envelope.payload_type) == (PAYLOAD, IN_TOTO_PAYLOAD_TYPE)


@FUZZ
@given(line=st.binary(max_size=200))
def test_any_bytes_parse_or_raise_envelope_error(line: bytes) -> None:
    with contextlib.suppress(EnvelopeError):
        check_envelope(parse_envelope(line))


@FUZZ
@given(document=envelopes() | JSON)
def test_any_json_parses_or_raises_envelope_error(document: Any) -> None:
    with contextlib.suppress(EnvelopeError):
        check_envelope(parse_envelope(json.dumps(document).encode()))


@FUZZ
@given(position=st.integers(0, len(SIGNED) - 2), value=st.integers(0, 255))
def test_a_changed_byte_of_a_signed_envelope_never_verifies_another_payload(position: int, value: int) -> None:
    line = bytearray(SIGNED)
    line[position] = value
    with contextlib.suppress(EnvelopeError):
        check_envelope(parse_envelope(bytes(line)))


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"payload": ' + b"1" * 5000 + b"}",
        SIGNED.replace(IN_TOTO_PAYLOAD_TYPE.encode(), b"\\ud800"),
        SIGNED.replace(b'"keyid":"', b'"keyid":"\\udfff'),
        SIGNED.replace(b'"keyid":"', b'"keyid":["').replace(b'","sig"', b'"],"sig"'),
    ],
)
def test_pathological_json_is_an_envelope_error(line: bytes) -> None:
    with pytest.raises(EnvelopeError):
        parse_envelope(line)


def _binding(**changes: Any) -> dict[str, Any]:
    record = RecordBinding(
        record_id="r1",
        trial_list_id="t1",
        trial_list_path="trials/t1.csv",
        trial_list_blake3="b" * 64,
        scores_path="scores/r1.parquet",
        scores_sha256="s" * 64,
        scores_blake3="c" * 64,
        model="m1",
        checkpoint_blake3="d" * 64,
        operator_chains=("pink",),
        applied=3,
        failed=0,
        fallback=0,
    )
    return asdict(record) | {"operator_chains": ["pink"]} | changes


FIELD_NAMES = [field.name for field in fields(RecordBinding)]


def predicates() -> st.SearchStrategy[Any]:
    """Predicates shaped like build_predicate's, with annotations and checkpoint entries sometimes mistyped."""
    annotations = st.builds(
        lambda name, value, drop: {k: v for k, v in _binding(**{name: value}).items() if k != drop},
        st.sampled_from(FIELD_NAMES),
        JSON,
        st.none() | st.sampled_from(FIELD_NAMES),
    )
    byproduct = st.fixed_dictionaries({"annotations": annotations | JSON}) | JSON
    dependency = st.fixed_dictionaries(
        {"name": st.sampled_from([f"{CHECKPOINT_PREFIX}m1", "trials/t1.csv"]) | JSON, "digest": JSON}
    )
    return st.fixed_dictionaries(
        {
            "runDetails": st.fixed_dictionaries({"byproducts": st.lists(byproduct, max_size=3) | JSON}) | JSON,
            "buildDefinition": st.fixed_dictionaries({"resolvedDependencies": st.lists(dependency, max_size=3) | JSON})
            | JSON,
        }
    )


def check_bindings(bindings: dict[str, RecordBinding]) -> None:
    for record_id, binding in bindings.items():
        assert record_id == binding.record_id
        for field in fields(RecordBinding):
            value = getattr(binding, field.name)
            if field.name in ("applied", "failed", "fallback"):
                assert type(value) is int and value >= 0
            elif field.name == "operator_chains":
                assert isinstance(value, tuple) and all(isinstance(chain, str) for chain in value)
            else:
                assert isinstance(value, str), (field.name, value)


@FUZZ
@given(predicate=predicates() | JSON)
def test_any_predicate_gives_typed_bindings_or_a_shape_error(predicate: Any) -> None:
    with contextlib.suppress(PredicateShapeError):
        check_bindings(read_bindings(predicate))
    try:
        checkpoints = read_checkpoints(predicate)
    except PredicateShapeError:
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in checkpoints.items())


def test_the_written_predicate_reads_back() -> None:
    binding = RecordBinding(**(_binding() | {"operator_chains": ("pink",)}))
    predicate = build_predicate(
        run_config={},
        run_id="run",
        builder_version="0",
        operator_policy="drop",
        checkpoints={"m1": "d" * 64},
        trial_lists={},
        records=[binding],
    )
    assert read_bindings(predicate) == {"r1": binding}
    predicate = json.loads(json.dumps(predicate))  # as the audit reads it: JSON, lists for tuples
    assert read_bindings(predicate) == {"r1": binding}
    assert read_checkpoints(predicate) == {"m1": "d" * 64}


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"applied": "3"}, "applied"),
        ({"applied": True}, "applied"),
        ({"failed": -1}, "failed"),
        ({"record_id": ["r1"]}, "record_id"),
        ({"operator_chains": "pink"}, "operator_chains"),
        ({"extra": 1}, "extra"),
    ],
)
def test_a_mistyped_binding_is_a_shape_error_naming_the_field(changes: dict[str, Any], problem: str) -> None:
    predicate = {"runDetails": {"byproducts": [{"annotations": _binding(**changes)}]}}
    with pytest.raises(PredicateShapeError, match=problem):
        read_bindings(predicate)


def test_a_record_bound_twice_is_a_shape_error() -> None:
    predicate = {"runDetails": {"byproducts": [{"annotations": _binding()}, {"annotations": _binding(model="m2")}]}}
    with pytest.raises(PredicateShapeError, match="r1"):
        read_bindings(predicate)
