"""Figures: drawn from the audit's row shapes, skipped (with the reason) when their data is absent."""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np
import pytest
from PIL import Image

from reports.figures import (
    bayes_error_plot,
    coupling_lines,
    det_curves,
    eer_heatmap,
    gap_vs_snr,
    ie_vs_prediction,
    interaction_plots,
    score_distributions,
)
from tests.reports.figure_text import past_the_edge


def _ink(png: bytes) -> float:
    """Fraction of pixels that are not white: an empty plot has only axes and labels."""
    with Image.open(io.BytesIO(png)) as image:
        pixels = np.asarray(image.convert("L"))
    return float((pixels < 250).mean())


def _audit_gap_rows() -> list[dict[str, Any]]:
    """Rows as ``audit.table.aggregates.gap_vs_snr`` writes them: two experiments, a clean mean beside each."""
    rows = []
    for experiment in ("E16", "E17"):
        for noise in ("babble", "music"):
            for snr in (0.0, 5.0, 10.0):
                rows.append(
                    {"experiment": experiment, "corpus": "EARS", "noise": noise, "snr_db": snr,
                     "condition": f"{noise}_{snr}dB", "n_models": 12, "gap_abs_mean": 0.01 + snr / 1000,
                     "gap_abs_sd": 0.003, "clean_gap_abs_mean": 0.0086}
                )  # fmt: skip
    return rows


def test_gap_figure_reads_the_audit_row_shape() -> None:
    outcome = gap_vs_snr({"aggregates": {"gap_vs_snr": _audit_gap_rows()}})
    assert outcome.png is not None
    assert outcome.skipped_because == ""
    assert _ink(outcome.png) > 0.02


def test_gap_figure_is_skipped_when_no_gap_has_a_value() -> None:
    rows = [{"noise": "babble", "snr_db": 5.0, "gap_abs_mean": None, "gap_abs_sd": None}]
    reports: list[dict[str, Any]] = [
        {},
        {"aggregates": {"gap_vs_snr": []}},
        {"aggregates": {"gap_vs_snr": rows}},
    ]
    for report in reports:
        outcome = gap_vs_snr(report)
        assert outcome.png is None
        assert outcome.skipped_because == "no gender gap with an SNR in the report"


def test_ie_figure_handles_many_experiments_and_mathtext_labels() -> None:
    contrasts = [
        {
            "experiment": f"E{index:02d} $x",
            "model_family": family,
            "prediction": index / 40,
            "ie": index / 100,
        }
        for index in range(1, 18)
        for family in ("speaker", "ssl")
    ]
    outcome = ie_vs_prediction({"aggregates": {"contrasts": contrasts}})
    assert outcome.png is not None
    assert _ink(outcome.png) > 0.02


def test_ie_figure_changes_with_its_data_and_skips_without_it() -> None:
    first = ie_vs_prediction({"aggregates": {"contrasts": [{"experiment": "E14", "prediction": 0.4, "ie": 0.1}]}})
    second = ie_vs_prediction({"aggregates": {"contrasts": [{"experiment": "E14", "prediction": 0.4, "ie": -0.1}]}})
    assert first.png is not None and second.png is not None
    assert first.png != second.png
    nan_only = {"aggregates": {"contrasts": [{"experiment": "E14", "prediction": float("nan"), "ie": 0.1}]}}
    assert ie_vs_prediction(nan_only).png is None


def test_coupling_note_lists_every_expected_correlation() -> None:
    coupling = {"r_observed": -0.706, "r_expected_additive": -0.52, "r_expected_bootstrap": None, "n": 9}
    assert coupling_lines(coupling) == [
        "observed r = -0.706",
        "expected r (additive) = -0.52",
        "expected r (bootstrap) = n/a",
    ]
    assert coupling_lines({}) == ["observed r: not reported", "expected r under additivity: not reported"]


def _scores_report() -> dict[str, Any]:
    from audit.bundle.curves import det_points, score_histogram

    scores = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1])
    labels = np.array([1, 1, 0, 1, 0, 0])
    return {
        "curves": [
            {"grouping": "all", "group": g, "eer_interp": 1 / 3}
            | {"det": det_points(scores, labels), "histogram": score_histogram(scores, labels, bins=4)}
            for g in ("all trials", "clean")
        ]
    }


