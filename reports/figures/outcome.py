"""A figure as the report receives it: drawn (PNG and SVG bytes, caption, text alternative) or skipped with the
reason; what ``reports.document`` places and ``reports.write_report`` writes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FigureOutcome:
    """One figure: its PNG bytes, or ``png is None`` and the reason it was skipped."""

    filename: str
    caption: str
    png: bytes | None
    skipped_because: str = ""
    alt: str = ""  # the text alternative of a drawn figure
    svg: bytes | None = None  # the same figure as SVG, written beside the PNG
    section: str = ""  # the id of the report section that shows it; "": the Figures section

    @property
    def svg_filename(self) -> str:
        return self.filename.removesuffix(".png") + ".svg"
