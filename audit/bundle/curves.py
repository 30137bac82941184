"""Per-trial curves for the report's figures: the DET curve (thinned) and target/non-target score histograms.

``audit scores`` gives one per group of a reviewer's trials. ``audit verify --bundle`` (``curves_of_bundle``, from
the scores the verification loaded, of an intact bundle only) gives, for the experiments whose conditions move the
EER most, one DET figure each: a panel per condition family (clean, factor A alone, factor B alone, both), one
curve per encoder at the family's hardest condition; and, per encoder, the score histograms of the condition that
moves its EER most above its clean reference, beside that reference; where the run declares a calibration, the
normalised Bayes error curves of the clean list (``bayes_error_curves``). They go into ``report["curves"]``: small
enough for report.json (at most ``DET_POINTS`` points, rounded, and ``HISTOGRAM_BINS`` bins each; only what the
curve's figure draws), read by ``reports.figures``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from audit.bundle.rescore_beyond import declared_calibration_of
from audit.metrics import MetricInputError, bayes_error_curve, calibration_records, eer, fit_groups, is_reference
from audit.table import is_clean
from schemas import EerMethod

if TYPE_CHECKING:
    from audit.bundle.verified import VerifiedBundle

DET_POINTS = 300  # points of a DET curve kept in the report
BUNDLE_DET_POINTS = 120  # per curve of a bundle, which draws many curves in small panels
DET_DECIMALS = 5  # rates rounded in report.json: a thousandth of the smallest axis tick (0.1 %)
HISTOGRAM_BINS = 40
MAX_DET_FIGURES = 4  # experiments drawn as DET figures, those whose conditions move the EER most
MAX_ENCODERS = 12  # encoders drawn in a DET panel and in the histograms
ALONE_AND_BOTH = "{a} x {b}"
PRIOR_LOG_ODDS = np.linspace(-6.0, 6.0, 49)  # the Bayes error plot's x axis: effective priors 0.0025 to 0.9975


def det_points(scores: np.ndarray, labels: np.ndarray, max_points: int = DET_POINTS) -> dict[str, list[float]]:
    """The DET curve (Pfa, Pmiss at every distinct threshold, from accept-none), thinned evenly to at most
    ``max_points`` points with both ends kept and rounded to ``DET_DECIMALS``: enough to draw it, small enough for
    report.json."""
    order = np.argsort(-scores, kind="stable")
    ordered, ordered_labels = scores[order], labels[order]
    last_of_tie = np.append(ordered[1:] != ordered[:-1], True)
    targets = np.cumsum(ordered_labels)[last_of_tie]
    nontargets = np.cumsum(1 - ordered_labels)[last_of_tie]
    p_fa = np.concatenate(([0.0], nontargets / nontargets[-1]))
    p_miss = np.concatenate(([1.0], 1.0 - targets / targets[-1]))
    keep = np.unique(np.linspace(0, p_fa.size - 1, min(max_points, p_fa.size)).round().astype(int))
    return {"p_fa": p_fa[keep].round(DET_DECIMALS).tolist(), "p_miss": p_miss[keep].round(DET_DECIMALS).tolist()}


def score_histogram(scores: np.ndarray, labels: np.ndarray, bins: int = HISTOGRAM_BINS) -> dict[str, list[float]]:
    """Target and non-target counts over common bins spanning the group's scores."""
    edges = np.histogram_bin_edges(scores, bins=bins)
    return {
        "edges": edges.tolist(),
        "target": np.histogram(scores[labels == 1], edges)[0].tolist(),
        "nontarget": np.histogram(scores[labels == 0], edges)[0].tolist(),
    }


FIGURES = ("det", "scores")


def curve(
    grouping: str,
    group: str,
    scores: np.ndarray,
    labels: np.ndarray,
    eer_interp: float,
    figures: tuple[str, ...] = FIGURES,
    max_points: int = DET_POINTS,
    **placement: str,
) -> dict[str, Any]:
    """One group's entry of ``report["curves"]``: what ``figures`` (DET, scores) draw of it; ``placement`` says where
    a bundle's figures put it (``figure``, ``panel``, ``series``, ``role``)."""
    entry: dict[str, Any] = {"grouping": grouping, "group": group, "eer_interp": eer_interp, "figures": list(figures)}
    if "det" in figures:
        entry["det"] = det_points(scores, labels, max_points)
    if "scores" in figures:
        entry["histogram"] = score_histogram(scores, labels)
    return entry | placement


