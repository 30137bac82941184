"""Adaptive symmetric score normalisation (AS-norm) against a cohort of impostor speakers.

Each side of a trial is scored against every cohort embedding; the ``top_n`` highest of those scores (the cohort
closest to that side) give its mean and standard deviation, and the trial's score ``s`` becomes

    s_norm = ((s - mu_e) / sigma_e + (s - mu_t) / sigma_t) / 2

(Cumani et al., "Comparison of speaker recognition approaches for real applications", Interspeech 2011: adaptive
s-norm; Matejka et al., "Analysis of score normalization in multilingual speaker recognition", Interspeech 2017:
the top-N form). The standard deviation's divisor is a choice the recipes make differently: ``top_n - ddof``, with
``ddof = 1`` (the sample SD, ``torch.std``'s default) in SpeechBrain's ``speaker_verification_cosine.py`` and
``ddof = 0`` (``np.std``'s default) in WeSpeaker's ``score_norm.py``. The runner writes ``COHORT_SD_DDOF`` (1,
SpeechBrain's) into its bundles; ``top_cohort_statistics`` takes either. Both sides' deviations scale by the same
``sqrt((top_n - 1) / top_n)``, so the normalised scores of one ``top_n`` scale by its inverse: EER and minDCF are
unchanged, calibrated or thresholded AS-norm scores are not.

A bundle stores the four cohort statistics of each trial (``schemas.bundle.COHORT_COLUMNS``), not the cohort's
embeddings: the audit re-derives the normalised scores and their metrics from them, and cannot re-derive the
statistics themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics.point import MetricInputError, eer, min_dcf
from schemas import EER_METHODS, EerMethod, row_costs

MIN_TOP_N = 2  # a standard deviation needs two scores
COHORT_SD_DDOF = 1  # the runner's choice: the sample SD, as SpeechBrain's recipe takes it (WeSpeaker's: 0)


def top_cohort_statistics(
    cohort_scores: ArrayLike, top_n: int, ddof: int = COHORT_SD_DDOF
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per row of ``cohort_scores`` (one side scored against each cohort embedding), the mean and the standard
    deviation (divisor ``top_n - ddof``: 1 is SpeechBrain's ``torch.std``, 0 WeSpeaker's ``np.std``) of its
    ``top_n`` highest scores.

    Example:
        The two highest of 0.1, 0.5, 0.3 and 0.9 are 0.9 and 0.5: mean 0.7, standard deviation 0.4 / sqrt(2), or 0.2
        with WeSpeaker's divisor:

        >>> mean, std = top_cohort_statistics([[0.1, 0.5, 0.3, 0.9]], 2)
        >>> round(float(mean[0]), 12), round(float(std[0]), 6)
        (0.7, 0.282843)
        >>> round(float(top_cohort_statistics([[0.1, 0.5, 0.3, 0.9]], 2, ddof=0)[1][0]), 12)
        0.2
    """
    if ddof not in (0, 1):
        raise MetricInputError(f"ddof must be 0 (np.std, WeSpeaker) or 1 (torch.std, SpeechBrain), got {ddof!r}")
    matrix = np.asarray(cohort_scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise MetricInputError(f"expected one row of cohort scores per side, got an array of shape {matrix.shape}")
    if isinstance(top_n, bool) or not isinstance(top_n, int | np.integer) or top_n < MIN_TOP_N:
        raise MetricInputError(f"top_n must be an integer >= {MIN_TOP_N}, got {top_n!r}")
    if top_n > matrix.shape[1]:
        raise MetricInputError(f"top_n {top_n} is more than the cohort's {matrix.shape[1]} embeddings")
    if not np.isfinite(matrix).all():
        raise MetricInputError("a cohort score is not finite")
    top = np.partition(matrix, matrix.shape[1] - top_n, axis=1)[:, matrix.shape[1] - top_n :]
    return top.mean(axis=1), top.std(axis=1, ddof=ddof)


def as_norm(
    scores: ArrayLike, enrol_mean: ArrayLike, enrol_std: ArrayLike, test_mean: ArrayLike, test_std: ArrayLike
) -> NDArray[np.float64]:
    """AS-norm of each trial's score from its two sides' cohort statistics (module docstring); NaN where a
    score or a statistic is NaN or a standard deviation is not positive.

    Example:
        A score of 0.8 lies 2 enrolment-side and 3 test-side standard deviations above the cohorts' means:

        >>> as_norm([0.8], [0.4], [0.2], [0.5], [0.1]).round(12).tolist()
        [2.5]
    """
    s, mu_e, sd_e, mu_t, sd_t = (
        np.asarray(values, dtype=np.float64) for values in (scores, enrol_mean, enrol_std, test_mean, test_std)
    )
    if not s.shape == mu_e.shape == sd_e.shape == mu_t.shape == sd_t.shape:
        raise MetricInputError("scores and cohort statistics must have one value per trial each")
    usable = (sd_e > 0) & (sd_t > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        normalised = 0.5 * ((s - mu_e) / sd_e + (s - mu_t) / sd_t)
    return np.where(usable, normalised, np.nan)


def as_norm_metrics(
    labels: ArrayLike,
    scores: ArrayLike,
    cohort: ArrayLike,
    *,
    method: EerMethod,
    p_target: float,
    c_miss: float,
    c_fa: float,
) -> dict[str, Any]:
    """A record's ``eer_as_norm`` (in ``method``) and ``min_dcf_as_norm`` over its scored trials (``scores`` NaN
    where unscored), from each trial's cohort statistics (``cohort``: columns enrol mean, enrol std, test mean,
    test std); empty (None) when a scored trial has no usable normalised score, with ``n_unnormalised`` saying
    how many, or when the trials lack a class."""
    labels, scores, stats = (np.asarray(values) for values in (labels, scores, cohort))
    scored = np.isfinite(scores.astype(np.float64))
    normalised = as_norm(scores, stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3])
    unusable = int((scored & ~np.isfinite(normalised)).sum())
    kept_labels = labels[scored].astype(np.int64)
    empty = {"eer_as_norm": None, "min_dcf_as_norm": None, "n_unnormalised": unusable}
    if unusable or not (kept_labels == 1).any() or not (kept_labels == 0).any():
        return empty
    kept = normalised[scored]
    return {
        "eer_as_norm": eer(kept, kept_labels, method),
        "min_dcf_as_norm": min_dcf(kept, kept_labels, p_target, c_miss, c_fa),
        "n_unnormalised": 0,
    }


def as_norm_of_rows(
    rows: Sequence[Mapping[str, Any]],
    labels_of: Callable[[str], NDArray[Any]],
    scores_of: Callable[[str], NDArray[np.float64]],
    cohort_of: Callable[[str], NDArray[np.float64] | None],
) -> dict[str, dict[str, Any]]:
    """:func:`as_norm_metrics` of every row whose scores carry cohort statistics (by record id), in the row's own
    ``eer_method`` (``rocch`` where it names none) and costs; one implementation for the runner, which writes them,
    and the audit, which re-derives them from the verified score files."""
    metrics = {}
    for row in rows:
        record_id = str(row["record_id"])
        cohort = cohort_of(record_id)
        if cohort is None:
            continue
        named = str(row.get("eer_method"))
        method = EerMethod(named) if named in EER_METHODS else EerMethod.ROCCH
        p_target, c_miss, c_fa = row_costs(row)
        metrics[record_id] = as_norm_metrics(
            labels_of(record_id),
            scores_of(record_id),
            cohort,
            method=method,
            p_target=p_target,
            c_miss=c_miss,
            c_fa=c_fa,
        )
    return metrics
