"""Compiled loops behind ``audit.weighted_roc``: weighted ROC curves of many resamples at once.

Weights come transposed and local to one trial list: ``weights[speaker, row]`` is a speaker's multiplicity in
resample ``row``, with a last speaker of weight 1 (the partner of a target trial, or of every trial under one-way
clustering). A trial weighs ``weights[enrol, row] * weights[partner, row]``. The trials come sorted by
descending score and cut into units (``unit_end``): one unit per threshold for ``interp`` and ``legacy``, one
per run of thresholds that ``rocch`` may pool without looking (a run of one class, or one threshold holding
both). A block of rows sums every unit's target and non-target weight in one pass over the trials, the inner
loop running over the block's rows (contiguous, vectorised); each row then walks its units: ``interp`` and
``legacy`` stop at the crossing (or at the first point roc_curve keeps after it), ``rocch`` runs
pool-adjacent-violators. Every decision (crossing, kept point, pooling) is an exact comparison of
integer-valued float64 sums, as ``audit.metrics`` makes it on counts. Compiled once per machine
(``cache=True``), and loaded only when a bootstrap runs.
"""

from __future__ import annotations

import os

import numba
import numpy as np
from numba import njit, prange

# A bootstrap makes thousands of calls of a few ms: OpenMP's workers spin between them and, on a shared machine,
# took twice the CPU time for the same wall time (measured); numba's own work queue sleeps. A user's
# NUMBA_THREADING_LAYER still wins.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]

INTERP, LEGACY, ROCCH = 0, 1, 2


@njit(cache=True, parallel=True)
def weighted_sums(weights, enrol, partner, values):
    """(columns x rows): each column of ``values`` (trials x columns) summed with each row's trial weights."""
    rows = weights.shape[1]
    out = np.zeros((values.shape[1], rows))
    for column in prange(values.shape[1]):
        for trial in range(enrol.size):
            value = values[trial, column]
            if value != 0.0:
                for row in range(rows):
                    out[column, row] += value * weights[enrol[trial], row] * weights[partner[trial], row]
    return out


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
    """The first unit whose point has fpr >= fnr (``fps * P + tps * N >= P * N``, exact); cumulative weight is
    monotone, so a binary search. It holds at the last unit, and its unit carries weight (else the test held one
    unit earlier)."""
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
def _present_before(tps, fps, unit):
    """The last unit whose point differs from ``unit``'s (the present point before it), or -1 (the origin)."""
    total = tps[unit] + fps[unit]
    unit -= 1
    while unit >= 0 and tps[unit] + fps[unit] == total:
        unit -= 1
    return unit


@njit(cache=True)
def _present_after(tps, fps, unit):
    """The first unit whose point differs from ``unit``'s, or the number of units when it is the last point."""
    total = tps[unit] + fps[unit]
    unit += 1
    while unit < tps.size and tps[unit] + fps[unit] == total:
        unit += 1
    return unit


@njit(cache=True)
def _kept(tps, fps, unit):
    """roc_curve keeps a point unless its steps in and out are equal (both counts): the first, the last and
    every change of step."""
    before, after = _present_before(tps, fps, unit), _present_after(tps, fps, unit)
    if before < 0 or after == tps.size:
        return True
    return tps[unit] - tps[before] != tps[after] - tps[unit] or fps[unit] - fps[before] != fps[after] - fps[unit]


@njit(cache=True)
def _curve_eer(tps, fps, n_target, n_nontarget, legacy):
    """``interp`` or ``legacy`` EER of one row from its cumulative weights at each threshold.

    ``interp`` interpolates between the crossing and the point before it (or (0, 0)). ``legacy`` takes the
    last kept point before the crossing (or the origin) and the first kept one at or after it; the present
    points near the crossing are found by walking over the thresholds this row did not draw.
    """
    after = _crossing(tps, fps, n_target, n_nontarget)
    if not legacy:
        has_previous = after > 0
        return _interp(
            tps[after],
            fps[after],
            tps[after - 1] if has_previous else 0.0,
            fps[after - 1] if has_previous else 0.0,
            has_previous,
            n_target,
            n_nontarget,
        )
    before = _present_before(tps, fps, after)
    while not _kept(tps, fps, after):
        after = _present_after(tps, fps, after)
    while before >= 0 and not _kept(tps, fps, before):
        before = _present_before(tps, fps, before)
    if before < 0:
        return _legacy(0.0, 0.0, True, tps[after], fps[after], n_target, n_nontarget)
    return _legacy(tps[before], fps[before], False, tps[after], fps[after], n_target, n_nontarget)