def test_det_points_are_the_hand_computed_curve() -> None:
    from audit.bundle.curves import det_points

    # 0.9 T, 0.8 T, 0.7 N, 0.3 T, 0.2 N, 0.1 N: Pfa steps by thirds at non-targets, Pmiss at targets.
    det = det_points(np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1]), np.array([1, 1, 0, 1, 0, 0]))
    assert det["p_fa"] == pytest.approx([0, 0, 0, 1 / 3, 1 / 3, 2 / 3, 1], abs=1e-5)  # rounded to 5 decimals
    assert det["p_miss"] == pytest.approx([1, 2 / 3, 1 / 3, 1 / 3, 0, 0, 0], abs=1e-5)
    thinned = det_points(np.arange(1000.0), np.arange(1000) % 2, max_points=50)
    assert len(thinned["p_fa"]) == 50 and thinned["p_fa"][0] == 0 and thinned["p_fa"][-1] == 1


def test_per_trial_figures_draw_with_a_text_alternative() -> None:
    report = _scores_report()
    [det] = det_curves(report)
    for outcome in (det, score_distributions(report)):
        assert outcome.png is not None and _ink(outcome.png) > 0.02 and outcome.svg is not None
        assert "all trials" in outcome.alt
    assert "EER (interp) 0.3333" in det.alt and det.filename == "det_curves.png"
    assert "3 target and 3 non-target scores from 0.1 to 0.9" in score_distributions(report).alt
    assert det_curves({})[0].skipped_because.startswith("no per-trial scores")


def test_a_bundles_det_figures_have_a_panel_per_family_and_its_histograms_a_panel_per_encoder() -> None:
    from audit.bundle.curves import curve

    scores = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1])
    labels = np.array([1, 1, 0, 1, 0, 0])
    det = [
        curve("condition", f"{m} (E13 {c})", scores, labels, 1 / 3, ("det",), figure="E13", panel=p, series=m)
        for p, c in (("clean", "clean"), ("noise: babble (hardest of 1)", "babble"))
        for m in ("m1", "m2")
    ] + [
        curve("condition", "m1 (E14 clean)", scores, labels, 1 / 3, ("det",), figure="E14", panel="clean", series="m1")
    ]
    histograms = [
        curve("condition", f"{m} E13 {c}", scores, labels, eer, ("scores",), panel=m, series=c, role=role)
        for m in ("m1", "m2") for c, role, eer in (("clean", "reference", 0.1), ("babble", "condition", 0.3))
    ]  # fmt: skip
    figures = det_curves({"curves": det + histograms})
    assert [figure.filename for figure in figures] == ["det_curves_E13.png", "det_curves_E14.png"]
    assert figures[0].alt.startswith("DET curves of E13: clean: m1 EER (interp) 0.3333, m2 EER (interp) 0.3333; noise")
    assert all(figure.png is not None and _ink(figure.png) > 0.02 for figure in figures)
    moved = score_distributions({"curves": det + histograms})
    assert moved.caption.startswith("Target vs non-target scores per encoder: the condition that moves its EER most")
    assert moved.png is not None and "m2 E13 babble: 3 target and 3 non-target" in moved.alt


def test_heatmap_and_interaction_plots_from_table_rows() -> None:
    rows = [
        {"experiment": "E14", "condition": c, "model": m, "eer_mean": e, "n_records": 1}
        for (m, c, e) in [("a", "clean", 0.1), ("a", "noise", 0.3), ("b", "clean", 0.05)]
    ]
    contrasts = [
        {"experiment": "E14", "model_family": "ssl", "factor_a": "noise", "factor_b": "emotion",
         "eer_clean": 0.1, "eer_a": 0.2, "eer_b": 0.3, "eer_ab": 0.5},
        {"experiment": "E14", "model_family": "ssl", "factor_a": "noise", "factor_b": "emotion",
         "eer_clean": 0.2, "eer_a": 0.3, "eer_b": 0.4, "eer_ab": 0.4},
    ]  # fmt: skip
    report = {"aggregates": {"eer_by_model_condition": rows, "contrasts": contrasts}}
    (heatmap,) = eer_heatmap(report)
    assert heatmap.png is not None
    assert heatmap.alt == (
        "Heatmap of 2 encoders by 2 conditions; lowest EER 0.05 (b, E14 clean), highest 0.3 (a, E14 noise)."
    )
    plots = interaction_plots(report)
    assert plots.png is not None
    # Family means: clean 0.15, A 0.25, B 0.35, A+B 0.45 -> IE = 0.45 - 0.25 - 0.35 + 0.15 = 0.
    assert "E14 ssl (2 contrasts): clean 0.15, A 0.25, B 0.35, A+B 0.45, mean IE 0" in plots.alt
    assert interaction_plots({}).skipped_because == "no contrast has all four terms"


