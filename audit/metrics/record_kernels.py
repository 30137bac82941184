"""Compiled loops over one record's trials in descending score order: where its thresholds and ROCCH units end
(``sorted_ends``, behind ``weighted_roc.SortedTrials``) and its point EER as ``audit.metrics.eer`` computes it
(``record_eer``, beside the record's bootstrap draws); and the arithmetic of one curve's crossing of fpr = fnr
(``_crossing``, ``_interp``, ``_legacy``), which ``roc_kernels`` runs on each resample's curve too.

Compiled once per machine (``cache=True``), and loaded only when a bootstrap runs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from audit.metrics.calibration_kernels import _pav_blocks
from audit.metrics.point import NEGLIGIBLE_WEIGHT

INTERP, LEGACY, ROCCH = 0, 1, 2  # the EER variants' codes, as ``weighted_roc`` sends them


@njit(cache=True)
def _interp(tps, fps, previous_tps, previous_fps, has_previous, n_target, n_nontarget):
    """Linear crossing of fpr = fnr between the point before the crossing (or (0, 0)) and the crossing."""
    fpr = fps / n_nontarget
    side = fpr - (1 - tps / n_target)
    fpr_before, side_before = 0.0, -1.0
    if has_previous:
        fpr_before = previous_fps / n_nontarget
        side_before = fpr_before - (1 - previous_tps / n_target)
    return fpr_before + (fpr - fpr_before) * (-side_before / (side - side_before))


@njit(cache=True)
def _legacy(before_tps, before_fps, at_origin, tps, fps, n_target, n_nontarget):
    """The first smaller |fnr - fpr| of the two kept points, mean of its rates ((0, 0) before every point)."""
    fpr_before, fnr_before = 0.0, 1.0
    if not at_origin:
        fpr_before = before_fps / n_nontarget
        fnr_before = 1 - before_tps / n_target
    fpr, fnr = fps / n_nontarget, 1 - tps / n_target
    if abs(fnr_before - fpr_before) <= abs(fnr - fpr):
        return (fpr_before + fnr_before) / 2
    return (fpr + fnr) / 2


@njit(cache=True)
def _crossing(tps, fps, n_target, n_nontarget):
    """The first point with fpr >= fnr (``fps * P + tps * N >= P * N``, exact); cumulative weight is monotone, so
    a binary search. It holds at the last point, and the first point (the origin, or a bracket's end before the
    crossing) is before it."""
    goal = n_target * n_nontarget
    low, high = 0, tps.size - 1
    while low < high:
        middle = (low + high) // 2
        if fps[middle] * n_target + tps[middle] * n_nontarget >= goal:
            high = middle
        else:
            low = middle + 1
    return low


@njit(cache=True)
def sorted_ends(ordered, labels):
    """Where each threshold's trials end (``group_end``) in scores sorted descending (``ordered``, their ``labels``),
    and where each ROCCH unit ends (``unit_end``): a threshold closes its unit when it holds a target and either holds
    both classes or is followed by a threshold of another kind (non-targets only, targets only, both). A run of
    non-targets only moves the curve right: its end lies under the hull (below the step from the point before it to
    the point after the next run), so it joins the next unit and is never summed. The last threshold closes one."""
    n = ordered.size
    group_end, unit_end = np.empty(max(n, 1), np.int64), np.empty(max(n, 1), np.int64)
    groups, units, start, targets, previous_kind = 0, 0, 0, 0, -1
    for trial in range(n):
        targets += labels[trial]
        if trial < n - 1 and ordered[trial + 1] == ordered[trial]:
            continue
        kind = 0 if targets == 0 else (1 if targets == trial + 1 - start else 2)  # non-target, target, both
        if previous_kind > 0 and (previous_kind == 2 or kind != previous_kind):
            unit_end[units] = group_end[groups - 1]
            units += 1
        group_end[groups] = trial + 1
        groups += 1
        start, targets, previous_kind = trial + 1, 0, kind
    group_end[max(groups, 1) - 1] = n  # the last threshold (no trials: one empty threshold, as NumPy's cut gave)
    unit_end[units] = n
    return group_end[: max(groups, 1)], unit_end[: units + 1]


@njit(cache=True)
def _kept_corners(labels, group_end):
    """The ROC points ``sklearn.metrics.roc_curve`` keeps of one record in descending score order (``labels``,
    each threshold's end ``group_end``): targets and non-targets at or above each kept threshold, int64. Its rule:
    the first, the last and every threshold where the step (targets, trials) from the one before changes."""
    n_groups = group_end.size
    through = np.empty(n_groups, np.int64)
    targets, trial = 0, 0
    for group in range(n_groups):
        while trial < group_end[group]:
            targets += labels[trial]
            trial += 1
        through[group] = targets
    tps, fps = np.empty(n_groups, np.int64), np.empty(n_groups, np.int64)
    kept = 0
    for group in range(n_groups):
        if 0 < group < n_groups - 1:
            step_t, step_g = through[group] - through[group - 1], group_end[group] - group_end[group - 1]
            if step_t == through[group + 1] - through[group] and step_g == group_end[group + 1] - group_end[group]:
                continue
        tps[kept], fps[kept] = through[group], group_end[group] - through[group]
        kept += 1
    return tps[:kept], fps[:kept]


@njit(cache=True, error_model="numpy")
def record_eer(labels, group_end, method):
    """``audit.metrics.eer`` of one record in ``method`` from its trials in descending score order: the same kept
    points and the same float64 operations in the same order as ``audit.metrics.point`` (tested ``==``), without
    its NumPy calls (a bootstrap of thousands of records paid more for them than for the record's draws). Both
    classes must be present (the caller checks)."""
    tps, fps = _kept_corners(labels, group_end)
    last = tps.size - 1
    n_target, n_nontarget = tps[last], fps[last]
    if method != ROCCH:
        after = _crossing(tps, fps, n_target, n_nontarget)
        if method == INTERP:
            has_previous = after > 0
            before = after - 1 if has_previous else 0
            return _interp(tps[after], fps[after], tps[before], fps[before], has_previous, n_target, n_nontarget)
        before = max(after - 1, 0)
        return _legacy(tps[before], fps[before], after == 0, tps[after], fps[after], n_target, n_nontarget)
    # BOSARIS rocch + rocch2eer as ``point.rocch_eer_of_points`` takes them: PAV over the steps' target rates
    # (thresholds descending: the fit is non-increasing, so PAV runs on the reversed steps), then the largest
    # crossing of pfa = pmiss with an edge between the ends of consecutive blocks.
    rates, weights = np.empty(last + 1), np.empty(last + 1)
    previous_t, previous_trials = 0.0, 0.0
    for point in range(last + 1):
        point_t, point_trials = float(tps[point]), float(tps[point]) + float(fps[point])
        step_targets, step_trials = point_t - previous_t, point_trials - previous_trials
        empty = step_trials == 0.0
        rates[last - point] = (0.5 if empty else step_targets / step_trials) + 0.0
        weights[last - point] = NEGLIGIBLE_WEIGHT if empty else step_trials
        previous_t, previous_trials = point_t, point_trials
    reversed_blocks = _pav_blocks(rates, weights)
    total_t, total_n = float(n_target), float(n_nontarget)
    eer, fa_before, miss_before = -np.inf, 0.0, 1.0
    for block in range(reversed_blocks.size - 1):
        end = reversed_blocks[-1] - reversed_blocks[reversed_blocks.size - 2 - block] - 1
        p_fa, p_miss = float(fps[end]) / total_n, (total_t - float(tps[end])) / total_t
        d_fa, d_miss = p_fa - fa_before, p_miss - miss_before
        crossing = 0.0 if d_fa == 0.0 or d_miss == 0.0 else (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss)
        eer = crossing if crossing > eer or np.isnan(crossing) else eer  # NaN stays, as np.maximum keeps it
        fa_before, miss_before = p_fa, p_miss
    return eer


# Those called from outside: their cache is checked (``roc_kernels.cached_on_this_machine``).
ENTRY_KERNELS = (sorted_ends, record_eer)
