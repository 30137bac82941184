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

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import isotonic_regression

EerMethod = Literal["legacy", "rocch", "interp"]
EER_METHODS: tuple[EerMethod, ...] = get_args(EerMethod)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

_SHOWN_RECORDS = 10  # offending record codes named in one error message


class MetricInputError(ValueError):
    """Scores or labels on which a metric is not defined (NaN, one class, constant scores, bad labels)."""


@dataclass(frozen=True)
class _RocGroups:
    """ROC points at the distinct thresholds of every record, records in segments, thresholds descending.

    ``tps``/``fps`` count targets/non-targets scoring at or above each group's score within its record,
    as sklearn's ``confusion_matrix_at_thresholds`` does. Segments run in descending record code.
    """

    tps: IntArray
    fps: IntArray
    n_target: IntArray  # per group: its record's target count
    n_nontarget: IntArray
    first: NDArray[np.bool_]  # the group is its record's highest threshold
    last: NDArray[np.bool_]
    seg_starts: IntArray  # index of each segment's first group
    seg_record: IntArray  # record code of each segment

    @property
    def fpr(self) -> FloatArray:
        return self.fps / self.n_nontarget

    @property
    def tpr(self) -> FloatArray:
        return self.tps / self.n_target

    def per_record(self, per_segment: NDArray[np.generic], n_records: int) -> NDArray[np.generic]:
        """Reorder a per-segment result into record-code order."""
        out = np.empty(n_records, dtype=per_segment.dtype)
        out[self.seg_record] = per_segment
        return out


def _as_inputs(
    scores: ArrayLike, labels: ArrayLike, record_index: ArrayLike | None, n_records: int | None
) -> tuple[FloatArray, NDArray[np.uint64], NDArray[np.uint64], int]:
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
    if not (np.issubdtype(score_array.dtype, np.number) and not np.iscomplexobj(score_array)):
        raise MetricInputError(f"scores must be real numbers, got dtype {score_array.dtype}")
    score_values = score_array.astype(np.float64, copy=False)
    bad_scores = ~np.isfinite(score_values)
    if bad_scores.any():
        first_bad = int(np.flatnonzero(bad_scores)[0])
        raise MetricInputError(
            f"scores must be finite: {int(bad_scores.sum())} NaN or infinite value(s), "
            f"first at position {first_bad} ({score_values[first_bad]})"
        )
    if label_array.dtype == np.bool_:
        label_array = label_array.astype(np.uint8)
    if not np.issubdtype(label_array.dtype, np.number):
        raise MetricInputError(f"labels must be 0 or 1, got dtype {label_array.dtype}")
    bad_labels = (label_array != 0) & (label_array != 1)
    if bad_labels.any():
        first_bad = int(np.flatnonzero(bad_labels)[0])
        raise MetricInputError(
            f"labels must be 0 (non-target) or 1 (target): {int(bad_labels.sum())} other value(s), "
            f"first at position {first_bad} ({label_array[first_bad]!r})"
        )
    label_codes = label_array.astype(np.uint64)
    if record_index is None:
        return score_values, label_codes, np.zeros(score_values.size, dtype=np.uint64), 1
    index_array = np.asarray(record_index)
    if index_array.shape != score_array.shape:
        raise MetricInputError(
            f"record_index has shape {index_array.shape}, scores have shape {score_array.shape}"
        )
    if not np.issubdtype(index_array.dtype, np.integer):
        raise MetricInputError(f"record_index must hold integer codes, got dtype {index_array.dtype}")
    lowest, highest = int(index_array.min()), int(index_array.max())
    count = highest + 1 if n_records is None else n_records
    if lowest < 0 or highest >= count:
        raise MetricInputError(f"record_index must lie in 0..{count - 1}, found {lowest}..{highest}")
    return score_values, label_codes, index_array.astype(np.uint64), count