def _record_curve(bundle: VerifiedBundle, record_id: str, group: str, drawn_by: str, **placement: str) -> dict | None:
    """The curve of one record from the scores the verification loaded; None when they were not loaded (the bundle
    checks say why) or hold one class only."""
    record = bundle.files.scores.get(record_id)
    if record is None:
        return None
    kept, labels = record.scores[record.scored], record.labels[record.scored].astype(np.int64)
    try:
        eer_interp = eer(kept, labels, EerMethod.INTERP)
    except MetricInputError:
        return None
    placement = placement | {"record_id": record_id}  # the statistics draw the DET curves' bands by it
    return curve("condition", group, kept, labels, eer_interp, (drawn_by,), BUNDLE_DET_POINTS, **placement)


def condition_families(rows: pd.DataFrame, clean_labels: tuple[str, ...], reference_level: str) -> pd.DataFrame:
    """Each row's condition ``family``, ranked in reading order (``family_rank``): ``clean``, factor A alone (its
    name), factor B alone, both (``A x B``); a row without factor columns is ``clean`` or ``conditions``."""
    reference = reference_level.lower()

    def family(row: Any) -> tuple[str, int]:
        if is_clean(str(row.condition), clean_labels):
            return "clean", 0
        factor_a, level_a = getattr(row, "factor_a", None), getattr(row, "level_a", None)
        factor_b, level_b = getattr(row, "factor_b", None), getattr(row, "level_b", None)
        a_on = isinstance(level_a, str) and level_a.lower() != reference
        b_on = isinstance(level_b, str) and level_b.lower() != reference
        if a_on and b_on:
            return ALONE_AND_BOTH.format(a=factor_a, b=factor_b), 3
        if a_on or b_on:
            return (str(factor_a), 1) if a_on else (str(factor_b), 2)
        return ("clean", 0) if isinstance(level_a, str) else ("conditions", 4)

    found = [family(row) for row in rows.itertuples()]
    return pd.DataFrame(found, index=rows.index, columns=["family", "family_rank"])


