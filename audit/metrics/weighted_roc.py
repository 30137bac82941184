"""Weighted ROC curves of many speaker resamples at once: the bootstrap's EERs and weighted counts.

A resample is a row of speaker multiplicities (``audit.statistics.draw_cluster_weights``); a trial weighs its
enrolment speaker's multiplicity times its partner's (``audit.statistics.pair_codes``: the partner code
``n_speakers`` stands for a weight of 1, a trial of one speaker or one-way clustering). A row of integer weights
is a resample of the trials, and its EER equals ``audit.metrics.point.eer`` of the trials repeated that often (tested
bit for bit for ``legacy``, to 1e-12 for ``interp`` and ``rocch``). The trials are sorted once per score array;
compiled loops (``audit.metrics.roc_kernels``) then work in one of two ways. Up to ``PER_THRESHOLD_UNITS``
thresholds, they sum each threshold's weight for a tile of rows at a time and find each row's EER there, so memory
stays near ``_BLOCK_BYTES`` per core whatever the number of resamples. On longer lists (a VoxCeleb or NIST list of
millions of trials), they sum the weight at the ends of about ``BRACKETS`` brackets of thresholds in one pass for all
three EER variants and rebuild each row's curve in exact int64 counts only near its crossing, so memory stays near
brackets x rows whatever the number of trials.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics.calibration import TieGroups, min_cllr_of_draws, min_dcf_of_draws
from audit.metrics.point import MetricInputError, check_eer_method, eer
from schemas import EER_METHODS, EerMethod

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
_METHOD_CODES = {"interp": 0, "legacy": 1, "rocch": 2}  # roc_kernels' INTERP, LEGACY, ROCCH; eers_of_rows' rows
_BLOCK_BYTES = 4 << 20  # per tile of rows: its units' cumulative target and non-target sums
_EXACT = float(2**53)  # float64 holds every integer below: the per-threshold loops' products must stay under it
PER_THRESHOLD_UNITS = 1 << 16  # up to this many thresholds, the per-threshold loops (eer_of_rows); above, brackets
# A row's total weight below which the bracketed loops' int64 products of counts (at most total**2 / 2) cannot
# overflow, and its float64 sums stay exact.
WEIGHT_LIMIT = float(2**31)
BRACKET_TRIALS = 16  # at least this many trials per bracket; about 4,096 brackets on longer lists
BRACKETS = 4096


class WeightedRocInputError(MetricInputError):
    """Weights, codes or scores on which a weighted ROC is not defined."""


TILE = 64  # resamples per tile of ResampleWeights


@dataclass(frozen=True)
class ResampleWeights:
    """Speaker multiplicities of every resample in the compiled loops' layout, built once per draw and shared by
    every call: tiles of ``TILE`` rows (tiles x speakers + 1 x ``TILE``, C order), so a trial reads two contiguous
    runs of weights; the last speaker weighs 1 (the partner code ``n_speakers``), rows past the last resample
    weigh 0."""

    tiles: FloatArray
    rows: int
    n_speakers: int
    heaviest: float

    @classmethod
    def of(cls, weights: ArrayLike | ResampleWeights) -> ResampleWeights:
        """``weights`` (resamples x speakers) in tiles; prepared weights as they are."""
        if isinstance(weights, ResampleWeights):
            return weights
        weight_array = np.asarray(weights, dtype=np.float64)
        if weight_array.ndim != 2:
            raise WeightedRocInputError(f"weights must be (resamples x speakers), got shape {weight_array.shape}")
        rows, n_speakers = weight_array.shape
        tiles = -(-rows // TILE)
        padded = np.zeros((tiles * TILE, n_speakers + 1))
        padded[:rows, :n_speakers] = weight_array
        padded[:, n_speakers] = 1.0
        heaviest = float(weight_array.max()) if weight_array.size else 0.0
        tiled = np.ascontiguousarray(padded.reshape(tiles, TILE, n_speakers + 1).transpose(0, 2, 1))
        return cls(tiled, rows, n_speakers, max(heaviest, 1.0))

    @cached_property
    def small(self) -> NDArray[np.int8] | None:
        """The tiles in int8 when every weight is a whole number in 0..127 (a resample's multiplicities), else None:
        the per-threshold sums then read an eighth of the memory, in int32: exact, as they stay below 2**26.5
        (``_EXACT``, which ``weighted_eers`` checks before it sends a list to them)."""
        small = bool(np.all((self.tiles >= 0.0) & (self.tiles <= 127.0) & (self.tiles == np.floor(self.tiles))))
        return self.tiles.astype(np.int8) if small else None


def _codes(weights: ResampleWeights, clusters: ArrayLike, partners: ArrayLike | None) -> tuple[IntArray, IntArray]:
    """Each trial's enrolment and partner code, checked against the weights (``n_speakers``: weight 1)."""
    n_speakers = weights.n_speakers
    enrol = np.asarray(clusters, dtype=np.int64)
    partner = np.full(enrol.size, n_speakers, dtype=np.int64) if partners is None else np.asarray(partners)
    partner = partner.astype(np.int64, copy=False)
    if partner.shape != enrol.shape or enrol.ndim != 1:
        raise WeightedRocInputError(f"{enrol.size} enrolment codes but {partner.size} partner codes")
    out_of_range = enrol.size and (enrol.min() < 0 or enrol.max() >= n_speakers)
    if out_of_range or (partner.size and (partner.min() < 0 or partner.max() > n_speakers)):
        raise WeightedRocInputError(f"speaker codes must lie in 0..{n_speakers - 1} (partners up to {n_speakers})")
    return enrol, partner


def weighted_sums(
    weights: ArrayLike | ResampleWeights, clusters: ArrayLike, partners: ArrayLike | None, values: ArrayLike
) -> FloatArray:
    """(resamples x columns): each column of ``values`` (trials x columns) summed with each row's trial weights."""
    import audit.metrics.sum_kernels as sum_kernels

    resampled = ResampleWeights.of(weights)
    enrol, partner = _codes(resampled, clusters, partners)
    value_array = np.ascontiguousarray(values, dtype=np.float64).reshape(enrol.size, -1)
    sums = sum_kernels.weighted_sums(resampled.tiles, enrol, partner, value_array)
    return np.ascontiguousarray(sums.reshape(value_array.shape[1], -1)[:, : resampled.rows].T)


def binned_sums(
    weights: ArrayLike | ResampleWeights, clusters: ArrayLike, partners: ArrayLike | None, bins: ArrayLike, n_bins: int
) -> FloatArray:
    """(bins x resamples): the trial weights of each bin (``bins``: each trial's bin, 0..n_bins-1) per resample;
    the one-hot columns of ``weighted_sums`` without the columns (a threshold per resample, for instance), bins
    major as the loops sum them (a cumulative sum over bins runs along contiguous rows)."""
    import audit.metrics.sum_kernels as sum_kernels

    resampled = ResampleWeights.of(weights)
    enrol, partner, bin_array = _binned(resampled, clusters, partners, bins, n_bins)
    sums = sum_kernels.binned_sums(resampled.tiles, enrol, partner, bin_array, n_bins)
    return sums.reshape(n_bins, -1)[:, : resampled.rows]


def _binned(
    weights: ResampleWeights, clusters: ArrayLike, partners: ArrayLike | None, bins: ArrayLike, n_bins: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Each trial's enrolment and partner code (``_codes``) and its bin, checked to lie in 0..n_bins-1."""
    enrol, partner = _codes(weights, clusters, partners)
    bin_array = np.asarray(bins, dtype=np.int64)
    if bin_array.shape != enrol.shape or (bin_array.size and (bin_array.min() < 0 or bin_array.max() >= n_bins)):
        raise WeightedRocInputError(f"bins must give each of the {enrol.size} trials a bin in 0..{n_bins - 1}")
    return enrol, partner, bin_array


def _grouped(
    weights: ResampleWeights, clusters: ArrayLike, partners: ArrayLike | None, bins: ArrayLike, n_bins: int
) -> tuple[IntArray, IntArray, IntArray]:
    """``_binned``'s codes with the trials grouped by bin, each bin's in their order, and the bins' ``bounds`` (bin
    k's trials at ``bounds[k]..bounds[k + 1]``): the layout of the loops that walk the bins instead of summing into
    them."""
    enrol, partner, bin_array = _binned(weights, clusters, partners, bins, n_bins)
    order = np.argsort(bin_array, kind="stable")
    bounds: IntArray = np.searchsorted(bin_array[order], np.arange(n_bins + 1))
    return enrol[order], partner[order], bounds


def miss_at_rates(p_fa: ArrayLike, sums: ArrayLike, n_bins: int) -> FloatArray:
    """(draws x rates): each draw's DET miss rate at each false-alarm rate of ``p_fa`` (in [0, 1)), from the target
    (``sums[:n_bins]``) and non-target (``sums[n_bins:]``) weight of every bin (2 n_bins x draws, ascending score, as
    ``binned_sums`` gives them), linearly interpolated between thresholds; NaN for a draw without weight in a class.

    >>> miss_at_rates(np.array([0.25, 0.5]), np.array([[0.0], [1.0], [1.0], [1.0], [1.0], [0.0]]), 3)
    array([[0.25, 0.  ]])
    """
    import audit.metrics.sum_kernels as sum_kernels

    rates = np.ascontiguousarray(p_fa, dtype=np.float64)
    weights = np.ascontiguousarray(sums, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[0] != 2 * n_bins:
        raise WeightedRocInputError(f"sums must have 2 x {n_bins} rows (bins of each class), not {weights.shape}")
    out = np.full((weights.shape[1], rates.size), np.nan)
    sum_kernels.miss_at_rates(rates, weights, n_bins, weights[:n_bins].sum(axis=0), weights[n_bins:].sum(axis=0), out)
    return out


def threshold_positions(sums: ArrayLike, n: int, target_far: float | None = None) -> IntArray:
    """(draws): each draw's threshold among ``n`` ascending candidates, from the target (``sums[:n]``) and
    non-target (``sums[n:]``) weight of each candidate (2n x draws, as ``binned_sums`` gives them): the first with
    the least |FAR - FRR| (``target_far`` None: the EER threshold), else the first whose FAR does not exceed
    ``target_far`` (``n`` when none); -1 for a draw without weight in a class. FRR at a candidate is the target
    weight below it, FAR the non-target weight at or above it. Whole weights (multiplicities, counts): their sums
    are exact.

    >>> threshold_positions(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 1.0]]), 3)
    array([ 1, -1])
    """
    import audit.metrics.sum_kernels as sum_kernels

    weights = np.ascontiguousarray(sums, dtype=np.float64)  # one layout, one compiled signature
    if weights.ndim != 2 or weights.shape[0] != 2 * n:
        raise WeightedRocInputError(f"sums must have 2 x {n} rows (candidates of each class), not {weights.shape}")
    out = np.empty(weights.shape[1], np.int64)
    sum_kernels.threshold_positions(weights, n, -1.0 if target_far is None else float(target_far), out)
    return out


def binned_threshold_positions(
    weights: ArrayLike | ResampleWeights,
    clusters: ArrayLike,
    partners: ArrayLike | None,
    bins: ArrayLike,
    n: int,
    target_far: float | None = None,
) -> IntArray:
    """``threshold_positions(binned_sums(weights, clusters, partners, bins, 2 * n), n, target_far)``, the same
    positions, without the 2n bins x resamples sums (tens of MB for a long development list, zeroed and scattered
    into for every call): the compiled loop groups the trials by candidate once and walks each tile's rows along
    them. Whole weights, as ``threshold_positions`` asks."""
    import audit.metrics.sum_kernels as sum_kernels

    resampled = ResampleWeights.of(weights)
    enrol, partner, bounds = _grouped(resampled, clusters, partners, bins, 2 * n)
    out = np.empty(resampled.rows, np.int64)
    sum_kernels.binned_threshold_positions(
        resampled.tiles, resampled.rows, enrol, partner, bounds, -1.0 if target_far is None else float(target_far), out
    )
    return out


def weights_at_thresholds(
    weights: ArrayLike | ResampleWeights,
    clusters: ArrayLike,
    partners: ArrayLike | None,
    labels: ArrayLike,
    bins: ArrayLike,
    positions: ArrayLike,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per resample, at its own threshold position (``positions``: one a resample; a trial is accepted there when
    its ``bins`` exceeds it): the target weight rejected, the target weight in all, the non-target weight accepted
    and the non-target weight in all. The cumulative ``binned_sums`` of each class read at one bin a resample,
    without the bins x resamples sums. Whole weights (multiplicities, counts): their sums are exact.

    >>> weights_at_thresholds(np.ones((1, 2)), [0, 1, 0, 1], None, [1, 1, 0, 0], [0, 2, 1, 2], [1])
    (array([1.]), array([2.]), array([1.]), array([2.]))
    """
    import audit.metrics.sum_kernels as sum_kernels

    resampled = ResampleWeights.of(weights)
    enrol, partner = _codes(resampled, clusters, partners)
    targets, bin_array = np.asarray(labels).astype(bool), np.asarray(bins, dtype=np.int64)
    position = np.asarray(positions, dtype=np.int64)
    if targets.shape != enrol.shape or bin_array.shape != enrol.shape or position.shape != (resampled.rows,):
        raise WeightedRocInputError(
            f"{enrol.size} trials need as many labels and bins ({targets.size}, {bin_array.size}), and "
            f"{resampled.rows} resamples as many positions ({position.size})"
        )
    padded = np.zeros(resampled.tiles.shape[0] * resampled.tiles.shape[2], np.int64)
    padded[: position.size] = position
    out = np.empty((4, resampled.rows))
    sum_kernels.weights_at_thresholds(resampled.tiles, resampled.rows, enrol, partner, targets, bin_array, padded, out)
    return out[0], out[1], out[2], out[3]


def binned_miss_at_rates(
    p_fa: ArrayLike,
    weights: ArrayLike | ResampleWeights,
    clusters: ArrayLike,
    partners: ArrayLike | None,
    bins: ArrayLike,
    n_bins: int,
) -> FloatArray:
    """``miss_at_rates(p_fa, binned_sums(weights, clusters, partners, bins, 2 * n_bins), n_bins)``, the same bits,
    without the bins x resamples sums: the compiled loop walks the trials grouped by bin, one tile of resamples at a
    time, adding each bin's weight straight into the running sums (a DET band's sums are a few MB per curve, whose
    zeroing and scattered adds cost more than the rest of the loops)."""
    import audit.metrics.sum_kernels as sum_kernels

    resampled = ResampleWeights.of(weights)
    enrol, partner, bounds = _grouped(resampled, clusters, partners, bins, 2 * n_bins)
    rates = np.ascontiguousarray(p_fa, dtype=np.float64)
    out = np.full((resampled.rows, rates.size), np.nan)
    sum_kernels.binned_miss_at_rates(resampled.tiles, resampled.rows, enrol, partner, bounds, rates, out)
    return out


@dataclass(frozen=True)
class SortedTrials:
    """One score array's trials in descending score order, with where each threshold's trials end
    (``group_end``), where each run that ROCCH pools without looking ends (``unit_end``: a run of thresholds of
    targets, or one threshold holding both, each with the run of non-targets before it), and the last threshold of
    each bracket of about equal numbers of trials (``checkpoints``, made only for the bracketed loops)."""

    order: IntArray
    labels: NDArray[np.bool_]
    group_end: IntArray
    unit_end: IntArray

    @classmethod
    def of(cls, scores: ArrayLike, labels: ArrayLike) -> SortedTrials:
        from audit.metrics.record_kernels import sorted_ends

        score_array = np.asarray(scores, dtype=np.float64)
        label_array = np.asarray(labels).astype(bool)
        if score_array.shape != label_array.shape or score_array.ndim != 1:
            raise WeightedRocInputError(f"{score_array.size} scores but {label_array.size} labels")
        if not np.isfinite(score_array).all():
            raise WeightedRocInputError("scores must be finite (drop unscored trials first)")
        order = np.argsort(-score_array)  # not stable: a threshold's trials are summed whatever their order
        ordered_labels = np.ascontiguousarray(label_array[order])
        group_end, unit_end = sorted_ends(score_array[order], ordered_labels)
        return cls(order, ordered_labels, group_end, unit_end)

    @cached_property
    def checkpoints(self) -> IntArray:
        """The last threshold of each bracket of at least ``BRACKET_TRIALS`` trials (about ``BRACKETS`` of them)."""
        step = max(BRACKET_TRIALS, self.labels.size // BRACKETS)
        ends = np.searchsorted(self.group_end, np.arange(step, self.labels.size, step))  # the group of each step's end
        return np.union1d(ends, [self.group_end.size - 1]).astype(np.int64)


def weighted_eers(
    scores: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike,
    weights: ArrayLike | ResampleWeights,
    partners: ArrayLike | None = None,
    methods: tuple[EerMethod, ...] = EER_METHODS,
) -> dict[EerMethod, FloatArray]:
    """The EER of each row of speaker ``weights`` (resamples x speakers, or prepared) in each of ``methods``; NaN
    where a class weighs 0. Up to ``PER_THRESHOLD_UNITS`` thresholds (and weights whose products float64 holds
    exactly), one pass of the per-threshold loops per method; above, one pass of the bracketed loops for all three
    in exact int64 counts, where a row whose total weight reaches ``WEIGHT_LIMIT`` (about 2e9 trials) is refused."""

    trials = SortedTrials.of(scores, labels)
    return _sorted_eers(trials, clusters, weights, partners, methods)


def eer_and_draws(
    scores: ArrayLike,
    labels: ArrayLike,
    method: EerMethod,
    clusters: ArrayLike,
    partners: ArrayLike | None,
    weights: ArrayLike | ResampleWeights,
) -> tuple[float, FloatArray]:
    """``eer(scores, labels, method)``, bit for bit, and ``weighted_eer``'s draws (speaker codes ``clusters`` and
    ``partners``, ``weights``), from one sort of the scores: a bootstrap of thousands of short records otherwise
    sorts and checks each twice, at about the cost of its draws. Inputs are checked as ``weighted_eer`` checks them;
    a one-class record, or a method ``eer`` does not know, is refused as ``eer`` refuses it (the method first)."""
    from audit.metrics.record_kernels import record_eer

    check_eer_method(method)
    trials = SortedTrials.of(scores, labels)
    if not 0 < np.count_nonzero(trials.labels) < trials.labels.size:
        eer(scores, labels, method)  # an empty or one-class record: refused with eer's own error
    draws = _sorted_eers(trials, clusters, weights, partners, (method,))[method]
    return float(record_eer(trials.labels, trials.group_end, _METHOD_CODES[method])), draws


def _sorted_eers(
    trials: SortedTrials,
    clusters: ArrayLike,
    weights: ArrayLike | ResampleWeights,
    partners: ArrayLike | None,
    methods: tuple[EerMethod, ...],
) -> dict[EerMethod, FloatArray]:
    """``weighted_eers`` of trials already sorted."""
    unknown = [method for method in methods if method not in EER_METHODS]
    if unknown:
        raise WeightedRocInputError(f"unknown bootstrap EER method {unknown[0]!r}: expected interp, legacy or rocch")
    resampled = ResampleWeights.of(weights)
    enrol, partner = _codes(resampled, clusters, partners)
    if trials.order.size != enrol.size:
        raise WeightedRocInputError(f"{trials.order.size} scores but {enrol.size} speaker codes")
    enrol, partner = np.ascontiguousarray(enrol[trials.order]), np.ascontiguousarray(partner[trials.order])
    if trials.group_end.size <= PER_THRESHOLD_UNITS and (resampled.heaviest**2 * enrol.size) ** 2 < _EXACT:
        return {method: _per_threshold(resampled, enrol, partner, trials, method) for method in methods}
    eers = _bracketed(resampled, enrol, partner, trials)
    return {method: eers[_METHOD_CODES[method]] for method in methods}


def _bracketed(resampled: ResampleWeights, enrol: IntArray, partner: IntArray, trials: SortedTrials) -> FloatArray:
    """The three methods' EERs (interp, legacy, rocch rows) from the bracketed loops, in exact int64 counts."""
    import audit.metrics.roc_kernels as roc_kernels

    eers, totals = roc_kernels.eers_of_rows(
        resampled.tiles, resampled.rows, enrol, partner, trials.labels, trials.group_end, trials.checkpoints,
        WEIGHT_LIMIT,
    )  # fmt: skip
    if totals.size and totals.max() >= WEIGHT_LIMIT:
        raise WeightedRocInputError(
            f"a resample weighs its {enrol.size} trials {totals.max():.0f} in all: products of the weighted counts "
            f"could pass 2**63 (the limit is a total weight of {WEIGHT_LIMIT:.0f})"
        )
    result: FloatArray = eers
    return result


def _per_threshold(
    resampled: ResampleWeights, enrol: IntArray, partner: IntArray, trials: SortedTrials, method: EerMethod
) -> FloatArray:
    """One method's EERs from the per-threshold loops: every threshold's (or ROCCH unit's) sums for a block of rows,
    the rows' curves walked there."""
    import audit.metrics.kernel_threads as kernel_threads
    import audit.metrics.roc_kernels as roc_kernels

    units = trials.unit_end if method == "rocch" else trials.group_end
    block = _block(units.size)
    small = resampled.small  # weights of 0..127: int8 tiles, int32 sums
    tiles, running = (resampled.tiles, np.float64) if small is None else (small, np.int32)
    workers = kernel_threads.workers()
    eers: FloatArray = roc_kernels.eer_of_rows(
        tiles, enrol, partner, trials.labels, units, _METHOD_CODES[method], block,
        _SCRATCH.of(units.size, workers, block, running), np.zeros(block, running),
    )  # fmt: skip
    return eers[: resampled.rows]


def weighted_eer(
    scores: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike,
    weights: ArrayLike | ResampleWeights,
    method: EerMethod = EerMethod.INTERP,
    partners: ArrayLike | None = None,
) -> FloatArray:
    """The EER of each row of speaker ``weights`` (resamples x speakers, or prepared) in ``method``; NaN where a
    class weighs 0 (``weighted_eers`` gives several methods at once)."""
    return weighted_eers(scores, labels, clusters, weights, partners, (method,))[method]


def _block(n_units: int) -> int:
    """Rows the per-threshold loops take at a time: a power of two from 8 (one vector of a wide machine) to
    ``TILE``, keeping a worker's unit sums near ``_BLOCK_BYTES``."""
    fitting = max(8, min(TILE, _BLOCK_BYTES // (16 * max(1, n_units))))
    return 1 << (fitting.bit_length() - 1)


class _Scratch:
    """The unit sums of the per-threshold loops (workers x 2 x units x block) of each type, kept between calls and
    grown when a trial list needs more: a bootstrap makes thousands of calls, and fresh arrays of a few MB each cost
    more in page faults than the arithmetic they hold."""

    def __init__(self) -> None:
        self.sums: dict[type, NDArray[np.generic]] = {}

    def of(self, n_units: int, workers: int, block: int, dtype: type) -> NDArray[np.generic]:
        """Space for ``n_units`` sums of ``block`` rows per worker, in ``dtype`` (the running sums' type)."""
        sums = self.sums.get(dtype)
        if sums is None or sums.shape[0] != workers or sums.shape[2] < n_units or sums.shape[3] != block:
            capacity = max(n_units, sums.shape[2] if sums is not None and sums.shape[3] == block else 0)
            sums = self.sums[dtype] = np.empty((workers, 2, capacity, block), dtype)
        return sums


_SCRATCH = _Scratch()


@contextmanager
def one_thread() -> Iterator[None]:
    """The compiled loops on one thread while the block runs, and in the processes it forks (they inherit the
    setting). A bundle's statistics run forked parts beside the main process on a machine of two cores or so: a second
    thread per process then only competes with the others (the rankings' draws took 11.7 s of CPU on two threads
    against 9.8 s on one, in the same wall time, measured alone)."""
    import audit.metrics.kernel_threads as kernel_threads

    threads = kernel_threads.set_workers(1)
    try:
        yield
    finally:
        kernel_threads.set_workers(threads)


def start_numba() -> None:
    """Import numba and run the start-up its first compiled call runs (its typing and lowering registries, about
    0.3 s CPU), by one PAV of one value: a bundle's audit starts it with the garbage collector paused, as it imports
    itself, rather than amid the table audit, whose first re-scored ROCCH EER would."""
    from audit.metrics.calibration_kernels import pav_blocks

    pav_blocks(np.zeros(1), np.ones(1), increasing=True)


def prepare_kernels(announce: Callable[[str], None]) -> float | None:
    """Compile the compiled loops now, or load them from numba's cache, on a few trials of the types every call
    passes; when they had to be compiled (the first run on a machine), say so through ``announce`` before and
    after. Returns the seconds compiling took, or None when they came from the cache."""
    import audit.metrics.roc_kernels as roc_kernels
    from audit.metrics.calibration_kernels import pav_blocks

    cached = roc_kernels.cached_on_this_machine()
    if not cached:
        announce(
            "compiling the bootstrap's numba kernels: the first run on this machine takes about 30 s of CPU; "
            f"later runs load them from numba's cache ({roc_kernels.eer_of_rows.stats.cache_path})"
        )
    started = time.perf_counter()
    scores, labels, speakers = np.array([0.1, 0.9, 0.4, 0.6]), np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1])
    weights = ResampleWeights.of(np.ones((1, 2)))
    eer_and_draws(scores, labels, EerMethod.ROCCH, speakers, None, weights)  # the int8 tiles, int32 sums; point EER
    weighted_eers(scores, labels, speakers, np.full((1, 2), 0.5))  # the float64 sums
    _bracketed(weights, speakers, np.full(4, 2), SortedTrials.of(scores, labels))  # the loops of long lists
    weighted_sums(weights, speakers, None, labels)
    binned_sums(weights, speakers, None, labels, 2)  # the sums per score bin that the fused loops below keep
    miss_at_rates(np.array([0.5]), np.ones((2, 1)), 1)  # the DET bands' interpolation
    threshold_positions(np.ones((2, 1)), 1)  # the fixed-threshold analysis's thresholds without draws
    binned_threshold_positions(weights, speakers, None, labels, 1)  # ... and each draw's
    weights_at_thresholds(weights, speakers, None, labels, labels, np.zeros(1, np.int64))  # its error rates there
    binned_miss_at_rates(np.array([0.5]), weights, speakers, None, labels, 1)  # the DET bands' draws
    min_cllr_of_draws(np.ones((1, 2)), np.ones((1, 2)))  # the calibration section's minima of every draw
    min_dcf_of_draws(np.ones((1, 2)), np.ones((1, 2)))
    TieGroups.of(scores, labels).draw_minima(np.ones((1, 2)), speakers, speakers)
    pav_blocks(scores, np.ones(4), increasing=True)  # PAV: minCllr and the ROCCH EER of each record
    seconds = time.perf_counter() - started
    if cached:
        return None
    announce(f"compiled the bootstrap's numba kernels in {seconds:.1f} s")
    return seconds