def test_the_bayes_error_plot_draws_the_clean_list_and_says_its_gap() -> None:
    from audit.bundle.curves import PRIOR_LOG_ODDS
    from audit.metrics.calibration import bayes_error_curve

    rng = np.random.default_rng(8)
    labels = np.repeat([1, 0], 200)
    curves = []
    for model, shift in (("ecapa-tdnn", 0.0), ("mfcc-stats", 2.0)):  # the second miscalibrated by a shift
        llrs = rng.normal(np.where(labels == 1, 2.0, -2.0), 2.0) + shift
        actual, minimum = bayes_error_curve(llrs, labels, PRIOR_LOG_ODDS)
        curves.append({"group": model, "series": model, "figure": "D01", "figures": ["bayes-error"], "n_target": 200,
                       "n_nontarget": 200, "prior_log_odds": PRIOR_LOG_ODDS.tolist(), "actual": actual.tolist(),
                       "minimum": minimum.tolist()})  # fmt: skip
    drawn = bayes_error_plot({"curves": curves})
    assert drawn.png is not None and _ink(drawn.png) > 0.01
    assert drawn.alt.startswith("Normalised Bayes error against prior log-odds: ecapa-tdnn (200 target")
    gaps = [float(part.split("largest gap ")[1]) for part in drawn.alt.split("; ") if "largest gap" in part]
    assert gaps[1] > gaps[0]  # the shifted LLRs lose more to their calibration
    assert bayes_error_plot({"curves": []}).skipped_because == "no declared calibration"
    assert all(outcome.png is None for outcome in det_curves({"curves": curves}))  # not drawn as DET curves


def _band(figure: str, panel: str, series: str, record: str, shift: float, **key: str) -> dict[str, Any]:
    """A band as ``statistics.det_bands`` holds it: a curve's miss rates at five false-alarm rates and their band."""
    p_fa = [0.01, 0.05, 0.1, 0.2, 0.5]
    miss = [min(0.99, 0.3 + shift - p / 2) for p in p_fa]
    return {
        "key": {"figure": figure, "panel": panel, "series": series, "record_id": record, **key},
        "p_fa": p_fa,
        "p_miss": miss,
        "low": [m - 0.05 for m in miss],
        "high": [m + 0.05 for m in miss],
        "level": 0.95,
    }


