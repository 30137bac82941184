"""The plain figures' legends (``reports.figures.legend``) against matplotlib's own legend of the same entries."""

from __future__ import annotations

import pytest

from reports.figures.layout import DPI, SMALL_PT
from reports.figures.legend import _legend_size


@pytest.mark.parametrize("labels", [["gender=F"], ["clean", "babble-0dB"], ["e1", "ecapa-tdnn", "campplus", "x-vec"]])
def test_a_legend_is_the_size_of_matplotlibs(labels: list[str]) -> None:
    """Its frame as matplotlib 3.11 draws a legend of line keys at ``SMALL_PT``: rows a label's extent (1.05 em) and
    0.5 em apart, within a pixel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.4), dpi=DPI)
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for i, label in enumerate(labels):
        axes.plot([0, 1], [i, i], label=label)
    legend = axes.legend(fontsize=SMALL_PT)
    canvas.draw()
    extent = legend.get_frame().get_window_extent()
    wide, high = _legend_size([(label, (0, 0, 0), 1.5, (), "") for label in labels], 1)
    assert high * DPI == pytest.approx(extent.height, abs=1.0)
    assert wide * DPI == pytest.approx(extent.width, abs=1.0)
