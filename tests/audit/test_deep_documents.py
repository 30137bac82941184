"""Every parser of a JSON or TOML document from a user or a bundle refuses what makes Python's parsers raise
something else (a nesting deeper than the recursion limit: RecursionError; a number of 5000 digits: ValueError)
with its own documented error, never a traceback. A bundle signed by its own key can carry either."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.bundle.signature import verify_statement
from audit.bundle.verified import StatementError
from provenance.dsse import EnvelopeError, parse_envelope
from provenance.manifest import read_json_object
from schemas.analysis import read_analysis
from schemas.bundle import BundleFileError, parse_json_object, parse_toml
from schemas.errors import InputError
from tests.audit.test_cli import EXAMPLE, invoke, one_line_error, write

DEEP_JSON = b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
HUGE_NUMBER_JSON = b'{"x": ' + b"9" * 5000 + b"}"
DEEP_TOML = b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n"


@pytest.mark.parametrize("data", [DEEP_JSON, HUGE_NUMBER_JSON, b'{"x": 1'])
def test_bundle_json_files_and_the_signed_payload(data: bytes) -> None:
    with pytest.raises(BundleFileError, match=r"^provenance/statement\.json: not JSON: [A-Za-z]+Error: "):
        parse_json_object("provenance/statement.json", data)
    with pytest.raises(StatementError, match="not JSON"):
        verify_statement(data)
    with pytest.raises(EnvelopeError, match="not JSON"):
        parse_envelope(data)


@pytest.mark.parametrize("data", [DEEP_JSON, HUGE_NUMBER_JSON])
def test_the_runners_json_files_read_for_the_manifest(data: bytes, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected a JSON object"):
        read_json_object(write(tmp_path / "checkpoints.json", data))


def test_bundle_toml_files_and_the_analysis_table() -> None:
    with pytest.raises(BundleFileError, match="nested too deeply"):
        parse_toml("config.toml", DEEP_TOML)
    assert read_analysis(DEEP_TOML.decode())[1] == ["not valid TOML: nested too deeply"]


@pytest.mark.parametrize("option", ["--claims", "--columns"])
def test_a_deep_toml_option_file_exits_2_with_one_line(option: str, tmp_path: Path) -> None:
    document = write(tmp_path / "deep.toml", DEEP_TOML)
    code, stdout, stderr = invoke("verify", str(EXAMPLE), option, str(document))
    assert code == 2
    assert stdout == ""
    one_line_error(stderr, document, "not valid TOML: nested too deeply")
