"""Hostile paths given to `audit verify` and `audit keygen`: each is refused with one line on stderr and exit 2,
before any work is done, and never with a traceback or a hang.

Non-regular inputs: a FIFO (a plain open blocks forever), a socket, a character device (/dev/zero never ends),
a folder, a symlink to a FIFO. Unwritable outputs: a file where a folder is expected, a folder whose parent is
a file, a read-only mount, /proc and /sys, a folder inside the bundle being audited. Hostile names in a table's
cells: control characters and a script the figures' font lacks.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from provenance.keys import key_id, load_private_key, load_public_key
from schemas.errors import InputError
from tests.audit.test_cli import EXAMPLE, ROOT, clean_table, invoke, one_line_error, write


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe; should anything open it for reading, a writer opens and closes it at once, so that a
    regression fails the test (the reader sees an empty file) instead of hanging the suite."""
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    done = threading.Event()

    def unblock() -> None:
        while not done.wait(0.05):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # ENXIO: nobody is reading, as it should be
                continue

    watchdog = threading.Thread(target=unblock, daemon=True)
    watchdog.start()
    yield path
    done.set()
    watchdog.join()


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "sock.csv"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    yield path
    server.close()


def _non_regular(kind: str, tmp_path: Path, fifo: Path, unix_socket: Path) -> tuple[Path, str]:
    """The path of one kind of non-regular file and the words the error must use."""
    if kind == "fifo":
        return fifo, "is a named pipe (FIFO), not a regular file"
    if kind == "symlink to a fifo":
        link = tmp_path / "link.csv"
        link.symlink_to(fifo)
        return link, "is a named pipe (FIFO), not a regular file"
    if kind == "socket":
        return unix_socket, "is a socket, not a regular file"
    if kind == "device":
        return Path("/dev/zero"), "is a character device, not a regular file"
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    return folder, "is a directory"


