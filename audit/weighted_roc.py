"""Weighted ROC curves of many speaker resamples at once: the bootstrap's EERs and weighted counts.

A resample is a row of speaker multiplicities (``audit.statistics.draw_cluster_weights``); a trial weighs its
enrolment speaker's multiplicity times its partner's (``audit.statistics.pair_codes``: the partner code
``n_speakers`` stands for a weight of 1, a trial of one speaker or one-way clustering). A row of integer weights
is a resample of the trials, and its EER equals ``audit.metrics.eer`` of the trials repeated that often (tested
bit for bit for ``legacy``, to 1e-12 for ``interp`` and ``rocch``). The trials are sorted once per score
array; compiled loops (``audit.roc_kernels``) then sum each threshold's weight for a block of rows at a time
and walk each row's curve, so memory stays near ``_BLOCK_BYTES`` per core whatever the number of resamples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics import EER_METHODS, EerMethod, MetricInputError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
_METHOD_CODES = {"interp": 0, "legacy": 1, "rocch": 2}  # audit.roc_kernels' INTERP, LEGACY, ROCCH
_BLOCK_BYTES = 4 << 20  # per block of rows: its units' cumulative target and non-target sums


class WeightedRocInputError(MetricInputError):
    """Weights, codes or scores on which a weighted ROC is not defined."""


@dataclass(frozen=True)
class _Local:
    """The weights of the speakers one trial list involves, transposed (speakers x rows, C order) with a last
    speaker of weight 1, and each trial's enrolment and partner code into it: the loops then read a few
    contiguous rows of weights, whatever the number of speakers drawn."""

    weights: FloatArray
    enrol: IntArray
    partner: IntArray

    @classmethod
    def of(cls, weights: ArrayLike, clusters: ArrayLike, partners: ArrayLike | None) -> _Local:
        weight_array = np.asarray(weights, dtype=np.float64)
        if weight_array.ndim != 2:
            raise WeightedRocInputError(f"weights must be (resamples x speakers), got shape {weight_array.shape}")
        n_speakers = weight_array.shape[1]
        enrol = np.asarray(clusters, dtype=np.int64)
        partner = np.full(enrol.size, n_speakers, dtype=np.int64) if partners is None else np.asarray(partners)
        partner = partner.astype(np.int64, copy=False)
        if partner.shape != enrol.shape or enrol.ndim != 1:
            raise WeightedRocInputError(f"{enrol.size} enrolment codes but {partner.size} partner codes")
        out_of_range = enrol.size and (enrol.min() < 0 or enrol.max() >= n_speakers)
        if out_of_range or (partner.size and (partner.min() < 0 or partner.max() > n_speakers)):
            raise WeightedRocInputError(f"speaker codes must lie in 0..{n_speakers - 1} (partners up to {n_speakers})")
        used = np.zeros(n_speakers + 1, dtype=bool)
        used[enrol] = True
        used[partner] = True
        drawn = np.flatnonzero(used[:n_speakers])
        local = np.cumsum(used) - 1  # code -> local code; the weight-1 code n_speakers -> drawn.size, the last row
        # One gather into a fresh array (contiguous rows when the caller keeps weights in F order), the last row then
        # set to 1: a gather into a prepared array costs three times as much.
        rows = weight_array.shape[0]
        local_weights = weight_array.T[np.append(drawn, 0)] if n_speakers else np.empty((1, rows))
        local_weights[drawn.size] = 1.0
        return cls(local_weights, local[enrol], local[partner])


def weighted_sums(weights: ArrayLike, clusters: ArrayLike, partners: ArrayLike | None, values: ArrayLike) -> FloatArray:
    """(resamples x columns): each column of ``values`` (trials x columns) summed with each row's trial weights."""
    from audit import roc_kernels

    local = _Local.of(weights, clusters, partners)
    value_array = np.ascontiguousarray(values, dtype=np.float64).reshape(local.enrol.size, -1)
    sums = roc_kernels.weighted_sums(local.weights, local.enrol, local.partner, value_array)
    return np.ascontiguousarray(sums.T)


@dataclass(frozen=True)
class SortedTrials:
    """One score array's trials in descending score order, with where each threshold's trials end
    (``group_end``) and where each run that ROCCH pools without looking ends (``unit_end``: a run of
    thresholds of one class, or one threshold holding both)."""

    order: IntArray
    labels: NDArray[np.bool_]
    group_end: IntArray
    unit_end: IntArray

    @classmethod
    def of(cls, scores: ArrayLike, labels: ArrayLike) -> SortedTrials:
        score_array = np.asarray(scores, dtype=np.float64)
        label_array = np.asarray(labels).astype(bool)
        if score_array.shape != label_array.shape or score_array.ndim != 1:
            raise WeightedRocInputError(f"{score_array.size} scores but {label_array.size} labels")
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
        return cls(order, np.ascontiguousarray(ordered_labels), group_end, np.ascontiguousarray(group_end[closes_unit]))


def weighted_eer(
    scores: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike,
    weights: ArrayLike,
    method: EerMethod = "interp",
    partners: ArrayLike | None = None,
) -> FloatArray:
    """The EER of each row of speaker ``weights`` (resamples x speakers) in ``method``; NaN where a class
    weighs 0."""
    from audit import roc_kernels

    if method not in EER_METHODS:
        raise WeightedRocInputError(f"unknown bootstrap EER method {method!r}: expected interp, legacy or rocch")
    local = _Local.of(weights, clusters, partners)
    trials = SortedTrials.of(scores, labels)
    if trials.order.size != local.enrol.size:
        raise WeightedRocInputError(f"{trials.order.size} scores but {local.enrol.size} speaker codes")
    units = trials.unit_end if method == "rocch" else trials.group_end
    sums, stack = _SCRATCH.of(units.size, roc_kernels.workers())
    eers: FloatArray = roc_kernels.eer_of_rows(
        local.weights,
        np.ascontiguousarray(local.enrol[trials.order]),
        np.ascontiguousarray(local.partner[trials.order]),
        trials.labels,
        units,
        _METHOD_CODES[method],
        sums,
        stack,
    )
    return eers


class _Scratch:
    """Scratch arrays of the compiled loops, kept between calls and grown when a trial list needs more: a
    bootstrap makes thousands of calls, and fresh arrays of a few MB each cost more in page faults than the
    arithmetic they hold. Blocks hold as many rows as keep a worker's unit sums near ``_BLOCK_BYTES``."""

    def __init__(self) -> None:
        self.sums = np.empty((0, 2, 0, 0))
        self.stack = np.empty((0, 2, 0))

    def of(self, n_units: int, workers: int) -> tuple[FloatArray, FloatArray]:
        block = int(np.clip(_BLOCK_BYTES // (16 * max(1, n_units)), 4, 64))
        if self.sums.shape[0] != workers or self.sums.shape[2] < n_units or self.sums.shape[3] != block:
            capacity = max(n_units, self.sums.shape[2] if self.sums.shape[3] == block else 0)
            self.sums = np.empty((workers, 2, capacity, block))
        if self.stack.shape[0] != workers or self.stack.shape[2] < n_units:
            self.stack = np.empty((workers, 2, max(n_units, self.stack.shape[2])))
        return self.sums, self.stack


_SCRATCH = _Scratch()