@njit(cache=True)
def _rocch(cumulative_tps, cumulative_fps, n_target, n_nontarget, block_tps, block_trials):
    """ROCCH EER of one row from its cumulative weights at each unit's end: PAV on the units' target rates
    (exact cross-multiplied comparisons), then the largest crossing of a hull edge's line with pfa = pmiss, as
    BOSARIS ``rocch2eer``. One block (constant scores) is the chance diagonal's edge: 0.5."""
    n_blocks = 0
    before_tps = before_fps = 0.0
    for unit in range(cumulative_tps.size):
        tps = cumulative_tps[unit] - before_tps
        trials = tps + cumulative_fps[unit] - before_fps
        before_tps, before_fps = cumulative_tps[unit], cumulative_fps[unit]
        if trials == 0.0:
            continue
        # pool while the block before has a lower target rate than this one (rates must not increase)
        while n_blocks > 0 and block_tps[n_blocks - 1] * trials < tps * block_trials[n_blocks - 1]:
            n_blocks -= 1
            tps += block_tps[n_blocks]
            trials += block_trials[n_blocks]
        block_tps[n_blocks] = tps
        block_trials[n_blocks] = trials
        n_blocks += 1
    # The hull is convex and falls from (0, 1) to (1, 0), so every edge's line lies on or below it and the largest
    # crossing is the edge that spans the diagonal: it ends at the first vertex with pmiss <= pfa (exact test).
    tps = fps = tps_before = fps_before = 0.0
    for block in range(n_blocks):
        tps_before, fps_before = tps, fps
        tps += block_tps[block]
        fps += block_trials[block] - block_tps[block]
        if (n_target - tps) * n_nontarget <= fps * n_target:
            break
    p_fa, p_miss = fps / n_nontarget, (n_target - tps) / n_target
    fa_before, miss_before = fps_before / n_nontarget, (n_target - tps_before) / n_target
    d_fa, d_miss = p_fa - fa_before, p_miss - miss_before
    if d_fa == 0.0 or d_miss == 0.0:
        return 0.0  # an edge at pfa = 0 or pmiss = 0: BOSARIS counts 0
    return (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss)


@njit(cache=True, parallel=True)
def eer_of_rows(weights, enrol, partner, labels, unit_end, method, sums, stack):
    """The EER of every resample row (``weights``: speakers x rows) in ``method``; NaN where a class weighs 0.

    ``sums`` (workers x 2 x units x block) and ``stack`` (workers x 2 x units) are reused scratch space, one
    slice per worker: fresh allocations of this size cost more in page faults than the arithmetic. Worker
    ``k`` takes the blocks of rows ``k``, ``k + workers``, ...
    """
    rows = weights.shape[1]
    workers, block = sums.shape[0], sums.shape[3]
    n_units = unit_end.size
    out = np.full(rows, np.nan)
    for worker in prange(workers):
        tps, fps = sums[worker, 0], sums[worker, 1]  # cumulative weight at each unit's end
        n_target, n_nontarget = np.zeros(block), np.zeros(block)  # running sums, the totals at the end
        for low in range(worker * block, rows, workers * block):
            width = min(block, rows - low)
            n_target[:] = 0.0
            n_nontarget[:] = 0.0
            start = 0
            for unit in range(n_units):
                for trial in range(start, unit_end[unit]):
                    enrolled, partnered = enrol[trial], partner[trial]
                    if labels[trial]:
                        for row in range(width):
                            n_target[row] += weights[enrolled, low + row] * weights[partnered, low + row]
                    else:
                        for row in range(width):
                            n_nontarget[row] += weights[enrolled, low + row] * weights[partnered, low + row]
                for row in range(width):
                    tps[unit, row] = n_target[row]
                    fps[unit, row] = n_nontarget[row]
                start = unit_end[unit]
            for row in range(width):
                if n_target[row] == 0.0 or n_nontarget[row] == 0.0:
                    continue
                if method == ROCCH:
                    eer = _rocch(
                        tps[:n_units, row],
                        fps[:n_units, row],
                        n_target[row],
                        n_nontarget[row],
                        stack[worker, 0],
                        stack[worker, 1],
                    )
                else:
                    eer = _curve_eer(
                        tps[:n_units, row], fps[:n_units, row], n_target[row], n_nontarget[row], method == LEGACY
                    )
                out[low + row] = eer
    return out


def workers() -> int:
    """Threads the parallel loops run on (``NUMBA_NUM_THREADS``, default the machine's cores)."""
    return int(numba.get_num_threads())
