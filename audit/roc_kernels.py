"""Compiled loops behind ``audit.weighted_roc``: weighted ROC curves of many resamples, streamed.

A resample row gives each speaker a multiplicity; a trial weighs its enrolment speaker's times its partner's
(``weights[row, enrol] * weights[row, partner]``; a partner code ``n_speakers`` means 1: a target trial).
The trials come sorted by descending score; ``group_end`` closes each run of equal scores (one threshold),
``unit_end`` each run of thresholds that ``rocch`` may pool without looking (a run of one class, or one mixed
threshold). Each row streams its trials once, with no per-row matrix: ``interp`` and ``legacy`` stop at the
crossing (or the first point roc_curve keeps after it), ``rocch`` runs pool-adjacent-violators as the steps
arrive. Every decision (crossing, kept point, pooling) is an exact comparison of integer-valued float64 sums,
as the reference implementations in ``audit.metrics`` make them on counts. Compiled once per machine
(``cache=True``); loaded only when a bootstrap runs.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

INTERP, LEGACY, ROCCH = 0, 1, 2


@njit(cache=True, inline="always")
def _weight(weights, row, enrol, partner, n_speakers):
    value = weights[row, enrol]
    if partner != n_speakers:
        value *= weights[row, partner]
    return value


@njit(cache=True, parallel=True)
def weighted_sums(weights, enrol, partner, values):
    """(rows x columns): per row, each column of ``values`` (trials x columns) summed with the trials' weights."""
    rows, n_speakers = weights.shape
    out = np.zeros((rows, values.shape[1]))
    for row in prange(rows):
        for trial in range(enrol.size):
            weight = _weight(weights, row, enrol[trial], partner[trial], n_speakers)
            if weight != 0.0:
                for column in range(values.shape[1]):
                    out[row, column] += weight * values[trial, column]
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
def _curve_eer(weights, row, enrol, partner, labels, group_end, n_target, n_nontarget, legacy):
    """``interp`` or ``legacy`` EER of one row, streaming its present points (thresholds that carry weight).

    roc_curve keeps a present point unless its steps in and out are equal (both counts): the first, the last
    and every change of step. ``legacy`` takes the last kept point before the crossing and the first kept one
    at or after it.
    """
    n_speakers = weights.shape[1]
    goal = n_target * n_nontarget
    tps = fps = 0.0  # the last present point
    step_tps = step_fps = 0.0  # the step into it
    kept_tps = kept_fps = 0.0  # the last kept point before it
    before_tps = before_fps = 0.0  # legacy: the last kept point before the crossing
    n_present = 0
    crossed = at_origin = False
    start = 0
    for end in group_end:
        group_tps = group_fps = 0.0
        for trial in range(start, end):
            weight = _weight(weights, row, enrol[trial], partner[trial], n_speakers)
            if labels[trial]:
                group_tps += weight
            else:
                group_fps += weight
        start = end
        if group_tps + group_fps == 0.0:
            continue  # a threshold this row did not draw: its point repeats the last one
        if n_present == 1 or (n_present > 1 and (group_tps != step_tps or group_fps != step_fps)):
            if crossed:
                break  # the last present point is the first kept one at or after the crossing
            kept_tps, kept_fps = tps, fps
        step_tps, step_fps = group_tps, group_fps
        tps += group_tps
        fps += group_fps
        n_present += 1
        if not crossed and fps * n_target + tps * n_nontarget >= goal:
            if not legacy:
                return _interp(tps, fps, tps - group_tps, fps - group_fps, n_present > 1, n_target, n_nontarget)
            crossed, at_origin = True, n_present == 1
            before_tps, before_fps = kept_tps, kept_fps
    return _legacy(before_tps, before_fps, at_origin, tps, fps, n_target, n_nontarget)  # the last point is kept


@njit(cache=True)
def _rocch(weights, row, enrol, partner, labels, unit_end, n_target, n_nontarget, block_tps, block_trials):
    """ROCCH EER of one row: PAV on the steps' target rates as they arrive (exact cross-multiplied
    comparisons), then the largest crossing of a hull edge's line with pfa = pmiss (0 for an edge at
    pfa = 0 or pmiss = 0, as BOSARIS ``rocch2eer``)."""
    n_speakers = weights.shape[1]
    n_blocks = 0
    start = 0
    for end in unit_end:
        unit_tps = unit_trials = 0.0
        for trial in range(start, end):
            weight = _weight(weights, row, enrol[trial], partner[trial], n_speakers)
            unit_trials += weight
            if labels[trial]:
                unit_tps += weight
        start = end
        if unit_trials == 0.0:
            continue
        # pool while the block before has a lower target rate than this one (rates must not increase)
        while n_blocks > 0 and block_tps[n_blocks - 1] * unit_trials < unit_tps * block_trials[n_blocks - 1]:
            n_blocks -= 1
            unit_tps += block_tps[n_blocks]
            unit_trials += block_trials[n_blocks]
        block_tps[n_blocks] = unit_tps
        block_trials[n_blocks] = unit_trials
        n_blocks += 1
    eer = 0.0  # one block (constant scores) is the chance diagonal's edge: 0.5
    tps = fps = 0.0
    fa_before, miss_before = 0.0, 1.0
    for block in range(n_blocks):
        tps += block_tps[block]
        fps += block_trials[block] - block_tps[block]
        p_fa = fps / n_nontarget
        p_miss = (n_target - tps) / n_target
        d_fa, d_miss = p_fa - fa_before, p_miss - miss_before
        if d_fa != 0.0 and d_miss != 0.0:
            crossing = (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss)
            if crossing > eer:
                eer = crossing
        fa_before, miss_before = p_fa, p_miss
    return eer


@njit(cache=True, parallel=True)
def eer_of_rows(weights, enrol, partner, labels, group_end, unit_end, n_target, n_nontarget, method):
    """The EER of every row of ``weights`` (rows x speakers) in ``method``; NaN where a class weighs 0."""
    rows = weights.shape[0]
    out = np.full(rows, np.nan)
    n_chunks = min(rows, 64)
    for chunk in prange(n_chunks):
        block_tps = np.empty(unit_end.size)
        block_trials = np.empty(unit_end.size)
        for row in range(chunk * rows // n_chunks, (chunk + 1) * rows // n_chunks):
            if n_target[row] == 0.0 or n_nontarget[row] == 0.0:
                continue
            if method == ROCCH:
                out[row] = _rocch(
                    weights,
                    row,
                    enrol,
                    partner,
                    labels,
                    unit_end,
                    n_target[row],
                    n_nontarget[row],
                    block_tps,
                    block_trials,
                )
            else:
                out[row] = _curve_eer(
                    weights, row, enrol, partner, labels, group_end, n_target[row], n_nontarget[row], method == LEGACY
                )
    return out
