"""Verification metrics: EER (three named variants), normalised minDCF and tie-aware AUC.

One implementation serves the runner and the audit (DESIGN.md section 4). Labels are 1 (target) and 0
(non-target); a higher score is more target-like. Every metric is computed from the ROC points at the distinct
score thresholds of one record, so tied scores always move together.

The scalar functions (``eer``, ``min_dcf``, ``auc``) are the one-record case of ``grouped_metrics``, which
scores millions of trials in thousands of records at once: one sort of packed integer keys orders the trials
by (record, score); everything after that is segment-wise cumulative sums and reductions, with no Python loop
over records.

EER variants:

- ``legacy``: the paper's routine, bit for bit: ``fpr, tpr, _ = sklearn.metrics.roc_curve(labels, scores)``
  (default ``drop_intermediate=True``), ``fnr = 1 - tpr``, ``i = nanargmin(abs(fnr - fpr))``,
  ``(fpr[i] + fnr[i]) / 2``. Not interpolated; it can exceed 0.5 and is never clipped (perfectly inverted
  scores give 1.0).
- ``rocch``: the BOSARIS ROC convex hull EER (pool-adjacent-violators on the tie groups, then the largest
  crossing of a hull segment's line with ``Pfa = Pmiss``). The hull contains the chance diagonal, so this
  variant is at most 0.5 by definition: inverted scores give 0.5.
- ``interp``: the VoxSRC routine ``brentq(lambda x: 1 - x - interp1d(fpr, tpr)(x), 0, 1)``, computed as the
  exact linear crossing of the ROC polyline with ``fpr = fnr``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from schemas import EER_METHODS, EerMethod, Error, Forked

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

NEGLIGIBLE_WEIGHT = 1e-300  # PAV needs positive weights; this one changes no float64 mean
_SHOWN_RECORDS = 10  # offending record codes named in one error message
_CHUNK_TRIALS = 1 << 18  # grouped_metrics takes records in chunks of about this many trials


class MetricInputError(Error, ValueError):
    """Scores or labels on which a metric is not defined (NaN, one class, bad labels)."""


def finite_scores(values: ArrayLike, name: str = "scores") -> FloatArray:
    """``values`` as float64 after checking that they are real and finite (``MetricInputError`` naming ``name``)."""
    array = np.asarray(values)
    if not (np.issubdtype(array.dtype, np.number) and not np.iscomplexobj(array)):
        raise MetricInputError(f"{name} must be real numbers, got dtype {array.dtype}")
    floats = array.astype(np.float64, copy=False)
    bad = ~np.isfinite(floats)
    if bad.any():
        first_bad = int(np.flatnonzero(bad)[0])
        raise MetricInputError(
            f"{name} must be finite: {int(bad.sum())} NaN or infinite value(s), "
            f"first at position {first_bad} ({floats[first_bad]})"
        )
    return floats


def refuse_other_values(values: NDArray[Any], other: NDArray[np.bool_], rule: str) -> None:
    """``MetricInputError`` stating ``rule``, how many ``values`` break it (``other``) and the first, if any do."""
    if other.any():
        first = int(np.flatnonzero(other)[0])
        raise MetricInputError(
            f"{rule}: {int(other.sum())} other value(s), first at position {first} ({values[first]!r})"
        )


def _as_inputs(
    scores: ArrayLike, labels: ArrayLike, record_index: ArrayLike | None, n_records: int | None
) -> tuple[FloatArray, NDArray[np.uint8], NDArray[np.uint64], int]:
    """Validate and convert: finite float64 scores, 0/1 labels, record codes in 0..R-1."""
    score_array = np.asarray(scores)
    label_array = np.asarray(labels)
    if score_array.ndim != 1 or label_array.ndim != 1:
        raise MetricInputError(
            f"scores and labels must be one-dimensional, got shapes {score_array.shape}, {label_array.shape}"
        )
    if score_array.shape != label_array.shape:
        raise MetricInputError(
            f"scores and labels differ in length: {score_array.size} scores, {label_array.size} labels"
        )
    if score_array.size == 0:
        raise MetricInputError("no trials: scores and labels are empty")
    score_values = finite_scores(score_array)
    if label_array.dtype == np.bool_:
        label_array = label_array.astype(np.uint8)
    if not np.issubdtype(label_array.dtype, np.number):
        raise MetricInputError(f"labels must be 0 or 1, got dtype {label_array.dtype}")
    refuse_other_values(
        label_array, (label_array != 0) & (label_array != 1), "labels must be 0 (non-target) or 1 (target)"
    )
    label_codes = label_array.astype(np.uint8)
    if record_index is None:
        return score_values, label_codes, np.zeros(score_values.size, dtype=np.uint64), 1
    index_array = np.asarray(record_index)
    if index_array.shape != score_array.shape:
        raise MetricInputError(f"record_index has shape {index_array.shape}, scores have shape {score_array.shape}")
    if not np.issubdtype(index_array.dtype, np.integer):
        raise MetricInputError(f"record_index must hold integer codes, got dtype {index_array.dtype}")
    lowest, highest = int(index_array.min()), int(index_array.max())
    count = highest + 1 if n_records is None else n_records
    if lowest < 0 or highest >= count:
        raise MetricInputError(f"record_index must lie in 0..{count - 1}, found {lowest}..{highest}")
    return score_values, label_codes, index_array.astype(np.uint64), count


def scores_and_labels(scores: ArrayLike, labels: ArrayLike) -> tuple[FloatArray, NDArray[np.bool_]]:
    """One record's inputs checked as every metric here checks them: finite float64 scores and a target mask, with
    both classes present."""
    values, label_codes, _, _ = _as_inputs(scores, labels, None, None)
    targets = label_codes == 1
    if targets.all() or not targets.any():
        raise MetricInputError("the scores hold only one class: targets and non-targets are both needed")
    return values, targets


def trial_weights(weights: ArrayLike | None, size: int) -> FloatArray:
    """Per-trial weights (a bootstrap's multiplicities) checked: ``size`` finite values >= 0; ones when None."""
    if weights is None:
        return np.ones(size)
    array = np.asarray(weights)
    if array.shape != (size,):
        raise MetricInputError(f"expected {size} trial weights in one dimension, got shape {array.shape}")
    values = finite_scores(array, "trial weights")
    refuse_other_values(values, values < 0, "trial weights must be >= 0")
    return values


_SIGN_BIT = np.uint64(1 << 63)
_BUCKET_BITS = 16  # codes are packed per bucket of equal top bits (sign, exponent, 4 mantissa bits)
_OFFSET_BITS = 64 - _BUCKET_BITS
_NO_GAP = np.uint64(np.iinfo(np.uint64).max)


def _fold_sign(bits: NDArray[np.uint64]) -> None:
    """In place: IEEE float64 bit patterns to unsigned integers in the floats' order."""
    signed = bits.view(np.int64)
    fill = signed >> 63  # all ones for negative floats
    fill &= np.iinfo(np.int64).max
    signed ^= fill
    bits ^= _SIGN_BIT


def _order_codes(scores: FloatArray, code_bits: int) -> NDArray[np.uint64]:
    """Unsigned codes below ``2**code_bits`` that order and tie exactly like ``scores``.

    The IEEE bit pattern, sign-folded, orders like the float. When the low ``64 - code_bits`` bits of every
    score are zero (float32 cosines, as the runner writes them), they are dropped. Otherwise the codes are
    packed bucket by bucket (``_pack_by_bucket``), and failing that (the values present need more room than
    ``code_bits``), the dense rank from an argsort is used: slower, equally exact.
    """
    bits = (scores + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0: they compare equal as floats
    dropped = 64 - code_bits
    if not np.any(bits & np.uint64((1 << dropped) - 1)):
        _fold_sign(bits)
        bits >>= np.uint64(dropped)
        return bits
    _fold_sign(bits)
    if _pack_by_bucket(bits, code_bits):
        return bits
    order = np.argsort(scores)
    sorted_scores = scores[order]
    bits[order] = np.concatenate(([0], np.cumsum(sorted_scores[1:] != sorted_scores[:-1])))
    return bits


def _pack_by_bucket(codes: NDArray[np.uint64], code_bits: int) -> bool:
    """In place, an order-preserving injective map of ``codes`` below ``2**code_bits``, if the values fit.

    Codes sharing their top ``_BUCKET_BITS`` bits form a bucket. In each, the low bits are dropped as far as
    the smallest gap between two distinct codes of the bucket allows (a gap of at least ``2**d`` keeps values
    apart after dropping ``d`` bits), and the buckets are then laid end to end in order. Returns False,
    leaving ``codes`` untouched, when the buckets need more than ``2**code_bits`` codes in all.
    """
    ascending = np.sort(codes)
    bucket_of = ascending >> np.uint64(_OFFSET_BITS)
    starts = np.flatnonzero(np.concatenate(([True], bucket_of[1:] != bucket_of[:-1])))
    gaps = np.empty_like(ascending)
    np.subtract(ascending[1:], ascending[:-1], out=gaps[:-1])
    gaps[-1] = 0
    gaps -= np.uint64(1)  # ties (gap 0) wrap round to the largest value, out of the minimum's way
    gaps[starts[1:] - 1] = _NO_GAP  # a bucket's last code has no successor inside it
    smallest_gap = np.minimum.reduceat(gaps, starts) + np.uint64(1)
    no_gap = smallest_gap == 0  # one distinct value (wrapped round): the whole offset goes
    dropped = np.floor(np.log2(np.where(no_gap, 1, smallest_gap).astype(float))).astype(np.uint64)
    dropped -= (np.uint64(1) << dropped) > smallest_gap  # float rounding can overshoot by one
    dropped[no_gap] = _OFFSET_BITS
    last_offset = ascending[np.append(starts[1:], ascending.size) - 1] & np.uint64((1 << _OFFSET_BITS) - 1)
    sizes = (last_offset >> dropped) + np.uint64(1)
    if sum(int(size) for size in sizes) > 1 << code_bits:
        return False
    base_table = np.zeros(1 << _BUCKET_BITS, dtype=np.uint64)
    drop_table = np.zeros(1 << _BUCKET_BITS, dtype=np.uint64)
    buckets = bucket_of[starts].astype(np.intp)
    base_table[buckets] = np.cumsum(sizes) - sizes
    drop_table[buckets] = dropped
    element_bucket = (codes >> np.uint64(_OFFSET_BITS)).view(np.int64)
    codes &= np.uint64((1 << _OFFSET_BITS) - 1)
    codes >>= drop_table[element_bucket]
    codes += base_table[element_bucket]
    return True


def _describe(records: IntArray, n_records: int) -> str:
    if n_records == 1:
        return "the scores"
    shown = ", ".join(str(code) for code in records[:_SHOWN_RECORDS])
    more = f" and {records.size - _SHOWN_RECORDS} more" if records.size > _SHOWN_RECORDS else ""
    return f"record(s) {shown}{more}"


@dataclass(frozen=True)
class _RocCorners:
    """Per record, the ROC points that ``sklearn.metrics.roc_curve`` keeps, thresholds descending.

    ``tps``/``fps`` count targets/non-targets scoring at or above a threshold within its record. The points
    roc_curve drops (``drop_intermediate=True``) are interior points of runs of equal steps, collinear with
    their neighbours, so every metric here (hull, crossing, trapezoid area, a cost linear along the curve) is
    the same with or without them. Records run in segments, in ascending record code.
    """

    tps: IntArray
    fps: IntArray
    n_target: IntArray  # per point: its record's target count
    n_nontarget: IntArray
    first: NDArray[np.bool_]  # the point is its record's highest threshold
    seg_starts: IntArray  # index of each record's first point
    seg_record: IntArray  # record code of each segment
    crossing: IntArray  # per segment: the first point with fpr >= fnr (exact integer test)

    @cached_property
    def fpr(self) -> FloatArray:
        return self.fps / self.n_nontarget

    @cached_property
    def fnr(self) -> FloatArray:
        return 1 - self.tps / self.n_target  # sklearn's expression, for bit-equal legacy EERs

    def previous(self, index: IntArray, at_origin: float, values: NDArray[Any]) -> NDArray[Any]:
        """``values`` at the point before ``index``; ``at_origin`` where ``index`` opens its record."""
        return np.where(self.first[index], at_origin, values[index - 1])

    def per_record(self, per_segment: NDArray[Any], n_records: int) -> NDArray[Any]:
        """Reorder a per-segment result into record-code order."""
        out = np.empty(n_records, dtype=per_segment.dtype)
        out[self.seg_record] = per_segment
        return out


def _roc_corners(
    scores: FloatArray, labels: NDArray[np.uint8], records: NDArray[np.uint64], n_records: int
) -> _RocCorners:
    """Sort once by (record, score), count both classes at each distinct threshold, keep the corners.

    Consumes ``records`` (shifted in place).
    """
    record_bits = max(1, (n_records - 1).bit_length())
    code_bits = 63 - record_bits  # a dense score rank (< number of trials) must fit too
    if record_bits > 40 or scores.size >= min(1 << 31, 1 << code_bits):
        raise MetricInputError(f"too many for one call: {n_records} records, {scores.size} trials")
    codes = _order_codes(scores, code_bits)
    # One 64-bit key per trial, record code | complemented score code | label: sorting the keys (not an
    # argsort) is the one ordering pass, and leaves records ascending with thresholds descending in each.
    keys = np.subtract(np.uint64((1 << code_bits) - 1), codes, out=codes)  # thresholds descending
    keys <<= np.uint64(1)
    keys |= labels
    records <<= np.uint64(code_bits + 1)
    keys |= records
    keys.sort()
    group_ends = np.append(np.flatnonzero((keys[1:] ^ keys[:-1]) > 1), keys.size - 1)
    # Labels are the keys' lowest bit; fewer than 2**31 trials, so int32 running counts suffice.
    targets_through = np.cumsum(keys.astype(np.uint8) & 1, dtype=np.int32)[group_ends].astype(np.int64)
    return _corners_of_groups(group_ends, targets_through, keys[group_ends] >> np.uint64(code_bits + 1), n_records)


def _corners_of_groups(
    group_ends: IntArray, targets_through: IntArray, group_record: NDArray[np.uint64], n_records: int
) -> _RocCorners:
    """The corners from the trials in (record, descending score) order: each threshold's last trial
    (``group_ends``), the targets up to it (``targets_through``) and its record code (``group_record``)."""
    record_change = group_record[1:] != group_record[:-1]
    # roc_curve's rule: keep the ends and every point where either count's second difference is non-zero
    # (targets' or trials'; non-targets are their difference), i.e. where the step (targets, trials) changes.
    # Running totals across records have the same second differences inside a record.
    steps = np.diff(targets_through + (group_ends << 32))
    step_changes = steps[1:] != steps[:-1]
    keep = np.ones(group_ends.size, dtype=bool)
    keep[1:-1] = record_change[:-1] | record_change[1:] | step_changes
    kept = np.flatnonzero(keep)
    kept_record = group_record[kept].astype(np.int64)
    first = np.concatenate(([True], kept_record[1:] != kept_record[:-1]))
    seg_starts = np.flatnonzero(first)
    seg_lengths = np.diff(np.append(seg_starts, kept.size))
    seg_record = kept_record[seg_starts]
    kept_targets = targets_through[kept]
    kept_nontargets = group_ends[kept] + 1 - kept_targets
    tps = kept_targets - np.repeat(np.concatenate(([0], kept_targets))[seg_starts], seg_lengths)
    fps = kept_nontargets - np.repeat(np.concatenate(([0], kept_nontargets))[seg_starts], seg_lengths)
    seg_ends = seg_starts + seg_lengths - 1
    _check_records(n_records, seg_record, tps[seg_ends], fps[seg_ends], seg_lengths)
    n_target = np.repeat(tps[seg_ends], seg_lengths)
    n_nontarget = np.repeat(fps[seg_ends], seg_lengths)
    # fpr >= fnr  <=>  fps / N >= (P - tps) / P  <=>  fps * P + tps * N >= P * N; it holds from one point on.
    below = fps * n_target + tps * n_nontarget < n_target * n_nontarget
    crossing = seg_starts + np.add.reduceat(below, seg_starts)
    return _RocCorners(tps, fps, n_target, n_nontarget, first, seg_starts, seg_record, crossing)


def _check_records(
    n_records: int, seg_record: IntArray, targets: IntArray, nontargets: IntArray, seg_lengths: IntArray
) -> None:
    """Every record needs trials of both classes. Constant scores are a curve of one point (accept all): the
    chance diagonal, EER 0.5 in every variant, minDCF 1, AUC 0.5, as ``roc_curve`` and the references give."""
    if seg_record.size < n_records:
        missing = np.setdiff1d(np.arange(n_records), seg_record)
        raise MetricInputError(f"{_describe(missing, n_records)} have no trials (both classes are needed)")
    one_class = np.sort(seg_record[(targets == 0) | (nontargets == 0)])
    if one_class.size:
        raise MetricInputError(
            f"{_describe(one_class, n_records)} hold only one class: targets and non-targets are both needed"
        )


def _legacy_eer(roc: _RocCorners) -> FloatArray:
    """roc_curve points, the first smallest |FNR - FPR|, mean of the two rates.

    |FNR - FPR| falls strictly up to the crossing and rises after it, so the first minimum is the point just
    before the crossing or the crossing itself; before the first point is roc_curve's prepended (0, 0).
    """
    fpr, fnr = roc.fpr, roc.fnr
    after = roc.crossing
    fpr_before = roc.previous(after, 0.0, fpr)
    fnr_before = roc.previous(after, 1.0, fnr)
    take_before = np.abs(fnr_before - fpr_before) <= np.abs(fnr[after] - fpr[after])
    return np.where(take_before, (fpr_before + fnr_before) / 2, (fpr[after] + fnr[after]) / 2)


def _interp_eer(roc: _RocCorners) -> FloatArray:
    """Linear crossing of the ROC polyline (from (0, 0)) with ``fpr == fnr``: VoxSRC's brentq root."""
    fpr = roc.fpr
    side = fpr - roc.fnr  # rises from -1 at (0, 0) to +1 at (1, 1)
    after = roc.crossing
    fpr_before = roc.previous(after, 0.0, fpr)
    side_before = roc.previous(after, -1.0, side)
    fraction = -side_before / (side[after] - side_before)
    return fpr_before + (fpr[after] - fpr_before) * fraction


def _rocch_eer(roc: _RocCorners) -> FloatArray:
    """BOSARIS ``rocch`` + ``rocch2eer`` of every record (``rocch_eer_of_points``)."""
    eers: FloatArray = rocch_eer_of_points(
        roc.tps.astype(float), roc.fps.astype(float), roc.n_target, roc.n_nontarget, roc.first
    )
    return eers


def rocch_eer_of_points(
    tps: FloatArray,
    fps: FloatArray,
    n_target: ArrayLike,
    n_nontarget: ArrayLike,
    first: NDArray[np.bool_],
    *,
    with_edges: bool = False,
) -> Any:
    """ROCCH EER of curves laid end to end: PAV over each curve's steps, then the largest edge crossing.

    Per point (thresholds descending within a curve): the (possibly weighted) targets ``tps`` and non-targets
    ``fps`` at or above it, its curve's totals, and whether it opens its curve.
    Returns one EER per curve, in order. A point that adds no weight (a threshold a resample did not draw)
    enters PAV with a weight of ``1e-300``, which moves no pooled rate in float64; its repeated point forms no
    hull edge (a zero-length edge crosses at 0 and the largest crossing is kept).
    All curves go through one PAV call; adding twice the number of
    curves still to come to each step's target rate keeps curves apart (their ranges cannot violate the order
    across a boundary), so no block spans two curves. The offset costs about ``2 * R * 2**-52`` in rate
    resolution, far below any pooling decision that changes the hull (blocks' rates differ by at least
    ``1 / size**2`` unless collinear). One point per curve (constant scores) gives 0.5, the chance diagonal.
    ``with_edges``: also each curve's hull edge that gives its EER, as rows (Pfa, Pmiss at its start, dPfa, dPmiss).
    """
    from audit.metrics.calibration_kernels import pav_blocks  # compiled: numba is imported on the first call

    n_target = np.asarray(n_target, dtype=float)
    previous = np.arange(tps.size) - 1
    step_targets = tps - np.where(first, 0.0, tps[previous])
    step_trials = tps + fps - np.where(first, 0.0, (tps + fps)[previous])
    curve = np.cumsum(first) - 1
    record_offset = 2.0 * (curve[-1] - curve)
    empty = step_trials == 0  # a threshold a resample does not draw: no weight, its point repeats the last
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.where(empty, 0.5, step_targets / step_trials)
    blocks = pav_blocks(rates + record_offset, np.where(empty, NEGLIGIBLE_WEIGHT, step_trials), increasing=False)

    block_starts = blocks[:-1]
    block_ends = blocks[1:] - 1
    p_fa = fps[block_ends] / np.asarray(n_nontarget, dtype=float)[block_ends]
    p_miss = (n_target - tps)[block_ends] / n_target[block_ends]
    opens_record = first[block_starts]
    fa_before = np.where(opens_record, 0.0, np.roll(p_fa, 1))
    miss_before = np.where(opens_record, 1.0, np.roll(p_miss, 1))
    d_fa = p_fa - fa_before
    d_miss = p_miss - miss_before
    degenerate = (d_fa == 0) | (d_miss == 0)  # hull edges at Pfa = 0 or Pmiss = 0: BOSARIS counts 0
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = np.where(degenerate, 0.0, (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss))
    starts = np.flatnonzero(opens_record)
    eers = np.maximum.reduceat(crossing, starts)
    if not with_edges:
        return eers
    curve_of_block = np.cumsum(opens_record) - 1
    at_max = np.flatnonzero(crossing == eers[curve_of_block])
    _, first_at_max = np.unique(curve_of_block[at_max], return_index=True)
    edge = at_max[first_at_max]  # per curve, the first hull edge whose crossing is the EER
    return eers, np.stack([fa_before[edge], miss_before[edge], d_fa[edge], d_miss[edge]], axis=1)


def _min_dcf(roc: _RocCorners, p_target: float, c_miss: float, c_fa: float) -> FloatArray:
    """Normalised minimum detection cost over all thresholds, reject-all included (cost is linear between
    corners, so its minimum is at one)."""
    if not 0.0 < p_target < 1.0:
        raise MetricInputError(f"p_target must lie strictly between 0 and 1, got {p_target}")
    if not (c_miss > 0 and c_fa > 0):
        raise MetricInputError(f"c_miss and c_fa must be positive, got {c_miss} and {c_fa}")
    weight_miss = c_miss * p_target
    weight_fa = c_fa * (1.0 - p_target)
    p_miss = (roc.n_target - roc.tps) / roc.n_target
    cost = (weight_miss * p_miss + weight_fa * roc.fpr) / min(weight_miss, weight_fa)
    reject_all = weight_miss / min(weight_miss, weight_fa)
    return np.minimum(np.minimum.reduceat(cost, roc.seg_starts), reject_all)


def _auc(roc: _RocCorners) -> FloatArray:
    """Mann-Whitney AUC, P(target > non-target) + P(tie) / 2: twice the trapezoid area in exact integers."""
    index = np.arange(roc.tps.size)
    fps_before = roc.previous(index, 0, roc.fps)
    tps_before = roc.previous(index, 0, roc.tps)
    twice_area = np.add.reduceat((roc.fps - fps_before) * (roc.tps + tps_before), roc.seg_starts)
    pairs = (roc.n_target * roc.n_nontarget)[roc.seg_starts]
    return twice_area / (2 * pairs)


_EER_VARIANTS = {EerMethod.LEGACY: _legacy_eer, EerMethod.ROCCH: _rocch_eer, EerMethod.INTERP: _interp_eer}


def _single_record(scores: ArrayLike, labels: ArrayLike) -> _RocCorners:
    return _roc_corners(*_as_inputs(scores, labels, None, None))


def eer(scores: ArrayLike, labels: ArrayLike, method: EerMethod = EerMethod.ROCCH) -> float:
    """Equal error rate as a fraction, in the named variant (module docstring).

    Args:
        scores: one score per trial, higher meaning "same speaker".
        labels: 1 for a target trial, 0 for a non-target, per trial.
        method: ``rocch`` (BOSARIS' convex hull), ``interp`` or ``legacy`` (the paper's routine).

    Returns:
        The EER as a fraction in [0, 1].

    Example:
        Targets score 0.35 and 0.8, non-targets 0.1 and 0.4: the hull of the ROC runs from (Pfa, Pmiss) = (0.5, 0)
        to (0, 0.5) and meets Pfa = Pmiss at 0.25.

        >>> eer([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
        0.25
        >>> eer([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1], method="legacy")
        0.5
    """
    check_eer_method(method)
    return float(_EER_VARIANTS[method](_single_record(scores, labels))[0])


def check_eer_method(method: EerMethod) -> None:
    """``eer``'s refusal of a method it does not know."""
    if method not in _EER_VARIANTS:
        raise MetricInputError(f"unknown EER method {method!r}: expected one of {', '.join(EER_METHODS)}")


def min_dcf(
    scores: ArrayLike, labels: ArrayLike, p_target: float = 0.01, c_miss: float = 1.0, c_fa: float = 1.0
) -> float:
    """Least ``c_miss*p_target*Pmiss + c_fa*(1-p_target)*Pfa`` over thresholds, over the best trivial cost.

    Example:
        At ``p_target`` 0.5 the best threshold misses one target or accepts one non-target of two: cost 0.25, over
        the trivial 0.5.

        >>> min_dcf([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1], p_target=0.5)
        0.5
    """
    return float(_min_dcf(_single_record(scores, labels), p_target, c_miss, c_fa)[0])


def auc(scores: ArrayLike, labels: ArrayLike) -> float:
    """Area under the ROC curve, ties counted as half (Mann-Whitney U / (targets * non-targets)).

    Example:
        Three of the four (target, non-target) pairs are ordered right:

        >>> auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
        0.75
    """
    return float(_auc(_single_record(scores, labels))[0])


def grouped_metrics(
    scores: ArrayLike,
    labels: ArrayLike,
    record_index: ArrayLike,
    n_records: int | None = None,
    *,
    p_target: float = 0.01,
    c_miss: float = 1.0,
    c_fa: float = 1.0,
    forked: bool = False,
) -> dict[str, np.ndarray]:
    """All metrics for many records from one long array; entry ``r`` of each output is record code ``r``.

    ``record_index`` holds integer codes 0..R-1 (R = ``n_records``, default largest code + 1), in any order.
    Returns ``eer_legacy``, ``eer_rocch``, ``eer_interp``, ``min_dcf``, ``auc`` (float64) and ``n_target``,
    ``n_nontarget`` (int64), each of length R. Every record needs both classes (constant scores give the
    chance values: EER 0.5, minDCF 1, AUC 0.5); otherwise ``MetricInputError`` names the offending record codes.
    ``forked``: records in order are taken in chunks, and the later half of the chunks is computed in a forked
    process (the same chunks, so the same floats: a record's last bits depend on its chunk).

    Example:
        Record 0 is the four trials of :func:`eer`'s example, record 1 two trials ordered right:

        >>> metrics = grouped_metrics([0.1, 0.4, 0.35, 0.8, 0.2, 0.9], [0, 0, 1, 1, 0, 1], [0, 0, 0, 0, 1, 1])
        >>> metrics["eer_rocch"].tolist(), metrics["auc"].tolist(), metrics["n_target"].tolist()
        ([0.25, 0.0], [0.75, 1.0], [2, 1])
    """
    values, label_codes, records, count = _as_inputs(scores, labels, record_index, n_records)
    if values.size <= _CHUNK_TRIALS or (records[1:] < records[:-1]).any():
        return _grouped(values, label_codes, records, count, p_target, c_miss, c_fa)
    # Records in order (as the runner and the audit pass them) are taken in chunks of about _CHUNK_TRIALS trials:
    # 0.6 s for 12 M trials, steadily, where one pass takes 0.8 to 2.7 s (its large temporaries are paged in anew).
    # Interleaved records take one pass: sorting them into chunks first costs more. A record's trials stay
    # together, so its metrics are its own.
    trials = np.bincount(records.view(np.int64), minlength=count)
    targets = np.bincount(records.view(np.int64), weights=label_codes, minlength=count)
    if (trials == 0).any():
        raise MetricInputError(
            f"{_describe(np.flatnonzero(trials == 0), count)} have no trials (both classes are needed)"
        )
    one_class = np.flatnonzero((targets == 0) | (targets == trials))
    if one_class.size:
        raise MetricInputError(
            f"{_describe(one_class, count)} hold only one class: targets and non-targets are both needed"
        )
    ends = np.cumsum(trials)
    cuts = np.unique(np.searchsorted(ends, np.arange(_CHUNK_TRIALS, values.size, _CHUNK_TRIALS), "left") + 1)
    spans = list(itertools.pairwise([0, *cuts[cuts < count].tolist(), count]))
    chunks = (values, label_codes, records, ends, (p_target, c_miss, c_fa))
    if forked and len(spans) > 1:
        with Forked(_chunks, *chunks, spans[len(spans) // 2 :]) as later:
            parts = _chunks(*chunks, spans[: len(spans) // 2]) + later.result()
    else:
        parts = _chunks(*chunks, spans)
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def _chunks(
    values: FloatArray,
    label_codes: NDArray[np.uint8],
    records: NDArray[np.uint64],
    ends: NDArray[np.int64],
    costs: tuple[float, float, float],
    spans: list[tuple[int, int]],
) -> list[dict[str, np.ndarray]]:
    """``_grouped`` of each chunk of records in order (``spans``: first and past-last record codes)."""
    parts = []
    for first, last in spans:
        low, high = int(ends[first - 1]) if first else 0, int(ends[last - 1])
        local = records[low:high] - np.uint64(first)
        parts.append(_grouped(values[low:high], label_codes[low:high], local, last - first, *costs))
    return parts


def _grouped(
    values: FloatArray,
    label_codes: NDArray[np.uint8],
    records: NDArray[np.uint64],
    count: int,
    p_target: float,
    c_miss: float,
    c_fa: float,
) -> dict[str, np.ndarray]:
    """``grouped_metrics`` of validated inputs in one pass."""
    roc = _roc_corners(values, label_codes, records, count)
    per_segment = {
        "eer_legacy": _legacy_eer(roc),
        "eer_rocch": _rocch_eer(roc),
        "eer_interp": _interp_eer(roc),
        "min_dcf": _min_dcf(roc, p_target, c_miss, c_fa),
        "auc": _auc(roc),
        "n_target": roc.n_target[roc.seg_starts],
        "n_nontarget": roc.n_nontarget[roc.seg_starts],
    }
    return {name: roc.per_record(result, count) for name, result in per_segment.items()}
