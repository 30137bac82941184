"""The figures of the contrasts (``aggregates.contrasts``): IE against the additive prediction (paper Figure 3), with
the observed coupling beside the one expected under additivity, and the 2x2 interaction plots per contrast family."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reports.figures.data import LABEL_INCHES, _cut, _number, _rows
from reports.figures.layout import (
    FIGSIZE_INCHES,
    MAX_PANELS,
    SMALL_PT,
    TEXT_PT,
    TITLE_PAD_PT,
    _autoscaled,
    _boxes,
    _columns,
    _grid_margins,
    _nice_ticks,
    _panel_size,
    _text_block,
    _tick_bins,
)
from reports.figures.legend import Key, _best_corner, _legend_shapes, _legend_size
from reports.figures.outcome import FigureOutcome
from reports.figures.panel import At, _linear_panel
from reports.figures.plain import (
    BLACK,
    KEY_PT,
    MARKER_SIZE,
    WHITE,
    Box,
    Dot,
    Frame,
    Polygon,
    Polyline,
    Shape,
    Text,
    _axes_shapes,
    _dashes,
    _marker,
    _plain,
    _rgb,
    _rounded,
    _scale,
    _series_colours,
)
from reports.format import format_number

CHANCE_EER = 0.5
EXPECTED_R_PREFIX = "r_expected_"
FAMILY_MARKERS = {"speaker": "o", "ssl": "^", "": "o"}
SCATTER_PT, SCATTER_EDGE_PT = 14**0.5, 1.5  # matplotlib's scatter of s=14: its marker and edge (lines.linewidth)
IE_ZERO, CHANCE, FAMILY_KEY = (77, 77, 77), (214, 39, 40), (102, 102, 102)  # greys 0.3 and 0.4, tab:red


def coupling_lines(coupling: Mapping[str, Any]) -> list[str]:
    """The observed r, then every correlation expected under additivity the report gives (``r_expected_*``:
    the audit's binomial-noise value, and a bootstrap one when per-trial scores exist)."""
    observed = _number(coupling.get("r_observed"))
    lines = [f"observed r = {format_number(observed)}" if observed is not None else "observed r: not reported"]
    for key in sorted(key for key in coupling if key.startswith(EXPECTED_R_PREFIX)):
        expected = _number(coupling[key])
        how = key.removeprefix(EXPECTED_R_PREFIX).replace("_", " ")
        lines.append(f"expected r ({how}) = {format_number(expected) if expected is not None else 'n/a'}")
    if len(lines) == 1:
        lines.append("expected r under additivity: not reported")
    return lines


def ie_vs_prediction(report: Mapping[str, Any]) -> FigureOutcome:
    """Scatter of IE against the additive prediction (colour per experiment, marker per model family), with
    the observed correlation beside the one expected under additivity (IE contains -prediction, so the two are
    coupled by construction), the IE = 0 line and the chance line at prediction 0.5. Drawn as plain shapes
    (``panel._linear_panel``) as matplotlib drew it (its layout, autoscaled limits, AutoLocator ticks, markers, lines,
    boxed note and legend), without its artists, text layout and two draws: 0.10 s CPU of the 4,068-row table's
    audit."""
    filename, caption = "ie_vs_prediction.png", "Interaction effect vs additive prediction"
    points: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for row in _rows(report, "contrasts"):
        prediction, ie = _number(row.get("prediction")), _number(row.get("ie"))
        if prediction is not None and ie is not None:
            key = (str(row.get("experiment", "?")), str(row.get("model_family") or ""))
            points.setdefault(key, []).append((prediction, ie))
    if not points:
        return FigureOutcome(filename, caption, None, "no contrast has both a prediction and an IE")
    coupling = coupling_lines((report.get("aggregates") or {}).get("ie_vs_prediction") or {})
    note_lines = "\n".join(coupling).split("\n")  # a line of text each, whatever a key's name holds
    experiments = sorted({experiment for experiment, _ in points})

    families = sorted({family for _, family in points})
    colours = {name: _rgb(colour) for name, colour in _series_colours(experiments).items()}
    keys: list[Key] = [("IE = 0 (additive)", IE_ZERO, 0.8, (), ""),
                       ("chance (0.5)", CHANCE, 0.9, _dashes("--", 0.9), "")]  # fmt: skip
    keys += [(_cut(experiment, LABEL_INCHES), colours[experiment], 0.0, (), "o") for experiment in experiments]
    if families != [""]:  # one legend entry per experiment (colour) and per model family (marker), not per pair
        keys += [(_cut(family or "family not stated", LABEL_INCHES), FAMILY_KEY, 0.0, (), _family_marker(family))
                 for family in families]  # fmt: skip

    def draw(box: Box, at: At) -> tuple[list[Shape], list[Polyline | Polygon | Dot | Frame]]:
        import numpy as np

        shapes: list[Shape] = [
            _marker(_family_marker(family), *at(x, y), SCATTER_PT, colours[experiment], SCATTER_EDGE_PT,
                    alpha=0.75, clip=box)
            for (experiment, family), members in sorted(points.items()) for x, y in members
        ]  # fmt: skip
        scattered = [Dot(*at(x, y), SCATTER_PT, BLACK) for members in points.values() for x, y in members]
        left, top, across, down = box
        _, zero = at(0.0, 0.0)
        chance, _ = at(CHANCE_EER, 0.0)
        lines = [
            Polyline(np.array([[left, zero], [left + across, zero]]), IE_ZERO, 0.8, (), box),
            Polyline(np.array([[chance, top + down], [chance, top]]), CHANCE, 0.9, _dashes("--", 0.9), box),
        ]
        boxed, extent = _note_shapes(note_lines, left + 0.02 * across, top + 0.97 * down)
        return [*shapes, *lines, *boxed], [*scattered, *lines, extent]

    size = FIGSIZE_INCHES
    data = (([x for members in points.values() for x, _ in members], [CHANCE_EER]),
            ([y for members in points.values() for _, y in members], [0.0]))  # fmt: skip
    labels = (caption, "additive prediction  EER(A) + EER(B) - EER(clean)", "IE  EER(A+B) - prediction")
    n_points = sum(len(members) for members in points.values())
    alt = f"Scatter of {n_points} contrasts in {len(experiments)} experiments; " + "; ".join(note_lines)
    return _plain(filename, caption, alt, size, _linear_panel(size, data, labels, keys, draw))


def _family_marker(family: str) -> str:
    return FAMILY_MARKERS.get(family, "s")


def _note_shapes(lines: Sequence[str], x: float, bottom: float) -> tuple[list[Shape], Frame]:
    """``lines`` of text at ``SMALL_PT`` left-aligned at ``x``, the block's foot at ``bottom`` (inches), in a white
    box with rounded corners edged black, as matplotlib draws a text with ``va="bottom"`` and
    ``bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85}``: its lines where its text layout puts them
    (``_text_block``), the box 0.3 em out from the block all round, its corners rounded 0.3 em; and the text's
    extent (what ``loc="best"`` keeps a legend off), as a frame not drawn."""
    baselines, high, wide = _text_block(lines, SMALL_PT)
    top, pad = bottom - high, 0.3 * SMALL_PT / 72
    outline = _rounded((x - pad, top - pad, wide + 2 * pad, high + 2 * pad), pad)
    shapes: list[Shape] = [Polygon(outline, WHITE, 0.85), Polyline(outline, BLACK, 1.0)]
    shapes += [Text(x, top + y, line, SMALL_PT, "ls") for y, line in zip(baselines, lines, strict=True)]
    return shapes, Frame((x, top, wide, high))


def interaction_plots(report: Mapping[str, Any]) -> FigureOutcome:
    """Per contrast family (experiment, model family): mean EER without and with factor A, one line without B and
    one with B; parallel lines are additive, their gap's change is the mean IE. Drawn as plain shapes (``plain``)
    placed in inches as matplotlib drew them (its layout, autoscaled limits, AutoLocator ticks, lines, markers and
    ``best`` legends), without its artists, text layout and two draws: 0.20 s CPU of the 4,068-row table's audit."""
    filename, caption = "interaction_plots.png", "2x2 interaction plots per contrast family (mean EER)"
    families: dict[str, list[tuple[float, float, float, float]]] = {}
    names: dict[str, tuple[str, str]] = {}
    for row in _rows(report, "contrasts"):
        terms = [_number(row.get(k)) for k in ("eer_clean", "eer_a", "eer_b", "eer_ab")]
        if any(term is None for term in terms):
            continue
        family = f"{row.get('experiment', '?')} {row.get('model_family') or ''}".strip()
        families.setdefault(family, []).append(tuple(terms))  # type: ignore[arg-type]
        names.setdefault(family, (str(row.get("factor_a") or "A"), str(row.get("factor_b") or "B")))
    if not families:
        return FigureOutcome(filename, caption, None, "no contrast has all four terms")
    shown = sorted(families)[:MAX_PANELS]
    means = {f: [sum(t[i] for t in families[f]) / len(families[f]) for i in range(4)] for f in shown}
    alt = "Interaction plots: " + "; ".join(
        f"{f} ({len(families[f])} contrasts): clean {format_number(m[0])}, A {format_number(m[1])}, "
        f"B {format_number(m[2])}, A+B {format_number(m[3])}, mean IE {format_number(m[3] - m[1] - m[2] + m[0])}"
        for f, m in means.items()
    )

    size = _panel_size(len(shown))
    panels = [(family, len(families[family]), means[family], names[family]) for family in shown]
    return _plain(filename, caption, alt, size, _interaction_shapes(panels, size))


def _interaction_shapes(panels: Sequence[tuple[str, int, Sequence[float], tuple[str, str]]],
                        size: tuple[float, float]) -> list[Shape]:  # fmt: skip
    """The interaction plots (each panel a family, its contrasts' count, its four mean EERs and its factors' names) in
    rows of two on a figure of ``size`` inches, as plain shapes (``plain``) placed where matplotlib placed its axes
    (``layout._grid_margins``): room for ``0.000`` left of each, the y ticks chosen there (``_nice_ticks`` for the room
    matplotlib's AutoLocator saw: its y tick labels at ``TEXT_PT``), the panels placed again with room for their labels
    as they are. Each panel as matplotlib drew it: the line without B (tab:blue, circles) and with B (tab:orange,
    squares) from clean to A at x 0 and 1, clipped to the panel, its legend where it covers least (``loc="best"``), its
    title, y label and ticks."""
    import numpy as np

    titles_pt = TEXT_PT / SMALL_PT  # the titles' lines, in the tick labels' lines

    def boxes(ys: Sequence[Sequence[str]], xs: Sequence[Sequence[str]]) -> list[Box]:
        return _boxes(len(panels), size, *_grid_margins(ys, xs, _columns(len(panels)), title_lines=titles_pt))

    x_limits = _autoscaled([0.0, 1.0])
    y_limits = [_autoscaled(terms) for _, _, terms, _ in panels]
    x_labels = [["clean", _cut(factor_a, LABEL_INCHES / 2)] for _, _, _, (factor_a, _) in panels]
    first = boxes([["0.000"]] * len(panels), [[]] * len(panels))
    y_ticks = [_nice_ticks(*y, _tick_bins(box[3], TEXT_PT, 2)) for box, y in zip(first, y_limits, strict=True)]
    colours = [_rgb(colour) for colour in _series_colours(["without", "with"]).values()]
    shapes: list[Shape] = []
    placed = boxes([labels for _, labels in y_ticks], x_labels)
    for (family, n, terms, (_, factor_b)), box, (y_low, y_high), ticks, labels in zip(
        panels, placed, y_limits, y_ticks, x_labels, strict=True
    ):
        at = _scale(box, x_limits, (y_low, y_high))
        lines = []
        keys: list[Key] = []
        for (before, after), ink, marker, label in zip(
            (terms[:2], terms[2:]), colours, "os", (f"without {factor_b}", f"with {factor_b}"), strict=True
        ):
            points = [at(0.0, before), at(1.0, after)]
            lines.append(Polyline(np.array(points), ink, KEY_PT, (), box))
            shapes += [lines[-1], *(_marker(marker, x, y, MARKER_SIZE, ink, clip=box) for x, y in points)]
            keys.append((_cut(label, LABEL_INCHES), ink, KEY_PT, (), marker))
        legend = _legend_size(keys, 1)
        shapes += _legend_shapes(keys, 1, _best_corner(box, legend, lines))
        xs = [(at(tick, y_low)[0], label) for tick, label in zip((0.0, 1.0), labels, strict=True)]
        ys = [(at(0.0, tick)[1], label) for tick, label in zip(*ticks, strict=True)]
        shapes += _axes_shapes(box, xs, ys, y_label="mean EER")
        title = f"{_cut(family, LABEL_INCHES, TEXT_PT)} (n={n})"
        shapes.append(Text(box[0] + box[2] / 2, box[1] - TITLE_PAD_PT / 72, title, TEXT_PT, "ms"))
    return shapes
