"""DET curves with pointwise speaker-bootstrap bands (issue 41): at each false-alarm rate of a fixed grid, the miss
rate of every draw of the audit's shared two-way speaker bootstrap, and the percentile band of those draws.

No second bootstrap: a curve's draws are its trials weighed as every other statistic weighs them (a trial counts its
enrolment speaker's multiplicity times its test speaker's), summed per score bin and read in one compiled pass, a
tile of draws at a time (``audit.metrics.binned_miss_at_rates``). The bins are every distinct score, or, beyond
``MAX_BINS``, the quantiles of each class's scores (half the bins each, so both the non-targets' upper tail, which
sets low false-alarm rates, and the targets are resolved); trials sharing a bin are tied at its threshold. Each
draw's DET is the ROC through its thresholds (accept a bin and those above), linearly interpolated between them,
read at every false-alarm rate of ``BAND_P_FA`` (the rate's exact miss on the straight segment between two
thresholds; ``audit.metrics.miss_at_rates``, a compiled loop over each draw's bins); grid rates below one
non-target trial's share are left out (the curve there is no measurement). The band is pointwise (each rate's own
``level`` percentile interval), not simultaneous: read it as "at this false-alarm rate, the miss rate lies here", not
as a region the whole curve keeps to. Coverage measured by simulation in benchmarks/bench_det_bands.py (figures in
benchmarks/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr, ndtri

from audit.metrics import ResampleWeights, binned_miss_at_rates, miss_at_rates
from audit.statistics.contrasts import SpeakerDraws, _n_speakers
from audit.statistics.draws import FloatArray, IntArray, StatisticsInputError
from audit.statistics.records import ScoredRecord

# 33 false-alarm rates evenly spaced on the normal-deviate axis from 0.1 % to 50 %: the DET's own axis.
BAND_P_FA: FloatArray = ndtr(np.linspace(ndtri(0.001), 0.0, 33))
MAX_BINS = 2048  # score bins per curve (2 x MAX_BINS x draws sums held at once)
BAND_DECIMALS = 5  # rates rounded in report.json, as the DET points (audit.bundle.curves)


def score_bins(scores: FloatArray, labels: NDArray[np.bool_], max_bins: int = MAX_BINS) -> tuple[IntArray, int]:
    """Each trial's bin (ascending score) and the number of bins: every distinct score when there are at most
    ``max_bins``, else bins cut at the quantiles of each class's scores (``max_bins // 2`` each).

    >>> score_bins(np.array([0.3, 0.1, 0.3, 0.2]), np.array([True, False, True, False]))
    (array([2, 0, 2, 1]), 3)
    """
    distinct = np.unique(scores)
    if distinct.size <= max_bins:
        return np.searchsorted(distinct, scores).astype(np.int64), int(distinct.size)
    levels = np.linspace(0.0, 1.0, max_bins // 2 + 1)[1:-1]
    edges = np.unique(np.r_[np.quantile(scores[labels], levels), np.quantile(scores[~labels], levels)])
    return np.searchsorted(edges, scores, side="right").astype(np.int64), int(edges.size + 1)


def pointwise_band(
    scores: FloatArray,
    labels: NDArray[np.bool_],
    weights: ArrayLike | ResampleWeights,
    enrol: IntArray,
    partners: IntArray | None,
    level: float,
    p_fa: FloatArray = BAND_P_FA,
) -> dict[str, Any]:
    """The DET miss rate of finite ``scores`` at each false-alarm rate of ``p_fa`` (from one non-target trial's share
    up) with its pointwise ``level`` percentile band over the draws of ``weights`` (resamples x speakers), each
    trial weighed by its enrolment speaker's code (``enrol``) and its partner's (``partners``, as
    ``audit.metrics.binned_sums`` takes them): what ``det_band`` gives a record, for speaker codes made elsewhere
    (``audit scores``).

    >>> band = pointwise_band(np.array([0.9, 0.8, 0.4, 0.3, 0.2, 0.1]), np.array([1, 1, 1, 0, 0, 0], bool),
    ...                       np.ones((4, 3)), np.array([0, 1, 2, 0, 1, 2]), None, 0.95, np.array([0.1, 0.5]))
    >>> band["p_fa"], band["p_miss"], band["low"], band["high"]
    ([0.5], [0.0], [0.0], [0.0])
    """
    n_target, n_nontarget = int(labels.sum()), int((~labels).sum())
    if not (n_target and n_nontarget):
        raise StatisticsInputError("its scored trials lack a class")
    rates = p_fa[p_fa * n_nontarget >= 1.0]
    bins, n = score_bins(scores, labels)
    column = bins + np.where(labels, 0, n)
    point = np.bincount(column, minlength=2 * n).astype(float)[:, None]
    estimate = miss_at_rates(rates, point, n)[0]
    drawn = binned_miss_at_rates(rates, weights, enrol, partners, column, n)
    defined = np.isfinite(drawn[:, 0]) if rates.size else np.zeros(0, bool)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(drawn[defined], [tail, 1.0 - tail], axis=0) if defined.any() else (rates * np.nan,) * 2

    def rounded(values: FloatArray) -> list[float]:
        return [round(float(value), BAND_DECIMALS) for value in values]

    return {
        "p_fa": rounded(rates),
        "p_miss": rounded(estimate),
        "low": rounded(low),
        "high": rounded(high),
        "level": level,
        "n_target": n_target,
        "n_nontarget": n_nontarget,
        "n_undefined": int(drawn.shape[0] - defined.sum()),
    }


def det_band(record: ScoredRecord, draws: SpeakerDraws, level: float, p_fa: FloatArray = BAND_P_FA) -> dict[str, Any]:
    """The curve's miss rate at each false-alarm rate of ``p_fa`` (from a non-target trial's share up) with its
    pointwise percentile band over ``draws``, and the trials and speakers behind it."""
    scored = np.isfinite(record.scores)
    scores, labels = record.scores[scored], record.labels[scored].astype(bool)
    enrol, test = record.enrol_speaker, record.test_speaker  # a list's own columns: their codes are made once
    if not scored.all():
        enrol, test = np.asarray(enrol)[scored], np.asarray(test)[scored]
    codes = draws.codes(enrol, test)
    try:
        band = pointwise_band(scores, labels, draws.weights, *codes, level, p_fa)
    except StatisticsInputError as error:
        raise StatisticsInputError(f"DET band {dict(record.key)}: {error}") from None
    n_speakers = _n_speakers([codes], draws.index.size)  # the enrolment and test speakers, from their codes
    undefined = band.pop("n_undefined")
    return {"key": dict(record.key), **band, "n_speakers": n_speakers, "n_undefined": undefined}


def det_bands(records: Sequence[ScoredRecord], draws: SpeakerDraws, level: float) -> list[dict[str, Any]]:
    """``det_band`` of every record, or why it has none (``skipped``)."""
    bands = []
    for record in records:
        try:
            bands.append(det_band(record, draws, level))
        except StatisticsInputError as error:
            bands.append({"key": dict(record.key), "skipped": str(error)})
    return bands
