"""The report's figures as deterministic PNG and SVG bytes, each with a caption and a text alternative (what it shows,
in words and numbers), a module per kind: IE vs additive prediction (paper Figure 3) with the coupling shown and the
2x2 interaction plots per contrast family (``contrasts``), the gender gap vs SNR per noise type (paper Figure 4,
``gap``), the EER heatmap condition x encoder (``heatmap``), and, from per-trial scores, DET curves on normal-deviate
axes with the EER point marked (``det``) and the target vs non-target score distributions (``scores``): per group of
``audit scores``; for a bundle, one DET figure per experiment drawn (a panel per condition family, a curve per
encoder) and per encoder the histograms of the condition that moves its EER most, over those of its clean reference
(``audit.bundle.curves`` chooses them), and, where the run declares a calibration, the normalised Bayes error plot
of its clean list (``bayes_error``). Once a bundle's statistics are in, its DET figures are drawn again with each
curve's pointwise speaker-bootstrap band, a DET figure per experiment with subgroups is added (``det_band_figures``,
from ``statistics.det_bands``), and the menagerie figure (``menagerie``).

``render_figures`` and ``add_statistics_figures`` (``catalogue``) draw them in a fixed order (``draw_figures`` a part
of them by name, for another process); ``plain`` writes every figure as boxes, curves and texts (curves, bands and
markers by matplotlib's Agg path renderer used directly, frames, ticks and texts by Pillow, the SVG as text; no
matplotlib Figure, Axes or artists), ``layout`` places them in inches.
A figure whose data is absent is skipped with the reason, never drawn empty. Importing this package imports no
matplotlib: figures import it when they are drawn.
"""

from reports.figures.bayes_error import bayes_error_plot
from reports.figures.catalogue import (
    DET_PENDING,
    EARLY_FIGURES,
    add_statistics_figures,
    draw_figures,
    render_figures,
)
from reports.figures.contrasts import coupling_lines, ie_vs_prediction, interaction_plots
from reports.figures.det import det_band_figures, det_curves
from reports.figures.gap import gap_vs_snr
from reports.figures.heatmap import eer_heatmap
from reports.figures.layout import DPI, TEXT_PT
from reports.figures.menagerie import MENAGERIE_SECTION, menagerie_figure
from reports.figures.outcome import FigureOutcome
from reports.figures.plain import import_drawing
from reports.figures.scores import score_distributions

__all__ = [
    "DET_PENDING",
    "DPI",
    "EARLY_FIGURES",
    "MENAGERIE_SECTION",
    "TEXT_PT",
    "FigureOutcome",
    "add_statistics_figures",
    "bayes_error_plot",
    "coupling_lines",
    "det_band_figures",
    "det_curves",
    "draw_figures",
    "eer_heatmap",
    "gap_vs_snr",
    "ie_vs_prediction",
    "import_drawing",
    "interaction_plots",
    "menagerie_figure",
    "render_figures",
    "score_distributions",
]
