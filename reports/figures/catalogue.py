"""The report's figures in their fixed order: those drawn from its aggregates and curves (``render_figures``, which
can run before the statistics are in) and those that need its statistics (``add_statistics_figures``: the DET
figures with their bands, the menagerie). ``draw_figures`` draws some of the first kind (``EARLY_FIGURES``) by name,
so that other processes can draw them for the audit (a table audit's figure drawer and its fork, ``audit verify
TABLE --out``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from reports.figures.bayes_error import bayes_error_plot
from reports.figures.contrasts import ie_vs_prediction, interaction_plots
from reports.figures.det import det_band_figures, det_curves
from reports.figures.gap import gap_vs_snr
from reports.figures.heatmap import eer_heatmap
from reports.figures.menagerie import menagerie_figure
from reports.figures.outcome import FigureOutcome
from reports.figures.scores import score_distributions

DET_PENDING = "drawn once the statistics are in (add_statistics_figures)"
FIGURES: Sequence[Callable[[Mapping[str, Any]], FigureOutcome | list[FigureOutcome]]] = (
    ie_vs_prediction,
    gap_vs_snr,
    eer_heatmap,
    interaction_plots,
    det_curves,
    score_distributions,
    bayes_error_plot,
)
EARLY_FIGURES = tuple(make.__name__ for make in FIGURES if make is not det_curves)  # the DET figures wait for bands


def draw_figures(report: Mapping[str, Any], names: Collection[str]) -> dict[str, list[FigureOutcome]]:
    """The figures of ``FIGURES`` whose function is named in ``names``, each drawn or skipped, by name: the part of
    ``render_figures`` that one process draws for another (``drawn``)."""
    made = {make.__name__: make(report) for make in FIGURES if make.__name__ in names and make is not det_curves}
    return {name: figures if isinstance(figures, list) else [figures] for name, figures in made.items()}


def render_figures(
    report: Mapping[str, Any],
    statistics_pending: bool = False,
    drawn: Mapping[str, list[FigureOutcome]] | None = None,
) -> list[FigureOutcome]:
    """Every figure of the report, drawn or skipped, in a fixed order. ``FIGURES`` read only the report's
    ``aggregates`` and ``curves``, so they can be drawn before its statistics are in; the DET figures, which the
    statistics' bands redraw, are drawn last, each once (``add_statistics_figures``). ``statistics_pending``: the
    report's statistics are yet to come, so the DET figures are left to ``add_statistics_figures`` (one entry
    marks their place). ``drawn``: figures drawn already (``draw_figures``, perhaps in another process), by name."""
    given = dict(drawn or {})
    done = {**given, **draw_figures(report, [make.__name__ for make in FIGURES if make.__name__ not in given])}
    figures: list[FigureOutcome] = []
    for make in FIGURES:
        if make is det_curves:
            figures.append(FigureOutcome("det_curves.png", "DET curves", None, DET_PENDING))
        else:
            figures += done[make.__name__]
    return figures if statistics_pending else add_statistics_figures(figures, report)


def add_statistics_figures(figures: Sequence[FigureOutcome], report: Mapping[str, Any]) -> list[FigureOutcome]:
    """``figures`` (drawn from the aggregates and curves, perhaps before the statistics ran) with the figures that
    need the statistics (``det_band_figures``): one of the same file replaces the figure drawn without them, the
    others follow the DET figures, the menagerie's (``menagerie_figure``) last. The DET figures that
    ``render_figures(..., statistics_pending=True)`` left out are drawn here, each once: with its bands, or bare
    where the statistics give it none."""
    banded = {figure.filename: figure for figure in det_band_figures(report)}
    kept = []
    for figure in figures:
        if figure.skipped_because == DET_PENDING:
            kept += det_curves(report, banded)
        else:
            kept.append(banded.get(figure.filename, figure))
    for figure in kept:
        banded.pop(figure.filename, None)
    last_det = max((i for i, figure in enumerate(kept) if figure.filename.startswith("det_curves")), default=-1)
    return [*kept[: last_det + 1], *banded.values(), *kept[last_det + 1 :], *menagerie_figure(report)]