KINDS = ["fifo", "symlink to a fifo", "socket", "device", "directory"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("option", ["results", "--columns", "--claims", "--trusted-keys"])
def test_a_non_regular_input_file_exits_2_with_one_line(
    kind: str, option: str, tmp_path: Path, fifo: Path, unix_socket: Path
) -> None:
    path, problem = _non_regular(kind, tmp_path, fifo, unix_socket)
    args = ["verify", str(path)] if option == "results" else ["verify", str(clean_table(tmp_path)), option, str(path)]
    code, stdout, stderr = invoke(*args)
    assert code == 2
    assert stdout == ""
    one_line_error(stderr, path, problem)


@pytest.mark.parametrize("kind", KINDS)
def test_a_non_regular_key_exits_2_before_the_audit_runs(
    kind: str, tmp_path: Path, fifo: Path, unix_socket: Path
) -> None:
    path, problem = _non_regular(kind, tmp_path, fifo, unix_socket)
    (tmp_path / "bundle").mkdir()
    # The results path does not exist: the error about --key shows that it was checked first.
    code, stdout, stderr = invoke(
        "verify", str(tmp_path / "absent.csv"), "--bundle", str(tmp_path / "bundle"), "--key", str(path)
    )
    assert code == 2
    assert stdout == ""
    one_line_error(stderr, path, problem)


def test_a_key_that_is_not_a_public_key_or_without_a_bundle_exits_2(tmp_path: Path) -> None:
    (tmp_path / "bundle").mkdir()
    garbage = write(tmp_path / "key.pub", "not a key\n")
    code, _, stderr = invoke("verify", str(EXAMPLE), "--bundle", str(tmp_path / "bundle"), "--key", str(garbage))
    assert code == 2
    one_line_error(stderr, garbage, "not a PEM public key")
    code, _, stderr = invoke("verify", str(EXAMPLE), "--key", str(garbage))
    assert code == 2
    one_line_error(stderr, garbage, "give --bundle too")


@pytest.mark.parametrize("kind", KINDS)
def test_a_non_regular_key_file_is_an_input_error(kind: str, tmp_path: Path, fifo: Path, unix_socket: Path) -> None:
    path, problem = _non_regular(kind, tmp_path, fifo, unix_socket)
    with pytest.raises(InputError, match="expected a PEM public key") as public:
        load_public_key(path)
    with pytest.raises(InputError, match="expected a PEM private key") as private:
        load_private_key(path)
    assert problem in public.value.line() and problem in private.value.line()


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody can write to: a read-only tmpfs when this process may mount one (root in CI and here),
    else a folder without write permission (which stops any user but root), else /sys (root may not create
    files there either)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
        yield folder
        folder.chmod(stat.S_IRWXU)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        yield Path("/sys")
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("where", ["a file", "parent is a file", "read-only", "proc", "sys", "dangling symlink"])
def test_an_unwritable_out_exits_2_before_the_audit_runs(where: str, tmp_path: Path, read_only_folder: Path) -> None:
    table = write(tmp_path / "table.csv", "x\n")
    out = {
        "a file": table,
        "parent is a file": table / "report",
        "read-only": read_only_folder / "report",
        "proc": Path("/proc/report"),
        "sys": Path("/sys/report"),
        "dangling symlink": tmp_path / "link",
    }[where]
    if where == "dangling symlink":
        out.symlink_to(tmp_path / "absent" / "folder")
    # The results path does not exist: the error about --out shows that it was checked first.
    code, stdout, stderr = invoke("verify", str(tmp_path / "absent.csv"), "--out", str(out))
    assert code == 2
    assert stdout == ""
    one_line_error(stderr, out, "cannot write here")
    assert list(tmp_path.glob("**/.write-probe.*")) == []


def test_out_inside_the_bundle_is_refused_except_its_report_folder(tmp_path: Path) -> None:
    """Only ``BUNDLE/report`` (never read by the audit) may take the report: not the bundle itself, another of its
    folders, a folder under ``report/``, or a ``report`` link that resolves into another of its folders."""
    bundle = tmp_path / "bundle"
    (bundle / "scores").mkdir(parents=True)
    outs = (bundle, bundle / "scores", bundle / "provenance" / "new", bundle / "report" / "sub", bundle / "reports")
    for out in outs:
        code, stdout, stderr = invoke("verify", str(EXAMPLE), "--bundle", str(bundle), "--out", str(out))
        assert code == 2
        assert stdout == ""
        one_line_error(stderr, out, f"is inside the bundle folder {bundle}; write the report to {bundle / 'report'}")
    (bundle / "report").symlink_to(bundle / "scores")
    code, _, stderr = invoke("verify", str(EXAMPLE), "--bundle", str(bundle), "--out", str(bundle / "report"))
    assert code == 2 and "is inside the bundle folder" in stderr
    assert sorted(path.name for path in bundle.iterdir()) == ["report", "scores"]
    assert list((bundle / "scores").iterdir()) == []


def test_out_as_the_bundles_report_folder_passes_the_checks(tmp_path: Path) -> None:
    from audit.cli import check_options

    (tmp_path / "bundle").mkdir()
    check_options(tmp_path / "bundle" / "report", tmp_path / "bundle", None)
    check_options(tmp_path / "bundle" / "provenance" / ".." / "report", tmp_path / "bundle", None)
    assert list((tmp_path / "bundle").iterdir()) == []  # nothing is made before the audit


def test_out_beside_the_bundle_is_accepted(tmp_path: Path) -> None:
    """A folder whose name merely starts with the bundle's is not inside it (paths, not strings, compared)."""
    from audit.cli import check_options

    (tmp_path / "bundle").mkdir()
    check_options(tmp_path / "bundle-report", tmp_path / "bundle", None)
    check_options(tmp_path / "bundle" / ".." / "report", tmp_path / "bundle", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]  # nothing is made before the audit


@pytest.mark.parametrize("command", ["verify", "scores"])
def test_a_figures_link_in_out_exits_2_before_the_audit_and_writes_nothing_through_it(
    command: str, tmp_path: Path
) -> None:
    target = tmp_path / "bundle"
    target.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "figures").symlink_to(target, target_is_directory=True)
    absent = tmp_path / "absent.csv"  # the audit's own input is absent: the --out error shows it came first
    arguments = [str(absent)] if command == "verify" else [str(absent), str(absent)]
    code, stdout, stderr = invoke(command, *arguments, "--out", str(out))
    assert code == 2 and not stdout
    one_line_error(stderr, out / "figures", "a link: --out may hold only an earlier report")
    assert list(target.iterdir()) == [] and sorted(p.name for p in out.iterdir()) == ["figures"]


def test_keygen_to_an_unwritable_path_exits_2(tmp_path: Path, read_only_folder: Path) -> None:
    for private, public in (
        (read_only_folder / "k.pem", tmp_path / "k.pub"),
        (tmp_path / "k.pem", read_only_folder / "k.pub"),
        (Path("/proc/k.pem"), tmp_path / "k.pub"),
    ):
        code, stdout, stderr = invoke("keygen", str(private), str(public))
        assert code == 2
        assert stdout == ""
        unwritable = private if private.parent != tmp_path else public
        one_line_error(stderr, unwritable, "cannot write here")
        assert not private.exists() and not public.exists()  # nothing half written


@pytest.mark.parametrize("existing", ["private", "public"])
def test_keygen_refuses_to_overwrite_either_key(existing: str, tmp_path: Path) -> None:
    private, public = tmp_path / "k.pem", tmp_path / "k.pub"
    target = private if existing == "private" else public
    target.write_text("an earlier key\n")
    code, stdout, stderr = invoke("keygen", str(private), str(public))
    assert code == 2
    assert stdout == ""
    one_line_error(stderr, target, f"refusing to overwrite a {existing} key")
    assert target.read_text() == "an earlier key\n"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_keygen_refuses_one_file_for_both_keys(tmp_path: Path) -> None:
    code, _, stderr = invoke("keygen", str(tmp_path / "k"), str(tmp_path / "sub" / ".." / "k"))
    assert code == 2
    one_line_error(stderr, tmp_path / "sub" / ".." / "k", "two different files")
    assert list(tmp_path.iterdir()) == []


