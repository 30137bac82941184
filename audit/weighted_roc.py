"""Weighted ROC curves of many speaker resamples at once: the bootstrap's EERs and weighted counts.

A resample is a row of speaker multiplicities (``audit.statistics.draw_cluster_weights``); a trial weighs its
enrolment speaker's multiplicity times its partner's (``audit.statistics.pair_codes``: the partner code
``n_speakers`` stands for a weight of 1, a trial of one speaker or one-way clustering). A row of integer weights
is a resample of the trials, and its EER equals ``audit.metrics.eer`` of the trials repeated that often (tested
bit for bit for ``legacy``, to 1e-12 for ``interp`` and ``rocch``). The trials are sorted once per score
array; each row then streams them in compiled code (``audit.roc_kernels``), so no (rows x trials) matrix is
ever built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics import EER_METHODS, EerMethod, MetricInputError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
_METHOD_CODES = {"interp": 0, "legacy": 1, "rocch": 2}  # audit.roc_kernels' INTERP, LEGACY, ROCCH


class WeightedRocInputError(MetricInputError):
    """Weights, codes or scores on which a weighted ROC is not defined."""


def _codes(weights: FloatArray, clusters: ArrayLike, partners: ArrayLike | None) -> tuple[IntArray, IntArray]:
    """Enrolment and partner codes checked against the weight columns (the compiled loops do not check)."""
    n_speakers = weights.shape[1]
    enrol = np.ascontiguousarray(clusters, dtype=np.int64)
    partner = (
        np.full(enrol.size, n_speakers, dtype=np.int64)
        if partners is None
        else np.ascontiguousarray(partners, dtype=np.int64)
    )
    if partner.shape != enrol.shape:
        raise WeightedRocInputError(f"{enrol.size} enrolment codes but {partner.size} partner codes")
    if enrol.size and (enrol.min() < 0 or enrol.max() >= n_speakers or partner.min() < 0 or partner.max() > n_speakers):
        raise WeightedRocInputError(f"speaker codes must lie in 0..{n_speakers - 1} (partners up to {n_speakers})")
    return enrol, partner


def _weights(weights: ArrayLike) -> FloatArray:
    array = np.ascontiguousarray(weights, dtype=np.float64)
    if array.ndim != 2:
        raise WeightedRocInputError(f"weights must be (resamples x speakers), got shape {array.shape}")
    return array


def weighted_sums(weights: ArrayLike, clusters: ArrayLike, partners: ArrayLike | None, values: ArrayLike) -> FloatArray:
    """(resamples x columns): each column of ``values`` (trials x columns) summed with each row's trial weights."""
    from audit import roc_kernels

    weight_array = _weights(weights)
    enrol, partner = _codes(weight_array, clusters, partners)
    value_array = np.ascontiguousarray(values, dtype=np.float64).reshape(enrol.size, -1)
    sums: FloatArray = roc_kernels.weighted_sums(weight_array, enrol, partner, value_array)
    return sums


def class_totals(
    weights: ArrayLike, clusters: ArrayLike, labels: ArrayLike, partners: ArrayLike | None = None
) -> tuple[FloatArray, FloatArray]:
    """Per row, the total weight of the target and of the non-target trials, summed over distinct speaker
    pairs (a trial list repeats pairs, so this is much shorter than a pass over the trials)."""
    weight_array = _weights(weights)
    enrol, partner = _codes(weight_array, clusters, partners)
    label_array = np.asarray(labels).astype(bool)
    pair = (enrol * (weight_array.shape[1] + 1) + partner) * 2 + label_array
    distinct, counts = np.unique(pair, return_counts=True)
    is_target = (distinct & 1).astype(bool)
    speakers = distinct >> 1
    per_class = np.column_stack([np.where(is_target, counts, 0), np.where(is_target, 0, counts)])
    sums = weighted_sums(
        weight_array, speakers // (weight_array.shape[1] + 1), speakers % (weight_array.shape[1] + 1), per_class
    )
    return sums[:, 0].copy(), sums[:, 1].copy()


@dataclass(frozen=True)
class SortedTrials:
    """One score array's trials in descending score order, with where each threshold's trials end
    (``group_end``) and where each run that ROCCH pools without looking ends (``unit_end``: a run of
    thresholds of one class, or one threshold holding both)."""

    enrol: IntArray
    partner: IntArray
    labels: NDArray[np.bool_]
    group_end: IntArray
    unit_end: IntArray

    @classmethod
    def of(cls, scores: ArrayLike, labels: ArrayLike, enrol: IntArray, partner: IntArray) -> SortedTrials:
        score_array = np.asarray(scores, dtype=np.float64)
        label_array = np.asarray(labels).astype(bool)
        if not (score_array.shape == label_array.shape == enrol.shape):
            raise WeightedRocInputError(
                f"scores, labels and speaker codes differ in length ({score_array.size}, {label_array.size}, "
                f"{enrol.size})"
            )
        if not np.isfinite(score_array).all():
            raise WeightedRocInputError("scores must be finite (drop unscored trials first)")
        order = np.argsort(-score_array, kind="stable")
        ordered = score_array[order]
        ordered_labels = label_array[order]
        group_end = np.append(np.flatnonzero(ordered[1:] != ordered[:-1]) + 1, ordered.size).astype(np.int64)
        group_start = np.concatenate(([0], group_end[:-1]))
        targets = np.add.reduceat(ordered_labels.astype(np.int64), group_start) if ordered.size else group_end
        kind = np.where(targets == 0, 0, np.where(targets == group_end - group_start, 1, 2))  # non-target, target, both
        closes_unit = np.append((kind[:-1] == 2) | (kind[1:] != kind[:-1]), True)
        return cls(
            enrol=np.ascontiguousarray(enrol[order]),
            partner=np.ascontiguousarray(partner[order]),
            labels=np.ascontiguousarray(ordered_labels),
            group_end=group_end,
            unit_end=np.ascontiguousarray(group_end[closes_unit]),
        )


def weighted_eer(
    scores: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike,
    weights: ArrayLike,
    method: EerMethod = "interp",
    partners: ArrayLike | None = None,
    totals: tuple[FloatArray, FloatArray] | None = None,
) -> FloatArray:
    """The EER of each row of speaker ``weights`` (resamples x speakers) in ``method``; NaN where a class
    weighs 0. ``totals``: the rows' class totals when the caller has them (``class_totals``)."""
    from audit import roc_kernels

    if method not in EER_METHODS:
        raise WeightedRocInputError(f"unknown bootstrap EER method {method!r}: expected interp, legacy or rocch")
    weight_array = _weights(weights)
    enrol, partner = _codes(weight_array, clusters, partners)
    trials = SortedTrials.of(scores, labels, enrol, partner)
    n_target, n_nontarget = totals if totals is not None else class_totals(weight_array, enrol, labels, partner)
    eers: FloatArray = roc_kernels.eer_of_rows(
        weight_array,
        trials.enrol,
        trials.partner,
        trials.labels,
        trials.group_end,
        trials.unit_end,
        np.ascontiguousarray(n_target, dtype=np.float64),
        np.ascontiguousarray(n_nontarget, dtype=np.float64),
        _METHOD_CODES[method],
    )
    return eers