def _order_codes(scores: FloatArray, shift: int) -> NDArray[np.uint64]:
    """Unsigned codes that order and tie exactly like ``scores``, each below ``2**(64 - shift)``.

    The IEEE bit pattern, sign-folded, orders like the float; dropping its low ``shift`` bits keeps the order
    and is used when it merges no two distinct scores (checked on the sorted codes). Otherwise the dense rank
    from an argsort is used: slower, equally exact.
    """
    bits = (scores + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0: they compare equal as floats
    negative = (bits >> np.uint64(63)).astype(bool)
    ordered = np.where(negative, ~bits, bits | np.uint64(1 << 63))
    sorted_codes = np.sort(ordered)
    truncated = sorted_codes >> np.uint64(shift)
    if np.array_equal(sorted_codes[1:] != sorted_codes[:-1], truncated[1:] != truncated[:-1]):
        return ordered >> np.uint64(shift)
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(scores.size, dtype=np.uint64)
    sorted_scores = scores[order]
    ranks[order] = np.concatenate(([0], np.cumsum(sorted_scores[1:] != sorted_scores[:-1]))).astype(np.uint64)
    return ranks


def _describe(records: IntArray, n_records: int) -> str:
    if n_records == 1:
        return "the scores"
    shown = ", ".join(str(code) for code in records[:_SHOWN_RECORDS])
    more = f" and {records.size - _SHOWN_RECORDS} more" if records.size > _SHOWN_RECORDS else ""
    return f"record(s) {shown}{more}"


def _roc_groups(
    scores: FloatArray, labels: NDArray[np.uint64], records: NDArray[np.uint64], n_records: int
) -> _RocGroups:
    """Sort once by (record, score) and count targets/non-targets at each record's distinct thresholds."""
    record_bits = max(1, (n_records - 1).bit_length())
    if record_bits > 40:
        raise MetricInputError(f"too many records for one call: {n_records}")
    trials_per_record = np.bincount(records.astype(np.int64), minlength=n_records)
    empty = np.flatnonzero(trials_per_record == 0)
    if empty.size:
        raise MetricInputError(f"{_describe(empty, n_records)} have no trials (both classes are needed)")
    codes = _order_codes(scores, record_bits + 1)
    # One 64-bit key per trial: record code | score code | label. Sorting the keys (not an argsort) is the
    # one ordering pass; reversed, it runs records and thresholds from high to low.
    keys = np.sort((records << np.uint64(64 - record_bits)) | (codes << np.uint64(1)) | labels)[::-1]
    sorted_labels = (keys & np.uint64(1)).astype(np.int64)
    thresholds = keys >> np.uint64(1)
    group_ends = np.flatnonzero(np.concatenate((thresholds[1:] != thresholds[:-1], [True])))
    group_record = (keys[group_ends] >> np.uint64(64 - record_bits)).astype(np.int64)
    first = np.concatenate(([True], group_record[1:] != group_record[:-1]))
    last = np.concatenate((first[1:], [True]))
    seg_starts = np.flatnonzero(first)
    seg_lengths = np.diff(np.append(seg_starts, group_record.size))
    targets_through = np.cumsum(sorted_labels)[group_ends]
    trials_through = group_ends + 1
    seg_base_targets = np.concatenate(([0], targets_through))[seg_starts]
    seg_base_trials = np.concatenate(([0], trials_through))[seg_starts]
    tps = targets_through - np.repeat(seg_base_targets, seg_lengths)
    fps = trials_through - np.repeat(seg_base_trials, seg_lengths) - tps
    seg_targets, seg_nontargets = tps[last], fps[last]
    one_class = np.flatnonzero((seg_targets == 0) | (seg_nontargets == 0))
    if one_class.size:
        codes_bad = np.sort(group_record[seg_starts][one_class])
        raise MetricInputError(
            f"{_describe(codes_bad, n_records)} hold only one class: targets and non-targets are both needed"
        )
    constant = np.flatnonzero(seg_lengths == 1)
    if constant.size:
        codes_bad = np.sort(group_record[seg_starts][constant])
        raise MetricInputError(
            f"all scores are equal in {_describe(codes_bad, n_records)}: no ROC to measure"
        )
    return _RocGroups(
        tps=tps,
        fps=fps,
        n_target=np.repeat(seg_targets, seg_lengths),
        n_nontarget=np.repeat(seg_nontargets, seg_lengths),
        first=first,
        last=last,
        seg_starts=seg_starts,
        seg_record=group_record[seg_starts],
    )


def _first_per_segment(positions: IntArray, segment_of: IntArray) -> IntArray:
    """The first of sorted ``positions`` in each segment (every segment must hold one)."""
    segments = segment_of[positions]
    return positions[np.concatenate(([True], segments[1:] != segments[:-1]))]


def _legacy_eer(groups: _RocGroups) -> FloatArray:
    """sklearn ``roc_curve`` points (intermediates dropped), first smallest |FNR - FPR|, mean of the two."""
    keep = groups.first | groups.last
    keep[1:-1] |= (np.diff(groups.fps, 2) != 0) | (np.diff(groups.tps, 2) != 0)
    fpr = groups.fpr[keep]
    fnr = 1 - groups.tpr[keep]
    gap = np.abs(fnr - fpr)
    # The curve's prepended (0, 0) point has gap 1 and value 0.5; the last point, (1, 1), has the same gap and
    # value, so leaving it out never changes the answer.
    kept_first = groups.first[keep]
    segment_of = np.cumsum(kept_first) - 1
    segment_min = np.minimum.reduceat(gap, np.flatnonzero(kept_first))
    best = _first_per_segment(np.flatnonzero(gap == segment_min[segment_of]), segment_of)
    return (fpr[best] + fnr[best]) / 2


def _interp_eer(groups: _RocGroups) -> FloatArray:
    """Linear crossing of the ROC polyline (from (0, 0)) with ``fpr == fnr``; VoxSRC's brentq root."""
    fpr = groups.fpr
    side = fpr - (1 - groups.tpr)  # fpr - fnr: rises from -1 at (0, 0) to +1 at (1, 1)
    segment_of = np.cumsum(groups.first) - 1
    crossing = _first_per_segment(np.flatnonzero(side >= 0), segment_of)
    from_origin = groups.first[crossing]
    previous = np.where(from_origin, crossing, crossing - 1)
    fpr_before = np.where(from_origin, 0.0, fpr[previous])
    side_before = np.where(from_origin, -1.0, side[previous])
    fraction = -side_before / (side[crossing] - side_before)
    return fpr_before + (fpr[crossing] - fpr_before) * fraction


def _rocch_eer(groups: _RocGroups) -> FloatArray:
    """BOSARIS ``rocch`` + ``rocch2eer``: PAV on the tie groups, then the largest hull-segment EER crossing.

    The groups of all records go through one PAV call; adding ``2 * record`` to each group's target rate
    keeps records apart (their ranges cannot violate the order across a boundary), so no block spans two
    records. The offset costs about ``2 * R * 2**-52`` in rate resolution, far below any pooling decision that
    changes the hull (blocks' rates differ by at least ``1 / size**2`` unless collinear).
    """
    group_targets = np.diff(groups.tps, prepend=0)
    group_trials = np.diff(groups.tps + groups.fps, prepend=0)
    group_targets[groups.first] = groups.tps[groups.first]
    group_trials[groups.first] = (groups.tps + groups.fps)[groups.first]
    segment_of = np.cumsum(groups.first) - 1
    record_offset = 2.0 * groups.seg_record[segment_of]
    pooled = isotonic_regression(
        group_targets / group_trials + record_offset,
        weights=group_trials.astype(np.float64),
        increasing=False,
    )
    block_starts = np.asarray(pooled.blocks[:-1])
    block_ends = np.asarray(pooled.blocks[1:]) - 1
    p_fa = groups.fpr[block_ends]
    p_miss = (groups.n_target - groups.tps)[block_ends] / groups.n_target[block_ends]
    opens_record = groups.first[block_starts]
    fa_before = np.where(opens_record, 0.0, np.roll(p_fa, 1))
    miss_before = np.where(opens_record, 1.0, np.roll(p_miss, 1))
    d_fa = p_fa - fa_before
    d_miss = p_miss - miss_before
    degenerate = (d_fa == 0) | (d_miss == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = np.where(degenerate, 0.0, (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss))
    return np.maximum.reduceat(crossing, np.flatnonzero(opens_record))


def _min_dcf(groups: _RocGroups, p_target: float, c_miss: float, c_fa: float) -> FloatArray:
    """Normalised minimum detection cost over all thresholds, reject-all included."""
    if not 0.0 < p_target < 1.0:
        raise MetricInputError(f"p_target must lie strictly between 0 and 1, got {p_target}")
    if not (c_miss > 0 and c_fa > 0):
        raise MetricInputError(f"c_miss and c_fa must be positive, got {c_miss} and {c_fa}")
    weight_miss = c_miss * p_target
    weight_fa = c_fa * (1.0 - p_target)
    p_miss = (groups.n_target - groups.tps) / groups.n_target
    cost = (weight_miss * p_miss + weight_fa * groups.fpr) / min(weight_miss, weight_fa)
    reject_all = weight_miss / min(weight_miss, weight_fa)
    return np.minimum(np.minimum.reduceat(cost, groups.seg_starts), reject_all)


def _auc(groups: _RocGroups) -> FloatArray:
    """Mann-Whitney AUC: P(target > non-target) + P(tie) / 2, from exact integer pair counts."""
    group_targets = np.diff(groups.tps, prepend=0)
    group_nontargets = np.diff(groups.fps, prepend=0)
    group_targets[groups.first] = groups.tps[groups.first]
    group_nontargets[groups.first] = groups.fps[groups.first]
    below = groups.n_nontarget - groups.fps
    wins = group_targets * below + 0.5 * (group_targets * group_nontargets)
    pairs = (groups.n_target * groups.n_nontarget)[groups.seg_starts]
    return np.add.reduceat(wins.astype(np.float64), groups.seg_starts) / pairs


_EER_VARIANTS = {"legacy": _legacy_eer, "rocch": _rocch_eer, "interp": _interp_eer}


def _single_record(scores: ArrayLike, labels: ArrayLike) -> _RocGroups:
    return _roc_groups(*_as_inputs(scores, labels, None, None))


def eer(scores: ArrayLike, labels: ArrayLike, method: EerMethod = "rocch") -> float:
    """Equal error rate as a fraction, in the named variant (module docstring)."""
    if method not in _EER_VARIANTS:
        raise MetricInputError(f"unknown EER method {method!r}: expected one of {', '.join(EER_METHODS)}")
    return float(_EER_VARIANTS[method](_single_record(scores, labels))[0])


def min_dcf(
    scores: ArrayLike, labels: ArrayLike, p_target: float = 0.01, c_miss: float = 1.0, c_fa: float = 1.0
) -> float:
    """Least ``c_miss*p_target*Pmiss + c_fa*(1-p_target)*Pfa`` over thresholds, over the best trivial cost."""
    return float(_min_dcf(_single_record(scores, labels), p_target, c_miss, c_fa)[0])


def auc(scores: ArrayLike, labels: ArrayLike) -> float:
    """Area under the ROC curve, ties counted as half (Mann-Whitney U / (targets * non-targets))."""
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
) -> dict[str, np.ndarray]:
    """All metrics for many records from one long array; entry ``r`` of each output is record code ``r``.

    ``record_index`` holds integer codes 0..R-1 (R = ``n_records``, default largest code + 1), in any order.
    Returns ``eer_legacy``, ``eer_rocch``, ``eer_interp``, ``min_dcf``, ``auc`` (float64) and ``n_target``,
    ``n_nontarget`` (int64), each of length R. Every record needs both classes and two distinct scores;
    otherwise ``MetricInputError`` names the offending record codes.
    """
    values, label_codes, records, count = _as_inputs(scores, labels, record_index, n_records)
    groups = _roc_groups(values, label_codes, records, count)
    per_segment = {
        "eer_legacy": _legacy_eer(groups),
        "eer_rocch": _rocch_eer(groups),
        "eer_interp": _interp_eer(groups),
        "min_dcf": _min_dcf(groups, p_target, c_miss, c_fa),
        "auc": _auc(groups),
        "n_target": groups.tps[groups.last],
        "n_nontarget": groups.fps[groups.last],
    }
    return {name: groups.per_record(values_, count) for name, values_ in per_segment.items()}
