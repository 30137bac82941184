"""The rendered provenance report: ``report.json``, ``report.md``, ``report.html`` and ``figures/*.png`` (each
beside its ``.svg``).

``write_report(report, out_dir)`` takes the plain dict that ``audit verify`` builds and writes the four
outputs, each atomically; ``finish_report(report, out_dir)`` is the one ending of a table audit (``audit verify``
and ``interbias reproduce``): the artefact-evaluation summary added, then the report written. Importing this
package imports neither matplotlib nor torch: figures import matplotlib when they are drawn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from provenance import is_temporary, write_files_into
from reports.badges import artefact_evaluation_summary
from reports.document import ReportShapeError, build_document
from reports.figures import (
    EARLY_FIGURES,
    FigureOutcome,
    add_statistics_figures,
    draw_figures,
    import_drawing,
    render_figures,
)
from reports.html import render_html
from reports.markdown import render_markdown
from schemas import ATTESTATION_FILE, CROISSANT_FILE, POLICY_FILE, InputError, json_safe

__all__ = [
    "EARLY_FIGURES",
    "FigureOutcome",
    "Figures",
    "ReportShapeError",
    "add_statistics_figures",
    "artefact_evaluation_summary",
    "check_report_folder",
    "draw_figures",
    "finish_report",
    "import_drawing",
    "remove_stale_beside",
    "render_figures",
    "report_json",
    "write_report",
]

FIGURES_DIR = "figures"
REPORT_FILES = ("report.json", "report.md", "report.html")
# What ``audit verify`` writes beside the report: the attestation (``--attest``), a table's card (``--croissant``).
BESIDE_REPORT = (ATTESTATION_FILE, POLICY_FILE, CROISSANT_FILE)
FIGURE_SUFFIXES = (".png", ".svg")
# The report's figures drawn, or a function that waits for them (a forked drawer's result).
Figures = list[FigureOutcome] | Callable[[], list[FigureOutcome]]


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True)


def _one_shot() -> Callable[[Any], str]:
    """``_ENCODER.encode`` as one call of the C encoder, made once: ``encode`` builds the C encoder afresh on every
    call, which cost more than the encoding of a paper-scale report's 400,000 short lines. No circular check (a
    report is a tree; ``json_safe`` has walked it); without the C speedups, ``encode`` itself."""
    if c_make_encoder is None:
        return _ENCODER.encode
    encode = c_make_encoder(
        None, _ENCODER.default, encode_basestring, None, _ENCODER.key_separator, _ENCODER.item_separator,
        _ENCODER.sort_keys, _ENCODER.skipkeys, _ENCODER.allow_nan,
    )  # fmt: skip

    def one_line(value: Any) -> str:
        return "".join(encode(value, 0))

    return one_line


_ONE_LINE = _one_shot()  # a value on one line, as the C encoder writes it


def report_json(report: Mapping[str, Any]) -> str:
    """The report as strict JSON, keys sorted, NaN and infinities written as null: indented by 2, but a container that
    holds no container on one line (a table's row, an interval, a record's key), which keeps a paper-scale report to
    a line a row and leaves the standard library's C encoder the bulk of the work (with an indent it encodes in
    Python, a value a step). ``json_safe`` of the report, made in the same walk: it converts the one-line containers
    as they are encoded (a second walk over a paper-scale report's 30 MB cost 0.7 s)."""
    return _indented(report, "") + "\n"


def _indented(value: Any, indent: str) -> str:
    """``json_safe(value)`` at ``indent``, as ``report_json`` writes it."""
    kind = type(value)
    if kind is not dict and kind is not list:
        if not _is_container(value):
            return _ONE_LINE(json_safe(value))
        if isinstance(value, Mapping):
            value = dict(value)
        else:  # a tuple's items, or an array's rows as json_safe gives them
            value = list(value) if isinstance(value, list | tuple) else json_safe(value)
    children: Iterable[Any] = value.values() if type(value) is dict else value
    if not any(type(child) not in _PLAIN and _is_container(child) for child in children):  # a call only if not plain
        return _one_line(value)
    inner = indent + "  "
    if type(value) is dict:
        named = {str(key): child for key, child in value.items()}  # json_safe's keys
        lines = [f"{inner}{_ONE_LINE(key)}: {_indented(named[key], inner)}" for key in sorted(named)]
        return "{\n" + ",\n".join(lines) + f"\n{indent}}}"
    return "[\n" + ",\n".join(inner + _indented(item, inner) for item in value) + f"\n{indent}]"


def _one_line(value: dict[Any, Any] | list[Any]) -> str:
    """A container of plain values on one line: encoded as it is where the C encoder writes what ``json_safe`` would
    give it (text keys; numbers, text, None, numpy's float64, a float), else after ``json_safe`` (a NaN, an integer
    key, numpy's int64: the encoder refuses a value, and sorts integer keys as numbers)."""
    if type(value) is list or all(type(key) is str for key in value):
        try:
            return _ONE_LINE(value)
        except (TypeError, ValueError):
            pass
    return _ONE_LINE(json_safe(value))


_PLAIN = frozenset((str, float, int, bool, type(None)))  # never a container


def _is_container(value: Any) -> bool:
    """``json_safe(value)`` is a dict or a list (a mapping, a sequence, an array; not a number, text or None)."""
    kind = type(value)
    if kind is dict or kind is list or kind is tuple:
        return True
    if kind is str or kind is float or kind is int or kind is bool or value is None:
        return False
    return type(json_safe(value)) in (dict, list)


def write_report(report: Mapping[str, Any], out_dir: Path, figures: Figures | None = None) -> list[Path]:
    """Write the report under ``out_dir`` and return the written paths (json, md, html, then figures).

    ``figures``: the report's figures when drawn already (``render_figures`` of its aggregates and curves), each
    written as PNG and SVG, or a function that waits for them (a forked drawer's): the JSON, which shows no figure,
    is encoded while they are being drawn. A figure skipped for lack of data is noted in the report, and every
    figure file an earlier run left that this report does not write is removed, so the folder never shows a figure
    the report does not. ``out_dir`` may hold only an earlier report (an InputError names anything else, a link
    above all); every file is renamed into place without following a link (``provenance.atomic.write_files_into``).
    A folder that cannot be written is an InputError (one line, exit 2), never a traceback.
    """
    out_dir = Path(out_dir)
    check_report_folder(out_dir)
    encoded = report_json(report).encode("utf-8")
    figures = render_figures(report) if figures is None else figures() if callable(figures) else figures
    blocks = build_document(report, figures)
    title = f"Provenance report: {Path(str((report.get('source') or {}).get('path', 'results'))).name}"
    files = {
        REPORT_FILES[0]: encoded,
        REPORT_FILES[1]: render_markdown(blocks).encode("utf-8"),
        REPORT_FILES[2]: render_html(blocks, title).encode("utf-8"),
        **{f"{FIGURES_DIR}/{figure.filename}": figure.png for figure in figures if figure.png is not None},
        **{f"{FIGURES_DIR}/{figure.svg_filename}": figure.svg for figure in figures if figure.svg is not None},
    }
    try:
        write_files_into(out_dir, files, removed=_stale_figures(out_dir, files))
    except OSError as error:
        raise InputError(str(error.filename or out_dir), f"cannot write the report: {error.strerror}") from error
    return [out_dir / name for name in files]


def _stale_figures(out_dir: Path, files: Mapping[str, bytes]) -> list[str]:
    """The figure files of an earlier report in ``out_dir`` that this one does not write."""
    folder = out_dir / FIGURES_DIR
    if folder.is_symlink() or not folder.is_dir():
        return []
    ours = [path for path in sorted(folder.iterdir()) if _ours(path, FIGURE_SUFFIXES) and not is_temporary(path.name)]
    return [name for path in ours if (name := f"{FIGURES_DIR}/{path.name}") not in files]


def check_report_folder(out_dir: Path) -> None:
    """An InputError unless ``out_dir`` is absent or a folder (not a link) holding only an earlier report: the
    report files, a ``figures/`` folder of PNGs and SVGs, an earlier attestation or table card, a killed writer's
    temporary files."""
    if not os.path.lexists(out_dir):
        return
    if out_dir.is_symlink() or not out_dir.is_dir():
        raise InputError(
            str(out_dir), "cannot write here: --out is a link or not a folder; choose a folder of your own"
        )
    for entry in sorted(out_dir.iterdir()):
        if entry.name == FIGURES_DIR and entry.is_dir() and not entry.is_symlink():
            foreign = [path for path in sorted(entry.iterdir()) if not _ours(path, FIGURE_SUFFIXES)]
        else:
            foreign = [] if _ours(entry, REPORT_FILES + BESIDE_REPORT) else [entry]
        if foreign:
            problem = "a link" if foreign[0].is_symlink() else "not a file the report writes"
            raise InputError(
                str(foreign[0]), f"{problem}: --out may hold only an earlier report; choose an empty or new folder"
            )


def _ours(path: Path, names: tuple[str, ...]) -> bool:
    """A regular file (not a link) named one of ``names`` (or ending so, for suffixes), or a temporary file."""
    named = path.name in names or path.suffix in names or is_temporary(path.name)
    return named and path.is_file() and not path.is_symlink()


def remove_stale_beside(out_dir: Path, written: Iterable[Path]) -> None:
    """Remove what an earlier audit wrote beside the report (``BESIDE_REPORT``) and this one did not write, so no
    signed verdict or card lies beside a report it does not describe."""
    kept = {Path(path).name for path in written}
    for name in BESIDE_REPORT:
        path = Path(out_dir) / name
        if name not in kept and path.is_file() and not path.is_symlink():
            path.unlink()


def finish_report(report: dict[str, Any], out_dir: Path | None, figures: Figures | None = None) -> list[Path]:
    """Complete the report of a table audit with its artefact-evaluation summary and write it under ``out_dir``
    (nothing written without one; ``figures`` as ``write_report`` takes them); return the written paths. A folder
    that cannot be written is an InputError (one line, exit 2), never a traceback."""
    report["sections"].append(artefact_evaluation_summary(report))
    if out_dir is None:
        return []
    return write_report(report, out_dir, figures)
