"""Compiled loops behind ``audit.metrics.weighted_roc``: weighted ROC curves of many resamples at once.

Weights come in tiles local to one trial list: ``weights[tile, speaker, row]`` is a speaker's multiplicity in
resample ``tile * block + row``, with a last speaker of weight 1 (the partner of a target trial, or of every trial
under one-way clustering), so a trial reads two contiguous runs of weights. A trial weighs
``weights[., enrol, row] * weights[., partner, row]``. The trials come sorted by descending score.

Per threshold (``eer_of_rows``, lists of up to ``weighted_roc.PER_THRESHOLD_UNITS`` thresholds): the trials are cut
into units (``unit_end``): one unit per threshold for ``interp`` and ``legacy``, one per run of thresholds that no
hull vertex can split for ``rocch`` (a run of targets, or one threshold holding both, each with the run of
non-targets before it, whose end lies under the hull: never a vertex, nor a point of the EER's edge that another
point does not equal). A tile sums every unit's target and non-target weight in one pass over the trials, the inner
loop running over the tile's rows (contiguous, vectorised). ``interp`` and ``legacy`` then walk each row's curve to
the crossing (or to the first point roc_curve keeps after it); ``rocch`` finds, for all the tile's rows at once, the
hull edge that crosses pfa = pmiss by narrowing a chord to it (each step a vectorised pass over the units between the
chord's ends). Every decision is an exact comparison of integer-valued float64 sums and of their products
(``weighted_roc`` sends weights whose products could pass 2**53 to the bracketed loops).

In brackets (``eers_of_rows``, longer lists): the thresholds are cut into brackets of about the same number of
trials (``checkpoints``: each bracket's last threshold). One pass per tile sums each row's weight at every
bracket's end, so memory is brackets x rows whatever the number of trials. Each row then finds the bracket where its
curve crosses fpr = fnr and rebuilds its curve, threshold by threshold in exact int64 counts, over a window of
brackets around it: ``interp`` interpolates at the crossing, ``legacy`` walks to the points roc_curve keeps (the
window doubling when a walk leaves it), ``rocch`` takes the hull edge that spans the diagonal among the window's
points, the origin and the curve's end, and keeps it only when no bracket outside the window can hold a point on or
above the edge's line (a bracket's points lie in the box between its two ends), the window doubling otherwise. The
three variants come from one pass; every decision is an exact comparison of int64 counts and their products, exact
while a row's total weight stays under ``WEIGHT_LIMIT`` (``weighted_roc`` refuses heavier rows).

Compiled once per machine (``cache=True``), and loaded only when a bootstrap runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

import audit.metrics.kernel_threads  # noqa: F401  (the threading layer, chosen before a parallel loop runs)
import audit.metrics.record_kernels as record_kernels
import audit.metrics.sum_kernels as sum_kernels
from audit.metrics.record_kernels import LEGACY, ROCCH, _crossing, _interp, _legacy

# The rows a block of ``eer_of_rows`` sums at a width fixed when it compiles (``weighted_roc.TILE``, the blocks of every
# list of up to a few thousand units): the rows' loops then run without a count read at run time.
UNROLLED = 64

NEED = -2  # a walk or a hull edge that needs the curve beyond the window: the window grows
EXACT_INT32 = float(2**31)  # a row whose counts' products stay below: its hull's passes compute in int32


@njit(cache=True)
def _window_before(tps, fps, unit, at_start):
    """The last point before ``unit`` whose counts differ from its own (0: the origin when the window starts at
    the curve's start), or ``NEED`` when it lies before the window."""
    total = tps[unit] + fps[unit]
    unit -= 1
    while unit >= 1 and tps[unit] + fps[unit] == total:
        unit -= 1
    if unit >= 1 or (unit == 0 and (at_start or tps[0] + fps[0] != total)):
        return unit
    return NEED


@njit(cache=True)
def _window_after(tps, fps, unit, at_end):
    """The first point after ``unit`` whose counts differ from its own (``tps.size`` when ``unit`` is the curve's
    last point), or ``NEED`` when it lies after the window."""
    total = tps[unit] + fps[unit]
    unit += 1
    while unit < tps.size and tps[unit] + fps[unit] == total:
        unit += 1
    if unit < tps.size or at_end:
        return unit
    return NEED


@njit(cache=True)
def _window_kept(tps, fps, unit, at_start, at_end):
    """1 when roc_curve keeps the point (the first, the last and every change of step in both counts), 0 when it
    drops it, ``NEED`` when that depends on points beyond the window."""
    before, after = _window_before(tps, fps, unit, at_start), _window_after(tps, fps, unit, at_end)
    if before == NEED or after == NEED:
        return NEED
    if (at_start and before == 0) or after == tps.size:
        return 1
    steps_in = (tps[unit] - tps[before], fps[unit] - fps[before])
    return 1 if steps_in != (tps[after] - tps[unit], fps[after] - fps[unit]) else 0


@njit(cache=True)
def _legacy_eer(tps, fps, after, n_target, n_nontarget, at_start, at_end):
    """``legacy`` EER of one row's window (the last kept point before the crossing ``after``, or the origin, and
    the first kept one at or after it), and whether the window sufficed."""
    before = _window_before(tps, fps, after, at_start)
    if before == NEED:
        return np.nan, False
    while True:
        kept = _window_kept(tps, fps, after, at_start, at_end)
        if kept == NEED:
            return np.nan, False
        if kept == 1:
            break
        after = _window_after(tps, fps, after, at_end)
        if after == NEED:
            return np.nan, False
    while not (at_start and before == 0):
        kept = _window_kept(tps, fps, before, at_start, at_end)
        if kept == NEED:
            return np.nan, False
        if kept == 1:
            break
        before = _window_before(tps, fps, before, at_start)
        if before == NEED:
            return np.nan, False
    if at_start and before == 0:
        return _legacy(0.0, 0.0, True, tps[after], fps[after], n_target, n_nontarget), True
    return _legacy(tps[before], fps[before], False, tps[after], fps[after], n_target, n_nontarget), True


@njit(cache=True)
def _hull_eer(tps, fps, n_target, n_nontarget):
    """ROCCH EER of one row over the window's points (with the origin before them and the curve's end as the last
    point), as BOSARIS ``rocch2eer`` takes it, and the edge's line (``dT``, ``dF``, its value): the crossing of
    pfa = pmiss with the hull edge that spans it.

    A chord runs from A (a hull point with pmiss > pfa, first the origin) to B (one with pmiss <= pfa, first the
    curve's end). The point farthest above the chord (least ``dT * F - dF * T``, the first on a tie) is a hull
    vertex; it replaces A or B by the side of the diagonal it lies on, until no point lies above: the chord is then
    the hull edge. The EER is taken, as the pool-adjacent-violators walk would, from the first point on that edge
    with pmiss <= pfa and the point on it before (or the origin)."""
    a_tps, a_fps, a_at = 0, 0, -1
    b_tps, b_fps, b_at = n_target, n_nontarget, tps.size - 1
    while True:
        slope_t, slope_f = b_tps - a_tps, b_fps - a_fps
        best, vertex = slope_t * a_fps - slope_f * a_tps, -1
        for unit in range(a_at + 1, b_at):
            value = slope_t * fps[unit] - slope_f * tps[unit]
            if value < best:
                best, vertex = value, unit
        if vertex < 0:
            break
        t, f = tps[vertex], fps[vertex]
        if (n_target - t) * n_nontarget > f * n_target:
            a_tps, a_fps, a_at = t, f, vertex
        else:
            b_tps, b_fps, b_at = t, f, vertex
    slope_t, slope_f = b_tps - a_tps, b_fps - a_fps
    line = slope_t * a_fps - slope_f * a_tps
    before, after = -1, -1
    for unit in range(max(a_at, 0), b_at + 1):
        if slope_t * fps[unit] - slope_f * tps[unit] == line:
            if (n_target - tps[unit]) * n_nontarget <= fps[unit] * n_target:
                if after < 0:
                    after = unit
            else:
                before = unit
    tps_after, fps_after = tps[after], fps[after]
    tps_before = tps[before] if before >= 0 else 0
    fps_before = fps[before] if before >= 0 else 0
    p_fa, p_miss = fps_after / n_nontarget, (n_target - tps_after) / n_target
    fa_before, miss_before = fps_before / n_nontarget, (n_target - tps_before) / n_target
    d_fa, d_miss = p_fa - fa_before, p_miss - miss_before
    if d_fa == 0.0 or d_miss == 0.0:
        return 0.0, slope_t, slope_f, line  # an edge at pfa = 0 or pmiss = 0: BOSARIS counts 0
    return (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss), slope_t, slope_f, line


@njit(cache=True)
def _unit_sums(tile_weights, low, width, enrol, partner, labels, unit_end, running_t, running_n, tps, fps):
    """Rows ``low``..``low + width`` of a tile: the running target and non-target weight (``running_t``,
    ``running_n``, from their values) through the trials, stored at the end of each unit (``unit_end``: a threshold,
    a ROCCH unit, or a bracket of ``eers_of_rows``) in ``tps`` and ``fps`` (units x width). Each stored row is
    written element by element: a slice assignment (``tps[unit] = running_t``) checks its operands for overlap and
    copies through a temporary, which cost more than a unit's trials (captured calls of a paper-scale audit: the
    kernel 23 % faster, measured beside a constant width)."""
    start = 0
    for unit in range(unit_end.size):
        for trial in range(start, unit_end[unit]):
            enrolled = tile_weights[enrol[trial], low : low + width]
            partnered = tile_weights[partner[trial], low : low + width]
            if labels[trial]:
                for row in range(width):
                    running_t[row] += enrolled[row] * partnered[row]
            else:
                for row in range(width):
                    running_n[row] += enrolled[row] * partnered[row]
        unit_tps, unit_fps = tps[unit], fps[unit]
        for row in range(width):
            unit_tps[row] = running_t[row]
            unit_fps[row] = running_n[row]
        start = unit_end[unit]


@njit(cache=True)
def _window(tile_weights, column, enrol, partner, labels, group_end, checkpoints, bracket_tps, bracket_fps, low, high):
    """One row's cumulative counts (int64) at the end of each group of brackets ``low``..``high``, after the
    point before them (the origin, or the end of bracket ``low - 1``), then the curve's end when the window stops
    short of it (the hull needs it)."""
    first = checkpoints[low - 1] + 1 if low > 0 else 0
    last = checkpoints[high]
    at_end = high == checkpoints.size - 1
    size = last - first + 2 + (0 if at_end else 1)
    tps, fps = np.empty(size, np.int64), np.empty(size, np.int64)
    running_t = np.int64(bracket_tps[low - 1, column]) if low > 0 else np.int64(0)
    running_f = np.int64(bracket_fps[low - 1, column]) if low > 0 else np.int64(0)
    tps[0], fps[0] = running_t, running_f
    start = group_end[first - 1] if first > 0 else 0
    for group in range(first, last + 1):
        for trial in range(start, group_end[group]):
            weight = np.int64(tile_weights[enrol[trial], column] * tile_weights[partner[trial], column])
            if labels[trial]:
                running_t += weight
            else:
                running_f += weight
        start = group_end[group]
        tps[group - first + 1], fps[group - first + 1] = running_t, running_f
    if not at_end:
        tps[size - 1] = np.int64(bracket_tps[checkpoints.size - 1, column])
        fps[size - 1] = np.int64(bracket_fps[checkpoints.size - 1, column])
    return tps, fps


@njit(cache=True)
def _reaches_line(bracket_tps, bracket_fps, column, bracket, slope_t, slope_f, line):
    """Whether the box of a bracket's points (between its two ends) reaches the line ``slope_t * F - slope_f * T =
    line`` or lies above it at its upper corner (least F, greatest T)."""
    before_f = np.int64(bracket_fps[bracket - 1, column]) if bracket > 0 else np.int64(0)
    return slope_t * before_f - slope_f * np.int64(bracket_tps[bracket, column]) <= line


@njit(cache=True)
def _outside_reaches(bracket_tps, bracket_fps, column, low, high, slope_t, slope_f, line):
    """Whether a bracket before ``low``, and one after ``high``, may hold a point on or above the line (scanned
    outwards from the window, each side stopping at its first)."""
    before, after = False, False
    for bracket in range(low - 1, -1, -1):
        if _reaches_line(bracket_tps, bracket_fps, column, bracket, slope_t, slope_f, line):
            before = True
            break
    for bracket in range(high + 1, bracket_tps.shape[0]):
        if _reaches_line(bracket_tps, bracket_fps, column, bracket, slope_t, slope_f, line):
            after = True
            break
    return before, after


@njit(cache=True)
def _row_eers(tile_weights, column, enrol, partner, labels, group_end, checkpoints, bracket_tps, bracket_fps, out):
    """The three EERs of one row (``out``: interp, legacy, rocch) from its bracket sums and windows of its curve."""
    n_brackets = checkpoints.size
    n_target = np.int64(bracket_tps[n_brackets - 1, column])
    n_nontarget = np.int64(bracket_fps[n_brackets - 1, column])
    goal = n_target * n_nontarget
    low, high = 0, n_brackets - 1  # the first bracket whose end has fpr >= fnr
    while low < high:
        middle = (low + high) // 2
        t, f = np.int64(bracket_tps[middle, column]), np.int64(bracket_fps[middle, column])
        if f * n_target + t * n_nontarget >= goal:
            high = middle
        else:
            low = middle + 1
    low, high = max(low - 1, 0), min(low + 1, n_brackets - 1)
    tps, fps = _window(tile_weights, column, enrol, partner, labels, group_end, checkpoints, bracket_tps,
                       bracket_fps, low, high)  # fmt: skip
    at_start, at_end = low == 0, high == n_brackets - 1
    real = tps.size - (0 if at_end else 1)  # the window's curve points, without the curve's end appended
    after = _crossing(tps[:real], fps[:real], n_target, n_nontarget)
    previous = not (at_start and after == 1)
    out[0] = _interp(tps[after], fps[after], tps[after - 1], fps[after - 1], previous, n_target, n_nontarget)
    legacy_done, hull_done = False, False
    while True:
        at_start, at_end = low == 0, high == n_brackets - 1
        real = tps.size - (0 if at_end else 1)
        grow_low, grow_high = low, high
        if not legacy_done:
            after = _crossing(tps[:real], fps[:real], n_target, n_nontarget)
            value, legacy_done = _legacy_eer(tps[:real], fps[:real], after, n_target, n_nontarget, at_start, at_end)
            if legacy_done:
                out[1] = value
            else:
                width = high - low + 1
                grow_low, grow_high = max(low - width, 0), min(high + width, n_brackets - 1)
        if not hull_done:
            value, slope_t, slope_f, line = _hull_eer(tps, fps, n_target, n_nontarget)
            before, after = _outside_reaches(bracket_tps, bracket_fps, column, low, high, slope_t, slope_f, line)
            if not (before or after):
                out[2], hull_done = value, True
            width = high - low + 1  # the window doubles towards each side that may hold a point above the edge
            grow_low = min(grow_low, max(low - width, 0)) if before else grow_low
            grow_high = max(grow_high, min(high + width, n_brackets - 1)) if after else grow_high
        if legacy_done and hull_done:
            return
        low, high = grow_low, grow_high
        tps, fps = _window(tile_weights, column, enrol, partner, labels, group_end, checkpoints, bracket_tps,
                           bracket_fps, low, high)  # fmt: skip


@njit(cache=True, parallel=True)
def eers_of_rows(weights, rows, enrol, partner, labels, group_end, checkpoints, weight_limit):
    """The interp, legacy and rocch EER (3 x rows) of every resample row (``weights``: tiles x speakers x tile
    rows), and each row's total weight; NaN where a class weighs 0 or the total reaches ``weight_limit``."""
    tiles, tile_rows = weights.shape[0], weights.shape[2]
    n_brackets = checkpoints.size
    out = np.full((3, tiles * tile_rows), np.nan)
    totals = np.zeros(tiles * tile_rows)
    bracket_end = group_end[checkpoints]
    for tile in prange(tiles):
        tile_weights = weights[tile]
        bracket_tps, bracket_fps = np.empty((n_brackets, tile_rows)), np.empty((n_brackets, tile_rows))
        n_target, n_nontarget = np.zeros(tile_rows), np.zeros(tile_rows)
        _unit_sums(tile_weights, 0, tile_rows, enrol, partner, labels, bracket_end, n_target, n_nontarget, bracket_tps,
                   bracket_fps)  # fmt: skip
        for column in range(min(tile_rows, rows - tile * tile_rows)):
            row = tile * tile_rows + column
            totals[row] = n_target[column] + n_nontarget[column]
            if n_target[column] > 0.0 and n_nontarget[column] > 0.0 and totals[row] < weight_limit:
                _row_eers(tile_weights, column, enrol, partner, labels, group_end, checkpoints, bracket_tps,
                          bracket_fps, out[:, row])  # fmt: skip
    return out[:, :rows], totals[:rows]


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


def _in_type(value, like):
    """``value`` in the type of ``like``: int32 (wrapping, so used only where the value fits) or float64."""
    raise NotImplementedError("compiled only")


@overload(_in_type)
def _in_type_of(value, like):
    if isinstance(like, types.Integer):
        return lambda value, like: np.int32(value)
    return lambda value, like: np.float64(value)


@njit(cache=True)
def _hull_eers(tps, fps, n_target, n_nontarget, out, like):
    """ROCCH EER of each row of a tile from its cumulative weights at each unit's end (``tps``, ``fps``: units x
    block), as BOSARIS ``rocch2eer`` takes it: the crossing of pfa = pmiss with the hull edge that spans it.

    Each row keeps a chord from A (a hull point with pmiss > pfa, first the origin) to B (one with pmiss <= pfa,
    first the end of the curve). The unit point farthest above the chord (least ``dT * F - dF * T``) is a hull
    vertex; it replaces A or B by the side of the diagonal it lies on, until no point lies above: the chord is
    then the hull edge. Only units between A and B can lie above a chord of a concave hull, so each pass covers
    the range between the tile's chords. The EER is then taken, as the pool-adjacent-violators walk would, from
    the first point on that edge with pmiss <= pfa and the point on it before (or the origin).

    The passes compute in the type of ``like``: int32 where every row's products of counts stay below 2**31
    (``eer_of_rows`` checks), so a vector holds twice the rows of float64 and no sum is converted; else float64.
    """
    n_units, width = tps.shape[0], n_target.size
    counts_t, counts_n = np.full(width, like), np.full(width, like)  # the totals, in the passes' type
    for row in range(width):
        counts_t[row], counts_n[row] = n_target[row], n_nontarget[row]
    low_end, high_end = np.full(width, -1), np.full(width, n_units - 1)
    a_tps, a_fps, b_tps, b_fps = np.full(width, like), np.full(width, like), counts_t.copy(), counts_n.copy()
    slope_t, slope_f, best, arg = np.full(width, like), np.full(width, like), np.full(width, like), np.full(width, like)
    active = (n_target > 0.0) & (n_nontarget > 0.0)
    while True:
        first, last = n_units, -1
        for row in range(width):
            if active[row]:
                first, last = min(first, low_end[row] + 1), max(last, high_end[row] - 1)
        if first > last:
            break
        for row in range(width):
            slope_t[row], slope_f[row] = b_tps[row] - a_tps[row], b_fps[row] - a_fps[row]
            best[row] = _in_type(slope_t[row] * a_fps[row] - slope_f[row] * a_tps[row], like)
            arg[row] = -1
        for unit in range(first, last + 1):  # branch-free, so it vectorises over the rows
            unit_tps, unit_fps, code = tps[unit], fps[unit], _in_type(unit, like)
            for row in range(width):
                value = _in_type(slope_t[row] * unit_fps[row] - slope_f[row] * unit_tps[row], like)
                arg[row] = code if value < best[row] else arg[row]
                best[row] = min(value, best[row])
        for row in range(width):
            if not active[row]:
                continue
            if arg[row] < 0:
                active[row] = False  # no point above the chord: it is the hull edge
                continue
            vertex = int(arg[row])
            t, f = tps[vertex, row], fps[vertex, row]
            if (n_target[row] - t) * n_nontarget[row] > f * n_target[row]:
                a_tps[row], a_fps[row], low_end[row] = t, f, vertex
            else:
                b_tps[row], b_fps[row], high_end[row] = t, f, vertex
    # On the edge's line: the first point with pmiss <= pfa, and the last one before it.
    first, last = n_units, -1
    before, after, line = np.full(width, like), np.full(width, like), np.full(width, like)
    for row in range(width):
        slope_t[row], slope_f[row] = b_tps[row] - a_tps[row], b_fps[row] - a_fps[row]
        line[row] = _in_type(slope_t[row] * a_fps[row] - slope_f[row] * a_tps[row], like)
        before[row], after[row] = -1, -1
        if n_target[row] > 0.0 and n_nontarget[row] > 0.0:
            first, last = min(first, max(low_end[row], 0)), max(last, high_end[row])
    for unit in range(first, last + 1):
        unit_tps, unit_fps, code = tps[unit], fps[unit], _in_type(unit, like)
        for row in range(width):
            on_edge = _in_type(slope_t[row] * unit_fps[row] - slope_f[row] * unit_tps[row], like) == line[row]
            missed = _in_type((counts_t[row] - unit_tps[row]) * counts_n[row], like)
            crossed = missed <= _in_type(unit_fps[row] * counts_t[row], like)
            before[row] = code if on_edge and not crossed else before[row]
            after[row] = code if on_edge and crossed and after[row] < 0 else after[row]
    for row in range(width):
        if n_target[row] == 0.0 or n_nontarget[row] == 0.0:
            continue
        tps_after, fps_after = tps[int(after[row]), row], fps[int(after[row]), row]
        tps_before = tps[int(before[row]), row] if before[row] >= 0 else 0.0
        fps_before = fps[int(before[row]), row] if before[row] >= 0 else 0.0
        p_fa, p_miss = fps_after / n_nontarget[row], (n_target[row] - tps_after) / n_target[row]
        fa_before, miss_before = fps_before / n_nontarget[row], (n_target[row] - tps_before) / n_target[row]
        d_fa, d_miss = p_fa - fa_before, p_miss - miss_before
        if d_fa == 0.0 or d_miss == 0.0:
            out[row] = 0.0  # an edge at pfa = 0 or pmiss = 0: BOSARIS counts 0
        else:
            out[row] = (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss)


@njit(cache=True, parallel=True)
def eer_of_rows(weights, enrol, partner, labels, unit_end, method, block, sums, running):
    """The EER of every resample row (``weights``: tiles x speakers x tile rows) in ``method``, ``block`` rows at a
    time (a divisor of the tile's rows); NaN where a class weighs 0.

    ``sums`` (workers x 2 x units x block) is reused scratch space, one slice per worker: fresh allocations of
    this size cost more in page faults than the arithmetic. Worker ``k`` takes the blocks ``k``, ``k + workers``...
    ``running`` (block zeros) gives the running sums' type: int32 beside int8 weights (``weighted_roc`` sends them
    only where every sum stays below 2**31, so exact; a trial's two rows of 64 weights are then a cache line each),
    else float64. Each worker sums in arrays of its own (the compiler then knows no other array aliases them: a
    fifth less time than in slices of a shared one, measured) and stores them into ``sums``, of the same type: the
    ROCCH hull's passes over int32 unit sums read half the bytes of float64 ones, and are bound by the cache's
    bandwidth (7-11 % less time in the kernel on captured calls of a paper-scale audit). The hull's passes also
    compute in int32 where every row of the block has counts whose products stay below 2**31 (``EXACT_INT32``):
    about 12 % less time in the kernel on the same calls, the same bits. Every other use of a stored sum converts it
    to float64, exactly.
    """
    tile_rows = weights.shape[2]
    parts = tile_rows // block
    blocks = weights.shape[0] * parts
    workers = sums.shape[0]
    n_units = unit_end.size
    out = np.full(weights.shape[0] * tile_rows, np.nan)
    for worker in prange(workers):
        tps, fps = sums[worker, 0, :n_units], sums[worker, 1, :n_units]  # cumulative weight at each unit's end
        running_t, running_n = running.copy(), running.copy()
        n_target, n_nontarget = np.zeros(block), np.zeros(block)  # the totals
        for index in range(worker, blocks, workers):
            tile_weights = weights[index // parts]
            low = (index % parts) * block
            running_t[:] = 0
            running_n[:] = 0
            if block == tile_weights.shape[1] == UNROLLED:  # a whole tile of a width the compiler knows
                _unit_sums(tile_weights, 0, UNROLLED, enrol, partner, labels, unit_end, running_t, running_n, tps, fps)
            else:
                _unit_sums(tile_weights, low, block, enrol, partner, labels, unit_end, running_t, running_n, tps, fps)
            n_target[:] = running_t
            n_nontarget[:] = running_n
            rows = out[index * block : (index + 1) * block]
            if method == ROCCH:
                narrow = running_t.itemsize == 4  # int32 sums, whose products may fit in int32 too
                for row in range(block):
                    narrow = narrow and n_target[row] * n_nontarget[row] < EXACT_INT32
                if narrow:
                    _hull_eers(tps, fps, n_target, n_nontarget, rows, np.int32(0))
                else:
                    _hull_eers(tps, fps, n_target, n_nontarget, rows, 0.0)
                continue
            for row in range(block):
                if n_target[row] > 0.0 and n_nontarget[row] > 0.0:
                    rows[row] = _curve_eer(tps[:, row], fps[:, row], n_target[row], n_nontarget[row], method == LEGACY)
    return out


def cached_on_this_machine() -> bool:
    """Whether numba's cache holds the entry kernels of this module, ``sum_kernels``, ``calibration_kernels`` and
    ``record_kernels`` (an index file in their cache folder; each module's kernels are compiled again when its file
    changes): when it does not, the next call compiles them, about half a minute of CPU on a small machine."""
    import audit.metrics.calibration_kernels as calibration_kernels

    entries = (
        eer_of_rows, eers_of_rows, *sum_kernels.ENTRY_KERNELS, *calibration_kernels.ENTRY_KERNELS,
        *record_kernels.ENTRY_KERNELS,
    )  # fmt: skip
    for kernel in entries:
        module = kernel.py_func.__module__.rpartition(".")[2]
        folder = kernel.stats.cache_path
        if folder is None or not any(Path(folder).glob(f"{module}.{kernel.py_func.__name__}-*.nbi")):
            return False
    return True