def test_keygen_writes_a_pair_that_loads(tmp_path: Path) -> None:
    code, stdout, _ = invoke("keygen", str(tmp_path / "keys" / "k.pem"), str(tmp_path / "keys" / "k.pub"))
    assert code == 0
    identifier = stdout.split()[2].rstrip(":")
    assert key_id(load_public_key(tmp_path / "keys" / "k.pub")) == identifier
    assert key_id(load_private_key(tmp_path / "keys" / "k.pem").public_key()) == identifier


UTF16_TABLE = "record_id,experiment,model,corpus,condition,eer,n_target,n_nontarget\nr1,E14,Zoë,c1,clean,0.1,100,1000\n"


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [
        ("utf-8", b"\xef\xbb\xbf"),
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("utf-16-le", b""),
        ("utf-16-be", b""),
    ],
)
def test_utf16_and_utf8_with_a_byte_order_mark_are_read(encoding: str, prefix: bytes, tmp_path: Path) -> None:
    """Spreadsheet programs export "Unicode text" as UTF-16; the table reads the same as its UTF-8 original."""
    table = write(tmp_path / "results.csv", prefix + UTF16_TABLE.encode(encoding))
    code, stdout, stderr = invoke("verify", str(table), "--json")
    assert (code, stderr) == (0, "")
    report = json.loads(stdout)
    assert report["aggregates"]["per_encoder"][0]["model"] == "Zoë"
    assert report["source"]["n_rows"] == 1


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\xff\xfe" + "r,\n".encode("utf-16-le") + b"\x00\xd8", "not UTF-16 text at byte 8"),  # a lone surrogate
        ("eer,\x01\x02\n".encode("utf-16-le"), "binary file"),  # controls: not text in any encoding
        (b"\x00\x00\x00\x01\x00\x02", "binary file"),
        (b"\xff\xfe" + " \n".encode("utf-16-le"), "empty file"),
    ],
)
def test_bad_utf16_is_named(content: bytes, problem: str, tmp_path: Path) -> None:
    table = write(tmp_path / "results.csv", content)
    code, _, stderr = invoke("verify", str(table))
    assert code == 2
    one_line_error(stderr, table, problem)


def run_with_file_size_limit(limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    """The audit CLI in a process whose files cannot grow past ``limit`` bytes: a write fails with EFBIG as
    on a full disk (SIGXFSZ ignored, so the write returns the error instead of killing the process)."""

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "audit.cli", *args],
        preexec_fn=limit_file_size,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


@pytest.mark.slow
def test_a_report_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = run_with_file_size_limit(3000, "verify", str(clean_table(tmp_path)), "--out", str(out))
    assert done.returncode == 2
    assert done.stdout == ""
    one_line_error(done.stderr, out, "cannot write the report: File too large")
    assert list(out.iterdir()) == []  # no partial report, no temporary file


def test_a_key_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    private, public = tmp_path / "k.pem", tmp_path / "k.pub"
    done = run_with_file_size_limit(100, "keygen", str(private), str(public))  # a PEM key is over 100 bytes
    assert done.returncode == 2
    one_line_error(done.stderr, private, "cannot write the key: File too large")
    assert list(tmp_path.iterdir()) == []


def test_names_with_control_characters_or_glyphs_the_font_lacks_get_every_figure(tmp_path: Path) -> None:
    """Models and conditions named in a script DejaVu Sans lacks (CN-Celeb's Chinese conditions) or holding a tab or
    U+0001 (a newline too, in a quoted cell): the report and every figure are written, never an internal error (the
    figures measured such names by a glyph the font does not have); the control characters are drawn as their
    escapes, so every SVG is still XML, and written as their escapes in report.md and report.html."""
    import pandas as pd

    table = pd.read_csv(EXAMPLE)
    table["model"] = table["model"].astype(str) + "中\t"
    table["condition"] = table["condition"].astype(str) + "\x01清晰\n"
    table.to_csv(tmp_path / "results.csv", index=False)
    clean = invoke("verify", str(EXAMPLE), "--out", str(tmp_path / "clean"))
    code, _, stderr = invoke("verify", str(tmp_path / "results.csv"), "--out", str(tmp_path / "report"))
    assert code in (0, 1) and "internal error" not in stderr, stderr
    names = sorted(path.name for path in (tmp_path / "report" / "figures").glob("*.svg"))
    assert clean[0] in (0, 1) and names == sorted(path.name for path in (tmp_path / "clean" / "figures").glob("*.svg"))
    for name in names:
        ET.parse(tmp_path / "report" / "figures" / name)
    assert "\\x01清晰\\n" in (tmp_path / "report" / "figures" / "eer_heatmap.svg").read_text(encoding="utf-8")
    for document in ("report.md", "report.html"):  # the escape, not the raw control character; tabs are kept
        text = (tmp_path / "report" / document).read_text(encoding="utf-8")
        assert "\x01" not in text and "\\x01清晰" in text and "中\t" in text