def _moves(rows: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Each row's EER above its encoder's clean row of the same experiment and corpus (NaN without one)."""
    clean = rows.loc[rows["family"] == "clean", [*keys, "eer"]].drop_duplicates(keys)
    reference = rows[keys].merge(clean.rename(columns={"eer": "clean_eer"}), on=keys, how="left")["clean_eer"]
    return rows["eer"] - reference.to_numpy(dtype=float)


def det_panels(rows: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(experiment, panel title, one row per encoder) of the DET figures: the ``MAX_DET_FIGURES`` experiments whose
    hardest condition moves the mean EER most above clean, a panel per condition family at its hardest condition
    (highest mean EER over encoders)."""
    chosen = []
    for experiment, own in rows.groupby("experiment", sort=True):
        panels = []
        for (_, family), members in own.groupby(["family_rank", "family"], sort=True):
            means = members.groupby("condition")["eer"].mean()
            hardest = str(means.idxmax())
            title = family if family == "clean" else f"{family}: {hardest} (hardest of {len(means)})"
            panels.append((family, title, members[members["condition"] == hardest].drop_duplicates("model")))
        rise = own["move"].max()
        chosen.append((rise if np.isfinite(rise) else -np.inf, str(experiment), panels))
    drawn = sorted(chosen, key=lambda item: -item[0])[:MAX_DET_FIGURES]
    return [
        (experiment, title, members.head(MAX_ENCODERS))
        for _, experiment, panels in sorted(drawn, key=lambda item: item[1])
        for _, title, members in panels
    ]


def curves_of_bundle(
    results: pd.DataFrame, bundle: VerifiedBundle, clean_labels: tuple[str, ...], reference_level: str = "none"
) -> list[dict[str, Any]]:
    """From an intact bundle's per-trial scores (rows without a subgroup): the DET curves of ``det_panels``, and per
    encoder the score histograms of its clean reference and of the condition that moves its EER most above it."""
    if not bundle.intact or results.empty or "record_id" not in results:
        return []
    rows = results[results["subgroup"].isna()] if "subgroup" in results else results
    rows = rows.sort_values(["experiment", "record_id"])
    keys = ["experiment", "corpus", "model"] if "corpus" in rows else ["experiment", "model"]
    rows = pd.concat([rows, condition_families(rows, clean_labels, reference_level)], axis=1)
    rows = rows.assign(move=_moves(rows, keys))
    found = [
        _record_curve(
            bundle, str(row.record_id), f"{row.model} ({experiment} {row.condition})", "det",
            figure=experiment, panel=title, series=str(row.model),
        )
        for experiment, title, members in det_panels(rows)
        for row in members.itertuples()
    ]  # fmt: skip
    moved = rows[np.isfinite(rows["move"]) & (rows["family"] != "clean")]
    for model in sorted(moved["model"].unique())[:MAX_ENCODERS]:
        most = moved[moved["model"] == model].sort_values("move", ascending=False, kind="stable").iloc[0]
        same = (rows[keys] == most[keys]).all(axis=1)
        for row, role in ((rows[same & (rows["family"] == "clean")].iloc[0], "reference"), (most, "condition")):
            group = f"{model} {row.experiment} {row.condition}"
            found.append(
                _record_curve(bundle, str(row.record_id), group, "scores", panel=str(model), series=str(row.condition),
                              role=role)
            )  # fmt: skip
    return [entry for entry in found if entry is not None] + bayes_error_curves(bundle)


def bayes_error_curves(bundle: VerifiedBundle) -> list[dict[str, Any]]:
    """Per encoder, the normalised Bayes error of the calibrated LLRs of the clean list (the first experiment's
    reference record, enrolment and test clean, no subgroup) and of their PAV recalibration, over
    ``PRIOR_LOG_ODDS`` (``audit.metrics.calibration.bayes_error_curve``): on the bona fide evaluation trials, with
    the map the run's declared calibration fits (the one ``cllr`` and ``act_dcf`` are re-derived with). None
    without a declared calibration or a fitted map."""
    declaration, dev_speakers, _ = declared_calibration_of(bundle.files)
    if declaration is None or not bundle.intact:
        return []
    files, list_of = bundle.files, bundle.trial_list_of
    rows = [
        row
        for row in files.signed_rows
        if str(row.get("record_id")) in files.scores and list_of.get(str(row.get("record_id"))) in files.trial_lists
    ]
    records = calibration_records(
        rows,
        lambda record_id: files.trial_lists[list_of[record_id]],
        lambda record_id: files.scores[record_id].scores,
    )
    fits = fit_groups(records, dev_speakers, declaration.prior, platt=declaration.method == "platt")
    clean = [
        (row, record)
        for row, record in zip(rows, records, strict=True)
        if is_reference(row) and _blank(row.get("subgroup")) and fits[record.group].fit is not None
    ]
    if not clean:
        return []
    first = min(str(row.get("experiment")) for row, _ in clean)
    curves = []
    for row, record in sorted(clean, key=lambda pair: pair[1].record_id):
        fit = fits[record.group].fit
        if str(row.get("experiment")) != first or fit is None:  # fit: never None here, for the type checker
            continue
        _, evaluation = record.masks(dev_speakers)
        labels = record.labels[evaluation]
        if not (labels == 1).any() or not (labels == 0).any():
            continue
        group = f"{row.get('model')} ({first} {row.get('condition')})"
        llrs = fit.apply(record.scores[evaluation])
        curves.append(bayes_error_entry(group, llrs, labels, series=str(row.get("model")), figure=first))
    return curves


def bayes_error_entry(group: str, llrs: np.ndarray, labels: np.ndarray, **placement: str) -> dict[str, Any]:
    """One entry of ``report["curves"]`` for the Bayes error plot: the actual and minimum normalised Bayes error
    of ``llrs`` over ``PRIOR_LOG_ODDS``, rounded, with the trial counts."""
    actual, minimum = bayes_error_curve(llrs, labels, PRIOR_LOG_ODDS)
    return {
        "grouping": "calibration",
        "group": group,
        "figures": ["bayes-error"],
        "prior_log_odds": PRIOR_LOG_ODDS.round(DET_DECIMALS).tolist(),
        "actual": actual.round(DET_DECIMALS).tolist(),
        "minimum": minimum.round(DET_DECIMALS).tolist(),
        "n_target": int((labels == 1).sum()),
        "n_nontarget": int((labels == 0).sum()),
    } | placement


def _blank(value: Any) -> bool:
    """None, NaN or an empty string: a results cell that holds nothing."""
    return value is None or value != value or value == ""