def test_det_bands_replace_the_bare_figures_and_add_one_per_experiment_with_subgroups() -> None:
    """With ``statistics.det_bands``, the bundle's DET figure is drawn again with its bands (same file, so it replaces
    the bare one and adds ink), the exact curve kept where the band names its record; an experiment with subgroups
    gets a figure of its own (a panel per encoder, solid clean and dashed hardest); its alt text gives the bands."""
    from audit.bundle.curves import curve
    from reports.figures import add_statistics_figures, det_band_figures, render_figures

    scores = np.linspace(0.0, 1.0, 200)
    labels = (np.arange(200) % 3 == 0).astype(int)
    det = [
        curve("condition", f"{m} (E13 clean)", scores, labels, 1 / 3, ("det",), figure="E13", panel="clean",
              series=m, record_id=f"r-{m}")
        for m in ("m1", "m2")
    ]  # fmt: skip
    bands = [_band("E13", "clean", m, f"r-{m}", 0.1 * i) for i, m in enumerate(("m1", "m2"))] + [
        _band("D04 subgroups", m, g, f"s-{m}-{g}-{c}", 0.1 * (c != "clean"), style=c)
        for m in ("m1", "m2") for g in ("F", "M") for c in ("clean", "babble-0dB")
    ]  # fmt: skip
    bare = render_figures({"curves": det})
    report = {"curves": det, "statistics": {"det_bands": bands}}
    banded = det_band_figures(report)
    assert [f.filename for f in banded] == ["det_curves_E13.png", "det_curves_D04-subgroups.png"]
    assert all(f.png is not None and f.svg is not None for f in banded)
    (old,) = [f for f in bare if f.filename == "det_curves_E13.png"]
    assert banded[0].png is not None and old.png is not None and _ink(banded[0].png) > _ink(old.png)
    assert "pointwise 95% band" in banded[0].caption and "EER (interp) 0.3333" in banded[0].alt
    assert "miss 0.295 [0.245, 0.345] at 0.01 false alarms" in banded[0].alt
    assert banded[1].caption.startswith("DET curves of D04 subgroups: a panel per encoder, one colour per subgroup")
    assert "dashed babble-0dB" in banded[1].caption and "F (babble-0dB)" in banded[1].alt
    merged = add_statistics_figures(bare, report)
    names = [f.filename for f in merged]
    assert names == [f.filename for f in render_figures(report)]
    assert names.index("det_curves_D04-subgroups.png") == names.index("det_curves_E13.png") + 1
    assert merged[names.index("det_curves_E13.png")] == banded[0]
    assert add_statistics_figures(bare, {"curves": det}) == bare  # no statistics: nothing changes


# DejaVu Sans advances, in em (its hmtx table): every digit 0.636, the full stop 0.318.
DIGIT_EM, STOP_EM = 0.636, 0.318
SVG_TEXT = re.compile(r'<text[^>]*font-size: ([\d.]+)px[^>]*middle[^>]*x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)<')


def _cell_values(svg: bytes) -> list[tuple[float, float, float, str]]:
    """The heatmap's cell values in its SVG (text is kept as text; centred, unlike the colour bar's ticks): font
    size, x and y of the centre, the text."""
    found = SVG_TEXT.findall(svg.decode())
    return [(float(size), float(x), float(y), text) for size, x, y, text in found if re.fullmatch(r"[\d.e-]+", text)]


@pytest.mark.parametrize(("n_models", "n_conditions"), [(4, 6), (4, 30), (12, 60)])
def test_the_heatmaps_values_never_overprint_and_no_text_is_below_the_floor(n_models: int, n_conditions: int) -> None:
    """Issue 41: the heatmap printed a value in each of up to 120 cells at 6 pt whatever their width. Two values on
    one row must now be further apart than the wider one's width (digits and full stop at DejaVu Sans's advances),
    two rows further apart than the font size (4 x 30 overprinted before); 4 encoders print every value, and no text
    is below 8 pt."""
    rng = np.random.default_rng(3)
    rows = [
        {"experiment": "E14", "condition": f"noise-{c:02d}+emotion", "model": f"encoder-{m:02d}",
         "eer_mean": float(rng.uniform(0.01, 0.45)), "n_records": 1}
        for m in range(n_models) for c in range(n_conditions)
    ]  # fmt: skip
    parts = eer_heatmap({"aggregates": {"eer_by_model_condition": rows}})
    assert all(part.svg is not None for part in parts)
    values = [_cell_values(part.svg) for part in parts if part.svg is not None]
    if n_models == 4:
        assert sum(map(len, values)) == 4 * n_conditions
    for found in values:
        for size, x, y, text in found:
            width = size * (DIGIT_EM * sum(ch.isdigit() for ch in text) + STOP_EM * text.count("."))
            for other_size, other_x, other_y, _ in found:
                if (other_x, other_y) != (x, y) and abs(other_y - y) < max(size, other_size):
                    assert abs(other_x - x) > width, (text, x, y, other_x, other_y)
    sizes = [float(size) for part in parts for size in re.findall(r"font-size: ([\d.]+)px", part.svg.decode())]
    assert min(sizes) >= 8.0  # the SVG's units are points


