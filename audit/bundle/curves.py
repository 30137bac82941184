"""Per-trial curves for the report's figures: the DET curve (thinned) and target/non-target score histograms.

``audit scores`` gives one per group of a reviewer's trials, ``audit verify --bundle`` one per encoder on its clean
reference and one per condition of one encoder (``curves_of_bundle``, from the scores the verification loaded, of
an intact bundle only). They go into ``report["curves"]``: small
enough for report.json (at most ``DET_POINTS`` points and ``HISTOGRAM_BINS`` bins each), read by
``reports.figures``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from audit.metrics.point import MetricInputError, eer
from audit.table.aggregates import is_clean
from schemas.eer_method import EerMethod

if TYPE_CHECKING:
    from audit.bundle.verified import VerifiedBundle

DET_POINTS = 300  # points of a DET curve kept in the report
HISTOGRAM_BINS = 40
MAX_CURVES = 9  # curves of a bundle: encoders on their clean reference, conditions of one encoder


def det_points(scores: np.ndarray, labels: np.ndarray, max_points: int = DET_POINTS) -> dict[str, list[float]]:
    """The DET curve (Pfa, Pmiss at every distinct threshold, from accept-none), thinned evenly to at most
    ``max_points`` points with both ends kept: enough to draw it, small enough for report.json."""
    order = np.argsort(-scores, kind="stable")
    ordered, ordered_labels = scores[order], labels[order]
    last_of_tie = np.append(ordered[1:] != ordered[:-1], True)
    targets = np.cumsum(ordered_labels)[last_of_tie]
    nontargets = np.cumsum(1 - ordered_labels)[last_of_tie]
    p_fa = np.concatenate(([0.0], nontargets / nontargets[-1]))
    p_miss = np.concatenate(([1.0], 1.0 - targets / targets[-1]))
    keep = np.unique(np.linspace(0, p_fa.size - 1, min(max_points, p_fa.size)).round().astype(int))
    return {"p_fa": p_fa[keep].tolist(), "p_miss": p_miss[keep].tolist()}


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
) -> dict[str, Any]:
    """One group's entry of ``report["curves"]``; ``figures`` names the figures that draw it (DET, scores)."""
    return {
        "grouping": grouping,
        "group": group,
        "eer_interp": eer_interp,
        "figures": list(figures),
        "det": det_points(scores, labels),
        "histogram": score_histogram(scores, labels),
    }


def _record_curve(
    bundle: VerifiedBundle, record_id: str, grouping: str, group: str, figure: str
) -> dict[str, Any] | None:
    """The curve of one record from the scores the verification loaded; None when they were not loaded (the bundle
    checks say why) or hold one class only."""
    record = bundle.files.scores.get(record_id)
    if record is None:
        return None
    kept, labels = record.scores[record.scored], record.labels[record.scored].astype(np.int64)
    try:
        return curve(grouping, group, kept, labels, eer(kept, labels, EerMethod.INTERP), (figure,))
    except MetricInputError:
        return None


def curves_of_bundle(
    results: pd.DataFrame, bundle: VerifiedBundle, clean_labels: tuple[str, ...]
) -> list[dict[str, Any]]:
    """From an intact bundle's per-trial scores: a DET curve per encoder on its first clean record (no subgroup),
    and the score histograms of each condition of the first encoder in its experiment with most conditions."""
    if not bundle.intact or results.empty or "record_id" not in results:
        return []
    rows = results[results["subgroup"].isna()] if "subgroup" in results else results
    rows = rows.sort_values(["experiment", "record_id"])
    clean = rows[rows["condition"].map(lambda c: is_clean(str(c), clean_labels))].drop_duplicates("model")
    found = [
        _record_curve(bundle, str(row.record_id), "encoder", f"{row.model} ({row.experiment} {row.condition})", "det")
        for row in clean.head(MAX_CURVES).itertuples()
    ]
    if len(rows):
        model = sorted(rows["model"].unique())[0]
        own = rows[rows["model"] == model]
        experiment = own.groupby("experiment")["condition"].nunique().idxmax()
        for row in own[own["experiment"] == experiment].drop_duplicates("condition").head(MAX_CURVES).itertuples():
            group = f"{model} {experiment} {row.condition}"
            found.append(_record_curve(bundle, str(row.record_id), "condition", group, "scores"))
    return [entry for entry in found if entry is not None]
