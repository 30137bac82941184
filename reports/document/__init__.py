"""Turn the report dict of ``audit verify`` (or ``audit scores``) into blocks, in the order a reviewer reads it:
the verdict with its cause, the headline results (the EER per encoder and condition, the interaction summary), the
table of contents, the figures, the flags, the statistics and every other section, the published claims, the
badges; then the appendix: what was run (files and their hashes, the run, the signature, the configuration), the
per-file bundle checks, every aggregate table and the contrasts.

The report stays navigable as it grows: outside the headline, a table of more than ``FOLD_ROWS`` rows (whichever
section it is in), the flags of one severity beyond the first ``SHOWN_FLAGS`` and the figures of a gallery beyond its
first are folded (``Details``) under one line saying what they hold and how many; nothing is left out.

Every key may be absent or empty. Rows are rendered generically: a table of whatever columns the rows have, in
the order they first appear, so sections added by later checks render without changes here (a section this package
does not know goes with the statistics, after the flags). ``run`` and ``trust`` (what was run and who signed it)
are rendered from whatever keys they hold.

A module per part of the report: ``verdict``, ``headline``, ``flags``, ``sections`` (the report's own sections, the
figures, the claims), ``run`` and ``aggregates`` (the appendix), ``contents``; ``shape`` reads the report dict,
``tables`` renders any value of it; ``build`` puts them in reading order.
"""

from reports.document.build import build_document
from reports.document.contents import slug
from reports.document.shape import ReportShapeError
from reports.document.tables import MAX_TABLE_ROWS, table_blocks, value_blocks

__all__ = ["MAX_TABLE_ROWS", "ReportShapeError", "build_document", "slug", "table_blocks", "value_blocks"]