def test_a_long_heatmap_is_drawn_in_parts_that_keep_each_experiment_together() -> None:
    """36 conditions at most in a part, an experiment split only when it alone has more: 20 + 10 conditions share
    the first part, 40 go in a second and third (36 + 4), 5 join the third."""
    sizes = {"E01": 20, "E02": 10, "E03": 40, "E04": 5}
    rows = [
        {"experiment": e, "condition": f"c{c:02d}", "model": m, "eer_mean": 0.1, "n_records": 1}
        for e, n in sizes.items() for c in range(n) for m in ("a", "b")
    ]  # fmt: skip
    parts = eer_heatmap({"aggregates": {"eer_by_model_condition": rows}})
    assert [part.filename for part in parts] == ["eer_heatmap.png", "eer_heatmap_2.png", "eer_heatmap_3.png"]
    assert [part.alt.split(";")[0] for part in parts] == [
        "Heatmap of 2 encoders by 30 conditions (part 1 of 3)",
        "Heatmap of 2 encoders by 36 conditions (part 2 of 3)",
        "Heatmap of 2 encoders by 9 conditions (part 3 of 3)",
    ]
    assert parts[1].caption.endswith("part 2 of 3: E03") and parts[2].caption.endswith("part 3 of 3: E03 to E04")


def test_each_det_figure_is_drawn_once_banded_where_the_statistics_band_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The figures drawn before the statistics leave the DET figures out (one entry marks their place); once the
    statistics are in, each is drawn once: with its bands (E13), bare where they give it none (E14), and the subgroup
    figure after them; ``render_figures`` of the whole report draws the same, each once too."""
    import reports.figures as figures
    import reports.figures.det as det_module
    from audit.bundle.curves import curve

    scores = np.linspace(0.0, 1.0, 200)
    labels = (np.arange(200) % 3 == 0).astype(int)
    det = [
        curve("condition", f"{m} ({e} clean)", scores, labels, 1 / 3, ("det",), figure=e, panel="clean", series=m,
              record_id=f"r-{e}-{m}")
        for e in ("E13", "E14") for m in ("m1", "m2")
    ]  # fmt: skip
    bands = [_band("E13", "clean", m, f"r-E13-{m}", 0.1) for m in ("m1", "m2")]
    bands += [_band("D04 subgroups", "m1", g, f"s-{g}", 0.0, style="clean") for g in ("F", "M")]
    drawn: list[str] = []
    draw = det_module._det_figure
    monkeypatch.setattr(det_module, "_det_figure", lambda name, *rest: drawn.append(name) or draw(name, *rest))
    pending = figures.render_figures({"curves": det}, statistics_pending=True)
    assert drawn == [] and [f.skipped_because for f in pending].count(figures.DET_PENDING) == 1
    report = {"curves": det, "statistics": {"det_bands": bands}}
    merged = figures.add_statistics_figures(pending, report)
    assert sorted(drawn) == ["D04 subgroups", "E13", "E14"]
    names = [f.filename for f in merged]
    assert names[names.index("det_curves_E13.png") :][:3] == [
        "det_curves_E13.png", "det_curves_E14.png", "det_curves_D04-subgroups.png"
    ]  # fmt: skip
    assert "pointwise 95% band" in merged[names.index("det_curves_E13.png")].caption
    assert "band" not in merged[names.index("det_curves_E14.png")].caption
    assert all(f.skipped_because != figures.DET_PENDING for f in merged)
    drawn.clear()
    assert [f.filename for f in figures.render_figures(report)] == names and sorted(drawn) == sorted(set(drawn))


@pytest.mark.parametrize("text", ["E14 noise-00+emotion", "ECAPA-TDNN-Large", "mmmm", "iiii lll", "AVAVA Wolf", "0.1"])
def test_the_heatmaps_measured_label_widths_hold_what_agg_draws(text: str) -> None:
    """The fixed layout of a heatmap sizes its margins from ``_text_inches`` (glyph advances, no layout): never
    narrower than the text as matplotlib's Agg renderer lays it out and measures it, and at most a few pixels
    wider."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    from reports.figures import DPI, TEXT_PT
    from reports.figures.layout import _text_inches

    drawn = RendererAgg(10, 10, DPI).get_text_width_height_descent(text, FontProperties(size=TEXT_PT), ismath=False)[0]
    assert drawn <= _text_inches([text], TEXT_PT) * DPI <= drawn + 0.5 * len(text) + 6


