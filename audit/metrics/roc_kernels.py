"""Compiled loops behind ``audit.metrics.weighted_roc``: weighted ROC curves of many resamples at once.

Weights come in tiles local to one trial list: ``weights[tile, speaker, row]`` is a speaker's multiplicity in
resample ``tile * block + row``, with a last speaker of weight 1 (the partner of a target trial, or of every trial
under one-way clustering), so a trial reads two contiguous runs of ``block`` weights. A trial weighs
``weights[., enrol, row] * weights[., partner, row]``. The trials come sorted by descending score and cut into
units (``unit_end``): one unit per threshold for ``interp`` and ``legacy``, one per run of thresholds that no
hull vertex can split for ``rocch`` (a run of one class, or one threshold holding both). A tile sums every
unit's target and non-target weight in one pass over the trials, the inner loop running over the tile's rows
(contiguous, vectorised). ``interp`` and ``legacy`` then walk each row's curve to the crossing (or to the first
point roc_curve keeps after it); ``rocch`` finds, for all the tile's rows at once, the hull edge that crosses
pfa = pmiss by narrowing a chord to it (each step a vectorised pass over the units between the chord's ends). Every
decision (crossing, kept point, hull vertex) is an exact comparison of integer-valued float64 sums and of their
products, as ``audit.metrics.point`` makes it on counts (``weighted_roc`` refuses weights whose products could pass
2**53). Compiled once per machine (``cache=True``), and loaded only when a bootstrap runs.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    """(columns x tiles x tile rows): each column of ``values`` (trials x columns) summed with each row's trial
    weights."""
    tiles, block = weights.shape[0], weights.shape[2]
    out = np.zeros((values.shape[1], tiles, block))
    for tile in prange(tiles):
        tile_weights = weights[tile]
        for trial in range(enrol.size):
            enrolled, partnered = tile_weights[enrol[trial]], tile_weights[partner[trial]]
            for column in range(values.shape[1]):
                value = values[trial, column]
                if value != 0.0:
                    sums = out[column, tile]
                    for row in range(block):
                        sums[row] += value * enrolled[row] * partnered[row]
    return out


@njit(cache=True, parallel=True)
def binned_sums(weights, enrol, partner, bins, n_bins):
    """(bins x tiles x tile rows): each bin's trial weights summed per row; a trial falls in one bin (``bins``)."""
    tiles, block = weights.shape[0], weights.shape[2]
    out = np.zeros((n_bins, tiles, block))
    for tile in prange(tiles):
        tile_weights = weights[tile]
        for trial in range(enrol.size):
            enrolled, partnered = tile_weights[enrol[trial]], tile_weights[partner[trial]]
            sums = out[bins[trial], tile]
            for row in range(block):
                sums[row] += enrolled[row] * partnered[row]
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
def _hull_eers(tps, fps, n_target, n_nontarget, out):
    """ROCCH EER of each row of a tile from its cumulative weights at each unit's end (``tps``, ``fps``: units x
    block), as BOSARIS ``rocch2eer`` takes it: the crossing of pfa = pmiss with the hull edge that spans it.

    Each row keeps a chord from A (a hull point with pmiss > pfa, first the origin) to B (one with pmiss <= pfa,
    first the end of the curve). The unit point farthest above the chord (least ``dT * F - dF * T``) is a hull
    vertex; it replaces A or B by the side of the diagonal it lies on, until no point lies above: the chord is
    then the hull edge. Only units between A and B can lie above a chord of a concave hull, so each pass covers
    the range between the tile's chords. The EER is then taken, as the pool-adjacent-violators walk would, from
    the first point on that edge with pmiss <= pfa and the point on it before (or the origin).
    """
    n_units, width = tps.shape[0], n_target.size
    low_end, high_end = np.full(width, -1), np.full(width, n_units - 1)
    a_tps, a_fps, b_tps, b_fps = np.zeros(width), np.zeros(width), n_target.copy(), n_nontarget.copy()
    slope_t, slope_f, best, arg = np.empty(width), np.empty(width), np.empty(width), np.empty(width)
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
            best[row] = slope_t[row] * a_fps[row] - slope_f[row] * a_tps[row]
            arg[row] = -1.0
        for unit in range(first, last + 1):  # branch-free, so it vectorises over the rows
            unit_tps, unit_fps, code = tps[unit], fps[unit], float(unit)
            for row in range(width):
                value = slope_t[row] * unit_fps[row] - slope_f[row] * unit_tps[row]
                arg[row] = code if value < best[row] else arg[row]
                best[row] = min(value, best[row])
        for row in range(width):
            if not active[row]:
                continue
            if arg[row] < 0.0:
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
    before, after, line = np.full(width, -1.0), np.full(width, -1.0), np.empty(width)
    for row in range(width):
        slope_t[row], slope_f[row] = b_tps[row] - a_tps[row], b_fps[row] - a_fps[row]
        line[row] = slope_t[row] * a_fps[row] - slope_f[row] * a_tps[row]
        if n_target[row] > 0.0 and n_nontarget[row] > 0.0:
            first, last = min(first, max(low_end[row], 0)), max(last, high_end[row])
    for unit in range(first, last + 1):
        unit_tps, unit_fps, code = tps[unit], fps[unit], float(unit)
        for row in range(width):
            on_edge = slope_t[row] * unit_fps[row] - slope_f[row] * unit_tps[row] == line[row]
            crossed = (n_target[row] - unit_tps[row]) * n_nontarget[row] <= unit_fps[row] * n_target[row]
            before[row] = code if on_edge and not crossed else before[row]
            after[row] = code if on_edge and crossed and after[row] < 0.0 else after[row]
    for row in range(width):
        if n_target[row] == 0.0 or n_nontarget[row] == 0.0:
            continue
        tps_after, fps_after = tps[int(after[row]), row], fps[int(after[row]), row]
        tps_before = tps[int(before[row]), row] if before[row] >= 0.0 else 0.0
        fps_before = fps[int(before[row]), row] if before[row] >= 0.0 else 0.0
        p_fa, p_miss = fps_after / n_nontarget[row], (n_target[row] - tps_after) / n_target[row]
        fa_before, miss_before = fps_before / n_nontarget[row], (n_target[row] - tps_before) / n_target[row]
        d_fa, d_miss = p_fa - fa_before, p_miss - miss_before
        if d_fa == 0.0 or d_miss == 0.0:
            out[row] = 0.0  # an edge at pfa = 0 or pmiss = 0: BOSARIS counts 0
        else:
            out[row] = (d_fa * miss_before - d_miss * fa_before) / (d_fa - d_miss)


