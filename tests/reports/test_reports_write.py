"""write_report end to end: files, reading order, figures, determinism, atomicity, light import."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from PIL import Image

from provenance.atomic import write_files_into
from reports import ReportShapeError, write_report
from schemas.errors import InputError
from tests.reports.sample_reports import full_report, minimal_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("report")
    return out, write_report(full_report(), out)


def test_writes_the_four_outputs(written: tuple[Path, list[Path]]) -> None:
    out, paths = written
    figures = ["ie_vs_prediction", "gap_vs_snr", "interaction_plots"]
    assert [path.relative_to(out).as_posix() for path in paths] == [
        "report.json",
        "report.md",
        "report.html",
        *(f"figures/{name}.png" for name in figures),
        *(f"figures/{name}.svg" for name in figures),  # each PNG beside its SVG
    ]
    assert json.loads((out / "report.json").read_text())["aggregates"]["per_experiment"][1]["eer_sd"] is None


@pytest.mark.parametrize("name", ["report.md", "report.html"])
def test_every_flag_and_section_appears_in_reading_order(written: tuple[Path, list[Path]], name: str) -> None:
    text = (written[0] / name).read_text()
    if name == "report.md":
        text = re.sub(r"\\([!-/:-@[-`{-~])", r"\1", text)  # as read: a backslash-escaped punctuation mark
    # Reviewer order: verdict, headline results, contents, figures, flags, statistics, claims; then the appendix:
    # what was run, bundle checks, aggregates, contrasts.
    markers = [
        "Verdict: FAIL: eer-above-chance: EERs above 0.5",
        "Headline results",
        "Interaction summary",
        "Contents",
        "Figures",
        "Flags",
        "eer-above-chance",
        "missing-provenance",
        "coupled-correlation",
        "Speaker-cluster bootstrap",
        "E13/wavlm",
        "Published claims",
        "Appendix: what was run",
        "Configuration",
        "ratio.min_denominator",
        "Appendix: bundle checks",
        "Bundle signature",
        "Provenance coverage of the results rows",
        "a verified checkpoint digest",
        "paper Table 6",
        "Appendix: interaction contrasts",
    ]
    position = 0
    for marker in markers:  # each after the one before (the contents name the sections first)
        position = text.find(marker, position)
        assert position >= 0, f"{marker} not found after the markers before it"
    assert "25 records: rec-000, rec-001" in text
    assert "... and 15 more" in text
    assert "rec-010" not in text  # only the first ten ids are listed
    assert "1 reproduced, 1 not reproduced" in text
    assert "0.1235" in text  # EERs with 4 decimals
    assert text.count("0.4286") == 2  # coverage of the flag's details (an object of objects) and of the section
    assert "0.123456" not in text


def test_figures_are_valid_pngs_beside_valid_svgs(written: tuple[Path, list[Path]]) -> None:
    figures = written[1][3:]
    for path in (path for path in figures if path.suffix == ".svg"):
        root = ElementTree.fromstring(path.read_bytes())  # well-formed XML though the labels are hostile
        assert root.tag == "{http://www.w3.org/2000/svg}svg" and path.with_suffix(".png") in figures
        assert not [element for element in root.iter() if element.tag.endswith("script")]
    for path in (path for path in figures if path.suffix == ".png"):
        data = path.read_bytes()
        assert data[:8] == PNG_MAGIC
        width, height = struct.unpack(">II", data[16:24])  # IHDR follows the magic and the chunk header
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert image.size == (width, height) and 0 < width <= 640 and height > 0  # 6.4 in at 100 dpi at most
            assert "Software" not in image.info


@pytest.mark.slow
def test_rewriting_gives_identical_bytes_and_leaves_no_temp_files(
    written: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    out, first_paths = written
    before = {path.relative_to(out): path.read_bytes() for path in first_paths}
    second_paths = write_report(full_report(), tmp_path)
    after = {path.relative_to(tmp_path): path.read_bytes() for path in second_paths}
    assert after == before
    write_report(full_report(), tmp_path)  # over existing files
    files = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*") if path.is_file())
    assert files == sorted(path.as_posix() for path in before)


@pytest.mark.slow
def test_figure_bytes_do_not_depend_on_the_process(written: tuple[Path, list[Path]], tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from tests.reports.sample_reports import full_report; from reports import write_report;"
        "write_report(full_report(), Path(sys.argv[2]))"
    )
    subprocess.run([sys.executable, "-c", script, str(Path(__file__).parents[2]), str(tmp_path)], check=True)
    for name in ("ie_vs_prediction.png", "gap_vs_snr.png", "ie_vs_prediction.svg"):
        assert (tmp_path / "figures" / name).read_bytes() == (written[0] / "figures" / name).read_bytes()


def test_absent_data_skips_figures_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "figures").mkdir()
    stale = [tmp_path / "figures" / name for name in ("gap_vs_snr.png", "gap_vs_snr.svg", "det_curves_E99.png")]
    for path in stale:
        path.write_bytes(b"from an earlier run")
    paths = write_report(minimal_report(), tmp_path)
    assert [path.name for path in paths] == ["report.json", "report.md", "report.html"]
    assert not any(path.exists() for path in stale)  # no figure this report does not draw
    markdown = (tmp_path / "report.md").read_text()
    assert "Interaction effect vs additive prediction: skipped, no contrast has both a prediction and an IE" in markdown
    assert "Gender EER gap vs SNR: skipped" in markdown
    assert "Verdict: PASS" in markdown
    assert "No flags were raised." in markdown


def test_malformed_report_names_where(tmp_path: Path) -> None:
    with pytest.raises(ReportShapeError, match=r"flags\[1\]: expected an object, got str"):
        write_report({"flags": [{"id": "x"}, "oops"]}, tmp_path)


def test_import_reports_is_light() -> None:
    """The command line imports reports at its start: no drawing, array or table library comes with it."""
    heavy = "('matplotlib', 'torch', 'numpy', 'pandas', 'PIL')"
    code = f"import sys, reports; print(sorted(m for m in {heavy} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_writer_replaces_a_link_in_a_files_place_and_never_writes_its_target(tmp_path: Path) -> None:
    """Oracle: the bytes of the link's target, unchanged, and the file written in the link's place."""
    out, victim = tmp_path / "out", tmp_path / "victim.json"
    victim.write_text("precious")
    out.mkdir()
    (out / "report.json").symlink_to(victim)
    write_files_into(out, {"report.json": b"{}\n", "figures/a.png": b"png"})
    assert victim.read_text() == "precious"
    assert not (out / "report.json").is_symlink() and (out / "report.json").read_bytes() == b"{}\n"
    assert (out / "figures" / "a.png").read_bytes() == b"png"


def test_the_writer_never_enters_a_linked_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "figures").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OSError, match="a link or not a folder"):
        write_files_into(out, {"figures/a.png": b"png"})
    assert list(elsewhere.iterdir()) == []
    (out / "figures").unlink()
    linked = tmp_path / "linked-out"
    linked.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OSError, match="a link or not a folder"):
        write_files_into(linked, {"report.json": b"{}"})
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("hostile", ["figures-link", "out-link", "foreign-file", "report-link", "foreign-in-figures"])
def test_an_out_folder_that_is_not_an_earlier_report_is_one_line_and_nothing_is_written(
    tmp_path: Path, hostile: str
) -> None:
    bundle = tmp_path / "bundle"  # stands for the audited bundle: nothing may be written into it
    bundle.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    if hostile == "figures-link":
        (out / "figures").symlink_to(bundle, target_is_directory=True)
    elif hostile == "out-link":
        out.rmdir()
        out.symlink_to(bundle, target_is_directory=True)
    elif hostile == "foreign-file":
        (out / "thesis.tex").write_text("mine")
    elif hostile == "report-link":
        (out / "report.md").symlink_to(bundle / "results.csv")
    else:
        (out / "figures").mkdir()
        (out / "figures" / "notes.txt").write_text("mine")
    with pytest.raises(InputError) as caught:
        write_report(minimal_report(), out)
    assert "--out" in caught.value.line() and len(caught.value.line().splitlines()) == 1
    assert list(bundle.iterdir()) == []
    assert not (out / "report.json").exists()


def test_an_earlier_report_is_replaced_in_place(written: tuple[Path, list[Path]], tmp_path: Path) -> None:
    out = tmp_path / "again"
    shutil.copytree(written[0], out)
    paths = write_report(full_report(), out)
    assert [path.read_bytes() for path in paths] == [path.read_bytes() for path in written[1]]