def _edge_ink(png: bytes, border: int = 2) -> float:
    """The darkest share of ink in the figure's outer ``border`` pixels: 0 when nothing runs past its edges."""
    with Image.open(io.BytesIO(png)) as image:
        pixels = np.asarray(image.convert("L"))
    edges = np.concatenate([pixels[:border].ravel(), pixels[-border:].ravel(), pixels[:, :border].ravel(),
                            pixels[:, -border:].ravel()])  # fmt: skip
    return float((edges < 250).mean())


@pytest.mark.slow  # about 3 to 9 s on 2 shared cores: seven figures
def test_the_fixed_layout_keeps_every_label_inside_the_figure() -> None:
    """The figures place their axes in inches from measured labels (no constrained layout): a long legend beside the
    axes, long tick labels at a panel's right edge and a legend below many panels must still end inside the figure,
    as Agg draws them (the PNG's outer pixels stay white)."""
    from audit.bundle.curves import curve

    rng = np.random.default_rng(5)
    scores, labels = np.linspace(0.0, 1.0, 300), (np.arange(300) % 3 == 0).astype(int)
    groups = [
        curve("group", f"a long group name {i}", scores + rng.normal(0, 0.3, 300), labels, 0.2, ("det", "scores"))
        for i in range(7)
    ]
    panels = [
        curve("condition", f"{m} (E13 {p})", scores + rng.normal(0, 0.3, 300), labels, 0.2, ("det",), figure="E13",
              panel=p, series=m)
        for p in ("clean", "noise: babble (hardest of 3)", "codec: opus-8k (hardest of 2)") for m in ("m1", "m2", "m3")
    ]  # fmt: skip
    contrasts = [
        {"experiment": f"E{i:02d}", "model_family": "ssl", "factor_a": "packet_loss_with_a_long_name",
         "factor_b": "emotion", "prediction": i / 40, "ie": i / 100, "eer_clean": 0.1, "eer_a": 0.2, "eer_b": 0.3,
         "eer_ab": 0.5}
        for i in range(1, 12)
    ]  # fmt: skip
    report = {"curves": groups, "aggregates": {"contrasts": contrasts}}
    figures = [
        *det_curves(report),
        *det_curves({"curves": panels}),
        score_distributions(report),
        ie_vs_prediction(report),
        interaction_plots(report),
    ]
    for figure in figures:
        assert figure.png is not None and _ink(figure.png) > 0.02, figure.filename
        assert _edge_ink(figure.png) == 0.0, figure.filename


def test_a_tables_long_names_are_cut_where_drawn_not_run_past_the_figure() -> None:
    """A 200-character factor, model family, experiment-level name or noise type in a results table: the interaction
    plots' and IE figure's legends and titles, the gap figure's legend keep to the figure (``_label(value, inches)``),
    ``...`` last; the full names stay in the text alternatives."""
    long = "codec-" + "x" * 194
    contrasts = [
        {"experiment": "E14", "model_family": "ssl" + "y" * 197, "factor_a": long, "factor_b": long[::-1],
         "eer_clean": 0.1 + i / 50, "eer_a": 0.2, "eer_b": 0.3, "eer_ab": 0.5, "prediction": 0.4 - i / 50,
         "ie": 0.1 + i / 50}
        for i in range(4)
    ]  # fmt: skip
    gap_rows = [{**row, "noise": long} for row in _audit_gap_rows()]
    report = {"aggregates": {"contrasts": contrasts, "gap_vs_snr": gap_rows, "ie_vs_prediction": {"n": 4}}}
    for figure in (interaction_plots(report), ie_vs_prediction(report), gap_vs_snr(report)):
        assert figure.svg is not None, figure.skipped_because
        assert past_the_edge(figure.svg) == [], figure.filename
        assert b"..." in figure.svg, figure.filename