@njit(cache=True, parallel=True)
def eer_of_rows(weights, enrol, partner, labels, unit_end, method, block, sums):
    """The EER of every resample row (``weights``: tiles x speakers x tile rows) in ``method``, ``block`` rows at a
    time (a divisor of the tile's rows); NaN where a class weighs 0.

    ``sums`` (workers x 2 x units x block) is reused scratch space, one slice per worker: fresh allocations of
    this size cost more in page faults than the arithmetic. Worker ``k`` takes the blocks ``k``, ``k + workers``...
    """
    tile_rows = weights.shape[2]
    parts = tile_rows // block
    blocks = weights.shape[0] * parts
    workers = sums.shape[0]
    n_units = unit_end.size
    out = np.full(weights.shape[0] * tile_rows, np.nan)
    for worker in prange(workers):
        tps, fps = sums[worker, 0, :n_units], sums[worker, 1, :n_units]  # cumulative weight at each unit's end
        n_target, n_nontarget = np.zeros(block), np.zeros(block)  # running sums, the totals at the end
        for index in range(worker, blocks, workers):
            tile_weights = weights[index // parts]
            low = (index % parts) * block
            n_target[:] = 0.0
            n_nontarget[:] = 0.0
            start = 0
            for unit in range(n_units):
                for trial in range(start, unit_end[unit]):
                    enrolled = tile_weights[enrol[trial], low : low + block]
                    partnered = tile_weights[partner[trial], low : low + block]
                    if labels[trial]:
                        for row in range(block):
                            n_target[row] += enrolled[row] * partnered[row]
                    else:
                        for row in range(block):
                            n_nontarget[row] += enrolled[row] * partnered[row]
                tps[unit] = n_target
                fps[unit] = n_nontarget
                start = unit_end[unit]
            rows = out[index * block : (index + 1) * block]
            if method == ROCCH:
                _hull_eers(tps, fps, n_target, n_nontarget, rows)
                continue
            for row in range(block):
                if n_target[row] > 0.0 and n_nontarget[row] > 0.0:
                    rows[row] = _curve_eer(tps[:, row], fps[:, row], n_target[row], n_nontarget[row], method == LEGACY)
    return out


def workers() -> int:
    """Threads the parallel loops run on (``NUMBA_NUM_THREADS``, default the machine's cores)."""
    return int(numba.get_num_threads())


def cached_on_this_machine() -> bool:
    """Whether numba's cache holds the entry kernels (an index file in their cache folder): when it does not, the
    next call compiles them, about half a minute of CPU on a small machine."""
    module = __name__.rpartition(".")[2]
    for kernel in (eer_of_rows, weighted_sums):
        folder = kernel.stats.cache_path
        if folder is None or not any(Path(folder).glob(f"{module}.{kernel.py_func.__name__}-*.nbi")):
            return False
    return True
